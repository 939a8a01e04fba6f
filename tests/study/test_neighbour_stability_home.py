"""The neighbour-stability section's home: the eight storage conditions measured once, the
section's declared findings and their verdicts, on small vectors."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from embdiag.encoders.vectors import LabelledVectors
from embdiag.interventions.precision import OFFSET_CONDITIONS, STUDY_CONDITIONS, compare_study_conditions
from embdiag.metrics.stats import proportion_interval
from embdiag.paper import findings
from embdiag.study import findings as protocol
from embdiag.study import neighbour_stability as ns

K = 5
NAMES = [c.name for c in STUDY_CONDITIONS + OFFSET_CONDITIONS]
SETTINGS = ns.Settings(k=K, n_draws=500)


def _unit(Z):
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


def _clusters(n: int, d: int, seed: int):
    """``n`` unit vectors around six centres and their cluster labels."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((6, d))
    lab = rng.integers(0, 6, n)
    return _unit(centers[lab] + 0.9 * rng.standard_normal((n, d))), lab


def _vectors(X, lab, n_train: int) -> LabelledVectors:
    labels = {"weather": lab[n_train:] % 3, "scene": lab[n_train:] % 2}
    return LabelledVectors(X[:n_train], X[n_train:], {}, labels, source="synthetic clusters")


@pytest.fixture(scope="module")
def small():
    """160 queries, 24-d."""
    return _vectors(*_clusters(240, 24, 0), 80)


@pytest.fixture(scope="module")
def measured(small):
    return ns.run(small, SETTINGS)


@pytest.fixture(scope="module")
def wide():
    """1,000 queries: enough for a Wilson interval of 0 changes to clear the declared margins."""
    vectors = _vectors(*_clusters(1200, 16, 2), 200)
    return vectors, ns.run(vectors, SETTINGS)


@pytest.fixture(scope="module")
def study():
    return ns.read_study()


def _assert_same(a: ns.StorageMeasurement, b: ns.StorageMeasurement) -> None:
    assert [r.condition for r in a.results] == [r.condition for r in b.results]
    for ra, rb in zip(a.results, b.results):
        for field in ("changed", "overlap", "margins", "bound", "certified", "neighbors", "reference_neighbors"):
            np.testing.assert_array_equal(getattr(ra, field), getattr(rb, field), err_msg=field)
        assert ra.max_score_error == rb.max_score_error
    assert a.labels.keys() == b.labels.keys() and all(np.array_equal(a.labels[x], b.labels[x]) for x in a.labels)
    pd.testing.assert_frame_equal(a.table, b.table, check_exact=True)
    assert a.settings == b.settings and a.exceptions == b.exceptions
    assert a.differences == b.differences and a.precision_changes == b.precision_changes
    assert a.boundaries.keys() == b.boundaries.keys()
    for name in a.boundaries:
        pd.testing.assert_frame_equal(a.boundaries[name], b.boundaries[name], check_exact=True)
        assert a.boundaries[name].attrs == b.boundaries[name].attrs


# ---------------------------------------------------------------------------- the measurement


def test_settings_default_to_the_chapter_and_the_bootstrap_it_used():
    assert ns.Settings() == ns.Settings(k=10, offset_severity=0.99, offset_seed=0, n_draws=5000, seed=0)


def test_run_measures_the_eight_conditions_once(small, measured):
    results = compare_study_conditions(small.train, small.val, k=K, offset_severity=0.99, offset_seed=0)
    assert [r.condition.name for r in measured.results] == NAMES and measured.k == K
    for mine, theirs in zip(measured.results, results):
        np.testing.assert_array_equal(mine.changed, theirs.changed)
        np.testing.assert_array_equal(mine.neighbors, theirs.neighbors)
    pd.testing.assert_frame_equal(measured.table, ns.storage_table(results, small.val_labels), check_exact=True)
    assert measured.settings == SETTINGS and measured.exceptions == ns.exceptions(results)
    by = {r.condition.name: r for r in results}
    for (a, b), d in measured.differences.items():
        assert d == ns.change_difference(by[a], by[b], n_draws=500)
    assert list(measured.differences) == list(ns.DIFFERENCES)
    for a, y in small.val_labels.items():
        assert measured.precision_changes[a] == ns.precision_change_interval(by[ns.OFFSET_FP16], y, n_draws=500)


def test_run_passes_the_offset_settings_on(small, measured):
    moved = ns.run(small, replace(SETTINGS, offset_severity=0.5, offset_seed=3))
    expected = compare_study_conditions(small.train, small.val, k=K, offset_severity=0.5, offset_seed=3)
    np.testing.assert_array_equal(moved.results[-1].changed, expected[-1].changed)
    assert moved.results[-1].max_score_error == expected[-1].max_score_error
    assert moved.results[-1].max_score_error != measured.results[-1].max_score_error


def test_run_is_a_function_of_its_inputs(small, measured):
    again = LabelledVectors(small.train.copy(), small.val.copy(), {}, dict(small.val_labels), source="another name")
    _assert_same(ns.run(again, SETTINGS), measured)
    _assert_same(ns.run(small, replace(SETTINGS, k=np.int64(K), offset_severity=np.float64(0.99))), measured)


def test_run_reads_its_kept_result(small, measured, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBDIAG_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("EMBDIAG_MEMO", raising=False)
    first = ns.run(small, SETTINGS)
    assert len(list((tmp_path / "data" / "cache" / "memo").rglob("*.pkl"))) == 1
    second = ns.run(small, SETTINGS)
    _assert_same(first, measured)
    _assert_same(second, measured)
    assert len(list((tmp_path / "data" / "cache" / "memo").rglob("*.pkl"))) == 1


def test_the_bootstrap_settings_change_only_the_intervals(small, measured):
    other = ns.run(small, replace(SETTINGS, seed=1))
    pd.testing.assert_frame_equal(other.table, measured.table)
    assert other.differences != measured.differences


@pytest.mark.parametrize(
    "settings, field",
    [
        (ns.Settings(k=0), "k"),
        (ns.Settings(k=2.5), "k"),
        (ns.Settings(offset_severity=1.0), "offset_severity"),
        (ns.Settings(offset_severity="0.99"), "offset_severity"),
        (ns.Settings(offset_seed=-1), "offset_seed"),
        (ns.Settings(n_draws=1), "n_draws"),
        (ns.Settings(seed=True), "seed"),
        ({"k": 10}, "settings"),
    ],
)
def test_a_bad_setting_names_its_field(small, settings, field):
    with pytest.raises(ValueError, match=rf"^{field}: "):
        ns.run(small, settings)


def test_a_boundary_per_condition_on_the_vectors_as_embedded(small, measured):
    assert list(measured.boundaries) == [c.name for c in STUDY_CONDITIONS]
    for r in measured.results[:6]:
        pd.testing.assert_frame_equal(measured.boundary(r.condition.name), ns.boundary_data(small.val, r))
    with pytest.raises(ValueError, match="^condition: 'offset \\+ FP16 gallery' is not a condition on the vectors"):
        measured.boundary(ns.OFFSET_FP16)


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


def test_storage_table_reads_the_results(small, measured):
    t = measured.table
    assert list(t.index) == NAMES
    for r in measured.results:
        row = t.loc[r.condition.name]
        assert row["changed_queries"] == r.n_changed and row["n_queries"] == len(small.val)
        assert row["max_score_error"] == r.max_score_error and row["overlap_at_10"] == r.mean_overlap
        assert row["certified"] == r.certified.sum() and row["violations"] == r.violations
        for a, y in small.val_labels.items():
            assert row[f"delta_{a}_p10_pp"] == r.precision_change(y)
            assert row[f"{a}_p10_kept"] == r.agreement_kept(y) <= r.n_changed


# ------------------------------------------------------------------------------- boundary


def test_example_query_prefers_the_widest_changed_margin(measured):
    results = measured.results
    r = ns.result_named(results, "offset + FP16 gallery")
    assert r.n_changed > 0
    q = ns.example_query(r)
    assert r.changed[q] and r.margins[q] == r.changed_margins.max()
    native = ns.result_named(results, "native reference")
    assert ns.example_query(native) == int(np.argmin(native.margins))
    with pytest.raises(ValueError, match="no condition named 'FP8'"):
        ns.result_named(results, "FP8")


def test_boundary_data_marks_who_crosses_the_cut(small, measured):
    r = next(r for r in measured.results[:6] if r.n_changed)
    d = ns.boundary_data(small.val, r)
    q = d.attrs["query"]
    ref = d[d["side"] == "reference"].set_index("item")
    assert set(ref.index[ref["status"].isin(["stays in top k", "leaves top k"])]) <= set(r.reference_neighbors[q])
    assert set(ref.index[ref["status"].isin(["stays in top k", "enters top k"])]) == set(r.neighbors[q])
    assert (ref["status"] == "leaves top k").sum() == (ref["status"] == "enters top k").sum() >= 1
    assert (np.diff(ref.sort_values("rank")["score"]) <= 0).all()
    assert ref.loc[ref["rank"] == K, "score"].iloc[0] - ref.loc[ref["rank"] == K + 1, "score"].iloc[0] == pytest.approx(
        r.margins[q], abs=1e-15
    )
    with pytest.raises(ValueError, match="vectors: not the vectors this result ranked"):
        ns.boundary_data(small.val[::-1].copy(), r, q)


# ------------------------------------------------------------------------------- findings


def _altered(wide, study, **changes):
    """The verdict table after replacing fields of the named conditions' results."""
    vectors, measured = wide
    altered = [replace(r, **changes[r.condition.name]) if r.condition.name in changes else r for r in measured.results]
    again = ns.measurement(altered, measured.labels, vectors.val, measured.settings)
    return ns.findings(again, study).set_index("finding")


def _mask(n, where):
    out = np.zeros(n, bool)
    out[list(where)] = True
    return out


def test_findings_declare_claims_with_margins(wide, study):
    v = ns.findings(wide[1], study)
    assert v["finding"].tolist() == list(ns.CRITERIA)
    assert all(isinstance(c, protocol.Claim) and c.was for c in ns.CRITERIA.values())
    assert v.set_index("finding")["kind"].to_dict()["certificate covers no INT8 or offset query"] == "scope"
    assert (v["kind"] == "scope").sum() == 1
    for column in ("verdict", "reason", "low", "high", "holds in the study", "old criterion", "old verdict"):
        assert column in v.columns, column
    assert set(v["verdict"]) <= {"holds", "contradicted", "inconclusive", "not testable"}
    table = findings.table(v)
    assert list(table.index) == list(ns.CRITERIA) and "low" not in table.columns


def test_findings_read_the_study_by_default(wide, study):
    pd.testing.assert_frame_equal(ns.findings(wide[1]), ns.findings(wide[1], study))


def test_the_study_side_follows_the_same_rule(wide, study):
    s = ns.findings(wide[1], study).set_index("finding")["holds in the study"]
    assert s["FP16 changes few queries"] == "inconclusive"  # 5 of 983: Wilson reaches 1.19% > 1%
    assert s["FP32 arithmetic changes none"] == "holds"  # 0 of 983: Wilson reaches 0.39% < 0.5%
    assert s["no exception"] == "inconclusive"  # 0 of 576: Wilson reaches 0.66% > 0.5%
    assert s["agreement hides turnover"] == "not testable"  # ΔP@10 published without an interval
    assert s["INT8 changes more"] == s["offset + FP16 changes many"] == "holds"
    assert s["certificate covers many FP16 queries"] == s["certificate covers no INT8 or offset query"] == "holds"


def test_a_share_of_none_holds_on_many_queries_and_is_inconclusive_on_few(wide, small, measured, study):
    n = len(wide[1].results[0].changed)
    none = {"changed": np.zeros(n, bool)}
    fp32 = "FP32 arithmetic changes none"
    assert _altered(wide, study, **{"FP32 arithmetic": none}).loc[fp32, "verdict"] == "holds"
    one = {"changed": _mask(n, [0])}  # 1 of 1,000: Wilson reaches 0.57% > 0.5%
    assert _altered(wide, study, **{"FP32 arithmetic": one}).loc[fp32, "verdict"] == "inconclusive"
    many = {"changed": _mask(n, range(30))}
    assert _altered(wide, study, **{"FP32 arithmetic": many}).loc[fp32, "verdict"] == "contradicted"
    m = len(small.val)  # 160 queries: 0 changed still allows 2.3%
    zero = {
        name: {"changed": np.zeros(m, bool)} for name in ("FP32 arithmetic", "FP16 gallery", "FP16 queries + gallery")
    }
    f = _altered((small, measured), study, **zero)
    assert f.loc[fp32, "verdict"] == f.loc["FP16 changes few queries", "verdict"] == "inconclusive"
    assert f.loc[fp32, "old verdict"] == "yes"


def test_smallest_margins_is_not_testable_without_a_change(wide, study):
    n = len(wide[1].results[0].changed)
    name = "FP16 changes sit at the smallest margins"
    fp16 = ("FP16 gallery", "FP16 queries + gallery")

    def verdict(changed, margin):
        return _altered(wide, study, **{f: {"changed": changed, "margins": np.full(n, margin)} for f in fp16}).loc[name]

    nothing = verdict(np.zeros(n, bool), 1e-7)
    assert nothing["verdict"] == "not testable" and "cannot be judged" in nothing["reason"]
    assert nothing["old verdict"] == "yes"  # the old criterion passed vacuously
    assert verdict(_mask(n, [0]), 1e-7)["verdict"] == "inconclusive"  # 1 of 1 reaches down to 21%
    assert verdict(_mask(n, range(20)), 1e-7)["verdict"] == "holds"
    assert verdict(_mask(n, range(20)), 1e-2)["verdict"] == "contradicted"


def test_orderings_need_a_paired_interval_above_zero(wide, study):
    n = len(wide[1].results[0].changed)
    some, more = _mask(n, range(10)), _mask(n, range(60))
    int8 = "INT8 changes more"

    def verdict(fp16, int8_changed):
        changes = {f: {"changed": fp16} for f in ("FP16 gallery", "FP16 queries + gallery")}
        changes |= {i: {"changed": int8_changed} for i in ("INT8 gallery", "INT8 queries + gallery")}
        return _altered(wide, study, **changes).loc[int8, "verdict"]

    assert verdict(some, some) == "inconclusive"  # the same queries: a difference of exactly 0
    assert verdict(some, more) == "holds"
    assert verdict(more, some) == "contradicted"
    assert verdict(some, some | _mask(n, [500])) == "inconclusive"  # one more query does not decide
    offset = _altered(wide, study, **{"offset + FP16 gallery": {"changed": np.zeros(n, bool)}})
    assert offset.loc["offset + FP16 changes many", "verdict"] == "contradicted"


def test_agreement_is_not_testable_without_turnover(wide, study):
    n = len(wide[1].results[0].changed)
    r = ns.result_named(wide[1].results, "offset + FP16 gallery")
    still = {"changed": np.zeros(n, bool), "neighbors": r.reference_neighbors}
    f = _altered(wide, study, **{"offset + FP16 gallery": still}).loc["agreement hides turnover"]
    assert f["verdict"] == "not testable" and f["old verdict"] == "no"


def test_certificate_scope_and_exceptions(wide, study):
    n = len(wide[1].results[0].changed)
    every, none = np.ones(n, bool), np.zeros(n, bool)
    uncertified = {c: {"certified": none} for c in ("INT8 gallery", "INT8 queries + gallery", "offset + FP16 gallery")}
    scope = "certificate covers no INT8 or offset query"
    assert _altered(wide, study, **uncertified).loc[scope, "verdict"] == "holds"
    covered = _altered(wide, study, **{"INT8 gallery": {"certified": every}})
    assert covered.loc[scope, "verdict"] == "contradicted"
    assert (
        _altered(wide, study, **{"FP16 gallery": {"certified": _mask(n, range(480))}}).loc[
            "certificate covers many FP16 queries", "verdict"
        ]
        == "inconclusive"
    )  # 48%: the interval reaches past 50%

    def exception(changed):
        return _altered(wide, study, **{"FP16 gallery": {"certified": every, "changed": changed}}).loc["no exception"]

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
    assert ns.exceptions(rs) == (1, 3)  # query 0 broken twice, counted once; the reference is not counted


def test_interval_helpers(wide):
    vectors, measured = wide
    i = ns.share(0, 983)
    assert i.mean == 0 and i.low == 0 and i.high == pytest.approx(0.3893, abs=1e-4)
    mean, low, high = ns.bounded_difference(60, 5, 983)
    assert mean == pytest.approx(100 * 55 / 983) and low < mean < high
    assert low == pytest.approx(
        100 * (proportion_interval(60, 983, 0.975).low - proportion_interval(5, 983, 0.975).high)
    )
    a, b = ns.result_named(measured.results, "offset + FP16 gallery"), ns.result_named(measured.results, "FP16 gallery")
    d = ns.change_difference(a, b, n_draws=200)
    assert d.mean == pytest.approx(100 * (a.changed.mean() - b.changed.mean())) and d.low <= d.mean <= d.high
    for y in vectors.val_labels.values():
        assert ns.precision_changes(a, y).mean() == pytest.approx(a.precision_change(y), abs=1e-12)
        assert ns.precision_change_interval(a, y, n_draws=200).mean == pytest.approx(a.precision_change(y), abs=1e-12)


def test_a_measurement_needs_all_eight_conditions(small, measured):
    with pytest.raises(ValueError, match="missing the conditions"):
        ns.measurement(measured.results[:6], measured.labels, small.val, SETTINGS)


# ----------------------------------------------------------------------- the chapter's verdicts
