"""Embeddings: committed where the book reads them, else cached; never reused when anything differs.

The native vectors the book's chapters read are committed artifacts
``embeddings/<encoder>/<dataset key>-<split>-<kind>[-<role>]`` (:data:`COMMITTED`), so that
every machine measures the same inputs whatever float path its encoder's kernels take;
:func:`regenerate` recomputes one from the encoder and reports how far the new vectors
are from the committed ones (``embdiag embeddings``), replacing them only when asked.
Any other embedding (another dataset, a user's encoder) is a regenerable cache entry
``cache/embeddings/<encoder>/<dataset key>-<split>-<kind>-<dim>``. Either holds the
vectors of one split of a :class:`~embdiag.data.Dataset`: its images, or its captions
(flattened row-major, five per image) embedded in the ``query`` or ``document`` role;
a Matryoshka prefix ``dim`` is cut from the native vectors and re-normalised. The
parameters record the encoder name and revision, the dataset key, split, role,
dimension and row count, and the manifest the SHA-256 of the vectors: a stale entry
(other parameters) is recomputed in the cache, a corrupt cache entry is recomputed, and a
corrupt committed one raises; none is ever used.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import artifacts
from .._validate import check_int
from ..data import Dataset
from .protocol import Encoder, check_role, unit_rows

KINDS = ("images", "texts")
#: Folder (under the data root) of the committed native embeddings the book reads.
COMMITTED = "embeddings"


def prefix(Z: np.ndarray, dim: int | None) -> np.ndarray:
    """The first ``dim`` coordinates of each row, re-normalised (``None``: unchanged)."""
    if dim is None:
        return Z
    dim = check_int(dim, "dim", minimum=1)
    if dim > Z.shape[1]:
        raise ValueError(f"dim: must be at most the dimension {Z.shape[1]}, got {dim}")
    return unit_rows(Z[:, :dim])


def _entry(encoder: Encoder, dataset: Dataset, split: str, kind: str, role) -> tuple[dict, str, str]:
    """(parameters of the native vectors, committed name, cache name)."""
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {KINDS}, got {kind!r}")
    part = dataset.subset(split)
    if not len(part):
        raise ValueError(f"split: dataset has no rows in split {split!r} (has {dataset.splits})")
    if kind == "texts" and part.captions is None:
        raise ValueError(f"kind: dataset {dataset.source!r} has no captions to embed")
    role = check_role(role) if kind == "texts" else None
    n = len(part) if kind == "images" else int(np.asarray(part.captions).size)
    params = {
        "encoder": encoder.name,
        "revision": encoder.revision,
        "dataset": dataset.key,
        "split": split,
        "kind": kind,
        "role": role,
        "dim": None,
        "rows": n,
    }
    stem = f"{dataset.key}-{split}-{kind}{'-' + role if role else ''}"
    tag = hashlib.sha256(f"{encoder.name}@{encoder.revision}".encode()).hexdigest()[:12]
    return params, f"{COMMITTED}/{encoder.name}/{stem}", f"{artifacts.CACHE}/embeddings/{tag}/{stem}-native"


def _encode(encoder: Encoder, dataset: Dataset, params: dict, progress: bool) -> np.ndarray:
    part = dataset.subset(params["split"])
    if params["kind"] == "images":
        return encoder.encode_images(np.asarray(part.images), progress=progress)
    return encoder.encode_texts(np.asarray(part.captions).ravel(), params["role"], progress=progress)


def _command(encoder: Encoder, params: dict) -> str:
    return (
        f"embdiag.encoders.cache.embed(load_encoder({encoder.name!r}), ..., {params['split']!r}, "
        f"kind={params['kind']!r})"
    )


def embed(
    encoder: Encoder,
    dataset: Dataset,
    split: str,
    *,
    kind: str = "images",
    role: str = "query",
    dim: int | None = None,
    root: Path | None = None,
    progress: bool = False,
) -> np.ndarray:
    """Embeddings of ``split`` of ``dataset`` (images, or its captions in ``role``), cut to the
    prefix ``dim``: the committed vectors when there are some for exactly these parameters,
    else the cache's (computed on first use)."""
    params, committed, cache = _entry(encoder, dataset, split, kind, role)
    try:
        Z = artifacts.load(committed, params, root=root)["vectors"]
    except (artifacts.MissingArtifactError, artifacts.StaleArtifactError):
        Z = artifacts.cached(
            cache,
            params,
            lambda: {"vectors": _encode(encoder, dataset, params, progress)},
            command=_command(encoder, params),
            root=root,
        )["vectors"]
    if Z.shape[0] != params["rows"]:
        raise artifacts.CorruptArtifactError(f"{committed}: {Z.shape[0]} rows stored, {params['rows']} expected")
    return prefix(Z, dim)


@dataclass(frozen=True)
class Regenerated:
    """How far freshly computed vectors are from the committed ones: ``name`` (the committed
    artifact), ``rows``, ``max_abs`` (largest absolute difference of a coordinate),
    ``max_rel`` (largest row-wise ``|new - old| / |old|``, Euclidean), ``identical`` (bit
    for bit), ``written`` (whether the committed artifact now holds the new vectors).
    ``max_abs`` and ``max_rel`` are NaN when there was nothing committed to compare."""

    name: str
    rows: int
    max_abs: float
    max_rel: float
    identical: bool
    written: bool


def regenerate(
    encoder: Encoder,
    dataset: Dataset,
    split: str,
    *,
    kind: str = "images",
    role: str = "query",
    write: bool = False,
    root: Path | None = None,
    progress: bool = False,
) -> Regenerated:
    """Compute the native vectors of this entry from ``encoder`` and compare them with the
    committed artifact; write them as the committed artifact when ``write`` or when none (or
    a stale one) is committed. Nothing is replaced silently: the result says how far apart
    the two are."""
    params, committed, _ = _entry(encoder, dataset, split, kind, role)
    return regenerate_vectors(committed, params, _encode(encoder, dataset, params, progress), write=write, root=root)


def regenerate_vectors(
    committed: str, params: dict, vectors, *, write: bool = False, root: Path | None = None
) -> Regenerated:
    """Compare freshly computed ``vectors`` with the committed artifact ``committed`` made with
    ``params``, and write them there when ``write`` or when none (or a stale one) is committed."""
    new = np.asarray(vectors, dtype=np.float32)
    try:
        old = artifacts.load(committed, params, root=root)["vectors"]
    except (artifacts.MissingArtifactError, artifacts.StaleArtifactError):
        old = None
    if old is None or old.shape != new.shape:
        max_abs = max_rel = float("nan")
        identical = False
    else:
        diff = new.astype(np.float64) - old
        max_abs = float(np.abs(diff).max(initial=0.0))
        max_rel = float(
            (np.linalg.norm(diff, axis=1) / np.linalg.norm(old.astype(np.float64), axis=1)).max(initial=0.0)
        )
        identical = bool(np.array_equal(new.view(np.uint32), np.asarray(old, np.float32).view(np.uint32)))
    written = (write and not identical) or old is None
    if written:
        artifacts.save(committed, {"vectors": new}, params, root=root, command="embdiag embeddings --write")
    return Regenerated(committed, int(new.shape[0]), max_abs, max_rel, identical, written)
