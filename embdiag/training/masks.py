"""I-JEPA multi-block masks on the patch grid, sampled on the data side from (seed, step).

Per batch (following I-JEPA's ``MaskCollator``): one target block size is drawn (a share
``target_scale`` of the patches with aspect ratio in ``target_aspect``) and one context
block size (share ``context_scale``, square); then, per image, ``n_targets`` target
blocks and one context block are placed uniformly on the grid and the target patches are
removed from the context block. Blocks may span the whole grid (I-JEPA keeps them one
patch smaller, which leaves no usable context on a 4 x 4 grid). Placements leaving fewer
than ``min_context`` context patches are redrawn. Every target block of a batch has the
same size; context sets are cut to the batch's smallest by a random subset, so index
tensors stack. Patch ``(row, col)`` has index ``row * grid + col``.

All draws come from :func:`~embdiag.training.seeding.rng` ``(seed, "masks", step)``: the
masks of any step are reproducible without the steps before it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .seeding import rng

__all__ = ["MaskConfig", "Masks", "sample_masks"]

_MAX_TRIES = 100


def _interval(name: str, value, low: float, high: float) -> tuple[float, float]:
    a, b = (float(v) for v in value)
    if not low <= a <= b <= high:
        raise ValueError(f"{name}: expected an interval {low} <= a <= b <= {high}, got {tuple(value)!r}")
    return a, b


@dataclass(frozen=True)
class MaskConfig:
    """Multi-block mask parameters (shares of the patch grid; aspect ratio = height / width)."""

    n_targets: int = 4
    target_scale: tuple[float, float] = (0.15, 0.2)
    target_aspect: tuple[float, float] = (0.75, 1.5)
    context_scale: tuple[float, float] = (0.85, 1.0)
    min_context: int = 4

    def __post_init__(self):
        for name in ("n_targets", "min_context"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected a positive integer, got {v!r}")
        object.__setattr__(self, "target_scale", _interval("target_scale", self.target_scale, 0.0, 1.0))
        object.__setattr__(self, "context_scale", _interval("context_scale", self.context_scale, 0.0, 1.0))
        object.__setattr__(self, "target_aspect", _interval("target_aspect", self.target_aspect, 1e-3, 1e3))


class Masks(NamedTuple):
    """Patch indices of one batch: ``context`` (B, n_context), sorted, disjoint from every
    target; ``targets`` (B, n_targets, patches per target block)."""

    context: np.ndarray
    targets: np.ndarray


def _block_size(r: np.random.Generator, grid: int, scale, aspect) -> tuple[int, int]:
    share = r.uniform(*scale)
    ratio = r.uniform(*aspect)
    n = max(1, int(grid * grid * share))
    h = min(grid, max(1, round(math.sqrt(n * ratio))))
    w = min(grid, max(1, round(math.sqrt(n / ratio))))
    return h, w


def _place(r: np.random.Generator, grid: int, h: int, w: int, shape: tuple) -> np.ndarray:
    """Patch indices of ``shape`` uniformly placed h x w blocks -> shape + (h * w,)."""
    top = r.integers(0, grid - h + 1, size=shape)[..., None]
    left = r.integers(0, grid - w + 1, size=shape)[..., None]
    rows, cols = np.divmod(np.arange(h * w), w)
    return (top + rows) * grid + left + cols


def sample_masks(config: MaskConfig, grid: int, batch_size: int, seed: int, step: int) -> Masks:
    """Context and target patch indices for batch ``step`` of run ``seed`` on a ``grid`` x ``grid`` grid."""
    if isinstance(grid, bool) or not isinstance(grid, int) or grid < 1:
        raise ValueError(f"grid: expected a positive integer, got {grid!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size: expected a positive integer, got {batch_size!r}")
    r = rng(seed, "masks", step)
    th, tw = _block_size(r, grid, config.target_scale, config.target_aspect)
    ch, cw = _block_size(r, grid, config.context_scale, (1.0, 1.0))
    n = grid * grid
    targets = np.empty((batch_size, config.n_targets, th * tw), np.int64)
    context = np.zeros((batch_size, n), bool)
    todo = np.arange(batch_size)
    for _ in range(_MAX_TRIES):
        blocks = _place(r, grid, th, tw, (len(todo), config.n_targets))
        keep = np.zeros((len(todo), n), bool)
        np.put_along_axis(keep, _place(r, grid, ch, cw, (len(todo),)), True, axis=1)
        np.put_along_axis(keep, blocks.reshape(len(todo), -1), False, axis=1)
        targets[todo], context[todo] = blocks, keep
        todo = todo[keep.sum(axis=1) < config.min_context]
        if not len(todo):
            break
    else:
        raise ValueError(f"config: {config.n_targets} target blocks of {th}x{tw} patches leave fewer than "
                         f"min_context={config.min_context} context patches on a {grid}x{grid} grid")
    n_context = int(context.sum(axis=1).min())
    keys = np.where(context, r.random(context.shape), -1.0)          # random subset of each context set
    chosen = np.sort(np.argsort(-keys, axis=1, kind="stable")[:, :n_context], axis=1)
    return Masks(chosen, targets)
