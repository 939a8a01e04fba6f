"""embdiag.metrics.hygiene against brute force, numpy, scipy and scikit-learn."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from embdiag.metrics import hygiene as hy
from embdiag.metrics.retrieval import topk


def _brute_first(X) -> np.ndarray:
    """The first identical row of each row, by comparing every pair of rows (values, NaN by bits)."""
    bits = [(r + r.dtype.type(0)).tobytes() for r in np.asarray(X)]  # -0.0 + 0 is 0.0
    return np.array([next(j for j in range(i + 1) if bits[j] == bits[i]) for i in range(len(X))])


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(hy, "CHUNK_ROWS", 7)  # many chunk boundaries


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_duplicates_match_a_pairwise_check_across_chunks(small_chunks, dtype):
    rng = np.random.default_rng(0)
    X = rng.integers(-2, 3, size=(60, 3)).astype(dtype)  # many equal rows by chance
    X[5] = -0.0 * X[5]  # -0.0 equals 0.0
    X[11] = np.nan
    X[40] = np.nan
    first = hy.duplicate_rows(X)
    np.testing.assert_array_equal(first, _brute_first(X))
    assert (first[first != np.arange(60)] < np.flatnonzero(first != np.arange(60))).all()


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(
        np.float32, st.tuples(st.integers(1, 30), st.integers(1, 5)), elements=st.sampled_from([0.0, -0.0, 1.5, -2.0])
    )
)
def test_duplicates_property(X):
    np.testing.assert_array_equal(hy.duplicate_rows(X), _brute_first(X))


def test_duplicates_survive_hash_collisions(monkeypatch):
    # every row hashes alike: the byte comparison alone decides
    monkeypatch.setattr(hy, "_multipliers", lambda words: np.zeros(words, dtype=np.uint64))
    X = np.array([[1.0, 2.0], [2.0, 1.0], [1.0, 2.0], [3.0, 3.0]])
    np.testing.assert_array_equal(hy.duplicate_rows(X), [0, 1, 0, 3])


def test_duplicates_on_a_memmap(tmp_path, small_chunks):
    X = np.random.default_rng(1).standard_normal((50, 4)).astype(np.float32)
    X[30] = X[3]
    np.save(tmp_path / "x.npy", X)
    first = hy.duplicate_rows(np.load(tmp_path / "x.npy", mmap_mode="r"))
    assert list(np.flatnonzero(first != np.arange(50))) == [30] and first[30] == 3


def test_norms_match_numpy(small_chunks):
    X = np.random.default_rng(2).standard_normal((40, 9)).astype(np.float32)
    X[3] = 0
    np.testing.assert_allclose(hy.row_norms(X), np.linalg.norm(X.astype(np.float64), axis=1), rtol=1e-15)


def test_abnormal_norms_match_scipy_median_abs_deviation():
    from scipy.stats import median_abs_deviation

    rng = np.random.default_rng(3)
    norms = rng.lognormal(0, 0.3, 500)
    norms[[7, 9]] = [40.0, 0.01]
    logs = np.log(norms)
    z = np.abs(logs - np.median(logs)) / median_abs_deviation(logs, scale="normal")
    np.testing.assert_array_equal(hy.abnormal_norms(norms), z > hy.NORM_BOUND)
    assert hy.abnormal_norms(norms)[[7, 9]].all()


def test_unit_rows_have_no_abnormal_norm_and_zero_rows_are_apart():
    X = np.random.default_rng(4).standard_normal((300, 16)).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    norms = hy.row_norms(X)
    assert not hy.abnormal_norms(norms).any()  # float rounding is below the floor
    norms[[0, 1]] = [0.0, np.nan]
    norms[2] = 1.2  # 20% longer among unit rows
    assert list(np.flatnonzero(hy.abnormal_norms(norms))) == [2]


def _unit(X):
    X = np.asarray(X, dtype=np.float64)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_distance_shares_match_pairwise_distances(small_chunks):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 6)) * [5, 1, 1, 1, 1, 1] + [0, 3, 0, 0, 0, 0]
    U = _unit(X)
    diff = U[:, None, :] - U[None, :, :]
    distinct = ~np.eye(len(U), dtype=bool)
    per_dim = (diff**2 / 2)[distinct].mean(axis=0)  # sums to the mean 1 - cos over distinct pairs
    np.testing.assert_allclose(per_dim.sum(), (1 - U @ U.T)[distinct].mean(), rtol=1e-12)
    np.testing.assert_allclose(hy.distance_shares(hy.unit_moments(X)), per_dim / per_dim.sum(), rtol=1e-9)


def test_a_dominant_dimension_is_found():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((2000, 64))
    X[:, 17] *= 8  # T&vS's rogue dimension: a few coordinates with a large variance
    shares = hy.distance_shares(hy.unit_moments(X))
    assert list(np.flatnonzero(shares > hy.rogue_bound(64))) == [17]
    iso = hy.distance_shares(hy.unit_moments(rng.standard_normal((2000, 64))))
    assert iso.max() < hy.rogue_bound(64) and iso.sum() == pytest.approx(1)


def test_a_constant_direction_is_not_a_spread():
    X = np.tile([[3.0, 4.0]], (5, 1))
    assert np.isnan(hy.distance_shares(hy.unit_moments(X))).all()
    with pytest.raises(ValueError, match="no row"):
        hy.unit_moments(np.zeros((3, 2)))


@pytest.mark.parametrize("own", [True, False])
def test_contrast_matches_scipy_cdist(small_chunks, own):
    from scipy.spatial.distance import cdist

    rng = np.random.default_rng(7)
    G = rng.standard_normal((80, 12)) + 0.8  # rows share a direction: no cancellation is hidden
    G[4] = 0  # a zero row is left out of the gallery's moments
    kept = np.flatnonzero(np.linalg.norm(G, axis=1) > 0)
    rows = G[kept]
    if own:
        Q = rows[:15]  # each query is kept row i, left out of its own distances
        D = np.array([np.delete(cdist(q[None], rows, "cosine")[0], i) for i, q in enumerate(Q)])
    else:
        Q = rng.standard_normal((15, 12)) + 0.8
        D = cdist(Q, rows, "cosine")
    nearest = 1 - D.min(axis=1)
    rc, spread = hy.contrast(Q, nearest, hy.unit_moments(G), own_rows=own)
    np.testing.assert_allclose(rc, D.mean(axis=1) / D.min(axis=1), rtol=1e-9)
    np.testing.assert_allclose(spread, D.std(axis=1) / D.mean(axis=1), rtol=1e-7)


def test_contrast_of_an_exact_copy_is_infinite():
    G = np.eye(3)
    rc, _ = hy.contrast(G[:1], np.array([1.0]), hy.unit_moments(G))
    assert rc[0] == np.inf


@pytest.mark.parametrize("block", [1000, 59, 12])  # 59: a last block of 5 rows is joined
def test_inner_product_topk_matches_brute_force(monkeypatch, block):
    monkeypatch.setattr(hy, "SEARCH_ROWS", block)  # searched in blocks, merged
    rng = np.random.default_rng(8)
    G = rng.standard_normal((300, 10)) * rng.lognormal(0, 0.5, (300, 1))
    Q = rng.standard_normal((25, 10))
    S, I = hy.inner_product_topk(Q, G, 5, topk)
    ip = Q @ G.T
    np.testing.assert_array_equal(I, np.argsort(-ip, axis=1)[:, :5])
    np.testing.assert_allclose(S, np.take_along_axis(ip, I, axis=1), rtol=1e-5, atol=1e-5)
    # with one norm for every row, inner product and cosine rank alike
    U = _unit(G)
    np.testing.assert_array_equal(hy.inner_product_topk(Q, U, 5, topk)[1], topk(Q, U, 5)[1])


def test_a_shifted_query_set_is_out_of_distribution():
    rng = np.random.default_rng(9)
    centres = rng.standard_normal((20, 32)) * 3
    draw = lambda m: centres[rng.integers(0, 20, m)] + rng.standard_normal((m, 32))  # noqa: E731
    G = draw(3000)
    S, I = topk(G, G, 1, exclude_self=True)
    same = topk(draw(2000), G, 1)[0][:, 0]  # new rows from the gallery's distribution
    shifted = topk(rng.standard_normal((2000, 32)) * 3, G, 1)[0][:, 0]  # from elsewhere
    threshold, out = hy.below_quantile(np.concatenate([same, shifted]), S[:, 0], 0.01)
    assert threshold == np.sort(S[:, 0])[29]
    assert out[:2000].mean() < 0.03  # about 1% of in-distribution queries
    assert out[2000:].mean() > 0.9


def test_islands_match_networkx():
    import networkx as nx
    from sklearn.neighbors import NearestNeighbors

    rng = np.random.default_rng(10)
    X = np.concatenate([rng.standard_normal((60, 4)) + 30 * rng.standard_normal(4) for _ in range(5)])
    X = X[rng.permutation(len(X))]
    I = NearestNeighbors(n_neighbors=4).fit(X).kneighbors(X, return_distance=False)[:, 1:]
    labels = hy.islands(I)
    graph = nx.DiGraph([(i, int(j)) for i, row in enumerate(I) for j in row])
    components = sorted(nx.weakly_connected_components(graph), key=lambda c: (-len(c), min(c)))
    assert len(components) == 5
    for number, members in enumerate(components):
        assert set(np.flatnonzero(labels == number)) == members


@pytest.mark.parametrize("n", [10, 57, 100, 1001])
def test_median_interval_covers_the_median(n):
    rng = np.random.default_rng(n)
    hits = 0
    for _ in range(400):
        _, low, high = hy.median_interval(rng.standard_normal(n))
        hits += low <= 0 <= high
    assert hits / 400 >= 0.92
    assert np.isnan(hy.median_interval(np.arange(5.0))[1])  # too few rows for a 95% interval


def test_checks_name_the_argument():
    with pytest.raises(ValueError, match="quantile"):
        hy.below_quantile([0.5], [0.5], 2)
    with pytest.raises(ValueError, match="multiple"):
        hy.rogue_bound(10, 0.5)
