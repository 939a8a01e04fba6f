"""Hubness (:mod:`embdiag.metrics.hubness`): the k-occurrence against scikit-learn's brute-force
cosine neighbours, the skewness against scipy, anti-hubs on a constructed case, and properties of
the k-occurrence (a row permutation permutes it; it sums to n x k)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embdiag.metrics.hubness import (
    HUB_FACTOR,
    antihubs,
    hub_occurrence,
    hubness,
    hubs,
    k_occurrence,
    k_skewness,
    knn_graph,
)


def _unit_rows(n, d, seed):
    X = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_k_occurrence_matches_scikit_learn_brute_cosine_and_bincount():
    from sklearn.neighbors import NearestNeighbors

    X, k = _unit_rows(400, 32, 0), 10
    theirs = (
        NearestNeighbors(n_neighbors=k, algorithm="brute", metric="cosine").fit(X).kneighbors(return_distance=False)
    )
    ours = knn_graph(X, k)
    assert np.array_equal(np.sort(ours, axis=1), np.sort(theirs, axis=1))
    assert np.array_equal(k_occurrence(ours, len(X)), np.bincount(theirs.ravel(), minlength=len(X)))


def test_skewness_is_scipy_population_skew():
    from scipy import stats

    occurrence = k_occurrence(knn_graph(_unit_rows(500, 64, 1), 10), 500)
    assert k_skewness(occurrence) == pytest.approx(stats.skew(occurrence, bias=True), rel=1e-12)
    assert k_skewness(occurrence) != pytest.approx(stats.skew(occurrence, bias=False), rel=1e-6)


def test_skewness_of_equal_counts_is_nan():
    assert np.isnan(k_skewness([10, 10, 10]))


def test_constructed_anti_hubs_and_hubs():
    # a tight cluster of 3 points around e0 (with k = 2 each chooses the other two) and 3 far
    # points, each closer to the cluster than to the others: no row chooses a far point
    cluster = np.array([1.0, 0, 0, 0]) + 0.01 * np.array([[0.0, 1, 1, 1], [0.0, -1, 1, 0], [0.0, 0, -1, 1]])
    far = np.array([[0.0, 1, 0, 0], [0.0, 0, 1, 0], [0.0, 0, 0, 1]]) + 0.3 * np.array([1.0, 0, 0, 0])
    X = np.vstack([cluster, far])
    occurrence = k_occurrence(knn_graph(X, 2), len(X))
    assert antihubs(occurrence).tolist() == [False] * 3 + [True] * 3
    assert occurrence.sum() == 2 * len(X)
    h = hubness(occurrence, 2)
    assert h["antihub_share"] == pytest.approx(3 / 6)
    assert h["hub_share"] == pytest.approx(hubs(occurrence, 2).mean())
    assert occurrence[:3].sum() == 12 and (occurrence[:3] >= 2).all()  # every slot is a cluster point's
    assert hubs(occurrence, 2).tolist() == (occurrence >= 4).tolist() and HUB_FACTOR == 2


def test_hub_occurrence_is_the_share_of_slots_hubs_fill():
    occurrence = np.array([0, 1, 1, 4, 6])  # k = 2: hubs have N_k >= 4
    assert hub_occurrence(occurrence, 2) == pytest.approx(10 / 12)
    assert np.isnan(hub_occurrence(np.zeros(3, int), 2))


def test_duplicate_rows_never_list_themselves():
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    graph = knn_graph(X, 2)
    assert not (graph == np.arange(4)[:, None]).any()


@pytest.mark.parametrize(
    "bad, match",
    [(np.array([[0, 5]]), "positions"), (np.array([0, 1]), "2-D"), (np.array([[0.0, 1.0]]), "integer")],
)
def test_k_occurrence_refuses_bad_neighbours(bad, match):
    with pytest.raises(ValueError, match=match):
        k_occurrence(bad, 3)


def test_knn_graph_needs_k_below_n():
    with pytest.raises(ValueError, match="smaller"):
        knn_graph(_unit_rows(3, 4, 0), 2)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(3, 40), st.integers(2, 8), st.integers(1, 5))
def test_permuting_rows_permutes_the_k_occurrence_and_it_sums_to_n_k(seed, n, d, k):
    k = min(k, n - 2)
    X = _unit_rows(n, d, seed).astype(np.float64)  # Gaussian rows: no two cosines tie
    perm = np.random.default_rng(seed).permutation(n)
    occurrence = k_occurrence(knn_graph(X, k), n)
    assert occurrence.sum() == n * k
    assert np.array_equal(k_occurrence(knn_graph(X[perm], k), n), occurrence[perm])


def test_the_wordnet_3k_set_gives_vecscope_s_hubness():
    """On real vectors (WordLlama l2_supercat, WordNet 3.0 train then val glosses, 3,000 x 256, k = 10):
    the skewness and anti-hub share equal vecscope's, an independent implementation (issue #46 records
    1.8079 for it)."""
    diagnostics = pytest.importorskip("vecscope.diagnostics.hubness")
    from embdiag.artifacts import data_dir

    glosses = "embeddings/wordllama-l2_supercat/wordnet-721d2f37d9ccac73-{}-glosses/vectors.npy"
    X = np.concatenate([np.load(data_dir() / glosses.format(part)) for part in ("train", "val")])
    theirs = diagnostics.hubness(X, k=10)
    ours = hubness(k_occurrence(knn_graph(X, 10), len(X)), 10)
    assert ours["k_skewness"] == pytest.approx(theirs["skewness"], abs=1e-9)
    assert round(ours["k_skewness"], 4) == 1.8079
    assert ours["antihub_share"] == theirs["antihub_ratio"]
