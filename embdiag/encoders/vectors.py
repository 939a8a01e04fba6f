"""The vectors a fixed-encoder chapter measures: an encoder's cached embeddings, or a user's own.

:func:`driving_vectors` gives training and evaluation vectors with their attribute labels
(weather, scene, time of day) from an encoder on the procedural driving scenes or on a
BDD100K folder, or read from a user's ``vectors_path`` (``.npy``, n x d) and
``labels_path`` (CSV: a ``split`` column, ``train`` or ``val``, and one column per
attribute). :func:`caption_vectors` gives the caption study's image vectors and its
captions embedded in both roles, from the procedural caption groups or a COCO folder.
Each result carries ``source``: one sentence naming the data and the encoder, which the
chapters print. Embeddings go through :func:`~embdiag.encoders.cache.embed`.

Folder layouts (``data_dir``): BDD100K as distributed, ``labels/bdd100k_labels_images_
{train,val}.json`` and ``images/100k/{train,val}/``; COCO 2017 as distributed,
``annotations/captions_val2017.json``, ``annotations/instances_val2017.json`` and
``val2017/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .._validate import as_matrix
from ..data import load_dataset
from ..data.vocab import ATTRIBUTES
from .cache import embed
from .registry import load_encoder

DRIVING_SOURCES = ("procedural", "bdd100k")
CAPTION_SOURCES = ("procedural", "coco")
SPLIT_COLUMN = "split"
EVAL_NAMES = ("val", "eval", "evaluation", "test")


@dataclass(frozen=True)
class LabelledVectors:
    """Training and evaluation rows of one representation with their attribute labels."""

    train: np.ndarray
    val: np.ndarray
    train_labels: dict
    val_labels: dict
    source: str

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(self.val_labels)

    @property
    def dim(self) -> int:
        return int(self.val.shape[1])


@dataclass(frozen=True)
class CaptionVectors:
    """One image group per row of ``images``; five captions per image, in both roles.

    ``queries`` and ``documents`` hold the captions (row-major: image i owns rows
    5i..5i+4, ``group[j]`` is the image of caption j) embedded in the query and the
    document role; ``categories`` (n_images x n_categories, bool) are the images' object
    categories, named by ``category_names``.
    """

    images: np.ndarray
    queries: np.ndarray
    documents: np.ndarray
    group: np.ndarray
    captions: np.ndarray
    categories: np.ndarray
    category_names: tuple[str, ...]
    source: str
    image_pixels: np.ndarray | None = None


def _describe_encoder(encoder) -> str:
    return f"encoder {encoder.name} (revision {encoder.revision[:12]}, {encoder.dim}-d)"


def _folder(data_dir, source: str) -> Path:
    if data_dir is None:
        raise ValueError(f"data_dir: dataset {source!r} needs the folder holding its files")
    path = Path(data_dir).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"data_dir: no such folder {path}")
    return path


def _driving_dataset(dataset: str, data_dir, seed: int, root):
    if dataset == "procedural":
        return load_dataset("procedural", splits=("train", "val"), seed=seed, root=root)
    if dataset == "bdd100k":
        d = _folder(data_dir, dataset)
        return load_dataset("bdd100k", train_labels=d / "labels" / "bdd100k_labels_images_train.json",
                            val_labels=d / "labels" / "bdd100k_labels_images_val.json",
                            images_dir=d / "images" / "100k", seed=seed, root=root)
    raise ValueError(f"dataset: expected one of {DRIVING_SOURCES} for driving data, got {dataset!r}")


def read_labelled_vectors(vectors_path, labels_path) -> LabelledVectors:
    """A user's vectors (``.npy``, n x d) and labels (CSV with ``split`` and attribute columns).

    The ``split`` column names each row ``train`` or one of :data:`EVAL_NAMES`; every other
    column is an attribute. Raises ``ValueError`` naming the problem: a row-count mismatch,
    a missing ``split`` column, unknown split names, an empty split, no attribute column,
    missing labels, or non-finite vectors.
    """
    vectors_path, labels_path = Path(vectors_path), Path(labels_path)
    try:
        Z = np.load(vectors_path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"vectors_path: cannot read {vectors_path} as a .npy array ({e})") from None
    Z = as_matrix(Z, f"vectors_path ({vectors_path.name})", dtype=np.float64)
    labels = pd.read_csv(labels_path, dtype=str, keep_default_na=False)
    if len(labels) != len(Z):
        raise ValueError(f"labels_path: {labels_path.name} has {len(labels)} rows, {vectors_path.name} has {len(Z)}")
    if SPLIT_COLUMN not in labels.columns:
        raise ValueError(f"labels_path: {labels_path.name} has no {SPLIT_COLUMN!r} column "
                         f"(columns: {list(labels.columns)})")
    split = labels.pop(SPLIT_COLUMN).str.strip().str.lower()
    unknown = sorted(set(split) - {"train", *EVAL_NAMES})
    if unknown:
        raise ValueError(f"labels_path: unknown split names {unknown}; use 'train' or one of {EVAL_NAMES}")
    if labels.shape[1] == 0:
        raise ValueError(f"labels_path: {labels_path.name} has no attribute column besides {SPLIT_COLUMN!r}")
    empty = [c for c in labels.columns if (labels[c].str.strip() == "").any()]
    if empty:
        raise ValueError(f"labels_path: attribute columns {empty} have missing labels")
    train, val = (split == "train").to_numpy(), split.isin(EVAL_NAMES).to_numpy()
    for name, mask in (("train", train), ("evaluation", val)):
        if mask.sum() < 2:
            raise ValueError(f"labels_path: the {name} split has {int(mask.sum())} rows; at least 2 are needed")
    source = (f"the user's vectors {vectors_path.name} ({Z.shape[1]}-d; {int(train.sum())} training and "
              f"{int(val.sum())} evaluation rows) with labels {', '.join(labels.columns)} from {labels_path.name}")
    return LabelledVectors(Z[train], Z[val], {c: labels[c].to_numpy()[train] for c in labels.columns},
                           {c: labels[c].to_numpy()[val] for c in labels.columns}, source)


def driving_vectors(encoder: str = "reference-cnn", dataset: str = "procedural", *, data_dir=None, seed: int = 0,
                    dim: int | None = None, vectors_path=None, labels_path=None, root=None,
                    progress: bool = False) -> LabelledVectors:
    """Training and evaluation vectors of the driving data, with weather, scene and time labels.

    From the user's files when ``vectors_path`` and ``labels_path`` are given (then
    ``encoder`` and ``dataset`` are not used), else ``encoder``'s cached embeddings of
    ``dataset`` (``procedural``, or ``bdd100k`` read from ``data_dir``), cut to the
    Matryoshka prefix ``dim`` when given.
    """
    if (vectors_path is None) != (labels_path is None):
        raise ValueError("vectors_path and labels_path: give both (a user's vectors and their labels) or neither")
    if vectors_path is not None:
        return read_labelled_vectors(vectors_path, labels_path)
    ds = _driving_dataset(dataset, data_dir, seed, root)
    enc = load_encoder(encoder, root=root)
    train, val = (embed(enc, ds, s, dim=dim, root=root, progress=progress).astype(np.float64) for s in ("train", "val"))
    tr, va = ds.subset("train"), ds.subset("val")
    source = (f"{_describe_encoder(enc)} on {ds.source}: {len(tr):,} training and {len(va):,} evaluation images")
    return LabelledVectors(train, val, {a: tr.labels(a) for a in ATTRIBUTES}, {a: va.labels(a) for a in ATTRIBUTES},
                           source)


def caption_vectors(encoder: str = "reference-cnn", dataset: str = "procedural", *, data_dir=None, n: int = 1000,
                    seed: int = 0, root=None, progress: bool = False) -> CaptionVectors:
    """The caption groups' image vectors and captions in the query and document roles."""
    if dataset == "procedural":
        ds = load_dataset("procedural", splits=("caption",), n_caption=n, seed=seed, root=root)
    elif dataset == "coco":
        d = _folder(data_dir, dataset)
        ds = load_dataset("coco", captions_json=d / "annotations" / "captions_val2017.json",
                          instances_json=d / "annotations" / "instances_val2017.json", images_dir=d / "val2017",
                          n=n, seed=seed)
    else:
        raise ValueError(f"dataset: expected one of {CAPTION_SOURCES} for captions, got {dataset!r}")
    enc = load_encoder(encoder, root=root)
    split = ds.splits[0]
    kw = dict(root=root, progress=progress)
    images = embed(enc, ds, split, **kw).astype(np.float64)
    queries = embed(enc, ds, split, kind="texts", role="query", **kw).astype(np.float64)
    documents = embed(enc, ds, split, kind="texts", role="document", **kw).astype(np.float64)
    captions = np.asarray(ds.captions)
    per = captions.shape[1]
    source = (f"{_describe_encoder(enc)} on {ds.source}: {len(ds):,} images with {per} captions each")
    return CaptionVectors(images, queries, documents, np.repeat(np.arange(len(ds)), per), captions.ravel(),
                          np.asarray(ds.categories, bool), tuple(ds.category_names), source,
                          image_pixels=np.asarray(ds.images) if dataset == "procedural" else None)
