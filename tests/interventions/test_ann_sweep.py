"""The sweep for a target recall: recall against FAISS's own exact search, FAISS's work counts,
the recall interval, the cheapest passing setting (brute force over the sweep), a case no
setting reaches, and identical sweeps from identical builds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embdiag.interventions import ann
from embdiag.interventions.ann import AnnIndex, cheapest, recall_interval, search_work, sweep, sweep_builds
from embdiag.metrics.stats import proportion_interval

faiss = pytest.importorskip("faiss")


def _unit(n: int, d: int, seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def data():
    """300 gallery rows, 40 queries that are not rows, FAISS IndexFlatIP's exact top 20."""
    G, Q = _unit(300, 16), _unit(40, 16, seed=1)
    flat = faiss.IndexFlatIP(16)
    flat.add(G)
    return G, Q, flat.search(Q, 20)[1]


def _rows_without_timings(rows):
    return [{k: v for k, v in r.items() if k not in ("build_s", "queries_per_s")} for r in rows]


def test_recall_is_the_share_of_faiss_exact_neighbours_found(data):
    """On continuous random rows (no ties) tie-aware recall is the plain share of the exact top-k
    (FAISS IndexFlatIP) that the index's own search returns."""
    G, Q, exact = data
    index = AnnIndex("HNSW4", ef_construction=8).fit(G)
    rows = sweep([({}, index)], G, Q, exact, [1, 5])
    assert [(r["k"], r["value"]) for r in rows] == [(k, v) for k in (1, 5) for v in ann.SWEEP_EF_SEARCH]
    for r in rows:
        found = index.search(Q, r["k"], r["value"])[1]
        share = np.mean([len(set(f) & set(e[: r["k"]])) / r["k"] for f, e in zip(found, exact)])
        assert r["recall"] == pytest.approx(share, abs=1e-12)
        assert (r["recall"], r["low"], r["high"]) == recall_interval(
            [len(set(f) & set(e[: r["k"]])) / r["k"] for f, e in zip(found, exact)]
        )
    assert min(r["recall"] for r in rows) < 1  # a small graph misses some


def test_every_list_visited_is_exact_and_the_own_row_is_left_out():
    G = _unit(200, 8, seed=2)
    Q, own = G[:30], np.arange(30)
    flat = faiss.IndexFlatIP(8)
    flat.add(G)
    I = flat.search(Q, 11)[1]
    exact = np.array([[j for j in row if j != i][:10] for i, row in zip(own, I)])
    rows = sweep([({}, AnnIndex("IVF4,Flat"))], G, Q, exact, [10], own=own)
    assert [r["value"] for r in rows] == [1, 2, 4] and rows[-1]["recall"] == 1.0
    assert rows[0]["bytes_per_vector"] > 32 and rows[0]["queries_per_s"] != rows[0]["queries_per_s"]  # untimed: NaN


def test_ivf_work_is_the_coarse_search_and_the_rows_of_the_lists_probed(data):
    """Operations per query against a count by hand: nlist * d for the coarse search, d per row
    of each probed list (FAISS's quantizer picks the lists); the same on one thread and on two."""
    G, Q, _ = data
    index = AnnIndex("IVF10,Flat").fit(G)
    ivf = faiss.extract_index_ivf(index.index_)
    sizes = np.array([ivf.invlists.list_size(i) for i in range(10)])
    lists = ivf.quantizer.search(Q, 3)[1]
    by_hand = 10 * 16 + 16 * sizes[lists].sum(axis=1).mean()
    counts = []
    for threads in (1, 2):
        before = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(threads)
        try:
            counts.append(search_work(index, Q, 3, 3)[2])
        finally:
            faiss.omp_set_num_threads(before)
    assert counts == [pytest.approx(by_hand)] * 2


def test_hnsw_work_grows_with_efsearch_and_other_indexes_are_not_counted(data):
    G, Q, _ = data
    index = AnnIndex("HNSW8").fit(G)
    work = [search_work(index, Q, 5, ef)[2] for ef in (16, 64)]
    assert 0 < work[0] < work[1] and round(work[0] * len(Q)) % 16 == 0  # d multiply-adds per distance
    assert np.isnan(search_work(AnnIndex("PCA8,Flat").fit(G), Q, 5)[2])


def test_named_builds_are_in_their_grid_and_a_built_one_is_reused():
    hnsw = AnnIndex.hnsw(2000, 16)
    grid = sweep_builds("hnsw", 2000, 16, built=hnsw)
    assert len(grid) == len(ann.SWEEP_M) * len(ann.SWEEP_EF_CONSTRUCTION)
    assert [a for s, a in grid if s == {"M": 32, "efConstruction": 200}] == [hnsw]
    ivfpq = AnnIndex.ivfpq(2000, 16)
    lists = [s["nlist"] for s, a in sweep_builds("ivfpq", 2000, 16, built=ivfpq) if a is ivfpq]
    assert lists == [ann.ivfpq_params(2000, 16)["nlist"]]
    with pytest.raises(ValueError, match="family"):
        sweep_builds("flat", 2000, 16)


def test_two_sweeps_of_the_same_builds_give_the_same_rows(data):
    G, Q, exact = data
    grid = [(s, a) for s, a in sweep_builds("hnsw", 300, 16) if s["M"] == 8]
    again = [(s, a) for s, a in sweep_builds("hnsw", 300, 16) if s["M"] == 8]
    a = sweep(grid, G, Q, exact, [10], repeats=2)
    b = sweep(again, G, Q, exact, [10])
    assert _rows_without_timings(a) == _rows_without_timings(b)
    assert all(r["queries_per_s"] > 0 for r in a) and all(idx.index_ is None for _, idx in grid)  # builds let go


def test_recall_interval_is_wilson_at_k_1_and_never_one_point():
    hits = np.r_[np.ones(37), np.zeros(3)]
    i = proportion_interval(37, 40)
    assert recall_interval(hits) == pytest.approx((i.mean, i.low, i.high), abs=1e-12)
    assert recall_interval(np.ones(50))[1] < 1 and recall_interval(np.zeros(50))[2] > 0
    with pytest.raises(ValueError, match="per_query"):
        recall_interval([0.5, 1.5])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10), min_size=1, max_size=60))
def test_recall_interval_holds_its_mean(found):
    recall, low, high = recall_interval(np.array(found) / 10)
    assert 0 <= low <= recall <= high <= 1


_row = st.fixed_dictionaries(
    {
        "value": st.sampled_from([1, 2, 4, 8]),
        "rank": st.integers(0, 3),
        "recall": st.floats(0.5, 1.0),
        "margin": st.floats(0, 0.05),
        "ops_per_query": st.sampled_from([100.0, 200.0, 400.0]),
        "bytes_per_vector": st.sampled_from([40.0, 1100.0]),
    }
)


@settings(max_examples=80, deadline=None)
@given(st.lists(_row, max_size=12), st.floats(0.5, 1.0))
def test_the_cheapest_passes_and_no_passing_row_is_cheaper(rows, target):
    """Brute force over the rows: the pick reaches the target by its interval's lower end, and every
    row that does costs as much or more (work, then bytes, then build, then knob value)."""
    rows = [{**r, "low": r["recall"] - r["margin"]} for r in rows]
    pick, best = cheapest(rows, target)
    passing = [r for r in rows if r["low"] >= target]
    cost = lambda r: (r["ops_per_query"], r["bytes_per_vector"], r["rank"], r["value"])  # noqa: E731
    if not passing:
        assert pick is None
    else:
        assert pick["low"] >= target and all(cost(pick) <= cost(r) for r in passing)
    assert best is None if not rows else best["recall"] == max(r["recall"] for r in rows)


def test_a_point_estimate_above_the_target_does_not_reach_it(data):
    """Product quantization to 2 bits per 8 dimensions caps recall@10 far below 0.95 at every
    nprobe; a row whose recall is above the target but whose interval is not does not pass."""
    G, Q, exact = data
    rows = sweep([({}, AnnIndex("IVF4,PQ2x2np"))], G, Q, exact, [10])
    assert max(r["recall"] for r in rows) < 0.95
    pick, best = cheapest(rows, 0.95)
    assert pick is None and best["recall"] == max(r["recall"] for r in rows)
    edge = {"value": 1, "rank": 0, "recall": 0.96, "low": 0.93, "ops_per_query": 1.0, "bytes_per_vector": 1.0}
    assert cheapest([edge], 0.95) == (None, edge)


def test_a_knob_without_counted_work_is_ordered_by_its_value():
    rows = [
        {"value": v, "rank": 0, "recall": 0.99, "low": 0.97, "ops_per_query": np.nan, "bytes_per_vector": 9.0}
        for v in (32, 8, 16)
    ]
    assert cheapest(rows, 0.95)[0]["value"] == 8


def test_a_value_whose_lists_hold_fewer_than_k_rows_is_not_a_setting_for_k(data):
    """IVF lists of about 19 rows cannot give 20 results at nprobe 1: embdiag searches those
    queries again over every list (their results exact), but that value is no setting for k = 20."""
    G, Q, exact = data
    rows = sweep([({}, AnnIndex("IVF16,Flat"))], G, Q, exact, [20], target=0.5)
    first = rows[0]
    assert first["value"] == 1 and first["short_queries"] > 0 and first["low"] >= 0.5 and not first["reaches"]
    pick = cheapest(rows, 0.5)[0]
    assert pick["short_queries"] == 0 and pick["value"] > 1 and rows[-1] is pick  # the sweep stops there
