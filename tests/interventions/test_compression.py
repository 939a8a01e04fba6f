"""Matryoshka prefix and PCA compression."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from embdiag.interventions.compression import (DIMS, METHODS, MatryoshkaPrefix, PCACompression, centring_effect,
                                               compression_grid, dims_ladder, make_compression, overlap_curve,
                                               principal_axes, unstandardized_ba, variance_spectrum)
from embdiag.metrics import overlap_at_k, topk
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
    params = {"k": 3} if cls is MatryoshkaPrefix else {"k": 3, "center": True}
    assert clone(cls(3)).get_params() == params


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


_UNCENTRED = {"check_estimators_dtypes": "the check's data has an all-zero row, which projects to zero about the "
                                        "origin (no mean is subtracted): its direction is undefined (raises by design)"}


@parametrize_with_checks(
    [Contraction(0.5), CommonOffset(0.5), Noise(0.5), RankRestriction(0.5), MatryoshkaPrefix(1), PCACompression(1),
     PCACompression(1, center=False)],
    expected_failed_checks=lambda est: {**EXPECTED_FAILED_CHECKS, **SPECIFIC_FAILED_CHECKS.get(type(est), {}),
                                        **(_UNCENTRED if getattr(est, "center", True) is False else {})})
def test_scikit_learn_common_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


# -- uncentred PCA, centring, and the chapter's grid ------------------------------------------------

def _neighbors(Z, k=5):
    return topk(Z, Z, k, exclude_self=True, dtype=np.float64)[1]


@FAST
@given(seed=st.integers(0, 2**31 - 1), d=st.integers(2, 20))
def test_uncentred_pca_at_d_is_an_isometry(seed, d):
    X, E = _data(seed, 2 * d + 3, d), _data(seed + 1, 40, d)
    pca = PCACompression(d, center=False).fit(X)
    Y = pca.transform(E)
    np.testing.assert_allclose(pca.components_ @ pca.components_.T, np.eye(d), atol=1e-12)  # orthogonal
    np.testing.assert_array_equal(pca.mean_, np.zeros(d))
    np.testing.assert_allclose(Y @ Y.T, _unit(E) @ _unit(E).T, atol=1e-12)  # every cosine kept
    np.testing.assert_allclose(Y, _unit(E) @ pca.components_.T, atol=1e-12)  # a rotation of the unit rows


@FAST
@given(seed=st.integers(0, 2**31 - 1), d=st.integers(2, 16))
def test_uncentred_pca_at_d_keeps_every_neighbour(seed, d):
    X, E = _data(seed, 2 * d + 3, d), _data(seed + 1, 30, d)
    Y = PCACompression(d, center=False).fit(X).transform(E)
    # the top-5 sets agree for every query whose 5th and 6th cosines are not a near-tie
    S = _unit(E) @ _unit(E).T
    np.fill_diagonal(S, -np.inf)
    top = np.sort(S, axis=1)[:, ::-1]
    clear = (top[:, 4] - top[:, 5]) > 1e-9
    same = overlap_at_k(_neighbors(E), _neighbors(Y), per_query=True)
    assert (same[clear] == 1).all()


@FAST
@given(seed=st.integers(0, 2**31 - 1), d=st.integers(2, 20))
def test_centred_pca_at_d_is_cosine_on_centred_vectors(seed, d):
    X, E = _data(seed, 2 * d + 3, d), _data(seed + 1, 30, d)
    Y = PCACompression(d).fit(X).transform(E)
    C = _unit(E - X.mean(axis=0))
    np.testing.assert_allclose(Y @ Y.T, C @ C.T, atol=1e-12)


@FAST
@given(seed=st.integers(0, 2**31 - 1), d=st.integers(2, 20), data=st.data())
def test_uncentred_pca_matches_truncated_svd(seed, d, data):
    k = data.draw(st.integers(1, d - 1))  # arpack needs k < d
    X, E = _data(seed, 3 * d + 5, d), _data(seed + 1, 20, d)
    pca = PCACompression(k, center=False).fit(X)
    ref = TruncatedSVD(k, algorithm="arpack", random_state=0, tol=0).fit(X)
    cos = np.abs(np.sum(pca.components_ * ref.components_, axis=1))
    sv = np.linalg.svd(X, compute_uv=False)
    np.testing.assert_allclose(pca.explained_variance_, sv[:k] ** 2 / (len(X) - 1), rtol=1e-9)
    distinct = np.r_[np.abs(np.diff(sv[: k + 1])) > 1e-6 * sv[0]]  # direction defined when its value is simple
    ok = distinct[:k] & np.r_[True, distinct[: k - 1]]
    np.testing.assert_allclose(cos[ok], 1.0, atol=1e-6)
    signs = np.sign(np.sum(pca.components_ * ref.components_, axis=1))
    if ok.all():
        np.testing.assert_allclose(pca.transform(E), _unit(ref.transform(E) * signs), atol=1e-6)


def test_principal_axes_uncentred_is_the_svd_of_the_raw_rows():
    X = _data(3, 60, 8)
    mean, V, lam = principal_axes(X, center=False)
    _, s, Vt = np.linalg.svd(X, full_matrices=False)
    np.testing.assert_array_equal(mean, np.zeros(8))
    np.testing.assert_allclose(lam, s ** 2 / 59, rtol=1e-10)
    np.testing.assert_allclose(np.abs(V @ Vt.T), np.eye(8), atol=1e-8)
    # both decompositions of one training set are memoized side by side
    assert principal_axes(X, center=True)[1] is principal_axes(X.copy(), center=True)[1]
    assert principal_axes(X, center=False)[1] is V
    with pytest.raises(ValueError, match="center"):
        principal_axes(X, center="no")
    with pytest.raises(ValueError, match="center"):
        PCACompression(3, center=1).fit(X)


def test_centring_changes_neighbours_a_worked_example():
    # Three points on a ring around a far-away common offset: centring reverses who is nearest.
    X = np.array([[10.0, 0.0], [10.0, 1.0], [10.0, -1.0], [10.0, 0.4]])
    raw = _neighbors(X, 1)[:, 0]
    Y = PCACompression(2).fit(X).transform(X)
    Z = PCACompression(2, center=False).fit(X).transform(X)
    assert (_neighbors(Z, 1)[:, 0] == raw).all()  # a rotation: same nearest neighbours
    assert (_neighbors(Y, 1)[:, 0] != raw).any()  # centred: some change, though nothing is projected away


def test_make_compression_and_dims_ladder():
    assert isinstance(make_compression("MRL", 4), MatryoshkaPrefix)
    assert make_compression("PCA", 4).center is True
    assert make_compression("PCA uncentred", 4).center is False
    with pytest.raises(ValueError, match="method"):
        make_compression("SVD", 4)
    assert dims_ladder(768) == [768, 512, 384, 256, 192, 128, 96, 48, 24, 12]
    assert dims_ladder(20, dims=(512, 6), smallest=4) == [20, 10, 6, 5]
    assert DIMS == (512, 256, 128) and METHODS == ("MRL", "PCA", "PCA uncentred")


def _labelled(seed, n, d):
    rng = np.random.default_rng(seed)
    y = {a: rng.choice(["p", "q", "r"], n) for a in ("weather", "scene", "timeofday")}
    Z = rng.standard_normal((n, d)) + 2.0 * (y["weather"] == "p")[:, None] + 1.0
    return _unit(Z), y


def test_compression_grid_rows_and_native_identities():
    X, yx = _labelled(0, 120, 12)
    E, ye = _labelled(1, 60, 12)
    g = compression_grid(X, yx, E, ye, dims=[12, 6], k=5)
    assert g["representation"].tolist() == ["native 12", "MRL 12", "PCA 12", "PCA uncentred 12", "MRL 6", "PCA 6",
                                            "PCA uncentred 6"]
    assert g.loc[0, "overlap@5"] == 1.0 and g.loc[0, "changed@5"] == 0.0
    by = g.set_index("representation")
    for rep in ("MRL 12", "PCA uncentred 12"):  # full-dimension prefix and uncentred PCA keep the neighbours
        assert by.loc[rep, "overlap@5"] == 1.0
        assert by.loc[rep, "weather P@5"] == by.loc["native 12", "weather P@5"]
    assert by.loc["PCA 12", "overlap@5"] < 1.0  # centring alone
    assert by.loc["MRL 12", "weather BA"] == by.loc["native 12", "weather BA"]  # the prefix at d is the identity
    assert {"weather BA", "scene P@5", "rankme"} <= set(g.columns)
    g2 = compression_grid(X, yx, E, ye, dims=[6], methods=["MRL"], k=5, probes=False)
    assert g2["representation"].tolist() == ["native 12", "MRL 6"] and "weather BA" not in g2


def test_compression_grid_bad_input():
    X, yx = _labelled(0, 40, 6)
    with pytest.raises(ValueError, match="dims"):
        compression_grid(X, yx, X, yx, dims=[7])
    with pytest.raises(ValueError, match="dims"):
        compression_grid(X, yx, X, yx, dims=[0])
    with pytest.raises(ValueError, match="method"):
        compression_grid(X, yx, X, yx, dims=[3], methods=["SVD"])
    with pytest.raises(ValueError, match="val"):
        compression_grid(X, yx, X[:, :5], yx, dims=[3])


def test_centring_effect_table():
    X, _ = _labelled(0, 120, 10)
    E, ye = _labelled(1, 60, 10)
    t = centring_effect(X, E, ye, k=5).set_index("representation")
    assert list(t.index) == ["native", "PCA uncentred 10", "PCA 10", "native minus training mean"]
    assert t.loc["PCA uncentred 10", "overlap@5"] == 1.0
    assert t.loc["PCA uncentred 10", "max |Δ cosine|"] < 1e-12
    assert t.loc["PCA 10", "overlap@5 with centred cosine"] == 1.0
    assert t.loc["PCA 10", "overlap@5"] == t.loc["native minus training mean", "overlap@5"] < 1.0
    assert t.loc["PCA 10", "max |Δ cosine|"] > 0.01
    with pytest.raises(ValueError, match="val"):
        centring_effect(X, E[:, :4], ye)


def test_overlap_curve_matches_the_grid():
    X, yx = _labelled(0, 100, 12)
    E, ye = _labelled(1, 50, 12)
    curve = overlap_curve(X, E, dims=[12, 6, 3], k=5)
    grid = compression_grid(X, yx, E, ye, dims=[12, 6, 3], k=5, probes=False)
    assert curve["representation"].tolist() == grid["representation"].tolist()[1:]
    np.testing.assert_array_equal(curve["overlap@5"], grid["overlap@5"].to_numpy()[1:])
    with pytest.raises(ValueError, match="dims"):
        overlap_curve(X, E, dims=[13])


def test_variance_spectrum_of_a_low_rank_cloud():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3)) @ rng.standard_normal((3, 10)) + 5.0  # rank 3 after centring
    sp = variance_spectrum(X, [10, 3, 2, 1])
    assert sp.attrs["rank"] == 3
    np.testing.assert_allclose(sp["share"].iloc[:2], 1.0, atol=1e-12)
    assert sp["share"].iloc[3] < sp["share"].iloc[2] < 1.0
    assert sp["weakest"].iloc[0] < 1e-12 and sp["weakest"].iloc[3] == 1.0
    lam = np.linalg.eigvalsh(np.cov(X.T))[::-1]
    np.testing.assert_allclose(sp["share"].iloc[2], lam[:2].sum() / lam.sum(), rtol=1e-10)
    assert variance_spectrum(X, [3], center=False).attrs["rank"] == 4  # the offset adds a direction


def test_unstandardized_ba_is_one_plain_probe():
    from embdiag.metrics import LinearProbe, balanced_accuracy, frozen_classes

    X, yx = _labelled(0, 120, 8)
    E, ye = _labelled(1, 60, 8)
    got = unstandardized_ba(X, yx, E, ye, method="PCA", dim=4, attribute="weather")
    pca = PCACompression(4).fit(X)
    probe = LinearProbe(standardize=False).fit(pca.transform(X), yx["weather"])
    want = balanced_accuracy(ye["weather"], probe.predict(pca.transform(E)), frozen_classes(ye)["weather"])
    assert got == want
    with pytest.raises(ValueError, match="attribute"):
        unstandardized_ba(X, yx, E, ye, method="PCA", dim=4, attribute="colour")
    with pytest.raises(ValueError, match="dims"):
        unstandardized_ba(X, yx, E, ye, method="PCA", dim=9, attribute="weather")


@pytest.mark.slow
def test_on_the_reference_encoder_uncentred_pca_keeps_and_centring_moves_neighbours():
    from embdiag.encoders.vectors import driving_vectors

    v = driving_vectors("reference-cnn")
    t = centring_effect(v.train, v.val, v.val_labels).set_index("representation")
    d = v.dim
    assert t.loc[f"PCA uncentred {d}", "overlap@10"] > 1 - 1e-9
    assert t.loc[f"PCA {d}", "overlap@10 with centred cosine"] > 1 - 1e-9
    assert t.loc[f"PCA {d}", "overlap@10"] < 0.99


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_extreme_finite_magnitudes(scale):
    """A prefix normalizes rows rescaled first: vectors of 1e200 (squares overflow) and 1e-200
    (squares underflow) give the unit rows of the unscaled vectors. PCA's variances cannot be
    represented at these scales: it raises and says so, instead of returning directions of an
    overflowed or underflowed scatter matrix (which it once did, silently)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 16))
    np.testing.assert_allclose(MatryoshkaPrefix(8).fit(X * scale).transform(X * scale),
                               MatryoshkaPrefix(8).fit(X).transform(X), rtol=1e-9, atol=1e-12)
    for center in (True, False):
        with pytest.raises(ValueError, match=r"X: largest magnitude .* rescale the vectors"):
            PCACompression(8, center=center).fit(X * scale)
    with pytest.raises(ValueError, match=r"X: largest magnitude"):
        RankRestriction(0.5).fit(X * scale)
    PCACompression(8).fit(X / np.abs(X).max() * 2.0 ** 500)  # the edge of the range: fits


def test_compression_grid_searches_each_representation_once(monkeypatch):
    """P@k and overlap@k read the same exact top-k: one search per representation (plus the
    native reference), and the numbers equal those of a grid that searched twice."""
    from embdiag.interventions import compression
    from embdiag.metrics import evaluate

    rng = np.random.default_rng(0)
    train, val = rng.normal(size=(60, 16)), rng.normal(size=(40, 16))
    labels = {"a": np.array(list("xyz") * 20)}
    val_labels = {"a": np.array(list("xyz") * 13 + ["x"])}
    with monkeypatch.context() as m:  # evaluate searching on its own, as before the shared search
        m.setattr(compression, "evaluate", lambda *a, neighbors=None, **kw: evaluate(*a, **kw))
        before = compression.compression_grid(train, labels, val, val_labels, dims=[8, 4], k=3, probes=False)
    searches = []
    real = compression.topk
    monkeypatch.setattr(compression, "topk", lambda *a, **kw: searches.append(1) or real(*a, **kw))
    monkeypatch.setattr(compression, "evaluate", lambda *a, **kw: evaluate(*a, **kw) if kw.get("neighbors") is not None
                        else pytest.fail("evaluate searched again"))
    after = compression.compression_grid(train, labels, val, val_labels, dims=[8, 4], k=3, probes=False)
    assert len(searches) == 1 + len(after)
    pd.testing.assert_frame_equal(before, after)
