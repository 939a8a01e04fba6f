"""Symmetric contrastive (CLIP) loss at nested Matryoshka prefixes.

For unit rows ``a`` (images) and ``b`` (texts) of a batch, where row ``i`` of each is a
matching pair, the logits are ``s * a @ b.T`` with ``s`` the logit scale (inverse
temperature). The CLIP loss is the mean of the cross-entropy of each row over its
candidates (image→text) and of each column (text→image), the diagonal being the target.
The Matryoshka loss re-normalises the first ``k`` coordinates of both sides for each
``k`` in ``dims`` and averages the CLIP losses, so every prefix is itself an embedding.
"""

from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F

DIMS: tuple[int, ...] = (768, 512, 256, 128)


def clip_loss(images: torch.Tensor, texts: torch.Tensor, logit_scale: torch.Tensor | float) -> torch.Tensor:
    """Symmetric InfoNCE of matching rows; inputs are re-normalised, ``logit_scale`` is ``s`` (not its log)."""
    if images.shape != texts.shape or images.ndim != 2:
        raise ValueError(
            f"images, texts: expected equal (n, d) shapes, got {tuple(images.shape)} and {tuple(texts.shape)}"
        )
    logits = logit_scale * F.normalize(images, dim=-1) @ F.normalize(texts, dim=-1).T
    target = torch.arange(len(logits), device=logits.device)
    return (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target)) / 2


def matryoshka_loss(
    images: torch.Tensor, texts: torch.Tensor, logit_scale: torch.Tensor | float, dims: Sequence[int] = DIMS
) -> torch.Tensor:
    """Mean of :func:`clip_loss` over the prefixes ``[:, :k]`` for ``k`` in ``dims``."""
    d = images.shape[-1]
    if not dims or any(isinstance(k, bool) or not 1 <= int(k) <= d for k in dims):
        raise ValueError(f"dims: expected prefix lengths in 1..{d}, got {list(dims)}")
    return torch.stack([clip_loss(images[:, :k], texts[:, :k], logit_scale) for k in dims]).mean()
