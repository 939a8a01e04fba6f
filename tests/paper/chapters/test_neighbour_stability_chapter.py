"""The neighbour-stability chapter's tables, figures and declared findings, on small vectors."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from embdiag.paper.chapters import neighbour_stability as sf
from embdiag.interventions.precision import OFFSET_CONDITIONS, STUDY_CONDITIONS, compare_study_conditions
from embdiag.paper import findings

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
    train, val = X[:80], X[80:]
    labels = {"weather": lab[80:] % 3, "scene": lab[80:] % 2}
    results = compare_study_conditions(train, val, k=K, offset_severity=0.99)
    return val, labels, results


@pytest.fixture(scope="module")
def study():
    return sf.read_study()


# ------------------------------------------------------------------------ the study's values


def test_study_table_is_the_published_table(study):
    assert list(study.index) == NAMES
    assert (study["n_queries"] == 983).all()
    assert study.loc[
        "offset + FP16 gallery", ["changed_queries", "weather_p10_kept", "scene_p10_kept", "timeofday_p10_kept"]
    ].tolist() == [195, 131, 119, 149]
    assert study.loc["FP16 gallery", "certified"] == 576
    assert study.loc["INT8 queries + gallery", "max_score_error"] == 0.00482
    assert study.loc["offset + FP16 gallery", "delta_timeofday_p10_pp"] == 0.183
    assert study["certified"].isna().sum() == 4  # rows the study gives no coverage for


# ------------------------------------------------------------------------------------ tables


def test_storage_table_reads_the_results(run):
    val, labels, results = run
    t = sf.storage_table(results, labels)
    assert list(t.index) == NAMES
    for r in results:
        row = t.loc[r.condition.name]
        assert row["changed_queries"] == r.n_changed and row["n_queries"] == len(val)
        assert row["max_score_error"] == r.max_score_error and row["overlap_at_10"] == r.mean_overlap
        assert row["certified"] == r.certified.sum() and row["violations"] == r.violations
        for a, y in labels.items():
            assert row[f"delta_{a}_p10_pp"] == r.precision_change(y)
            assert row[f"{a}_p10_kept"] == r.agreement_kept(y) <= r.n_changed


def test_side_by_side_puts_the_study_above_this_run(run, study):
    val, labels, results = run
    ours = sf.storage_table(results, labels)
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
    val, _, results = run
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
    _, _, results = run
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
    _, labels, results = run
    ours = sf.storage_table(results, labels)
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


def test_example_query_prefers_the_widest_changed_margin(run):
    _, _, results = run
    r = sf.result_named(results, "offset + FP16 gallery")
    assert r.n_changed > 0
    q = sf.example_query(r)
    assert r.changed[q] and r.margins[q] == r.changed_margins.max()
    native = sf.result_named(results, "native reference")
    assert sf.example_query(native) == int(np.argmin(native.margins))
    with pytest.raises(ValueError, match="no condition named 'FP8'"):
        sf.result_named(results, "FP8")


def test_boundary_data_marks_who_crosses_the_cut(run):
    val, _, results = run
    r = next(r for r in results[:6] if r.n_changed)
    d = sf.boundary_data(val, r)
    q = d.attrs["query"]
    ref = d[d["side"] == "reference"].set_index("item")
    assert set(ref.index[ref["status"].isin(["stays in top k", "leaves top k"])]) <= set(r.reference_neighbors[q])
    assert set(ref.index[ref["status"].isin(["stays in top k", "enters top k"])]) == set(r.neighbors[q])
    assert (ref["status"] == "leaves top k").sum() == (ref["status"] == "enters top k").sum() >= 1
    assert (np.diff(ref.sort_values("rank")["score"]) <= 0).all()
    assert ref.loc[ref["rank"] == K, "score"].iloc[0] - ref.loc[ref["rank"] == K + 1, "score"].iloc[0] == pytest.approx(
        r.margins[q], abs=1e-15
    )
    text = sf.boundary_caption(d, r)
    assert f"Query {q}" in text and r.condition.name in text and "leave" in text
    with pytest.raises(ValueError, match="vectors: not the vectors this result ranked"):
        sf.boundary_data(val[::-1].copy(), r, q)


# -------------------------------------------------------------------------------- figures


def test_figures_are_valid_vega_lite(run, study):
    val, labels, results = run
    ours = sf.storage_table(results, labels)
    r = next(r for r in results if r.n_changed)
    charts = [
        sf.overview_chart(ours, study, K),
        sf.precision_change_chart(ours, study, K),
        sf.margin_chart(results),
        sf.certificate_chart(results),
    ]
    if r.condition.name not in {c.name for c in OFFSET_CONDITIONS}:
        charts.append(sf.boundary_chart(sf.boundary_data(val, r), K))
    for chart in charts:
        spec = chart.to_dict()  # validates against the Vega-Lite schema
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_overview_draws_exact_zeros_at_the_floor(run, study):
    _, labels, results = run
    spec = sf.overview_chart(sf.storage_table(results, labels), study, K).to_dict()
    values = [v for d in spec["datasets"].values() for v in d if v.get("metric") == "error"]
    zero = [v for v in values if v["value"] == 0]
    assert zero and all(v["plotted"] == sf.ZERO_AT for v in zero)


def test_chart_frames_are_the_plotted_data(run, study):
    """The CSV frames of the overview and ΔP@k charts are the data the charts draw, row for row."""
    _, labels, results = run
    ours = sf.storage_table(results, labels)
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
    _, _, results = run
    text = sf.certificate_explanation(results, 24)
    r = sf.result_named(results, "INT8 gallery")
    assert f"only {int(r.certified.sum())} of {r.changed.size} queries" in text
    assert f"only {r.n_changed} changed" in text and "1/√24" in text


# ------------------------------------------------------------------------------- findings


@pytest.fixture(scope="module")
def wide():
    """1,000 queries: enough for a Wilson interval of 0 changes to clear the declared margins."""
    rng = np.random.default_rng(2)
    centers = rng.standard_normal((6, 16))
    lab = rng.integers(0, 6, 1200)
    X = _unit(centers[lab] + 0.9 * rng.standard_normal((1200, 16)))
    labels = {"weather": lab[200:] % 3, "scene": lab[200:] % 2}
    return labels, compare_study_conditions(X[:200], X[200:], k=K, offset_severity=0.99)


def _altered(results, labels, study, **changes):
    """The verdict table after replacing fields of the named conditions' results."""
    altered = [replace(r, **changes[r.condition.name]) if r.condition.name in changes else r for r in results]
    return sf.findings(altered, labels, study, n_draws=500).set_index("finding")


def _mask(n, where):
    out = np.zeros(n, bool)
    out[list(where)] = True
    return out


def test_findings_declare_claims_with_margins(wide, study):
    labels, results = wide
    v = sf.findings(results, labels, study, n_draws=500)
    assert v["finding"].tolist() == list(sf.CRITERIA)
    assert all(isinstance(c, findings.Claim) and c.was for c in sf.CRITERIA.values())
    assert v.set_index("finding")["kind"].to_dict()["certificate covers no INT8 or offset query"] == "scope"
    assert (v["kind"] == "scope").sum() == 1
    for column in ("verdict", "reason", "low", "high", "holds in the study", "old criterion", "old verdict"):
        assert column in v.columns, column
    assert set(v["verdict"]) <= {"holds", "contradicted", "inconclusive", "not testable"}
    table = findings.table(v)
    assert list(table.index) == list(sf.CRITERIA) and "low" not in table.columns


def test_the_study_side_follows_the_same_rule(wide, study):
    labels, results = wide
    s = sf.findings(results, labels, study, n_draws=500).set_index("finding")["holds in the study"]
    assert s["FP16 changes few queries"] == "inconclusive"  # 5 of 983: Wilson reaches 1.19% > 1%
    assert s["FP32 arithmetic changes none"] == "holds"  # 0 of 983: Wilson reaches 0.39% < 0.5%
    assert s["no exception"] == "inconclusive"  # 0 of 576: Wilson reaches 0.66% > 0.5%
    assert s["agreement hides turnover"] == "not testable"  # ΔP@10 published without an interval
    assert s["INT8 changes more"] == s["offset + FP16 changes many"] == "holds"
    assert s["certificate covers many FP16 queries"] == s["certificate covers no INT8 or offset query"] == "holds"


def test_a_share_of_none_holds_on_many_queries_and_is_inconclusive_on_few(wide, run, study):
    labels, results = wide
    n = len(results[0].changed)
    none = {"changed": np.zeros(n, bool)}
    fp32 = "FP32 arithmetic changes none"
    assert _altered(results, labels, study, **{"FP32 arithmetic": none}).loc[fp32, "verdict"] == "holds"
    one = {"changed": _mask(n, [0])}  # 1 of 1,000: Wilson reaches 0.57% > 0.5%
    assert _altered(results, labels, study, **{"FP32 arithmetic": one}).loc[fp32, "verdict"] == "inconclusive"
    many = {"changed": _mask(n, range(30))}
    assert _altered(results, labels, study, **{"FP32 arithmetic": many}).loc[fp32, "verdict"] == "contradicted"
    _, small_labels, small = run  # 160 queries: 0 changed still allows 2.3%
    m = len(small[0].changed)
    zero = {
        name: {"changed": np.zeros(m, bool)} for name in ("FP32 arithmetic", "FP16 gallery", "FP16 queries + gallery")
    }
    f = _altered(small, small_labels, study, **zero)
    assert f.loc[fp32, "verdict"] == f.loc["FP16 changes few queries", "verdict"] == "inconclusive"
    assert f.loc[fp32, "old verdict"] == "yes"


def test_smallest_margins_is_not_testable_without_a_change(wide, study):
    labels, results = wide
    n = len(results[0].changed)
    name = "FP16 changes sit at the smallest margins"
    fp16 = ("FP16 gallery", "FP16 queries + gallery")

    def verdict(changed, margin):
        return _altered(
            results, labels, study, **{f: {"changed": changed, "margins": np.full(n, margin)} for f in fp16}
        ).loc[name]

    nothing = verdict(np.zeros(n, bool), 1e-7)
    assert nothing["verdict"] == "not testable" and "cannot be judged" in nothing["reason"]
    assert nothing["old verdict"] == "yes"  # the old criterion passed vacuously
    assert verdict(_mask(n, [0]), 1e-7)["verdict"] == "inconclusive"  # 1 of 1 reaches down to 21%
    assert verdict(_mask(n, range(20)), 1e-7)["verdict"] == "holds"
    assert verdict(_mask(n, range(20)), 1e-2)["verdict"] == "contradicted"


def test_orderings_need_a_paired_interval_above_zero(wide, study):
    labels, results = wide
    n = len(results[0].changed)
    some, more = _mask(n, range(10)), _mask(n, range(60))
    int8 = "INT8 changes more"

    def verdict(fp16, int8_changed):
        changes = {f: {"changed": fp16} for f in ("FP16 gallery", "FP16 queries + gallery")}
        changes |= {i: {"changed": int8_changed} for i in ("INT8 gallery", "INT8 queries + gallery")}
        return _altered(results, labels, study, **changes).loc[int8, "verdict"]

    assert verdict(some, some) == "inconclusive"  # the same queries: a difference of exactly 0
    assert verdict(some, more) == "holds"
    assert verdict(more, some) == "contradicted"
    assert verdict(some, some | _mask(n, [500])) == "inconclusive"  # one more query does not decide
    offset = _altered(results, labels, study, **{"offset + FP16 gallery": {"changed": np.zeros(n, bool)}})
    assert offset.loc["offset + FP16 changes many", "verdict"] == "contradicted"


def test_agreement_is_not_testable_without_turnover(wide, study):
    labels, results = wide
    n = len(results[0].changed)
    r = sf.result_named(results, "offset + FP16 gallery")
    still = {"changed": np.zeros(n, bool), "neighbors": r.reference_neighbors}
    f = _altered(results, labels, study, **{"offset + FP16 gallery": still}).loc["agreement hides turnover"]
    assert f["verdict"] == "not testable" and f["old verdict"] == "no"


def test_certificate_scope_and_exceptions(wide, study):
    labels, results = wide
    n = len(results[0].changed)
    every, none = np.ones(n, bool), np.zeros(n, bool)
    uncertified = {c: {"certified": none} for c in ("INT8 gallery", "INT8 queries + gallery", "offset + FP16 gallery")}
    scope = "certificate covers no INT8 or offset query"
    assert _altered(results, labels, study, **uncertified).loc[scope, "verdict"] == "holds"
    covered = _altered(results, labels, study, **{"INT8 gallery": {"certified": every}})
    assert covered.loc[scope, "verdict"] == "contradicted"
    assert (
        _altered(results, labels, study, **{"FP16 gallery": {"certified": _mask(n, range(480))}}).loc[
            "certificate covers many FP16 queries", "verdict"
        ]
        == "inconclusive"
    )  # 48%: the interval reaches past 50%

    def exception(changed):
        return _altered(results, labels, study, **{"FP16 gallery": {"certified": every, "changed": changed}}).loc[
            "no exception"
        ]

    one = exception(_mask(n, [0]))
    assert one["verdict"] == "inconclusive" and one["old verdict"] == "no"
    assert exception(_mask(n, range(20)))["verdict"] == "contradicted"


def test_exceptions_count_queries_once():
    names = ("FP16 gallery", "INT8 gallery", "native reference")
    rs = [
        SimpleNamespace(condition=SimpleNamespace(name=c), certified=np.array(cert), changed=np.array(chg))
        for c, cert, chg in zip(
            names,
            ([1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]),
            ([1, 0, 0, 1], [1, 0, 0, 0], [0, 0, 0, 0]),
        )
    ]
    for r in rs:
        r.certified, r.changed = r.certified.astype(bool), r.changed.astype(bool)
    assert sf.exceptions(rs) == (1, 3)  # query 0 broken twice, counted once; the reference is not counted


def test_interval_helpers(wide):
    labels, results = wide
    i = sf.share(0, 983)
    assert i.mean == 0 and i.low == 0 and i.high == pytest.approx(0.3893, abs=1e-4)
    mean, low, high = sf.bounded_difference(60, 5, 983)
    assert mean == pytest.approx(100 * 55 / 983) and low < mean < high
    assert low == pytest.approx(
        100 * (sf.proportion_interval(60, 983, 0.975).low - sf.proportion_interval(5, 983, 0.975).high)
    )
    a, b = sf.result_named(results, "offset + FP16 gallery"), sf.result_named(results, "FP16 gallery")
    d = sf.change_difference(a, b, n_draws=200)
    assert d.mean == pytest.approx(100 * (a.changed.mean() - b.changed.mean())) and d.low <= d.mean <= d.high
    for y in labels.values():
        assert sf.precision_changes(a, y).mean() == pytest.approx(a.precision_change(y), abs=1e-12)
        assert sf.precision_change_interval(a, y, n_draws=200).mean == pytest.approx(a.precision_change(y), abs=1e-12)


def test_findings_need_all_eight_conditions(run, study):
    _, labels, results = run
    with pytest.raises(ValueError, match="missing the conditions"):
        sf.findings(results[:6], labels, study)


def test_scope_note_names_the_scope_statements_apart(wide, study):
    labels, results = wide
    n = len(results[0].changed)
    covered = _altered(results, labels, study, **{"INT8 gallery": {"certified": np.ones(n, bool)}}).reset_index()
    text = sf.scope_note(covered)
    assert text.startswith("**Scope, not counted") and "certificate covers no INT8 or offset query" in text
    assert "contradicted" in text and "good news" in text and "lies wholly above 0.5" in text
    assert sf.scope_note(covered[covered["kind"] != "scope"]) == ""
