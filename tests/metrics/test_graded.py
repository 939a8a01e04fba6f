"""Graded relevance against trec_eval (pytrec_eval), on random runs and qrels, and by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from embdiag.metrics.graded import average_precision_at_k, graded_recall_at_k, mrr_at_k, ndcg_at_k

pytrec_eval = pytest.importorskip("pytrec_eval")


def _random(seed: int, n_queries=30, n_gallery=200, depth=100):
    rng = np.random.default_rng(seed)
    neighbors = np.stack([rng.permutation(n_gallery)[:depth] for _ in range(n_queries)])
    qrels = []
    for q in range(n_queries):
        judged = rng.choice(n_gallery, rng.integers(0, 25), replace=False)
        # some judged among the neighbours, some not; grades 0..3 (0: judged not relevant)
        judged = np.unique(np.concatenate([judged, neighbors[q, rng.integers(0, depth, 5)]]))
        qrels.append({int(d): int(rng.integers(0, 4)) for d in judged})
    return neighbors, qrels


def _trec(neighbors, qrels, measures, depth):
    """pytrec_eval on the run cut at ``depth``: scores strictly decreasing with rank (no ties)."""
    qrel = {f"q{q}": {f"d{d}": g for d, g in judged.items()} for q, judged in enumerate(qrels)}
    run = {f"q{q}": {f"d{d}": float(depth - i) for i, d in enumerate(row[:depth])} for q, row in enumerate(neighbors)}
    return pytrec_eval.RelevanceEvaluator(qrel, set(measures)).evaluate(run)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_every_measure_is_trec_evals(seed):
    neighbors, qrels = _random(seed)
    judged = [q for q, j in enumerate(qrels) if any(g >= 1 for g in j.values())]
    full = _trec(neighbors, qrels, {"ndcg_cut_10", "map_cut_100", "recall_100"}, 100)
    cut = _trec(neighbors, qrels, {"recip_rank"}, 10)
    ours = {
        "ndcg_cut_10": ndcg_at_k(neighbors, qrels, k=10, per_query=True),
        "map_cut_100": average_precision_at_k(neighbors, qrels, k=100, per_query=True),
        "recall_100": graded_recall_at_k(neighbors, qrels, k=100, per_query=True),
        "recip_rank": mrr_at_k(neighbors, qrels, k=10, per_query=True),
    }
    for measure, values in ours.items():
        reference = cut if measure == "recip_rank" else full
        expected = np.array([reference[f"q{q}"][measure] for q in judged])
        np.testing.assert_allclose(values[judged], expected, rtol=1e-12, atol=1e-15, err_msg=measure)
        unjudged = np.setdiff1d(np.arange(len(qrels)), judged)
        assert np.isnan(values[unjudged]).all(), measure  # no relevant row: no value


def test_the_mean_leaves_out_queries_without_a_relevant_row():
    neighbors = np.array([[0, 1], [2, 3]])
    assert mrr_at_k(neighbors, [{1: 2}, {2: 0}]) == 0.5  # query 1 has only a non-relevant judgment
    assert np.isnan(ndcg_at_k(neighbors, [{}, {}]))


def test_the_forms_of_qrels_agree():
    neighbors, qrels = _random(1, n_queries=10, n_gallery=50, depth=20)
    dense = np.zeros((10, 50))
    for q, judged in enumerate(qrels):
        for d, g in judged.items():
            dense[q, d] = g
    for metric in (ndcg_at_k, mrr_at_k, average_precision_at_k, graded_recall_at_k):
        a = metric(neighbors, qrels, per_query=True)
        np.testing.assert_array_equal(metric(neighbors, dense, per_query=True), a)
        np.testing.assert_array_equal(metric(neighbors, sparse.csr_array(dense), per_query=True), a)


def test_ranking_every_relevant_row_first_scores_one():
    qrels = [{5: 3, 7: 1, 2: 2}]
    ideal = np.array([[5, 2, 7, 0, 1]])
    assert ndcg_at_k(ideal, qrels) == pytest.approx(1.0, abs=1e-15)
    assert mrr_at_k(ideal, qrels) == average_precision_at_k(ideal, qrels) == graded_recall_at_k(ideal, qrels) == 1.0
    assert ndcg_at_k(np.array([[2, 5, 7, 0, 1]]), qrels) < 1  # a worse grade first costs nDCG only
    assert average_precision_at_k(np.array([[2, 5, 7, 0, 1]]), qrels) == 1.0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: ndcg_at_k(np.array([[0, 1]]), [{0: 1.5}]), "^qrels: grades must be non-negative integers"),
        (lambda: ndcg_at_k(np.array([[0, 1]]), [{0: -1}]), "^qrels: grades must be non-negative integers"),
        (lambda: ndcg_at_k(np.array([[0, 1]]), [{0: 1}, {1: 1}]), "^qrels: judgments for 2 queries, neighbors has 1"),
        (lambda: ndcg_at_k(np.array([[0, 1]]), [[0, 1]]), "^qrels: query 0: expected a mapping"),
        (lambda: ndcg_at_k(np.array([[0, 1]]), [{-2: 1}]), "^qrels: negative gallery index -2"),
        (lambda: ndcg_at_k(np.array([[0, 3]]), np.ones((1, 2))), "^neighbors: index 3 beyond the qrels' 2"),
        (lambda: ndcg_at_k(np.array([[0, 1]]), [{0: 1}], k=3), "^k: must be at most the 2 neighbours given"),
        (lambda: ndcg_at_k(np.array([0, 1]), [{0: 1}]), "^neighbors: expected a 2-D"),
        (lambda: ndcg_at_k(np.array([[0.0, 1.0]]), [{0: 1}]), "^neighbors: expected integer indices"),
        (lambda: mrr_at_k(np.array([[0, 1]]), [{0: 1}], per_query="yes"), "^per_query: expected True or False"),
    ],
)
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()
