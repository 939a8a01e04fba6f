"""Tests of :mod:`embdiag.metrics.geometry` against independent references (float64 SVDs,
``np.var``, brute-force cosines, hand-worked values, invariances, exact power-of-two
rescaling, forced small chunks).

Equivalent mutants
------------------
Mutants of ``tools/mutate.py`` (mutmut names ``embdiag.metrics.geometry.x_<function>__mutmut_<k>``)
that survive because they change no result; each has a comment next to the code.

- ``_chunks`` 6, 12 (``max(65, ...)``, ``max(d, 2)``): the chunk size changes memory use and
  the order of float64 sums only.
- ``_check`` 6, 10, 13 and ``summary`` 6, 10, 14 (``finite=None``/``True``/dropped in the first
  ``as_matrix``): None is falsy like False; True raises the same error the later check raises.
  ``_check`` 33 and ``summary`` 9, 28 (``min_rows`` dropped): the other call checks it with
  the same message (and ``as_matrix`` refuses an empty ``Z`` by default).
  ``_check`` 19, 25 (``workers=None``/``2``): ``_block_amax`` reads on one thread whatever it is given.
- ``_read`` 2, ``_unit_sum`` 2 (``astype(None)``): that is ``astype(float64)``.
  ``_read`` 10 (``if e or True``): ``ldexp(Y, 0)`` is exactly ``Y``.
- ``_read`` 4, 5, ``_unit_sum`` 4, 5, ``_block_amax`` 15, 16, 20 (``release_rows`` with a bound
  of None or ``a - s``): they give back more or other pages of a memory map than the chunk
  just read; memory only, never a result (the next pass releases every page it reads;
  ``test_geometry_gives_back_the_pages_it_has_read`` bounds what stays).
- ``_over_chunks`` 10-14, 23 (when to use threads, how many): each chunk's sums are
  computed on one BLAS thread and totalled in chunk order however many threads compute
  them (``test_summary_by_blocks_does_not_depend_on_where_or_in_which_order_blocks_run``).
- ``_scatter`` 10, ``total_variance`` 17 (``if e or True``): with ``e == 0`` both branches give
  the same float64 means / sums; the other branch only avoids a copy.
- ``_refined_eigvals`` 9, 14 (``top >= 0``; no lower clip): differ only for a Gram with no
  positive eigenvalue, which (trace >= 0) is the exactly zero Gram of constant or zero
  data. ``_refined_eigvals`` 11, 29 (``<=`` / ``>`` at the 1e-12 threshold): differ only on
  exact equality, where either side is accurate. ``_refined_eigvals`` 8 (``or``): always
  refining recomputes nothing when no eigenvalue is small; time only.
  ``_refined_eigvals`` 35, 42 (``m <= r or True``, ``m < r``): the m small eigenvalues come
  out the same from the data projected on their m eigenvectors as from the data with the r
  large directions projected out (the latter only saves work when m > r);
  ``_refined_eigvals`` 37 (``None`` for ``complement=False``): falsy alike.
- ``_small_n_spectrum`` 3, 4 (``None`` slice bounds): the same rows. ``_small_n_spectrum``
  21, 25 and ``_spectra`` 68, 84 (``keep=None``, ``keep=d``): an n x n (d x d) Gram has n (d)
  eigenvalues, all of which are kept either way.
- ``_spectra`` 5 (``n <= d``): at n == d both Grams are d x d with the same eigenvalues.
- ``_spectra`` 7, 16, ``rankme`` 16, 17, ``singular_values`` 17, 18,
  ``covariance_eigenvalues`` 21, 22, ``participation_ratio`` 14, 15: a spectrum that is not
  asked for is computed and discarded; time only. ``_spectra`` 9, ``rankme`` 13,
  ``singular_values`` 14, ``covariance_eigenvalues`` 18, ``participation_ratio`` 11: ``None``
  for a boolean flag, falsy like False. ``_spectra`` 47 (``""`` for ``None``): the
  unrequested spectrum is never read.
- ``_unscale`` 3, 5 (``under="ignore"`` dropped): numpy ignores underflow by default; they
  differ only under a caller's ``np.seterr(under="raise")``, which the module does not
  support (harmless underflows elsewhere raise there too).
- ``_unit_total`` 5 (``total -=``): the sign of the summed unit vectors does not change its
  squared norm.
- ``total_variance`` 61 (``"IJ,IJ->"``): the same einsum contraction.

Note: ``pytest.approx`` has a default absolute tolerance of 1e-12, so comparisons of tiny
values pass ``abs=0`` (or compare rescaled values); without it they accept anything.
"""

import warnings

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
    assert np.allclose(
        g.singular_values(Z),
        np.linalg.svd(Z.astype(np.float64), compute_uv=False),
        rtol=0,
        atol=1e-12 * np.linalg.norm(Z.astype(np.float64), 2),
    )
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


def test_blocks_cover_the_rows_in_order():
    assert g.blocks(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert g.blocks(3) == [(0, 3)]
    assert g.blocks(3, 1) == [(0, 1), (1, 2), (2, 3)]
    with pytest.raises(ValueError, match="block_rows: "):
        g.blocks(10, 0)


def _in_order(Z, reverse=False):
    """A ``map_blocks`` that runs the blocks on one thread each, optionally last block first."""

    def map_blocks(fn, spans, *args):
        order = list(reversed(spans)) if reverse else spans
        out = {span: fn(Z, *span, *args, workers=1) for span in order}
        return [out[span] for span in spans]

    return map_blocks


@pytest.mark.parametrize("kind", ["full", "low_rank", "tiny"])
def test_summary_by_blocks_does_not_depend_on_where_or_in_which_order_blocks_run(kind, monkeypatch):
    """What a cluster relies on: the blocks' sums, however computed, are added in block order, and
    a block's sums do not depend on the threads that computed them."""
    rng = np.random.default_rng(8)
    Z = {
        "full": rng.standard_normal((1000, 30)) + 3.0,
        "low_rank": rng.standard_normal((1000, 2)) @ rng.standard_normal((2, 30)) + 1.0,  # refined spectra
        "tiny": (rng.standard_normal((1000, 30)) + 3.0) * 2.0**-400,
    }[kind]  # read as Z * 2**400
    one_block = g.summary(Z)
    monkeypatch.setattr(g, "_CHUNK_ELEMENTS", 64 * 30)  # 64-row chunks, several per block
    monkeypatch.setattr(g, "_WORKERS", 2)
    here = g.summary(Z, block_rows=300)
    assert g.summary(Z, block_rows=300, map_blocks=_in_order(Z)) == here
    assert g.summary(Z, block_rows=300, map_blocks=_in_order(Z, reverse=True)) == here
    for key in here:  # other chunks and blocks: the same sums in another order
        assert here[key] == pytest.approx(one_block[key], rel=1e-9, abs=0)


def test_summary_asks_map_blocks_for_every_pass_over_the_rows(monkeypatch):
    """Every pass over Z (its largest magnitude, the Gram and sums, refinements) goes through
    ``map_blocks``, always with the blocks of ``block_rows``: what lets a cluster do them."""
    rng = np.random.default_rng(10)
    Z = rng.standard_normal((1000, 2)) @ rng.standard_normal((2, 30)) + 1.0  # both spectra refined
    asked = []

    def recording(fn, spans, *args):
        asked.append((fn.__name__, spans))
        return _in_order(Z)(fn, spans, *args)

    expected = g.summary(Z, block_rows=300)
    assert g.summary(Z, block_rows=300, map_blocks=recording) == expected
    assert [name for name, _ in asked] == ["_block_amax", "_block_moments", "_block_projected", "_block_projected"]
    assert all(spans == g.blocks(1000, 300) for _, spans in asked)
    assert expected["mean_cosine"] == pytest.approx(g.mean_cosine(Z), rel=1e-12)


def test_the_magnitude_of_every_chunk_counts(monkeypatch):
    rng = np.random.default_rng(11)
    Z = rng.standard_normal((640, 30)) + 1.0
    Z[:64] *= 2.0**520  # the first 64-row chunk only: its squares overflow unless rescaled
    expected = [g.rankme(Z), g.participation_ratio(Z)]  # one chunk
    monkeypatch.setattr(g, "_CHUNK_ELEMENTS", 64 * 30)
    assert [g.rankme(Z), g.participation_ratio(Z)] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n", [5, 50])  # n < d: the n x n Gram; n >= d: the d x d Gram
def test_a_zero_row_is_fine_for_spectra_and_refused_for_cosines(n):
    Z = np.random.default_rng(12).standard_normal((n, 20))
    Z[1] = 0.0
    ref = np.linalg.svd(Z, compute_uv=False)
    assert g.singular_values(Z) == pytest.approx(ref, rel=1e-9, abs=1e-12)
    assert g.rankme(Z) > 1 and g.participation_ratio(Z) > 1
    for f in (g.mean_cosine, g.summary):
        with pytest.raises(ValueError, match="zero-norm row at index 1"):
            f(Z)


@pytest.mark.parametrize("rows", [0, 1])
def test_summary_needs_two_rows(rows):
    with pytest.raises(ValueError, match="Z: "):
        g.summary(np.ones((rows, 3)))


def test_summary_is_the_four_functions_for_one_block():
    Z = np.random.default_rng(9).standard_normal((500, 12)).astype(np.float32) + 1
    assert g.summary(Z) == {
        "total_variance": pytest.approx(g.total_variance(Z), rel=1e-12),
        "mean_cosine": g.mean_cosine(Z),
        "rankme": g.rankme(Z),
        "participation_ratio": g.participation_ratio(Z),
    }


def test_integer_and_float16_inputs():
    rng = np.random.default_rng(6)
    Zi = rng.integers(-5, 6, size=(200, 12))
    assert g.rankme(Zi) == pytest.approx(g.rankme(Zi.astype(np.float64)), rel=1e-12)
    Zh = rng.standard_normal((200, 12)).astype(np.float16)
    assert g.participation_ratio(Zh) == pytest.approx(g.participation_ratio(Zh.astype(np.float64)), rel=1e-12)
    assert isinstance(g.total_variance(Zi), float)


# ----------------------------------------------------------------------------- properties

finite = st.floats(-10, 10, allow_nan=False, width=32)
matrices = (
    st.tuples(st.integers(3, 30), st.integers(1, 8))
    .flatmap(lambda s: arrays(np.float64, s, elements=finite))
    .filter(lambda Z: np.linalg.norm(Z - Z.mean(0)) > 1e-3 and (np.abs(Z).sum(axis=1) > 1e-3).all())
)


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


@pytest.mark.parametrize(
    "f",
    [
        g.total_variance,
        g.mean_cosine,
        g.rankme,
        g.participation_ratio,
        g.singular_values,
        g.covariance_eigenvalues,
        g.summary,
    ],
)
@pytest.mark.parametrize(
    "bad, match",
    [
        (np.array([[1.0, np.nan], [0.0, 1.0]]), "NaN"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), "NaN or infinite"),
        (np.ones(5), "2-D"),
        (np.ones((2, 2, 2)), "2-D"),
        (np.empty((0, 3)), "at least"),
        (np.array([["a", "b"]]), "numeric"),
    ],
)
def test_bad_input(f, bad, match):
    with pytest.raises(ValueError, match=match) as info:
        f(bad)
    assert str(info.value).startswith("Z: ")  # names the argument


@pytest.mark.parametrize(
    "f", [g.total_variance, g.mean_cosine, g.participation_ratio, g.covariance_eigenvalues, g.summary]
)
@pytest.mark.parametrize("value", [1.0, 1e200])
def test_needs_two_rows(f, value):
    with pytest.raises(ValueError, match="^Z: needs at least 2"):
        f(np.full((1, 3), value))


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
    np.testing.assert_allclose(g.covariance_eigenvalues(Z * 1e-100), 1e-200 * g.covariance_eigenvalues(Z), rtol=1e-12)
    # (abs=0: pytest.approx's default absolute tolerance of 1e-12 would accept any tiny value)
    assert g.total_variance(Z * 1e-100) == pytest.approx(1e-200 * g.total_variance(Z), rel=1e-12, abs=0)
    for scale in (2.0**400, 2.0**-400):  # rescaled inside, variances still representable
        s, ref = g.summary(Z * scale), g.summary(Z)
        assert s == pytest.approx({**ref, "total_variance": ref["total_variance"] * scale**2}, rel=1e-12, abs=0)
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
    "f32": [
        48.34745980199276,
        -9.443962217197119e-05,
        47.376003807191005,
        43.544668375183335,
        48.3474598019928,
        -9.443962217197119e-05,
        47.376003807191005,
        43.544668375183335,
    ],
    "f64_offset": [
        89.54968532277685,
        0.14532918850300652,
        52.08774444375127,
        32.68948876242755,
        89.54968532277682,
        0.14532918850300652,
        52.08774444375127,
        32.68948876242755,
    ],
    "f64_n_below_d": [
        93.90204310235386,
        -0.0005172972213337163,
        37.53100962390274,
        27.467274479576542,
        93.9020431023539,
        -0.0005172972213337163,
        37.53100962390274,
        27.467274479576542,
    ],
}


def pinned_matrices():
    rng = np.random.default_rng(20240611)
    return {
        "f32": rng.standard_normal((500, 48)).astype(np.float32),
        "f64_offset": rng.standard_normal((300, 64)) * np.linspace(2, 0.1, 64) + 0.5,
        "f64_n_below_d": rng.standard_normal((40, 96)),
    }


@pytest.mark.parametrize("name", list(PINNED))
def test_ordinary_inputs_give_the_pinned_values(name):
    Z = pinned_matrices()[name]
    s = g.summary(Z)
    got = [
        g.total_variance(Z),
        g.mean_cosine(Z),
        g.rankme(Z),
        g.participation_ratio(Z),
        s["total_variance"],
        s["mean_cosine"],
        s["rankme"],
        s["participation_ratio"],
    ]
    assert got == pytest.approx(PINNED[name], rel=1e-12, abs=1e-18)


# ----------------------------------------------------------------------------- tests from mutation testing
# Each test below kills surviving mutants of tools/mutate.py; it checks a property of the
# result against an independent reference, not the implementation's internals.


def test_single_row_has_its_norm_as_singular_value():
    # one row: the only singular value is the row's Euclidean norm (3-4-5), RankMe ~ 1
    assert g.singular_values(np.array([[3.0, 4.0]])) == pytest.approx([5.0], rel=1e-15)
    assert g.singular_values(np.array([[3.0], [4.0]])) == pytest.approx([5.0], rel=1e-15)
    assert g.rankme(np.array([[3.0, 4.0, 0.0]])) == pytest.approx(1.0, abs=1e-6)


def test_two_rows_by_hand():
    # two points x1, x2: centered rows are +-(x1 - x2) / 2, so the covariance (ddof=1) has the
    # single nonzero eigenvalue |x1 - x2|^2 / 2 and the participation ratio is exactly 1
    for Z in (np.array([[1.0, 2.0, 4.0], [3.0, -1.0, 4.0]]), np.array([[1.0], [5.0]])):
        delta = Z[0] - Z[1]
        expected = np.zeros(min(Z.shape))
        expected[0] = delta @ delta / 2
        np.testing.assert_allclose(g.covariance_eigenvalues(Z), expected, rtol=1e-14, atol=1e-14)
        assert g.total_variance(Z) == pytest.approx(delta @ delta / 2, rel=1e-14)
        assert g.participation_ratio(Z) == pytest.approx(1.0, rel=1e-12)
        assert g.summary(Z)["participation_ratio"] == pytest.approx(1.0, rel=1e-12)


def _near_deficient(seed, n, d, big):
    """``big`` singular values near 1, the other ``d - big`` between 1e-7 and 1e-8 (eigenvalues
    below 1e-12 x the largest, so they are recomputed from the data), plus an offset inside
    the span of the large directions (so raw and centered spectra are both near-deficient)."""
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, d)))
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    spectrum = np.concatenate([np.linspace(1.0, 0.5, big), np.logspace(-7, -8, d - big)])
    return (U * spectrum) @ V.T + 0.05 * V[:, :big] @ rng.standard_normal(big)


def _svd_spectra(Z):
    s = np.linalg.svd(Z, compute_uv=False)
    c = np.linalg.svd(Z - Z.mean(axis=0), compute_uv=False) ** 2 / (len(Z) - 1)
    return s, c


@pytest.mark.parametrize("big", [4, 16])  # few small eigenvalues (m <= r) and many (m > r)
def test_tiny_singular_values_in_row_chunks(big, monkeypatch):
    # Singular values 1e-7..1e-8 of the largest, read in 64-row chunks: every chunk must count,
    # once, and the centered ones must be centered on the mean of all rows.
    Z = _near_deficient(30 + big, 700, 24, big)
    s, c = _svd_spectra(Z)
    monkeypatch.setattr(g, "_CHUNK_ELEMENTS", 64 * 24)  # 64-row chunks: 11 of them
    np.testing.assert_allclose(g.singular_values(Z), s, rtol=1e-6, atol=0)
    np.testing.assert_allclose(g.covariance_eigenvalues(Z), c, rtol=1e-6, atol=0)


@pytest.mark.parametrize("scale", [1e3, 1e-3, 2.0**400, 2.0**-400, 1e-100])
def test_tiny_singular_values_at_any_magnitude(scale, monkeypatch):
    # the same spectra scaled (1e3 and 1e-3 as they are, the others rescaled inside): which
    # eigenvalues count as small is relative to the largest, so results scale with `scale`
    Z = _near_deficient(34, 700, 24, 4)
    s, c = _svd_spectra(Z)
    monkeypatch.setattr(g, "_CHUNK_ELEMENTS", 64 * 24)
    np.testing.assert_allclose(g.singular_values(Z * scale) / scale, s, rtol=1e-6, atol=0)
    np.testing.assert_allclose(g.covariance_eigenvalues(Z * scale) / scale**2, c, rtol=1e-6, atol=0)
    R, P = svd_reference(Z)
    assert g.rankme(Z * scale) == pytest.approx(R, rel=1e-9, abs=0)
    assert g.participation_ratio(Z * scale) == pytest.approx(P, rel=1e-9, abs=0)


def test_rank_deficient_data_at_small_scale():
    # exactly rank 3 at entries ~1e-3 (a Gram whose largest eigenvalue is below 1): the zero
    # singular values must come out at the 1e-15 x largest the docstring promises, as from an SVD
    rng = np.random.default_rng(8)
    Z = 1e-3 * (rng.standard_normal((300, 3)) @ rng.standard_normal((3, 20)))
    s = np.linalg.svd(Z, compute_uv=False)
    np.testing.assert_allclose(g.singular_values(Z), s, rtol=0, atol=1e-14 * s[0])
    np.testing.assert_allclose(g.singular_values(Z.T), s, rtol=0, atol=1e-14 * s[0])  # n < d


@pytest.mark.parametrize("scale", [2.0**400, 2.0**-400, 1e-100, 1e120])
def test_total_variance_at_extreme_magnitudes(scale, monkeypatch):
    # brute force np.var on the unscaled data; chunked (64 rows) and unchunked
    Z = _offset_data() + np.linspace(-3, 3, 24)
    expected = np.var(Z, axis=0, ddof=1).sum()
    assert g.total_variance(Z * scale) / scale**2 == pytest.approx(expected, rel=1e-12, abs=0)
    assert g.summary(Z * scale)["total_variance"] / scale**2 == pytest.approx(expected, rel=1e-12, abs=0)
    monkeypatch.setattr(g, "_CHUNK_ELEMENTS", 64 * 24)  # 4 chunks
    assert g.total_variance(Z * scale) / scale**2 == pytest.approx(expected, rel=1e-12, abs=0)


@pytest.mark.parametrize("scale", [1e200, 1e-100, 2.0**-300, 2.0**-600])
def test_centered_spectrum_with_fewer_rows_than_dimensions_at_extreme_magnitudes(scale):
    Z = _offset_data()[:10]  # 10 x 24
    _, c = _svd_spectra(Z)
    P = c.sum() ** 2 / np.sum(c**2)
    assert g.participation_ratio(Z * scale) == pytest.approx(P, rel=1e-12, abs=0)
    if 1e-150 < scale < 1e150:  # else the variances are not representable (and refused)
        np.testing.assert_allclose(
            g.covariance_eigenvalues(Z * scale) / scale**2, c[:10], rtol=1e-12, atol=1e-14 * c[0]
        )


def test_large_column_offsets_at_extreme_magnitudes():
    # spread 1e-3 around column offsets up to 1e3 (not a common offset): the centered measures
    # must not lose digits to the offsets, at unit scale or rescaled inside
    rng = np.random.default_rng(12)
    Z = 1e-3 * rng.standard_normal((400, 16)) * np.linspace(1, 3, 16) + 1e3 * rng.standard_normal(16)
    _, c = _svd_spectra(Z)
    P = c.sum() ** 2 / np.sum(c**2)
    for scale in (1.0, 2.0**400, 2.0**-400):
        np.testing.assert_allclose(g.covariance_eigenvalues(Z * scale) / scale**2, c, rtol=1e-8, atol=0)
        assert g.participation_ratio(Z * scale) == pytest.approx(P, rel=1e-9, abs=0)


def test_participation_ratio_of_a_tiny_spread_around_a_tiny_offset():
    # entries 2**-99 (inside the range used unscaled) whose spread is 2**-45 of that: the
    # covariance eigenvalues are near 2**-280, their squares below the float64 range
    K = np.random.default_rng(13).integers(-8, 9, size=(300, 12)).astype(np.float64)
    Z = 2.0**-99 * (1 + 2.0**-45 * K)  # exact: Z is an affine image of the integers K
    assert np.array_equal((Z / 2.0**-99 - 1) * 2.0**45, K)
    lam = np.linalg.svd(K - K.mean(axis=0), compute_uv=False) ** 2
    P = lam.sum() ** 2 / np.sum(lam**2)
    assert g.participation_ratio(Z) == pytest.approx(P, rel=1e-9)
    assert g.summary(Z)["participation_ratio"] == pytest.approx(P, rel=1e-9)


def test_nonpositive_data_at_extreme_magnitudes():
    # all entries <= 0, a dead (zero) dimension, magnitudes near 1e200: the largest magnitude
    # is that of the most negative entry
    Z = -np.abs(_offset_data())
    Z[:, 0] = 0.0
    R, P = svd_reference(Z)
    for scale in (1e200, 1e-200):
        assert g.rankme(Z * scale) == pytest.approx(R, rel=1e-12)
        assert g.participation_ratio(Z * scale) == pytest.approx(P, rel=1e-12)
        np.testing.assert_allclose(g.singular_values(Z * scale) / scale, np.linalg.svd(Z, compute_uv=False), rtol=1e-12)


def test_constant_data_has_zero_variance_at_any_magnitude():
    for v in (1e-200, 1e200, 0.1, -7.0):
        Z = np.full((5, 3), v)
        assert g.total_variance(Z) == 0.0
        assert g.summary(Z)["total_variance"] == 0.0
        assert g.participation_ratio(Z) == 1.0
        np.testing.assert_array_equal(g.covariance_eigenvalues(Z), np.zeros(3))
        np.testing.assert_array_equal(g.covariance_eigenvalues(Z[:2]), np.zeros(2))  # n < d


def test_smallest_normal_variance_is_representable():
    # rows (a, a) and (-a, -a) with a = 2**-512: total variance 4 a**2 = 2**-1022, the smallest
    # normal float64, which is inside the range and must be returned rather than refused
    a = 2.0**-512
    Z = np.array([[a, a], [-a, -a]])
    assert g.total_variance(Z) == np.finfo(np.float64).tiny
    assert g.summary(Z)["total_variance"] == np.finfo(np.float64).tiny
    np.testing.assert_array_equal(g.covariance_eigenvalues(Z), [np.finfo(np.float64).tiny, 0.0])


def test_errors_name_the_quantity_out_of_range():
    Z = _offset_data()
    with pytest.raises(ValueError, match=r"^Z: singular values exceed the float64 range"):
        g.singular_values(np.full((4, 4), 1e308))  # singular values 4e308
    for f, what in (
        (g.total_variance, "variances"),
        (g.summary, "variances"),
        (g.covariance_eigenvalues, "covariance eigenvalues"),
    ):
        with pytest.raises(ValueError, match=rf"^Z: {what} exceed the float64 range"):
            f(Z * 1e200)
        with pytest.raises(ValueError, match=rf"^Z: {what} fall below the float64 range"):
            f(Z * 1e-200)


FUNCTIONS = [
    g.total_variance,
    g.mean_cosine,
    g.rankme,
    g.participation_ratio,
    g.singular_values,
    g.covariance_eigenvalues,
    g.summary,
]


@pytest.mark.parametrize("scale", [1.0, 1e200, 1e-200, 2.0**-600, 1e300])
def test_extreme_magnitudes_warn_nothing(scale):
    # over- and underflow are handled inside: no warning of any kind reaches the caller, and
    # the only errors are the documented ValueErrors
    Z = _offset_data() * scale
    W = _offset_data() * np.logspace(-300, 300, 200)[:, None]  # rows of wildly different norms
    for X in (Z, Z[:10], W):
        for f in FUNCTIONS:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    f(X)
                except ValueError as err:
                    assert str(err).startswith("Z: ") and "float64 range" in str(err)


def test_geometry_gives_back_the_pages_it_has_read(tmp_path, monkeypatch, resident_kib):
    """A memory map's pages are released once read, by every pass (memory only: not a result)."""
    ROWS, D = 4096, 512  # 8 MiB of float32, one chunk
    X = np.random.default_rng(13).standard_normal((ROWS, D)).astype(np.float32)
    np.save(tmp_path / "x.npy", X)
    path = tmp_path / "x.npy"
    M = np.load(path, mmap_mode="r")
    for f in (
        lambda Z: g._block_amax(Z, 0, ROWS, workers=1),
        g.mean_cosine,
        g.total_variance,
        g.rankme,
        g.summary,
        lambda Z: g.summary(Z, block_rows=1000),
    ):
        f(M)
        assert resident_kib(path) <= 2048 + 64, f  # a large folio at most
    monkeypatch.setattr(g, "_CHUNK_ELEMENTS", 256 * D)  # 16 chunks
    assert g.summary(M) == pytest.approx(g.summary(X), rel=1e-12)
    assert resident_kib(path) <= 2048 + 64
