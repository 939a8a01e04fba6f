"""One dataset interface for procedural scenes, BDD100K and COCO.

A :class:`Dataset` holds, row for row: image ids, images (uint8, N x H x W x 3; an
in-memory or memory-mapped array, or :class:`~embdiag.data.images.LazyImages` for files
on disk), the attribute table (weather / scene / timeofday where the source has them),
split membership, multi-label object categories, optional five captions per image, an
optional instance table and a ``source`` string saying exactly what the data are.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
import pandas as pd

from .vocab import ATTRIBUTES, VOCAB

SPLITS: tuple[str, ...] = ("train", "val", "pool", "caption")


def attribute_frame(values: dict[str, Sequence[str]], ids: Sequence[str]) -> pd.DataFrame:
    """Attribute table with categorical columns over the full BDD100K vocabulary, indexed by id."""
    cols = {}
    for a in ATTRIBUTES:
        if a not in values:
            continue
        v = np.asarray(values[a], dtype=str)
        bad = sorted(set(v.tolist()) - set(VOCAB[a]))
        if bad:
            raise ValueError(f"{a}: values outside the BDD100K vocabulary: {bad}")
        cols[a] = pd.Categorical(v, categories=list(VOCAB[a]))
    return pd.DataFrame(cols, index=pd.Index(np.asarray(ids, dtype=str), name="id"))


@dataclass(frozen=True, eq=False)
class Dataset:
    """Images with their attributes, splits, categories and captions, whatever the source."""

    ids: np.ndarray
    images: object
    attributes: pd.DataFrame
    split: np.ndarray
    categories: np.ndarray
    category_names: tuple[str, ...]
    source: str
    captions: np.ndarray | None = None
    instances: pd.DataFrame | None = None
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        n = len(self.ids)
        checks = {
            "images": len(self.images),
            "attributes": len(self.attributes),
            "split": len(self.split),
            "categories": len(self.categories),
        }
        if self.captions is not None:
            checks["captions"] = len(self.captions)
        bad = {k: v for k, v in checks.items() if v != n}
        if bad:
            raise ValueError(f"Dataset: {n} ids but " + ", ".join(f"{k} has {v} rows" for k, v in bad.items()))
        if self.categories.ndim != 2 or self.categories.shape[1] != len(self.category_names):
            raise ValueError(
                f"Dataset: categories shape {self.categories.shape} does not match "
                f"{len(self.category_names)} category names"
            )
        unknown = set(np.unique(self.split)) - set(SPLITS)
        if unknown:
            raise ValueError(f"Dataset: unknown split names {sorted(unknown)}; expected {SPLITS}")

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{s}={int((self.split == s).sum())}" for s in SPLITS if (self.split == s).any())
        return f"Dataset({len(self)} images {self.image_shape}, {sizes}; {self.source})"

    @property
    def image_shape(self) -> tuple[int, ...]:
        """(H, W, 3) of every image."""
        return tuple(self.images.shape[1:])

    @property
    def splits(self) -> tuple[str, ...]:
        """Split names present, in canonical order."""
        return tuple(s for s in SPLITS if (self.split == s).any())

    @property
    def key(self) -> str:
        """Stable fingerprint of the data (source, parameters, ids): a cache key for derived results."""
        h = hashlib.sha256(
            json.dumps({"source": self.source, "params": self.params}, sort_keys=True, default=str).encode()
        )
        h.update("\n".join(map(str, self.ids)).encode())
        h.update("\n".join(map(str, self.split)).encode())
        return h.hexdigest()[:16]

    def subset(self, which) -> "Dataset":
        """Rows of one split name, several split names, a boolean mask or integer indices."""
        if isinstance(which, str) or (isinstance(which, (list, tuple)) and which and isinstance(which[0], str)):
            names = [which] if isinstance(which, str) else list(which)
            unknown = set(names) - set(SPLITS)
            if unknown:
                raise ValueError(f"subset: unknown split names {sorted(unknown)}; expected {SPLITS}")
            idx = np.flatnonzero(np.isin(self.split, names))
        else:
            w = np.asarray(which)
            idx = np.flatnonzero(w) if w.dtype == bool else w.astype(int)
        images = (
            self.images.take(idx)
            if hasattr(self.images, "take") and not isinstance(self.images, np.ndarray)
            else self.images[idx]
        )
        inst = None
        if self.instances is not None:
            pos = np.full(len(self), -1)
            pos[idx] = np.arange(len(idx))
            inst = self.instances[np.isin(self.instances["image"].to_numpy(), idx)].copy()
            inst["image"] = pos[inst["image"].to_numpy()]
            inst = inst.sort_values("image", kind="stable").reset_index(drop=True)
        return replace(
            self,
            ids=self.ids[idx],
            images=images,
            attributes=self.attributes.iloc[idx],
            split=self.split[idx],
            categories=self.categories[idx],
            captions=None if self.captions is None else self.captions[idx],
            instances=inst,
        )

    def labels(self, attribute: str) -> np.ndarray:
        """String labels of ``attribute`` for every row."""
        if attribute not in self.attributes.columns:
            raise ValueError(
                f"labels: this dataset has no attribute {attribute!r} "
                f"(has {list(self.attributes.columns)}; source: {self.source})"
            )
        return self.attributes[attribute].astype(str).to_numpy()

    def codes(self, attribute: str) -> tuple[np.ndarray, tuple[str, ...]]:
        """Integer codes of ``attribute`` over its full vocabulary, and that vocabulary."""
        self.labels(attribute)
        return self.attributes[attribute].cat.codes.to_numpy().astype(np.int64), VOCAB[attribute]

    def class_counts(self) -> pd.DataFrame:
        """Long table: attribute, value, split, count and share within the split (zeros included)."""
        rows = []
        for a in self.attributes.columns:
            for s in self.splits:
                col = self.attributes[a][self.split == s]
                counts = col.value_counts(sort=False).reindex(VOCAB[a], fill_value=0)
                for value, c in counts.items():
                    rows.append(
                        {
                            "attribute": a,
                            "value": value,
                            "split": s,
                            "count": int(c),
                            "share": float(c) / max(len(col), 1),
                        }
                    )
        return pd.DataFrame(rows, columns=["attribute", "value", "split", "count", "share"])


def concat(parts: Sequence[Dataset]) -> Dataset:
    """Rows of several datasets of the same source, in order (images materialised if lazy)."""
    if not parts:
        raise ValueError("concat: no datasets given")
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    if any(p.category_names != first.category_names for p in parts):
        raise ValueError("concat: datasets have different object categories")
    offsets = np.cumsum([0] + [len(p) for p in parts[:-1]])
    inst = None
    if all(p.instances is not None for p in parts):
        inst = pd.concat(
            [p.instances.assign(image=p.instances["image"] + o) for p, o in zip(parts, offsets)], ignore_index=True
        )
    caps = None
    if all(p.captions is not None for p in parts):
        caps = np.concatenate([p.captions.astype(str) for p in parts])
    return Dataset(
        ids=np.concatenate([p.ids for p in parts]),
        images=np.concatenate([np.asarray(p.images) for p in parts]),
        attributes=pd.concat([p.attributes for p in parts]),
        split=np.concatenate([p.split for p in parts]),
        categories=np.concatenate([p.categories for p in parts]),
        category_names=first.category_names,
        source=first.source,
        captions=caps,
        instances=inst,
        params=first.params,
    )
