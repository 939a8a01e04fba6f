"""Label-free geometry of a set of embeddings: spread, direction, spectral breadth.

``Z`` is always an ``n x d`` matrix whose rows are embeddings. Every function reads
``Z`` in row chunks and accumulates in float64, so a float32/float64 ``Z`` (including an
``np.memmap``) is never copied whole (integer and float16 input is converted to float32
first).

Spectra come from a d x d Gram matrix (n x n when ``n < d``) accumulated in float64
over row chunks (BLAS syrk), shifted by the mean of the first chunk so that neither the
centered nor the raw Gram suffers cancellation, then ``eigvalsh``. Eigenvalues below
1e-12 x the largest (numerically rank-deficient data, where a Gram only resolves
singular values to ~1e-8 x the largest) are recomputed from the data projected on
their eigenvectors. Measured on 100,000 x 768 float32 (2-core EPYC, quiet): about 1.0 s
per spectrum and 1.3-1.4 s for :func:`summary` (a float64 SVD takes ~4.5 s); relative
error of RankMe and participation ratio versus ``np.linalg.svd`` in float64 at most
~2e-12 on isotropic, power-law (condition number 1e5), rank-8, rank-3 + offset and
common-offset matrices (``benchmarks/bench_metrics.py``, ``tests/metrics/test_geometry.py``).
A float32 Gram is about twice as fast, but its eigenvalue error of ~1e-7 x the largest
eigenvalue puts RankMe off by 1e-3 to 1e-2 on collapsed spectra, so it is not used.

Extreme magnitudes: a ``Z`` whose largest entry lies outside ``[2**-100, 2**100]`` is
scaled by a power of two (exact) before any square is formed, so the scale-invariant
measures (mean cosine, RankMe, participation ratio) are computed as accurately as for
unit-scale data; variances and singular values are scaled back, and a value outside the
float64 range raises ``ValueError``. Ordinary data is never rescaled.
"""

from __future__ import annotations

import numpy as np

from .._blas import single_thread
from .._scaling import exponent, unit_scale_rows, unsafe_norms
from .._validate import as_matrix

__all__ = [
    "total_variance",
    "mean_cosine",
    "rankme",
    "participation_ratio",
    "singular_values",
    "covariance_eigenvalues",
    "summary",
]

_CHUNK_ELEMENTS = 1 << 21  # float64 chunk of about 16 MB


def _chunks(n: int, d: int):
    # The chunk size changes memory use and the order of float64 sums, never a result (tests
    # force 64-row chunks); mutants of its constants (64, max(d, 1)) are equivalent.
    step = max(64, _CHUNK_ELEMENTS // max(d, 1))
    for start in range(0, n, step):
        yield start, min(n, start + step)


def _check(Z, min_rows: int = 1) -> tuple[np.ndarray, int]:
    """``Z`` checked, and the exponent ``e`` of :func:`embdiag._scaling.exponent`: every
    chunk is read as ``Z * 2**-e`` (the min/max pass doubles as the finiteness check)."""
    # Equivalent mutants: finite=True here (or dropped) raises the very error of the second
    # call below, one pass earlier (finite=None is falsy, as False); min_rows dropped from the
    # second call changes nothing, as the first call has already checked it.
    Z = as_matrix(Z, "Z", min_rows=min_rows, finite=False)
    amax = max(float(Z.max()), -float(Z.min()))
    if not np.isfinite(amax):
        as_matrix(Z, "Z", min_rows=min_rows)  # raises, counting the bad rows
    return Z, exponent(amax)


def _read(Z: np.ndarray, a: int, b: int, e: int) -> np.ndarray:
    """Rows ``a:b`` of ``Z * 2**-e`` as float64."""
    # Equivalent mutants: astype(None) is astype(float64); ldexp(Y, 0) is exactly Y.
    Y = Z[a:b].astype(np.float64)
    return np.ldexp(Y, -e) if e else Y


def _unscale(value, e: int, power: int, what: str):
    """``value * 2**(power * e)``; raises if that leaves the float64 range."""
    if not e:
        return value
    # under="ignore" is numpy's default: mutants dropping it differ only under a caller's
    # np.seterr(under="raise"), a mode the module does not support (harmless underflows of
    # entries far below the largest, as in _read, raise there too).
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(value, power * e)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"Z: {what} exceed the float64 range (entries up to 2**{e}); rescale Z")
    if np.max(value) > 0 and np.max(out) < np.finfo(np.float64).tiny:
        raise ValueError(f"Z: {what} fall below the float64 range (entries up to 2**{e}); rescale Z")
    return out


def _scatter(Z: np.ndarray, e: int):
    """One float64 pass: Gram ``Y^T Y`` of the shifted rows ``Y = Z - c`` and ``sum(Y)``.

    ``c`` is the mean of the first chunk, so ``Y`` is nearly centered and neither the
    centered nor the uncentered Gram suffers cancellation when rebuilt from it.
    """
    n, d = Z.shape
    first = next(_chunks(n, d))
    # Both branches give the same column means when e == 0 (the else only saves a float64
    # copy), so a mutant always taking the first is equivalent.
    c = _read(Z, *first, e).mean(axis=0) if e else Z[first[0]:first[1]].mean(axis=0, dtype=np.float64)
    G = np.zeros((d, d))
    s = np.zeros(d)
    for a, b in _chunks(n, d):
        Y = _read(Z, a, b, e) - c
        G += Y.T @ Y  # numpy dispatches A.T @ A to BLAS syrk
        s += Y.sum(axis=0)
    return c, s, G


_REFINE_BELOW = 1e-12  # eigenvalues below this share of the largest are recomputed


def _refined_eigvals(G: np.ndarray, rows, keep: int) -> np.ndarray:
    """Descending eigenvalues of the Gram ``G = sum R^T R`` over ``rows()`` (clipped at 0).

    A float64 Gram fixes each eigenvalue only to about 1e-16 x the largest, so singular
    values below ~1e-8 x the largest come out as rounding noise. When eigenvalues fall
    below ``_REFINE_BELOW`` x the largest (numerically rank-deficient data), they are
    recomputed from the data itself: projected onto their eigenvectors ``Vm`` when few,
    otherwise with the large directions ``Vt`` projected out, ``R - (R Vt) Vt^T``.
    Either way the new Gram has a small dynamic range, so its eigenvalues are accurate
    to ~1e-16 x the largest *small* eigenvalue.
    """
    with single_thread():  # LAPACK on 2 threads is slower here, and erratic under load
        lam = np.linalg.eigvalsh(G)[::-1]
    top = lam[0]
    # Equivalent mutants of this test and of ``r`` below: ``top >= 0`` and the clip's lower
    # bound matter only for a Gram with no positive eigenvalue, i.e. (being a sum of squares,
    # trace >= 0) the zero Gram of constant or zero data, whose eigenvalues are exactly 0;
    # ``<=`` for ``<`` (and ``>`` for ``>=``) differ only on exact equality with the
    # threshold, where either side is accurate; ``or`` for ``and`` always refines, which
    # with no small eigenvalue (m == 0) recomputes nothing and only costs time.
    if not (top > 0 and (lam[:keep] < _REFINE_BELOW * top).any()):
        return np.clip(lam[:keep], 0.0, None)
    with single_thread():
        lam, V = np.linalg.eigh(G)
    lam, V = lam[::-1].copy(), V[:, ::-1]
    r = int(np.count_nonzero(lam >= _REFINE_BELOW * top))
    m = len(lam) - r
    H = np.zeros((m, m)) if m <= r else np.zeros_like(G)
    Vm, Vt = V[:, r:], V[:, :r]
    for R in rows():
        P = R @ Vm if m <= r else R - (R @ Vt) @ Vt.T
        H += P.T @ P
    with single_thread():
        small = np.linalg.eigvalsh(H)[::-1][:m]
    lam[r:] = small
    return np.clip(np.sort(lam)[::-1][:keep], 0.0, None)


def _row_chunks(Z: np.ndarray, shift, e: int):
    """Callable yielding float64 row chunks of ``Z * 2**-e - shift``."""
    n, d = Z.shape

    def rows():
        for a, b in _chunks(n, d):
            yield _read(Z, a, b, e) - shift
    return rows


def _small_n_spectrum(Z: np.ndarray, centered: bool, e: int) -> np.ndarray:
    """Eigenvalues of ``X^T X`` via the n x n Gram ``X X^T`` (for n < d)."""
    # Equivalent mutants: _read(Z, None, ...) or (..., None, e) read the same rows (a slice
    # bound of None); any ``keep`` >= n (or None) keeps all n eigenvalues of an n x n Gram.
    X = _read(Z, 0, len(Z), e)
    if centered:
        X -= X.mean(axis=0)
    return _refined_eigvals(X @ X.T, lambda: iter([X.T]), X.shape[0])


def _spectra(Z: np.ndarray, e: int, raw: bool = True, centered: bool = True):
    """Eigenvalues of ``Y^T Y`` and of the centered scatter ``X^T X`` of ``Y = Z * 2**-e``
    (``min(n, d)`` each)."""
    n, d = Z.shape
    # Equivalent mutants: ``n <= d`` sends n == d to the n x n Gram, the same size and the same
    # eigenvalues; computing a spectrum nobody asked for (``raw or True``, a caller's
    # raw=True / centered=True or the defaults) only costs time, and falsy None acts as False;
    # an unrequested spectrum returned as "" instead of None is never read; keep=None keeps
    # all d eigenvalues of a d x d Gram, as keep=d does.
    if n < d:
        return (_small_n_spectrum(Z, False, e) if raw else None,
                _small_n_spectrum(Z, True, e) if centered else None)
    c, s, G = _scatter(Z, e)
    lam_raw = lam_c = None
    if raw:
        G_raw = G + np.outer(s, c) + np.outer(c, s) + n * np.outer(c, c)
        lam_raw = _refined_eigvals(G_raw, _row_chunks(Z, 0.0, e), d)
    if centered:
        lam_c = _refined_eigvals(G - np.outer(s, s) / n, _row_chunks(Z, c + s / n, e), d)
    return lam_raw, lam_c


def singular_values(Z) -> np.ndarray:
    """Singular values of the raw (uncentered) ``Z``, descending, ``min(n, d)`` of them.

    Square roots of the eigenvalues of ``Z^T Z`` (``Z Z^T`` when n < d), accumulated in
    float64; eigenvalues below 1e-12 x the largest are recomputed from the data projected
    on their eigenvectors, so singular values are accurate to about 1e-15 x the largest.
    """
    Z, e = _check(Z)
    # centered=False only skips the centered spectrum (mutants computing it are equivalent)
    return _unscale(np.sqrt(_spectra(Z, e, centered=False)[0]), e, 1, "singular values")


def covariance_eigenvalues(Z) -> np.ndarray:
    """Eigenvalues of the centered covariance ``X^T X / (n - 1)``, descending.

    ``X`` is ``Z`` minus its column means. Returns ``min(n, d)`` values (at most
    ``n - 1`` of them can be nonzero). Needs ``n >= 2``.
    """
    Z, e = _check(Z, min_rows=2)
    # raw=False only skips the raw spectrum (mutants computing it are equivalent, see _spectra)
    return _unscale(_spectra(Z, e, raw=False)[1] / (len(Z) - 1), e, 2, "covariance eigenvalues")


def total_variance(Z) -> float:
    """Total variance: trace of the centered covariance (ddof=1), i.e. the sum of
    per-dimension variances. Scales by ``c**2`` under ``Z -> c Z``; a common offset
    leaves it unchanged. Needs ``n >= 2``."""
    Z, e = _check(Z, min_rows=2)
    n, d = Z.shape
    mean = np.zeros(d)
    for a, b in _chunks(n, d):
        # same sums either way when e == 0 (the else saves a copy): `e or True` is equivalent
        mean += _read(Z, a, b, e).sum(axis=0) if e else Z[a:b].sum(axis=0, dtype=np.float64)
    mean /= n
    ss = 0.0
    for a, b in _chunks(n, d):
        Y = _read(Z, a, b, e) - mean
        ss += float(np.einsum("ij,ij->", Y, Y))  # "IJ,IJ->" is the same contraction (equivalent)
    return float(_unscale(ss / (n - 1), e, 2, "variances"))


def mean_cosine(Z) -> float:
    """Mean cosine similarity over the ``n (n - 1)`` ordered pairs of distinct rows.

    With unit rows ``u_i``: ``(||sum_i u_i||^2 - n) / (n (n - 1))``, computed in float64
    without an n x n matrix; a row whose squares would over- or underflow is first scaled
    by a power of two. Zero-norm rows raise ``ValueError``. Needs ``n >= 2``.
    """
    Z, _ = _check(Z, min_rows=2)
    n, d = Z.shape
    # Equivalent mutants: ``total -=`` flips the sum's sign, not its squared norm;
    # astype(None) is astype(float64).
    total = np.zeros(d)
    for a, b in _chunks(n, d):
        Y = Z[a:b].astype(np.float64)
        with np.errstate(over="ignore"):  # such rows are rescaled below
            norms = np.linalg.norm(Y, axis=1)
        bad = np.flatnonzero(unsafe_norms(norms * norms, np.float64))
        if bad.size:
            Y[bad] = unit_scale_rows(Y[bad])
            norms[bad] = np.linalg.norm(Y[bad], axis=1)
        zero = np.flatnonzero(norms == 0)
        if zero.size:
            raise ValueError(f"Z: zero-norm row at index {a + int(zero[0])}; cosine is undefined")
        total += (Y / norms[:, None]).sum(axis=0)
    return float((total @ total - n) / (n * (n - 1)))


def _check_eps(eps) -> float:
    eps = float(eps)
    if not (eps > 0 and np.isfinite(eps)):
        raise ValueError(f"eps: must be a positive finite number, got {eps!r}")
    return eps


def _rankme_from_sv(sigma: np.ndarray, eps: float) -> float:
    total = sigma.sum()
    if total == 0.0:
        return 1.0
    p = sigma / total + eps
    return float(np.exp(-np.sum(p * np.log(p))))


def rankme(Z, eps: float = 1e-7) -> float:
    """RankMe (Garrido et al. 2023): effective rank of the raw, uncentered ``Z``.

    With singular values ``s`` of ``Z`` (``min(n, d)`` of them), ``p = s / sum(s) + eps``
    and RankMe ``= exp(-sum p ln p)``. Invariant to positive scaling, not to a common
    offset (an offset adds one dominant direction). An exactly zero ``Z`` gives 1.
    """
    eps = _check_eps(eps)
    Z, e = _check(Z)
    # centered=False only skips the centered spectrum (mutants computing it are equivalent)
    return _rankme_from_sv(np.sqrt(_spectra(Z, e, centered=False)[0]), eps)


def _pr_from_eig(lam: np.ndarray) -> float:
    lam = np.ldexp(lam, -int(np.frexp(lam.max())[1]))  # exact: squares cannot under- or overflow
    sq = float(np.sum(lam * lam))
    if sq == 0.0:
        return 1.0
    return float(np.sum(lam) ** 2 / sq)


def participation_ratio(Z) -> float:
    """Participation ratio ``(sum l)^2 / sum l^2`` of the centered covariance eigenvalues ``l``.

    Between 1 and ``min(n - 1, d)``; invariant to positive scaling and to a common
    offset. A constant ``Z`` (zero spectrum) gives 1. Needs ``n >= 2``.
    """
    Z, e = _check(Z, min_rows=2)
    # The ratio is invariant to a positive factor on all eigenvalues, and _pr_from_eig
    # normalizes by a power of two anyway: mutants dividing by n + 1 or multiplying by n - 1
    # are equivalent (n - 2 is not: zero at n = 2), as are those computing the raw spectrum too.
    return _pr_from_eig(_spectra(Z, e, raw=False)[1] / (len(Z) - 1))


def summary(Z, eps: float = 1e-7) -> dict:
    """All four measures of :mod:`embdiag.metrics.geometry` from two float64 passes over ``Z``
    (one Gram for both spectra, one sum of unit vectors).

    Returns ``{"total_variance", "mean_cosine", "rankme", "participation_ratio"}`` with
    the same definitions as the individual functions (``eps`` is RankMe's). Needs
    ``n >= 2`` and nonzero rows.
    """
    Z, e = _check(Z, min_rows=2)
    eps = _check_eps(eps)
    lam_raw, lam_c = _spectra(Z, e)
    lam_c = lam_c / (len(Z) - 1)
    return {
        "total_variance": float(_unscale(lam_c.sum(), e, 2, "variances")),
        "mean_cosine": mean_cosine(Z),
        "rankme": _rankme_from_sv(np.sqrt(lam_raw), eps),
        "participation_ratio": _pr_from_eig(lam_c),
    }
