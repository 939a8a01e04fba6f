"""The report's hubness section: its k-occurrence against scikit-learn's brute cosine neighbours
and scipy's skewness, each condition's anti-hub values against a recount from the neighbour lists,
the metrics it lists before measuring, the sampled graph of a large gallery, and its page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from embdiag.metrics.retrieval import overlap_at_k
from embdiag.report import measurement, sections
from embdiag.report.conditions import parse_conditions
from embdiag.report.sections import hubness

N, D, K = 300, 16, 10


def _data(n=N, d=D, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = (1.5 * rng.standard_normal((3, d))[y] + rng.standard_normal((n, d))).astype(np.float32)
    return X, pd.DataFrame({"cls": [f"c{v}" for v in y]})


@pytest.fixture(scope="module")
def spied():
    """A report on clustered rows (int8, binary; labels; one pair per query) and the neighbour
    lists the hubness section read."""
    X, labels = _data()
    pairs = [np.array([(i + 1) % N]) for i in range(N)]
    seen = {}
    real = hubness.measure

    def spy(plan, neighbours, sample, intervals, search):
        seen.update(plan=plan, neighbours=neighbours)
        return real(plan, neighbours, sample, intervals, search)

    hubness.measure = spy
    try:
        report = measurement.measure(
            X,
            labels=labels,
            pairs=pairs,
            compress="int8,binary",
            k=K,
            progress=False,
            fail_if=[f"antihub_overlap@{K}<0.9"],
        )
    finally:
        hubness.measure = real
    return X, report, seen


def _rows(report, metric):
    m = report.metrics
    return m[(m["section"] == "hubness") & (m["metric"] == metric)]


def _value(report, metric, condition="reference"):
    rows = _rows(report, metric)
    return float(rows[rows["condition"] == condition]["value"].iloc[0])


def _sklearn_occurrence(X, k):
    from sklearn.neighbors import NearestNeighbors

    graph = NearestNeighbors(n_neighbors=k, algorithm="brute", metric="cosine").fit(X).kneighbors(return_distance=False)
    return np.bincount(graph.ravel(), minlength=len(X))


def test_skewness_and_shares_match_scikit_learn_neighbours_and_scipy(spied):
    from scipy import stats

    X, report, _ = spied
    occurrence = _sklearn_occurrence(X, K)
    assert _value(report, "k_skewness") == pytest.approx(stats.skew(occurrence, bias=True), rel=1e-9)
    assert _value(report, "antihub_share") == pytest.approx((occurrence == 0).mean())
    assert _value(report, "hub_share") == pytest.approx((occurrence >= 2 * K).mean())
    hist = report.tables["hubness"]
    assert hist["rows"].sum() == N and (hist["rows"] * hist["k_occurrence"]).sum() == N * K


def test_anti_hub_overlap_is_the_mean_over_anti_hub_queries(spied):
    X, report, seen = spied
    plan, nb = seen["plan"], seen["neighbours"]
    anti = _sklearn_occurrence(X, K)[plan.self_pos] == 0
    assert anti.sum() >= 2
    for c in ("int8", "binary"):
        ov = overlap_at_k(nb["reference"], nb[c], per_query=True)
        row = _rows(report, f"antihub_overlap@{K}").set_index("condition").loc[c]
        assert row["value"] == pytest.approx(ov[anti].mean())
        assert row["low"] <= row["value"] <= row["high"]


def test_every_recorded_row_was_listed_before_measuring_and_gates_read_it(spied):
    _, report, _ = spied
    listed = hubness.available(parse_conditions("int8,binary", "", n=N, d=D), ["cls"], k=K, pairs=True)
    rows = report.metrics[report.metrics["section"] == "hubness"]
    assert set(rows["metric"]) == set(listed)
    for r in rows.to_dict("records"):
        assert r["condition"] in listed[r["metric"]] and (not r["attribute"] or r["attribute"] in listed[r["metric"]])
    gates = {g["condition"]: g["passed"] for g in report.gates}
    assert gates["binary"] is False and gates["int8"] is True


def test_listed_metrics_follow_the_inputs():
    conds = parse_conditions("int8", "", n=100, d=8)
    assert f"antihub_recall@{K}" in hubness.available(conds, k=K, self_search=False)
    assert "query_k_skewness" in hubness.available(conds, k=K, self_search=False)
    assert f"delta_antihub_p@{K}" not in hubness.available(conds, ["cls"], k=K, self_search=False)
    assert set(hubness.available([], ["cls"], k=K)) == {"k_skewness", "hub_share", "hub_occurrence", "antihub_share"}


def test_with_queries_the_anti_hub_recall_is_the_share_of_anti_hub_rows_kept():
    X, _ = _data(seed=1)
    Q, _ = _data(n=120, seed=2)
    seen = {}
    real = hubness.measure

    def spy(plan, neighbours, sample, intervals, search):
        seen.update(neighbours=neighbours)
        return real(plan, neighbours, sample, intervals, search)

    hubness.measure = spy
    try:
        report = measurement.measure(X, queries=Q, compress="binary", k=K, progress=False)
    finally:
        hubness.measure = real
    anti = _sklearn_occurrence(X, K) == 0
    ref, got = seen["neighbours"]["reference"], seen["neighbours"]["binary"]
    per_query = [np.isin(r[anti[r]], g).mean() for r, g in zip(ref, got) if anti[r].any()]
    tail = report.tables["hubness_tail"].iloc[0]
    assert tail["antihub_queries"] == len(per_query)
    if len(per_query) >= 2:
        assert _value(report, f"antihub_recall@{K}", "binary") == pytest.approx(np.mean(per_query))
    occurrence = np.bincount(ref.ravel(), minlength=len(X)).astype(float)
    d = occurrence - occurrence.mean()
    assert _value(report, "query_k_skewness") == pytest.approx(np.mean(d**3) / np.mean(d**2) ** 1.5)


def test_a_large_gallery_is_graphed_on_a_sample_holding_the_queries(monkeypatch):
    X, _ = _data()
    monkeypatch.setattr(hubness, "GRAPH_WORK", 100**2 * D)
    monkeypatch.setattr(measurement, "QUERY_ROWS", 40)
    report = measurement.measure(X, compress="int8", k=K, progress=False)
    about = report.inputs["hubness"]
    assert about["graph_rows"] == 100 and "seeded sample of 100 of the 300" in about["graph"]
    assert report.tables["hubness"]["rows"].sum() == 100
    tail = report.tables["hubness_tail"].iloc[0]
    assert tail["all_queries"] == 40


def test_fewer_than_two_anti_hub_queries_record_nan_and_say_so(monkeypatch):
    X, _ = _data(n=40)
    monkeypatch.setattr(hubness.hub, "k_occurrence", lambda nb, n: np.full(n, K, np.int64))  # no anti-hubs
    report = measurement.measure(X, compress="int8", k=K, progress=False)
    assert np.isnan(_value(report, f"antihub_overlap@{K}", "int8"))
    assert any("fewer than 2 anti-hub queries" in note for note in report.inputs["notes"])


def test_the_page_shows_the_summary_chart_and_table(spied):
    _, report, _ = spied
    shown = sections.show(report, "hubness")
    html = "\n".join(e._repr_html_() if hasattr(e, "_repr_html_") else e._repr_markdown_() for e in shown)
    assert "skewness" in html and "figure-report-hubness" in html and "table-report-hubness-table" in html
    assert "anti-hub queries" in html
