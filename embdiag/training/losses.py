"""The two training losses: latent prediction and SIGReg.

**Prediction loss** (I-JEPA): the target latents are the target branch's patch tokens of
the full image, layer-normalised over channels (no affine), taken at the target-block
positions; the loss is the smooth-L1 distance (Huber, ``beta = 1``) between predicted and
target latents, averaged over blocks, positions, channels and the batch.

**SIGReg** (LeJEPA, Balestriero & LeCun 2025, arXiv:2511.08544, as in the authors'
``lejepa`` package: ``SlicingUnivariateTest(EppsPulley())``): project the ``N x d``
embeddings ``z`` on ``K`` unit directions ``A`` (``d x K``); for each slice ``x = z a_k``
compute the Epps-Pulley statistic

    T_k = N * sum_j w_j [ (mean_i cos(t_j x_i) - phi(t_j))^2 + (mean_i sin(t_j x_i))^2 ],

the squared distance between the empirical characteristic function and that of
``N(0, 1)``, ``phi(t) = exp(-t^2 / 2)``, integrated with the trapezoid rule on 17 knots
``t_j`` evenly spaced on ``[0, 3]`` with the integrand's symmetry folded in (weights
``2 dt``, halved at both ends) and window ``exp(-t^2 / 2)``; SIGReg is the mean of
``T_k`` over the slices. Properties (tested): for standard Gaussian samples ``E[T_k]`` is
about 1.05 at any ``N`` (``sqrt(2 pi) - sqrt(2 pi / 3)`` before truncation and
quadrature); all-zero embeddings give about ``0.402 N``. Computed in float32 on the
device of ``z``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["prediction_loss", "target_latents", "random_directions", "epps_pulley", "sigreg", "KNOTS", "T_MAX"]

KNOTS = 17
T_MAX = 3.0


def target_latents(tokens: torch.Tensor) -> torch.Tensor:
    """Target tokens layer-normalised over channels (no learnable scale or shift)."""
    return F.layer_norm(tokens, tokens.shape[-1:])


def prediction_loss(predicted: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean smooth-L1 (``beta = 1``) between predicted and target latents (same shapes)."""
    if predicted.shape != target.shape:
        raise ValueError(f"predicted: shape {tuple(predicted.shape)} differs from target {tuple(target.shape)}")
    return F.smooth_l1_loss(predicted.float(), target.float(), beta=1.0)


def random_directions(d: int, k: int, generator: torch.Generator) -> torch.Tensor:
    """``d x k`` matrix of unit columns, uniform on the sphere (normalised Gaussian draws),
    on the generator's device."""
    for name, v in (("d", d), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}: expected a positive integer, got {v!r}")
    a = torch.randn(d, k, generator=generator, device=generator.device)
    return a / a.norm(dim=0, keepdim=True)


def _quadrature(device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    t = torch.linspace(0.0, T_MAX, KNOTS, dtype=torch.float32, device=device)
    dt = T_MAX / (KNOTS - 1)
    trapezoid = torch.full((KNOTS,), 2 * dt, dtype=torch.float32, device=device)
    trapezoid[[0, -1]] = dt
    phi = torch.exp(-0.5 * t.square())
    return t, phi, trapezoid * phi


def epps_pulley(x: torch.Tensor) -> torch.Tensor:
    """Epps-Pulley statistic of each column of ``x`` (N samples x K slices) -> (K,)."""
    if x.ndim != 2:
        raise ValueError(f"x: expected an N x K matrix of projections, got shape {tuple(x.shape)}")
    t, phi, weights = _quadrature(x.device)
    xt = x.float().unsqueeze(-1) * t
    err = (xt.cos().mean(0) - phi).square() + xt.sin().mean(0).square()
    return (err @ weights) * x.shape[0]


def sigreg(z: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
    """SIGReg of embeddings ``z`` (N x d) on ``directions`` (d x K unit columns): the mean
    Epps-Pulley statistic over the K slices ``z @ directions``."""
    if z.ndim != 2:
        raise ValueError(f"z: expected an N x d matrix, got shape {tuple(z.shape)}")
    if directions.ndim != 2 or directions.shape[0] != z.shape[1]:
        raise ValueError(f"directions: expected shape ({z.shape[1]}, K), got {tuple(directions.shape)}")
    return epps_pulley(z.float() @ directions.to(device=z.device, dtype=torch.float32)).mean()
