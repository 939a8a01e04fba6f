import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.special import log_softmax
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.preprocessing import StandardScaler

from embdiag.metrics.probe import LinearProbe, balanced_accuracy, eligible_classes, majority_floor


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
