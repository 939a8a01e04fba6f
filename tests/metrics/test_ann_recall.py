"""Tie-aware recall@k of an approximate search (``ann_recall``): ann-benchmarks' definition with no
epsilon, checked against a transcription of its distance-threshold rule, and its invariances."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embdiag.metrics.retrieval import ann_recall, overlap_at_k, topk


def ann_benchmarks_recall(queries, gallery, found, k):
    """ann-benchmarks' knn recall (plotting/metrics.py, knn_threshold with epsilon 0): per query, the
    run's distances at most the k-th exact distance, over k; distances are 1 - cosine."""
    Q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    G = gallery / np.linalg.norm(gallery, axis=1, keepdims=True)
    out = []
    for i in range(len(Q)):
        distance = [1 - float(np.dot(g, Q[i])) for g in G]  # one routine for every pair: equal rows tie exactly
        threshold = sorted(distance)[k - 1]
        out.append(sum(distance[j] <= threshold for j in found[i]) / k)
    return float(np.mean(out))


def tied_gallery(rng, n=300, d=6, copies=40):
    """Rows drawn from a small set of directions: many exact duplicates, so ties at rank k."""
    base = rng.standard_normal((copies, d))
    return base[rng.integers(0, copies, n)]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 12))
def test_equals_ann_benchmarks_rule_on_tie_rich_galleries(seed, k):
    rng = np.random.default_rng(seed)
    G = tied_gallery(rng)
    Q = rng.standard_normal((25, G.shape[1]))
    _, exact = topk(Q, G, k, dtype=np.float64)
    found = np.stack([rng.choice(len(G), k, replace=False) for _ in range(len(Q))])
    found[:5] = exact[:5]  # some queries returned exactly
    got = ann_recall(Q, G, found, exact)
    assert got == pytest.approx(ann_benchmarks_recall(Q, G, found, k), abs=1e-12)


def test_a_tied_row_in_place_of_the_exact_one_counts_where_overlap_does_not():
    G = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [0.6, 0.8], [-1.0, 0.0]])
    q = np.array([[1.0, 0.1]])
    exact = np.array([[0, 3]])  # rows 0 and 1 tie (same direction); exact search kept row 0
    found = np.array([[1, 3]])
    assert ann_recall(q, G, found, exact) == 1.0
    assert overlap_at_k(exact, found) == 0.5
    assert ann_recall(q, G, [[2, 3]], exact) == 0.5


def test_invariances_order_scale_and_query_permutation():
    rng = np.random.default_rng(1)
    G = rng.standard_normal((200, 8))
    Q = rng.standard_normal((30, 8))
    _, exact = topk(Q, G, 10, dtype=np.float64)
    found = np.stack([rng.choice(200, 10, replace=False) for _ in range(30)])
    base = ann_recall(Q, G, found, exact, per_query=True)
    assert ((0 <= base) & (base <= 1)).all()
    np.testing.assert_array_equal(ann_recall(Q, G, found[:, ::-1], exact, per_query=True), base)
    np.testing.assert_array_equal(ann_recall(Q * 3.0, G, found, exact, per_query=True), base)
    perm = rng.permutation(30)
    np.testing.assert_array_equal(ann_recall(Q[perm], G, found[perm], exact[perm], per_query=True), base[perm])
    assert ann_recall(Q, G, exact, exact) == 1.0


def test_gallery_may_be_a_memory_map(tmp_path):
    rng = np.random.default_rng(2)
    G = rng.standard_normal((500, 8)).astype(np.float32)
    np.save(tmp_path / "g.npy", G)
    mapped = np.load(tmp_path / "g.npy", mmap_mode="r")
    Q = rng.standard_normal((20, 8))
    _, exact = topk(Q, G, 5)
    found = (exact + 1) % 500
    assert ann_recall(Q, mapped, found, exact) == ann_recall(Q, G, found, exact)


def test_bad_input_names_the_problem():
    G = np.eye(4)
    with pytest.raises(ValueError, match=r"^found and exact: expected one row of k neighbours per query"):
        ann_recall(G[:2], G, [[0, 1]], [[0, 1], [1, 2]])
    with pytest.raises(ValueError, match=r"^found: indices must lie in \[0, 4\)"):
        ann_recall(G[:1], G, [[0, 4]], [[0, 1]])
    with pytest.raises(ValueError, match=r"^gallery: expected 4 columns like queries, got 3"):
        ann_recall(G[:1], np.ones((4, 3)), [[0, 1]], [[0, 1]])
