r"""Graded relevance of ranked neighbour lists: nDCG@k, MRR@k, MAP@k and recall@k, as trec_eval defines them.

``qrels`` judge gallery rows per query with non-negative integer grades (TREC's qrels: 0 judged
not relevant, 1 and above relevant, a larger grade a better document); an unjudged row counts
as grade 0. Given in one of these forms: a list with one mapping ``{gallery index: grade}`` per
query, or an ``(n_queries, n_gallery)`` array or SciPy sparse matrix of grades. With ``g_i`` the
grade of the neighbour at rank ``i`` (1-based) and ``R`` the query's number of relevant rows:

- ``ndcg_at_k``: :math:`\sum_{i \le k} g_i / \log_2(i + 1)` over the same sum for the query's
  grades sorted in descending order (trec_eval's ``ndcg_cut``, gains linear in the grade);
- ``mrr_at_k``: :math:`1 / i` of the first relevant neighbour within rank ``k``, else 0
  (trec_eval's ``recip_rank`` of the run cut at ``k``);
- ``average_precision_at_k``: :math:`\frac{1}{R} \sum_{i \le k,\, g_i \ge 1} P@i` (trec_eval's
  ``map_cut``: divided by all ``R`` relevant rows, not by ``min(R, k)``);
- ``graded_recall_at_k``: relevant neighbours within rank ``k`` over ``R`` (trec_eval's ``recall``).

A query with no relevant row has no value (NaN with ``per_query``) and is left out of the mean,
as trec_eval leaves out a query absent from the qrels. ``tests/metrics/test_graded.py`` checks
every measure against pytrec_eval (trec_eval 9.0.8).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validate import check_bool, check_int
from .retrieval import _neighbors

__all__ = ["ndcg_at_k", "mrr_at_k", "average_precision_at_k", "graded_recall_at_k"]


def _grades(qrels, nb: np.ndarray):
    """The grades of ``nb``'s rows (n_queries, k) and each query's grades, sorted descending (a
    list of 1-D arrays of its relevant and judged rows)."""
    from scipy import sparse

    n = len(nb)
    if isinstance(qrels, (list, tuple)):
        if len(qrels) != n:
            raise ValueError(f"qrels: judgments for {len(qrels)} queries, neighbors has {n}")
        rows, cols, vals = [], [], []
        for q, judged in enumerate(qrels):
            if not isinstance(judged, Mapping):
                raise ValueError(f"qrels: query {q}: expected a mapping of gallery index to grade, got {judged!r}")
            for doc, grade in judged.items():
                rows.append(q)
                cols.append(doc)
                vals.append(grade)
        cols_a, vals_a = np.asarray(cols, dtype=np.int64), np.asarray(vals, dtype=np.float64)
        width = max(int(nb.max()), int(cols_a.max(initial=-1))) + 1
        if (cols_a < 0).any():
            raise ValueError(f"qrels: negative gallery index {int(cols_a.min())}")
        G = sparse.csr_array((vals_a, (np.asarray(rows, dtype=np.int64), cols_a)), shape=(n, width))
    else:
        G = sparse.csr_array(qrels) if sparse.issparse(qrels) else sparse.csr_array(np.asarray(qrels, dtype=float))
        if G.ndim != 2 or G.shape[0] != n:
            raise ValueError(f"qrels: expected {n} rows of grades (one per query), got shape {G.shape}")
        if nb.max() >= G.shape[1]:
            raise ValueError(f"neighbors: index {int(nb.max())} beyond the qrels' {G.shape[1]} gallery columns")
    values = G.data
    if not np.isfinite(values).all() or (values < 0).any() or (values != np.rint(values)).any():
        raise ValueError("qrels: grades must be non-negative integers (0: judged not relevant)")
    G.sum_duplicates()
    at = np.asarray(G[np.repeat(np.arange(n), nb.shape[1]), nb.ravel()]).reshape(nb.shape)
    ideal = [np.sort(G.data[G.indptr[q] : G.indptr[q + 1]])[::-1] for q in range(n)]
    return at, ideal


def _first_k(nb: np.ndarray, k) -> np.ndarray:
    if k is None:
        return nb
    k = check_int(k, "k", minimum=1)
    if k > nb.shape[1]:
        raise ValueError(f"k: must be at most the {nb.shape[1]} neighbours given, got {k}")
    return nb[:, :k]


def _result(values: np.ndarray, per_query) -> float | np.ndarray:
    if check_bool(per_query, "per_query"):
        return values
    defined = ~np.isnan(values)
    return float(values[defined].mean()) if defined.any() else float("nan")


def _prepared(neighbors, qrels, k):
    nb = _first_k(_neighbors(neighbors), k)
    at, ideal = _grades(qrels, nb)
    relevant = np.array([int((i >= 1).sum()) for i in ideal])
    return nb, at, ideal, relevant


def ndcg_at_k(neighbors, qrels, k: int | None = None, per_query: bool = False):
    """nDCG@k of each query's ranked ``neighbors`` (module doc), averaged over queries with a
    relevant row. ``k``: the first ``k`` columns (default all).

    Example:
        >>> round(ndcg_at_k(np.array([[2, 0, 1]]), [{0: 3, 1: 1}]), 4)  # (0 + 3/log2 3 + 1/2) / (3 + 1/log2 3)
        0.659
    """
    nb, at, ideal, relevant = _prepared(neighbors, qrels, k)
    discount = 1.0 / np.log2(np.arange(2, nb.shape[1] + 2))
    dcg = at @ discount
    idcg = np.array([i[: nb.shape[1]] @ discount[: min(len(i), nb.shape[1])] for i in ideal])
    with np.errstate(invalid="ignore", divide="ignore"):
        return _result(np.where(relevant > 0, dcg / idcg, np.nan), per_query)


def mrr_at_k(neighbors, qrels, k: int | None = None, per_query: bool = False):
    """MRR@k: the reciprocal rank of each query's first relevant neighbour within rank ``k`` (0
    when none), averaged over queries with a relevant row.

    Example:
        >>> mrr_at_k(np.array([[2, 0, 1], [5, 6, 7]]), [{0: 1}, {7: 2}], per_query=True)
        array([0.5       , 0.33333333])
    """
    nb, at, _, relevant = _prepared(neighbors, qrels, k)
    hit = at >= 1
    first = np.where(hit.any(axis=1), 1.0 / (hit.argmax(axis=1) + 1), 0.0)
    return _result(np.where(relevant > 0, first, np.nan), per_query)


def average_precision_at_k(neighbors, qrels, k: int | None = None, per_query: bool = False):
    """AP@k (MAP@k averaged): the mean over each relevant neighbour within rank ``k`` of the
    precision at its rank, divided by all ``R`` of the query's relevant rows.

    Example:
        >>> round(average_precision_at_k(np.array([[2, 0, 1]]), [{0: 1, 1: 1, 9: 1}]), 4)  # (1/2 + 2/3) / 3
        0.3889
    """
    nb, at, _, relevant = _prepared(neighbors, qrels, k)
    hit = (at >= 1).astype(np.float64)
    precision = np.cumsum(hit, axis=1) / np.arange(1, nb.shape[1] + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _result(np.where(relevant > 0, (precision * hit).sum(axis=1) / relevant, np.nan), per_query)


def graded_recall_at_k(neighbors, qrels, k: int | None = None, per_query: bool = False):
    """Recall@k of graded judgments: relevant neighbours within rank ``k`` over the query's ``R``
    relevant rows.

    Example:
        >>> graded_recall_at_k(np.array([[2, 0, 1]]), [{0: 1, 9: 2}], k=2)
        0.5
    """
    _, at, _, relevant = _prepared(neighbors, qrels, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _result(np.where(relevant > 0, (at >= 1).sum(axis=1) / relevant, np.nan), per_query)
