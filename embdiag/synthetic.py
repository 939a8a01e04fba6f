"""Synthetic matrices with a prescribed spectrum, for worked examples and tests."""

from __future__ import annotations

import numpy as np


def _orthonormal(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((n, k)))
    return q * np.sign(np.diag(r))


def matrix_with_singular_values(singular_values, n: int, *, centered: bool = True,
                                seed: int = 0) -> np.ndarray:
    """An n x d float64 matrix whose singular values are exactly ``singular_values``.

    d = len(singular_values). With ``centered=True`` the left singular vectors are
    orthogonal to the all-ones vector, so every column has mean zero and the raw and
    centered spectra coincide (as in the rank note's worked example). Needs n > d.
    """
    s = np.asarray(singular_values, dtype=np.float64)
    d = s.size
    if s.ndim != 1 or d == 0 or (s < 0).any():
        raise ValueError("singular_values: expected a non-empty 1-D array of non-negative values")
    if n <= d + int(centered):
        raise ValueError(f"n: must exceed the number of singular values ({d}), got {n}")
    rng = np.random.default_rng(seed)
    raw = rng.standard_normal((n, d))
    if centered:
        raw -= raw.mean(axis=0)  # columns orthogonal to the all-ones vector
    u = np.linalg.qr(raw)[0]
    v = _orthonormal(rng, d, d)
    return (u * s) @ v.T


def anisotropic_gaussian(n: int, d: int, *, decay: float = 1.0, mean_norm: float = 0.0,
                         seed: int = 0) -> np.ndarray:
    """n x d Gaussian vectors with covariance eigenvalues proportional to ``i**-decay``
    (i = 1..d, in a random orthonormal basis), shifted by a random mean of norm ``mean_norm``."""
    if n < 2 or d < 1:
        raise ValueError(f"n, d: need n >= 2 and d >= 1, got n={n}, d={d}")
    rng = np.random.default_rng(seed)
    scales = np.arange(1, d + 1, dtype=np.float64) ** (-decay / 2)
    basis = _orthonormal(rng, d, d)
    Z = (rng.standard_normal((n, d)) * scales) @ basis.T
    mean = rng.standard_normal(d)
    return Z + mean_norm * mean / np.linalg.norm(mean)
