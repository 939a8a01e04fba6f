"""Linear probes: what a fitted linear classifier can recover from embeddings.

:class:`LinearProbe` is multinomial L2 logistic regression (the same objective as
scikit-learn's ``LogisticRegression(solver="lbfgs")``: ``C * sum_i CE_i + ||W||^2 / 2``,
intercept unpenalized, one weight column per class also for two classes). ``C`` is
chosen from a fixed grid on a seeded stratified validation split held out from the
training data; the probe is then refit on all training data with the chosen ``C``.
:func:`fit_probes` fits one probe per labelling of the same vectors (the attributes of
one representation), sharing the standardization and the row-space basis.

Missing labels (None, NaN, pandas NA; :func:`~embdiag.metrics.labels.labelled`) are allowed everywhere here: a row
without a label is left out of what that labelling fits or scores (the other labellings of the
same rows keep it).
"""

from __future__ import annotations

import numbers
from typing import Mapping

import numpy as np
from scipy.linalg import LinAlgError, cholesky, solve_triangular
from scipy.linalg.blas import dsyrk, ssyrk
from scipy.linalg.lapack import dpstrf, strtri
from scipy.special import log_softmax
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from .._blas import single_thread
from .._validate import as_labels, as_matrix, check_int, check_mapping, same_length, squarable
from .labels import labelled_values

__all__ = ["LinearProbe", "fit_probes", "majority_floor"]


def majority_floor(y) -> float:
    """Accuracy of always predicting the most frequent class: its share of the labelled ``y``.

    Examples
    --------
    >>> majority_floor([0, 0, 0, 1])
    0.75
    """
    _, counts = np.unique(labelled_values(y)[0], return_counts=True)
    return float(counts.max() / counts.sum())


def _stratified_split(y_idx: np.ndarray, val_size: float, seed: int):
    """Per class, a seeded random ``val_size`` share (at least one, leaving one) to validation."""
    rng = np.random.default_rng(seed)
    val = []
    for c in range(y_idx.max() + 1):  # a larger bound only visits empty classes
        members = np.flatnonzero(y_idx == c)
        if len(members) < 2:
            continue
        m = min(len(members) - 1, max(1, int(round(val_size * len(members)))))
        val.append(rng.permutation(members)[:m])
    # empty only when every class has one sample: _fit then raises before using ``fit``
    val = np.sort(np.concatenate(val)) if val else np.array([], dtype=np.int64)
    fit = np.setdiff1d(np.arange(len(y_idx)), val)
    return fit, val


def _scale_params(X: np.ndarray, standardize: bool):
    """Per-feature mean and scale (the standard deviation, 1 where it is 0; all 1 without standardizing)."""
    mean = X.mean(axis=0)
    if not standardize:
        return mean, np.ones_like(mean)
    std = X.std(axis=0)
    std[std == 0] = 1.0  # any positive value: a constant column is exactly 0 after centering
    return mean, std


def _row_space(Xs: np.ndarray):
    """Orthonormal basis (d x r) of the row span of the centered ``Xs``, or ``None`` when that
    span is all of R^d (then the identity serves).

    The rank and the span come from a pivoted Cholesky factorization of the Gram matrix
    (LAPACK ``dpstrf``, rank-revealing): it stops when every remaining diagonal entry of the
    Gram matrix's Schur complement is below 1e-12 x its largest diagonal entry, and those
    directions (of that little variance) are dropped; at least one is kept.
    """
    n, d = Xs.shape
    top = np.abs(Xs).max()
    Xn = Xs / top if top > 0 else Xs  # the Gram matrix of huge or tiny values stays representable
    G = Xn.T @ Xn if n >= d else Xn @ Xn.T
    factor, piv, rank, _ = dpstrf(G, tol=1e-12 * G.diagonal().max(), lower=1)
    rank = max(int(rank), 1)
    if n >= d and rank == d:  # (n == d cannot reach rank d: Xs is centered)
        return None
    if n >= d:  # G = P L L^T P^T: the span of G is the span of P L
        span = np.zeros((d, rank))
        span[piv - 1] = np.tril(factor)[:, :rank]
    else:  # the pivot rows span the others
        span = Xn[piv[:rank] - 1].T
    return np.linalg.qr(span)[0]


class _Representation:
    """Standardization and row-space basis of one training matrix, shared by all its probes.

    ``Xs = (X - mean) / scale``; ``U`` (d x r) is an orthonormal basis of the row span of
    ``Xs`` (``None``: the identity) and ``coords = Xs @ U`` (n x r), so ``Xs = coords @ U.T``
    up to the dropped directions. The L2 optimum on any subset of the rows, standardized
    by that subset's own statistics, lies in the column span of ``diag(scale / s_F) U``:
    see :class:`_Design`.
    """

    def __init__(self, X: np.ndarray, standardize: bool):
        self.X, self.standardize = X, standardize
        self.mean, self.scale = _scale_params(X, standardize)
        Xs = (X - self.mean) / self.scale
        self.U = _row_space(Xs)  # the identity (None) would give the same optimum, slower
        self.coords = Xs if self.U is None else Xs @ self.U

    def design(self, rows=None) -> "_Design":
        return _Design(self, rows)


class _Design:
    """The probe problem on ``X[rows]`` standardized by its own statistics (``m_F``, ``s_F``),
    in an orthonormal basis ``V`` of its row span: ``Xs_F V`` with columns divided by their
    root mean square ``sigma``, then a column of ones (``Xt1``, and a float32 copy).

    With ``a = scale / s_F`` and the QR factorization ``diag(a) U = V R``,
    ``Xs_F V = (coords_F - mean) R^T``: no d-dimensional work per subset. ``R`` is ``None``
    (the identity) for all rows and when not standardizing, and the vector ``a`` (a
    diagonal) when ``U`` is the identity. A coefficient ``B`` on ``Xs_F V`` is ``sigma * B``
    on the scaled columns, so the penalty ``||B||^2`` weighs column ``j`` by ``1 / sigma_j^2``
    (``root_penalty = 1 / sigma``, and 0 for the intercept).
    """

    def __init__(self, rep: _Representation, rows):
        c = rep.coords if rows is None else rep.coords[rows]
        if rows is None:
            self.mean, s = rep.mean, rep.scale
        else:
            self.mean, s = _scale_params(rep.X[rows], rep.standardize)
        a = rep.scale / s
        if np.all(a == 1.0):  # saves work only: then qr(U) gives R = +-I (to rounding)
            self.R = None
        else:
            self.R = a if rep.U is None else np.linalg.qr(a[:, None] * rep.U, mode="r")
        self.cbar = c.mean(axis=0)
        c = c - self.cbar
        n, r = c.shape
        Xt = c if self.R is None else c * self.R if self.R.ndim == 1 else c @ self.R.T
        top = np.abs(Xt).max(axis=0)
        top[~(top > 0)] = 1.0
        sigma = top * np.sqrt(np.einsum("ij,ij->j", Xt / top, Xt / top) / n)  # no overflow at any scale
        # Any positive sigma gives the same optimum (it scales a column and its penalty weight
        # together): it only conditions the problem; a zero column gets 1 (a NaN would too).
        sigma[~(sigma > 0)] = 1.0
        self.sigma = sigma
        self.Xt1 = np.empty((n, r + 1))
        self.Xt1[:, :r] = Xt / sigma
        self.Xt1[:, r] = 1.0
        self.Xt1_32 = self.Xt1.astype(np.float32)  # for speed: Hessian products only shape the CG steps
        self.root_penalty = np.append(1.0 / sigma, 0.0)
        w = rep.scale / s**2  # logits of raw x: (x - mean) diag(w) U R^{-1} B + b
        self._W = w[:, None] if rep.U is None else w[:, None] * rep.U

    def _B(self, Theta):
        """The coefficients on ``Xs_F V`` (unscaled columns)."""
        return Theta[:-1] / self.sigma[:, None]

    def to_original(self, Theta):
        """``(coef, intercept)`` with logits ``X @ coef + intercept`` on raw rows."""
        B, b = self._B(Theta), Theta[-1]
        if self.R is not None:
            B = B / self.R[:, None] if self.R.ndim == 1 else solve_triangular(self.R, B)
        W = self._W * B if self._W.shape[1] == 1 else self._W @ B
        return W, b - self.mean @ W

    def start_from(self, other: "_Design", Theta):
        """``other``'s solution as a warm start here (both designs of one representation, this one
        with ``R`` the identity): the same logits on every row of the representation."""
        B, b = other._B(Theta), Theta[-1]
        if other.R is not None:
            B = other.R[:, None] * B if other.R.ndim == 1 else other.R.T @ B
        return np.vstack([B * self.sigma[:, None], b - other.cbar @ B])

    def cold_start(self, yi, K: int):
        """``B = 0`` and the intercept at the centered log class counts (+1)."""
        Theta = np.zeros((self.Xt1.shape[1], K))
        b = np.log(np.bincount(yi, minlength=K) + 1.0)  # a start only; every class has a row here
        Theta[-1] = b - b.mean()
        return Theta


class _Preconditioner:
    """Per class ``k``, the inverse of that class's diagonal Hessian block,
    ``M_k = Xt^T diag(p_k (1 - p_k)) Xt / n + diag(reg)``, applied and then projected onto
    class sums of zero: exact but for the coupling between classes. Built at the
    current point and rebuilt only after a Newton step that needed more than
    ``rebuild_after`` CG steps, or for a penalty more than ``penalty_step`` from the one it
    was built for (:meth:`serves`), so one build usually serves several steps and several
    values of ``C``.

    ``M_k`` is summed in float32 over the rows that make up all but ``dropped_trace`` of its
    trace (confidently classified rows weigh ~0), plus a 1e-6 relative ridge (in float64
    over all rows if that is not positive definite), and factored ``M_k = L L^T`` in
    float64; ``L^-1`` is kept in float32 and applied as ``L^-T (L^-1 r)``, positive
    definite whatever the rounding (it only shapes the CG steps).
    """

    rebuild_after = 12
    dropped_trace = 1e-3
    #: The most the penalty may move (a factor, either way) before the factors are rebuilt for it.
    penalty_step = 10.0

    def __init__(self):
        self.inv, self.stale, self.reg = None, True, None

    def serves(self, reg) -> bool:
        """Whether the factors were built for a penalty within :attr:`penalty_step` of ``reg`` on
        every penalized coefficient. Factors built for penalty ``r_b`` leave the preconditioned
        Hessian at penalty ``r`` a condition number up to ``max(r / r_b, r_b / r)`` times that of
        fresh ones: across a grid that starts at a tiny C the old factors would precondition
        nothing, CG would stop early and Newton would take its short steps for convergence."""
        if self.reg is None or not np.array_equal(self.reg > 0, reg > 0):
            return False
        penalized = reg > 0
        ratio = reg[penalized] / self.reg[penalized]
        slack = 1.0 + 1e-9  # the default grid's steps are 10x up to rounding: they keep the factors
        return bool(np.all((ratio <= self.penalty_step * slack) & (ratio >= 1.0 / (self.penalty_step * slack))))

    def build(self, X32, P, reg):
        n, K = P.shape
        p = len(reg)
        inv = np.empty((K, p, p), dtype=np.float32)
        same = not np.ptp(P, axis=0).any()  # one probability row for all (a cold start): one Gram matrix
        gram = ssyrk(1.0, X32, trans=1, lower=1).astype(np.float64) if same else None
        norms = np.einsum("ij,ij->i", X32, X32)  # (any subscript letters: the same contraction)
        for k in range(K):
            w = np.sqrt(P[:, k] * (1.0 - P[:, k]) / n)
            mass = w * w * norms  # each row's share of the block's trace: sum the rows that matter
            order = np.argsort(-mass)
            cum = np.cumsum(mass[order])
            rows = order[: np.searchsorted(cum, (1.0 - self.dropped_trace) * cum[-1]) + 1]
            L = None
            for single in (True, False):
                if same and single:
                    G = gram * w[0] ** 2
                elif single:
                    A = X32[rows] * w[rows, None].astype(np.float32)
                    G = ssyrk(1.0, A, trans=1, lower=1).astype(np.float64)
                else:
                    G = dsyrk(1.0, X32.astype(np.float64) * w[:, None], trans=1, lower=1)
                ridge = (1e-6 if single else 1e-12) * G.diagonal() + 1e-30  # 1e-30: a float32-safe inverse
                G[np.diag_indices(p)] += reg + ridge
                try:  # (float64: not in place, the diagonal fallback below reads G after a failure)
                    L = cholesky(G, lower=True, overwrite_a=single, check_finite=False)
                    break
                except LinAlgError:
                    continue
            if L is None:  # not positive definite even in float64: the diagonal will do
                L = np.diag(np.sqrt(np.maximum(G.diagonal(), 1e-30)))
            with np.errstate(over="ignore"):  # a pinned column's factor (reg up to 1e300) is inf in float32: inverse 0
                inv[k] = strtri(L.astype(np.float32), lower=1)[0]  # its zero upper triangle stays zero
        self.inv, self.stale, self.reg = inv, False, np.array(reg, dtype=np.float64)

    def copy(self) -> "_Preconditioner":
        """A preconditioner starting from this one's current factors."""
        other = _Preconditioner()
        other.inv, other.stale, other.reg = self.inv, self.inv is None, self.reg
        return other

    def __call__(self, R):
        y = np.matmul(self.inv, R.T.astype(np.float32)[:, :, None])
        out = np.matmul(self.inv.transpose(0, 2, 1), y)[:, :, 0].T.astype(np.float64)
        out -= out.mean(axis=1, keepdims=True)  # in float64: the steps keep class sums of exactly ~0
        return out


def _objective(Z, Theta, Y, reg):
    """The objective at logits ``Z`` and the log-probabilities."""
    L = Z - Z.max(axis=1, keepdims=True)
    L -= np.log(np.exp(L).sum(axis=1, keepdims=True))
    return -np.sum(L * Y) / len(Z) + 0.5 * np.sum(reg[:, None] * Theta**2), L


def _cg(X32, P32, reg, rhs, pre, atol, maxiter=500):  # the cap and step count only bound work
    """Preconditioned CG on ``H D = rhs`` (``H`` the Hessian at probabilities ``P32``), from
    ``D = 0`` until the residual norm is at most ``atol``. Returns ``(D, n_steps)``."""
    n = len(X32)
    D, Res = np.zeros_like(rhs), rhs.copy()
    S = pre(Res)
    Dir, rs = S.copy(), np.sum(Res * S)
    for step in range(1, maxiter + 1):
        Az = P32 * (X32 @ Dir.astype(np.float32))
        Az -= P32 * Az.sum(axis=1, keepdims=True)
        HD = (X32.T @ Az) / n + reg[:, None] * Dir
        curv = np.sum(Dir * HD)
        if not (curv > 0 and rs > 0):  # rs = |L^-1 r|^2 is 0 only with S = 0, then Dir = 0 and curv = 0
            break
        alpha = rs / curv
        D += alpha * Dir
        Res -= alpha * HD
        if np.sqrt(np.sum(Res * Res)) <= atol:
            break
        S = pre(Res)
        rs, rs_old = np.sum(Res * S), rs
        Dir = S + (rs / rs_old) * Dir
    return D, step


def _newton(design: _Design, Y, C: float, starts, tol: float, max_iter: int, pre: _Preconditioner):
    """Minimize ``(1/n) sum_i CE_i + ||B||^2 / (2 C n)`` over ``Theta = [B; b]`` (intercept
    unpenalized) on ``design`` by truncated Newton: preconditioned CG on the Newton system,
    Armijo backtracking. Starts from the best of ``starts``. Columns (classes) of ``Theta``
    sum to zero throughout, as the optimum's do.

    Objective, gradient and steps are float64; the Hessian-vector products inside CG use the
    float32 copy of the design (they only shape the step). CG stops at a relative residual
    ``min(0.5, sqrt(|g| / |g_0|))``. Stops once the Newton decrement ``g^T H^-1 g / 2`` (the
    predicted distance of the objective to its minimum) is at most ``tol`` x the objective,
    after taking that last step if it decreases the objective, or after ``max_iter`` steps.
    Returns ``(Theta, n_steps)``.
    """
    Xt1, X32 = design.Xt1, design.Xt1_32
    n = len(Xt1)
    with np.errstate(over="ignore"):  # an unrepresentable penalty pins its column at 0 anyway
        reg = np.minimum((design.root_penalty / np.sqrt(C * n)) ** 2, 1e300)  # (1e300 == 1e+300)
    best = None
    for Theta in starts:
        Z = Xt1 @ Theta
        f, L = _objective(Z, Theta, Y, reg)
        if best is None or f < best[1]:  # ties: either start serves
            best = Theta, f, Z, L
    Theta, f, Z, L = best
    g0 = None
    for it in range(1, max_iter + 1):
        P = np.exp(L)
        G = Xt1.T @ (P - Y) / n + reg[:, None] * Theta
        G -= G.mean(axis=1, keepdims=True)  # rows sum to 0 up to rounding (Y, P rows sum to 1; Theta's to 0)
        gnorm = np.sqrt(np.sum(G * G))
        g0 = g0 or gnorm  # CG's relative residual min(0.5, sqrt(|g| / |g0|)) -> 0: only the path
        if not gnorm > 0:
            return Theta, it - 1
        if pre.stale or not pre.serves(reg):
            pre.build(X32, P, reg)
        D, steps = _cg(X32, P.astype(np.float32), reg, -G, pre, min(0.5, np.sqrt(gnorm / g0)) * gnorm)
        pre.stale = steps > pre.rebuild_after  # when to rebuild: time only
        slope = np.sum(G * D)
        if not slope < 0:
            return Theta, it - 1
        last = -slope / 2 <= tol * f  # a last full step leaves ~decrement^2: the bound's factor is not critical
        Zd = Xt1 @ D
        t = 1.0
        while True:
            f_new, L_new = _objective(Z + t * Zd, Theta + t * D, Y, reg)
            if f_new <= f + 1e-4 * t * slope:  # (equality: a change below the objective's rounding)
                break
            t *= 0.5
            if last or t < 1e-10:  # no decrease left at double precision (t is a power of 2, never 1e-10)
                return Theta, it
        Theta, Z, L, f = Theta + t * D, Z + t * Zd, L_new, f_new
        if last:
            break
    return Theta, it


class LinearProbe(ClassifierMixin, BaseEstimator):
    """Multinomial L2 logistic-regression probe with ``C`` chosen on held-out training data.

    Parameters
    ----------
    standardize : scale each feature to zero mean and unit variance, with statistics
        fitted on the data being fitted (then the probe is invariant to positive scaling
        and to a common offset of the embeddings).
    Cs : grid of inverse regularization strengths (default ``10.0 ** arange(-3, 4)``).
    val_size : share of each class held out (seeded, stratified) to choose ``C``.
    random_state : seed of the validation split.
    tol : each fit stops once its Newton decrement (the predicted distance of the
        objective to its minimum) is at most ``tol`` x the objective.
    max_iter : cap on Newton steps per ``C``.
    patience : stop the path once this many values of ``C`` after the best so far score below
        it on the validation split (None: solve the whole grid). The weakly regularized end
        of the grid costs the most to solve.

    Attributes
    ----------
    classes_, Cs_ (the grid, ascending, repeats dropped), C_ (chosen), val_scores_ (validation accuracy
    per ``Cs_`` entry; NaN for an entry the path did not reach, and when the grid has one value and
    no split is made),
    coef_ (n_classes x d, in the original feature space), intercept_, n_iter_ (Newton
    steps of the refit).

    The grid is solved from strong to weak regularization, each ``C`` starting from the
    previous solution or from the path extrapolated linearly in log ``C`` (whichever has
    the lower objective); the refit on all rows starts from the solution at ``C_``. Ties
    in validation accuracy go to the smaller ``C``. The solves run in an orthonormal basis
    of the row span of the standardized training data (exact: the L2 optimum lies in it),
    computed once for the validation split and the refit (and, through :func:`fit_probes`,
    once for several labellings), by truncated Newton with a per-class block
    preconditioner (see ``_newton``).

    Cross-checked against ``LogisticRegression`` in ``tests/metrics/test_probe.py``; its
    accuracy and speed on the reference encoder's vectors are measured by
    ``benchmarks/bench_metrics.py``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.tile([0, 1], 20)
    >>> X = rng.normal(size=(40, 3)) + 4 * y[:, None]  # class 1 shifted by 4 in every feature
    >>> probe = LinearProbe().fit(X, y)
    >>> probe.classes_, probe.coef_.shape, probe.score(X, y), probe.predict([[0.0, 0.0, 0.0], [4.0, 4.0, 4.0]])
    (array([0, 1]), (2, 3), 1.0, array([0, 1]))
    """

    Cs_default = 10.0 ** np.arange(-3, 4)

    def __init__(
        self,
        standardize: bool = True,
        Cs=None,
        val_size: float = 0.2,
        random_state: int = 0,
        tol: float = 1e-6,
        max_iter: int = 100,
        patience: int | None = None,
    ):
        self.standardize = standardize
        self.Cs = Cs
        self.val_size = val_size
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter
        self.patience = patience

    # -- helpers ---------------------------------------------------------------------
    def _check_params(self) -> float:
        """Validate the constructor arguments (scikit-learn's rule: in ``fit``); return ``val_size``."""
        if not isinstance(self.standardize, (bool, np.bool_)):
            raise ValueError(f"standardize: expected True or False, got {self.standardize!r}")
        check_int(self.random_state, "random_state", minimum=0)
        check_int(self.max_iter, "max_iter", minimum=1)
        if self.patience is not None:
            check_int(self.patience, "patience", minimum=1)
        for name in ("tol", "val_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"{name}: expected a number, got {value!r}")
        if not (self.tol > 0 and np.isfinite(self.tol)):
            raise ValueError(f"tol: must be a positive finite number, got {self.tol!r}")
        if not 0 < self.val_size < 1:
            raise ValueError(f"val_size: must lie strictly between 0 and 1, got {self.val_size!r}")
        return float(self.val_size)

    def _grid(self) -> np.ndarray:
        Cs = self.Cs_default if self.Cs is None else np.atleast_1d(np.asarray(self.Cs, dtype=np.float64))
        if Cs.ndim != 1 or Cs.size == 0 or not np.isfinite(Cs).all() or (Cs <= 0).any():
            raise ValueError(f"Cs: expected a non-empty 1-D grid of positive finite values, got {self.Cs!r}")
        return np.unique(Cs)  # ascending; a repeated C would make the path's extrapolation divide by 0

    def _check_labels(self, X, y, name: str = "y"):
        """``(classes, class index per labelled row, mask of the labelled rows)``; ``name`` is
        what the caller calls ``y``."""
        y, keep = labelled_values(y, name)
        same_length(X=X, **{name: keep})
        classes, yi = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(f"{name}: needs at least 2 classes, got {len(classes)}")
        return classes, yi, keep

    def _path(self, design: _Design, yi, K: int, Cs, Theta, pre: _Preconditioner):
        """Solve every C in ``Cs`` (ascending) on ``design``, each from the previous solution or
        from the path extrapolated linearly in log C, whichever has the lower objective.
        Yields ``(C, Theta, n_steps)``."""
        Y = np.eye(K)[yi]
        previous = None
        for i, C in enumerate(Cs):
            starts = [Theta]  # the extrapolated start is used only if its objective is lower
            if previous is not None:
                starts.append(Theta + np.log(C / Cs[i - 1]) / np.log(Cs[i - 1] / Cs[i - 2]) * (Theta - previous))
            solution, nit = _newton(design, Y, float(C), starts, float(self.tol), self.max_iter, pre)
            previous, Theta = Theta if i > 0 else None, solution
            yield C, Theta, nit

    # -- API ---------------------------------------------------------------------------
    def fit(self, X, y):
        """Choose ``C`` on a held-out split of ``(X, y)``, then refit on all of it (rows without a
        label left out)."""
        vs = self._check_params()
        X = as_matrix(X, "X", dtype=np.float64)
        squarable(X, "X", " (a standardized probe does not depend on a common factor)")
        self.classes_, yi, keep = self._check_labels(X, y)
        Cs = self._grid()
        with single_thread():  # thin products and small factorizations: one thread is faster
            return self._fit(_Representation(X if keep.all() else X[keep], self.standardize), yi, vs, Cs)

    def _fit(self, rep: _Representation, yi, vs: float, Cs):
        X, K = rep.X, len(self.classes_)
        full = rep.design()
        if len(Cs) > 1:
            fit, val = _stratified_split(yi, vs, self.random_state)
            if len(val) == 0 or len(np.unique(yi[fit])) < 2:
                raise ValueError("y: too few samples per class for a validation split")
            design, pre = rep.design(fit), _Preconditioner()
            scores, thetas, below = np.full(len(Cs), np.nan), [], 0
            for i, (_, Theta, _) in enumerate(self._path(design, yi[fit], K, Cs, design.cold_start(yi[fit], K), pre)):
                W, b = design.to_original(Theta)
                scores[i] = np.mean(np.argmax(X[val] @ W + b, axis=1) == yi[val])
                thetas.append(Theta)
                if i == 0 or scores[i] > np.nanmax(scores[:i]):
                    refit_pre, below = pre.copy(), 0  # the best C's preconditioner suits the refit at that C (speed)
                elif scores[i] < np.nanmax(scores[:i]):
                    below += 1
                    if below == self.patience:
                        break
            self.val_scores_ = scores
            best = int(np.nanargmax(scores))
            self.C_ = float(Cs[best])
            start = full.start_from(design, thetas[best])
        else:
            self.val_scores_ = np.array([np.nan])
            self.C_ = float(Cs[0])
            start, refit_pre = full.cold_start(yi, K), _Preconditioner()
        self.Cs_ = Cs
        _, Theta, nit = next(self._path(full, yi, K, [self.C_], start, refit_pre))
        W, b = full.to_original(Theta)
        self.coef_, self.intercept_, self.n_iter_ = W.T.copy(), b, nit
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X) -> np.ndarray:
        """Class logits, shape (n, n_classes)."""
        check_is_fitted(self, "coef_")
        X = as_matrix(X, "X", dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X: has {X.shape[1]} features, the probe was fitted on {self.n_features_in_}")
        return X @ self.coef_.T + self.intercept_

    def predict(self, X) -> np.ndarray:
        """The class of largest logit."""
        scores = self.decision_function(X)  # raises NotFittedError before classes_ is read
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_proba(self, X) -> np.ndarray:
        """Softmax of the logits, columns in ``classes_`` order."""
        return np.exp(log_softmax(self.decision_function(X), axis=1))

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy on ``(X, y)``."""
        y = as_labels(y)
        pred = self.predict(X)
        same_length(X=pred, y=y)
        return float(np.mean(pred == y))


def fit_probes(X, labels: Mapping[str, object], **params) -> dict[str, LinearProbe]:
    """``{name: LinearProbe(**params).fit(X, y)}`` for every labelling ``y`` of the same ``X``.

    The fits are the ones :meth:`LinearProbe.fit` makes one at a time; the standardization
    and the row-space basis of the labelled rows are computed once per set of labelled rows
    and shared (once for ``X`` when no label is missing).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.tile([0, 1], 20)
    >>> X = rng.normal(size=(40, 3)) + 4 * y[:, None]  # class 1 shifted by 4 in every feature
    >>> probes = fit_probes(X, {"class": y, "flipped": 1 - y})
    >>> sorted(probes), probes["class"].predict([[4.0, 4.0, 4.0]]), probes["flipped"].predict([[4.0, 4.0, 4.0]])
    (['class', 'flipped'], array([1]), array([0]))
    """
    template = LinearProbe(**params)
    vs = template._check_params()
    X = as_matrix(X, "X", dtype=np.float64)
    squarable(X, "X", " (a standardized probe does not depend on a common factor)")
    Cs = template._grid()
    checked = {}
    for name, y in check_mapping(labels, "labels").items():
        probe = clone(template)
        probe.classes_, yi, keep = probe._check_labels(X, y, f"labels[{name!r}]")
        checked[name] = probe, yi, keep
    reps: dict[bytes, _Representation] = {}

    def rows(keep) -> _Representation:
        key = b"" if keep.all() else np.packbits(keep).tobytes()
        if key not in reps:
            reps[key] = _Representation(X if not key else X[keep], template.standardize)
        return reps[key]

    with single_thread():
        return {name: probe._fit(rows(keep), yi, vs, Cs) for name, (probe, yi, keep) in checked.items()}
