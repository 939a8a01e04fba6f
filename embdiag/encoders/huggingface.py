"""A Hugging Face ``transformers`` adapter for CLIP/SigLIP-style image–text models.

The model is a hub id with a pinned ``revision`` (a commit), or a local folder, whose
revision is then the SHA-256 of its weight and config files. Images go through the
model's image processor and ``get_image_features``; texts, each prefixed by the prompt
of its role, through its tokenizer and ``get_text_features``. Nothing is downloaded
unless ``local_files_only=False``, and repository code runs only with
``trust_remote_code=True``. ``transformers`` is imported when an adapter is loaded.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Mapping

import numpy as np

from .protocol import ROLES, batched, check_images, check_role, check_texts

_WEIGHT_FILES = ("*.safetensors", "*.bin", "*.json", "*.txt", "*.model")


def folder_revision(path: Path) -> str:
    """SHA-256 of the weight, config and vocabulary files of a local model folder."""
    h = hashlib.sha256()
    files = sorted({f for pattern in _WEIGHT_FILES for f in Path(path).glob(pattern)})
    if not files:
        raise ValueError(f"model: no model files in {path}")
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _features(out):
    """Transformers 5 returns a model output whose ``pooler_output`` is the projection."""
    return out if hasattr(out, "detach") else out.pooler_output


class HuggingFaceEncoder:
    """A loaded model, tokenizer and image processor behind the encoder protocol."""

    def __init__(self, model, tokenizer, image_processor, name: str, revision: str, prompts: Mapping[str, str]):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.name = name
        self.revision = revision
        self.prompts = dict(prompts)
        self.dim = int(getattr(model.config, "projection_dim", 0) or self.encode_texts(["x"]).shape[1])

    def encode_images(self, images, *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        import torch

        a = check_images(images)

        @torch.no_grad()
        def run(i, j):
            pixels = self.image_processor(images=list(a[i:j]), return_tensors="pt")["pixel_values"]
            return _features(self.model.get_image_features(pixel_values=pixels)).float().numpy()

        return batched(len(a), batch_size, run, progress=progress, label=f"{self.name} images")

    def encode_texts(self, texts, role: str = "query", *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        import torch

        texts, prompt = check_texts(texts), self.prompts[check_role(role)]

        @torch.no_grad()
        def run(i, j):
            enc = self.tokenizer([prompt + t for t in texts[i:j]], padding=True, truncation=True, return_tensors="pt")
            keep = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask")}
            return _features(self.model.get_text_features(**keep)).float().numpy()

        return batched(len(texts), batch_size, run, progress=progress, label=f"{self.name} {role} texts")


def load_huggingface(
    model: str,
    revision: str | None = None,
    *,
    prompts: Mapping[str, str] | None = None,
    trust_remote_code: bool = False,
    local_files_only: bool = True,
) -> HuggingFaceEncoder:
    """Load ``model`` (a local folder, or a hub id with a pinned ``revision``).

    ``prompts`` maps each role (``query``, ``document``) to the text prepended to it
    (default: none, as CLIP was trained).
    """
    from transformers import AutoImageProcessor, AutoModel, AutoProcessor, AutoTokenizer

    prompts = {"query": "", "document": "", **(prompts or {})}
    unknown = set(prompts) - set(ROLES)
    if unknown:
        raise ValueError(f"prompts: unknown roles {sorted(unknown)}; expected {ROLES}")
    local = Path(model).is_dir()
    if not local and not revision:
        raise ValueError(f"revision: a hub model ({model!r}) needs a pinned revision (a commit hash)")
    rev = folder_revision(Path(model)) if local else revision
    kw = dict(
        trust_remote_code=trust_remote_code,
        local_files_only=local_files_only,
        **({} if local else {"revision": revision}),
    )
    net = AutoModel.from_pretrained(model, **kw)
    for method in ("get_image_features", "get_text_features"):
        if not hasattr(net, method):
            raise ValueError(f"model: {type(net).__name__} has no {method}(); expected a CLIP/SigLIP-style model")
    try:
        proc = AutoProcessor.from_pretrained(model, **kw)
        tokenizer, images = proc.tokenizer, proc.image_processor
    except (OSError, ValueError, AttributeError, TypeError):
        tokenizer, images = AutoTokenizer.from_pretrained(model, **kw), AutoImageProcessor.from_pretrained(model, **kw)
    return HuggingFaceEncoder(net, tokenizer, images, f"hf:{model}@{rev}", rev, prompts)
