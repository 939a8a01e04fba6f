"""The sweep at tiny scale: records, skipping, staleness, embeddings, paired differences, CLI."""

import argparse
import os

import numpy as np
import pandas as pd
import pytest

from embdiag import artifacts
from embdiag.metrics.geometry import total_variance
from embdiag.training import config, sweep
from embdiag.training.conditions import COMPARISONS
from embdiag.training.sweep import (
    UNTRAINED,
    load_embeddings,
    load_records,
    paired_differences,
    paired_table,
    run_label,
    run_sweep,
)

PAIR = ["SIGReg", "Projector + SIGReg"]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    run_sweep("tiny", conditions=PAIR, seeds=[0], workers=1, root=root, progress=False)
    return root


def test_records_of_some_conditions_read_only_theirs(root):
    artifacts.clear_reads()
    df = load_records("tiny", root=root, conditions=[UNTRAINED, PAIR[0]])
    assert list(df["condition"]) == [UNTRAINED, PAIR[0]]
    read = [r.path for r in artifacts.reads()]
    assert any("sigreg-s0" in p for p in read) and not any("projector-sigreg-s0" in p for p in read)


def _mtimes(root):
    return {p: p.stat().st_mtime_ns for p in (root / "training" / "tiny").glob("*/manifest.json")}


def test_records_of_a_tiny_sweep(root):
    df = load_records("tiny", root=root)
    assert list(df["condition"]) == [UNTRAINED] + PAIR
    assert (df["status"] == "ok").all() and not df["stale"].any()
    assert (df["steps_done"] == [0, 6, 6]).all()
    assert {"timeofday accuracy", "scene P@10", "weather majority", "timeofday random P@10"} <= set(df.columns)
    names = sorted(p.name for p in (root / "training" / "tiny").iterdir())
    assert names == ["projector-sigreg-s0", "sigreg-s0", "untrained-s0"]
    assert not (root / "cache" / "training" / "tiny" / "sigreg-s0").exists()  # checkpoint removed when done
    m = artifacts.manifest("training/tiny/sigreg-s0", root=root)
    assert m["params"]["code"] == sweep.code_digest() and m["params"]["config"]["steps"] == 6
    assert m["files"]["val_embeddings.npy"]["dtype"] == "float16"
    trajectory = artifacts.load("training/tiny/sigreg-s0", root=root)["trajectory"]
    assert list(trajectory["step"]) == [3, 6]


def test_embeddings_round_trip_at_float16_precision(root):
    train, val = load_embeddings("tiny", "SIGReg", 0, root=root)
    assert train.shape == (300, 192) and val.dtype == np.float32
    row = load_records("tiny", root=root).query("condition == 'SIGReg'").iloc[0]
    assert total_variance(val) == pytest.approx(row["total_variance"], rel=1e-3)


def test_second_call_skips_finished_runs(root):
    before = _mtimes(root)
    df = run_sweep("tiny", conditions=PAIR, seeds=[0], workers=1, root=root, progress=False)
    assert _mtimes(root) == before and len(df) == 3


def test_changed_configuration_makes_records_stale_and_reruns_them(tmp_path, monkeypatch):
    run_sweep("tiny", conditions=["SIGReg"], seeds=[1], workers=1, root=tmp_path, progress=False)
    before = _mtimes(tmp_path)
    monkeypatch.setitem(config.PROFILES, "tiny", config.PROFILES["tiny"].replace(lr=2e-3))
    assert load_records("tiny", root=tmp_path)["stale"].all()
    df = run_sweep("tiny", conditions=["SIGReg"], seeds=[1], workers=1, root=tmp_path, progress=False)
    after = _mtimes(tmp_path)
    assert all(after[p] != before[p] for p in before) and not df["stale"].any()
    assert artifacts.manifest("training/tiny/sigreg-s1", root=tmp_path)["params"]["config"]["lr"] == 2e-3


def test_steps_override_has_its_own_label():
    assert run_label("tiny") == run_label("tiny", 6) == "tiny"
    assert run_label("cpu", 10) == "cpu-steps10"
    with pytest.raises(ValueError, match="profile"):
        run_label("gpu")
    with pytest.raises(ValueError, match="workers"):
        run_sweep("tiny", workers=0)
    with pytest.raises(ValueError, match="condition"):
        run_sweep("tiny", conditions=["nope"])


def _synthetic_records():
    rng = np.random.default_rng(0)
    rows = []
    for c in [
        "EMA reference",
        "Stop-gradient only",
        "SIGReg + stop-gradient",
        "SIGReg",
        "Projector + SIGReg + stop-gradient",
        "Projector + SIGReg",
        "Contracted control",
    ]:
        for s in range(5):
            rows.append(
                {
                    "condition": c,
                    "seed": s,
                    "status": "ok",
                    "timeofday accuracy": rng.uniform(0.8, 0.95),
                    "rankme": rng.uniform(1, 100),
                }
            )
    return pd.DataFrame(rows)


def test_paired_differences_match_a_hand_computation():
    df = _synthetic_records()
    out = paired_differences(df, "accuracy", "timeofday")
    assert list(out["comparison"].unique()) == [c.label for c in COMPARISONS]
    first = out[out["comparison"] == COMPARISONS[0].label]
    a = df[df["condition"] == "Stop-gradient only"].sort_values("seed")["timeofday accuracy"].to_numpy()
    b = df[df["condition"] == "Contracted control"].sort_values("seed")["timeofday accuracy"].to_numpy()
    d = a - b
    half = 2.7764451051977987 * d.std(ddof=1) / np.sqrt(5)  # t(0.975, 4)
    assert np.allclose(first["difference"], d)
    assert first["mean"].iloc[0] == pytest.approx(d.mean())
    assert first["low"].iloc[0] == pytest.approx(d.mean() - half)
    assert first["high"].iloc[0] == pytest.approx(d.mean() + half)
    assert (first["n"] == 5).all()


def test_paired_differences_drop_failed_seeds_and_cover_every_metric():
    df = _synthetic_records()
    df.loc[(df["condition"] == "SIGReg") & (df["seed"] == 2), "status"] = "failed"
    out = paired_differences(df, "rankme")
    assert (out[out["B"] == "SIGReg"]["n"] == 4).all() and 2 not in set(out[out["B"] == "SIGReg"]["seed"])
    with pytest.raises(ValueError, match="metric"):
        paired_differences(df, "BA", "weather")


def test_paired_table_on_real_records(root):
    df = load_records("tiny", root=root)
    table = paired_table(df)
    only = table[table["comparison"] == COMPARISONS[4].label]  # Projector + SIGReg minus SIGReg
    assert set(only["metric"]) == {
        "total_variance",
        "mean_cosine",
        "rankme",
        "participation_ratio",
        "accuracy",
        "BA",
        "P@10",
    }
    assert only["n"].eq(1).all() and only["low"].isna().all()


def test_command_line_options():
    parser = sweep.add_arguments(argparse.ArgumentParser())
    args = parser.parse_args(
        [
            "--profile",
            "tiny",
            "--conditions",
            "SIGReg",
            "ema-reference",
            "--seeds",
            "0",
            "3",
            "--steps",
            "4",
            "--workers",
            "1",
            "--root",
            "/tmp/x",
        ]
    )
    assert (args.profile, args.conditions, args.seeds, args.steps, args.workers) == (
        "tiny",
        ["SIGReg", "ema-reference"],
        [0, 3],
        4,
        1,
    )
    assert parser.parse_args([]).profile == "cpu" and parser.parse_args([]).workers == 2


@pytest.mark.slow
def test_two_spawned_workers(tmp_path):
    df = run_sweep(
        "tiny",
        conditions=["EMA reference", "Contracted control"],
        seeds=[0],
        steps=4,
        workers=2,
        root=tmp_path,
        progress=False,
    )
    assert (df["status"] == "ok").all() and len(df) == 3
    assert sorted(os.listdir(tmp_path / "training")) == ["renderings.json", "tiny-steps4"]
    here = run_sweep(
        "tiny",
        conditions=["EMA reference", "Contracted control"],
        seeds=[0],
        steps=4,
        workers=1,
        root=tmp_path / "here",
        progress=False,
    )
    timings = ["train_seconds", "eval_seconds", "seconds_per_step", "wall_seconds", "resumed_from"]
    pd.testing.assert_frame_equal(df.drop(columns=timings), here.drop(columns=timings))  # one thread either way


def _render_one_pixel_apart(root):
    """Re-cache the tiny profile's val scenes with one pixel value one level off, as another
    float path renders them; returns the content digest before."""
    from embdiag.data.procedural import artifact_name, split_params
    from embdiag.training import inputs

    data = config.PROFILES["tiny"].data
    before = inputs.content_digest(data, str(root))
    params = split_params("val", data.n_val, seed=data.seed, image_size=data.source_size, difficulty=data.difficulty)
    name = artifact_name(params)
    arrays = {k: np.array(v) for k, v in artifacts.load(name, params, root=root).items()}
    arrays["images"][0, 0, 0, 0] ^= 1
    artifacts.save(name, arrays, params, root=root)
    inputs.content_digest.cache_clear()
    assert inputs.content_digest(data, str(root)) != before
    return before


def test_records_rendered_on_another_float_path_are_not_stale(tmp_path, monkeypatch):
    run_sweep("tiny", conditions=["SIGReg"], seeds=[2], workers=1, root=tmp_path, progress=False)
    made = _render_one_pixel_apart(tmp_path)
    notes = sweep._renderings(tmp_path)
    assert list(notes) == [made] and notes[made]["float_path"] == sweep.floatpath.current()
    assert [len(names) for names in notes[made]["scenes"]] == [3]
    # on the float path the records were made on, other bytes mean other scenes: stale
    assert load_records("tiny", root=tmp_path)["stale"].all()
    # on another float path, the same generator and parameters: the records hold
    monkeypatch.setattr(sweep.floatpath, "current", lambda env=None: "native aarch64")
    assert not load_records("tiny", root=tmp_path)["stale"].any()
    before = _mtimes(tmp_path)
    run_sweep("tiny", conditions=["SIGReg"], seeds=[2], workers=1, root=tmp_path, progress=False)
    assert _mtimes(tmp_path) == before
    # an edited generator is another generator, whatever the float path
    monkeypatch.setattr(sweep, "artifact_name", lambda params: "cache/scenes-edited")
    assert load_records("tiny", root=tmp_path)["stale"].all()


def test_a_generator_edit_that_keeps_the_bytes_adds_its_scene_names(tmp_path, monkeypatch):
    run_sweep("tiny", conditions=["SIGReg"], seeds=[4], workers=1, root=tmp_path, progress=False)
    made = next(iter(sweep._renderings(tmp_path)))
    monkeypatch.setattr(sweep, "artifact_name", lambda params: f"cache/scenes-{params['split']}-renamed")
    run_sweep("tiny", conditions=["SIGReg"], seeds=[4], workers=1, root=tmp_path, progress=False)  # nothing to run
    scenes = sweep._renderings(tmp_path)[made]["scenes"]
    assert len(scenes) == 2 and scenes[1] == [f"cache/scenes-{s}-renamed" for s in ("train", "val", "pool")]


def test_a_rendering_without_a_note_is_stale(tmp_path, monkeypatch):
    run_sweep("tiny", conditions=["SIGReg"], seeds=[3], workers=1, root=tmp_path, progress=False)
    _render_one_pixel_apart(tmp_path)
    (tmp_path / sweep.RENDERINGS).unlink()
    monkeypatch.setattr(sweep.floatpath, "current", lambda env=None: "native aarch64")
    assert load_records("tiny", root=tmp_path)["stale"].all()
