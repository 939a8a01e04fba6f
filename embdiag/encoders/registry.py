"""Encoders by name, each built by one factory with one signature: ``load_encoder(name, root=None)``.

- ``reference-vit``, ``reference-cnn``: the project's dual encoders, read from the
  committed artifact ``encoders/<name>/`` under ``root`` (default: the data folder),
  checksums verified; train them with ``python -m embdiag.encoders.train``.
- ``wordllama:l2_supercat``: the pinned WordLlama text encoder from its installed wheel,
  offline (:func:`~embdiag.encoders.wordllama.load_wordllama`).
- ``hf:<model id>@<revision>`` or ``hf:<local folder>``: a Hugging Face model through
  :func:`~embdiag.encoders.huggingface.load_huggingface`, offline.
"""

from __future__ import annotations

from pathlib import Path

from .. import artifacts
from .dual import ReferenceEncoder
from .huggingface import load_huggingface
from .protocol import Encoder
from .wordllama import NAME as WORDLLAMA, load_wordllama

REFERENCE_NAMES: tuple[str, ...] = ("reference-vit", "reference-cnn")
NAMES_HELP = f"'reference-vit', 'reference-cnn', '{WORDLLAMA}', 'hf:<model id>@<revision>' or 'hf:<local folder>'"


def load_reference(name: str, root: Path | None = None) -> ReferenceEncoder:
    """A trained reference encoder from ``<root>/encoders/<name>/weights.safetensors``."""
    try:
        files = artifacts.load(f"encoders/{name}", root=root)
    except artifacts.MissingArtifactError as e:
        arch = name.removeprefix("reference-")
        raise artifacts.MissingArtifactError(
            f"encoder {name!r} has not been trained: run `python -m embdiag.encoders.train --arch {arch}` ({e})"
        ) from e
    return ReferenceEncoder.from_bytes(files["weights.safetensors"], name)


def _hf(spec: str) -> Encoder:
    if Path(spec).is_dir():
        return load_huggingface(spec)
    model, sep, revision = spec.rpartition("@")
    if not sep or not model or not revision:
        raise ValueError(
            f"name: 'hf:{spec}' needs a pinned revision, 'hf:<model id>@<revision>', or an existing local folder"
        )
    return load_huggingface(model, revision)


def load_encoder(name: str, root: Path | None = None) -> Encoder:
    """The encoder called ``name`` (one of :data:`NAMES_HELP`)."""
    if name in REFERENCE_NAMES:
        return load_reference(name, root)
    if name == WORDLLAMA:
        return load_wordllama()
    if isinstance(name, str) and name.startswith("hf:") and len(name) > 3:
        return _hf(name[3:])
    raise ValueError(f"name: unknown encoder {name!r}; expected {NAMES_HELP}")
