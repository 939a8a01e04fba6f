"""The JEPA's networks: a ViT encoder, a narrow predictor and the SIGReg projector.

- :class:`Encoder`: flattened patches through a linear layer (a strided convolution as a
  matrix product, which runs at GEMM speed on the CPU) plus fixed 2-D sin-cos position
  embeddings, no class token, pre-norm transformer blocks, a final LayerNorm. Given patch
  indices it encodes only those tokens (the context view); :meth:`Encoder.pool` is the
  mean over all patch tokens of the full image, the ``width``-dimensional embedding the
  study evaluates.
- :class:`Predictor`: maps context tokens to ``predictor_width``, appends a learnable mask
  token plus the position embedding of every target patch, runs its own transformer blocks
  and maps the target positions back to ``width``. All target blocks of an image go in one
  pass (so their mask tokens also see each other); I-JEPA runs one pass per block, which
  repeats the context for every block and, at 16 tokens and four blocks, made the
  predictor 40% of a step's FLOPs.
- :class:`Projector`: ``Linear - BatchNorm - GELU - Linear`` (the shape of LeJEPA's
  projector), used only between the encoder and SIGReg.

Weights are drawn by :func:`init_weights` from an explicit generator (truncated normal,
std 0.02, as I-JEPA; zero biases; unit norms), never from the global RNG.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ModelConfig", "MODEL_SIZES", "model_config", "sincos_2d", "Encoder", "Predictor", "Projector",
           "init_weights", "gather_tokens", "patchify"]


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of encoder, predictor and projector (``grid = image_size // patch_size``)."""

    image_size: int = 32
    patch_size: int = 8
    width: int = 192
    heads: int = 3
    depth: int = 2
    mlp_ratio: float = 4.0
    predictor_width: int = 96
    predictor_depth: int = 2
    predictor_heads: int = 3
    projector_hidden: int = 512
    projector_dim: int = 64

    def __post_init__(self):
        for name in ("image_size", "patch_size", "width", "heads", "depth", "predictor_width", "predictor_depth",
                     "predictor_heads", "projector_hidden", "projector_dim"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected a positive integer, got {v!r}")
        if self.image_size % self.patch_size:
            raise ValueError(f"patch_size: {self.patch_size} does not divide image_size {self.image_size}")
        for w, h, name in ((self.width, self.heads, "width"), (self.predictor_width, self.predictor_heads,
                                                               "predictor_width")):
            if w % h:
                raise ValueError(f"{name}: {w} is not divisible by its number of heads {h}")
            if w % 4:
                raise ValueError(f"{name}: {w} must be divisible by 4 for 2-D sin-cos position embeddings")
        if not self.mlp_ratio > 0:
            raise ValueError(f"mlp_ratio: expected a positive number, got {self.mlp_ratio!r}")

    @property
    def grid(self) -> int:
        return self.image_size // self.patch_size

    @property
    def n_patches(self) -> int:
        return self.grid ** 2


MODEL_SIZES: dict[str, ModelConfig] = {
    "tiny": ModelConfig(image_size=16, patch_size=4, depth=1, predictor_width=48, predictor_depth=1,
                        projector_hidden=64, projector_dim=16),
    "cpu": ModelConfig(image_size=64, patch_size=16, depth=2, predictor_width=96, predictor_depth=2),
    "study": ModelConfig(image_size=64, patch_size=8, depth=6, predictor_width=96, predictor_depth=3),
}


def model_config(size: str) -> ModelConfig:
    """The named model size (``tiny``, ``cpu``, ``study``)."""
    if size not in MODEL_SIZES:
        raise ValueError(f"size: expected one of {tuple(MODEL_SIZES)}, got {size!r}")
    return MODEL_SIZES[size]


def sincos_2d(dim: int, grid: int) -> torch.Tensor:
    """Fixed 2-D sin-cos position embeddings, shape (grid * grid, dim).

    The first half of the channels encodes the row, the second half the column, each as
    ``[sin(p * w_i), cos(p * w_i)]`` with ``w_i = 10000 ** (-i / (dim / 4))``,
    ``i = 0 .. dim / 4 - 1`` (MAE / I-JEPA).
    """
    if dim % 4:
        raise ValueError(f"dim: must be divisible by 4, got {dim}")
    omega = 1.0 / 10000 ** (np.arange(dim // 4, dtype=np.float64) / (dim / 4))
    rows, cols = np.meshgrid(np.arange(grid), np.arange(grid), indexing="ij")

    def one(pos):
        angles = pos.reshape(-1, 1) * omega
        return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)

    return torch.from_numpy(np.concatenate([one(rows), one(cols)], axis=1)).float()


def patchify(images: torch.Tensor, patch_size: int) -> torch.Tensor:
    """Images (B, C, S, S) -> patches (B, (S / p)^2, C p p), row-major over the patch grid,
    each patch flattened channel-first (the layout of a stride-``p`` convolution's kernel)."""
    B, C, S, _ = images.shape
    g = S // patch_size
    x = images.reshape(B, C, g, patch_size, g, patch_size).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(B, g * g, C * patch_size * patch_size)


def gather_tokens(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Rows ``index`` (B, k) of tokens ``x`` (B, N, D) -> (B, k, D)."""
    return torch.gather(x, 1, index.unsqueeze(-1).expand(-1, -1, x.shape[-1]))


class Block(nn.Module):
    """Pre-norm transformer block: ``x + attn(norm(x))``, then ``x + mlp(norm(x))``."""

    def __init__(self, width: int, heads: int, mlp_ratio: float):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        hidden = int(width * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, N, D = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(B, N, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, N, D)
        x = x + self.proj(a)
        return x + self.mlp(self.norm2(x))


class Encoder(nn.Module):
    """ViT encoder: images (B, 3, S, S) -> patch tokens (B, N or len(keep), width)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.patch = nn.Linear(3 * cfg.patch_size ** 2, cfg.width)
        self.register_buffer("pos", sincos_2d(cfg.width, cfg.grid), persistent=False)
        self.blocks = nn.ModuleList(Block(cfg.width, cfg.heads, cfg.mlp_ratio) for _ in range(cfg.depth))
        self.norm = nn.LayerNorm(cfg.width)

    def forward(self, images: torch.Tensor, keep: torch.Tensor | None = None) -> torch.Tensor:
        x = self.patch(patchify(images, self.cfg.patch_size)) + self.pos
        if keep is not None:
            x = gather_tokens(x, keep)
        for block in self.blocks:
            x = block(x)
        return self.norm(x)

    def pool(self, images: torch.Tensor) -> torch.Tensor:
        """The evaluated embedding: mean over the patch tokens of the full image (B, width)."""
        return self(images).mean(dim=1)


class Predictor(nn.Module):
    """Predicts target-block tokens from context tokens and the target positions."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.embed = nn.Linear(cfg.width, cfg.predictor_width)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, cfg.predictor_width))
        self.register_buffer("pos", sincos_2d(cfg.predictor_width, cfg.grid), persistent=False)
        self.blocks = nn.ModuleList(Block(cfg.predictor_width, cfg.predictor_heads, cfg.mlp_ratio)
                                    for _ in range(cfg.predictor_depth))
        self.norm = nn.LayerNorm(cfg.predictor_width)
        self.out = nn.Linear(cfg.predictor_width, cfg.width)

    def forward(self, context: torch.Tensor, context_index: torch.Tensor,
                target_index: torch.Tensor) -> torch.Tensor:
        """``context`` (B, n_c, width) at ``context_index`` (B, n_c); ``target_index`` (B, T, n_t)
        -> predictions (B, T, n_t, width)."""
        B, T, n_t = target_index.shape
        n_c = context.shape[1]
        x = self.embed(context) + self.pos[context_index]
        m = self.mask_token + self.pos[target_index.reshape(B, T * n_t)]
        x = torch.cat([x, m], dim=1)
        for block in self.blocks:
            x = block(x)
        return self.out(self.norm(x[:, n_c:])).reshape(B, T, n_t, -1)


class Projector(nn.Module):
    """``Linear(width, hidden) - BatchNorm - GELU - Linear(hidden, projector_dim)``."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(cfg.width, cfg.projector_hidden), nn.BatchNorm1d(cfg.projector_hidden),
                                 nn.GELU(), nn.Linear(cfg.projector_hidden, cfg.projector_dim))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z)


@torch.no_grad()
def init_weights(module: nn.Module, generator: torch.Generator) -> nn.Module:
    """Draw every weight of ``module`` from ``generator``: linear weights and mask tokens
    truncated normal (std 0.02, cut at +-2 std), biases 0, norm scales 1."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02, a=-0.04, b=0.04, generator=generator)
            if m.bias is not None:
                m.bias.zero_()
        elif isinstance(m, (nn.LayerNorm, nn.BatchNorm1d)):
            m.weight.fill_(1.0)
            m.bias.zero_()
        if isinstance(m, Predictor):
            nn.init.trunc_normal_(m.mask_token, std=0.02, a=-0.04, b=0.04, generator=generator)
    return module
