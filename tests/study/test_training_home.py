"""The training section's measurement and declared findings (:mod:`embdiag.study.training`), on
records whose answers are known (the ``training_records`` fixture of tests/conftest.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from embdiag.study import training
from embdiag.training.conditions import CONDITIONS
from embdiag.training.ladder import CONTROL, EMA
from embdiag.training.sweep import UNTRAINED, paired_differences


def test_means_are_per_condition_in_points(training_records):
    m = training.means(training_records())
    assert list(m.index) == [UNTRAINED] + [c.name for c in CONDITIONS]
    assert m.loc[EMA, "probe accuracy (%)"] == pytest.approx(92.2)
    assert m.loc[CONTROL, "total variance"] == pytest.approx(1e-5 * 1.02)
    assert (m["runs"] == 5).all()


def test_failed_runs_do_not_enter_the_means(training_records):
    rec = training_records()
    rec.loc[(rec["condition"] == EMA) & (rec["seed"] == 4), ["status", "timeofday accuracy"]] = ["failed", 0.0]
    m = training.means(rec)
    assert m.loc[EMA, "runs"] == 4 and m.loc[EMA, "probe accuracy (%)"] == pytest.approx(92.15)


def _verdicts(records) -> dict:
    return training.findings(training.measure(records)).set_index("finding")["verdict"].to_dict()


def test_findings_follow_their_criteria(training_records):
    assert _verdicts(training_records()) == {
        "spread collapses": "holds",
        "labels survive": "holds",
        "labels beyond untrained": "holds",
        "neighbours degrade": "holds",
        "geometry is not utility": "holds",
    }
    weak = training_records({CONTROL: (50.0, 0.70, 0.89)})  # no collapse, labels lost, neighbours kept
    assert _verdicts(weak) == {
        "spread collapses": "contradicted",
        "labels survive": "contradicted",
        "labels beyond untrained": "contradicted",
        "neighbours degrade": "contradicted",
        "geometry is not utility": "holds",
    }
    spread_is_utility = training_records({"SIGReg + stop-gradient": (50.0, 0.85, 0.80)})  # EMA tops all three
    assert _verdicts(spread_is_utility)["geometry is not utility"] == "contradicted"


def _jittered(records: pd.DataFrame, column: str, condition: str, by_seed) -> pd.DataFrame:
    rec = records.copy()
    for s, delta in enumerate(by_seed):
        rec.loc[(rec["condition"] == condition) & (rec["seed"] == s), column] += delta
    return rec


def test_a_null_gap_on_noisy_seeds_is_inconclusive_not_kept(training_records):
    rec = _jittered(training_records(), "timeofday accuracy", CONTROL, [-0.05, 0.05, -0.05, 0.05, 0.0])
    v = training.findings(training.measure(rec)).set_index("finding")
    assert v.loc["labels survive", "verdict"] == "inconclusive" and "crosses ±3" in v.loc["labels survive", "reason"]
    assert v.loc["labels survive", "old verdict"] == "yes"  # the five-seed mean sat within 3 points
    assert v.loc["labels survive", "low"] < -3 < 3 < v.loc["labels survive", "high"]


def test_a_tight_small_gap_holds_and_a_straddled_margin_is_inconclusive(training_records):
    rec = _jittered(training_records(), "timeofday P@10", CONTROL, [0.001, -0.001, 0.001, -0.001, 0.0])
    assert _verdicts(rec)["neighbours degrade"] == "holds"  # about -20 pp, tightly
    near = training_records({CONTROL: (1e-5, 0.91, 0.85)})  # a 5 pp fall, at the margin
    near = near.assign(**{"timeofday P@10": near["timeofday P@10"]})
    for s, delta in enumerate([0.01, -0.01, 0.01, -0.01, 0.0]):
        near.loc[(near["condition"] == CONTROL) & (near["seed"] == s), "timeofday P@10"] += delta
    assert _verdicts(near)["neighbours degrade"] == "inconclusive"


def test_the_findings_table_carries_kind_margin_and_the_old_criterion(training_records):
    v = training.findings(training.measure(training_records())).set_index("finding")
    assert v.loc["labels beyond untrained", "kind"] == "addition" and set(v["kind"]) == {"study", "addition"}
    assert v.loc["labels survive", "margin"] == "±3 pp" and v["old criterion"].str.contains("means").all()


def test_side_by_side_uses_the_paired_intervals(training_records):
    rec = training_records()
    table = training.comparisons(rec)
    assert len(table) == 10 and set(table["metric"]) == {"probe accuracy", "P@10"}
    ours = paired_differences(rec, "P@10", "timeofday").drop_duplicates("comparison").set_index("comparison")
    row = table[(table["metric"] == "P@10")].iloc[0]
    mean = 100 * ours.loc[row["comparison"], "mean"]
    assert row["this run"].startswith(f"{mean:+.2f} [")


def test_run_measures_the_committed_records_of_the_profile_and_its_ladder():
    measured = training.run(training.Settings(profile="cpu"))
    assert measured.settings == training.Settings(profile="cpu")
    assert set(measured.records["condition"]) >= {EMA, CONTROL, UNTRAINED}
    assert {800, 3200} <= set(measured.by_length)
    again = training.measure(measured.records, "timeofday")
    pd.testing.assert_frame_equal(training.findings(measured), training.findings(again))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (training.Settings(attribute="colour"), r"^attribute: expected one of"),
        (training.Settings(profile="tiny-steps7"), r"^profile: no training records for 'tiny-steps7'"),
    ],
)
def test_a_bad_setting_is_refused_naming_it(settings, message):
    with pytest.raises(ValueError, match=message):
        training.run(settings)
