"""The EMA target: a momentum schedule and the in-place update, both pure and driven from outside.

``momentum_at`` rises linearly from ``start`` to ``end`` over the run (I-JEPA: 0.996 to
1.0); ``ema_update`` sets every target parameter to ``m * target + (1 - m) * online``.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["momentum_at", "ema_update"]


def momentum_at(step: int, total_steps: int, start: float = 0.996, end: float = 1.0) -> float:
    """EMA momentum after ``step`` of ``total_steps``: linear from ``start`` (step 0) to ``end``."""
    if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps < 1:
        raise ValueError(f"total_steps: expected a positive integer, got {total_steps!r}")
    if not 0 <= step <= total_steps:
        raise ValueError(f"step: expected 0..{total_steps}, got {step!r}")
    if not 0.0 <= start <= end <= 1.0:
        raise ValueError(f"start, end: expected 0 <= start <= end <= 1, got {start}, {end}")
    return start + (end - start) * step / total_steps


@torch.no_grad()
def ema_update(target: nn.Module, online: nn.Module, momentum: float) -> None:
    """``target <- momentum * target + (1 - momentum) * online``, parameter by parameter."""
    if not 0.0 <= momentum <= 1.0:
        raise ValueError(f"momentum: expected a value in [0, 1], got {momentum}")
    t = [p for p in target.parameters()]
    o = [p.detach() for p in online.parameters()]
    if len(t) != len(o) or any(a.shape != b.shape for a, b in zip(t, o)):
        raise ValueError("target: its parameters do not match those of online")
    torch._foreach_lerp_(t, o, 1.0 - momentum)
