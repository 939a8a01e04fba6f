"""Hygiene of a set of embeddings: what is wrong with the rows before anything is measured on them.

``X`` is an ``n x d`` matrix of row vectors (an ``np.memmap`` is read in chunks of
:data:`CHUNK_ROWS` rows and never copied whole); every sum is taken in float64.

- :func:`duplicate_rows`: for each row, the first row identical to it (exact duplicates, by
  each row's bytes with ``-0.0`` read as ``0.0``, hashed and then compared byte for byte).
- :func:`row_norms` and :func:`abnormal_norms`: rows whose log-norm lies more than a declared
  bound of robust standard deviations (median and MAD) from the median log-norm.
- :func:`unit_moments` and :func:`distance_shares`: each dimension's share of the mean cosine
  distance between distinct rows; :func:`rogue_bound`: the share above which a dimension is
  called dominant ("rogue", after Timkey & van Schijndel 2021, *All bark and no bite*).
- :func:`contrast`: per query, the relative contrast (mean cosine distance to the rows over the
  distance to the nearest one; He, Kumar & Chang 2012) and the spread (standard deviation over
  mean) of its cosine distances, in closed form from :func:`unit_moments`.
- :func:`inner_product_topk`: the top-k by inner product found by a cosine search (rows augmented
  with one coordinate, Bachrach et al. 2014), to compare with the cosine top-k.
- :func:`below_quantile`: queries whose nearest-row cosine lies below a low quantile of the
  rows' own nearest-other-row cosine (out of distribution).
- :func:`islands`: the weakly connected components of a k-nearest-neighbour graph.
- :func:`median_interval`: a distribution-free interval of a median (binomial order statistics).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .._blas import single_thread
from .._mapped import release_rows
from .._scaling import unit_rows, unsafe_norms
from .._validate import as_matrix, check_int, check_number

__all__ = [
    "CHUNK_ROWS",
    "SEARCH_ROWS",
    "NORM_BOUND",
    "NORM_SCALE_FLOOR",
    "ROGUE_MULTIPLE",
    "UnitMoments",
    "duplicate_rows",
    "row_norms",
    "abnormal_norms",
    "unit_moments",
    "distance_shares",
    "rogue_bound",
    "contrast",
    "inner_product_topk",
    "below_quantile",
    "islands",
    "median_interval",
]

#: Rows read at a time.
CHUNK_ROWS = 16384
#: Rows :func:`inner_product_topk` augments and searches at a time.
SEARCH_ROWS = 131072
#: Robust z-score bound of an abnormal log-norm (Iglewicz & Hoaglin's 3.5 for the modified z-score).
NORM_BOUND = 3.5
#: Least robust standard deviation of the log-norms: norms within about 1% of each other (unit
#: rows and their float rounding) are one norm, not a spread to standardize by.
NORM_SCALE_FLOOR = 0.01
#: A dimension is dominant when its share of the mean cosine distance exceeds this many even shares (1/d).
ROGUE_MULTIPLE = 10


def _number(value, name: str, low: float, high: float = np.inf) -> float:
    value = check_number(value, name)
    if not low <= value <= high:
        raise ValueError(f"{name}: must lie in [{low}, {high}], got {value}")
    return value


def _chunks(n: int, rows: int = CHUNK_ROWS):
    for a in range(0, n, rows):
        yield a, min(n, a + rows)


def _unit(chunk: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """The rows of the float64 ``chunk`` with a finite non-zero norm, each divided by it (rows
    whose squared norm over- or underflows are first scaled by a power of two)."""
    keep = np.isfinite(norms) & (norms > 0)
    chunk, norms = chunk[keep], norms[keep]
    bad = unsafe_norms(norms * norms, np.float64)
    U = chunk / norms[:, None]
    if bad.any():
        U[bad] = unit_rows(chunk[bad])
    return U


def _read(X, a: int, b: int) -> np.ndarray:
    chunk = np.array(X[a:b])
    release_rows(X, a, b)
    return chunk


def _multipliers(words: int) -> np.ndarray:
    """Fixed random odd 64-bit multipliers, one per 32-bit word of a row."""
    rng = np.random.default_rng(20210909)
    return rng.integers(0, 2**63, size=words, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def _row_words(chunk: np.ndarray) -> np.ndarray:
    """The chunk's rows as 32-bit words, ``-0.0`` written as ``0.0`` (equal values, equal bytes)."""
    chunk = np.ascontiguousarray(chunk + chunk.dtype.type(0))  # -0.0 + 0.0 is +0.0
    if chunk.dtype.itemsize * chunk.shape[1] % 4:
        chunk = chunk.astype(np.float32)
    return chunk.view(np.uint32).reshape(len(chunk), -1)


def duplicate_rows(X) -> np.ndarray:
    """For each row of ``X``, the index of the first row identical to it (itself when none
    comes before it): rows are identical when their values are (``-0.0`` equals ``0.0``; NaN
    rows with the same bits are identical). Each row is hashed (a 64-bit multiply-add hash of
    its 32-bit words) chunk by chunk; rows sharing a hash are then compared byte for byte, so
    the answer is exact whatever the hash collides on.

    Example:
        >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, -0.0], [0.0, 1.0], [1.0, 0.0]])
        >>> duplicate_rows(X)
        array([0, 1, 0, 1, 0])
    """
    X = as_matrix(X, "X", finite=False)
    n = len(X)
    keys = np.empty(n, dtype=np.uint64)
    mult = None
    for a, b in _chunks(n):
        words = _row_words(_read(X, a, b))
        if mult is None:
            mult = _multipliers(words.shape[1])
        with np.errstate(over="ignore"):
            keys[a:b] = (words * mult).sum(axis=1, dtype=np.uint64)
    first = np.arange(n)
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    same = np.zeros(n, dtype=bool)
    same[1:] = k[1:] == k[:-1]
    shared = same.copy()
    shared[:-1] |= same[1:]  # every member of a run of equal hashes
    candidates = np.sort(order[shared])
    if candidates.size:
        words = np.concatenate([_row_words(np.asarray(X[candidates[a:b]])) for a, b in _chunks(candidates.size)])
        rows = np.ascontiguousarray(words).view(np.dtype((np.void, words.shape[1] * 4))).ravel()
        _, at, inverse = np.unique(rows, return_index=True, return_inverse=True)
        first[candidates] = candidates[at[inverse.ravel()]]
    return first


def row_norms(X) -> np.ndarray:
    """The Euclidean norm of each row of ``X``, in float64 (NaN or inf for a non-finite row).

    Example:
        >>> row_norms(np.array([[3.0, 4.0], [0.0, 0.0]]))
        array([5., 0.])
    """
    X = as_matrix(X, "X", finite=False)
    out = np.empty(len(X))
    for a, b in _chunks(len(X)):
        out[a:b] = np.linalg.norm(_read(X, a, b).astype(np.float64), axis=1)
    return out


def abnormal_norms(norms, bound: float = NORM_BOUND, floor: float = NORM_SCALE_FLOOR) -> np.ndarray:
    """Which norms are abnormal: ``|log norm - median| / scale > bound``, the median and the
    scale (1.4826 x the median absolute deviation, at least ``floor``) taken over the finite
    positive norms. Zero and non-finite norms are not abnormal here (they are counted apart).

    Example:
        >>> abnormal_norms(np.array([1.0, 1.1, 0.9, 1.0, 1.05, 30.0, 0.0]))
        array([False, False, False, False, False,  True, False])
    """
    norms = np.asarray(norms, dtype=np.float64)
    bound = _number(bound, "bound", 0)
    floor = _number(floor, "floor", 0)
    ok = np.isfinite(norms) & (norms > 0)
    out = np.zeros(norms.shape, dtype=bool)
    if not ok.any():
        return out
    logs = np.log(norms[ok])
    centre = np.median(logs)
    scale = max(1.4826 * float(np.median(np.abs(logs - centre))), floor)
    out[ok] = np.abs(logs - centre) > bound * scale if scale > 0 else logs != centre
    return out


class UnitMoments(NamedTuple):
    """Sums over the unit rows ``u`` of a matrix: ``n`` rows (zero and non-finite rows left
    out), ``total`` = sum of ``u``, ``shift`` = a fixed point near their mean (the mean of the
    first chunk's unit rows) and ``second`` = sum of ``(u - shift)(u - shift)^T`` (d x d), shifted
    so that no variance is a difference of two large numbers."""

    n: int
    total: np.ndarray
    shift: np.ndarray
    second: np.ndarray

    @property
    def mean(self) -> np.ndarray:
        return self.total / self.n


def unit_moments(X, norms=None) -> UnitMoments:
    """:class:`UnitMoments` of the rows of ``X`` (``norms``: :func:`row_norms` of ``X``, if at hand).

    Example:
        >>> m = unit_moments(np.array([[2.0, 0.0], [0.0, 3.0], [0.0, 0.0]]))
        >>> m.n, m.total
        (2, array([1., 1.]))
    """
    X = as_matrix(X, "X", finite=False)
    d = X.shape[1]
    n, total, shift, second = 0, np.zeros(d), None, np.zeros((d, d))
    for a, b in _chunks(len(X)):
        chunk = _read(X, a, b).astype(np.float64)
        nrm = np.linalg.norm(chunk, axis=1) if norms is None else np.asarray(norms[a:b], dtype=np.float64)
        U = _unit(chunk, nrm)
        if not len(U):
            continue
        if shift is None:
            shift = U.mean(axis=0)
        n += len(U)
        total += U.sum(axis=0)
        C = U - shift
        with single_thread():  # a thin product: two contending threads only wait on each other
            second += C.T @ C
    if shift is None:
        raise ValueError("X: no row with a finite, non-zero norm")
    return UnitMoments(n, total, shift, second)


def distance_shares(m: UnitMoments) -> np.ndarray:
    """Each dimension's share of the mean cosine distance ``1 - cos`` over pairs of distinct
    rows: ``var_i / sum_j var_j``, ``var_i`` the variance of the unit rows' coordinate ``i``
    (for unit rows, ``1 - cos(u, v) = |u - v|^2 / 2``, whose mean over distinct pairs is
    ``n / (n - 1)`` times the sum of the variances). A coordinate's mean adds the same amount to
    every candidate's cosine with a given query, so what orders neighbours is its variance.
    NaN shares when all rows point the same way.

    Example:
        >>> m = unit_moments(np.array([[1.0, 0.0, 1.0], [1.0, 0.0, -1.0], [1.0, 1.0, 0.0], [1.0, -1.0, 0.0]]))
        >>> distance_shares(m).round(3)
        array([0. , 0.5, 0.5])
    """
    dev = m.mean - m.shift
    var = np.clip(np.diag(m.second) / m.n - dev * dev, 0.0, None)
    s = var.sum()
    return var / s if s > 0 else np.full_like(var, np.nan)


def rogue_bound(d: int, multiple: float = ROGUE_MULTIPLE) -> float:
    """The share of :func:`distance_shares` above which a dimension is dominant: ``multiple``
    even shares (``multiple / d``), at most one half (a dimension carrying more than half the
    distance dominates whatever ``d``).

    Example:
        >>> rogue_bound(256), rogue_bound(8)
        (0.0390625, 0.5)
    """
    d = check_int(d, "d", minimum=1)
    return min(_number(multiple, "multiple", 1) / d, 0.5)


def contrast(Q, nearest, m: UnitMoments, own_rows: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per query (rows of ``Q``), against the rows summed in ``m``: the relative contrast
    ``mean(1 - cos) / (1 - nearest)`` (``nearest``: the cosine of its nearest row; inf when that
    is 1) and the spread ``std(1 - cos) / mean(1 - cos)`` of its cosine distances to every row.
    ``own_rows``: each query is one of the rows (its own term is left out). Closed form: the
    mean and variance of ``q . u`` over the rows are ``q . mean(u)`` and ``q^T S q / n -
    (q . (mean - shift))^2`` with ``S`` = ``m.second``.

    Example:
        >>> G = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
        >>> rc, spread = contrast(G[:1], np.array([0.0]), unit_moments(G), own_rows=True)
        >>> rc, spread
        (array([1.5]), array([0.33333333]))
    """
    Q = as_matrix(Q, "Q")
    U = unit_rows(Q.astype(np.float64))
    nearest = np.asarray(nearest, dtype=np.float64)
    n = np.full(len(U), float(m.n))
    dev = U - m.shift
    quad = np.einsum("ij,ij->i", U @ m.second, U)
    total = np.broadcast_to(m.total, U.shape)
    if own_rows:
        n = n - 1
        quad = quad - np.einsum("ij,ij->i", U, dev) ** 2
        total = total - U
    mean_cos = np.einsum("ij,ij->i", U, total) / n
    centre = np.einsum("ij,ij->i", U, total / n[:, None] - m.shift)
    var = np.clip(quad / n - centre * centre, 0.0, None)
    mean_d = 1.0 - mean_cos
    d_min = 1.0 - nearest
    with np.errstate(divide="ignore", invalid="ignore"):
        rc = np.where(d_min > 0, mean_d / np.where(d_min > 0, d_min, 1.0), np.inf)
        spread = np.sqrt(var) / mean_d
    return rc, spread


def inner_product_topk(Q, G, k: int, search: Callable, norms=None) -> tuple[np.ndarray, np.ndarray]:
    """Each query's top ``k`` rows of ``G`` by inner product ``q . g``, found by ``search`` (a
    cosine top-k, :func:`~embdiag.metrics.retrieval.topk`'s signature) on augmented rows: ``g ->
    [g, sqrt(M^2 - |g|^2)]`` (``M`` the largest norm) and ``q -> [q, 0]``, whose cosine is ``q . g
    / (|q| M)``, in the same order as the inner product (Bachrach et al. 2014). ``G`` is augmented
    and searched :data:`SEARCH_ROWS` rows at a time (one float32 copy of a block, whatever its size;
    both sides scaled in float64 first, ``q`` to a unit row and ``g`` by ``1 / M``, which keeps every cosine)
    and the blocks' lists merged, equal scores by the lower row. Returns the inner products
    (float64, from the cosines) and the indices. ``norms``: :func:`row_norms` of ``G``.

    Example:
        >>> from embdiag.metrics.retrieval import topk
        >>> G = np.array([[1.0, 0.0], [3.0, 1.0], [0.0, 2.0]])
        >>> S, I = inner_product_topk(np.array([[1.0, 0.2]]), G, 2, topk)
        >>> I, S.round(4)
        (array([[1, 0]]), array([[3.2, 1. ]]))
    """
    Q = as_matrix(Q, "Q")
    G = as_matrix(G, "G")
    k = check_int(k, "k", minimum=1)
    norms = row_norms(G) if norms is None else np.asarray(norms, dtype=np.float64)
    top = float(norms.max())
    q_norms = np.linalg.norm(Q.astype(np.float64), axis=1)
    Qa = np.zeros((len(Q), Q.shape[1] + 1), dtype=np.float32)
    Qa[:, :-1] = Q / np.where(q_norms > 0, q_norms, 1.0)[:, None]  # in float64 first: any finite row fits float32
    bounds = list(range(0, len(G), SEARCH_ROWS)) + [len(G)]
    if len(bounds) > 2 and bounds[-1] - bounds[-2] <= k:  # a last block too short to search: join it
        del bounds[-2]
    scores, indices = [], []
    for a, b in zip(bounds[:-1], bounds[1:]):
        A = np.empty((b - a, G.shape[1] + 1), dtype=np.float32)
        A[:, :-1] = _read(G, a, b) / top
        A[:, -1] = np.sqrt(np.clip(1.0 - (norms[a:b] / top) ** 2, 0.0, None))
        S, I = search(Qa, A, k)
        scores.append(np.asarray(S, dtype=np.float64))
        indices.append(np.asarray(I) + a)
    S, I = np.concatenate(scores, axis=1), np.concatenate(indices, axis=1)
    order = np.lexsort((I, -S), axis=-1)[:, :k] if len(scores) > 1 else np.arange(k)[None].repeat(len(Q), 0)
    S, I = np.take_along_axis(S, order, axis=1), np.take_along_axis(I, order, axis=1)
    return S * q_norms[:, None] * top, I


def below_quantile(query_nearest, row_nearest, quantile: float = 0.01) -> tuple[float, np.ndarray]:
    """The ``quantile`` of the rows' own nearest-other-row cosines (``row_nearest``; the lower
    order statistic, no interpolation) and which queries' nearest-row cosine lies below it: for
    queries drawn like the rows, about ``quantile`` of them.

    Example:
        >>> below_quantile(np.array([0.1, 0.6, 0.9]), np.linspace(0.5, 1.0, 101), 0.01)
        (0.505, array([ True, False, False]))
    """
    quantile = _number(quantile, "quantile", 0, 1)
    threshold = float(np.quantile(np.asarray(row_nearest, dtype=np.float64), quantile, method="lower"))
    return threshold, np.asarray(query_nearest, dtype=np.float64) < threshold


def islands(neighbours) -> np.ndarray:
    """The weakly connected component of each row of a k-nearest-neighbour graph (``neighbours``:
    row ``i`` lists the rows ``i`` points to, indices into the same rows), numbered by size,
    largest first (``0``), ties by their first row.

    Example:
        >>> islands(np.array([[1], [0], [3], [2], [2]]))
        array([1, 1, 0, 0, 0], dtype=int32)
    """
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import connected_components

    nb = np.asarray(neighbours)
    n = len(nb)
    graph = csr_array((np.ones(nb.size), (np.repeat(np.arange(n), nb.shape[1]), nb.ravel())), shape=(n, n))
    _, labels = connected_components(graph, directed=True, connection="weak")
    sizes = np.bincount(labels)
    first = np.full(len(sizes), n)
    np.minimum.at(first, labels, np.arange(n))
    rank = np.empty(len(sizes), dtype=np.int32)
    rank[np.lexsort((first, -sizes))] = np.arange(len(sizes), dtype=np.int32)
    return rank[labels]


def median_interval(x, level: float = 0.95) -> tuple[float, float, float]:
    """The median of ``x`` and a distribution-free interval for it: the order statistics
    ``x_(l)`` and ``x_(n-l+1)``, ``l`` the largest rank with ``P(Binomial(n, 1/2) < l) <= (1 -
    level) / 2``, which covers the median with probability at least ``level`` (NaN ends when
    ``x`` is too short for any such rank).

    Example:
        >>> median_interval(np.arange(100.0))
        (49.5, 39.0, 60.0)
    """
    from scipy import stats  # (imported here: scipy.stats takes a second to import)

    x = np.sort(np.asarray(x, dtype=np.float64))
    n = len(x)
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    level = _number(level, "level", 0, 1)
    low_rank = int(stats.binom.ppf((1 - level) / 2, n, 0.5))  # P(B <= low_rank - 1) < (1 - level) / 2
    med = float(np.median(x))
    if low_rank < 1:
        return med, float("nan"), float("nan")
    return med, float(x[low_rank - 1]), float(x[n - low_rank])
