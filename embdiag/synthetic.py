"""Synthetic matrices with a prescribed spectrum, for worked examples and tests."""

from __future__ import annotations

import numpy as np


def _orthonormal(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((n, k)))
    return q * np.sign(np.diag(r))


def matrix_with_singular_values(singular_values, n: int, *, centered: bool = True, seed: int = 0) -> np.ndarray:
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


def anisotropic_gaussian(n: int, d: int, *, decay: float = 1.0, mean_norm: float = 0.0, seed: int = 0) -> np.ndarray:
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


#: Class shares of three imbalanced label columns (like weather, scene, time of day).
CLUSTER_ATTRIBUTES = {
    "weather": (0.45, 0.2, 0.15, 0.1, 0.06, 0.04),
    "scene": (0.5, 0.2, 0.12, 0.1, 0.05, 0.03),
    "time": (0.55, 0.35, 0.1),
}


def labelled_clusters(
    n: int,
    *,
    d: int = 768,
    seed: int = 0,
    attributes=None,
    strength=(0.14, 0.15, 0.2),
    agreement: float = 0.7,
    encoder_seed: int = 12345,
):
    """Unit vectors with labels: a stand-in for cached encoder outputs.

    Each row is a shared mean direction + one class centre per attribute (scaled by
    ``strength``) + Gaussian noise with a power-law spectrum, normalized to unit length.
    The defaults give variance about 0.25, mean cosine about 0.75 and PR about 39, the
    scale of the study's validation vectors. A share ``1 - agreement`` of labels is
    redrawn from the class prior, so labels are only partly recoverable, as real
    annotations are. ``encoder_seed`` fixes the centres and basis (the "encoder"),
    ``seed`` draws the rows. Returns ``(Z, {attribute: int labels})``.
    """
    attributes = dict(attributes or CLUSTER_ATTRIBUTES)
    if len(strength) != len(attributes):
        raise ValueError(f"strength: needs one value per attribute ({len(attributes)}), got {len(strength)}")
    enc = np.random.default_rng(encoder_seed)
    mean = enc.standard_normal(d)
    mean /= np.linalg.norm(mean)
    centres = {a: enc.standard_normal((len(p), d)) / np.sqrt(d) for a, p in attributes.items()}
    rot = _orthonormal(enc, d, d)
    amplitude = np.arange(1, d + 1) ** -0.5
    amplitude *= 0.55 / np.linalg.norm(amplitude)
    rng = np.random.default_rng(seed)
    labels = {a: rng.choice(len(p), size=n, p=p) for a, p in attributes.items()}
    Z = mean + (rng.standard_normal((n, d)) * amplitude) @ rot
    for (a, lab), s in zip(labels.items(), strength):
        Z += s * centres[a][lab]
    for a, p in attributes.items():
        redraw = rng.random(n) > agreement
        labels[a][redraw] = rng.choice(len(p), size=int(redraw.sum()), p=p)
    return Z / np.linalg.norm(Z, axis=1, keepdims=True), labels


def float32_near_tie(gap: float = 1e-9, a: float = 0.6) -> np.ndarray:
    """Five unit-norm rows in 4-d where rows 1 and 2 have cosines ``a`` and ``a + gap`` with row
    0: below float32 resolution for ``gap = 1e-9``, so float32 scoring ties (and ranks row 1
    first) while float64 ranks row 2 first. Rows 3 and 4 are far from row 0."""
    b = a + gap
    return np.array(
        [
            [1.0, 0.0, 0.0, 0.0],
            [a, np.sqrt(1 - a * a), 0.0, 0.0],
            [b, 0.0, np.sqrt(1 - b * b), 0.0],
            [0.0, 0.0, 0.0, 1.0],
            [0.0, 0.3, 0.3, 1.0],
        ]
    )
