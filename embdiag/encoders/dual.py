"""The reference image–text dual encoder and its self-describing weights file.

Image tower: a small ViT (patches, learned positions, pre-norm transformer, mean pool)
or a small CNN (strided 3x3 convolutions with two coordinate channels, so positions
survive the global mean pool). Text tower: token and position embeddings, a small
pre-norm transformer over the real tokens and a masked mean pool; with
``text_depth=0``, the mean-pooled embeddings go through a two-layer MLP instead. Each
tower ends in a linear map to ``dim`` (768) and L2 normalisation. A learnable logit
scale (inverse temperature) belongs to the model.

The weights file (safetensors) carries the :class:`DualConfig` and the tokenizer
vocabulary in its metadata, so the file alone rebuilds the encoder and its SHA-256 pins
everything: it is the encoder's revision.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors
from torch import nn

from .protocol import batched, check_images, check_role, check_texts
from .tokenizer import WordTokenizer

ARCHS = ("vit", "cnn")


@dataclass(frozen=True)
class DualConfig:
    """Sizes of both towers (``vocab_size`` and ``max_len`` come from the tokenizer)."""

    arch: str = "vit"
    image_size: int = 32
    patch: int = 4
    width: int = 128
    depth: int = 3
    heads: int = 4
    channels: tuple[int, ...] = (32, 64, 128, 256)
    text_width: int = 128
    text_depth: int = 1
    vocab_size: int = 1000
    max_len: int = 80
    dim: int = 768

    def __post_init__(self):
        if self.arch not in ARCHS:
            raise ValueError(f"arch: expected one of {ARCHS}, got {self.arch!r}")
        if self.image_size % self.patch:
            raise ValueError(f"patch: must divide image_size {self.image_size}, got {self.patch}")
        object.__setattr__(self, "channels", tuple(self.channels))


def _block(width: int, heads: int) -> nn.TransformerEncoderLayer:
    return nn.TransformerEncoderLayer(
        width, heads, 4 * width, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )


class ViTTower(nn.Module):
    def __init__(self, c: DualConfig):
        super().__init__()
        self.embed = nn.Conv2d(3, c.width, c.patch, stride=c.patch)
        self.pos = nn.Parameter(torch.randn(1, (c.image_size // c.patch) ** 2, c.width) * 0.02)
        self.blocks = nn.ModuleList(_block(c.width, c.heads) for _ in range(c.depth))
        self.norm = nn.LayerNorm(c.width)
        self.head = nn.Linear(c.width, c.dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x).flatten(2).transpose(1, 2) + self.pos
        for b in self.blocks:
            h = b(h)
        return self.head(self.norm(h).mean(1))


class CNNTower(nn.Module):
    def __init__(self, c: DualConfig):
        super().__init__()
        layers, prev = [], 5  # RGB + two coordinate channels
        for i, ch in enumerate(c.channels):
            layers += [
                nn.Conv2d(prev, ch, 3, stride=1 if i == 0 else 2, padding=1),
                nn.GroupNorm(8, ch),
                nn.GELU(),
                nn.Conv2d(ch, ch, 3, padding=1),
                nn.GroupNorm(8, ch),
                nn.GELU(),
            ]
            prev = ch
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(prev, c.dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, _, h, w = x.shape
        yy, xx = torch.meshgrid(torch.linspace(-1, 1, h), torch.linspace(-1, 1, w), indexing="ij")
        coords = torch.stack([yy, xx]).to(x).expand(n, 2, h, w)
        return self.head(self.body(torch.cat([x, coords], 1)).mean((2, 3)))


class TextTower(nn.Module):
    def __init__(self, c: DualConfig):
        super().__init__()
        self.embed = nn.Embedding(c.vocab_size, c.text_width, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(1, c.max_len, c.text_width) * 0.02)
        self.blocks = nn.ModuleList(_block(c.text_width, c.heads) for _ in range(c.text_depth))
        self.mlp = None if c.text_depth else nn.Sequential(nn.Linear(c.text_width, 2 * c.text_width), nn.GELU())
        self.norm = nn.LayerNorm(c.text_width if c.text_depth else 2 * c.text_width)
        self.head = nn.Linear(c.text_width if c.text_depth else 2 * c.text_width, c.dim)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids) + self.pos[:, : ids.shape[1]]
        for b in self.blocks:
            h = b(h, src_key_padding_mask=~mask)
        m = mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp_min(1)
        return self.head(self.norm(pooled if self.mlp is None else self.mlp(pooled)))


class DualEncoder(nn.Module):
    """Both towers and the logit scale; outputs are unit-normalised ``dim``-d rows."""

    def __init__(self, config: DualConfig):
        super().__init__()
        self.config = config
        self.image = ViTTower(config) if config.arch == "vit" else CNNTower(config)
        self.text = TextTower(config)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def encode_image(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.image(x), dim=-1)

    def encode_text(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.text(ids, mask), dim=-1)


def image_tensor(images: np.ndarray, size: int) -> torch.Tensor:
    """uint8 (n, H, W, 3) images as float (n, 3, size, size) in [-1, 1] (area-resized if needed)."""
    x = torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float().div_(127.5).sub_(1.0)
    if x.shape[-1] != size or x.shape[-2] != size:
        x = F.interpolate(x, size=(size, size), mode="area" if x.shape[-1] > size else "bilinear")
    return x


def to_bytes(model: DualEncoder, tokenizer: WordTokenizer) -> bytes:
    """The model's weights as safetensors bytes, config and vocabulary in the metadata."""
    tensors = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    meta = {"config": dataclasses.asdict(model.config), "vocabulary": tokenizer.vocabulary_}
    return save_tensors(tensors, metadata={"embdiag": json.dumps(meta)})  # one key: a stable header


def _metadata(data: bytes) -> dict:
    n = int.from_bytes(data[:8], "little")
    return json.loads(json.loads(data[8 : 8 + n]).get("__metadata__", {}).get("embdiag", "{}"))


class ReferenceEncoder:
    """A trained :class:`DualEncoder` behind the :class:`~embdiag.encoders.protocol.Encoder` protocol."""

    def __init__(self, model: DualEncoder, tokenizer: WordTokenizer, name: str, revision: str):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name
        self.revision = revision
        self.dim = model.config.dim

    @classmethod
    def from_bytes(cls, data: bytes, name: str) -> "ReferenceEncoder":
        """Rebuild from a weights file's bytes; the revision is their SHA-256."""
        meta = _metadata(data)
        if "config" not in meta or "vocabulary" not in meta:
            raise ValueError(f"{name}: weights file has no config or vocabulary in its metadata")
        config = DualConfig(**meta["config"])
        model = DualEncoder(config)
        model.load_state_dict(load_tensors(data))
        tokenizer = WordTokenizer.from_vocabulary(meta["vocabulary"], config.max_len)
        return cls(model, tokenizer, name, hashlib.sha256(data).hexdigest())

    def encode_images(self, images, *, batch_size: int = 256, progress: bool = False) -> np.ndarray:
        a = check_images(images)

        @torch.no_grad()
        def run(i, j):
            return self.model.encode_image(image_tensor(a[i:j], self.model.config.image_size)).numpy()

        return batched(len(a), batch_size, run, progress=progress, label=f"{self.name} images")

    def encode_texts(self, texts, role: str = "query", *, batch_size: int = 256, progress: bool = False) -> np.ndarray:
        texts, role = check_texts(texts), check_role(role)

        @torch.no_grad()
        def run(i, j):
            ids, mask = self.tokenizer.encode(texts[i:j], role)
            return self.model.encode_text(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()

        return batched(len(texts), batch_size, run, progress=progress, label=f"{self.name} {role} texts")
