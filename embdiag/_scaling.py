"""Exact rescaling by powers of two, so that squares neither overflow nor underflow.

Multiplying by ``2**-e`` changes no bit of a float's significand, so a computation on
rescaled data gives the rescaled result of the same computation on the original data
whenever the original did not over- or underflow; the callers rescale only data that
would (as BLAS ``nrm2`` scales before squaring).
"""

from __future__ import annotations

import numpy as np

#: Largest magnitudes used unscaled: squares and n x d sums of squares stay far inside float64.
SAFE_MAX = 2.0**100
SAFE_MIN = 2.0**-100


def exponent(amax: float) -> int:
    """``e`` with ``amax * 2**-e`` in ``[0.5, 1)``; 0 when ``amax`` is 0 or already in the
    safe range ``[SAFE_MIN, SAFE_MAX]``."""
    if amax == 0 or SAFE_MIN <= amax <= SAFE_MAX:
        return 0
    return int(np.frexp(amax)[1])


def unit_scale_rows(X: np.ndarray) -> np.ndarray:
    """``X`` with each row multiplied by the power of two that brings its largest
    magnitude into ``[0.5, 1)`` (zero rows unchanged); same dtype."""
    amax = np.abs(X).max(axis=1)
    e = np.frexp(amax)[1]
    return np.ldexp(X, -e[:, None].astype(np.int32)).astype(X.dtype, copy=False)


def unsafe_norms(sq_norms: np.ndarray, dtype) -> np.ndarray:
    """Rows whose squared norm, summed in ``dtype``, over- or underflowed (or is NaN)."""
    info = np.finfo(dtype)
    return ~(sq_norms >= info.tiny / info.eps) | ~np.isfinite(sq_norms)


def unit_rows(X: np.ndarray) -> np.ndarray:
    """Each row of ``X`` divided by its Euclidean norm (``np.linalg.norm``), computed on the row
    rescaled by a power of two, so that no finite row over- or underflows; a row with no over-
    or underflow gets the same bits as ``x / np.linalg.norm(x)``. Zero rows give NaN: check first."""
    Y = unit_scale_rows(X)
    with np.errstate(invalid="ignore", divide="ignore"):
        return Y / np.linalg.norm(Y, axis=1, keepdims=True)
