"""BDD100K loader: the official image-label JSON files plus the image folders.

Reads ``bdd100k_labels_images_train.json`` / ``_val.json`` (a list of records with
``name``, ``attributes`` {weather, scene, timeofday} and optionally ``labels`` with a
``category`` each), takes a seeded subset of N training and M validation images (and,
optionally, a pool of further training images for self-supervised training), and keeps
"undefined" as a label of its own. Object categories come from the box labels; lane and
drivable-area polygons are not objects. Images are read lazily from
``<images_dir>/train/<name>`` and ``<images_dir>/val/<name>`` (or ``<images_dir>/<name>``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from .. import artifacts
from .dataset import Dataset, attribute_frame
from .errors import DataError, DataFileNotFoundError, DataFormatError
from .images import LazyImages, check_image_files
from .jsonio import iter_array
from .vocab import ATTRIBUTES, BDD100K_OBJECT_CATEGORIES, VOCAB

_NOT_OBJECTS = {"drivable area", "lane"}
PARSER_VERSION = 1


def _is_object(label: dict) -> bool:
    return "box2d" in label or ("poly2d" not in label and label.get("category") not in _NOT_OBJECTS)


def parse_labels(path: str | Path) -> dict:
    """Names, attribute values and object categories of every record of one label file."""
    path = Path(path)
    names, attrs, objects = [], [], []
    for i, rec in enumerate(iter_array(path, "BDD100K label file")):
        if not isinstance(rec, dict):
            raise DataFormatError(f"{path}: record {i} is not a JSON object")
        if "name" not in rec:
            raise DataFormatError(f"{path}: record {i} has no field 'name'")
        where = f"{path}: record {i} ({rec['name']!r})"
        a = rec.get("attributes")
        if not isinstance(a, dict):
            raise DataFormatError(f"{where} has no field 'attributes'")
        row = []
        for attr in ATTRIBUTES:
            if attr not in a:
                raise DataFormatError(f"{where} has no field 'attributes.{attr}'")
            if a[attr] not in VOCAB[attr]:
                raise DataFormatError(f"{where}: attributes.{attr} = {a[attr]!r} is not a BDD100K value {VOCAB[attr]}")
            row.append(a[attr])
        cats = set()
        for j, lab in enumerate(rec.get("labels") or []):
            if not isinstance(lab, dict) or "category" not in lab:
                raise DataFormatError(f"{where}: labels[{j}] has no field 'category'")
            if _is_object(lab):
                cats.add(str(lab["category"]))
        names.append(str(rec["name"]))
        attrs.append(row)
        objects.append(cats)
    if not names:
        raise DataFormatError(f"{path}: no records")
    if len(set(names)) != len(names):
        raise DataFormatError(f"{path}: duplicate image names")
    found = sorted(set().union(*objects) - set(BDD100K_OBJECT_CATEGORIES))
    cat_names = list(BDD100K_OBJECT_CATEGORIES) + found
    cats = np.zeros((len(names), len(cat_names)), bool)
    col = {c: k for k, c in enumerate(cat_names)}
    for i, s in enumerate(objects):
        cats[i, [col[c] for c in s]] = True
    return {
        "names": np.array(names),
        "attributes": np.array(attrs).reshape(-1, 3),
        "category_names": np.array(cat_names),
        "categories": cats,
    }


def _labels(path: Path, cache: bool, root) -> dict:
    """:func:`parse_labels`, cached by the file's path, size and modification time (large files)."""
    if not cache:
        return parse_labels(path)
    st = path.stat()
    params = {"parser": PARSER_VERSION, "path": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]
    return artifacts.cached(
        f"cache/bdd100k-labels-{digest}",
        params,
        lambda: parse_labels(path),
        command=f"embdiag.data.bdd100k.parse_labels({str(path)!r})",
        root=root,
    )


def _image_paths(images_dir: Path, split: str, names) -> list[Path]:
    sub = images_dir / split
    base = sub if sub.is_dir() else images_dir
    return [base / n for n in names]


def load_bdd100k(
    train_labels: str | Path,
    val_labels: str | Path,
    images_dir: str | Path,
    *,
    n_train: int = 2000,
    n_val: int = 983,
    n_pool: int = 0,
    seed: int = 0,
    image_size: int = 64,
    crop: str = "center",
    verify_images: bool = True,
    cache: bool = True,
    root: str | Path | None = None,
) -> Dataset:
    """A seeded BDD100K subset as a :class:`Dataset` (splits train, val and, if ``n_pool``, pool)."""
    train_labels, val_labels, images_dir = Path(train_labels), Path(val_labels), Path(images_dir)
    if not images_dir.is_dir():
        raise DataFileNotFoundError(f"{images_dir}: BDD100K images folder not found")
    root = Path(root) if root is not None else None
    tr, va = _labels(train_labels, cache, root), _labels(val_labels, cache, root)
    for path, tab, want in ((train_labels, tr, n_train + n_pool), (val_labels, va, n_val)):
        if want > len(tab["names"]):
            raise DataError(f"{path}: asked for {want} images but the file has {len(tab['names'])} records")
    rng = np.random.default_rng([int(seed), 100])
    order_tr = np.argsort(tr["names"], kind="stable")
    pick_tr = order_tr[rng.permutation(len(order_tr))[: n_train + n_pool]]
    train_idx, pool_idx = np.sort(pick_tr[:n_train]), np.sort(pick_tr[n_train:])
    order_va = np.argsort(va["names"], kind="stable")
    val_idx = np.sort(order_va[rng.permutation(len(order_va))[:n_val]])

    names_tr, names_va = [str(c) for c in tr["category_names"]], [str(c) for c in va["category_names"]]
    extra = (set(names_tr) | set(names_va)) - set(BDD100K_OBJECT_CATEGORIES)
    cat_names = list(BDD100K_OBJECT_CATEGORIES) + sorted(extra)

    def cats(tab, names, idx):
        out = np.zeros((len(idx), len(cat_names)), bool)
        for k, c in enumerate(names):
            out[:, cat_names.index(c)] = tab["categories"][idx, k]
        return out

    parts = [("train", tr, names_tr, train_idx), ("val", va, names_va, val_idx), ("pool", tr, names_tr, pool_idx)]
    parts = [p for p in parts if len(p[3])]
    ids = np.concatenate([p[1]["names"][p[3]] for p in parts])
    paths = [
        q
        for split, tab, _, idx in parts
        for q in _image_paths(images_dir, "train" if split == "pool" else split, tab["names"][idx])
    ]
    check_image_files(paths, open_headers=verify_images)
    values = np.concatenate([p[1]["attributes"][p[3]] for p in parts])
    return Dataset(
        ids=ids,
        images=LazyImages(paths, image_size, crop),
        attributes=attribute_frame({a: values[:, j] for j, a in enumerate(ATTRIBUTES)}, ids),
        split=np.concatenate([np.full(len(p[3]), p[0]) for p in parts]),
        categories=np.concatenate([cats(p[1], p[2], p[3]) for p in parts]),
        category_names=tuple(cat_names),
        source=(
            f"BDD100K ({n_train} train / {n_val} val"
            + (f" / {n_pool} pool" if n_pool else "")
            + f" images, seed {seed}; labels {train_labels} and {val_labels}; images {images_dir})"
        ),
        params={
            "source": "bdd100k",
            "train_labels": str(train_labels),
            "val_labels": str(val_labels),
            "images_dir": str(images_dir),
            "n_train": n_train,
            "n_val": n_val,
            "n_pool": n_pool,
            "seed": seed,
            "image_size": image_size,
            "crop": crop,
        },
    )
