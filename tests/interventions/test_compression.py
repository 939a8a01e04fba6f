"""Matryoshka prefix and PCA compression, against independent references (scikit-learn's
``PCA`` and ``TruncatedSVD``, numpy SVDs and eigenvalues, brute-force float64 cosines and
neighbour sets, hand-worked values, rotations as math facts).

Equivalent mutants
------------------
Mutants of ``tools/mutate.py`` (mutmut names ``embdiag.interventions.compression.x_<function>__mutmut_<k>``,
methods ``xǁ<Class>ǁ<method>__mutmut_<k>``) that survive because they change no result; each has a
comment next to the code.

- ``_principal_axes`` 1 (default ``center=False``): its only caller passes ``center`` explicitly.
- ``_principal_axes`` 14, ``MatryoshkaPrefix.transform`` 7, ``PCACompression.transform`` 8
  (``astype(None)``): that is ``astype(float64)``.
- ``_principal_axes`` 28 (``V /= sign``): the signs are +-1 (the pivot is a unit row's largest
  entry, never 0), and dividing by +-1 is multiplying by it.
- ``principal_axes`` 36 (``writeable = None``): numpy reads None as False (still read-only).
- ``PCACompression.fit`` 19 (``min_rows`` dropped): ``principal_axes`` checks at least 2 rows
  again, with the same name ``X`` and message.
- ``variance_spectrum`` 6, 10 (``dtype`` dropped): ``principal_axes`` averages in float64 and
  converts to float64 before the scatter, so float32 input gives the same bits.
- ``numerical_rank`` 15 (``lam[0] >= 0``): the variances are decreasing and non-negative, so
  ``lam[0] == 0`` makes every one 0 and both branches count 0.
- ``dims_ladder`` 43 (``k < d``): ``d`` itself is always on the ladder.
- ``compression_grid`` 16, 19 (``make_compression(m, None / 2)``): that call checks the method
  name only; ``k`` is not read before ``fit``.
- ``compression_grid`` 20, 47, 55 (``classes`` not passed): ``evaluate`` then freezes the same
  classes from the same ``val_labels`` itself, once per representation (time only).
- ``centring_effect`` 32, 38, 39 (the name ``"val - mean"`` mutated): unreachable message; a row
  of ``val`` equal to the training mean already makes the full-dimension PCA raise (its
  projection by an orthogonal matrix is zero exactly when the centred row is).
"""

import warnings

import zlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from embdiag.interventions.compression import (
    DIMS,
    METHODS,
    MatryoshkaPrefix,
    PCACompression,
    centring_effect,
    compression_grid,
    dims_ladder,
    make_compression,
    overlap_curve,
    numerical_rank,
    principal_axes,
    study_dims,
    unstandardized_ba,
    variance_spectrum,
    RANK_TOL,
)
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
    pca = PCACompression(20).fit(X)  # 5 centred rows span 4 directions: the other 16 are zero
    assert pca.rank_ == 4 and not pca.components_[4:].any() and not pca.explained_variance_[4:].any()
    Y = pca.transform(E)  # an isometry of the part of E - mean in the training span
    Q = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)[2][:4]
    C = _unit((E - X.mean(axis=0)) @ Q.T @ Q)
    np.testing.assert_allclose(Y @ Y.T, C @ C.T, atol=1e-12)
    np.testing.assert_array_equal(Y[:, 4:], 0.0)


def test_rounding_noise_directions_are_dropped_whatever_the_float_path():
    # vectors of rank 3 in 8 dimensions, stored in float32: the 5 empty directions hold rounding
    rng = np.random.default_rng(3)
    X = (rng.normal(size=(60, 3)) @ rng.normal(size=(3, 8))).astype(np.float32)
    other = X + 1e-12 * rng.normal(size=X.shape)  # the same vectors through another float path
    pca, pca_other = PCACompression(8).fit(X), PCACompression(8).fit(other)
    assert pca.rank_ == pca_other.rank_ == numerical_rank(principal_axes(X)[2]) == 3
    # what a standardized probe sees: the empty directions would be scaled up to unit variance
    seen, seen_other = (StandardScaler().fit_transform(p.transform(X)) for p in (pca, pca_other))
    np.testing.assert_allclose(np.abs(seen), np.abs(seen_other), atol=1e-6)
    np.testing.assert_array_equal(seen[:, 3:], 0.0)


def test_numerical_rank_counts_directions_above_the_tolerance():
    assert numerical_rank([4.0, 1.0, 4.0 * RANK_TOL, 0.0]) == 2
    assert numerical_rank([4.0, 1.0, 4.0 * RANK_TOL * 1.5]) == 3
    assert numerical_rank([0.0, 0.0]) == 0 and numerical_rank([]) == 0
    # judged in float64: in float32 the threshold RANK_TOL * 6.732655 rounds up onto the second value
    assert numerical_rank(np.array([6.732655, 6.7326552e-12], dtype=np.float32)) == 2


def test_study_dims_are_the_studys_shares_of_d():
    assert study_dims(768) == [512, 256, 128] and study_dims(384) == [256, 128, 64]
    assert study_dims(100) == [67, 33, 17]  # round(2/3 * 100) = 67, round(100 / 6) = 17
    assert study_dims(768, shares=(1 / 3, 1 / 6)) == [256, 128] and study_dims(768, shares=(0.5,)) == [384]
    assert study_dims(4) == [3, 1]  # 2/3 * 4 rounds to 3; 4/3 and 4/6 both round to 1: distinct
    assert study_dims(2) == [1] and study_dims(3, shares=(0.99, 0.01)) == [2, 1]  # below d, at least 1
    for bad in (1, 0, 2.5, "768"):
        with pytest.raises(ValueError, match=r"^d: "):
            study_dims(bad)


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


def _with_crc32(X: np.ndarray, target: int) -> np.ndarray:
    """``X`` with low mantissa bits of its first entries flipped so that the CRC-32 of its bytes
    is ``target``: the CRC is affine over GF(2), so the flips solve 32 linear equations."""
    raw = np.ascontiguousarray(X).view(np.uint8).ravel()
    zero = zlib.crc32(bytes(len(raw)))
    bits = [(8 * entry, bit) for entry in range(8) for bit in range(8)]  # the low byte of entries 0..7
    basis = {}  # pivot bit -> (CRC change, set of flips)
    for i, (byte, bit) in enumerate(bits):
        delta = bytearray(len(raw))
        delta[byte] = 1 << bit
        v, flips = zlib.crc32(bytes(delta)) ^ zero, {i}  # the CRC change of this one flip
        while v and v.bit_length() - 1 in basis:
            v, flips = v ^ basis[v.bit_length() - 1][0], flips ^ basis[v.bit_length() - 1][1]
        if v:
            basis[v.bit_length() - 1] = (v, flips)
    need, flips = zlib.crc32(raw.tobytes()) ^ target, set()
    while need:
        v, f = basis[need.bit_length() - 1]  # KeyError: the flips do not span (never for 64 random-ish ones)
        need, flips = need ^ v, flips ^ f
    out = raw.copy()
    for j in flips:
        out[bits[j][0]] ^= 1 << bits[j][1]
    return out.view(X.dtype).reshape(X.shape)


def test_principal_axes_memo_never_returns_another_arrays_result():
    # Issue #30: the memo was keyed by CRC-32, so a different matrix with the same CRC got the
    # first one's mean and axes, and PCACompression(k).fit(B) after fit(A) returned A's PCA.
    A = _data(0, 30, 5)
    B = A.copy()
    B[:, 0] = 3.0 * B[:, 0] + 1.0
    B = _with_crc32(B, zlib.crc32(A.tobytes()))
    assert zlib.crc32(B.tobytes()) == zlib.crc32(A.tobytes()) and A.shape == B.shape and A.dtype == B.dtype
    fresh = PCACompression(3).fit(B.copy())
    a = principal_axes(A)
    b = principal_axes(B)
    np.testing.assert_allclose(b[0], B.mean(axis=0), rtol=1e-12)
    assert not np.allclose(a[0], b[0])
    PCACompression(3).fit(A)
    np.testing.assert_array_equal(PCACompression(3).fit(B).components_, fresh.components_)


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
    Noise: {
        "check_methods_sample_order_invariance": "the noise is drawn from the bytes of X: other rows, other noise",
        "check_methods_subset_invariance": "the noise is drawn from the bytes of X: other rows, other noise",
    },
    RankRestriction: {"check_fit2d_1sample": _MESSAGE},
    PCACompression: {"check_fit2d_1sample": _MESSAGE},
    MatryoshkaPrefix: {
        "check_estimators_dtypes": "its 1-coordinate prefix of the check's data has zero rows, "
        "whose direction is undefined (raises by design)"
    },
}


_UNCENTRED = {
    "check_estimators_dtypes": "the check's data has an all-zero row, which projects to zero about the "
    "origin (no mean is subtracted): its direction is undefined (raises by design)"
}


@parametrize_with_checks(
    [
        Contraction(0.5),
        CommonOffset(0.5),
        Noise(0.5),
        RankRestriction(0.5),
        MatryoshkaPrefix(1),
        PCACompression(1),
        PCACompression(1, center=False),
    ],
    expected_failed_checks=lambda est: {
        **EXPECTED_FAILED_CHECKS,
        **SPECIFIC_FAILED_CHECKS.get(type(est), {}),
        **(_UNCENTRED if getattr(est, "center", True) is False else {}),
    },
)
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
    np.testing.assert_allclose(lam, s**2 / 59, rtol=1e-10)
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
    assert g["representation"].tolist() == [
        "native 12",
        "MRL 12",
        "PCA 12",
        "PCA uncentred 12",
        "MRL 6",
        "PCA 6",
        "PCA uncentred 6",
    ]
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
    assert sp.attrs["weakest spanned"] == pytest.approx(lam[2] / lam[0], rel=1e-8)  # the third of rank 3


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
    np.testing.assert_allclose(
        MatryoshkaPrefix(8).fit(X * scale).transform(X * scale),
        MatryoshkaPrefix(8).fit(X).transform(X),
        rtol=1e-9,
        atol=1e-12,
    )
    for center in (True, False):
        with pytest.raises(ValueError, match=r"X: largest magnitude .* rescale the vectors"):
            PCACompression(8, center=center).fit(X * scale)
    with pytest.raises(ValueError, match=r"X: largest magnitude"):
        RankRestriction(0.5).fit(X * scale)
    PCACompression(8).fit(X / np.abs(X).max() * 2.0**500)  # the edge of the range: fits


def test_compression_grid_searches_each_representation_once(monkeypatch):
    """P@k and overlap@k read the same exact top-k: one search per representation (the native
    one is the reference of overlap@k), and the numbers equal those of a grid that searched twice."""
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
    monkeypatch.setattr(
        compression,
        "evaluate",
        lambda *a, **kw: (
            evaluate(*a, **kw) if kw.get("neighbors") is not None else pytest.fail("evaluate searched again")
        ),
    )
    after = compression.compression_grid(train, labels, val, val_labels, dims=[8, 4], k=3, probes=False)
    assert len(searches) == len(after)
    pd.testing.assert_frame_equal(before, after)


# -- mutation survivors: anchored messages, edges, dtypes, defaults (issue 11) ------------------------


def test_messages_name_the_argument():
    X = _data(0, 20, 6)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    for cls in (MatryoshkaPrefix, PCACompression):
        with pytest.raises(ValueError, match=r"^k: expected an integer, got 2\.5$"):
            cls(2.5).fit(X)
        with pytest.raises(ValueError, match=r"^X: contains NaN"):
            cls(3).fit(Xn)
        with pytest.raises(NotFittedError, match=rf"^{cls.__name__} is not fitted: call fit first$"):
            cls(3).transform(X)
        with pytest.raises(ValueError, match=r"^X: expected 6 columns \(as in fit\), got 5$"):
            cls(3).fit(X).transform(X[:, :5])
    for bad in (X[:1], Xn):
        with pytest.raises(ValueError, match=r"^X: (needs at least 2 row|contains NaN)"):
            principal_axes(bad)
    E = X.copy()
    E[4, :2] = 0.0
    with pytest.raises(ValueError, match=r"^X\[:, :2\]: 1 zero-norm row\(s\) \(first at index 4\)"):
        MatryoshkaPrefix(2).fit(X).transform(E)
    pca = PCACompression(6).fit(X)
    with pytest.raises(ValueError, match=r"^X \(projected\): 1 zero-norm row\(s\) \(first at index 0\)"):
        pca.transform(np.vstack([pca.mean_, X[:2]]))  # the training mean projects to zero
    with pytest.raises(
        ValueError,
        match=r"^X: largest magnitude .* representable in float64; rescale the vectors "
        r"\(principal directions do not depend on a common factor\)$",
    ):
        principal_axes(X * 1e300)


def test_table_functions_name_their_arguments():
    X, yx = _labelled(0, 40, 6)
    Xn = X.copy()
    Xn[3, 1] = np.inf
    with pytest.raises(ValueError, match=r"^train: contains NaN"):
        compression_grid(Xn, yx, X, yx, dims=[3])
    with pytest.raises(ValueError, match=r"^val: contains NaN"):
        overlap_curve(X, Xn, dims=[3])
    with pytest.raises(ValueError, match=r"^dims: expected an integer, got 2\.5$"):
        compression_grid(X, yx, X, yx, dims=[2.5])
    with pytest.raises(ValueError, match=r"^train: contains NaN"):
        variance_spectrum(Xn, [2])
    with pytest.raises(ValueError, match=r"^train: needs at least 2 row\(s\), got 1$"):
        variance_spectrum(X[:1], [2])
    E = X.copy()
    E[5] = 0.0
    with pytest.raises(ValueError, match=r"^val: 1 zero-norm row\(s\) \(first at index 5\)"):
        centring_effect(X, E, yx, k=3)


def test_two_training_rows_are_enough():
    """One difference vector: its direction carries all the variance |x1 - x0|^2 / 2 (ddof=1)."""
    X = np.array([[1.0, 2.0, 2.0], [3.0, 2.0, 2.0]])
    mean, V, lam = principal_axes(X)
    np.testing.assert_array_equal(mean, [2.0, 2.0, 2.0])
    np.testing.assert_allclose(V[0], [1.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(lam, [2.0, 0.0, 0.0], atol=1e-15)
    assert PCACompression(1).fit(X).explained_variance_[0] == pytest.approx(2.0, rel=1e-15)
    sp = variance_spectrum(X, [1, 3])
    assert sp["dim"].tolist() == [1, 3] and sp.attrs["rank"] == 1
    np.testing.assert_allclose(sp["share"], [1.0, 1.0], rtol=1e-15)


def test_principal_axes_edges_of_the_representable_range_and_zero_data():
    X = _data(0, 20, 4)
    lo = principal_axes(X / np.abs(X).max() * 2.0**-500)  # the lower edge fits
    np.testing.assert_allclose(lo[2] / principal_axes(X)[2] * 2.0**1000 * np.abs(X).max() ** 2, 1.0, rtol=1e-9)
    with pytest.raises(ValueError, match=r"^X: largest magnitude"):
        principal_axes(X / np.abs(X).max() * 2.0**-501)
    mean, V, lam = principal_axes(np.zeros((3, 4)))  # no variance at all: fine, all zero
    np.testing.assert_array_equal(lam, np.zeros(4))
    np.testing.assert_array_equal(mean, np.zeros(4))


def test_variances_of_a_rank_deficient_set_are_clipped_at_zero():
    """Fewer rows than dimensions: the scatter has trailing eigenvalues that are zero in exact
    arithmetic; eigh returns some of them slightly negative, and they come back as 0."""
    for seed in range(3):
        X = np.random.default_rng(seed).standard_normal((5, 20))
        raw = np.linalg.eigvalsh((X - X.mean(axis=0)).T @ (X - X.mean(axis=0)))
        assert (raw < 0).any()  # the case being tested
        lam = principal_axes(X)[2]
        assert (lam >= 0).all() and (lam[4:] == 0).sum() >= (raw < 0).sum()


def test_float32_input_is_averaged_in_float64():
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((300, 7)) * 3 + 100).astype(np.float32)  # float32 sums would lose ~1e-5
    X64 = X.astype(np.float64)
    np.testing.assert_allclose(principal_axes(X)[0], X64.mean(axis=0), rtol=1e-15)
    np.testing.assert_allclose(PCACompression(3).fit(X).mean_, X64.mean(axis=0), rtol=1e-15)
    E = (rng.standard_normal((30, 7)) + 100).astype(np.float32)
    t32 = centring_effect(X, E, {"a": np.array(list("xy") * 15)}, k=3)
    t64 = centring_effect(X64, E.astype(np.float64), {"a": np.array(list("xy") * 15)}, k=3)
    pd.testing.assert_frame_equal(t32, t64, check_exact=True)  # inputs are read as float64


def test_principal_axes_memo_holds_two_decompositions():
    A, B, C = _data(10, 20, 4), _data(11, 20, 4), _data(12, 20, 4)
    a = principal_axes(A)
    principal_axes(B)
    assert principal_axes(A) is a  # still held
    principal_axes(B)
    principal_axes(C)  # evicts the oldest (A)
    a2 = principal_axes(A)
    assert a2 is not a
    np.testing.assert_array_equal(a2[1], a[1])


def test_neighbours_are_exact_float64_at_a_near_tie():
    """Row 0's cosines to rows 1 and 2 differ by 1.5e-10, below float32 resolution: an exact
    (float64) search finds row 2 (same label) and a float32 one would tie and take row 1."""
    E = np.array([[1, 0, 0], [1, 2e-5, 0], [1, 0.8e-5, 0], [0, 1, 0], [0, 0, 1], [0, -1, 0.0]])
    y = {"a": np.array(["p", "q", "p", "r", "r", "r"])}
    S = _unit(E) @ _unit(E).T
    np.fill_diagonal(S, -np.inf)
    want = float(np.mean(y["a"][S.argmax(axis=1)] == y["a"]))
    assert want == pytest.approx(2 / 6)  # rows 0 and 2; a float32 search keeps row 2 only
    g = compression_grid(E, y, E, y, dims=[3], methods=["MRL"], k=1, probes=False)
    assert g["a P@1"].tolist() == [want, want]
    assert centring_effect(E, E, y, k=1).loc[0, "a P@1"] == want


def test_table_columns_and_defaults():
    X, yx = _labelled(0, 60, 8)
    E, ye = _labelled(1, 40, 8)
    g = compression_grid(X, yx, E, ye, dims=[4], methods=["MRL", "PCA"], probes=False)
    assert g[["method", "dim"]].values.tolist() == [["native", 8], ["MRL", 4], ["PCA", 4]]
    assert {"overlap@10", "changed@10", "weather P@10"} <= set(g.columns)  # default k = 10
    c = overlap_curve(X, E, dims=[4], methods=["PCA"])
    assert c.columns.tolist() == ["representation", "method", "dim", "overlap@10"]
    assert c[["method", "dim"]].values.tolist() == [["PCA", 4]]
    t = centring_effect(X, E, ye)
    assert "overlap@10" in t.columns and "weather P@10" in t.columns


def test_centring_effect_changed_share_is_a_brute_force_count():
    X, _ = _labelled(0, 120, 10)
    E, ye = _labelled(1, 60, 10)
    t = centring_effect(X, E, ye, k=5).set_index("representation")
    base = _neighbors(E)
    for rep, Z in [("native", _unit(E)), ("native minus training mean", _unit(E - X.mean(axis=0)))]:
        nb = _neighbors(Z)
        changed = np.mean([set(a) != set(b) for a, b in zip(base, nb)])
        assert t.loc[rep, "changed@5"] == changed
    assert t.loc["native", "changed@5"] == 0.0 and 0.0 < t.loc["native minus training mean", "changed@5"] < 1.0


def test_dims_ladder_edges_and_messages():
    assert dims_ladder(64) == [64, 32, 16, 8]  # the default smallest, 8, is included
    assert dims_ladder(64, dims=(), smallest=16) == [64, 32, 16]
    assert dims_ladder(1, dims=()) == [1]
    assert dims_ladder(4, dims=(), smallest=1) == [4, 2, 1]
    assert dims_ladder(16, dims=(1,)) == [16, 8, 1]
    for kwargs, msg in [
        ({"d": 0}, r"^d: must be at least 1, got 0$"),
        ({"d": 2.0}, r"^d: expected an integer"),
        ({"d": 8, "smallest": 0}, r"^smallest: must be at least 1, got 0$"),
        ({"d": 8, "smallest": 1.5}, r"^smallest: expected an integer"),
        ({"d": 8, "dims": (0,)}, r"^dims: must be at least 1, got 0$"),
        ({"d": 8, "dims": (2.5,)}, r"^dims: expected an integer"),
        ({"d": 16, "dims": (16.0,)}, r"^dims: expected an integer"),
    ]:
        with pytest.raises(ValueError, match=msg):
            dims_ladder(**kwargs)


def test_variance_spectrum_rank_is_relative_to_the_largest_variance():
    """Orthogonal ±1 columns scaled 1, 1e-4, 1e-7: variances 1, 1e-8, 1e-14 (exactly diagonal
    scatter). The third is below RANK_TOL (1e-12) of the first, though not of the second."""
    H = np.array([[1, 1, 1], [1, -1, 1], [1, 1, -1], [1, -1, -1]], dtype=float)[:, 1:]
    H = np.c_[H, H[:, 0] * H[:, 1]]  # three orthogonal zero-mean columns
    sp = variance_spectrum(H * [1.0, 1e-4, 1e-7], [1, 2, 3])
    assert sp.attrs["rank"] == 2
    np.testing.assert_allclose(sp["weakest"], [1.0, 1e-8, 1e-14], rtol=1e-6)
    with pytest.raises(
        ValueError,
        match=r"^train: has no variance \(every row the same after centring\); "
        r"variance shares are undefined$",
    ):
        variance_spectrum(np.ones((4, 3)), [1])
    with pytest.raises(ValueError, match=r"^train: has no variance \(every row the same\);"):
        variance_spectrum(np.zeros((4, 3)), [1], center=False)
    assert variance_spectrum(np.ones((4, 3)), [1], center=False).attrs["rank"] == 1


def test_variance_spectrum_of_data_with_little_variance():
    # a total variance below 1 is still variance: only exactly none is refused
    X = np.random.default_rng(8).standard_normal((50, 4)) * 1e-3
    sp = variance_spectrum(X, [1, 4])
    assert sp["share"].iloc[-1] == pytest.approx(1.0) and sp.attrs["rank"] == 4


def test_dims_ladder_checks_every_entry_even_above_d():
    for bad in ((64.5,), (100.0,), ("512",)):
        with pytest.raises(ValueError, match=r"^dims: expected an integer"):
            dims_ladder(16, dims=bad)
    assert dims_ladder(16, dims=(512, 4)) == [16, 8, 4]


def test_unstandardized_ba_does_not_standardize():
    """The label sits in a direction of variance ~4e-8 of the uncentred PCA: a plain probe
    (L2, C <= 1000) cannot reach it, a standardized one can; the function is the plain one."""
    from embdiag.metrics import LinearProbe, balanced_accuracy, frozen_classes

    rng = np.random.default_rng(0)

    def lab(n):
        y = rng.choice(["p", "q"], n)
        Z = np.c_[
            rng.standard_normal((n, 1)) + 5,
            (y == "p") * 2e-3 + rng.standard_normal(n) * 2e-4,
            rng.standard_normal((n, 4)) * 0.1,
        ]
        return Z, {"a": y}

    X, yx = lab(200)
    E, ye = lab(100)
    got = unstandardized_ba(X, yx, E, ye, method="PCA uncentred", dim=6, attribute="a")
    pca = PCACompression(6, center=False).fit(X)
    ba = {
        s: balanced_accuracy(
            ye["a"],
            LinearProbe(standardize=s).fit(pca.transform(X), yx["a"]).predict(pca.transform(E)),
            frozen_classes(ye)["a"],
        )
        for s in (False, True)
    }
    assert got == ba[False] < 0.7 < 0.9 < ba[True]
