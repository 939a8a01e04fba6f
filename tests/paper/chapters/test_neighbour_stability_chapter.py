"""The neighbour-stability chapter's tables, figures and words, drawn from one measurement of the
section's home (:mod:`embdiag.study.neighbour_stability`) on small vectors."""

from dataclasses import replace

import numpy as np
import pytest

from embdiag.encoders.vectors import LabelledVectors
from embdiag.interventions.precision import OFFSET_CONDITIONS, STUDY_CONDITIONS
from embdiag.paper.chapters import neighbour_stability as sf
from embdiag.study import neighbour_stability as ns

K = 5
NAMES = [c.name for c in STUDY_CONDITIONS + OFFSET_CONDITIONS]


def _unit(Z):
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def run():
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((6, 24))
    lab = rng.integers(0, 6, 240)
    X = _unit(centers[lab] + 0.9 * rng.standard_normal((240, 24)))
    labels = {"weather": lab[80:] % 3, "scene": lab[80:] % 2}
    vectors = LabelledVectors(X[:80], X[80:], {}, labels, source="synthetic clusters")
    measured = ns.run(vectors, ns.Settings(k=K, n_draws=500))
    return vectors.val, labels, measured.results, measured


@pytest.fixture(scope="module")
def study():
    return ns.read_study()


# ------------------------------------------------------------------------------------ tables


def test_side_by_side_puts_the_study_above_this_run(run, study):
    val, labels, results, measured = run
    ours = measured.table
    table = sf.side_by_side_frame(ours, study, K)
    assert list(table.index.get_level_values("source")) == ["study", "this run"] * 8
    assert sf.this_run(table).tolist() == [False, True] * 8
    assert table.loc[("native reference", "this run"), "max score error"] == 0
    assert table.loc[("FP16 gallery", "study"), ["changed queries", "queries"]].tolist() == [5, 983]
    assert table.loc[("offset + FP16 gallery", "study"), "Δ weather P@5 (pp)"] == 0.041
    assert table.loc[("native reference", "study"), "max score error"] == 8.88e-16
    assert table.loc[("INT8 gallery", "this run"), "changed queries"] == ours.loc["INT8 gallery", "changed_queries"]
    assert "Δ time of day P@5 (pp)" not in table.columns  # only this run's attributes
    styled = sf.side_by_side(ours, study, K)
    html = styled.to_html()
    for shown in (">8.88e-16<", ">+0.041<", ">-0.020<", ">0.99949<", ">983<"):  # the study's precision
        assert shown in html, shown
    assert sf.this_run(styled).tolist() == [False, True] * 8


def test_margin_bins_against_brute_force():
    rng = np.random.default_rng(1)
    m = 10.0 ** rng.uniform(-8, 0, 500)
    m[:3] = [0.0, 1e-5, 1e-4]  # exact edges go to the bin above
    c = rng.random(500) < 0.3
    b = sf.margin_bins(m, c)
    edges = sf.MARGIN_EDGES
    for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
        inside = (m >= lo) & (m < hi)
        assert b.loc[i, "queries"] == inside.sum() and b.loc[i, "changed"] == (inside & c).sum()
    assert b["queries"].sum() == 500
    assert list(b["bin"]) == ["< 1e-05", "1e-05 – 0.0001", "0.0001 – 0.001", "0.001 – 0.01", "≥ 0.01"]
    assert sf.margin_bins([2e-5], [True]).loc[1].tolist() == ["1e-05 – 0.0001", 1, 1]


def test_margin_bins_bad_input():
    with pytest.raises(ValueError, match="changed: expected shape"):
        sf.margin_bins([1.0, 2.0], [True])
    with pytest.raises(ValueError, match="edges"):
        sf.margin_bins([1.0], [True], edges=(0.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="edges"):
        sf.margin_bins([1.0], [True], edges=(0.0,))


def test_margin_table_counts_every_query(run):
    val, _, results, _ = run
    t = sf.margin_table(results)
    assert list(t.index) == NAMES and t.shape[1] == 2 * (len(sf.MARGIN_EDGES) - 1)
    assert list(t.columns.get_level_values(0).unique()) == list(sf.margin_bins([], [])["bin"])
    assert list(t.columns.get_level_values(1)[:2]) == ["changed", "queries"]
    for r in results:
        row = t.loc[r.condition.name]
        assert row.xs("queries", level=1).sum() == len(val) and row.xs("changed", level=1).sum() == r.n_changed
        assert (row.xs("changed", level=1) <= row.xs("queries", level=1)).all()
        bins = sf.margin_bins(r.margins, r.changed)
        assert row.xs("changed", level=1).tolist() == bins["changed"].tolist()


def test_certificate_and_conditions_tables(run, study):
    _, _, results, _ = run
    c = sf.certificate_frame(results, study)
    for r in results:
        row = c.loc[r.condition.name]
        assert row["coverage (%)"] == pytest.approx(100 * r.coverage) and row["exceptions"] == 0
        assert row["median bound"] == np.median(r.bound)
        assert row["actual error below half margin (%)"] == pytest.approx(100 * np.mean(r.score_error < r.margins / 2))
    assert c.loc["FP16 gallery", "certified (study)"] == 576 and np.isnan(c.loc["FP32 arithmetic", "certified (study)"])
    html = sf.certificate_table(results, study).to_html()
    assert ">576<" in html and "nan" not in html.lower()
    conds = sf.conditions_table(results)
    assert (conds["vectors"] == "common offset added").sum() == 2
    assert conds.loc["INT8 queries + gallery", "queries stored as"].startswith("INT8")
    assert conds.loc["FP32 arithmetic", "normalize and score in"] == "FP32"


def test_agreement_table_lists_conditions_with_changes(run, study):
    _, labels, results, measured = run
    ours = measured.table
    t = sf.agreement_frame(ours, study, K)
    changed = set(ours.index[ours["changed_queries"] > 0])
    assert set(t.xs("this run", level="source").index) == changed
    study_row = t.loc[("offset + FP16 gallery", "study")]
    assert study_row["changed queries"] == 195
    assert study_row["weather P@5 kept"] == 131 and study_row["weather P@5 kept (%)"] == pytest.approx(100 * 131 / 195)
    assert study_row["scene P@5 kept"] == 119
    for cond in changed:
        row = t.loc[(cond, "this run")]
        assert row["weather P@5 kept"] == ours.loc[cond, "weather_p10_kept"]
        assert row["weather P@5 kept (%)"] == pytest.approx(100 * row["weather P@5 kept"] / row["changed queries"])
    html = sf.agreement_table(ours, study, K).to_html()
    assert ">131<" in html and ">67<" in html and "nan" not in html.lower()
    empty = sf.agreement_frame(ours.assign(changed_queries=0), study.iloc[:0], K)
    assert empty.empty and "weather P@5 kept (%)" in empty.columns


# ------------------------------------------------------------------------------- boundary


def test_boundary_caption_names_the_query_and_who_crosses_the_cut(run):
    _, _, results, measured = run
    r = next(r for r in results[:6] if r.n_changed)
    d = measured.boundary(r.condition.name)
    text = sf.boundary_caption(d, r)
    assert f"Query {d.attrs['query']}" in text and r.condition.name in text and "leave" in text


# -------------------------------------------------------------------------------- figures


def test_figures_are_valid_vega_lite(run, study):
    val, labels, results, measured = run
    ours = measured.table
    r = next(r for r in results if r.n_changed)
    charts = [
        sf.overview_chart(ours, study, K),
        sf.precision_change_chart(ours, study, K),
        sf.margin_chart(results),
        sf.certificate_chart(results),
    ]
    if r.condition.name not in {c.name for c in OFFSET_CONDITIONS}:
        charts.append(sf.boundary_chart(measured.boundary(r.condition.name), K))
    for chart in charts:
        spec = chart.to_dict()  # validates against the Vega-Lite schema
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_overview_draws_exact_zeros_at_the_floor(run, study):
    _, _, _, measured = run
    spec = sf.overview_chart(measured.table, study, K).to_dict()
    values = [v for d in spec["datasets"].values() for v in d if v.get("metric") == "error"]
    zero = [v for v in values if v["value"] == 0]
    assert zero and all(v["plotted"] == sf.ZERO_AT for v in zero)


def test_chart_frames_are_the_plotted_data(run, study):
    """The CSV frames of the overview and ΔP@k charts are the data the charts draw, row for row."""
    _, labels, results, measured = run
    ours = measured.table
    frame = sf.overview_frame(ours, study)
    drawn = [v for d in sf.overview_chart(ours, study, K).to_dict()["datasets"].values() for v in d]
    assert len(drawn) == len(frame) and set(frame["metric"]) == {"error", "changed", "overlap"}
    mine = frame[(frame["source"] == "this run") & (frame["metric"] == "changed")].set_index("condition")["value"]
    assert mine.to_dict() == ours["changed_queries"].astype(float).to_dict()
    delta = sf.precision_change_frame(ours, study)
    drawn = [
        v for d in sf.precision_change_chart(ours, study, K).to_dict()["datasets"].values() for v in d if "metric" in v
    ]
    assert len(drawn) == len(delta) and set(delta["metric"]) == {"weather", "scene"}


def test_certificate_explanation_states_the_computed_numbers(run):
    _, _, results, _ = run
    text = sf.certificate_explanation(results, 24)
    r = sf.result_named(results, "INT8 gallery")
    assert f"{int(r.certified.sum())} of {r.changed.size} queries ({100 * r.coverage:.1f}%) are certified" in text
    assert f"; {r.n_changed} changed" in text and "1/√24" in text and "only" not in text


def test_margin_statement_states_this_runs_margins_and_changes(run):
    _, _, results, _ = run
    f, o = sf.result_named(results, "FP16 gallery"), sf.result_named(results, ns.OFFSET_FP16)
    text = sf.margin_statement(results)
    assert f"{np.median(f.margins):.2g} on the vectors as embedded" in text
    assert f"{np.median(o.margins):.2g} after the common offset" in text
    assert f"changes {f.n_changed} and {o.n_changed} of {f.changed.size} queries" in text
    assert sf.margin_statement([r for r in results if r.condition.name != ns.OFFSET_FP16]) == ""


def test_data_statement_names_this_runs_vectors(run):
    val, labels, _, _ = run
    vectors = LabelledVectors(np.zeros((7, 24)), val, {}, labels, source="my vectors")
    text = sf.data_statement(vectors, K)
    assert text.startswith("**Data and encoder:** my vectors.")
    assert (
        f"Each of the {len(val)} evaluation vectors (24-d) queries the other {len(val) - 1} for its exact top {K}"
        in text
    )
    assert "the 7 training vectors" in text


def test_scope_note_names_the_scope_statements_apart(run, study):
    val, labels, results, measured = run
    n = len(val)
    covered = [replace(r, certified=np.ones(n, bool)) if r.condition.name == "INT8 gallery" else r for r in results]
    verdicts = ns.findings(ns.measurement(covered, labels, val, measured.settings), study)
    text = sf.scope_note(verdicts)
    assert text.startswith("**Scope, not counted") and "certificate covers no INT8 or offset query" in text
    assert "contradicted" in text and "good news" in text and "lies wholly above 0.5" in text
    assert sf.scope_note(verdicts[verdicts["kind"] != "scope"]) == ""
