"""The training chapters' figures and tables, on records whose answers are known (the
``training_records`` fixture of tests/conftest.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from embdiag.paper.chapters import training as figures
from embdiag.training.conditions import CONDITIONS
from embdiag.training.inputs import ATTRIBUTES
from embdiag.training import sweep
from embdiag.training.ladder import CONTROL, EMA
from embdiag.training.sweep import UNTRAINED


def test_charts_and_tables_build(training_records):
    rec = training_records()
    paired = figures.paired_percent(sweep.paired_table(rec))
    for chart in (figures.headline_chart(rec), figures.variants_chart(rec), figures.differences_chart(paired)):
        assert chart.to_dict()
    html = figures.means_table(rec).to_html()
    assert ">92.2<" in html and ">5<" in html  # 4 significant digits; runs as is
    untrained = {
        "condition": UNTRAINED,
        "seed": 0,
        "step": 0,
        "total_variance": 5.0,
        "rankme": 3.0,
        "timeofday P@10": 0.3,
    }
    traj = pd.DataFrame(
        [untrained]
        + [
            {
                "condition": EMA,
                "seed": 0,
                "step": s,
                "prediction_loss": 0.1,
                "total_variance": 1.0 + s,
                "rankme": 2.0,
                "timeofday P@10": 0.4,
            }
            for s in (100, 200)
        ]
    )
    chart = figures.trajectories_chart(traj)
    assert chart.to_dict()
    variance = chart.vconcat[0].hconcat[1].data
    assert variance.sort_values("step")["step"].tolist() == [0, 100, 200]  # starts at the untrained encoder
    assert set(variance["condition"]) == {EMA} and variance["value"].iloc[0] == 5.0


def test_long_records_list_geometry_once_and_labels_per_attribute(training_records):
    long = figures.long_records(training_records())
    var = long[(long["metric"] == "total variance") & (long["condition"] == EMA) & (long["seed"] == 0)]
    assert len(var) == 1 and var["attribute"].tolist() == [""] and np.allclose(var["value"], 100.0)
    acc = long[(long["metric"] == "probe accuracy (%)") & (long["condition"] == EMA) & (long["seed"] == 0)]
    assert sorted(acc["attribute"]) == sorted(figures.ATTRIBUTE_NAMES[a] for a in ATTRIBUTES)
    assert np.allclose(acc["floor"], 50.0)
    n_runs = len(training_records())
    assert len(long) == n_runs * (4 + 3 * len(ATTRIBUTES))  # 4 geometry, 3 per attribute


def _plotted(chart) -> pd.DataFrame:
    """Every row the rendered chart holds (all its datasets), read back from the Vega-Lite spec."""
    from embdiag.view.exhibits import chart_data

    return pd.concat(chart_data(chart), ignore_index=True)


def _rows(frame: pd.DataFrame, columns) -> list:
    return sorted(
        tuple(round(v, 9) if isinstance(v, float) else v for v in row)
        for row in frame[list(columns)].itertuples(index=False)
    )


def test_chart_frames_are_what_the_charts_draw(training_records):
    rec = training_records()
    rec.loc[(rec["condition"] == EMA) & (rec["seed"] == 4), "status"] = "failed"
    key = ["condition", "seed", "attribute", "metric", "value"]
    head = figures.headline_frame(rec)
    assert set(head["condition"]) == set(figures.HEADLINE) and set(head["metric"]) == set(figures.HEADLINE_METRICS)
    assert not ((head["condition"] == EMA) & (head["seed"] == 4)).any()  # failed runs are not data
    assert _rows(_plotted(figures.headline_chart(rec)), key) == _rows(head, key)
    variants = figures.variants_frame(rec)
    assert "status" not in variants and len(variants) == (len(rec) - 1) * (4 + 3 * len(ATTRIBUTES))
    assert _rows(_plotted(figures.variants_chart(rec)), key) == _rows(variants, key)


def test_trajectories_frame_is_what_the_chart_draws():
    traj = pd.DataFrame(
        [
            {
                "condition": UNTRAINED,
                "seed": 0,
                "step": 0,
                "prediction_loss": np.nan,
                "total_variance": 5.0,
                "rankme": 3.0,
                "timeofday P@10": 0.3,
            }
        ]
        + [
            {
                "condition": c,
                "seed": 0,
                "step": s,
                "prediction_loss": 0.1,
                "total_variance": 1.0 + s,
                "rankme": 2.0,
                "timeofday P@10": 0.4,
            }
            for c in (EMA, CONTROL)
            for s in (100, 200)
        ]
    )
    frame = figures.trajectories_frame(traj)
    assert len(frame) == 6 and (frame["step"] == 0).sum() == 2  # each run starts untrained
    assert frame.loc[frame["step"] == 0, "timeofday P@10 (%)"].tolist() == [30.0, 30.0]
    long = frame.melt(
        id_vars=["run", "step"], value_vars=["prediction_loss", "total_variance", "rankme", "timeofday P@10 (%)"]
    ).dropna()
    assert _rows(_plotted(figures.trajectories_chart(traj)), ["run", "step", "value"]) == _rows(
        long, ["run", "step", "value"]
    )


def test_means_table_marks_compare_the_seven_conditions_only(training_records):
    from embdiag.view import exhibits

    rec = training_records()
    table = figures.means_table(rec)
    html = exhibits.table(
        table,
        name="means",
        caption="c",
        extremes=[c for c in table.data.columns if c != "runs"],
        extremes_rows=table.data.index != UNTRAINED,
    ).html
    marks = exhibits.extreme_marks(table.data, table.data.index != UNTRAINED)
    p10 = list(table.data.columns).index("P@10 (%)")
    assert marks[list(table.data.index).index(UNTRAINED), p10] == ""  # lowest P@10, not compared
    assert marks[list(table.data.index).index(CONTROL), p10] == exhibits.MIN
    assert "among the 7 rows compared" in html


def test_caption_names_seeds_schedule_and_uncertainty_not_the_data():
    text = figures.caption("What is shown.", 5, "Dots are seeds.")
    assert text == "What is shown. 5 seeds per condition. Dots are seeds."
    assert figures.caption("Shown.", 1, "One seed.", steps="200 to 6,400 steps") == (
        "Shown. Runs of 200 to 6,400 steps. 1 seed per condition. One seed."
    )


def test_profile_statement_names_data_model_and_schedule():
    cfg = sweep.Task("cpu", UNTRAINED, 0).config()
    text = figures.profile_statement(cfg)
    assert f"{cfg.data.n_train:,} + {cfg.data.n_val:,} labelled" in text and "not BDD100K" in text
    assert f"profile `cpu`: ViT width {cfg.model.width}, depth {cfg.model.depth}," in text
    assert f"{cfg.steps:,} steps" in text


def test_paired_percent_scales_shares_only(training_records):
    rec = training_records()
    paired = sweep.paired_table(rec)
    pct = figures.paired_percent(paired)
    acc = (paired["metric"] == "accuracy") & (paired["attribute"] == "timeofday")
    assert np.allclose(pct.loc[acc, "difference"], 100 * paired.loc[acc, "difference"])
    assert set(pct.loc[acc, "metric"]) == {"probe accuracy (%)"}
    var = paired["metric"] == "total_variance"
    assert np.allclose(pct.loc[var, "mean"], paired.loc[var, "mean"]) and set(pct.loc[var, "metric"]) == {
        "total variance"
    }


def test_training_data_is_keyed_by_content_not_by_generator_source(tmp_path):
    from embdiag.training.config import DataConfig
    from embdiag.training.inputs import content_digest

    cfg = DataConfig(n_pool=40, n_train=30, n_val=20, source_size=32)
    first = content_digest(cfg, str(tmp_path))
    content_digest.cache_clear()
    assert content_digest(cfg, str(tmp_path)) == first  # read back from the manifests
    assert content_digest(DataConfig(n_pool=40, n_train=30, n_val=20, source_size=32, seed=1), str(tmp_path)) != first


def test_condition_matrix_is_the_studys():
    m = figures.condition_matrix()
    assert list(m.columns) == ["stop-gradient", "EMA target", "SIGReg", "projector"]
    assert m.loc["EMA reference"].tolist() == ["yes", "yes", "no", "no"]
    assert m.loc["Projector + SIGReg"].tolist() == ["no", "no", "yes", "yes"]
    assert m.loc[CONTROL].tolist() == ["no"] * 4
    assert list(m.index) == [c.name for c in CONDITIONS] and len(m) == 7


def _ladder(training_records, control_accuracy):
    """The ladder's conditions at 800 and 3,200 steps: the control's accuracy per length."""
    keep = [UNTRAINED, EMA, CONTROL, "SIGReg + stop-gradient"]
    parts = []
    for steps, acc in control_accuracy.items():
        rec = training_records({CONTROL: (1e-5, acc, 0.70)})
        parts.append(rec[rec["condition"].isin(keep)].assign(steps=steps))
    return pd.concat(parts, ignore_index=True)


def test_result_names_the_length_its_verdicts_and_how_the_label_gap_moves(training_records):
    from embdiag.study import training

    runs = _ladder(training_records, {800: 0.90, 3200: 0.70})
    records = training_records({CONTROL: (1e-5, 0.70, 0.70)})
    measured = training.of_runs(records, runs, training.Settings(profile="cpu-steps3200", attribute="weather"))
    html = figures.result(measured, training.findings(measured)).html
    assert html.count('class="embdiag-result"') == 1
    assert "At 3,200 steps, the longest training here," in html and "hold on weather" in html
    assert "<em>labels survive</em>" in html.split("Contradicted:")[1]  # -22 pp is outside ±3
    assert "gap to the EMA reference widens: -2.0 pp at 800 steps, -22.0 pp at 3,200." in html

    shorter = training.of_runs(records, runs, training.Settings(profile="cpu", attribute="weather"))
    assert "At 800 steps (the longest is 3,200)," in figures.result(shorter, training.findings(shorter)).html
    one = training.of_runs(records, runs[runs["steps"] == 800], training.Settings(profile="cpu"))
    assert "not yet measured at two training lengths" in figures.ladder_sentence(one)


def test_percent_panels_share_a_fixed_0_to_100_axis(training_records):
    rec = training_records()
    for chart in (figures.headline_chart(rec), figures.variants_chart(rec)):
        scales = [s for s in _scales(chart.to_dict()) if s.get("type") != "log"]
        assert {"domain": [0, 100], "nice": False} in scales
    length = figures.length_chart(figures.length_frame(rec.assign(steps=800)))
    assert sum(s == {"domain": [0, 100], "nice": False} for s in _scales(length.to_dict())) == 2


def _scales(spec):
    """Every ``scale`` of a y encoding in a Vega-Lite spec."""
    if isinstance(spec, dict):
        y = spec.get("encoding", {}).get("y", {})
        if isinstance(y, dict) and "scale" in y:
            yield y["scale"]
        for v in spec.values():
            yield from _scales(v)
    elif isinstance(spec, list):
        for v in spec:
            yield from _scales(v)


def test_variants_result_names_the_leaders_and_the_comparisons_of_the_run(training_records):
    rec = training_records()
    rec.loc[(rec["condition"] == CONTROL) & (rec["seed"] == 4), "status"] = "failed"
    paired = figures.paired_percent(sweep.paired_table(rec))
    html = figures.variants_result(rec, paired, 3200, attribute="scene").html
    assert html.count('class="embdiag-result"') == 1
    assert "At 3,200 steps, 34 of 35 runs of 7 conditions finished." in html
    assert "Highest mean total variance: <strong>SIGReg + stop-gradient</strong>" in html
    assert "on scene, highest probe accuracy: <strong>EMA reference</strong>" in html
    assert "highest P@10: <strong>EMA reference</strong>" in html
    assert "intervals over 4 seeds" in html  # a comparison with the control lost a seed
