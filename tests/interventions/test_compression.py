"""Matryoshka prefix and PCA compression."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from embdiag.interventions.compression import MatryoshkaPrefix, PCACompression, principal_axes
from embdiag.interventions.stress import CommonOffset, Contraction, Noise, RankRestriction

FAST = settings(max_examples=25, deadline=None)


def _data(seed, n=50, d=10):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) * np.linspace(3.0, 0.3, d) + rng.standard_normal(d)


def _unit(Z):
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


def _order(S):
    return np.argsort(-S, axis=1, kind="stable")


@FAST
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(3, 40), d=st.integers(1, 30))
def test_prefix_at_d_is_the_normalized_native_vectors(seed, n, d):
    X, E = _data(seed, n, d), _data(seed + 1, n, d)
    Y = MatryoshkaPrefix(d).fit(X).transform(E)
    np.testing.assert_array_equal(Y, _unit(E))
    S = Y @ Y.T
    assert (_order(S) == _order(_unit(E) @ _unit(E).T)).all()


@FAST
@given(seed=st.integers(0, 2**31 - 1), d=st.integers(2, 30))
def test_pca_at_d_preserves_the_cosines_of_centered_vectors(seed, d):
    X, E = _data(seed, 2 * d + 3, d), _data(seed + 1, 40, d)
    pca = PCACompression(d).fit(X)
    Y = pca.transform(E)
    C = _unit(E - X.mean(axis=0))
    np.testing.assert_allclose(Y @ Y.T, C @ C.T, atol=1e-12)  # rotation: cosines kept
    np.testing.assert_allclose(np.linalg.norm(Y, axis=1), 1.0, atol=1e-14)


@FAST
@given(seed=st.integers(0, 2**31 - 1), d=st.integers(2, 20), data=st.data())
def test_pca_matches_sklearn_and_prefix_truncates(seed, d, data):
    k = data.draw(st.integers(1, d))
    X, E = _data(seed, 3 * d + 5, d), _data(seed + 1, 30, d)
    pca = PCACompression(k).fit(X)
    ref = PCA(k, svd_solver="full").fit(X)
    np.testing.assert_allclose(pca.explained_variance_, ref.explained_variance_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.abs(pca.components_ @ ref.components_.T), np.eye(k), atol=1e-6)
    np.testing.assert_allclose(pca.mean_, X.mean(axis=0), atol=1e-14)
    signs = np.sign(np.diag(pca.components_ @ ref.components_.T))
    np.testing.assert_allclose(pca.transform(E), _unit(ref.transform(E) * signs), atol=1e-6)
    np.testing.assert_allclose(MatryoshkaPrefix(k).fit(X).transform(E), _unit(E[:, :k]), atol=1e-15)


def test_principal_axes_are_deterministic_and_ordered():
    X = _data(0, 80, 12)
    m, V, lam = principal_axes(X)
    np.testing.assert_allclose(V @ V.T, np.eye(12), atol=1e-12)
    assert (np.diff(lam) <= 0).all()
    assert (V[np.arange(12), np.abs(V).argmax(axis=1)] > 0).all()
    m2, V2, _ = principal_axes(X.copy())
    np.testing.assert_array_equal(V, V2)


def test_fewer_training_rows_than_dimensions():
    X, E = _data(0, 5, 20), _data(1, 7, 20)
    Y = PCACompression(20).fit(X).transform(E)  # completed basis: still a rotation
    C = _unit(E - X.mean(axis=0))
    np.testing.assert_allclose(Y @ Y.T, C @ C.T, atol=1e-12)


@pytest.mark.parametrize("cls", [MatryoshkaPrefix, PCACompression])
def test_bad_input(cls):
    X = _data(0, 20, 6)
    with pytest.raises(ValueError, match="k"):
        cls(7).fit(X)
    for bad in (0, -1, 2.5, "3", True):
        with pytest.raises(ValueError, match="k"):
            cls(bad).fit(X)
    with pytest.raises(NotFittedError, match="call fit first"):
        cls(3).transform(X)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        cls(3).fit(Xn)
    with pytest.raises(ValueError, match="X"):
        cls(3).fit(X).transform(Xn)
    with pytest.raises(ValueError, match="columns"):
        cls(3).fit(X).transform(X[:, :5])
    assert clone(cls(3)).get_params() == {"k": 3}


def test_zero_prefix_row_raises():
    X = _data(0, 10, 6)
    E = X.copy()
    E[4, :2] = 0.0
    with pytest.raises(ValueError, match="zero-norm"):
        MatryoshkaPrefix(2).fit(X).transform(E)


def test_principal_axes_memo_is_by_content_and_read_only():
    X = _data(0, 30, 5)
    a = principal_axes(X)
    assert principal_axes(X.copy())[1] is a[1]
    with pytest.raises(ValueError):
        a[1][0, 0] = 1.0
    Y = X.copy()
    Y[0, 0] += 1.0
    assert not np.array_equal(principal_axes(Y)[0], a[0])
    pca = PCACompression(3).fit(X)
    pca.components_[0, 0] = 5.0  # fitted attributes are private copies
    assert principal_axes(X)[1][0, 0] != 5.0


# Checks of scikit-learn's common suite that the transformers fail on purpose, with the reason.
_MESSAGE = "embdiag's messages name the argument (e.g. 'X: expected a 2-D array'), not scikit-learn's wording"
_SPARSE = "dense embeddings only; sparse input is refused in embdiag's wording"
EXPECTED_FAILED_CHECKS = {
    "check_n_features_in_after_fitting": _MESSAGE,
    "check_complex_data": _MESSAGE,
    "check_estimators_empty_data_messages": _MESSAGE,
    "check_fit2d_predict1d": _MESSAGE,
    "check_dtype_object": "object arrays are refused on purpose (embdiag._validate.as_float)",
    "check_estimator_sparse_tag": _SPARSE,
    "check_estimator_sparse_array": _SPARSE,
    "check_estimator_sparse_matrix": _SPARSE,
}
SPECIFIC_FAILED_CHECKS = {
    Noise: {"check_methods_sample_order_invariance": "the noise is drawn from the bytes of X: other rows, other noise",
            "check_methods_subset_invariance": "the noise is drawn from the bytes of X: other rows, other noise"},
    RankRestriction: {"check_fit2d_1sample": _MESSAGE},
    PCACompression: {"check_fit2d_1sample": _MESSAGE},
    MatryoshkaPrefix: {"check_estimators_dtypes": "its 1-coordinate prefix of the check's data has zero rows, "
                                                  "whose direction is undefined (raises by design)"},
}


@parametrize_with_checks(
    [Contraction(0.5), CommonOffset(0.5), Noise(0.5), RankRestriction(0.5), MatryoshkaPrefix(1), PCACompression(1)],
    expected_failed_checks=lambda est: {**EXPECTED_FAILED_CHECKS, **SPECIFIC_FAILED_CHECKS.get(type(est), {})})
def test_scikit_learn_common_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)
