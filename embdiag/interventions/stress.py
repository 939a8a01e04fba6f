"""Stress tests: post-hoc changes to cached vectors at a declared severity.

Each intervention is a scikit-learn style transformer taking a severity ``s`` in
``[0, 1)``; ``s = 0`` is the identity and ``s -> 1`` is the limit of the change. Fit on
*training* vectors (never on evaluation vectors), transform any vectors. Outputs are
float64: at ``s = .99`` a contraction or offset leaves cosine gaps near ``1e-5`` of
the native ones, below what float32 resolves.

=================  ==================================================================
contraction        ``x -> (1 - s) x``; variance falls by ``(1 - s)**2``, cosines and
                   normalized spectra are unchanged.
common offset      ``x -> x + s / (1 - s) * r * u``: ``r`` the root-mean-square norm of
                   the training vectors, ``u`` a fixed seeded random unit direction.
                   Centered variance and PR unchanged; raw RankMe collapses toward 2.
rank restriction   ``x -> m + P_k (x - m)``: ``m`` the training mean, ``P_k`` the
                   projector onto the top ``k = ceil(d (1 - s))`` training principal
                   directions (8 of 768 at ``s = .99``). Output stays d-dimensional.
noise              ``x -> x + e``, ``e`` isotropic Gaussian of total variance
                   ``(s / (1 - s))**2 * q`` (``q`` the mean squared training norm), i.e.
                   per-coordinate variance ``(s / (1 - s))**2 * q / d``; seeded.
=================  ==================================================================

The study's ``.99`` rows (contraction by ``1 - s``, noise of total variance
``(s / (1 - s))**2`` on unit vectors) follow from these mappings. Every intervention takes
``(severity, *, seed=0)`` (the deterministic ones ignore the seed) and, as scikit-learn
asks, checks its arguments in ``fit``. Build one by name with :func:`make_intervention`;
iterate a name x severity grid with :func:`grid`, and measure it with
:func:`measure_grid` (or :func:`stress_grid`, the same as a table).
"""

from __future__ import annotations

import math
import numbers
import zlib
from typing import Mapping

import numpy as np
import pandas as pd

from .._validate import as_float, as_matrix, check_int
from ..metrics.retrieval import overlap_at_k, topk
from ..metrics.suite import check_inputs, evaluate
from .compression import _Fitted, principal_axes

__all__ = [
    "SEVERITIES",
    "INTERVENTIONS",
    "Contraction",
    "CommonOffset",
    "RankRestriction",
    "Noise",
    "make_intervention",
    "grid",
    "measure_grid",
    "stress_grid",
    "check_severity",
    "n_kept",
]

SEVERITIES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 0.9, 0.99)
"""The severity grid, declared before any measurement (headline: ``.99``)."""


def check_severity(severity, name: str = "severity") -> float:
    """Return ``severity`` as a float after checking ``0 <= severity < 1``.

    Examples
    --------
    >>> check_severity(0.5)
    0.5
    >>> check_severity(1)
    Traceback (most recent call last):
    ...
    ValueError: severity: must be in [0, 1), got 1
    """
    if isinstance(severity, bool) or not isinstance(severity, numbers.Real):
        raise ValueError(f"{name}: expected a number in [0, 1), got {severity!r}")
    s = float(severity)
    if not (0.0 <= s < 1.0):
        raise ValueError(f"{name}: must be in [0, 1), got {severity!r}")
    return s


class _Intervention(_Fitted):
    """Shared constructor and ``fit``: ``severity`` in ``[0, 1)``, ``seed`` a non-negative
    integer (used by the random interventions only)."""

    def __init__(self, severity: float, *, seed: int = 0):
        self.severity = severity
        self.seed = seed

    def fit(self, X, y=None):
        """Check ``severity`` and ``seed``, record ``n_features_in_`` and fit on training ``X``."""
        self.severity_ = check_severity(self.severity)
        self.seed_ = check_int(self.seed, "seed", minimum=0)
        # (dropping min_rows is an equivalent mutant: RankRestriction, the one class with 2, gets the
        # same "X: needs at least 2 row(s)" error from principal_axes)
        X = as_matrix(X, "X", min_rows=self._min_rows)
        self._fit(X)
        self.n_features_in_ = X.shape[1]
        return self

    _min_rows = 1

    def _fit(self, X):
        pass


class Contraction(_Intervention):
    """Multiply every vector by ``scale_ = 1 - s``.

    Total variance falls by ``(1 - s)**2``; cosines, cosine order, RankMe, PR,
    standardized probes and P@10 are unchanged. ``fit`` needs no statistics.

    Examples
    --------
    >>> X = np.array([[2.0, 0.0], [0.0, 4.0]])
    >>> Contraction(0.5).fit(X).transform(X)
    array([[1., 0.],
           [0., 2.]])
    """

    def _fit(self, X):
        self.scale_ = 1.0 - self.severity_

    def transform(self, X) -> np.ndarray:
        # astype(None) is astype(float64): that mutant is equivalent (as in the other transforms)
        return self._check_input(X).astype(np.float64) * self.scale_


class CommonOffset(_Intervention):
    """Add one fixed vector ``offset_`` of norm ``s / (1 - s)`` x training RMS norm.

    ``rms_norm_ = sqrt(mean ||x||^2)`` over the training rows. Direction: ``direction``
    if given (normalized), else a standard Gaussian draw from ``seed``, normalized.
    Centered variance, PR and centered probes are unchanged; mean cosine tends to 1
    and raw RankMe to about 2 as ``s -> 1``.

    Examples
    --------
    >>> X = np.array([[3.0, 4.0], [0.0, 5.0]])  # RMS norm 5
    >>> offset = CommonOffset(0.5, direction=[0.0, 1.0]).fit(X)
    >>> offset.rms_norm_, offset.offset_, offset.transform(X)
    (5.0, array([0., 5.]), array([[ 3.,  9.],
           [ 0., 10.]]))
    """

    def __init__(self, severity: float, *, seed: int = 0, direction=None):
        super().__init__(severity, seed=seed)
        self.direction = direction

    def _fit(self, X):
        d = X.shape[1]
        if self.direction is None:
            u = np.random.default_rng(self.seed_).standard_normal(d)
        else:
            u = as_float(self.direction, "direction", ndim=1, dtype=np.float64)
            if u.shape[0] != d:
                raise ValueError(f"direction: expected length {d}, got {u.shape[0]}")
            if not np.any(u):
                raise ValueError("direction: must be nonzero")
        self.direction_ = u / np.linalg.norm(u)
        # float64 sums of float32 rows; "IJ,IJ->" (a mutant) is the same contraction
        self.rms_norm_ = float(np.sqrt(np.einsum("ij,ij->", X, X, dtype=np.float64) / X.shape[0]))
        s = self.severity_
        self.offset_ = (s / (1.0 - s)) * self.rms_norm_ * self.direction_

    def transform(self, X) -> np.ndarray:
        return self._check_input(X).astype(np.float64) + self.offset_  # astype(None): float64 too


def n_kept(d: int, severity: float) -> int:
    """``ceil(d (1 - s))``, robust to the binary rounding of ``1 - s`` (e.g. 10, .7 -> 3).

    Examples
    --------
    >>> n_kept(768, 0.99), n_kept(10, 0.7), n_kept(4, 0.0)
    (8, 3, 4)
    """
    return max(1, math.ceil(round(d * (1.0 - severity), 9)))


class RankRestriction(_Intervention):
    """Keep the top ``k = ceil(d (1 - s))`` training principal directions around the mean.

    ``transform(X) = mean_ + (X - mean_) @ components_.T @ components_`` (d-dimensional,
    so every metric applies). ``mean_`` and ``components_`` (k x d, orthonormal rows,
    decreasing training variance) come from the training rows only; the output's
    centered rank is at most ``k`` (exactly ``k`` for generic rows, n >= k + 1).
    ``s = 0`` keeps all ``d`` directions (identity up to rounding). Needs 2 training rows.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(10, 4))
    >>> restrict = RankRestriction(0.5).fit(X)
    >>> restrict.n_components_, restrict.components_.shape, restrict.transform(X).shape
    (2, (2, 4), (10, 4))
    """

    _min_rows = 2

    def _fit(self, X):
        mean, V, lam = principal_axes(X)
        k = n_kept(X.shape[1], self.severity_)
        self.n_components_ = k
        self.mean_, self.components_, self.explained_variance_ = mean.copy(), V[:k].copy(), lam[:k].copy()

    def transform(self, X) -> np.ndarray:
        Xc = self._check_input(X).astype(np.float64) - self.mean_  # astype(None): float64 too
        return self.mean_ + (Xc @ self.components_.T) @ self.components_


class Noise(_Intervention):
    """Add isotropic Gaussian noise of total variance ``(s / (1 - s))**2 * mean_sq_norm_``.

    ``mean_sq_norm_`` is the mean squared row norm of the training vectors; each
    coordinate gets variance ``noise_variance_ / d``. The draw is a deterministic
    function of ``seed`` and the bytes of ``X``: the same rows always receive the same
    noise (reproducible), while training and evaluation sets receive different draws.

    Examples
    --------
    >>> noise = Noise(0.5, seed=0).fit(np.eye(4))  # mean squared norm 1
    >>> noise.noise_variance_, noise.transform(np.eye(4)).shape
    (1.0, (4, 4))
    >>> np.array_equal(noise.transform(np.eye(4)), noise.transform(np.eye(4)))  # same rows, same draw
    True
    """

    def _fit(self, X):
        s = self.severity_
        # float64 sums of float32 rows; "IJ,IJ->" (a mutant) is the same contraction
        with np.errstate(over="ignore"):  # an overflow is refused just below, by name
            self.mean_sq_norm_ = float(np.einsum("ij,ij->", X, X, dtype=np.float64) / X.shape[0])
        if not math.isfinite(self.mean_sq_norm_):
            raise ValueError(
                f"X: the mean squared row norm of the training vectors overflows float64 (largest "
                f"magnitude {float(np.abs(X).max()):.3g}); rescale the vectors: the noise's size follows theirs"
            )
        self.noise_variance_ = (s / (1.0 - s)) ** 2 * self.mean_sq_norm_

    def transform(self, X) -> np.ndarray:
        X = self._check_input(X)
        sd = math.sqrt(self.noise_variance_ / X.shape[1])
        if sd == 0.0:
            return X.astype(np.float64)  # astype(None) here and below is astype(float64): equivalent
        # as_matrix rejects empty arrays, so X.size is never 0 here: mutants of that guard ("or True",
        # "else 1") are equivalent, and so is view(None) (crc32 reads the same contiguous bytes)
        key = zlib.crc32(np.ascontiguousarray(X).view(np.uint8)) if X.size else 0
        rng = np.random.default_rng([self.seed_, key, X.shape[0], X.shape[1]])
        return X.astype(np.float64) + sd * rng.standard_normal(X.shape)


INTERVENTIONS: dict[str, type] = {
    "contraction": Contraction,
    "common_offset": CommonOffset,
    "rank_restriction": RankRestriction,
    "noise": Noise,
}
"""Name -> class, in the order the study reports them."""


def make_intervention(name: str, severity: float, *, seed: int = 0) -> _Intervention:
    """Build an (unfitted) intervention by name, e.g. ``make_intervention("noise", .99)``.

    Arguments are checked when it is fitted.

    Examples
    --------
    >>> make_intervention("contraction", 0.5)
    Contraction(severity=0.5)
    >>> round(make_intervention("noise", 0.99).fit(np.eye(4)).noise_variance_, 4)  # (.99 / .01)**2
    9801.0
    """
    try:
        cls = INTERVENTIONS[name]
    except (KeyError, TypeError):
        raise ValueError(f"name: expected one of {sorted(INTERVENTIONS)}, got {name!r}") from None
    return cls(severity, seed=seed)


def grid(names=tuple(INTERVENTIONS), severities=SEVERITIES, *, seed: int = 0):
    """List of ``(name, severity, intervention)`` for every name x severity (unfitted).

    Examples
    --------
    >>> [(name, s) for name, s, _ in grid(["contraction", "noise"], [0.0, 0.5])]
    [('contraction', 0.0), ('contraction', 0.5), ('noise', 0.0), ('noise', 0.5)]
    >>> grid(["noise"], [0.9])[0][2]
    Noise(severity=0.9)
    """
    return [(n, s, make_intervention(n, s, seed=seed)) for n in names for s in severities]


def measure_grid(
    train,
    train_labels: Mapping[str, np.ndarray],
    val,
    val_labels: Mapping[str, np.ndarray],
    *,
    names=None,
    severities=None,
    k: int = 10,
    seed: int = 0,
    probes: bool = True,
):
    """Measure every intervention x severity; yield ``(name, severity, intervention, row,
    neighbors)`` in the order of :func:`grid` (default: every intervention x :data:`SEVERITIES`).

    Each intervention is fitted on ``train`` only and applied to ``train`` and ``val`` (``val``
    as float64). ``row`` is :func:`~embdiag.metrics.suite.evaluate` of the changed vectors
    (eligible classes from ``val_labels``, the same for every row) plus ``"overlap@{k}"``: the
    share of each evaluation vector's unchanged top-k still in its top-k after the change. One
    exact float64 top-k search per changed representation serves both P@k and overlap@k;
    ``neighbors`` are its ``(n_val, k)`` indices (for per-query measures of a grid point).
    Severity 0 is the identity of every intervention: its row is measured once, on the
    unchanged vectors, and repeated for each name (overlap@k exactly 1); the intervention is
    still fitted, so its size can be read from it.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y, X = np.tile([0, 1], 30), rng.normal(size=(60, 4))
    >>> points = measure_grid(X[:30], {"a": y[:30]}, X[30:], {"a": y[30:]}, names=["contraction", "noise"],
    ...                       severities=[0.5], k=3, probes=False)
    >>> [(name, s, row["overlap@3"] == 1.0, neighbors.shape) for name, s, _, row, neighbors in points]
    [('contraction', 0.5, True, (30, 3)), ('noise', 0.5, False, (30, 3))]
    """
    check_inputs(train, train_labels, val, val_labels, probes=probes)  # under the caller's names
    val = as_matrix(val, "val", dtype=np.float64)
    _, native = topk(val, val, k, exclude_self=True, dtype=np.float64)
    unchanged = None
    for name, s, change in grid(tuple(names or INTERVENTIONS), tuple(severities or SEVERITIES), seed=seed):
        change.fit(train)
        if s == 0.0:
            if unchanged is None:
                unchanged = {
                    **evaluate(train, train_labels, val, val_labels, k=k, probes=probes, neighbors=native),
                    f"overlap@{k}": 1.0,
                }
            yield name, s, change, dict(unchanged), native
            continue
        moved = change.transform(val)
        _, neighbors = topk(moved, moved, k, exclude_self=True, dtype=np.float64)
        row = evaluate(
            change.transform(train), train_labels, moved, val_labels, k=k, probes=probes, neighbors=neighbors
        )
        yield name, s, change, {**row, f"overlap@{k}": overlap_at_k(native, neighbors)}, neighbors


def stress_grid(
    train,
    train_labels: Mapping[str, np.ndarray],
    val,
    val_labels: Mapping[str, np.ndarray],
    *,
    names=None,
    severities=None,
    k: int = 10,
    seed: int = 0,
    probes: bool = True,
) -> pd.DataFrame:
    """:func:`measure_grid` as a DataFrame: columns ``intervention``, ``severity``, the metric
    columns of :func:`~embdiag.metrics.suite.evaluate` and ``"overlap@{k}"``, one row per grid
    point, in the grid's order.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y, X = np.tile([0, 1], 30), rng.normal(size=(60, 4))
    >>> table = stress_grid(X[:30], {"a": y[:30]}, X[30:], {"a": y[30:]}, names=["contraction"],
    ...                     severities=[0.0, 0.5], k=3, probes=False)
    >>> list(table.columns)
    ['intervention', 'severity', 'total_variance', 'mean_cosine', 'rankme', 'participation_ratio',
     'a P@3', 'overlap@3']
    >>> round(float(table.total_variance[1] / table.total_variance[0]), 4), table["overlap@3"].tolist()
    (0.25, [1.0, 1.0])
    """
    return pd.DataFrame(
        [
            {"intervention": name, "severity": s, **row}
            for name, s, _, row, _ in measure_grid(
                train, train_labels, val, val_labels, names=names, severities=severities, k=k, seed=seed, probes=probes
            )
        ]
    )
