"""WordLlama ``l2_supercat``: a pretrained static text encoder (token embeddings, mean-pooled), offline.

The ``wordllama`` wheel (:data:`PACKAGE`, MIT) ships the 256-d weights and the tokenizer
config; its Matryoshka prefixes 64 and 128 are cut from them (:data:`DIMS`; the published
512 and 1024 are not in the wheel). The pinned revision is the wheel's version with the
SHA-256 of those two files (:data:`FILES`): :func:`load_wordllama` checks both before it
loads anything, through ``WordLlama.load(cache_dir=<the package>, disable_download=True)``,
so no download is ever attempted. Text only: both roles embed the same text (the model has
no prompts), rows unit-normalised; ``encode_images`` raises. A row is the mean of its tokens'
vectors, whatever else shares its batch (padding is masked), so texts are batched by length:
the same bits, about a third faster.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import logging
from pathlib import Path

import numpy as np

from .protocol import batched, check_role, check_texts

NAME = "wordllama:l2_supercat"
PACKAGE = "wordllama==0.4.0.post1"
#: The files the revision pins, relative to the installed package, with their SHA-256.
FILES: dict[str, str] = {
    "weights/l2_supercat_256.safetensors": "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5",
    "tokenizers/l2_supercat_tokenizer_config.json": "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68",
}
#: The native dimension, then the Matryoshka prefixes the wheel's weights give.
DIMS: tuple[int, ...] = (256, 128, 64)


class WordLlamaError(RuntimeError):
    """The ``wordllama`` package is missing, of another version, or its files are not the pinned ones."""


def revision() -> str:
    """The pinned revision: SHA-256 of the package pin and of every pinned file's digest."""
    h = hashlib.sha256(PACKAGE.encode())
    for name, digest in sorted(FILES.items()):
        h.update(f"\n{name} {digest}".encode())
    return h.hexdigest()


def package_folder() -> Path:
    """The installed ``wordllama`` folder, after checking its version and :data:`FILES`."""
    want = PACKAGE.split("==")[1]
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise WordLlamaError(
            f"encoder {NAME!r} needs the package {PACKAGE} (pip install {PACKAGE}); it is not installed"
        )
    have = importlib.metadata.version("wordllama")
    if have != want:
        raise WordLlamaError(f"encoder {NAME!r} is pinned to {PACKAGE}; wordllama {have} is installed")
    folder = Path(list(spec.submodule_search_locations)[0])
    for name, digest in FILES.items():
        path = folder / name
        if not path.is_file():
            raise WordLlamaError(f"encoder {NAME!r}: {PACKAGE} lacks its file {path}; reinstall it")
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise WordLlamaError(
                f"encoder {NAME!r}: {path} differs from the file {PACKAGE} ships (SHA-256 "
                f"{digest[:12]}...); reinstall it (pip install --force-reinstall {PACKAGE})"
            )
    return folder


def _import_wordllama():
    """``wordllama.WordLlama``; the package configures the root logger on import, which is undone."""
    root = logging.getLogger()
    level, handlers = root.level, root.handlers[:]
    try:
        from wordllama import WordLlama
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers
    return WordLlama


class WordLlamaEncoder:
    """The loaded model behind the encoder protocol (texts only)."""

    def __init__(self, model):
        self.model = model
        self.name = NAME
        self.revision = revision()
        self.dim = DIMS[0]

    def encode_images(self, images, *, batch_size: int = 256, progress: bool = False) -> np.ndarray:
        raise TypeError(f"encoder {NAME!r} embeds texts only")

    def encode_texts(self, texts, role: str = "query", *, batch_size: int = 512, progress: bool = False) -> np.ndarray:
        texts = check_texts(texts)
        check_role(role)
        order = np.argsort([len(t) for t in texts], kind="stable")  # batches of like length pad less
        ordered = [texts[i] for i in order]
        Z = batched(
            len(ordered),
            batch_size,
            lambda i, j: self.model.embed(ordered[i:j], batch_size=j - i),
            progress=progress,
            label=f"{NAME} texts",
        )
        out = np.empty_like(Z)
        out[order] = Z
        return out


def load_wordllama() -> WordLlamaEncoder:
    """The pinned ``l2_supercat`` model from the installed wheel, offline (raises :class:`WordLlamaError`)."""
    folder = package_folder()
    model = _import_wordllama().load("l2_supercat", cache_dir=folder, dim=DIMS[0], disable_download=True)
    return WordLlamaEncoder(model)
