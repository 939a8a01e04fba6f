"""Single entry points: the same call gives every chapter its data, whatever the source.

Switching a chapter from the procedural default to real data changes only the
``source`` and the paths::

    load_dataset()                                             # procedural, all splits
    load_dataset("bdd100k", train_labels=..., val_labels=..., images_dir=...)
    load_captions()                                            # procedural caption groups
    load_captions("coco", captions_json=..., instances_json=..., images_dir=...)
"""

from __future__ import annotations

from .bdd100k import load_bdd100k
from .coco import load_coco
from .dataset import Dataset
from .procedural import load_procedural

SOURCES = ("procedural", "bdd100k", "coco")


def load_dataset(source: str = "procedural", **params) -> Dataset:
    """The labelled driving data (splits train / val, plus pool and caption where available).

    ``procedural``: :func:`~embdiag.data.procedural.load_procedural` parameters (seed, n_train,
    n_val, n_pool, n_caption, image_size, difficulty, splits, ...). ``bdd100k``:
    :func:`~embdiag.data.bdd100k.load_bdd100k` (train_labels, val_labels, images_dir, n_train,
    n_val, n_pool, seed, image_size). ``coco``: :func:`~embdiag.data.coco.load_coco`.
    """
    if source == "procedural":
        return load_procedural(**params)
    if source == "bdd100k":
        return load_bdd100k(**params)
    if source == "coco":
        return load_coco(**params)
    raise ValueError(f"source: expected one of {SOURCES}, got {source!r}")


def load_captions(
    source: str = "procedural", *, n: int = 1000, seed: int = 0, image_size: int = 64, **params
) -> Dataset:
    """N image groups with five captions each (split ``caption``): procedural scenes or COCO 2017."""
    if source == "procedural":
        return load_procedural(splits=("caption",), n_caption=n, seed=seed, image_size=image_size, **params)
    if source == "coco":
        return load_coco(n=n, seed=seed, image_size=image_size, **params)
    raise ValueError(f"source: expected 'procedural' or 'coco' for captions, got {source!r}")


def load_study(
    source: str = "procedural",
    *,
    seed: int = 0,
    image_size: int = 64,
    difficulty: float = 0.5,
    n_train: int = 2000,
    n_val: int = 983,
    n_pool: int = 20000,
    n_caption: int = 1000,
    bdd_train_labels=None,
    bdd_val_labels=None,
    bdd_images=None,
    coco_captions=None,
    coco_instances=None,
    coco_images=None,
    root=None,
) -> tuple[Dataset, Dataset]:
    """The book's two datasets in one call: driving data (train / val / pool) and caption groups.

    ``source="procedural"`` generates both (the default, runs anywhere); ``source="real"``
    reads BDD100K for the driving data and COCO 2017 for the captions from the given paths.
    """
    if source == "procedural":
        common = dict(seed=seed, image_size=image_size, difficulty=difficulty, root=root)
        driving = load_procedural(
            n_train=n_train, n_val=n_val, n_pool=n_pool, splits=("train", "val", "pool"), **common
        )
        return driving, load_procedural(n_caption=n_caption, splits=("caption",), **common)
    if source == "real":
        need = {
            "bdd_train_labels": bdd_train_labels,
            "bdd_val_labels": bdd_val_labels,
            "bdd_images": bdd_images,
            "coco_captions": coco_captions,
            "coco_images": coco_images,
        }
        missing = [k for k, v in need.items() if v is None]
        if missing:
            raise ValueError(f"source='real' needs paths for: {', '.join(missing)}")
        driving = load_bdd100k(
            bdd_train_labels,
            bdd_val_labels,
            bdd_images,
            n_train=n_train,
            n_val=n_val,
            n_pool=n_pool,
            seed=seed,
            image_size=image_size,
            root=root,
        )
        return driving, load_coco(
            coco_captions, coco_instances, coco_images, n=n_caption, seed=seed, image_size=image_size
        )
    raise ValueError(f"source: expected 'procedural' or 'real', got {source!r}")
