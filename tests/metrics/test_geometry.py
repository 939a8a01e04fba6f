import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from embdiag.metrics import geometry as g


def svd_reference(Z, eps=1e-7):
    """RankMe and PR straight from float64 SVDs (the definitions, no shortcuts)."""
    Z = np.asarray(Z, dtype=np.float64)
    s = np.linalg.svd(Z, compute_uv=False)
    p = s / s.sum() + eps
    rankme = np.exp(-np.sum(p * np.log(p)))
    X = Z - Z.mean(axis=0)
    lam = np.linalg.svd(X, compute_uv=False) ** 2 / (len(Z) - 1)
    return rankme, lam.sum() ** 2 / np.sum(lam**2)


def random_matrix(seed, n, d, spectrum):
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, d)))
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return (U * spectrum) @ V.T


# ----------------------------------------------------------------------------- known values

def test_worked_example():
    # centered 10 x 4 matrix with singular values 3, 1, 0, 0
    rng = np.random.default_rng(0)
    basis, _ = np.linalg.qr(np.column_stack([np.ones(10), rng.standard_normal((10, 2))]))
    U = basis[:, 1:3]  # orthonormal and orthogonal to the ones vector, so Z is centered
    V, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    Z = U @ np.diag([3.0, 1.0]) @ V[:, :2].T
    assert np.allclose(Z.mean(axis=0), 0, atol=1e-14)
    assert g.participation_ratio(Z) == pytest.approx(1 / (0.9**2 + 0.1**2), rel=1e-10)
    assert g.participation_ratio(Z) == pytest.approx(1.2195, abs=1e-4)
    assert g.rankme(Z) == pytest.approx(np.exp(-(0.75 * np.log(0.75) + 0.25 * np.log(0.25))), rel=1e-5)
    assert g.rankme(Z) == pytest.approx(1.7548, abs=1e-4)
    assert np.allclose(g.singular_values(Z), [3, 1, 0, 0], atol=1e-7)
    assert g.total_variance(Z) == pytest.approx(10 / 9)


def test_rankme_gaussian_known_value():
    Z = np.random.default_rng(0).standard_normal((25_600, 128)).astype(np.float32)
    assert g.rankme(Z) == pytest.approx(127.9, abs=0.05)


def test_rank_one_matrix():
    rng = np.random.default_rng(1)
    Z = np.outer(rng.standard_normal(500), rng.standard_normal(64))
    assert g.rankme(Z) == pytest.approx(1.0, abs=2e-3)
    assert g.participation_ratio(Z) == pytest.approx(1.0, abs=1e-9)


def test_zero_spectrum_gives_one():
    assert g.rankme(np.zeros((5, 3))) == 1.0
    assert g.participation_ratio(np.ones((5, 3))) == 1.0
    assert g.total_variance(np.ones((5, 3))) == 0.0


# ----------------------------------------------------------------------------- accuracy

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["isotropic", "power-law 1e5", "rank 8", "common offset", "n < d", "n < d rank 3"])
def test_matches_float64_svd(name, dtype):
    rng = np.random.default_rng(2)
    n, d = 3000, 96
    if name == "isotropic":
        Z = rng.standard_normal((n, d))
    elif name == "power-law 1e5":
        Z = random_matrix(3, n, d, np.logspace(0, -5, d))
    elif name == "rank 8":
        Z = rng.standard_normal((n, 8)) @ rng.standard_normal((8, d))
    elif name == "common offset":
        Z = 0.01 * rng.standard_normal((n, d)) + 10 * rng.standard_normal(d)
    elif name == "n < d":
        Z = rng.standard_normal((40, d))
    else:
        Z = rng.standard_normal((40, 3)) @ rng.standard_normal((3, d)) + 1.0
    Z = Z.astype(dtype)
    R, P = svd_reference(Z)
    assert g.rankme(Z) == pytest.approx(R, rel=1e-9)
    assert g.participation_ratio(Z) == pytest.approx(P, rel=1e-9)
    s = g.summary(Z)
    assert s["rankme"] == pytest.approx(R, rel=1e-9)
    assert np.allclose(g.singular_values(Z), np.linalg.svd(Z.astype(np.float64), compute_uv=False),
                       rtol=0, atol=1e-12 * np.linalg.norm(Z.astype(np.float64), 2))
    assert s["participation_ratio"] == pytest.approx(P, rel=1e-9)
    assert s["total_variance"] == pytest.approx(g.total_variance(Z), rel=1e-9)
    assert s["mean_cosine"] == pytest.approx(g.mean_cosine(Z), rel=1e-12, abs=1e-15)


def test_float32_gram_would_fail_this_check():
    # Guards the accuracy test above: a float32 Gram is measurably wrong on a collapsed spectrum.
    Z = random_matrix(3, 3000, 96, np.logspace(0, -5, 96)).astype(np.float32)
    R, _ = svd_reference(Z)
    lam = np.clip(np.linalg.eigvalsh((Z.T @ Z).astype(np.float64)), 0, None)
    s = np.sqrt(lam)
    p = s / s.sum() + 1e-7
    assert abs(np.exp(-np.sum(p * np.log(p))) - R) / R > 1e-6


def test_variance_and_cosine_match_brute_force():
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((300, 20)) + 0.5
    assert g.total_variance(Z) == pytest.approx(np.var(Z, axis=0, ddof=1).sum(), rel=1e-12)
    U = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    C = U @ U.T
    assert g.mean_cosine(Z) == pytest.approx((C.sum() - np.trace(C)) / (300 * 299), rel=1e-10)
    assert np.allclose(g.covariance_eigenvalues(Z), np.sort(np.linalg.eigvalsh(np.cov(Z.T)))[::-1])


def test_chunked_path_and_memmap(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    Z = (rng.standard_normal((700, 30)) + 3).astype(np.float32)
    expected = [f(Z) for f in (g.total_variance, g.mean_cosine, g.rankme, g.participation_ratio)]
    path = tmp_path / "z.f32"
    Z.tofile(path)
    M = np.memmap(path, dtype=np.float32, mode="r", shape=Z.shape)
    monkeypatch.setattr(g, "_CHUNK_ELEMENTS", 64 * 30)  # 64-row chunks: 11 of them
    got = [f(M) for f in (g.total_variance, g.mean_cosine, g.rankme, g.participation_ratio)]
    assert np.allclose(got, expected, rtol=1e-10)


def test_integer_and_float16_inputs():
    rng = np.random.default_rng(6)
    Zi = rng.integers(-5, 6, size=(200, 12))
    assert g.rankme(Zi) == pytest.approx(g.rankme(Zi.astype(np.float64)), rel=1e-12)
    Zh = rng.standard_normal((200, 12)).astype(np.float16)
    assert g.participation_ratio(Zh) == pytest.approx(g.participation_ratio(Zh.astype(np.float64)), rel=1e-12)
    assert isinstance(g.total_variance(Zi), float)


# ----------------------------------------------------------------------------- properties

finite = st.floats(-10, 10, allow_nan=False, width=32)
matrices = st.tuples(st.integers(3, 30), st.integers(1, 8)).flatmap(
    lambda s: arrays(np.float64, s, elements=finite)
).filter(lambda Z: np.linalg.norm(Z - Z.mean(0)) > 1e-3 and (np.abs(Z).sum(axis=1) > 1e-3).all())


@settings(max_examples=60, deadline=None)
@given(matrices, st.floats(1e-3, 1e3))
def test_positive_scaling(Z, c):
    assert g.total_variance(c * Z) == pytest.approx(c**2 * g.total_variance(Z), rel=1e-9)
    assert g.mean_cosine(c * Z) == pytest.approx(g.mean_cosine(Z), rel=1e-9, abs=1e-12)
    assert g.rankme(c * Z) == pytest.approx(g.rankme(Z), rel=1e-6)
    assert g.participation_ratio(c * Z) == pytest.approx(g.participation_ratio(Z), rel=1e-6)


@settings(max_examples=60, deadline=None)
@given(matrices, st.floats(-20, 20))
def test_common_offset_keeps_centered_measures(Z, shift):
    offset = shift * np.linspace(1, 2, Z.shape[1])
    assert g.total_variance(Z + offset) == pytest.approx(g.total_variance(Z), rel=1e-6, abs=1e-9)
    assert g.participation_ratio(Z + offset) == pytest.approx(g.participation_ratio(Z), rel=1e-5)


@settings(max_examples=60, deadline=None)
@given(matrices, st.randoms(use_true_random=False))
def test_row_permutation(Z, rnd):
    perm = list(range(len(Z)))
    rnd.shuffle(perm)
    P = Z[perm]
    for f in (g.total_variance, g.rankme, g.participation_ratio):
        assert f(P) == pytest.approx(f(Z), rel=1e-8, abs=1e-12)
    assert g.mean_cosine(P) == pytest.approx(g.mean_cosine(Z), rel=1e-8, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 12), st.integers(0, 2**31 - 1))
def test_isotropic_rank_r(r, seed):
    rng = np.random.default_rng(seed)
    d = 16
    # r equal singular values on orthonormal, centered columns: exactly isotropic in r dims
    n = 64
    basis, _ = np.linalg.qr(np.column_stack([np.ones(n), rng.standard_normal((n, r))]))
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    Z = 3.0 * basis[:, 1:] @ V[:, :r].T
    assert g.participation_ratio(Z) == pytest.approx(r, rel=1e-9)
    assert g.rankme(Z) == pytest.approx(r, rel=1e-4)


def test_offset_collapses_rankme_but_not_pr():
    rng = np.random.default_rng(7)
    Z = rng.standard_normal((2000, 32))
    far = Z + 1e3 * rng.standard_normal(32)
    assert g.rankme(far) < 1.1 < 25 < g.rankme(Z)
    assert g.participation_ratio(far) == pytest.approx(g.participation_ratio(Z), rel=1e-8)


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("f", [g.total_variance, g.mean_cosine, g.rankme, g.participation_ratio,
                               g.singular_values, g.covariance_eigenvalues, g.summary])
@pytest.mark.parametrize("bad, match", [
    (np.array([[1.0, np.nan], [0.0, 1.0]]), "NaN"),
    (np.array([[1.0, np.inf], [0.0, 1.0]]), "NaN or infinite"),
    (np.ones(5), "2-D"),
    (np.ones((2, 2, 2)), "2-D"),
    (np.empty((0, 3)), "at least"),
    (np.array([["a", "b"]]), "numeric"),
])
def test_bad_input(f, bad, match):
    with pytest.raises(ValueError, match=match) as info:
        f(bad)
    assert "Z" in str(info.value)


@pytest.mark.parametrize("f", [g.total_variance, g.mean_cosine, g.participation_ratio, g.covariance_eigenvalues])
def test_needs_two_rows(f):
    with pytest.raises(ValueError, match="Z: needs at least 2"):
        f(np.ones((1, 3)))


def test_zero_norm_row_for_cosine():
    Z = np.ones((300, 4))
    Z[257] = 0
    with pytest.raises(ValueError, match="Z: zero-norm row at index 257"):
        g.mean_cosine(Z)


@pytest.mark.parametrize("eps", [0, -1e-7, np.nan])
def test_bad_eps(eps):
    with pytest.raises(ValueError, match="eps"):
        g.rankme(np.eye(3), eps=eps)


# ----------------------------------------------------------------------------- extreme magnitudes

def _offset_data(seed=11):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((200, 24)) * np.linspace(2, 0.2, 24) + 0.3


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e-170, 1e-300, 1e300, 2.0**-600])
def test_scale_invariant_measures_survive_extreme_magnitudes(scale):
    Z = _offset_data()
    assert g.mean_cosine(Z * scale) == pytest.approx(g.mean_cosine(Z), rel=1e-12)
    assert g.rankme(Z * scale) == pytest.approx(g.rankme(Z), rel=1e-12)
    assert g.participation_ratio(Z * scale) == pytest.approx(g.participation_ratio(Z), rel=1e-12)
    assert g.rankme((Z * scale)[:10]) == pytest.approx(g.rankme(Z[:10]), rel=1e-12)  # n < d


def test_scaled_spectra_are_scaled_back_or_refused():
    Z = _offset_data()
    np.testing.assert_allclose(g.singular_values(Z * 1e200), 1e200 * g.singular_values(Z), rtol=1e-12)
    np.testing.assert_allclose(g.covariance_eigenvalues(Z * 1e-100), 1e-200 * g.covariance_eigenvalues(Z),
                               rtol=1e-12)
    assert g.total_variance(Z * 1e-100) == pytest.approx(1e-200 * g.total_variance(Z), rel=1e-12)
    for scale in (2.0**400, 2.0**-400):  # rescaled inside, variances still representable
        s, ref = g.summary(Z * scale), g.summary(Z)
        assert s == pytest.approx({**ref, "total_variance": ref["total_variance"] * scale**2}, rel=1e-12)
    for f in (g.total_variance, g.covariance_eigenvalues, g.summary):
        with pytest.raises(ValueError, match="Z: .*exceed.* float64"):
            f(Z * 1e200)  # variances near 1e400: not representable
        with pytest.raises(ValueError, match="Z: .*below.* float64"):
            f(Z * 1e-200)  # variances near 1e-400


def test_mean_cosine_rows_of_wildly_different_norms():
    Z = _offset_data()
    W = Z * np.logspace(-300, 300, len(Z))[:, None]
    assert g.mean_cosine(W) == pytest.approx(g.mean_cosine(Z), rel=1e-12)


# (values computed before the extreme-magnitude changes, on the same seeded matrices)
PINNED = {
    "f32": [48.34745980199276, -9.443962217197119e-05, 47.376003807191005, 43.544668375183335,
            48.3474598019928, -9.443962217197119e-05, 47.376003807191005, 43.544668375183335],
    "f64_offset": [89.54968532277685, 0.14532918850300652, 52.08774444375127, 32.68948876242755,
                   89.54968532277682, 0.14532918850300652, 52.08774444375127, 32.68948876242755],
    "f64_n_below_d": [93.90204310235386, -0.0005172972213337163, 37.53100962390274, 27.467274479576542,
                      93.9020431023539, -0.0005172972213337163, 37.53100962390274, 27.467274479576542],
}


def pinned_matrices():
    rng = np.random.default_rng(20240611)
    return {"f32": rng.standard_normal((500, 48)).astype(np.float32),
            "f64_offset": rng.standard_normal((300, 64)) * np.linspace(2, 0.1, 64) + 0.5,
            "f64_n_below_d": rng.standard_normal((40, 96))}


@pytest.mark.parametrize("name", list(PINNED))
def test_ordinary_inputs_give_the_pinned_values(name):
    Z = pinned_matrices()[name]
    s = g.summary(Z)
    got = [g.total_variance(Z), g.mean_cosine(Z), g.rankme(Z), g.participation_ratio(Z),
           s["total_variance"], s["mean_cosine"], s["rankme"], s["participation_ratio"]]
    assert got == pytest.approx(PINNED[name], rel=1e-12, abs=1e-18)
