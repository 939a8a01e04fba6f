"""Checkpoints that survive a kill at any moment.

A checkpoint is one file: a 64-hex-digit SHA-256 of the payload, a newline, then the
payload (``torch.save`` of a dict). It is written to a temporary sibling, flushed to
disk, then renamed over the old one (``os.replace`` is atomic), so a kill leaves either
the old or the new checkpoint plus at most a stray temporary file, which
:func:`load_checkpoint` removes. A file whose checksum does not match (truncated or
damaged) is reported and ignored.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import tempfile
from pathlib import Path

import torch

__all__ = ["save_checkpoint", "load_checkpoint"]


def save_checkpoint(path: str | Path, state: dict) -> None:
    """Write ``state`` to ``path`` atomically, with a checksum."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    torch.save(state, buf)
    payload = buf.getvalue()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(hashlib.sha256(payload).hexdigest().encode() + b"\n")
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_checkpoint(path: str | Path) -> dict | None:
    """The state saved at ``path``, or ``None`` when there is none or it is damaged.

    Stray temporary files of interrupted writes next to ``path`` are deleted.
    """
    path = Path(path)
    for stray in path.parent.glob(f".{path.name}.*.tmp"):
        stray.unlink(missing_ok=True)
    if not path.exists():
        return None
    raw = path.read_bytes()
    digest, _, payload = raw.partition(b"\n")
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        print(f"checkpoint {path}: checksum mismatch (truncated or damaged); ignored", file=sys.stderr)
        return None
    return torch.load(io.BytesIO(payload), weights_only=False)
