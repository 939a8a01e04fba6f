import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.special import log_softmax
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.preprocessing import StandardScaler

from embdiag.metrics.probe import LinearProbe, balanced_accuracy, eligible_classes, fit_probes, majority_floor


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
    with pytest.raises(ValueError, match="classes: needs at least 2"):
        balanced_accuracy([0, 1], [0, 1], [0])
    with pytest.raises(ValueError, match="class 5 has no samples"):
        balanced_accuracy([0, 1], [0, 1], [0, 5])
    with pytest.raises(ValueError, match="length mismatch"):
        balanced_accuracy([0, 1, 1], [0, 1], [0, 1])
    with pytest.raises(ValueError, match="y_true: empty"):
        balanced_accuracy([], [], [0, 1])
    with pytest.raises(ValueError, match="min_support"):
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


def test_reduced_basis_is_exact_when_n_below_d():
    # n < d: the optimum lies in the row span; compare with sklearn in the full space.
    X, y = blobs(2, n=80, d=200, k=3, signal=1.0)
    ours = LinearProbe(Cs=[0.5], standardize=False).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(C=0.5, tol=1e-12, max_iter=20_000).fit(X, y)
    assert objective(ours.coef_, ours.intercept_, X, y, 0.5) <= objective(sk.coef_, sk.intercept_, X, y, 0.5) * (1 + 1e-6)
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
    X, y = blobs(5, n=100)
    with pytest.raises(ValueError, match="y: needs at least 2 classes"):
        LinearProbe().fit(X, np.zeros(100))
    with pytest.raises(ValueError, match="length mismatch"):
        LinearProbe().fit(X, y[:50])
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match="X: contains NaN"):
        LinearProbe().fit(Xn, y)
    with pytest.raises(ValueError, match="X: expected a 2-D"):
        LinearProbe().fit(X[:, 0], y)
    with pytest.raises(ValueError, match="X: needs at least 1"):
        LinearProbe().fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="Cs"):
        LinearProbe(Cs=[0.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match="val_size"):
        LinearProbe(val_size=1.5).fit(X, y)
    p = LinearProbe(Cs=[1.0]).fit(X, y)
    with pytest.raises(ValueError, match="X: has 39 features"):
        p.predict(X[:, 1:])


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
    X, _ = blobs(7, n=20)
    for method in ("predict", "predict_proba", "decision_function"):
        with pytest.raises(NotFittedError):
            getattr(LinearProbe(), method)(X)


@pytest.mark.parametrize("param, bad", [
    ("max_iter", -1), ("max_iter", 0), ("max_iter", 2.5), ("max_iter", True),
    ("tol", -1), ("tol", 0.0), ("tol", np.nan), ("tol", "small"),
    ("standardize", "no"), ("standardize", 1), ("standardize", None),
    ("random_state", -1), ("random_state", 1.5),
    ("val_size", 0.0), ("val_size", "half"),
])
def test_constructor_stores_and_fit_validates(param, bad):
    X, y = blobs(8, n=100)
    p = LinearProbe(**{param: bad})  # scikit-learn's rule: __init__ only stores
    assert p.get_params()[param] is bad
    with pytest.raises(ValueError, match=param):
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
    from embdiag.metrics.probe import _stratified_split

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
    from embdiag.metrics.probe import _stratified_split

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

@pytest.mark.parametrize("C", [1e-3, 0.1, 10.0, 1000.0])
def test_objective_within_1e9_of_a_tightly_converged_sklearn(C):
    # The stated tolerance: the refit's objective is within 1e-9 (relative) of the optimum.
    X, y = blobs(14, n=500, d=30, k=4, signal=0.5)
    p = LinearProbe(Cs=[C]).fit(X, y)
    sc = StandardScaler().fit(X)
    Xs = sc.transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = LogisticRegression(C=C, tol=1e-12, max_iter=100_000, solver="newton-cholesky").fit(Xs, y)
    ours = objective(p.coef_ * sc.scale_, p.intercept_ + p.coef_ @ sc.mean_, Xs, y, C)
    assert ours <= objective(sk.coef_, sk.intercept_, Xs, y, C) * (1 + 1e-9)
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
    with pytest.raises(ValueError, match="y: needs at least 2 classes"):
        fit_probes(X, {"ok": y, "bad": np.zeros(100)})
    with pytest.raises(ValueError, match="length mismatch"):
        fit_probes(X, {"short": y[:50]})
    with pytest.raises(ValueError, match="tol"):
        fit_probes(X, {"ok": y}, tol=-1)
    with pytest.raises(ValueError, match="X: expected a 2-D"):
        fit_probes(X[:, 0], {"ok": y})


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
        ours = objective(p.coef_ * sc.scale_, p.intercept_ + p.coef_ @ sc.mean_, Xs, np.searchsorted(p.classes_, y), p.C_)
        theirs = objective(W_sk, sk.intercept_, Xs, np.searchsorted(sk.classes_, y), p.C_)
        assert ours <= theirs * (1 + 1e-9), a
