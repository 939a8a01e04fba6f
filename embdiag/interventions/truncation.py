r"""A per-query certificate that truncation (a Matryoshka prefix, PCA) cannot change the exact top-k.

Truncation keeps a vector's component in a k-dimensional subspace and drops the rest. Write a
unit vector as ``u = cos(t) a + sin(t) r`` with ``a`` the unit direction of its kept component,
``r`` that of the dropped residual and ``t`` the angle between the vector and its kept part
(``cos t = ||kept|| / ||x||``). The truncated cosine of two vectors is ``a_q . a_g``, the full
one ``cos t_q cos t_g (a_q . a_g) + sin t_q sin t_g (r_q . r_g)``, so

    |truncated - full| <= (1 - cos t_q cos t_g) + sin t_q sin t_g = 1 - cos(t_q + t_g),

second order in the angles: a residual of 10% of the norm moves no cosine by more than about
0.02. A query whose computed reference margin (rank-k minus rank-(k+1) score) exceeds twice its
bound ``B_q`` (the largest angle over the gallery, plus every rounding term) provably keeps its
top-k set under the truncation, whatever the search does with ties.

:func:`compare_truncation` measures both rankings (float64) and certifies each query; the bound
is made sound in floating point as the storage certificate is
(:mod:`embdiag.interventions.precision`):

- the reference's and the truncation's computed scores are within :func:`~embdiag.interventions.
  precision.scoring_bound` of their exact values;
- a prefix is an exact copy of coordinates; its angles are bounded from rigorous lower bounds
  on ``cos t`` (norms computed on rows rescaled by powers of two, relative error at most
  ``gamma_(d+2)`` each);
- PCA adds, per row, the centring (the mean-subtracted row's unit vector is within a measured,
  rigorously bounded distance ``e`` of the row's own: ``e_q + e_g`` by Cauchy-Schwarz), the
  projection's rounding (``2 gamma_d ||P||_F ||z|| / ||y||``) and the basis's departure from
  orthonormality (``phi = ||P P^T - I||``, bounded from its float64 evaluation: ``4 phi``).
  Directions of zero variance (zero rows of ``components_``) are dropped, as they give exact zeros.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._validate import as_matrix, check_int, nonzero_rows
from ..metrics.retrieval import boundary_margin, overlap_at_k, topk
from .precision import (
    _U64,
    _error_upper,
    _gamma,
    normalization_bound,
    reconstruction_error,
    reference_ranking,
    scoring_bound,
)

if TYPE_CHECKING:
    from .compression import PCACompression

__all__ = ["TruncationResult", "truncation_bound", "compare_truncation"]


def truncation_bound(cos_q, cos_g) -> np.ndarray:
    """``1 - cos(t_q + t_g)`` for angles given by their cosines (elementwise, broadcast): the largest
    change truncation can make to the cosine of two vectors whose kept parts make angles ``t_q``
    and ``t_g`` with them (exact arithmetic; lower bounds on the cosines give an upper bound).

    Example:
        >>> [round(float(truncation_bound(c, 0.6)), 6) for c in (1.0, 0.6)]  # t_q = 0 or 53.1 deg, t_g = 53.1 deg
        [0.4, 1.28]
        >>> round(float(truncation_bound(0.995, 0.995)), 5)  # 10% of each norm dropped: at most 0.02
        0.01995
    """
    cq, cg = (_cosines(c, n) for c, n in ((cos_q, "cos_q"), (cos_g, "cos_g")))
    # sin t from (1 - c)(1 + c): no cancellation near c = 1, and rounded up by its three roundings
    sq, sg = (np.sqrt((1.0 - c) * (1.0 + c)) * (1 + 4 * _U64) for c in (cq, cg))
    # each of the four operations errs by at most u (1 - cq cg is exact by Sterbenz above 1/2)
    return (1.0 - cq * cg + sq * sg + 4 * _U64) * (1 + 4 * _U64)


def _cosines(c, name: str) -> np.ndarray:
    try:
        a = np.asarray(c, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected cosines (numbers in [0, 1]), got {c!r}") from None
    if not (np.isfinite(a).all() and (a >= 0).all()):
        raise ValueError(f"{name}: expected cosines in [0, 1] (finite, not negative)")
    return np.minimum(a, 1.0)


@dataclass(frozen=True, eq=False)
class TruncationResult:
    """One truncation compared with the exact reference ranking (per-query arrays, length n_q).

    ``margins``: computed reference rank-k minus rank-(k+1) scores; ``bound``: each query's ``B_q``
    on how far any of its scores can move; ``certified``: ``B_q`` below half the margin;
    ``cos_query``: the rigorous lower bound on each query's ``cos t``; ``cos_gallery``: the
    smallest over the gallery.
    """

    name: str
    k: int
    changed: np.ndarray
    overlap: np.ndarray
    margins: np.ndarray
    bound: np.ndarray
    certified: np.ndarray
    cos_query: np.ndarray
    cos_gallery: float
    reference_neighbors: np.ndarray = field(repr=False)
    neighbors: np.ndarray = field(repr=False)

    @property
    def coverage(self) -> float:
        """Fraction of queries certified."""
        return float(self.certified.mean())

    @property
    def violations(self) -> int:
        """Certified queries that changed all the same (always 0 if the certificate is sound)."""
        return int((self.certified & self.changed).sum())


@dataclass(frozen=True)
class _Kept:
    """Rows truncated: ``Y`` the kept coordinates (float64, as searched), ``cos`` rigorous lower
    bounds on each row's ``cos t``, ``extra`` each row's added score-error terms (centring,
    projection rounding), ``shared`` the basis term added once per pair."""

    Y: np.ndarray
    cos: np.ndarray
    extra: np.ndarray
    shared: float


def _norms(A: np.ndarray) -> np.ndarray:
    """Row norms, each within relative ``gamma_(d+2)`` of the exact one: the sum of squares is
    taken on the row rescaled by the power of two that brings its largest entry into [0.5, 1)."""
    e = np.frexp(np.abs(A).max(axis=1))[1]
    S = np.ldexp(A, -e[:, None])
    return np.ldexp(np.sqrt(np.einsum("ij,ij->i", S, S)), e)


def _prefix(X: np.ndarray, dim: int) -> _Kept:
    d = X.shape[1]
    g = _gamma(d + 2, _U64)
    Y = X[:, :dim].copy()
    cos = _norms(Y) * (1 - g) / (_norms(X) * (1 + g))
    return _Kept(Y, np.minimum(cos, 1.0), np.zeros(len(X)), 0.0)


def _basis_defect(P: np.ndarray) -> float:
    """Upper bound on ``||P P^T - I||_2`` (rows of ``P`` nearly orthonormal), from float64."""
    k, d = P.shape
    E = P @ P.T - np.eye(k)
    row = np.einsum("ij,ij->i", P, P)
    rounding = k * _gamma(d, _U64) * float(row.max()) + k * _U64  # entrywise error of fl(P P^T) - I, summed
    return (float(np.linalg.norm(E)) + rounding) * (1 + 4 * k * _U64)


def _pca(X: np.ndarray, model: PCACompression) -> _Kept:
    d = X.shape[1]
    P = model.components_[np.any(model.components_ != 0, axis=1)]  # zero rows: exact zero coordinates
    phi = _basis_defect(P)
    if phi >= 0.25:
        raise ValueError(f"model: its components are far from orthonormal (||P P^T - I|| <= {phi:.3g})")
    Z = X - model.mean_
    nonzero_rows(Z, "X (centred)")
    g = _gamma(d + 2, _U64)
    centring = np.zeros(len(X))
    if np.any(model.mean_ != 0):
        eta = normalization_bound(d, "float64", 0.5 * float(np.einsum("ij,ij->i", Z, Z).min()))
        centring = _error_upper(reconstruction_error(X, Z), d, eta)
    Y = Z @ P.T
    nz, ny = _norms(Z) * (1 + g), _norms(Y) * (1 - g)
    err_y = _gamma(d, _U64) * float(np.linalg.norm(P)) * nz * (1 + g)  # ||fl(P z) - P z||
    with np.errstate(divide="ignore", invalid="ignore"):
        rounding = np.where(ny > err_y, 2 * err_y / np.maximum(ny - err_y, 0), np.inf)
        cos = np.maximum(ny - err_y, 0) / math.sqrt(1 + phi) / nz
    return _Kept(Y, np.minimum(cos, 1.0), centring + rounding, 4 * phi)


def _kept(X: np.ndarray, model, name: str) -> _Kept:
    from .compression import MatryoshkaPrefix, PCACompression  # imports scikit-learn, which a model has loaded

    if isinstance(model, (MatryoshkaPrefix, PCACompression)) and not hasattr(model, "n_features_in_"):
        raise ValueError(f"model: {type(model).__name__} is not fitted; call fit first")
    if isinstance(model, MatryoshkaPrefix):
        model._check_input(X, name)
        return _prefix(X, check_int(model.k, "model.k", minimum=1))
    if isinstance(model, PCACompression):
        model._check_input(X, name)
        return _pca(X, model)
    raise ValueError(f"model: expected a fitted MatryoshkaPrefix or PCACompression, got {type(model).__name__}")


def compare_truncation(
    queries, model, gallery=None, *, k: int = 10, name: str | None = None, reference=None
) -> TruncationResult:
    """Certify, per query, that ``model`` (a fitted :class:`~embdiag.interventions.compression.MatryoshkaPrefix`
    or :class:`~embdiag.interventions.compression.PCACompression`) cannot change its exact top ``k``.

    Each query searches ``gallery`` by cosine (float64; with ``gallery=None`` the queries search
    each other, the query itself excluded), once on the rows and once on their truncations. A
    query is certified when its bound (module doc) is below ``margin * (1 - 4u) / 2``.
    ``reference``: the float64 ranking ``topk(queries, gallery, k + 1)`` when already computed
    (:func:`~embdiag.interventions.precision.compare_conditions` takes the same).

    Example:
        >>> from embdiag.interventions import MatryoshkaPrefix
        >>> rng = np.random.default_rng(0)
        >>> X = np.hstack([rng.normal(size=(200, 4)), 0.01 * rng.normal(size=(200, 12))])  # little beyond 4 dims
        >>> r = compare_truncation(X, MatryoshkaPrefix(4).fit(X), k=3)
        >>> r.violations, r.coverage > 0.5, bool(r.changed.any())
        (0, True, True)
    """
    Q = as_matrix(queries, "queries", dtype=np.float64)
    same = gallery is None
    G = Q if same else as_matrix(gallery, "gallery", dtype=np.float64)
    if G.shape[1] != Q.shape[1]:
        raise ValueError(f"gallery: expected {Q.shape[1]} columns like queries, got {G.shape[1]}")
    nonzero_rows(Q, "queries")
    nonzero_rows(G, "gallery")
    n_cand = len(G) - int(same)
    k = check_int(k, "k", minimum=1)
    if n_cand < 3:  # the margin needs rank k + 1 of more than k + 1 candidates, k >= 1
        side, mine = ("queries", ", each query's own row excluded") if same else ("gallery", "")
        raise ValueError(f"{side}: needs at least 3 candidates (k + 2, k >= 1{mine}), got {n_cand}")
    if k + 1 >= n_cand:
        raise ValueError(f"k: must be at most {n_cand - 2} (the margin ranks k + 1 of {n_cand} candidates), got {k}")
    kq = _kept(Q, model, "queries")
    kg = kq if same else _kept(G, model, "gallery")
    nonzero_rows(kq.Y, "queries (truncated)")
    nonzero_rows(kg.Y, "gallery (truncated)")

    ref_scores, ref_idx = reference_ranking(Q, G, k, same, reference)
    margins = np.asarray(boundary_margin(ref_scores, k), dtype=np.float64)
    _, idx = topk(kq.Y, kg.Y, k, exclude_self=same, dtype=np.float64)
    ref = ref_idx[:, :k]
    changed = np.any(np.sort(idx, axis=1) != np.sort(ref, axis=1), axis=1)
    overlap = np.asarray(overlap_at_k(ref, idx, per_query=True), dtype=np.float64)

    sq = [float(np.einsum("ij,ij->i", A, A).min()) for A in (Q, G, kq.Y, kg.Y)]
    sq_min = 0.5 * min(sq)  # the scoring bounds' underflow terms (as the storage certificate's)
    rounding = scoring_bound(Q.shape[1], "float64", sq_min) + scoring_bound(kq.Y.shape[1], "float64", sq_min)
    cos_g = float(kg.cos.min())
    bound = (truncation_bound(kq.cos, cos_g) + kq.extra + float(kg.extra.max()) + kq.shared + rounding) * (1 + 8 * _U64)
    certified = (margins > 0) & (bound < margins * (1 - 4 * _U64) / 2)
    label = name or f"{type(model).__name__}({model.k})"
    return TruncationResult(label, k, changed, overlap, margins, bound, certified, kq.cos, cos_g, ref, idx)
