import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.neighbors import NearestNeighbors

from embdiag.metrics import retrieval as r


def dyadic_unit_rows(rng, n, d):
    """Unit rows whose dot products are exact in any summation order: many exact ties."""
    X = np.zeros((n, d))
    for i in range(n):
        if d >= 4 and rng.random() < 0.7:
            X[i, rng.choice(d, 4, replace=False)] = rng.choice([-0.5, 0.5], 4)
        else:
            X[i, rng.integers(d)] = rng.choice([-1.0, 1.0])
    return X


def brute_topk(Q, G, k, exclude_self=False):
    Qn = Q / np.linalg.norm(Q, axis=1, keepdims=True)
    Gn = G / np.linalg.norm(G, axis=1, keepdims=True)
    S = Qn @ Gn.T
    if exclude_self:
        np.fill_diagonal(S, -np.inf)
    idx = np.array([np.lexsort((np.arange(S.shape[1]), -row))[:k] for row in S])
    return np.take_along_axis(S, idx, axis=1), idx


# ----------------------------------------------------------------------------- topk

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("exclude_self", [False, True])
def test_topk_exact_ties_match_brute_force(dtype, exclude_self):
    rng = np.random.default_rng(0)
    for _ in range(15):
        n, d, k = int(rng.integers(12, 300)), int(rng.integers(1, 10)), int(rng.integers(1, 10))
        G = dyadic_unit_rows(rng, n, d)
        Q = G if exclude_self else dyadic_unit_rows(rng, 37, d)
        s, i = r.topk(Q, G, k, exclude_self=exclude_self, chunk_size=int(rng.integers(1, 80)), dtype=dtype)
        bs, bi = brute_topk(Q, G, k, exclude_self)
        assert np.array_equal(i, bi)
        assert np.array_equal(s, bs)
        assert s.dtype == dtype and i.shape == (len(Q), k)


def test_topk_float64_matches_brute_force_on_random_data():
    rng = np.random.default_rng(1)
    G = rng.standard_normal((2000, 48))
    Q = rng.standard_normal((150, 48))
    s, i = r.topk(Q, G, 10, dtype=np.float64, chunk_size=333)
    bs, bi = brute_topk(Q, G, 10)
    assert np.array_equal(i, bi)
    assert np.allclose(s, bs, rtol=0, atol=1e-14)
    s32, i32 = r.topk(Q.astype(np.float32), G.astype(np.float32), 10)
    assert np.abs(s32 - bs).max() < 1e-6
    assert (i32 == bi).mean() > 0.99


def test_topk_matches_sklearn_nearest_neighbors():
    rng = np.random.default_rng(2)
    G = rng.standard_normal((1500, 32))
    nn = NearestNeighbors(n_neighbors=11, metric="cosine", algorithm="brute").fit(G)
    dist, ind = nn.kneighbors(G)
    s, i = r.topk(G, G, 10, exclude_self=True, dtype=np.float64)
    assert np.array_equal(i, ind[:, 1:])  # sklearn lists each point as its own first neighbour
    assert np.allclose(s, 1 - dist[:, 1:], atol=1e-12)


def test_topk_memmap_gallery_and_chunk_invariance(tmp_path):
    rng = np.random.default_rng(3)
    G = rng.standard_normal((5000, 24)).astype(np.float32)
    path = tmp_path / "g.f32"
    G.tofile(path)
    M = np.memmap(path, dtype=np.float32, mode="r", shape=G.shape)
    Q = rng.standard_normal((64, 24)).astype(np.float32)
    ref = r.topk(Q, G, 7, dtype=np.float64)
    for cs in (97, 1024, None):
        got = r.topk(Q, M, 7, chunk_size=cs, dtype=np.float64)
        assert np.array_equal(got[1], ref[1])


def test_topk_extra_memory_is_bounded_by_the_chunk():
    rng = np.random.default_rng(4)
    G = rng.standard_normal((40_000, 64)).astype(np.float32)  # 10 MB gallery
    Q = rng.standard_normal((100, 64)).astype(np.float32)
    tracemalloc.start()
    r.topk(Q, G, 10, chunk_size=1000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    chunk_bytes = 1000 * 64 * 8 * 3 + 100 * 1000 * 5  # normalized chunk copies + score/mask buffers
    assert peak < chunk_bytes + 2_000_000 < G.nbytes / 2


def test_topk_sorted_descending_and_adversarial_order():
    # Gallery sorted by increasing similarity: every chunk beats the running top-k.
    rng = np.random.default_rng(5)
    q = rng.standard_normal(16)
    G = rng.standard_normal((3000, 16))
    G = G[np.argsort(G @ q / np.linalg.norm(G, axis=1))]
    s, i = r.topk(q[None], G, 25, chunk_size=50, dtype=np.float64)
    assert np.array_equal(i[0], np.arange(2999, 2974, -1))
    assert (np.diff(s, axis=1) <= 0).all()


@pytest.mark.parametrize("exclude_self", [False, True])
def test_topk_many_exact_ties_prefer_lower_index(exclude_self):
    # 3,000 identical rows: every chunk is one big tie, resolved by the lowest indices
    G = np.ones((3000, 4))
    G[-5:] = [1.0, 0, 0, 0]
    Q = G if exclude_self else G[:7]
    s, i = r.topk(Q, G, 3, exclude_self=exclude_self, chunk_size=1000)
    bs, bi = brute_topk(Q, G, 3, exclude_self)
    assert np.array_equal(i, bi) and np.array_equal(s, bs)
    assert i[0].tolist() == ([1, 2, 3] if exclude_self else [0, 1, 2])
    assert i[1].tolist() == ([0, 2, 3] if exclude_self else [0, 1, 2])


def test_topk_parallel_shares_merge_exactly(monkeypatch):
    # >= 8,192 rows: the gallery is split between worker threads; ties cross the split.
    monkeypatch.setattr(r, "_workers", lambda: 3)
    rng = np.random.default_rng(8)
    G = dyadic_unit_rows(rng, 12_500, 5)
    Q = dyadic_unit_rows(rng, 40, 5)
    for dtype in (np.float32, np.float64):
        s, i = r.topk(Q, G, 7, dtype=dtype)
        bs, bi = brute_topk(Q, G, 7)
        assert np.array_equal(i, bi) and np.array_equal(s, bs)
    same = np.ones((12_500, 3))
    s, i = r.topk(same, same, 4, exclude_self=True)
    lowest = np.array([[j for j in range(6) if j != q][:4] for q in range(12_500)])
    assert np.array_equal(i, lowest)


def test_integer_and_float16_inputs():
    rng = np.random.default_rng(6)
    G = rng.integers(-3, 4, size=(300, 8))
    G[np.abs(G).sum(1) == 0, 0] = 1
    a = r.topk(G, G, 5, exclude_self=True)
    b = r.topk(G.astype(np.float32), G.astype(np.float32), 5, exclude_self=True)
    assert np.array_equal(a[1], b[1])
    h = r.topk(G.astype(np.float16), G.astype(np.float16), 5, exclude_self=True)
    assert np.array_equal(h[1], b[1]) and h[0].dtype == np.float32


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(-20, 20), st.floats(1e-3, 1e3))
def test_positive_scaling_keeps_cosine_order_and_precision(seed, power, c):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((120, 6))
    labels = rng.integers(0, 3, 120)
    s, i = r.topk(G, G, 10, exclude_self=True, dtype=np.float64)
    # a power of two scales exactly: identical rankings and scores
    s2, i2 = r.topk(G * 2.0**power, G * 2.0**power, 10, exclude_self=True, dtype=np.float64)
    assert np.array_equal(i, i2) and np.array_equal(s, s2)
    assert r.precision_at_k(i2, labels) == r.precision_at_k(i, labels)
    # any positive factor: the same scores up to rounding
    s3, _ = r.topk(G * c, G * c, 10, exclude_self=True, dtype=np.float64)
    assert np.allclose(s3, s, rtol=0, atol=1e-13)


# ----------------------------------------------------------------------------- metrics

def test_precision_and_random_floor():
    labels = np.array([0, 0, 1, 1, 1, 2])
    nb = np.array([[1, 2], [0, 3], [3, 4], [2, 0], [5, 2], [0, 1]])
    per = r.precision_at_k(nb, labels, per_query=True)
    assert np.allclose(per, [0.5, 0.5, 1.0, 0.5, 0.5, 0.0])
    assert r.precision_at_k(nb, labels) == pytest.approx(0.5)
    assert r.random_floor(labels) == pytest.approx((2 / 6) ** 2 + (3 / 6) ** 2 + (1 / 6) ** 2)
    q = r.precision_at_k(nb[:2], labels, query_labels=np.array([1, 0]), per_query=True)
    assert np.allclose(q, [0.5, 0.5])


def test_precision_rejects_self_neighbours():
    with pytest.raises(ValueError, match="exclude_self"):
        r.precision_at_k(np.array([[0, 1], [0, 2], [0, 1]]), np.array([0, 1, 0]))


def test_hit_and_recall_representations_agree():
    nb = np.array([[3, 1, 4], [0, 2, 5], [5, 4, 1]])
    forms = [
        [np.array([1, 9]), {0, 7}, [2, 6]],
        np.array([[1, 9], [0, 7], [2, 6]]),
        np.array([np.isin(np.arange(10), row) for row in [[1, 9], [0, 7], [2, 6]]]),
    ]
    for P in forms:
        assert np.allclose(r.hit_at_k(nb, P, per_query=True), [1, 1, 0])
        assert np.allclose(r.hit_at_k(nb, P, k=1, per_query=True), [0, 1, 0])
        assert np.allclose(r.recall_at_k(nb, P, per_query=True), [0.5, 0.5, 0])
    assert r.hit_at_k(nb, np.array([4, 2, 5]), k=2) == pytest.approx(2 / 3)
    assert r.recall_at_k(nb, [np.array([3, 4, 1]), np.array([8]), np.array([5, 5])]) == pytest.approx(2 / 3)


def test_overlap_and_boundary_margin():
    a = np.array([[1, 2, 3], [4, 5, 6]])
    b = np.array([[3, 2, 1], [4, 7, 8]])
    assert np.allclose(r.overlap_at_k(a, b, per_query=True), [1, 1 / 3])
    assert r.overlap_at_k(a, a) == 1.0
    scores = np.array([[0.9, 0.8, 0.5], [0.7, 0.7, 0.1]])
    assert np.allclose(r.boundary_margin(scores, 2), [0.3, 0.6])
    assert np.allclose(r.boundary_margin(scores, 1), [0.1, 0.0])


def test_margin_certifies_unchanged_topk():
    rng = np.random.default_rng(7)
    G = rng.standard_normal((800, 16))
    s, i = r.topk(G, G, 11, exclude_self=True, dtype=np.float64)
    margin = r.boundary_margin(s, 10)
    noisy = G + 1e-4 * rng.standard_normal(G.shape)
    s2, i2 = r.topk(noisy, noisy, 10, exclude_self=True, dtype=np.float64)
    unit = lambda X: X / np.linalg.norm(X, axis=1, keepdims=True)  # noqa: E731
    change = np.abs(unit(G) @ unit(G).T - unit(noisy) @ unit(noisy).T).max(axis=1)
    safe = change < margin / 2
    assert safe.sum() > 100
    overlap = r.overlap_at_k(i[:, :10], i2, per_query=True)
    assert (overlap[safe] == 1).all()


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("kwargs, match", [
    (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 3)), k=2), "gallery: has 3 columns"),
    (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 4)), k=5), "k: must be smaller"),
    (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 4)), k=0), "k: must be at least 1"),
    (dict(queries=np.ones((5, 4)), gallery=np.ones((5, 4)), k=4, exclude_self=True), "k: must be smaller"),
    (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 4)), k=2, exclude_self=True), "length mismatch"),
    (dict(queries=np.ones(4), gallery=np.ones((5, 4)), k=2), "queries: expected a 2-D"),
    (dict(queries=np.ones((3, 4)), gallery=np.ones(4), k=2), "gallery: expected a 2-D"),
    (dict(queries=np.empty((0, 4)), gallery=np.ones((5, 4)), k=2), "queries"),
    (dict(queries=np.ones((3, 4)), gallery=np.empty((0, 4)), k=2), "gallery: empty"),
    (dict(queries=np.array([[np.nan, 1.0]]), gallery=np.ones((5, 2)), k=2), "queries: contains NaN"),
    (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 4)), k=2, dtype=np.float16), "dtype"),
    (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 4)), k=2, chunk_size=0), "chunk_size"),
])
def test_topk_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        r.topk(**kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_topk_bad_gallery_rows_name_their_index(dtype):
    G = np.ones((50, 3), dtype=dtype)
    G[33] = 0
    with pytest.raises(ValueError, match="gallery: zero-norm row at index 33"):
        r.topk(np.ones((2, 3)), G, 3, chunk_size=8)
    G[33] = 1
    G[41, 2] = np.inf
    with pytest.raises(ValueError, match="gallery: contains NaN or infinite"):
        r.topk(np.ones((2, 3)), G, 3, chunk_size=8)
    with pytest.raises(ValueError, match="queries: zero-norm row at index 1"):
        r.topk(np.array([[1.0, 0, 0], [0, 0, 0]]), G[:5], 3)


def test_topk_bad_row_in_a_parallel_share(monkeypatch):
    monkeypatch.setattr(r, "_workers", lambda: 2)
    G = np.ones((20_000, 3), dtype=np.float32)
    G[15_000, 1] = np.nan
    with pytest.raises(ValueError, match="gallery: contains NaN"):
        r.topk(np.ones((4, 3)), G, 3)
    G[15_000] = 0
    with pytest.raises(ValueError, match="gallery: zero-norm row at index 15000"):
        r.topk(np.ones((4, 3)), G, 3)


def test_topk_huge_finite_values_do_not_overflow():
    G = np.array([[3e30, 4e30], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    s, i = r.topk(G, G, 1, exclude_self=True)
    assert i[:, 0].tolist() == [2, 0, 0]


def test_metric_bad_input():
    nb = np.array([[1, 2], [0, 2], [0, 1]])
    with pytest.raises(ValueError, match="length mismatch"):
        r.precision_at_k(nb, np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="neighbors: indices must lie"):
        r.precision_at_k(nb + 5, np.array([0, 1, 0]), query_labels=np.array([0, 1, 0]))
    with pytest.raises(ValueError, match="neighbors: expected a 2-D"):
        r.hit_at_k(np.array([1, 2]), np.array([1, 2]))
    with pytest.raises(ValueError, match="neighbors: expected integer"):
        r.hit_at_k(nb.astype(float), np.array([1, 2, 0]))
    with pytest.raises(ValueError, match="positives: 1 query"):
        r.recall_at_k(nb, [np.array([1]), np.array([], dtype=int), np.array([0])])
    with pytest.raises(ValueError, match="length mismatch"):
        r.hit_at_k(nb, np.array([1, 2]))
    with pytest.raises(ValueError, match="k: must be smaller"):
        r.hit_at_k(nb, np.array([1, 2, 0]), k=3)
    with pytest.raises(ValueError, match="shapes differ"):
        r.overlap_at_k(nb, nb[:, :1])
    with pytest.raises(ValueError, match="scores: needs at least 2 columns"):
        r.boundary_margin(np.ones((3, 1)), 1)
    with pytest.raises(ValueError, match="k: must be smaller"):
        r.boundary_margin(np.ones((3, 2)), 2)
    with pytest.raises(ValueError, match="descending"):
        r.boundary_margin(np.array([[0.1, 0.5]]), 1)
    with pytest.raises(ValueError, match="labels: empty"):
        r.random_floor([])
    with pytest.raises(ValueError, match="labels: contains NaN"):
        r.random_floor([0.0, np.nan])


# ----------------------------------------------------------------------------- extreme magnitudes

@pytest.mark.parametrize("dtype, scale", [
    (np.float32, 1e39), (np.float32, 1e300), (np.float32, 1e-30), (np.float32, 1e-300),
    (np.float64, 1e200), (np.float64, 1e-200), (np.float64, 1e-300),
])
def test_topk_extreme_but_finite_magnitudes(dtype, scale):
    rng = np.random.default_rng(12)
    Q, G = rng.standard_normal((20, 16)), rng.standard_normal((300, 16))
    bs, bi = brute_topk(Q, G, 3)
    s, i = r.topk(Q * scale, G * scale, 3, dtype=dtype)
    assert np.array_equal(i, bi)
    np.testing.assert_allclose(s, bs, rtol=0, atol=1e-6 if dtype == np.float32 else 1e-14)
    s, i = r.topk(Q * scale, G * scale, 3, dtype=dtype, chunk_size=64)  # the gallery read in chunks
    assert np.array_equal(i, bi)


def test_topk_rows_of_wildly_different_norms():
    rng = np.random.default_rng(13)
    G = rng.standard_normal((200, 8))
    bs, bi = brute_topk(G, G, 4, exclude_self=True)
    W = G * np.logspace(-300, 300, 200)[:, None]
    for dtype in (np.float32, np.float64):
        s, i = r.topk(W, W, 4, exclude_self=True, dtype=dtype)
        assert np.array_equal(i, bi)


# (values computed before the extreme-magnitude changes: sum of scores, index checksum)
PINNED_TOPK = {
    "f32": [927.450152516365, 1856039, 927.4501432019247, 1856039],
    "f64_offset": [716.5199892222881, 658706, 716.5199838656163, 658706],
    "f64_n_below_d": [32.859903924167156, 11983, 32.85990438532298, 11983],
}


@pytest.mark.parametrize("name", list(PINNED_TOPK))
def test_ordinary_inputs_give_the_pinned_neighbours(name):
    rng = np.random.default_rng(20240611)
    Z = {"f32": rng.standard_normal((500, 48)).astype(np.float32),
         "f64_offset": rng.standard_normal((300, 64)) * np.linspace(2, 0.1, 64) + 0.5,
         "f64_n_below_d": rng.standard_normal((40, 96))}[name]
    got = []
    for dtype in (np.float32, np.float64):
        s, i = r.topk(Z, Z, 5, exclude_self=True, dtype=dtype)
        got += [float(s.astype(np.float64).sum()), int((i * np.arange(1, 6)).sum())]
    assert got[1::2] == PINNED_TOPK[name][1::2]
    # float32 scoring depends on the BLAS kernel's summation order (thread count, load): pinned at
    # float32 resolution; float64 scoring to 1e-12.
    assert got[0] == pytest.approx(PINNED_TOPK[name][0], rel=1e-6)
    assert got[2] == pytest.approx(PINNED_TOPK[name][2], rel=1e-12)


def _brute_hits(nb, positives):
    """Hit and recall per query from Python sets (the reference for every positives form)."""
    sets = [set(int(p) for p in (row if isinstance(row, set) else np.ravel(row))) for row in positives]
    hit = [float(bool(set(row.tolist()) & s)) for row, s in zip(nb, sets)]
    recall = [len(set(row.tolist()) & s) / len(s) for row, s in zip(nb, sets)]
    return hit, recall


@pytest.mark.parametrize("positives", [
    [np.array([3]), np.array([1, 2, 4]), {5, 6}],   # ragged: rows padded inside
    np.array([[3, 3], [2, 2], [6, 5]]),              # duplicates dropped inside
    [np.array([4, 4, 4]), np.array([1]), np.array([6, 6, 5, 5])],
])
def test_padding_never_makes_gallery_item_zero_a_positive(positives):
    nb = np.array([[0, 1, 2], [0, 3, 5], [0, 0, 0]])  # item 0 everywhere, never a positive
    hit, recall = _brute_hits(nb, positives)
    assert r.hit_at_k(nb, positives, per_query=True).tolist() == hit
    assert r.recall_at_k(nb, positives, per_query=True).tolist() == recall


def test_item_zero_counts_when_it_is_a_positive():
    nb = np.array([[0, 1], [2, 3]])
    assert r.hit_at_k(nb, [np.array([0]), np.array([0, 3, 3])], per_query=True).tolist() == [1.0, 1.0]
    assert r.recall_at_k(nb, [np.array([0]), np.array([0, 3, 3])], per_query=True).tolist() == [1.0, 0.5]
