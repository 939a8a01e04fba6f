"""A section measured on a declared sample of rows: which rows, said on the page, reported as it runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from embdiag.encoders.vectors import LabelledVectors
from embdiag.interventions import compression as intervention
from embdiag.study import compression, stress_tests
from embdiag.study.sampling import RowSample, sample_rows


def _vectors(n_train=60, n_val=40, d=8, seed=0) -> LabelledVectors:
    rng = np.random.default_rng(seed)
    y_train, y_val = np.tile(["a", "b", "c"], n_train // 3), np.tile(["a", "b", "c"], n_val // 3 + 1)[:n_val]
    shift = {"a": 0.0, "b": 2.0, "c": -2.0}
    train = rng.normal(size=(n_train, d)) + np.array([shift[c] for c in y_train])[:, None]
    val = rng.normal(size=(n_val, d)) + np.array([shift[c] for c in y_val])[:, None]
    return LabelledVectors(train, val, {"kind": y_train}, {"kind": y_val}, "toy vectors")


def test_each_split_is_cut_to_max_rows_in_order_with_its_labels():
    v = _vectors()
    cut, rows = sample_rows(v, 30, 7)
    assert cut.train.shape == (30, 8) and cut.val.shape == (30, 8)
    assert rows == RowSample((30, 60), (30, 40), 30, 7) and rows.sampled
    for split in ("train", "val"):
        full, part = getattr(v, split), getattr(cut, split)
        at = [int(np.flatnonzero((full == row).all(axis=1))[0]) for row in part]
        assert at == sorted(at), "the sample keeps the rows' order"
        assert (getattr(v, f"{split}_labels")["kind"][at] == getattr(cut, f"{split}_labels")["kind"]).all()
    again, _ = sample_rows(v, 30, 7)
    assert (again.train == cut.train).all() and (again.val == cut.val).all(), "the seed fixes the draw"
    assert not (sample_rows(v, 30, 8)[0].train == cut.train).all()


def test_splits_within_max_rows_or_no_cap_are_measured_whole_and_the_page_says_nothing():
    v = _vectors()
    for max_rows in (None, 60, 1000):
        same, rows = sample_rows(v, max_rows, 0)
        assert same is v and not rows.sampled and rows.note() == ""
    assert rows.describe() == "every row: 60 training and 40 evaluation rows"


@pytest.mark.parametrize(("max_rows", "message"), [(1, "max_rows: must be at least 2"), ("5", "max_rows: expected")])
def test_a_bad_max_rows_is_refused_naming_it(max_rows, message):
    with pytest.raises(ValueError, match=message):
        sample_rows(_vectors(), max_rows, 0)
    with pytest.raises(ValueError, match=message):
        stress_tests.run(_vectors(), stress_tests.Settings(max_rows=max_rows))


def test_a_sampled_run_measures_the_sample_and_says_so():
    v = _vectors(n_train=90, n_val=60)
    settings = stress_tests.Settings(severities=(0.5,), k=3, seed=3, max_rows=45)
    sampled = stress_tests.run(v, settings)
    cut, rows = sample_rows(v, 45, 3)
    whole = stress_tests.run(cut, stress_tests.Settings(severities=(0.5,), k=3, seed=3, max_rows=None))
    pd.testing.assert_frame_equal(sampled.grid, whole.grid)
    assert sampled.rows == rows
    assert sampled.rows.note().startswith("Measured on 45 of 90 training rows and 45 of 60 evaluation rows")
    assert "with seed 3" in sampled.rows.note() and whole.rows.note() == ""


def test_compression_is_measured_on_the_sample_too():
    measured = compression.run(_vectors(n_train=90, n_val=60), compression.Settings(k=3, dims=[4], max_rows=45))
    assert len(measured.items) == 45 and measured.rows.train == (45, 90) and measured.rows.sampled


def test_progress_reports_each_step_on_stderr_only_when_asked(capsys):
    v, settings = _vectors(), stress_tests.Settings(severities=(0.5,), k=3)
    stress_tests.run(v, settings)
    assert capsys.readouterr().err == ""
    stress_tests.run(v, settings, progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "stress tests: 4 interventions x 2 severities; every row: 60 training and 40 evaluation rows"
    steps = [line.split(" ", 3)[2] for line in lines[1:]]
    assert steps == [f"{i}/9" for i in range(1, 10)] and all(line.endswith(" s)") for line in lines[1:])
    assert "stress tests: 9/9 noise s=0.5 (" in lines[-1]
    assert any("balanced-accuracy drop of rank restriction s=0.5" in line for line in lines)
    compression.run(v, compression.Settings(k=3, dims=[4]), progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines[1].startswith("compression: 1/8 native 8 (") and lines[-1].startswith("compression: 8/8 probe")


def test_one_pass_gives_the_grid_and_the_items_of_two(monkeypatch):
    v = _vectors()
    labels = {"kind": v.val_labels["kind"].astype(object)}
    labels["kind"][[0, 5]] = None  # missing labels are left out of the items as of the grid
    args = v.train, v.train_labels, v.val, labels
    fits = []
    real = intervention.fit_probes
    monkeypatch.setattr(intervention, "fit_probes", lambda *a, **kw: fits.append(1) or real(*a, **kw))
    grid, items = intervention.compression_tables(*args, dims=[4, 2], k=3)
    assert len(fits) == len(grid), "one probe fit per representation serves both tables"
    pd.testing.assert_frame_equal(grid, intervention.compression_grid(*args, dims=[4, 2], k=3))
    pd.testing.assert_frame_equal(items, intervention.compression_items(*args, dims=[4, 2], k=3))
