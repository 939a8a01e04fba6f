"""Tests of :mod:`embdiag.metrics.probe` against independent references: scikit-learn's
``LogisticRegression`` (fitted coefficients and objective, also at n < d, n = d, n > d and for
two classes), ``balanced_accuracy_score``, fits on the fit rows alone, SVD ranks, scipy's
``log_softmax``, the class prior for uninformative features, and invariances (offset, constant
columns, dtype).

Equivalent mutants
------------------
Mutants of ``tools/mutate.py`` (mutmut names ``embdiag.metrics.probe.x_<function>__mutmut_<k>``,
methods ``xǁ<Class>ǁ<method>__mutmut_<k>``) that survive because they change no result; each
has a comment next to the code. "Path only" means the solver still stops by the same test
(Newton decrement at most ``tol`` x the objective, after a last full step), so the probe is
the same to within that stated accuracy and only the number of CG or Newton steps changes
(as any change of the starting point or the preconditioner does; a fit cut short by
``max_iter`` stops elsewhere). ``astype(None)`` is ``astype(float64)``.

- ``_stratified_split`` 6 (``max() + 2``): the extra class index has no members and is
  skipped. 36, 38 (the empty ``val`` as float64): only when every class has one sample, and
  ``_fit`` then raises before ``fit`` is used.
- ``_scale_params`` 12 (2.0 for a zero standard deviation): such a column is exactly 0 after
  centering whatever it is divided by, and its coefficient is 0 either way (to rounding).
- ``_row_space`` 32 (``n > d and rank == d``): ``Xs`` is centered, so its rank is at most
  n - 1 and rank d needs n > d.
- ``_Representation.__init__`` 10 (``U = None``: the identity basis): it contains the row
  span, so the L2 optimum is the same; the identity also keeps the directions ``_row_space``
  drops (variance below 1e-12 of the largest), whose coefficients the penalty keeps at ~0.
  Time only.
- ``_Design.__init__`` 14, 16 (``R`` also computed where ``a == 1``): then ``R`` is the QR
  factor of the orthonormal ``U``, +-I to rounding, undone by ``to_original`` and
  ``start_from``. 48, 52, 71 (top NaN or 2, sigma 2 for a zero column): the column is 0, a NaN
  sigma is reset to 1, and any positive sigma gives the same optimum (it scales a column and
  its penalty weight together). 51 (``top > 1``): the same sigma unless a column's squares
  underflow, and then any positive sigma serves. 64 (``"IJ,IJ->J"``): the same contraction.
  82 (float64 copy for the Hessian products): path only.
- ``_Design.cold_start`` 10 (no ``minlength``): every class has a row in every design (the
  split leaves one per class), so the count has length K. 11 (``+ 2.0``): a start; path only.
- ``_Preconditioner`` (any positive definite ``L^-T L^-1`` leads to the same stopping test of
  ``_newton``, so mutants that change how ``M_k`` is approximated, which rows, weights, ridge,
  precision, triangle or when it is rebuilt, shape the CG steps only: path only). ``__call__``
  6 (the residual in float64), 8 (output ``astype(None)``: float64).
  ``build`` 5, 7 (inverse stored in float64); 8, 9, 11, 13, 14 (``same`` decided otherwise:
  the shared Gram matrix at row 0's weight, or the per-class one); 17 (shared Gram computed
  always); 18, 79, 102, 147 (``astype(None)``: the same float64 / float32 values); 22, 26,
  83, 87, 95, 99 (Gram in the upper triangle: the lower one read is its diagonal, a Jacobi
  preconditioner); 28, 89, 103 (``trans=2``: the transpose, for real matrices); 38
  (``"IJ,IJ->I"``); 44, 45 (weights p (1 + p), p (2 - p), positive); 47, 51, 60, 61, 62, 63,
  64, 65 (which rows are summed, at least one); 71, 72, 73 (shared Gram times a positive
  factor; ``w[1] == w[0]`` when all rows share one probability row); 77 (weights in
  float64); 88, 100 (Gram doubled); 106, 108, 109, 111, 116 (ridge size or sign: a
  successful Cholesky factor is positive definite, a failure moves to the next stage, the
  diagonal stage is positive); 120, 124 (no overwrite: memory only); 121, 125, 127
  (``check_finite``: ``G`` is finite, penalties are capped at 1e300); 138 (diagonal floor 1);
  144, 146 (``strtri`` reading the upper triangle: the inverse of the diagonal); 151
  (rebuilt after every step).
- ``_cg`` 1, 15, 16 (step cap 501, 498, 502) and 12, 14 (step count from 0 or 2: when the
  preconditioner is rebuilt): path only. 19 (Hessian product in float64): path only. 40
  (``rs >= 0``): ``rs = |L^-1 r|^2`` is 0 only when ``S = 0``; then ``Dir = 0`` and ``curv =
  0`` stop the loop with the same ``D``. 54 (``<`` at the residual test): equality only; one
  more CG step.
- ``_newton`` 16 (``1e+300``): the same number. 30 (ties between starts go to the later):
  path only. 34 (``g0 = ""``): ``"" or gnorm`` is ``gnorm``. 50 (``G += mean``): the rows of
  ``G`` sum to 0 up to rounding (rows of ``P`` and ``Y`` sum to 1, of ``Theta`` to 0) and the
  preconditioner projects its output, so ``D`` changes at rounding level. 87 (``P``
  ``astype(None)``), 94, 96 (CG forcing term ``min(1.5, .)``, ``sqrt(|g| |g0|)``: both -> 0
  near the optimum), 97, 98 (when the preconditioner is rebuilt): path only. 108, 110, 111
  (stopping test at 1/4, 1.5 x or strictly below the bound): after the last full Newton step
  the remaining error is of the order of the decrement squared, far below ``tol`` x the
  objective. 130 (``f_new <`` the Armijo bound): differs only on equality, a step that
  changes the objective by less than its rounding. 140 (``t <= 1e-10``): t is a power of
  two, never 1e-10.
- ``LinearProbe._fit`` 53, 59 (which C's preconditioner the refit starts from): path only.
  61 (``default=-2.0``): scores are >= 0, so the first always exceeds either default.
- ``LinearProbe._path`` 8, 10, 12, 14, 20, 21, 40, 41, 42, 43: the extrapolated start is one
  candidate, used only when its objective is below the previous solution's; these change or
  drop that candidate: path only.

Not judged equivalent, and not killed (each needs a degenerate solver state no finite test
input is known to reach): ``_cg`` 38 (``curv >= 0``: a zero curvature along a nonzero
direction); ``_newton`` 103-106 (``slope <= 0`` / ``< 1`` and ``n_iter_`` after a CG
breakdown), 131 (Armijo accepting small increases), 139 (a failed line search before the
last step); ``_Preconditioner.build`` 55 (one row fewer: none when two rows hold 99.9% of a
block's trace), 101 (``X / w``: infinite when a probability is exactly 0 or 1 and the float32
factorization failed).

Note: pyproject's ``filterwarnings`` turns RuntimeWarnings raised in embdiag into errors, so a
mutant that divides by zero or overflows is killed by any test that reaches it.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.linalg import LinAlgError
from scipy.special import log_softmax
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.preprocessing import StandardScaler

from embdiag.metrics import probe as probe_module
from embdiag.metrics.labels import balanced_accuracy, eligible_classes
from embdiag.metrics.probe import (
    LinearProbe,
    _objective,
    _Preconditioner,
    _Representation,
    _row_space,
    _stratified_split,
    fit_probes,
    majority_floor,
)


def blobs(seed, n=600, d=40, k=3, signal=0.6, offset=0.0):
    """Correlated, anisotropic features (like embeddings) with a weak class signal."""
    rng = np.random.default_rng(seed)
    y = rng.choice(k, n, p=np.linspace(2, 1, k) / np.linspace(2, 1, k).sum())
    mix = rng.standard_normal((d, d)) * np.exp(-np.arange(d) / 8)
    X = rng.standard_normal((n, d)) @ mix + signal * rng.standard_normal((k, d))[y] + offset
    return X, y


def objective(coef, intercept, Xs, y, C):
    """scikit-learn's multinomial objective: C * sum of cross-entropies + ||W||^2 / 2."""
    L = log_softmax(Xs @ coef.T + intercept, axis=1)
    return C * -L[np.arange(len(y)), y].sum() + 0.5 * np.sum(coef**2)


# ----------------------------------------------------------------------------- helpers


def test_eligible_classes_and_majority_floor():
    y = np.array(["a"] * 12 + ["b"] * 9 + ["c"] * 10)
    assert eligible_classes(y).tolist() == ["a", "c"]
    assert eligible_classes(y, min_support=9).tolist() == ["a", "b", "c"]
    assert eligible_classes(y, min_support=1).tolist() == ["a", "b", "c"]  # the smallest allowed
    assert majority_floor(y) == pytest.approx(12 / 31)


def test_balanced_accuracy_matches_sklearn():
    rng = np.random.default_rng(0)
    y_true, y_pred = rng.integers(0, 4, 500), rng.integers(0, 4, 500)
    assert balanced_accuracy(y_true, y_pred, [0, 1, 2, 3]) == pytest.approx(balanced_accuracy_score(y_true, y_pred))
    # frozen classes: samples of class 3 are ignored, predictions of class 3 count as errors
    keep = y_true != 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns that y_pred has a class absent from y_true
        expected = balanced_accuracy_score(y_true[keep], y_pred[keep])
    assert balanced_accuracy(y_true, y_pred, [2, 0, 1]) == pytest.approx(expected)


def test_balanced_accuracy_bad_input():
    # every message starts with the name of the argument at fault
    with pytest.raises(ValueError, match="^classes: needs at least 2"):
        balanced_accuracy([0, 1], [0, 1], [0])
    with pytest.raises(ValueError, match="^classes: class 5 has no samples"):
        balanced_accuracy([0, 1], [0, 1], [0, 5])
    with pytest.raises(ValueError, match="^classes: expected a 1-D"):
        balanced_accuracy([0, 1], [0, 1], [[0, 1]])
    with pytest.raises(ValueError, match="^length mismatch"):
        balanced_accuracy([0, 1, 1], [0, 1], [0, 1])
    with pytest.raises(ValueError, match="^y_true: empty"):
        balanced_accuracy([], [], [0, 1])
    with pytest.raises(ValueError, match="^y_pred: expected a 1-D"):
        balanced_accuracy([0, 1], [[0, 1]], [0, 1])
    with pytest.raises(ValueError, match="^min_support: must be at least 1"):
        eligible_classes([0, 1], min_support=0)


# ----------------------------------------------------------------------------- the probe


@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_matches_sklearn_logistic_regression(C):
    X, y = blobs(1)
    Xtr, ytr, Xte = X[:400], y[:400], X[400:]
    ours = LinearProbe(Cs=[C]).fit(Xtr, ytr)
    sc = StandardScaler().fit(Xtr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(C=C, tol=1e-10, max_iter=10_000).fit(sc.transform(Xtr), ytr)
    agree = np.mean(ours.predict(Xte) == sk.predict(sc.transform(Xte)))
    assert agree >= 0.99
    # same objective, reached to within 1e-4 of a tightly converged sklearn (tol=1e-10)
    W = ours.coef_ * sc.scale_
    b = ours.intercept_ + ours.coef_ @ sc.mean_
    ours_obj = objective(W, b, sc.transform(Xtr), ytr, C)
    sk_obj = objective(sk.coef_, sk.intercept_, sc.transform(Xtr), ytr, C)
    assert ours_obj <= sk_obj * (1 + 1e-4)
    assert np.allclose(ours.predict_proba(Xte), sk.predict_proba(sc.transform(Xte)), atol=0.02)
    # the optimum's weights (and intercepts) sum to zero over the classes, as scikit-learn's do
    assert np.abs(ours.coef_.sum(axis=0)).max() <= 1e-12 * np.abs(ours.coef_).max()
    assert abs(ours.intercept_.sum()) <= 1e-12 * np.abs(ours.intercept_).max()


def test_reduced_basis_is_exact_when_n_below_d():
    # n < d: the optimum lies in the row span; compare with sklearn in the full space.
    X, y = blobs(2, n=80, d=200, k=3, signal=1.0)
    ours = LinearProbe(Cs=[0.5], standardize=False).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(C=0.5, tol=1e-12, max_iter=20_000).fit(X, y)
    assert objective(ours.coef_, ours.intercept_, X, y, 0.5) <= objective(sk.coef_, sk.intercept_, X, y, 0.5) * (
        1 + 1e-6
    )
    assert np.allclose(ours.coef_, sk.coef_, atol=1e-3 * np.abs(sk.coef_).max())


def test_grid_selection_and_determinism():
    X, y = blobs(3, signal=0.3)
    p = LinearProbe().fit(X, y)
    assert p.val_scores_.shape == (7,)
    assert p.C_ == LinearProbe.Cs_default[np.argmax(p.val_scores_)]
    assert p.classes_.tolist() == [0, 1, 2]
    q = LinearProbe().fit(X, y)
    assert np.array_equal(p.coef_, q.coef_) and np.array_equal(p.val_scores_, q.val_scores_)
    # the refit used all training data at the chosen C
    r = LinearProbe(Cs=[p.C_]).fit(X, y)
    assert np.mean(r.predict(X) == p.predict(X)) > 0.99
    assert p.score(X, y) == pytest.approx(np.mean(p.predict(X) == y))
    assert clone(p).get_params() == p.get_params()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("patience", [1, 2, 3])
def test_patience_stops_the_path_after_that_many_values_below_the_best(seed, patience):
    # the path stopped early is the full path's prefix; it stops at the first value where
    # `patience` values after the best so far score below it; the chosen C and the refit are the
    # full grid's whenever the full grid's best lies in that prefix
    X, y = blobs(seed, n=300, d=30, signal=[0.2, 0.4, 0.8][seed % 3])
    full = LinearProbe().fit(X, y)
    early = LinearProbe(patience=patience).fit(X, y)
    scores = full.val_scores_
    below, stop = 0, len(scores)
    for i in range(1, len(scores)):
        best = scores[:i].max()
        below = 0 if scores[i] > best else below + (scores[i] < best)
        if below == patience:
            stop = i + 1
            break
    assert np.array_equal(early.val_scores_[:stop], scores[:stop])
    assert np.isnan(early.val_scores_[stop:]).all()
    if np.argmax(scores) < stop:
        assert early.C_ == full.C_ and np.array_equal(early.coef_, full.coef_)
    else:
        assert early.C_ == full.Cs_[np.argmax(scores[:stop])]


def test_patience_can_stop_before_a_later_best(monkeypatch):
    # validation accuracies 0.9, 0.8, 0.7, then 0.95: patience 2 stops after the third C and keeps
    # the first (the accuracy is the mean of a boolean vector, given here in turn)
    scores, calls, mean = iter([0.9, 0.8, 0.7, 0.95]), [], np.mean

    def fake_path(design, yi, K, Cs, Theta, pre):
        for C in Cs:
            calls.append(C)
            yield C, Theta, 0

    p = LinearProbe(patience=2)
    monkeypatch.setattr(p, "_path", fake_path)
    monkeypatch.setattr(np, "mean", lambda a, *args, **kw: next(scores) if a.dtype == bool else mean(a, *args, **kw))
    p.fit(*blobs(3, n=200, d=10))
    assert calls == [*LinearProbe.Cs_default[:3], LinearProbe.Cs_default[0]]  # three on the path, then the refit
    assert p.C_ == LinearProbe.Cs_default[0] and np.isnan(p.val_scores_[3:]).all()


def test_grid_is_sorted_without_repeats():
    # A repeated C is solved once (it used to divide by zero in the path's extrapolation);
    # 0.1 and 10 next to each other must not either.
    X, y = blobs(9, n=200, d=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = LinearProbe(Cs=[10.0, 0.1, 100.0, 10.0]).fit(X, y)
    q = LinearProbe(Cs=[0.1, 10.0, 100.0]).fit(X, y)
    assert p.Cs_.tolist() == [0.1, 10.0, 100.0] and np.array_equal(p.val_scores_, q.val_scores_)
    assert p.C_ == q.C_ and np.array_equal(p.coef_, q.coef_)


def test_string_labels_and_proba():
    X, y = blobs(4)
    names = np.array(["night", "day", "dawn"])[y]
    p = LinearProbe(Cs=[1.0]).fit(X, names)
    assert set(p.predict(X)) <= set(names)
    P = p.predict_proba(X)
    assert np.allclose(P.sum(axis=1), 1) and p.classes_[np.argmax(P, axis=1)].tolist() == p.predict(X).tolist()


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(1e-3, 1e3), st.floats(-50, 50))
def test_standardized_probe_ignores_scaling_and_offset(seed, c, shift):
    X, y = blobs(seed % 1000, n=300, d=12)
    offset = shift * np.linspace(-1, 1, 12)
    p = LinearProbe(Cs=[0.1, 10.0]).fit(X, y)
    q = LinearProbe(Cs=[0.1, 10.0]).fit(c * X + offset, y)
    assert p.C_ == q.C_
    assert np.mean(p.predict(X) == q.predict(c * X + offset)) >= 0.99


def test_bad_input():
    # every message starts with the name of the argument at fault
    X, y = blobs(5, n=100)
    with pytest.raises(ValueError, match="^y: needs at least 2 classes"):
        LinearProbe().fit(X, np.zeros(100))
    with pytest.raises(ValueError, match="^length mismatch"):
        LinearProbe().fit(X, y[:50])
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match="^X: contains NaN"):
        LinearProbe().fit(Xn, y)
    with pytest.raises(ValueError, match="^X: expected a 2-D"):
        LinearProbe().fit(X[:, 0], y)
    with pytest.raises(ValueError, match="^X: needs at least 1"):
        LinearProbe().fit(X[:0], y[:0])
    for Cs in ([0.0, 1.0], [np.inf], [1.0, np.nan], [], [[0.1, 1.0]]):
        with pytest.raises(ValueError, match="^Cs: expected a non-empty 1-D grid"):
            LinearProbe(Cs=Cs).fit(X, y)
    with pytest.raises(ValueError, match="^val_size"):
        LinearProbe(val_size=1.5).fit(X, y)
    p = LinearProbe(Cs=[1.0]).fit(X, y)
    with pytest.raises(ValueError, match="^X: has 39 features"):
        p.predict(X[:, 1:])
    with pytest.raises(ValueError, match="^X: contains NaN"):
        p.predict(Xn)
    with pytest.raises(ValueError, match="^length mismatch"):
        p.score(X, y[:-1])
    with pytest.raises(ValueError, match="^length mismatch"):
        p.score(X, y[:1])  # would broadcast


def test_integer_and_float16_features():
    X, y = blobs(6, n=200, d=10)
    Xi = np.round(X * 10).astype(np.int32)
    a = LinearProbe(Cs=[1.0]).fit(Xi, y).predict(Xi)
    b = LinearProbe(Cs=[1.0]).fit(Xi.astype(np.float64), y).predict(Xi.astype(np.float64))
    assert np.array_equal(a, b)
    h = LinearProbe(Cs=[1.0]).fit(X.astype(np.float16), y)
    assert h.score(X.astype(np.float16), y) > 0.5


# ----------------------------------------------------------------------------- scikit-learn contract


def test_predict_before_fit_raises_not_fitted():
    X, y = blobs(7, n=20)
    for method in ("predict", "predict_proba", "decision_function"):
        with pytest.raises(NotFittedError):
            getattr(LinearProbe(), method)(X)
    # a fit that failed after reading the labels leaves the probe unfitted, too
    failed = LinearProbe(Cs=[-1.0])
    with pytest.raises(ValueError, match="^Cs: "):
        failed.fit(X, y)
    with pytest.raises(NotFittedError):
        failed.predict(X)


@pytest.mark.parametrize(
    "param, bad",
    [
        ("max_iter", -1),
        ("max_iter", 0),
        ("max_iter", 2.5),
        ("max_iter", True),
        ("tol", -1),
        ("tol", 0.0),
        ("tol", np.nan),
        ("tol", "small"),
        ("standardize", "no"),
        ("standardize", 1),
        ("standardize", None),
        ("random_state", -1),
        ("random_state", 1.5),
        ("val_size", 0.0),
        ("val_size", 1.0),
        ("val_size", "half"),
        ("patience", 0),
        ("patience", 1.5),
    ],
)
def test_constructor_stores_and_fit_validates(param, bad):
    X, y = blobs(8, n=100)
    p = LinearProbe(**{param: bad})  # scikit-learn's rule: __init__ only stores
    assert p.get_params()[param] is bad
    with pytest.raises(ValueError, match=f"^{param}: "):
        p.fit(X, y)


# Checks of scikit-learn's common suite that LinearProbe fails on purpose, with the reason.
_MESSAGE = "embdiag's messages name the argument (e.g. 'X: expected a 2-D array'), not scikit-learn's wording"
EXPECTED_FAILED_CHECKS = {
    "check_n_features_in_after_fitting": _MESSAGE,
    "check_complex_data": _MESSAGE,
    "check_estimators_empty_data_messages": _MESSAGE,
    "check_fit2d_predict1d": _MESSAGE,
    "check_fit2d_1sample": _MESSAGE,
    "check_requires_y_none": _MESSAGE,
    "check_classifiers_regression_target": _MESSAGE + "; float labels are accepted as classes",
    "check_dtype_object": "object arrays are refused on purpose (embdiag._validate.as_float)",
    "check_estimator_sparse_tag": "dense embeddings only; sparse input is refused in embdiag's wording",
    "check_estimator_sparse_array": "dense embeddings only; sparse input is refused in embdiag's wording",
    "check_estimator_sparse_matrix": "dense embeddings only; sparse input is refused in embdiag's wording",
    "check_supervised_y_2d": "a 2-D y is refused, not raveled with a warning",
    "check_classifiers_classes": "decision_function has one logit column per class also for two classes",
    "check_classifiers_train": "decision_function has one logit column per class also for two classes",
}


@parametrize_with_checks([LinearProbe(Cs=[1.0])], expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS)
def test_scikit_learn_common_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


# ----------------------------------------------------------------------------- against scikit-learn's coefficients


def _sklearn_reference(X, y, C):
    """scikit-learn's fit of the same objective; two classes as the equivalent binary
    problem (columns summing to zero, ``w = W_1 - W_0``, penalty ``||w||^2 / 4``: C doubled)."""
    two = len(np.unique(y)) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(C=2 * C if two else C, tol=1e-13, max_iter=100_000).fit(X, y)
    return sk.coef_, sk.intercept_, two


@pytest.mark.parametrize("n, d", [(30, 60), (60, 60), (61, 60), (150, 60)])
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("scale", [1.0, 0.01])
def test_coefficients_match_sklearn(n, d, k, scale):
    # n < d, n = d (also n = d after centering: 61 rows), n > d; small-scale data keeps every
    # Gram eigenvalue below 1, so a basis that drops directions shows up in the coefficients.
    X, y = blobs(10 + n + k, n=n, d=d, k=k, signal=1.0)
    X = X * scale
    C = 10.0
    p = LinearProbe(Cs=[C], standardize=False, tol=1e-12, max_iter=20_000).fit(X, y)
    coef, intercept, two = _sklearn_reference(X, y, C)
    ours_coef = p.coef_[1:] - p.coef_[:1] if two else p.coef_
    ours_b = p.intercept_[1:] - p.intercept_[:1] if two else p.intercept_ - p.intercept_.mean()
    ref_b = intercept if two else intercept - intercept.mean()
    assert np.allclose(ours_coef, coef, rtol=0, atol=1e-4 * np.abs(coef).max())
    assert np.allclose(ours_b, ref_b, rtol=0, atol=1e-4 * max(1.0, np.abs(ref_b).max()))
    if two:
        assert p.predict_proba(X).shape == (n, 2) and set(p.predict(X)) <= {0, 1}


def test_refit_on_all_rows_uses_their_own_basis_when_n_below_d():
    # The validation split has fewer rows, so its basis spans less than the full training
    # set's row space: the refit at C_ must equal a fresh fit at C_ on all rows.
    X, y = blobs(11, n=50, d=120, k=3, signal=1.0)
    p = LinearProbe(Cs=[0.1, 1.0, 10.0], standardize=False, tol=1e-12, max_iter=20_000).fit(X, y)
    coef, intercept, _ = _sklearn_reference(X, y, p.C_)
    assert np.allclose(p.coef_, coef, rtol=0, atol=1e-4 * np.abs(coef).max())


def test_validation_scores_are_held_out_accuracies():
    # Independent reference: scikit-learn fitted on the same split, scored on the held-out part.
    X, y = blobs(12, n=400, d=20, k=3, signal=0.8)
    Cs = [1e-3, 1e-2, 1e-1, 1.0]
    p = LinearProbe(Cs=Cs).fit(X, y)
    fit, val = _stratified_split(y, 0.2, 0)
    sc = StandardScaler().fit(X[fit])
    for C, score in zip(Cs, p.val_scores_):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sk = LogisticRegression(C=C, tol=1e-10, max_iter=10_000).fit(sc.transform(X[fit]), y[fit])
        assert score == pytest.approx(sk.score(sc.transform(X[val]), y[val]), abs=2 / len(val))
    assert p.val_scores_.max() > 0.6 > majority_floor(y[val])
    assert p.C_ == Cs[int(np.argmax(p.val_scores_))]  # the best C, lowest on ties


def test_stratified_split_holds_out_every_class():
    y = np.repeat([0, 1, 2, 3], [1, 3, 2, 10])
    fit, val = _stratified_split(y, 0.2, 5)
    assert np.array_equal(np.sort(np.concatenate([fit, val])), np.arange(len(y)))
    # per class: round(0.2 n) clipped to [1, n - 1]; a single-member class stays in fit
    assert np.bincount(y[val], minlength=4).tolist() == [0, 1, 1, 2]
    assert np.bincount(y[fit], minlength=4).tolist() == [1, 2, 1, 8]
    assert np.array_equal(_stratified_split(y, 0.2, 5)[1], val)


def test_two_class_probe_with_ties_keeps_the_smaller_C():
    X, y = blobs(13, n=200, d=8, k=2, signal=3.0)
    p = LinearProbe(Cs=[1.0, 10.0, 100.0]).fit(X, y)
    assert p.classes_.tolist() == [0, 1] and p.coef_.shape == (2, 8)
    best = np.flatnonzero(p.val_scores_ == p.val_scores_.max())
    assert p.C_ == p.Cs_[best[0]]


# ----------------------------------------------------------------------------- the solver


def _standardized_objectives(p, X, y, C):
    """The probe's objective on standardized ``X`` and that of scikit-learn's tightly converged
    fit there; also that fit and the standardized ``X``."""
    sc = StandardScaler().fit(X)
    Xs = sc.transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(C=C, tol=1e-12, max_iter=100_000, solver="newton-cholesky").fit(Xs, y)
    ours = objective(p.coef_ * sc.scale_, p.intercept_ + p.coef_ @ sc.mean_, Xs, y, C)
    return ours, objective(sk.coef_, sk.intercept_, Xs, y, C), sk, Xs


@pytest.mark.parametrize("C", [1e-3, 0.1, 10.0, 1000.0])
def test_objective_within_1e9_of_a_tightly_converged_sklearn(C):
    # The stated tolerance: the refit's objective is within 1e-9 (relative) of the optimum.
    X, y = blobs(14, n=500, d=30, k=4, signal=0.5)
    p = LinearProbe(Cs=[C]).fit(X, y)
    ours, best, sk, Xs = _standardized_objectives(p, X, y, C)
    assert ours <= best * (1 + 1e-9)
    assert np.mean(p.predict(X) == sk.predict(Xs)) >= 0.995


def test_rank_deficient_features_match_sklearn():
    # n > d but rank 12 of 40 (like the reference encoder's 257 of 768): the eigenbasis path.
    rng = np.random.default_rng(15)
    y = rng.integers(0, 3, 400)
    Z = rng.standard_normal((400, 12)) + 0.8 * rng.standard_normal((3, 12))[y]
    X = Z @ rng.standard_normal((12, 40))
    C = 1.0
    p = LinearProbe(Cs=[C], standardize=False, tol=1e-12).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(X, y)
    assert objective(p.coef_, p.intercept_, X, y, C) <= objective(sk.coef_, sk.intercept_, X, y, C) * (1 + 1e-9)
    assert np.allclose(p.coef_ - p.coef_.mean(0), sk.coef_ - sk.coef_.mean(0), atol=1e-4 * np.abs(sk.coef_).max())


@pytest.mark.parametrize("c", [1e100, 1e-100])
def test_extreme_magnitudes_without_standardizing(c):
    # Unstandardized, C * CE(c X W') + ||W'||^2 / 2 is the problem at C c^2 on X, with W = c W'.
    X, y = blobs(16, n=300, d=20)
    a = LinearProbe(standardize=False, Cs=[1.0 / c**2]).fit(c * X, y)
    b = LinearProbe(standardize=False, Cs=[1.0]).fit(X, y)
    assert np.array_equal(a.predict(c * X), b.predict(X))
    np.testing.assert_allclose(a.coef_ * c, b.coef_, rtol=0, atol=1e-6 * np.abs(b.coef_).max())


def test_tight_tolerance_terminates():
    # Past double precision the decrement stops shrinking; the solver must still stop.
    X, y = blobs(17, n=300, d=20, k=3, signal=2.0)
    p = LinearProbe(Cs=[1e4], tol=1e-15, max_iter=60).fit(X, y)
    assert p.n_iter_ < 60


def test_fit_probes_equals_fitting_each_alone():
    X, y = blobs(18, n=500, d=30, k=4, signal=0.5)
    rng = np.random.default_rng(18)
    labels = {"first": y, "second": np.array(["a", "b"])[rng.integers(0, 2, 500)], "third": (y + X[:, 0] > 1)}
    for params in ({}, {"standardize": False, "Cs": [0.1, 10.0]}):
        together = fit_probes(X, labels, **params)
        assert list(together) == list(labels)
        for name, y_ in labels.items():
            alone = LinearProbe(**params).fit(X, y_)
            got = together[name]
            assert got.get_params() == alone.get_params() and got.C_ == alone.C_
            assert np.array_equal(got.val_scores_, alone.val_scores_)
            assert np.array_equal(got.coef_, alone.coef_) and np.array_equal(got.intercept_, alone.intercept_)


def test_fit_probes_bad_input():
    X, y = blobs(19, n=100)
    with pytest.raises(ValueError, match=r"^labels\['bad'\]: needs at least 2 classes"):
        fit_probes(X, {"ok": y, "bad": np.zeros(100)})
    with pytest.raises(ValueError, match=r"^length mismatch: X has 100, labels\['short'\] has 50$"):
        fit_probes(X, {"short": y[:50]})
    with pytest.raises(ValueError, match="^labels: expected a mapping of attribute names to labels, got list$"):
        fit_probes(X, [y])
    with pytest.raises(ValueError, match=r"^X: largest magnitude \S+e\+20\d is outside \[2\^-500, 2\^500\]"):
        fit_probes(X * 1e200, {"ok": y})
    with pytest.raises(ValueError, match="^tol: "):
        fit_probes(X, {"ok": y}, tol=-1)
    with pytest.raises(ValueError, match="^X: expected a 2-D"):
        fit_probes(X[:, 0], {"ok": y})


# ---------------------------------------------------------------------------- the validation fits and the refit's start


def _case(name):
    """Data for each kind of representation: full rank (identity basis), n < d, rank-deficient
    with n > d (both a reduced basis), and a feature constant on the fit rows of the split but
    not on all rows (a zero column in the fit rows' design)."""
    if name == "full rank":
        return blobs(20, n=150, d=12, k=3, signal=1.0)
    if name == "n < d":
        return blobs(21, n=40, d=60, k=3, signal=1.0)
    if name == "rank-deficient":
        rng = np.random.default_rng(22)
        y = rng.integers(0, 3, 150)
        Z = rng.standard_normal((150, 8)) + rng.standard_normal((3, 8))[y]
        return Z @ rng.standard_normal((8, 30)), y
    X, y = blobs(23, n=150, d=12, k=3, signal=1.0)
    _, val = _stratified_split(y, 0.2, 0)
    X[:, 3] = 0.5
    X[val[:4], 3] = [1.0, 2.0, -1.0, 3.0]
    return X, y


@pytest.mark.parametrize("case", ["full rank", "n < d", "rank-deficient", "constant on the fit rows"])
@pytest.mark.parametrize("standardize", [True, False])
def test_validation_fits_equal_fits_on_the_fit_rows_alone(case, standardize):
    # The grid is solved on the fit rows, standardized by their own statistics, in the basis
    # of all rows: each C's solution must be the probe fitted on the fit rows alone, and the
    # held-out accuracies its scores on the validation rows.
    X, y = _case(case)
    fit, val = _stratified_split(y, 0.2, 0)
    params = dict(standardize=standardize, tol=1e-12, max_iter=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, division by zero or invalid value anywhere
        grid = LinearProbe(Cs=[0.1, 10.0], **params).fit(X, y)
        alone = {C: LinearProbe(Cs=[C], **params).fit(X[fit], y[fit]) for C in grid.Cs_}
    assert grid.val_scores_.tolist() == [alone[C].score(X[val], y[val]) for C in grid.Cs_]
    # the same solution in the original feature space, and the refit's warm start (in the
    # design of all rows) gives the same logits on every row
    rep = _Representation(X.astype(np.float64), standardize)
    design, full = rep.design(fit), rep.design()
    C = 10.0
    _, Theta, _ = next(grid._path(design, y[fit], 3, [C], design.cold_start(y[fit], 3), _Preconditioner()))
    W, b = design.to_original(Theta)
    ref = alone[C]
    assert np.allclose(W.T, ref.coef_, rtol=0, atol=1e-6 * np.abs(ref.coef_).max())
    assert np.allclose(b - b.mean(), ref.intercept_ - ref.intercept_.mean(), rtol=0, atol=1e-6)
    logits = X @ W + b
    start = full.start_from(design, Theta)
    assert np.allclose(full.Xt1 @ start, logits, rtol=0, atol=1e-9 * np.abs(logits).max())


def test_a_long_step_along_the_grid_is_damped_to_the_optimum():
    # From C = 0.01 to C = 1e6 the Newton steps overshoot and are halved several times:
    # the solutions must still be the optimum (scikit-learn at a tight tolerance).
    X, y = blobs(3, n=90, d=10, k=3, signal=1.0)
    fit, val = _stratified_split(y, 0.2, 0)
    grid = LinearProbe(Cs=[0.01, 1e6], tol=1e-12).fit(X, y)
    alone = [LinearProbe(Cs=[C], tol=1e-12).fit(X[fit], y[fit]) for C in grid.Cs_]
    assert grid.val_scores_.tolist() == [a.score(X[val], y[val]) for a in alone]
    sc = StandardScaler().fit(X)
    Xs = sc.transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(C=grid.C_, tol=1e-12, max_iter=100_000, solver="newton-cholesky").fit(Xs, y)
    ours = objective(grid.coef_ * sc.scale_, grid.intercept_ + grid.coef_ @ sc.mean_, Xs, y, grid.C_)
    assert ours <= objective(sk.coef_, sk.intercept_, Xs, y, grid.C_) * (1 + 1e-9)


# ----------------------------------------------------------------------------- degenerate data


@pytest.mark.parametrize("standardize", [True, False])
def test_features_without_information_give_the_class_prior(standardize):
    # Constant features: the coefficients are exactly 0 and the probabilities the class
    # shares (the intercept is not penalized). Classes of 7 and 8 leave 6 and 6 on the fit
    # rows: there the cold start is already the optimum (no Newton step, no preconditioner
    # built), and the refit on all rows must still converge to 7/15 and 8/15.
    X = np.full((15, 4), 3.0)
    y = np.repeat([0, 1], [7, 8])
    p = LinearProbe(Cs=[0.1, 1.0, 10.0], standardize=standardize, tol=1e-12).fit(X, y)
    assert np.all(p.coef_ == 0)
    np.testing.assert_allclose(p.predict_proba(X[:1]), [[7 / 15, 8 / 15]], rtol=1e-9)
    assert p.val_scores_.tolist() == [1 / 3] * 3 and p.C_ == 0.1  # ties: all predict class 0
    # balanced classes: the cold start (centered log counts) is the optimum, reached in 0 steps
    q = LinearProbe(Cs=[1.0], standardize=standardize).fit(X[1:11], y[1:11] * 0 + np.arange(10) % 2)
    assert q.n_iter_ == 0 and np.all(q.coef_ == 0) and np.all(q.intercept_ == 0)


def test_max_iter_caps_the_newton_steps():
    X, y = blobs(25, n=200, d=10, k=3, signal=1.0)
    sc = StandardScaler().fit(X)
    f = []
    for m in (1, 2, 100):
        p = LinearProbe(Cs=[1.0], tol=1e-14, max_iter=m).fit(X, y)
        assert p.n_iter_ == m if m < 100 else 3 <= p.n_iter_ < 100
        f.append(objective(p.coef_ * sc.scale_, p.intercept_ + p.coef_ @ sc.mean_, sc.transform(X), y, 1.0))
    assert f[0] > f[1] > f[2]


def test_a_class_with_a_single_sample():
    # The class's one sample stays on the fit rows (no validation recall for it), and the
    # coefficients are scikit-learn's.
    X, y = blobs(24, n=60, d=5, k=3, signal=1.5)
    y[7] = 3
    fit, val = _stratified_split(y, 0.2, 0)
    assert 7 in fit and np.isin([0, 1, 2], y[val]).all()
    p = LinearProbe(Cs=[1.0], tol=1e-12).fit(X, y)
    sc = StandardScaler().fit(X)
    coef, intercept, _ = _sklearn_reference(sc.transform(X), y, 1.0)
    assert np.allclose(p.coef_ * sc.scale_, coef, rtol=0, atol=1e-6 * np.abs(coef).max())
    g = LinearProbe(Cs=[0.1, 1.0], tol=1e-12).fit(X, y)
    assert g.classes_.tolist() == [0, 1, 2, 3] and np.isfinite(g.coef_).all()
    assert np.allclose(
        g.coef_, LinearProbe(Cs=[g.C_], tol=1e-12).fit(X, y).coef_, rtol=0, atol=1e-6 * np.abs(g.coef_).max()
    )


def test_smallest_data_for_a_grid():
    X, _ = blobs(26, n=3, d=4)
    # one held-out row is enough to choose C
    p = LinearProbe(Cs=[0.1, 1.0]).fit(X, [0, 0, 1])
    assert set(p.val_scores_) <= {0.0, 1.0}
    # every class a single sample: no validation split is possible, but a single C needs none
    with pytest.raises(ValueError, match="^y: too few samples per class for a validation split"):
        LinearProbe(Cs=[0.1, 1.0]).fit(X, [0, 1, 2])
    q = LinearProbe(Cs=[1.0]).fit(X, [0, 1, 2])
    assert q.val_scores_.shape == (1,) and np.isnan(q.val_scores_).all() and q.C_ == 1.0
    assert q.predict(X).tolist() == [0, 1, 2]


@pytest.mark.parametrize("val_size", [0.2, 0.5, 0.9])
def test_stratified_split_keeps_every_class_on_both_sides(val_size):
    y = np.repeat(np.arange(6), [1, 2, 3, 4, 7, 20])
    fit, val = _stratified_split(y, val_size, 3)
    counts = np.bincount(y)
    # per class round(val_size * n) held out, at least one and leaving one (none of a single sample)
    expected = [0 if c < 2 else min(c - 1, max(1, int(round(val_size * c)))) for c in counts]
    assert np.bincount(y[val], minlength=6).tolist() == expected
    assert np.bincount(y[fit], minlength=6).tolist() == (counts - expected).tolist()
    assert np.intersect1d(fit, val).size == 0


def test_constant_features_are_ignored():
    # A constant column (standard deviation 0) changes nothing, with or without standardizing.
    X, y = blobs(27, n=120, d=6, k=3, signal=1.0)
    Xc = np.insert(X, 2, 7.25, axis=1)
    for standardize in (True, False):
        p = LinearProbe(Cs=[1.0], standardize=standardize, tol=1e-12).fit(Xc, y)
        q = LinearProbe(Cs=[1.0], standardize=standardize, tol=1e-12).fit(X, y)
        assert np.abs(p.coef_[:, 2]).max() <= 1e-12 * np.abs(q.coef_).max()  # rounding
        assert np.allclose(np.delete(p.coef_, 2, axis=1), q.coef_, rtol=0, atol=1e-8 * np.abs(q.coef_).max())
        assert np.allclose(p.decision_function(Xc), q.decision_function(X), rtol=0, atol=1e-8)


@pytest.mark.parametrize("n, d", [(8, 8), (12, 20)])
def test_duplicate_rows_at_n_equal_d_and_below(n, d):
    # The same embedding twice (e.g. a duplicated image): the rows are not independent, so the
    # basis must come from the rows that the factorization picked.
    rng = np.random.default_rng(28 + n)
    X = rng.standard_normal((n, d)) * np.linspace(3, 1, d)
    X[1] = X[0]
    X[3] = X[2]
    X[5] = X[4]
    y = np.arange(n) % 2
    C = 10.0
    p = LinearProbe(Cs=[C], standardize=False, tol=1e-13, max_iter=1000).fit(X, y)
    coef, intercept, _ = _sklearn_reference(X, y, C)
    assert np.allclose(p.coef_[1] - p.coef_[0], coef[0], rtol=0, atol=1e-5 * np.abs(coef).max())


@pytest.mark.parametrize("standardize", [True, False])
def test_offset_changes_only_the_intercept_when_n_below_d(standardize):
    # A common offset of all embeddings (here 1e4 times their spread) is removed by centering:
    # the same coefficients, the intercept shifted by -offset @ coef.
    X, y = blobs(29, n=40, d=70, k=3, signal=1.0)
    offset = 1e4 * np.linspace(-1, 2, 70)
    p = LinearProbe(Cs=[1.0], standardize=standardize, tol=1e-12).fit(X, y)
    q = LinearProbe(Cs=[1.0], standardize=standardize, tol=1e-12).fit(X + offset, y)
    assert np.allclose(q.coef_, p.coef_, rtol=0, atol=1e-6 * np.abs(p.coef_).max())
    assert np.allclose(q.decision_function(X + offset), p.decision_function(X), rtol=0, atol=1e-5)


def test_float32_and_integer_features_are_fitted_in_float64():
    # Embeddings often come as float32; integer features may exceed float32's 24-bit mantissa.
    X, y = blobs(30, n=120, d=6, k=3)
    for A in (X.astype(np.float32), (X * 1e6).astype(np.int64) + 2**40):
        p, q = (LinearProbe(Cs=[1.0]).fit(Z, y) for Z in (A, A.astype(np.float64)))
        assert np.array_equal(p.coef_, q.coef_) and np.array_equal(p.intercept_, q.intercept_)
        assert np.array_equal(p.decision_function(A), q.decision_function(A.astype(np.float64)))
        assert np.array_equal(fit_probes(A, {"y": y}, Cs=[1.0])["y"].coef_, q.coef_)
    g = LinearProbe(Cs=[1, 10]).fit(X, y)
    assert g.Cs_.dtype == np.float64 and isinstance(g.C_, float)


def test_extreme_regularization_pins_the_coefficients_without_overflow():
    # Tiny unstandardized features and C = 1e-300: the penalty weights overflow (capped at
    # 1e300), the coefficients are 0 to double precision and the probabilities the class shares.
    X, y = blobs(31, n=100, d=5, k=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = LinearProbe(Cs=[1e-300], standardize=False, tol=1e-12).fit(X * 1e-6, y)
    assert np.abs(p.coef_).max() < 1e-250
    np.testing.assert_allclose(p.predict_proba(X[:1] * 1e-6)[0], np.bincount(y) / len(y), rtol=1e-9)


# ----------------------------------------------------------------------------- numerical building blocks


def test_objective_is_exact_at_extreme_logits():
    # log-softmax per row, shifted by each row's own maximum: exact for logits of any size
    # and rows of very different size.
    rng = np.random.default_rng(32)
    Z = rng.standard_normal((5, 4)) * np.array([[1.0], [1e3], [1e5], [1.0], [1.0]]) + np.array(
        [[0], [0], [0], [1e3], [-1e4]]
    )
    Y = np.eye(4)[[0, 1, 2, 3, 0]]
    Theta, reg = rng.standard_normal((3, 4)), np.array([0.5, 2.0, 0.0])
    f, L = _objective(Z, Theta, Y, reg)
    ref = log_softmax(Z, axis=1)
    np.testing.assert_allclose(L, ref, rtol=1e-13, atol=1e-12)
    assert f == pytest.approx(-np.sum(ref * Y) / 5 + 0.5 * np.sum(reg[:, None] * Theta**2), rel=1e-13)


@pytest.mark.parametrize("scale", [1.0, 1e-200, 1e200])
@pytest.mark.parametrize("n, d, rank", [(30, 50, 29), (80, 20, 7)])
def test_row_space_basis_at_any_scale(scale, n, d, rank):
    # An orthonormal basis of the centered rows' span (rank from an SVD), whatever the scale.
    rng = np.random.default_rng(33)
    inner = n if n < d else rank  # centering removes one dimension when n < d
    X = rng.standard_normal((n, inner)) @ rng.standard_normal((inner, d))
    Xs = X - X.mean(axis=0)
    assert np.linalg.matrix_rank(Xs) == rank
    U = _row_space(Xs * scale)
    assert U.shape == (d, rank)
    np.testing.assert_allclose(U.T @ U, np.eye(rank), atol=1e-12)
    np.testing.assert_allclose(Xs @ U @ U.T, Xs, atol=1e-10 * np.abs(Xs).max())


@pytest.mark.parametrize("variances, rank", [([1, 1e-13, 1e-13], 1), ([1, 1e-11, 1e-13], 2), ([1, 1e-11, 1e-11], 3)])
@pytest.mark.parametrize("n", [4, 8])
def test_row_space_drops_directions_below_1e12_of_the_largest(variances, rank, n):
    # Orthogonal directions of the given variances: those below 1e-12 x the largest are
    # dropped, at least one is kept, and a full-rank span (n > d) is the identity (None).
    rng = np.random.default_rng(35)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)) - rng.standard_normal((n, n)).mean(axis=0))
    Z = Q[:, :3] - Q[:, :3].mean(axis=0)
    Z, _ = np.linalg.qr(Z)  # centered orthonormal columns
    V, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    Xs = (Z * np.sqrt(variances)) @ V[:3]  # rows in a 3-dimensional subspace of R^5
    U = _row_space(Xs)
    assert U.shape == (5, rank)
    np.testing.assert_allclose(U @ (U.T @ V[0]), V[0], atol=1e-6)  # the largest direction is in the span
    if n > 5:
        assert _row_space(np.column_stack([Xs, rng.standard_normal((n, 2)) * 1e-3])) is not None
        full = rng.standard_normal((n, 5))
        assert _row_space(full - full.mean(axis=0)) is None


@pytest.mark.parametrize("mode", ["float32 fails", "all fail"])
def test_preconditioner_fallbacks_reach_the_optimum(mode, monkeypatch):
    # Embeddings dominated by one common direction: the float32 block Cholesky of the
    # preconditioner is not positive definite and the float64 one takes over; if that failed
    # too, the diagonal would serve. Either way the solution is the optimum.
    rng = np.random.default_rng(34)
    y = rng.integers(0, 3, 100)
    X = rng.standard_normal((100, 1)) + 1e-4 * (rng.standard_normal((100, 20)) + rng.standard_normal((3, 20))[y])
    calls = {"failed": 0}
    cholesky = probe_module.cholesky

    def counted(G, **kwargs):
        if mode == "all fail":  # as LAPACK fails: the leading block factored in place (if allowed)
            G = G if kwargs.get("overwrite_a") else G.copy()
            G[-1, -1] = -1.0
        try:
            return cholesky(G, **kwargs)
        except LinAlgError:
            calls["failed"] += 1
            raise

    monkeypatch.setattr(probe_module, "cholesky", counted)
    C = 1e6  # weak regularization: the blocks are as ill-conditioned as the data
    p = LinearProbe(Cs=[C], tol=1e-12).fit(X, y)
    assert calls["failed"] > 0
    ours, best, _, _ = _standardized_objectives(p, X, y, C)
    assert ours <= best * (1 + 1e-9)


# ----------------------------------------------------------------------------- on the reference encoder's vectors


@pytest.fixture(scope="module")
def reference():
    from embdiag.encoders.vectors import driving_vectors

    v = driving_vectors("reference-cnn")
    return v, fit_probes(v.train, v.train_labels)


# C chosen by the probe before it became a Newton solver (L-BFGS, commit 841659e): the new solver
# must choose the same.
REFERENCE_C = {"weather": 0.01, "scene": 0.01, "timeofday": 1.0}


@pytest.mark.slow
def test_reference_vectors_choose_the_same_C_with_converged_validation_scores(reference):
    v, probes = reference
    assert {a: p.C_ for a, p in probes.items()} == REFERENCE_C
    tight = fit_probes(v.train, v.train_labels, tol=1e-12)
    for a, p in probes.items():
        assert np.array_equal(p.val_scores_, tight[a].val_scores_), a
        assert np.array_equal(p.predict(v.val), tight[a].predict(v.val)), a


@pytest.mark.slow
def test_reference_vectors_match_a_converged_sklearn_fit(reference):
    # scikit-learn's Newton solver at tol=1e-10 in the standardized training vectors' row space
    # (orthonormal basis from an SVD: the L2 optimum lies in it, so this is the same problem).
    # Weather and time of day: both chosen C values, 7 and 4 classes (~30 s each for sklearn).
    v, probes = reference
    sc = StandardScaler().fit(v.train)
    Xs, Xv = sc.transform(v.train), sc.transform(v.val)
    _, sv, vt = np.linalg.svd(Xs, full_matrices=False)
    V = vt[sv > sv[0] * 1e-6].T
    assert V.shape[1] < Xs.shape[1] // 2  # the encoder's vectors span a subspace
    for a in ("weather", "timeofday"):
        p, y = probes[a], v.train_labels[a]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sk = LogisticRegression(C=p.C_, tol=1e-10, max_iter=10_000, solver="newton-cholesky").fit(Xs @ V, y)
        W_sk = sk.coef_ @ V.T
        assert np.mean(p.predict(v.val) == sk.classes_[np.argmax(Xv @ W_sk.T + sk.intercept_, axis=1)]) >= 0.995, a
        ours = objective(
            p.coef_ * sc.scale_, p.intercept_ + p.coef_ @ sc.mean_, Xs, np.searchsorted(p.classes_, y), p.C_
        )
        theirs = objective(W_sk, sk.intercept_, Xs, np.searchsorted(sk.classes_, y), p.C_)
        assert ours <= theirs * (1 + 1e-9), a


@pytest.mark.parametrize("tiny", [1e-60, 1e-12, 1e-6])
def test_a_grid_that_starts_at_a_tiny_C_solves_every_C_as_a_cold_solve_does(tiny):
    # Issue #30: factors built at a tiny C precondition nothing at C = 1; CG stopped early and
    # Newton took its short step for convergence, 18x above the optimum, and chose the tiny C.
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 300)
    X = rng.normal(size=(4, 20))[y] + rng.normal(size=(300, 20))
    fit, val = _stratified_split(y, 0.2, 0)
    grid = LinearProbe(Cs=[tiny, 1.0]).fit(X, y)
    cold = {C: LinearProbe(Cs=[C]).fit(X[fit], y[fit]) for C in grid.Cs_}
    assert grid.val_scores_.tolist() == [cold[C].score(X[val], y[val]) for C in grid.Cs_]
    assert grid.C_ == 1.0 and grid.val_scores_[-1] > 0.95
    sc = StandardScaler().fit(X[fit])
    Xs = sc.transform(X[fit])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(C=1.0, tol=1e-12, max_iter=100_000, solver="newton-cholesky").fit(Xs, y[fit])
    # the path's solution at C = 1 on the fit rows (not only its score) is the optimum
    rep = _Representation(X.astype(np.float64), True)
    design = rep.design(fit)
    *_, (C, Theta, _) = grid._path(design, y[fit], 4, grid.Cs_, design.cold_start(y[fit], 4), _Preconditioner())
    W, b = design.to_original(Theta)
    ours = objective(W.T * sc.scale_, b + W.T @ sc.mean_, Xs, y[fit], C)
    assert ours <= objective(sk.coef_, sk.intercept_, Xs, y[fit], C) * (1 + 1e-9)
