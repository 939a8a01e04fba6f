"""The training-length ladder: rungs found by folder name, findings and paired gaps per length."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from embdiag.metrics.stats import paired_t_interval
from embdiag.paper.chapters import training as findings
from embdiag.training import ladder
from embdiag.training.sweep import UNTRAINED

EMA, CONTROL = findings.EMA, findings.CONTROL


def test_rungs_are_the_profile_and_its_step_overrides_shortest_first(tmp_path):
    for name in ("cpu", "cpu-steps3200", "cpu-steps6400", "cpu-steps12x", "tiny-steps3", "cpu-cuda"):
        (tmp_path / "training" / name).mkdir(parents=True)
    assert ladder.rungs("cpu", tmp_path) == {800: "cpu", 3200: "cpu-steps3200", 6400: "cpu-steps6400"}
    assert ladder.rungs("tiny", tmp_path) == {3: "tiny-steps3"}
    with pytest.raises(ValueError, match=r"^profile: expected one of"):
        ladder.rungs("gpu", tmp_path)


def test_a_rung_begun_is_a_length_once_each_condition_has_a_run(tmp_path, monkeypatch):
    for name in ("cpu", "cpu-steps3200"):
        (tmp_path / "training" / name).mkdir(parents=True)
    begun = _records({3200: -0.05}).drop(columns="steps")
    by_label = {"cpu": _records({800: -0.05}).drop(columns="steps")}
    monkeypatch.setattr(ladder, "load_records", lambda label, root=None: by_label[label].assign(stale=False))
    conditions = (EMA, CONTROL)
    for sofar in ([UNTRAINED], [UNTRAINED, EMA]):
        by_label["cpu-steps3200"] = begun[begun["condition"].isin(sofar)]
        assert ladder.ladder_records("cpu", conditions, root=tmp_path)["steps"].unique().tolist() == [800]
    by_label["cpu-steps3200"] = begun[(begun["condition"] == UNTRAINED) | (begun["seed"] == 0)]
    assert ladder.ladder_records("cpu", conditions, root=tmp_path)["steps"].unique().tolist() == [800, 3200]


def _records(gap_by_length: dict, seeds=(0, 1, 2)) -> pd.DataFrame:
    """EMA at 0.85 accuracy, the control ``gap`` below it (plus a seed offset), untrained 0.83."""
    rows = []
    for steps, gap in gap_by_length.items():
        for s in seeds:
            rows += [
                {
                    "condition": EMA,
                    "seed": s,
                    "steps": steps,
                    "total_variance": 20.0,
                    "timeofday accuracy": 0.85,
                    "timeofday P@10": 0.72,
                },
                {
                    "condition": CONTROL,
                    "seed": s,
                    "steps": steps,
                    "total_variance": 1e-3,
                    "timeofday accuracy": 0.85 + gap + 0.01 * s,
                    "timeofday P@10": 0.55,
                },
                {
                    "condition": UNTRAINED,
                    "seed": s,
                    "steps": steps,
                    "total_variance": 24.0,
                    "timeofday accuracy": 0.83,
                    "timeofday P@10": 0.70,
                },
            ]
    df = pd.DataFrame(rows)
    for col in ("rankme", "participation_ratio", "mean_cosine"):
        df[col] = 1.0
    for a in ("weather", "scene"):
        for m in ("accuracy", "BA", "P@10"):
            df[f"{a} {m}"] = 0.5
    df["timeofday BA"] = df["timeofday accuracy"]
    df["status"] = "ok"
    return df


def test_gaps_are_paired_t_intervals_per_length_in_points():
    records = _records({800: -0.07, 3200: -0.20})
    g = ladder.gaps(records)
    assert list(g["steps"].unique()) == [800, 3200] and set(g["n"]) == {3}
    row = g[(g["contrast"] == "control − EMA, probe accuracy") & (g["steps"] == 3200)].iloc[0]
    ref = paired_t_interval(100 * np.array([0.65, 0.66, 0.67]), 100 * np.array([0.85] * 3))
    assert row["mean"] == pytest.approx(ref.mean) and row["low"] == pytest.approx(ref.low)
    assert row["mean"] == pytest.approx(-19.0)
    one = ladder.gaps(_records({800: -0.07}, seeds=(0,)))
    assert one["n"].eq(1).all() and one["low"].isna().all()


def test_the_trend_needs_the_longest_interval_to_exclude_the_shortest_mean():
    def trend(gaps):
        return ladder.trend(ladder.gaps(_records(gaps)), "control − EMA, probe accuracy")

    assert trend({800: -0.07, 3200: -0.20}) == "widens"
    assert trend({800: -0.20, 3200: -0.07}) == "narrows"
    assert trend({800: -0.07, 3200: -0.071}) == "holds"
    assert trend({800: -0.07}) == "not yet measured at two lengths"
    one_seed = ladder.gaps(_records({800: -0.07, 3200: -0.2}, seeds=(0,)))
    assert ladder.trend(one_seed, "control − EMA, probe accuracy") == "not yet measured at two lengths"
    # a rung with one seed so far is left out: the trend runs to the longest length with an interval
    partial = pd.concat(
        [ladder.gaps(_records({800: -0.07, 3200: -0.20})), ladder.gaps(_records({6400: 0.05}, seeds=(0,)))],
        ignore_index=True,
    )
    assert ladder.measured(partial, "control − EMA, probe accuracy") == [800, 3200]
    assert ladder.trend(partial, "control − EMA, probe accuracy") == "widens"


def test_findings_at_every_length_use_the_declared_criteria():
    table = findings.findings_by_length(_records({800: -0.02, 3200: -0.20}))
    assert list(table["steps"].unique()) == [800, 3200] and set(table["seeds"]) == {3}
    survive = table[table["finding"] == "labels survive"].set_index("steps")["reproduces"]
    assert survive.to_dict() == {800: True, 3200: False}  # within 3 points at 800, not at 3200
    assert set(table["finding"]) == set(findings.CRITERIA)


def test_the_committed_ladder_reads_and_draws():
    records = ladder.ladder_records("cpu")
    assert {800, 3200} <= set(records["steps"])
    assert set(records["condition"]) <= {UNTRAINED, *ladder.CONDITIONS}
    frame = findings.length_frame(records)
    assert set(frame["metric"]) == {"total variance", "probe accuracy (%)", "P@10 (%)"}
    spec = findings.length_chart(frame, findings.read_study()).to_dict()
    assert len(spec["hconcat"]) == 3
