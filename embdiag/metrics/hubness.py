"""Hubness: how unevenly the rows of a gallery occur among the k nearest neighbours of others.

The k-occurrence ``N_k(x)`` of gallery row ``x`` is the number of queries whose top-k holds ``x``
(:func:`k_occurrence`); over a kNN graph, where every gallery row is a query and never its own
neighbour (:func:`knn_graph`), its mean is exactly ``k``. Hubness is the right skew of that
distribution (:func:`k_skewness`, Radovanović, Nanopoulos & Ivanović, "Hubs in space", JMLR 11,
2010): a few *hubs* are everyone's neighbour, and *anti-hubs* are nobody's.

Thresholds, as scikit-hubness (Feldbauer & Flexer) implements them, so the shares are comparable
with its ``hub_occurrence`` and ``antihub_occurrence``:

- a hub has ``N_k >= HUB_FACTOR * k`` (:data:`HUB_FACTOR` = 2: at least twice the mean
  k-occurrence of a kNN graph; scikit-hubness's ``hub_size``);
- an anti-hub has ``N_k == 0``: it is in no query's top-k, so a search returns it to no one
  (:func:`antihubs`); the one threshold that needs no constant.

Pure functions on arrays; numpy only.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._validate import check_int

__all__ = ["HUB_FACTOR", "k_occurrence", "k_skewness", "hubs", "antihubs", "hub_occurrence", "hubness", "knn_graph"]

#: A hub's k-occurrence is at least this many times k (scikit-hubness's default ``hub_size``).
HUB_FACTOR = 2


def k_occurrence(neighbours, n_rows: int) -> np.ndarray:
    """``N_k``: how many rows of ``neighbours`` (queries x k gallery positions, each row's
    positions distinct) hold each gallery position ``0 .. n_rows - 1`` (int64).

    Example:
        >>> k_occurrence(np.array([[1, 2], [0, 2], [1, 2]]), 4)
        array([1, 2, 3, 0])
    """
    n_rows = check_int(n_rows, "n_rows", minimum=1)
    nb = np.asarray(neighbours)
    if nb.ndim != 2 or not np.issubdtype(nb.dtype, np.integer):
        raise ValueError(f"neighbours: expected a 2-D integer array, got shape {nb.shape} of {nb.dtype}")
    if nb.size and (nb.min() < 0 or nb.max() >= n_rows):
        raise ValueError(f"neighbours: positions must lie in 0..{n_rows - 1}")
    return np.bincount(nb.ravel(), minlength=n_rows).astype(np.int64)


def k_skewness(occurrence) -> float:
    """The skewness of the k-occurrence: its standardized third moment in the population
    (biased) form ``m3 / m2 ** 1.5`` with ``m_j`` the mean of ``(N_k - mean N_k) ** j``, as
    ``scipy.stats.skew(bias=True)`` (scikit-hubness's ``k_skewness``). NaN when every ``N_k``
    is equal (no spread to standardize by).

    Example:
        >>> round(k_skewness([0, 0, 0, 1, 9]), 4)
        1.4565
    """
    x = np.asarray(occurrence, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"occurrence: expected a non-empty 1-D array, got shape {x.shape}")
    d = x - x.mean()
    m2 = float(np.mean(d * d))
    if m2 <= 0.0:
        return float("nan")
    return float(np.mean(d**3) / m2**1.5)


def hubs(occurrence, k: int) -> np.ndarray:
    """Which gallery rows are hubs: ``N_k >= HUB_FACTOR * k`` (a boolean mask)."""
    k = check_int(k, "k", minimum=1)
    return np.asarray(occurrence) >= HUB_FACTOR * k


def antihubs(occurrence) -> np.ndarray:
    """Which gallery rows are anti-hubs: ``N_k == 0``, in no query's top-k (a boolean mask)."""
    return np.asarray(occurrence) == 0


def hub_occurrence(occurrence, k: int) -> float:
    """The share of all neighbour slots (queries x k) that hubs fill: ``sum N_k`` over hubs
    divided by ``sum N_k`` (scikit-hubness's ``hub_occurrence`` over a full top-k list)."""
    x = np.asarray(occurrence)
    total = int(x.sum())
    return float(x[hubs(x, k)].sum() / total) if total else float("nan")


def hubness(occurrence, k: int) -> dict[str, float]:
    """The k-occurrence summarized: ``k_skewness`` (:func:`k_skewness`), ``hub_share`` (share
    of rows that are hubs), ``hub_occurrence`` (:func:`hub_occurrence`) and ``antihub_share``
    (share of rows that are anti-hubs).

    Example:
        >>> h = hubness(np.array([0, 0, 1, 1, 2, 8]), k=2)
        >>> h["hub_share"], h["antihub_share"], h["hub_occurrence"]
        (0.16666666666666666, 0.3333333333333333, 0.6666666666666666)
    """
    x = np.asarray(occurrence)
    return {
        "k_skewness": k_skewness(x),
        "hub_share": float(hubs(x, k).mean()),
        "hub_occurrence": hub_occurrence(x, k),
        "antihub_share": float(antihubs(x).mean()),
    }


def knn_graph(X, k: int, search: Callable | None = None) -> np.ndarray:
    """Each row's ``k`` nearest other rows of ``X`` (n x k positions): ``search(X, X, k + 1)``
    (default :func:`~embdiag.metrics.retrieval.topk`: exact cosine, ties to the lower index)
    with the row itself removed; when the row is not among its own first ``k + 1`` (an exact
    duplicate tied ahead of it), the last is dropped. Needs ``k + 1 < n`` (what ``topk`` searches).

    Example:
        >>> X = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-0.6, 0.8]])
        >>> knn_graph(X, 1).ravel()
        array([1, 0, 3, 2])
    """
    if search is None:
        from .retrieval import topk as search
    n = len(X)
    k = check_int(k, "k", minimum=1)
    if k + 1 >= n:
        raise ValueError(f"k: must be smaller than the number of rows minus one ({n - 1}), got {k}")
    _, I = search(X, X, k + 1)
    own = np.asarray(I) == np.arange(n)[:, None]
    order = np.argsort(own, axis=1, kind="stable")[:, :k]  # the row itself sorts last, the rest keep their order
    return np.take_along_axis(np.asarray(I), order, axis=1)
