"""Embeddings cached as checksummed artifacts, never reused when anything differs.

An entry ``cache/embeddings/<encoder>/<dataset key>-<split>-<kind>-<dim>`` holds the
vectors of one split of a :class:`~embdiag.data.Dataset`: its images, or its captions
(flattened row-major, five per image) embedded in the ``query`` or ``document`` role,
cut to the Matryoshka prefix ``dim`` and re-normalised (``None``: the native width). The
entry's parameters record the encoder name and revision, the dataset key, split, role,
dimension and row count, and its manifest the SHA-256 of the vectors: a stale entry
(other parameters) or a corrupt one (checksum mismatch) is recomputed, never used.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from .. import artifacts
from ..data import Dataset
from .protocol import Encoder, check_role, unit_rows

KINDS = ("images", "texts")


def prefix(Z: np.ndarray, dim: int | None) -> np.ndarray:
    """The first ``dim`` coordinates of each row, re-normalised (``None``: unchanged)."""
    if dim is None:
        return Z
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or not 1 <= dim <= Z.shape[1]:
        raise ValueError(f"dim: expected an integer in 1..{Z.shape[1]} or None, got {dim!r}")
    return unit_rows(Z[:, :dim])


def embed(encoder: Encoder, dataset: Dataset, split: str, *, kind: str = "images", role: str = "query",
          dim: int | None = None, root: Path | None = None, progress: bool = False) -> np.ndarray:
    """Embeddings of ``split`` of ``dataset`` (images, or its captions in ``role``), cached."""
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
    part = dataset.subset(split)
    if not len(part):
        raise ValueError(f"split: dataset has no rows in split {split!r} (has {dataset.splits})")
    if kind == "texts" and part.captions is None:
        raise ValueError(f"kind: dataset {dataset.source!r} has no captions to embed")
    role = check_role(role) if kind == "texts" else None
    n = len(part) if kind == "images" else int(np.asarray(part.captions).size)
    params = {"encoder": encoder.name, "revision": encoder.revision, "dataset": dataset.key, "split": split,
              "kind": kind, "role": role, "dim": dim, "rows": n}
    tag = hashlib.sha256(f"{encoder.name}@{encoder.revision}".encode()).hexdigest()[:12]
    name = f"{artifacts.CACHE}/embeddings/{tag}/{dataset.key}-{split}-{kind}{'-' + role if role else ''}-{dim or 'native'}"

    def build():
        Z = (encoder.encode_images(np.asarray(part.images), progress=progress) if kind == "images"
             else encoder.encode_texts(np.asarray(part.captions).ravel(), role, progress=progress))
        return {"vectors": prefix(Z, dim)}
    command = f"embdiag.encoders.cache.embed(load_encoder({encoder.name!r}), ..., {split!r}, kind={kind!r})"
    Z = artifacts.cached(name, params, build, command=command, root=root)["vectors"]
    if Z.shape[0] != n:
        raise artifacts.CorruptArtifactError(f"{name}: {Z.shape[0]} rows cached, {n} expected")
    return Z
