"""The training-length ladder: rungs found by folder name, findings and paired gaps per length."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from embdiag.metrics.stats import paired_t_interval
from embdiag.paper.chapters import training as figures
from embdiag.study import training
from embdiag.training import ladder
from embdiag.training.sweep import UNTRAINED

EMA, CONTROL = ladder.EMA, ladder.CONTROL


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
    monkeypatch.setattr(
        ladder, "load_records", lambda label, root=None, conditions=None: by_label[label].assign(stale=False)
    )
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


def _by_length(runs: pd.DataFrame) -> pd.DataFrame:
    return training.findings_by_length(training.measure_ladder(runs))


def _headline(runs: pd.DataFrame):
    """The headline result box of ladder runs (the longest length as the profile's)."""
    return figures.headline_result(training.of_runs(ladder.at_length(runs, runs["steps"].max()), runs))


def test_findings_at_every_length_use_the_declared_criteria():
    table = _by_length(_records({800: -0.01, 3200: -0.20}))
    assert list(table["steps"].unique()) == [800, 3200] and set(table["seeds"]) == {3}
    survive = table[table["finding"] == "labels survive"].set_index("steps")["verdict"]
    assert survive.to_dict() == {800: "holds", 3200: "contradicted"}  # within ±3 points at 800, outside at 3200
    assert set(table["finding"]) == set(training.CRITERIA)
    noisy = _by_length(_records({800: -0.02}))  # mean -1 pp, three seeds: [-3.48, +1.48]
    assert noisy.set_index("finding").loc["labels survive", "verdict"] == "inconclusive"


def test_the_committed_ladder_reads_and_draws():
    records = ladder.ladder_records("cpu")
    assert {800, 3200} <= set(records["steps"])
    assert set(records["condition"]) <= {UNTRAINED, *ladder.CONDITIONS}
    frame = figures.length_frame(records)
    assert set(frame["metric"]) == {"total variance", "probe accuracy (%)", "P@10 (%)"}
    spec = figures.length_chart(frame, training.read_study()).to_dict()
    assert len(spec["hconcat"]) == 3


def test_the_headline_result_states_the_verdict_and_the_gap_at_every_length():
    text = _headline(_records({800: -0.07, 3200: -0.20})).html
    assert "is <strong>contradicted</strong> at every one of the 2 training lengths" in text
    assert "gap <strong>widens</strong>" in text and "at 800 steps" in text and "at 3,200 steps" in text
    mixed = _headline(_records({800: -0.01, 3200: -0.20})).html
    assert "is holds at 800 steps, contradicted at 3,200 steps" in mixed


def _substrate_records(gains: dict, seeds=(0, 1, 2, 3, 4)) -> pd.DataFrame:
    """EMA reference and untrained encoder at each length; ``gains[steps]`` adds to every
    metric of the EMA reference, plus a seed-dependent spread of 1 pp."""
    rows = []
    for steps, gain in gains.items():
        for s in seeds:
            base = {m: 0.5 for m in ladder.SUBSTRATE.metrics}
            rows.append({"condition": UNTRAINED, "seed": s, "steps": steps, "status": "ok", **base})
            ema = {m: v + gain.get(m, 0.0) + 0.01 * (s - 2) for m, v in base.items()}
            rows.append({"condition": EMA, "seed": s, "steps": steps, "status": "ok", **ema})
    return pd.DataFrame(rows)


def test_the_substrate_is_the_shortest_length_above_zero_everywhere_and_past_the_margin_twice():
    everywhere = {m: 0.03 for m in ladder.SUBSTRATE.metrics}
    two = {**everywhere, "weather BA": 0.10, "scene BA": 0.10}
    one = {**everywhere, "scene BA": 0.10}
    table = ladder.substrate(_substrate_records({800: one, 3200: two, 6400: two}))
    assert set(table["n"]) == {5}
    assert table[table["steps"] == 800]["above_zero"].all()  # above zero, but the margin only once
    assert ladder.substrate_length(table) == 3200
    # a P@10 far past the margin does not stand in for a probe metric's
    p10 = {**one, "weather P@10": 0.2, "timeofday P@10": 0.2}
    assert ladder.substrate_length(ladder.substrate(_substrate_records({800: p10}))) is None
    # one metric whose interval reaches zero disqualifies the length
    straddles = {**two, "weather P@10": 0.0}
    assert ladder.substrate_length(ladder.substrate(_substrate_records({800: straddles, 6400: two}))) == 6400


def test_the_substrate_needs_two_seeds():
    two = {m: 0.10 for m in ladder.SUBSTRATE.metrics}
    table = ladder.substrate(_substrate_records({800: two}, seeds=(0,)))
    assert table["low"].isna().all() and ladder.substrate_length(table) is None


def test_the_substrate_is_a_paired_t_interval_in_points():
    gains = {m: 0.05 for m in ladder.SUBSTRATE.metrics}
    row = ladder.substrate(_substrate_records({800: gains})).iloc[0]
    ema = 100 * (0.55 + 0.01 * (np.arange(5) - 2))
    ref = paired_t_interval(ema, np.full(5, 50.0))
    assert (row["mean"], row["low"], row["high"]) == pytest.approx((ref.mean, ref.low, ref.high))


def test_the_committed_records_meet_the_substrate_at_6400_steps():
    table = ladder.substrate(ladder.ladder_records("cpu"))
    assert ladder.substrate_length(table) == 6400
    words = figures.substrate_table(table)
    assert list(words.columns) == ["800 steps", "3,200 steps", "6,400 steps"]
    assert words.loc["criterion", "6,400 steps"].startswith("meets") and "chosen" in words.loc["criterion"].iloc[-1]
    assert words.loc["criterion", "800 steps"].startswith("does not meet")
