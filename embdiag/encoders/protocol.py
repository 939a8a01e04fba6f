"""The encoder protocol: images and texts into one space of unit-normalised float32 rows.

An encoder has a ``name``, a pinned ``revision`` (a content digest or a hub commit) and
an output dimension ``dim``. ``encode_images`` takes uint8 images (n x H x W x 3) and
``encode_texts`` takes strings with a ``role``: ``"query"`` (the text searches) or
``"document"`` (the text is searched), each prefixed by its role prompt. Both return
float32 ``(n, dim)`` rows of unit L2 norm, computed in batches with an optional progress
display on stderr.
"""

from __future__ import annotations

import sys
from typing import Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from .._validate import check_int

ROLES: tuple[str, ...] = ("query", "document")


@runtime_checkable
class Encoder(Protocol):
    """What every encoder provides (reference dual encoders, Hugging Face adapters)."""

    name: str
    revision: str
    dim: int

    def encode_images(self, images, *, batch_size: int = 256, progress: bool = False) -> np.ndarray: ...

    def encode_texts(
        self, texts: Sequence[str], role: str = "query", *, batch_size: int = 256, progress: bool = False
    ) -> np.ndarray: ...


def check_role(role: str) -> str:
    if role not in ROLES:
        raise ValueError(f"role: expected one of {ROLES}, got {role!r}")
    return role


def check_images(images) -> np.ndarray:
    """``images`` as a uint8 (n, H, W, 3) array."""
    a = np.asarray(images)
    if a.dtype != np.uint8 or a.ndim != 4 or a.shape[-1] != 3 or len(a) == 0:
        raise ValueError(f"images: expected a non-empty uint8 (n, H, W, 3) array, got {a.dtype} {a.shape}")
    return a


def check_texts(texts) -> list[str]:
    """``texts`` as a non-empty list of strings."""
    if isinstance(texts, str):
        raise ValueError("texts: expected a sequence of strings, got one string")
    out = [str(t) for t in np.asarray(texts, dtype=object).ravel()] if len(texts) else []
    if not out:
        raise ValueError("texts: empty sequence")
    return out


def check_batch_size(batch_size) -> int:
    return check_int(batch_size, "batch_size", minimum=1)


def unit_rows(Z) -> np.ndarray:
    """Rows of ``Z`` scaled to unit L2 norm, as float32 (zero rows raise)."""
    Z = np.asarray(Z, dtype=np.float32)
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    if (norms == 0).any() or not np.isfinite(norms).all():
        raise ValueError("embeddings: zero or non-finite rows cannot be normalised")
    return Z / norms


def batched(
    n: int,
    batch_size: int,
    encode: Callable[[int, int], np.ndarray],
    *,
    progress: bool = False,
    label: str = "encoding",
) -> np.ndarray:
    """``encode(start, stop)`` over consecutive batches of ``n`` rows, stacked and unit-normalised."""
    batch_size = check_batch_size(batch_size)
    parts = []
    for start in range(0, n, batch_size):
        parts.append(np.asarray(encode(start, min(start + batch_size, n)), dtype=np.float32))
        if progress:
            print(f"\r{label}: {min(start + batch_size, n)}/{n}", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return unit_rows(np.concatenate(parts))
