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
their eigenvectors. Each chunk's products run on one BLAS thread (chunks in parallel
threads, added in chunk order), so a result does not depend on the core count; :func:`summary`
adds its sums per block of rows and then over the blocks, so that blocks can be computed
anywhere (one Ray task each, :func:`embdiag.report.sharded.block_mapper`) with the same
result bit for bit. RankMe and participation ratio agree with ``np.linalg.svd`` in float64
to a relative 1e-9 on isotropic, power-law (condition number 1e5), rank-deficient and
common-offset matrices, float32 or float64 (``tests/metrics/test_geometry.py``; their
time and error at 100,000 x 768: ``benchmarks/bench_metrics.py``).

Extreme magnitudes: a ``Z`` whose largest entry lies outside ``[2**-100, 2**100]`` is
scaled by a power of two (exact) before any square is formed, so the scale-invariant
measures (mean cosine, RankMe, participation ratio) are computed as accurately as for
unit-scale data; variances and singular values are scaled back, and a value outside the
float64 range raises ``ValueError``. Ordinary data is never rescaled.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._blas import single_thread
from .._mapped import release_rows
from .._scaling import exponent, unit_scale_rows, unsafe_norms
from .._validate import as_matrix, check_int, check_number

__all__ = [
    "total_variance",
    "mean_cosine",
    "rankme",
    "participation_ratio",
    "singular_values",
    "covariance_eigenvalues",
    "summary",
    "blocks",
    "BLOCK_ROWS",
]

_CHUNK_ELEMENTS = 1 << 21  # float64 chunk of about 16 MB
#: Rows per block of :func:`summary`'s sums (one Ray task each on a cluster).
BLOCK_ROWS = 1_000_000
_WORKERS = max(1, min(8, os.cpu_count() or 1))  # threads of a block run here (one BLAS thread each)


def _chunks(n: int, d: int):
    # The chunk size changes memory use and the order of float64 sums, never a result (tests
    # force 64-row chunks); mutants of its constants (64, max(d, 1)) are equivalent.
    step = max(64, _CHUNK_ELEMENTS // max(d, 1))
    for start in range(0, n, step):
        yield start, min(n, start + step)


def _check(Z, min_rows: int = 1, amax: float | None = None) -> tuple[np.ndarray, int]:
    """``Z`` checked, and the exponent ``e`` of :func:`embdiag._scaling.exponent`: every
    chunk is read as ``Z * 2**-e`` (the min/max pass doubles as the finiteness check;
    ``amax``, the largest magnitude when already known, replaces it)."""
    # Equivalent mutants: finite=True here (or dropped) raises the very error of the second
    # call below, one pass earlier (finite=None is falsy, as False); min_rows dropped from the
    # second call changes nothing, as the first call has already checked it.
    Z = as_matrix(Z, "Z", min_rows=min_rows, finite=False)
    if amax is None:  # (any ``workers``: unused by _block_amax, so mutants of it are equivalent)
        amax = _block_amax(Z, 0, len(Z), workers=1)
    if not np.isfinite(amax):
        as_matrix(Z, "Z", min_rows=min_rows)  # raises, counting the bad rows
    return Z, exponent(amax)


def _block_amax(Z: np.ndarray, a: int, b: int, workers: int) -> float:
    """The largest magnitude in rows ``a:b`` (NaN if any entry is NaN), read chunk by chunk on
    one thread (``workers``, which every block function of ``map_blocks`` takes, is unused)."""
    out = []
    for s, t in _chunks(b - a, Z.shape[1]):
        Y = Z[a + s : a + t]
        out += [Y.max(), -Y.min()]
        release_rows(Z, a + s, a + t)  # (mutants releasing more or other pages: memory only)
    return float(np.max(out))


def _read(Z: np.ndarray, a: int, b: int, e: int) -> np.ndarray:
    """Rows ``a:b`` of ``Z * 2**-e`` as float64 (a memory map's pages of them are given back)."""
    # Equivalent mutants: astype(None) is astype(float64); ldexp(Y, 0) is exactly Y.
    Y = Z[a:b].astype(np.float64)
    release_rows(Z, a, b)  # (mutants releasing more or other pages: memory only)
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


def blocks(n: int, block_rows: int = BLOCK_ROWS) -> list[tuple[int, int]]:
    """The row spans ``(start, stop)`` of at most ``block_rows`` rows that :func:`summary`
    sums separately (each over its own row chunks) before adding the spans' sums in order.

    Examples
    --------
    >>> blocks(5, block_rows=2)
    [(0, 2), (2, 4), (4, 5)]
    """
    block_rows = check_int(block_rows, "block_rows", minimum=1)
    return [(a, min(n, a + block_rows)) for a in range(0, n, block_rows)]


def _here(Z: np.ndarray):
    """``map_blocks`` of this process: the blocks one after another, each on every core."""

    def map_blocks(fn, spans, *args):
        return [fn(Z, a, b, *args, workers=_WORKERS) for a, b in spans]

    return map_blocks


def _total(parts):
    """The sum of ``parts`` (tuples of arrays) added in order, one position of the tuples at a time."""
    parts = iter(parts)
    total = [x.copy() for x in next(parts)]
    for p in parts:
        for t, x in zip(total, p):
            t += x
    return total


def _over_chunks(fn, Z: np.ndarray, a: int, b: int, args, workers: int):
    """``fn(Z, s, t, *args)`` for the chunks ``s:t`` of rows ``a:b``, totalled in chunk order.
    Each chunk runs on one BLAS thread, so the total does not depend on ``workers``."""
    spans = [(a + s, a + t) for s, t in _chunks(b - a, Z.shape[1])]
    # Equivalent mutants: when to use threads, and how many, changes time only.
    with single_thread():
        if workers < 2 or len(spans) < 2:
            return _total(fn(Z, s, t, *args) for s, t in spans)
        with ThreadPoolExecutor(min(workers, len(spans))) as pool:
            return _total(pool.map(lambda st: fn(Z, *st, *args), spans))


def _chunk_moments(Z: np.ndarray, a: int, b: int, c: np.ndarray, e: int, unit: bool):
    """Gram ``Y^T Y`` and ``sum(Y)`` of the shifted rows ``Y = Z[a:b] * 2**-e - c``, and the
    sum of the unit rows of ``Z[a:b]`` (zeros unless ``unit``)."""
    Y = _read(Z, a, b, e) - c
    u = _unit_sum(Z, a, b) if unit else np.zeros(Z.shape[1])
    return Y.T @ Y, Y.sum(axis=0), u  # numpy dispatches A.T @ A to BLAS syrk


def _block_moments(Z: np.ndarray, a: int, b: int, c: np.ndarray, e: int, unit: bool, workers: int):
    """:func:`_chunk_moments` totalled over the chunks of rows ``a:b`` (one block)."""
    return _over_chunks(_chunk_moments, Z, a, b, (c, e, unit), workers)


def _scatter(Z: np.ndarray, e: int, spans, map_blocks, unit: bool):
    """One float64 pass: Gram ``Y^T Y`` of the shifted rows ``Y = Z - c``, ``sum(Y)`` and the sum
    of the unit rows, each totalled per block of ``spans`` and then over the blocks in order.

    ``c`` is the mean of the first chunk, so ``Y`` is nearly centered and neither the
    centered nor the uncentered Gram suffers cancellation when rebuilt from it.
    """
    n, d = Z.shape
    first = next(_chunks(n, d))
    # Both branches give the same column means when e == 0 (the else only saves a float64
    # copy), so a mutant always taking the first is equivalent.
    c = _read(Z, *first, e).mean(axis=0) if e else Z[first[0] : first[1]].mean(axis=0, dtype=np.float64)
    G, s, u = _total(map_blocks(_block_moments, spans, c, e, unit))
    return c, s, G, u


_REFINE_BELOW = 1e-12  # eigenvalues below this share of the largest are recomputed


def _chunk_projected(Z: np.ndarray, a: int, b: int, shift, e: int, V: np.ndarray, complement: bool):
    """Gram of the rows ``R = Z[a:b] * 2**-e - shift`` projected on ``V``'s columns (``R V``), or
    with them projected out (``R - (R V) V^T``) when ``complement``."""
    R = _read(Z, a, b, e) - shift
    P = R - (R @ V) @ V.T if complement else R @ V
    return (P.T @ P,)


def _block_projected(Z, a, b, shift, e, V, complement, workers: int):
    """:func:`_chunk_projected` totalled over the chunks of rows ``a:b``."""
    return _over_chunks(_chunk_projected, Z, a, b, (shift, e, V, complement), workers)


def _refined_eigvals(G: np.ndarray, projected_gram, keep: int) -> np.ndarray:
    """Descending eigenvalues of the Gram ``G = sum R^T R`` of the data's rows (clipped at 0).

    A float64 Gram fixes each eigenvalue only to about 1e-16 x the largest, so singular
    values below ~1e-8 x the largest come out as rounding noise. When eigenvalues fall
    below ``_REFINE_BELOW`` x the largest (numerically rank-deficient data), they are
    recomputed from the data itself by ``projected_gram(V, complement)``: projected onto
    their eigenvectors ``Vm`` when few, otherwise with the large directions ``Vt``
    projected out, ``R - (R Vt) Vt^T``. Either way the new Gram has a small dynamic range,
    so its eigenvalues are accurate to ~1e-16 x the largest *small* eigenvalue.
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
    # Equivalent mutants: either projection gives the m small eigenvalues (the complement only
    # saves work when m > r), and None is falsy like False.
    H = (
        projected_gram(np.ascontiguousarray(V[:, r:]), False)
        if m <= r
        else projected_gram(np.ascontiguousarray(V[:, :r]), True)
    )
    with single_thread():
        small = np.linalg.eigvalsh(H)[::-1][:m]
    lam[r:] = small
    return np.clip(np.sort(lam)[::-1][:keep], 0.0, None)


def _projector(shift, e: int, spans, map_blocks):
    """``projected_gram`` of :func:`_refined_eigvals` for the rows of ``Z * 2**-e - shift``
    (``Z``: the matrix that ``map_blocks`` maps over)."""

    def projected_gram(V, complement):
        return _total(map_blocks(_block_projected, spans, shift, e, V, complement))[0]

    return projected_gram


def _small_n_spectrum(Z: np.ndarray, centered: bool, e: int) -> np.ndarray:
    """Eigenvalues of ``X^T X`` via the n x n Gram ``X X^T`` (for n < d)."""
    # Equivalent mutants: _read(Z, None, ...) or (..., None, e) read the same rows (a slice
    # bound of None); any ``keep`` >= n (or None) keeps all n eigenvalues of an n x n Gram.
    X = _read(Z, 0, len(Z), e)
    if centered:
        X -= X.mean(axis=0)

    def projected_gram(V, complement):
        P = X.T - (X.T @ V) @ V.T if complement else X.T @ V
        return P.T @ P

    return _refined_eigvals(X @ X.T, projected_gram, X.shape[0])


def _spectra(
    Z: np.ndarray,
    e: int,
    raw: bool = True,
    centered: bool = True,
    unit: bool = False,
    block_rows: int = BLOCK_ROWS,
    map_blocks=None,
):
    """Eigenvalues of ``Y^T Y`` and of the centered scatter ``X^T X`` of ``Y = Z * 2**-e``
    (``min(n, d)`` each), and with ``unit`` the sum of the unit rows of ``Z`` (else zeros)."""
    n, d = Z.shape
    # Equivalent mutants: ``n <= d`` sends n == d to the n x n Gram, the same size and the same
    # eigenvalues; computing a spectrum nobody asked for (``raw or True``, a caller's
    # raw=True / centered=True or the defaults) only costs time, and falsy None acts as False;
    # an unrequested spectrum returned as "" instead of None is never read; keep=None keeps
    # all d eigenvalues of a d x d Gram, as keep=d does.
    if n < d:
        return (
            _small_n_spectrum(Z, False, e) if raw else None,
            _small_n_spectrum(Z, True, e) if centered else None,
            _unit_total(Z) if unit else np.zeros(d),
        )
    spans = blocks(n, block_rows)
    map_blocks = map_blocks or _here(Z)
    c, s, G, u = _scatter(Z, e, spans, map_blocks, unit)
    lam_raw = lam_c = None
    if raw:
        G_raw = G + np.outer(s, c) + np.outer(c, s) + n * np.outer(c, c)
        lam_raw = _refined_eigvals(G_raw, _projector(0.0, e, spans, map_blocks), d)
    if centered:
        lam_c = _refined_eigvals(G - np.outer(s, s) / n, _projector(c + s / n, e, spans, map_blocks), d)
    return lam_raw, lam_c, u


def singular_values(Z) -> np.ndarray:
    """Singular values of the raw (uncentered) ``Z``, descending, ``min(n, d)`` of them.

    Square roots of the eigenvalues of ``Z^T Z`` (``Z Z^T`` when n < d), accumulated in
    float64; eigenvalues below 1e-12 x the largest are recomputed from the data projected
    on their eigenvectors, so singular values are accurate to about 1e-15 x the largest.

    Examples
    --------
    >>> np.round(singular_values(np.diag([3.0, 1.0])), 4)
    array([3., 1.])
    >>> singular_values(np.ones((2, 5))).shape  # min(n, d) values
    (2,)
    """
    Z, e = _check(Z)
    # centered=False only skips the centered spectrum (mutants computing it are equivalent)
    return _unscale(np.sqrt(_spectra(Z, e, centered=False)[0]), e, 1, "singular values")


def covariance_eigenvalues(Z) -> np.ndarray:
    """Eigenvalues of the centered covariance ``X^T X / (n - 1)``, descending.

    ``X`` is ``Z`` minus its column means. Returns ``min(n, d)`` values (at most
    ``n - 1`` of them can be nonzero). Needs ``n >= 2``.

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    >>> np.round(covariance_eigenvalues(Z), 4)
    array([2.6667, 0.6667])
    """
    Z, e = _check(Z, min_rows=2)
    # raw=False only skips the raw spectrum (mutants computing it are equivalent, see _spectra)
    return _unscale(_spectra(Z, e, raw=False)[1] / (len(Z) - 1), e, 2, "covariance eigenvalues")


def total_variance(Z) -> float:
    """Total variance: trace of the centered covariance (ddof=1), i.e. the sum of
    per-dimension variances. Scales by ``c**2`` under ``Z -> c Z``; a common offset
    leaves it unchanged. Needs ``n >= 2``.

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    >>> round(total_variance(Z), 4), round(total_variance(2 * Z), 4), round(total_variance(Z + 5), 4)
    (3.3333, 13.3333, 3.3333)
    """
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


def _unit_sum(Z: np.ndarray, a: int, b: int) -> np.ndarray:
    """Sum of the unit rows of ``Z[a:b]`` in float64 (rows whose squares would over- or
    underflow are first scaled by a power of two); a zero row raises ``ValueError``."""
    # Equivalent mutant: astype(None) is astype(float64).
    Y = Z[a:b].astype(np.float64)
    release_rows(Z, a, b)  # (mutants releasing more or other pages: memory only)
    with np.errstate(over="ignore"):  # such rows are rescaled below
        norms = np.linalg.norm(Y, axis=1)
    bad = np.flatnonzero(unsafe_norms(norms * norms, np.float64))
    if bad.size:
        Y[bad] = unit_scale_rows(Y[bad])
        norms[bad] = np.linalg.norm(Y[bad], axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(f"Z: zero-norm row at index {a + int(zero[0])}; cosine is undefined")
    return (Y / norms[:, None]).sum(axis=0)


def _unit_total(Z: np.ndarray) -> np.ndarray:
    """Sum of the unit rows of ``Z``, chunk by chunk."""
    # Equivalent mutant: ``total -=`` flips the sum's sign, not the squared norm that is read.
    total = np.zeros(Z.shape[1])
    for a, b in _chunks(*Z.shape):
        total += _unit_sum(Z, a, b)
    return total


def _mean_cosine_of(total: np.ndarray, n: int) -> float:
    return float((total @ total - n) / (n * (n - 1)))


def mean_cosine(Z) -> float:
    """Mean cosine similarity over the ``n (n - 1)`` ordered pairs of distinct rows.

    With unit rows ``u_i``: ``(||sum_i u_i||^2 - n) / (n (n - 1))``, computed in float64
    without an n x n matrix; a row whose squares would over- or underflow is first scaled
    by a power of two. Zero-norm rows raise ``ValueError``. Needs ``n >= 2``.

    Examples
    --------
    >>> mean_cosine(np.eye(3))  # orthogonal rows
    0.0
    >>> round(mean_cosine(np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0]])), 4)  # one parallel pair of three
    0.3333
    """
    Z, _ = _check(Z, min_rows=2)
    return _mean_cosine_of(_unit_total(Z), len(Z))


def _check_eps(eps) -> float:
    eps = check_number(eps, "eps")
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

    Examples
    --------
    >>> round(rankme(np.eye(3)), 4), round(rankme(np.ones((4, 2))), 4)
    (3.0, 1.0)
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

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    >>> round(participation_ratio(Z), 4), round(participation_ratio(Z + 5), 4)
    (1.4706, 1.4706)
    >>> round(participation_ratio(np.eye(3)), 4)  # centring leaves n - 1 = 2 equal directions
    2.0
    """
    Z, e = _check(Z, min_rows=2)
    # The ratio is invariant to a positive factor on all eigenvalues, and _pr_from_eig
    # normalizes by a power of two anyway: mutants dividing by n + 1 or multiplying by n - 1
    # are equivalent (n - 2 is not: zero at n = 2), as are those computing the raw spectrum too.
    return _pr_from_eig(_spectra(Z, e, raw=False)[1] / (len(Z) - 1))


def summary(Z, eps: float = 1e-7, *, block_rows: int = BLOCK_ROWS, map_blocks=None) -> dict:
    """All four measures of :mod:`embdiag.metrics.geometry` from one float64 pass over ``Z``
    (one Gram for both spectra and the sum of unit rows), after a pass for the largest
    magnitude (and, for numerically rank-deficient data, one more per refined spectrum).

    Returns ``{"total_variance", "mean_cosine", "rankme", "participation_ratio"}`` with
    the same definitions as the individual functions (``eps`` is RankMe's). Needs
    ``n >= 2`` and nonzero rows.

    Sums over rows are taken per block of ``block_rows`` rows (:func:`blocks`), then added
    in block order. ``map_blocks(fn, spans, *args)`` must return ``[fn(Z, a, b, *args) for
    (a, b) in spans]``; by default that runs here, each block on every core, and
    :func:`embdiag.report.sharded.block_mapper` runs one Ray task per block. Each chunk's
    sums are computed on one BLAS thread and added in a fixed order, so the result is the
    same bit for bit wherever the blocks run (for n <= ``block_rows`` it is that of one
    pass over ``Z``).

    Examples
    --------
    >>> Z = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    >>> {name: round(value, 4) for name, value in summary(Z).items()}
    {'total_variance': 3.3333, 'mean_cosine': -0.3333, 'rankme': 1.8899, 'participation_ratio': 1.4706}
    """
    # Equivalent mutants: as in _check (finite flags; min_rows, which _check tests again).
    Z = as_matrix(Z, "Z", min_rows=2, finite=False)
    spans = blocks(len(Z), block_rows)
    map_blocks = map_blocks or _here(Z)
    Z, e = _check(Z, min_rows=2, amax=float(np.max(map_blocks(_block_amax, spans))))
    eps = _check_eps(eps)
    lam_raw, lam_c, u = _spectra(Z, e, unit=True, block_rows=block_rows, map_blocks=map_blocks)
    lam_c = lam_c / (len(Z) - 1)
    return {
        "total_variance": float(_unscale(lam_c.sum(), e, 2, "variances")),
        "mean_cosine": _mean_cosine_of(u, len(Z)),
        "rankme": _rankme_from_sv(np.sqrt(lam_raw), eps),
        "participation_ratio": _pr_from_eig(lam_c),
    }
