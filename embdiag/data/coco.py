"""COCO 2017 loader: image groups with five captions each, and their object categories.

Reads ``captions_val2017.json`` (``images``, ``annotations`` with ``image_id`` and
``caption``), ``instances_val2017.json`` (``annotations`` with ``image_id`` and
``category_id``, ``categories`` with ``id``, ``name``, ``supercategory``) and the
``val2017/`` image folder. Images with fewer than five captions are skipped; where an
image has more, five are chosen with the seed. N groups are drawn with the seed.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from .captions import N_CAPTIONS
from .dataset import Dataset, attribute_frame
from .errors import DataError, DataFileNotFoundError, DataFormatError
from .images import LazyImages, check_image_files
from .jsonio import read_json


def _field(obj, key: str, path: Path, where: str):
    if not isinstance(obj, dict) or key not in obj:
        raise DataFormatError(f"{path}: {where} has no field {key!r}")
    return obj[key]


def _list(doc, key: str, path: Path) -> list:
    val = _field(doc, key, path, "the top level")
    if not isinstance(val, list):
        raise DataFormatError(f"{path}: field {key!r} is not a list")
    return val


def load_coco(
    captions_json: str | Path,
    instances_json: str | Path | None,
    images_dir: str | Path,
    *,
    n: int = 1000,
    seed: int = 0,
    image_size: int = 64,
    crop: str = "center",
    verify_images: bool = True,
) -> Dataset:
    """N seeded COCO image groups (split ``caption``) with five captions and multi-label categories."""
    captions_json, images_dir = Path(captions_json), Path(images_dir)
    if not images_dir.is_dir():
        raise DataFileNotFoundError(f"{images_dir}: COCO images folder not found")
    doc = read_json(captions_json, "COCO captions file")
    files = {}
    for i, im in enumerate(_list(doc, "images", captions_json)):
        files[int(_field(im, "id", captions_json, f"images[{i}]"))] = str(
            _field(im, "file_name", captions_json, f"images[{i}]")
        )
    caps = defaultdict(list)
    for i, an in enumerate(_list(doc, "annotations", captions_json)):
        iid = int(_field(an, "image_id", captions_json, f"annotations[{i}]"))
        text = _field(an, "caption", captions_json, f"annotations[{i}]")
        if iid not in files:
            raise DataFormatError(f"{captions_json}: annotations[{i}] refers to image_id {iid}, not in 'images'")
        caps[iid].append((int(an.get("id", i)), " ".join(str(text).split())))
    eligible = sorted(i for i, c in caps.items() if len(c) >= N_CAPTIONS)
    if n > len(eligible):
        raise DataError(
            f"{captions_json}: asked for {n} image groups but only {len(eligible)} images have "
            f"{N_CAPTIONS} or more captions"
        )
    rng = np.random.default_rng([int(seed), 200])
    chosen = sorted(np.asarray(eligible)[rng.permutation(len(eligible))[:n]].tolist())
    captions = []
    for iid in chosen:
        c = sorted(caps[iid])
        keep = np.sort(rng.permutation(len(c))[:N_CAPTIONS]) if len(c) > N_CAPTIONS else range(N_CAPTIONS)
        captions.append([c[k][1] for k in keep])

    cat_names: list[str] = []
    cats = np.zeros((n, 0), bool)
    if instances_json is not None:
        instances_json = Path(instances_json)
        inst = read_json(instances_json, "COCO instances file")
        cat_list = _list(inst, "categories", instances_json)
        ids = []
        for i, c in enumerate(cat_list):
            ids.append(int(_field(c, "id", instances_json, f"categories[{i}]")))
            cat_names.append(str(_field(c, "name", instances_json, f"categories[{i}]")))
            _field(c, "supercategory", instances_json, f"categories[{i}]")
        order = np.argsort(ids, kind="stable")
        col = {ids[k]: j for j, k in enumerate(order)}
        cat_names = [cat_names[k] for k in order]
        row = {iid: r for r, iid in enumerate(chosen)}
        cats = np.zeros((n, len(cat_names)), bool)
        for i, an in enumerate(_list(inst, "annotations", instances_json)):
            iid = int(_field(an, "image_id", instances_json, f"annotations[{i}]"))
            cid = int(_field(an, "category_id", instances_json, f"annotations[{i}]"))
            if cid not in col:
                raise DataFormatError(f"{instances_json}: annotations[{i}] has unknown category_id {cid}")
            if iid in row:
                cats[row[iid], col[cid]] = True

    paths = [images_dir / files[i] for i in chosen]
    check_image_files(paths, open_headers=verify_images)
    ids = np.array([files[i] for i in chosen])
    return Dataset(
        ids=ids,
        images=LazyImages(paths, image_size, crop),
        attributes=attribute_frame({}, ids),
        split=np.full(n, "caption"),
        categories=cats,
        category_names=tuple(cat_names),
        captions=np.array(captions),
        source=(
            f"COCO 2017 ({n} image groups x {N_CAPTIONS} captions, seed {seed}; "
            f"{captions_json}; {instances_json}; images {images_dir})"
        ),
        params={
            "source": "coco",
            "captions_json": str(captions_json),
            "instances_json": str(instances_json),
            "images_dir": str(images_dir),
            "n": n,
            "seed": seed,
            "image_size": image_size,
            "crop": crop,
        },
    )
