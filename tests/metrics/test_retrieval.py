"""Tests of :mod:`embdiag.metrics.retrieval` against independent references (brute-force cosine
over all pairs, scikit-learn ``NearestNeighbors``, Python sets, hand-worked values), invariances
(chunk size, core count, positive scaling) and the documented memory bounds (``tracemalloc``).

Equivalent mutants
------------------
Mutants of ``tools/mutate.py`` (mutmut names ``embdiag.metrics.retrieval.x_<function>__mutmut_<k>``)
that survive because they change no result, only time or memory within the documented bounds;
each has a comment next to the code.

- Chunk schedule and worker split: the merge is exact for any chunking and any split
  (``test_topk_memmap_gallery_and_chunk_invariance``,
  ``test_topk_does_not_depend_on_the_number_of_cores``), so these change time only.
  ``_first_chunk`` 5, 6, 7 (1025, ``16 / k``, ``17 * k``); ``_schedule`` 20 (growth factor 3,
  still capped by the chunk size); ``_workers`` 5, 10, 11, 12 (thread count); ``search_plan`` 8
  (query block 8193), 13 (no lower clip: smaller chunks), 18 (``/``: ``int()`` truncates like
  ``//``), 21, 22 (clip bounds 257, 16385), 50, 52 (worker count ``N / ...``, ``5 * ...``), 55
  (float bounds, cast by ``int()``), 2 (``np.dtype(None)`` is float64: half the chunk rows);
  ``topk`` 49, 54 (the plan sized for float64, the same).
- Selection path in ``_scan``: every path keeps each entry that can enter the top-k and the merge
  drops the rest. 42, 43, 121, 164, 165 (the ``first`` / ``dense`` flags); 131-136 (the dense
  fallback's threshold); 138 (``m >= k``: at m == k the chunk's k-th score is its minimum); 147
  (``dim=1`` is the default); 148, 151 (``sorted``: the same minimum); 159, 160 (``=`` / ``|=``:
  more candidates in the dense path); 105 (``lo <= hi``: an empty range).
- Placeholders in ``_scan``: 8, 11 (float64 running scores hold float32 scores exactly); 16, 19
  (``np.full`` infers int64); 20, 21 (the -inf placeholders' index: with k below the number of
  candidates and finite cosines every placeholder is replaced, so its index is never returned).
- Pages in ``_scan``: 76, 77 (``release_rows`` from row 0 or to the end): more pages of a
  memory-mapped gallery are given back, read again from the page cache; memory and time only.
- Failure flags in ``_scan``: 47 (``return`` for ``break`` once an earlier share failed):
  ``topk`` then raises that share's error without reading any result. 82, 83 (the flag set to
  None / False): later shares scan on, time only; the lowest failed chunk is still reported.
  1 (``share=1`` by default): the share is read only with the flags, which ``topk`` always
  passes with the share's index. 54, 59, 60 (another name in the chunk's ``as_matrix``): the
  gallery's type and shape were checked by ``_check_gallery``, so that call never raises; 55
  (``finite=None``): falsy like False.
- ``topk`` 97, 110 (no failure flags), 121 (share index not passed, so no share sees an
  earlier failure), 100 (default pool size): the other shares scan on, time only. 129, 131
  (``min`` without a key): errors are listed in share order with distinct, ascending chunk
  starts, and tuples compare by that start first, so each picks the first.
- ``merge_topk`` 19, 21 (lexsort's default axis is the last, and ``+1`` is the last of two); 28,
  35 (``take_along_axis``'s default axis is the last).
- ``_merge`` 11, 12, 13 (heavy-row threshold: lexsort or stable argsort, both exact); 50 (NaN
  padding sorts last like -inf, and a row always holds k real entries); 51, 54 (float64 work
  array: float32 scores convert exactly); 59, 62 (``np.full`` infers int64); 91, 103, 111
  (``axis=1`` is the default last axis); 95 (numpy reads ``"STABLE"`` as ``"stable"``).
  ``_merge_lexsort`` 29 (each row id occurs k times, so ``bincount`` has length m anyway).
- ``_normalize`` 3, 5 (``invalid="ignore"`` dropped): no step raises an invalid flag (squares are
  non-negative, NaN propagates quietly; checked under ``np.seterr(invalid="raise")`` with NaN,
  +-inf, float16 inf, huge integers and 1e300 rows). 12 (``copy=None`` copies no more than
  ``copy=False``); 43 (always copy before rescaling rows that over- or underflow: one extra copy,
  in that rare branch only); 47 (``astype(None)`` is float64); 24, 56 (``"IJ,IJ->I"``: the same
  contraction); 80 (``same_kind`` is the ufunc default casting).
- ``_positives`` 52 (a second padding column of -1 matches no neighbour and is not counted);
  57, 60 (``np.full`` infers int64, and ``P`` is cast to int64 next); 71 (``axis=1`` is the
  default); 72 (float64 indices compare exactly with integer neighbours below 2**53); 75, 81 (the
  ``if P.size`` guard is always true: at least one query, width at least 1); 92 (-2 marks a
  duplicate like -1: it matches nothing and is not counted).
- ``_first_k`` 8, ``boundary_margin`` 22 (``check_k``'s default name is "k"); ``boundary_margin``
  29 (``np.diff``'s default axis is the last); ``hit_at_k`` 17 (``astype(None)`` is float64).

Timeouts (mutmut counts them as killed; each checked alone): ``_schedule`` 7, 13 and
``search_plan`` 26, 29 (``chunk_size`` 0 accepted) build an endless chunk list (MemoryError under
the address-space cap of ``tools/mutate.py``, else a hang); ``topk`` 71 starts a query block at
every query (correct but quadratic: 800x slower at 2,000 queries, minutes for the 12,500-query
tests).

Memory: the float32 path must allocate float32 buffers and no extra chunk copy
(``test_topk_float32_extra_memory_is_as_documented``), the default chunk must share the score
budget between workers and not grow with the gallery (the two ``test_topk_default_*`` tests).
"""

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


def _peak_bytes(f):
    tracemalloc.start()
    try:
        f()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_topk_float32_extra_memory_is_as_documented():
    # float32 scoring: a float32 score buffer, a boolean mask (a quarter of its size), one
    # normalized float32 gallery chunk and the normalized queries; no copy of a chunk, no float64
    rng = np.random.default_rng(18)
    nq, d, cs = 200, 256, 2000
    G = rng.standard_normal((6000, d), dtype=np.float32)
    Q = rng.standard_normal((nq, d), dtype=np.float32)
    documented = nq * cs * (4 + 1) + cs * d * 4 + nq * d * 4
    assert _peak_bytes(lambda: r.topk(Q, G, 5, chunk_size=cs)) < documented + (1 << 20)


def test_topk_default_chunks_share_the_score_budget_between_workers(monkeypatch):
    # The default chunk size keeps the score buffers of all workers together within the budget
    # (here scaled down from 32 MiB to 4 MiB), plus a mask of a quarter of it (and one more
    # temporary mask where a chunk is cut at its own k-th score).
    monkeypatch.setattr(r, "_BUFFER_BYTES", 1 << 22)
    monkeypatch.setattr(r, "_workers", lambda: 2)
    rng = np.random.default_rng(19)
    G = rng.standard_normal((30_720, 8), dtype=np.float32)
    Q = rng.standard_normal((256, 8), dtype=np.float32)
    assert _peak_bytes(lambda: r.topk(Q, G, 5)) < 1.5 * (1 << 22) + (1 << 20)


def test_topk_default_extra_memory_does_not_grow_with_the_gallery(monkeypatch):
    # One query: the default chunk is capped, so a 4x larger gallery needs no more memory.
    monkeypatch.setattr(r, "_workers", lambda: 1)
    rng = np.random.default_rng(20)
    q = rng.standard_normal((1, 16), dtype=np.float32)
    G = rng.standard_normal((160_000, 16), dtype=np.float32)
    small = _peak_bytes(lambda: r.topk(q, G[:40_000], 5))
    assert _peak_bytes(lambda: r.topk(q, G, 5)) < 1.05 * small


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


def fast_brute_topk(Q, G, k):
    """brute_topk without its per-row loop: a stable sort of the negated scores orders equal
    scores by the lower index."""
    S = (Q / np.linalg.norm(Q, axis=1, keepdims=True)) @ (G / np.linalg.norm(G, axis=1, keepdims=True)).T
    idx = np.argsort(-S, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(S, idx, axis=1), idx


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
def test_topk_does_not_depend_on_the_number_of_cores(monkeypatch, workers):
    # From 8,192 rows the gallery is split into one share per core; a tiny gallery is never
    # split, whatever the core count. The best neighbours lie in every share.
    monkeypatch.setattr(r, "_workers", lambda: workers)
    rng = np.random.default_rng(10)
    for n in (2, 7, 9000):
        G, Q = rng.standard_normal((n, 6)), rng.standard_normal((15, 6))
        k = min(4, n - 1)
        s, i = r.topk(Q, G, k, dtype=np.float64)
        bs, bi = fast_brute_topk(Q, G, k)
        assert np.array_equal(i, bi)
        assert np.allclose(s, bs, rtol=0, atol=1e-14)


def test_topk_more_queries_than_one_query_block():
    # queries are scored in blocks of 8,192: 20,000 queries take three blocks
    rng = np.random.default_rng(11)
    G, Q = rng.standard_normal((5, 3)), rng.standard_normal((20_000, 3))
    s, i = r.topk(Q, G, 2, dtype=np.float64)
    bs, bi = fast_brute_topk(Q, G, 2)
    assert np.array_equal(i, bi)
    assert np.allclose(s, bs, rtol=0, atol=1e-14)


def test_topk_chunk_where_one_query_ties_with_hundreds_of_rows():
    # In the same chunk query 0 ties with 400 identical rows (far more than 64 k candidates,
    # merged by a lexsort) while the other queries keep a handful (merged by a stable sort).
    rng = np.random.default_rng(9)
    G = rng.standard_normal((600, 4))
    G[100:500] = [1.0, 0, 0, 0]
    Q = np.vstack([[1.0, 0, 0, 0], rng.standard_normal((5, 4))])
    s, i = r.topk(Q, G, 3, chunk_size=600, dtype=np.float64)
    bs, bi = brute_topk(Q, G, 3)
    assert np.array_equal(i, bi)
    assert np.allclose(s, bs, rtol=0, atol=1e-14)
    assert i[0].tolist() == [100, 101, 102]


def test_topk_chunks_in_which_every_row_beats_the_running_topk():
    # Gallery sorted by increasing similarity to q (decreasing to -q), k small against the chunk:
    # in every later chunk, the last one included, more than 4 k entries per query beat the
    # running k-th score, so the chunk is cut at its own k-th score (which must be kept).
    rng = np.random.default_rng(16)
    q = rng.standard_normal(8)
    G = rng.standard_normal((1000, 8))
    G = G[np.argsort(G @ q / np.linalg.norm(G, axis=1))]
    Q = np.vstack([q, -q])
    s, i = r.topk(Q, G, 3, chunk_size=64, dtype=np.float64)
    bs, bi = brute_topk(Q, G, 3)
    assert np.array_equal(i, bi)
    assert np.allclose(s, bs, rtol=0, atol=1e-14)
    assert i[0].tolist() == [999, 998, 997] and i[1].tolist() == [0, 1, 2]


def test_topk_k_may_be_one_less_than_the_gallery_size():
    rng = np.random.default_rng(17)
    Q, G = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    s, i = r.topk(Q, G, 4, dtype=np.float64)
    bs, bi = brute_topk(Q, G, 4)
    assert np.array_equal(i, bi) and np.allclose(s, bs, rtol=0, atol=1e-14)


def test_topk_leaves_its_inputs_unchanged():
    # Rows whose squares over- or underflow are rescaled on a copy, never in the caller's arrays
    # (a read-only gallery, e.g. an np.memmap opened with mode="r", must work).
    rng = np.random.default_rng(15)
    Qb, Gb = rng.standard_normal((10, 4)), rng.standard_normal((50, 4))
    _, bi = brute_topk(Qb, Gb, 3)
    for dtype, big in ((np.float32, 1e30), (np.float64, 1e200)):
        Q, G = (Qb * big).astype(dtype), (Gb / big).astype(dtype)
        Q0, G0 = Q.copy(), G.copy()
        G.setflags(write=False)
        _, i = r.topk(Q, G, 3, dtype=dtype)
        assert np.array_equal(Q, Q0) and np.array_equal(G, G0)
        assert np.array_equal(i, bi)


def test_integer_and_float16_inputs():
    rng = np.random.default_rng(6)
    G = rng.integers(-3, 4, size=(300, 8))
    G[np.abs(G).sum(1) == 0, 0] = 1
    a = r.topk(G, G, 5, exclude_self=True)
    b = r.topk(G.astype(np.float32), G.astype(np.float32), 5, exclude_self=True)
    assert np.array_equal(a[1], b[1])
    h = r.topk(G.astype(np.float16), G.astype(np.float16), 5, exclude_self=True)
    assert np.array_equal(h[1], b[1]) and h[0].dtype == np.float32
    B = rng.random((300, 8)) < 0.4
    B[~B.any(axis=1), 0] = True
    a = r.topk(B, B, 5, exclude_self=True)
    b = r.topk(B.astype(np.float32), B.astype(np.float32), 5, exclude_self=True)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    # integers are read as float32 (as documented), queries and gallery alike, also when
    # scored in float64: large integers round the same way on both sides
    X = rng.integers(-(2**40), 2**40, size=(100, 5))
    a = r.topk(X, X, 4, exclude_self=True, dtype=np.float64)
    b = r.topk(X.astype(np.float32), X.astype(np.float32), 4, exclude_self=True, dtype=np.float64)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


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
    with pytest.raises(
        ValueError,
        match=r"^neighbors: a query appears among its own neighbours; "
        r"search with exclude_self=True$",
    ):
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
        assert np.allclose(r.recall_at_k(nb, P, k=1, per_query=True), [0, 0.5, 0])
    # arrays, sets and single indices may be mixed in one list
    assert r.hit_at_k(nb, [np.array([1, 9]), 0, {2, 6}], per_query=True).tolist() == [1, 1, 0]
    assert r.recall_at_k(nb, [np.array([1, 9]), 0, {2, 6}], per_query=True).tolist() == [0.5, 1, 0]
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


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 3)), k=2), "^gallery: has 3 columns"),
        (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 4)), k=5), "^k: must be smaller"),
        (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 4)), k=0), "^k: must be at least 1"),
        (dict(queries=np.ones((5, 4)), gallery=np.ones((5, 4)), k=4, exclude_self=True), "^k: must be smaller"),
        (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 4)), k=2, exclude_self=True), "^length mismatch"),
        (dict(queries=np.ones(4), gallery=np.ones((5, 4)), k=2), "^queries: expected a 2-D"),
        (dict(queries=np.ones((3, 4)), gallery=np.ones(4), k=2), "^gallery: expected a 2-D"),
        (dict(queries=np.empty((0, 4)), gallery=np.ones((5, 4)), k=2), "^queries"),
        (dict(queries=np.ones((3, 4)), gallery=np.empty((0, 4)), k=2), "^gallery: empty"),
        (dict(queries=np.array([[np.nan, 1.0]]), gallery=np.ones((5, 2)), k=2), "^queries: contains NaN"),
        (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 4)), k=2, dtype=np.float16), "^dtype"),
        (dict(queries=np.ones((3, 4)), gallery=np.ones((5, 4)), k=2, chunk_size=0), "^chunk_size: must be at least 1"),
        # the gallery's own type is reported first, not a k checked against its meaningless size
        (
            dict(queries=np.ones((3, 2)), gallery=np.full((3, 2), "a"), k=3),
            "^gallery: expected a numeric array, got dtype <U1",
        ),
        (
            dict(queries=np.ones((3, 2)), gallery=np.ones((3, 2)) * 1j, k=3),
            "^gallery: complex values are not supported$",
        ),
    ],
)
def test_topk_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        r.topk(**kwargs)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_topk_bad_gallery_rows_name_their_index(dtype):
    G = np.ones((50, 3), dtype=dtype)
    G[33] = 0
    with pytest.raises(ValueError, match="^gallery: zero-norm row at index 33"):
        r.topk(np.ones((2, 3)), G, 3, chunk_size=8)
    G[33] = 1
    G[41, 2] = np.inf
    G[45, 0] = np.nan
    with pytest.raises(
        ValueError, match=r"^gallery: contains NaN or infinite values \(\d bad row\(s\), first at index 41\)"
    ):
        r.topk(np.ones((2, 3)), G, 3, chunk_size=8)
    with pytest.raises(ValueError, match="^queries: zero-norm row at index 1"):
        r.topk(np.array([[1.0, 0, 0], [0, 0, 0]]), G[:5], 3)


def test_topk_bad_row_in_a_parallel_share(monkeypatch):
    monkeypatch.setattr(r, "_workers", lambda: 2)
    G = np.ones((20_000, 3), dtype=np.float32)
    G[15_000, 1] = np.nan
    with pytest.raises(
        ValueError, match=r"^gallery: contains NaN or infinite values \(1 bad row\(s\), first at index 15000\)"
    ):
        r.topk(np.ones((4, 3)), G, 3)
    G[15_000] = 0
    with pytest.raises(ValueError, match="gallery: zero-norm row at index 15000"):
        r.topk(np.ones((4, 3)), G, 3)


@pytest.mark.parametrize("workers", [2, 4])
def test_topk_names_the_first_bad_row_whatever_share_fails_first(monkeypatch, workers):
    # A bad row at the start of the last share fails at once; the first share's bad row lies
    # in its last chunk. A later share's failure must not stop an earlier share before its
    # own bad row (with one shared stop flag it did, in about a third of runs).
    monkeypatch.setattr(r, "_workers", lambda: workers)
    N = 20_000
    G = np.ones((N, 3), dtype=np.float32)
    first, later = N // workers - 1, N - N // workers
    G[[first, later]] = 0
    for _ in range(10):
        with pytest.raises(ValueError, match=f"^gallery: zero-norm row at index {first};"):
            r.topk(np.ones((4, 3)), G, 3, chunk_size=1024)


def test_topk_huge_finite_values_do_not_overflow():
    G = np.array([[3e30, 4e30], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    s, i = r.topk(G, G, 1, exclude_self=True)
    assert i[:, 0].tolist() == [2, 0, 0]


def test_metric_bad_input():
    nb = np.array([[1, 2], [0, 2], [0, 1]])
    with pytest.raises(ValueError, match="length mismatch"):
        r.precision_at_k(nb, np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match=r"^labels: has 3 entries \(one per gallery row\) but neighbors index row 7$"):
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
    with pytest.raises(ValueError, match="^scores: rows must be sorted in descending order$"):
        r.boundary_margin(np.array([[0.1, 0.5]]), 1)
    with pytest.raises(ValueError, match="^scores: expected a 2-D array"):
        r.boundary_margin(np.array([0.9, 0.5]), 1)
    with pytest.raises(ValueError, match="^neighbors_a: expected a 2-D"):
        r.overlap_at_k(np.array([1, 2]), nb)
    with pytest.raises(ValueError, match="^neighbors_b: expected integer indices"):
        r.overlap_at_k(nb, nb.astype(float))
    with pytest.raises(ValueError, match="^neighbors: empty array"):
        r.hit_at_k(np.zeros((0, 2), dtype=int), np.array([], dtype=int))
    with pytest.raises(ValueError, match="^neighbors: negative index -1"):
        r.hit_at_k(np.array([[0, -1]]), np.array([0]))
    with pytest.raises(ValueError, match="labels: empty"):
        r.random_floor([])
    with pytest.raises(ValueError, match="labels: contains NaN or infinite"):
        r.random_floor([0.0, np.inf])
    with pytest.raises(ValueError, match=r"^labels: no labelled entry \(all 2 missing\)$"):  # NaN: a missing label
        r.random_floor([np.nan, None])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(labels=np.zeros((3, 1))), r"^labels: expected a 1-D array of labels"),
        (dict(labels=[0, 1, 0], query_labels=np.zeros((3, 1))), r"^query_labels: expected a 1-D array of labels"),
        (dict(labels=[0, 1, 0], query_labels=[0, 1]), r"^length mismatch: neighbors has 3, query_labels has 2$"),
        (dict(labels=[0, 1, 0], query_labels=[1]), r"^length mismatch: neighbors has 3, query_labels has 1$"),
        (
            dict(labels=[0, 1], query_labels=[0, 1, 0]),
            r"^labels: has 2 entries \(one per gallery row\) but neighbors index row 2$",
        ),
        (dict(labels=[0, 1]), r"^length mismatch: neighbors has 3, labels has 2$"),
    ],
)
def test_precision_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        r.precision_at_k(np.array([[1, 2], [0, 2], [0, 1]]), **kwargs)


@pytest.mark.parametrize(
    "positives, match",
    [
        ([True, False, True], r"^positives: a boolean mask must be 2-D \(n_queries, n_gallery\), got shape \(3,\)$"),
        (np.zeros((3, 1, 1), dtype=int), r"^positives: expected 1-D or 2-D integer indices, got shape \(3, 1, 1\)$"),
        (np.zeros((3, 0), dtype=int), r"^positives: expected 1-D or 2-D integer indices, got shape \(3, 0\)$"),
        (np.array([1.0, 2.0, 0.0]), r"^positives: expected integer indices or a boolean mask, got dtype float64$"),
        (
            [np.array([1.0]), np.array([2.0]), np.array([0.0])],
            r"^positives: expected integer indices, got dtype float64$",
        ),
        ([np.array([1]), np.array([2])], r"^length mismatch: neighbors has 3, positives has 2$"),
        (np.array([[1, -3], [2, 0], [0, 1]]), r"^positives: negative gallery index$"),
    ],
)
def test_positives_bad_input(positives, match):
    with pytest.raises(ValueError, match=match):
        r.hit_at_k(np.array([[1, 2], [0, 2], [0, 1]]), positives)


def test_one_query_with_one_neighbour():
    assert r.hit_at_k(np.array([[2]]), np.array([2])) == 1.0
    assert r.hit_at_k(np.array([[2, 0]]), [2]) == 1.0  # a one-query list of indices
    assert r.recall_at_k(np.array([[2, 0]]), [0], k=1) == 0.0
    assert r.overlap_at_k(np.array([[2]]), np.array([[2]])) == 1.0


# ----------------------------------------------------------------------------- extreme magnitudes


@pytest.mark.parametrize(
    "dtype, scale",
    [
        (np.float32, 1e39),
        (np.float32, 1e300),
        (np.float32, 1e-30),
        (np.float32, 1e-300),
        (np.float64, 1e200),
        (np.float64, 1e-200),
        (np.float64, 1e-300),
    ],
)
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
    Z = {
        "f32": rng.standard_normal((500, 48)).astype(np.float32),
        "f64_offset": rng.standard_normal((300, 64)) * np.linspace(2, 0.1, 64) + 0.5,
        "f64_n_below_d": rng.standard_normal((40, 96)),
    }[name]
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


@pytest.mark.parametrize(
    "positives",
    [
        [np.array([3]), np.array([1, 2, 4]), {5, 6}],  # ragged: rows padded inside
        np.array([[3, 3], [2, 2], [6, 5]]),  # duplicates dropped inside
        [np.array([4, 4, 4]), np.array([1]), np.array([6, 6, 5, 5])],
    ],
)
def test_padding_never_makes_gallery_item_zero_a_positive(positives):
    nb = np.array([[0, 1, 2], [0, 3, 5], [0, 0, 0]])  # item 0 everywhere, never a positive
    hit, recall = _brute_hits(nb, positives)
    assert r.hit_at_k(nb, positives, per_query=True).tolist() == hit
    assert r.recall_at_k(nb, positives, per_query=True).tolist() == recall


def test_item_zero_counts_when_it_is_a_positive():
    nb = np.array([[0, 1], [2, 3]])
    assert r.hit_at_k(nb, [np.array([0]), np.array([0, 3, 3])], per_query=True).tolist() == [1.0, 1.0]
    assert r.recall_at_k(nb, [np.array([0]), np.array([0, 3, 3])], per_query=True).tolist() == [1.0, 0.5]


def test_minus_one_pads_ragged_positives():
    # A padded integer array means the same as the ragged list; -1 matches no neighbour, even
    # where the neighbour list itself could not hold -1 (gallery item 0 is not a positive).
    nb = np.array([[0, 3, 1], [2, 0, 4], [4, 1, 0]])
    padded = np.array([[3, -1, -1], [4, 4, 2], [-1, 0, -1]])
    ragged = [[3], [4, 2], [0]]
    for f in (r.hit_at_k, r.recall_at_k):
        assert np.array_equal(f(nb, padded, k=2, per_query=True), f(nb, ragged, k=2, per_query=True))
    assert r.recall_at_k(nb, padded, k=2, per_query=True).tolist() == [1.0, 0.5, 0.0]


def test_scanning_the_plans_chunks_anywhere_gives_topk():
    """search_plan + scan_chunks + merge_topk, grouped any way (as report.sharded's Ray tasks
    group them), is topk bit for bit: each chunk is the same single-threaded GEMM."""
    rng = np.random.default_rng(4)
    Q, G = rng.standard_normal((30, 12)).astype(np.float32), rng.standard_normal((20000, 12)).astype(np.float32)
    want = r.topk(Q, G, 9)
    qb, shares = r.search_plan(len(Q), len(G), 9)
    chunks = [c for share in shares for c in share]
    assert qb == 30 and len(shares) == min(r._workers(), 20000 // 4096) and chunks[0][0] == 0
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:])) and chunks[-1][1] == 20000
    unit = r.unit_queries(Q)
    for groups in ([chunks], [[c] for c in chunks], [chunks[:3], chunks[3:]]):
        parts = [r.scan_chunks(unit, G, 9, group) for group in groups]
        S, I = r.merge_topk(parts, 9)
        np.testing.assert_array_equal(S, want[0])
        np.testing.assert_array_equal(I, want[1])
    bad = G.copy()
    bad[5000, 0] = np.nan
    with pytest.raises(ValueError, match="first at index 5000"):
        r.scan_chunks(unit, bad, 9, chunks)


def test_unit_queries_and_scan_chunks_defaults():
    with pytest.raises(ValueError, match=r"^queries: contains NaN"):
        r.unit_queries(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match=r"^queries: zero-norm row at index 1"):
        r.unit_queries(np.array([[1.0, 0.0], [0.0, 0.0]]))
    np.testing.assert_allclose(r.unit_queries([[3.0, 4.0]]), [[0.6, 0.8]], rtol=1e-7)
    G = np.random.default_rng(5).standard_normal((50, 6)).astype(np.float32)
    S, I = r.scan_chunks(r.unit_queries(G[:4]), G, 3, [(0, 50)])
    assert list(I[:, 0]) == [0, 1, 2, 3]  # a query that is a gallery row finds itself: no self-exclusion by default
    S, I = r.scan_chunks(r.unit_queries(G[:4]), G, 3, [(0, 50)], exclude_self=True)
    assert not (I == np.arange(4)[:, None]).any()
