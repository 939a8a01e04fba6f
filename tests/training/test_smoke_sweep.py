"""CI's smoke sweep: every condition for a few steps through the command line."""

from __future__ import annotations

import pytest

from embdiag.paper.cli import main
from embdiag.training import CONDITIONS
from embdiag.training.sweep import UNTRAINED, load_records, load_trajectories


@pytest.mark.slow
def test_every_condition_trains_through_embdiag_train(tmp_path, capsys):
    assert (
        main(["train", "--profile", "tiny", "--steps", "3", "--seeds", "0", "--workers", "1", "--root", str(tmp_path)])
        == 0
    )
    records = load_records("tiny-steps3", root=tmp_path)
    assert list(records["condition"]) == [UNTRAINED] + [c.name for c in CONDITIONS]
    assert (records["status"] == "ok").all() and not records["stale"].any()
    assert "Contracted control" in capsys.readouterr().out
    trajectories = load_trajectories("tiny-steps3", root=tmp_path)
    assert set(trajectories["condition"]) == {c.name for c in CONDITIONS} | {UNTRAINED}
    assert trajectories.groupby("condition")["step"].max().drop(UNTRAINED).eq(3).all()
    assert (
        main(["train", "--profile", "tiny", "--steps", "3", "--seeds", "0", "--workers", "1", "--root", str(tmp_path)])
        == 0
    )  # everything finished: nothing reruns
    assert "0 to run" in capsys.readouterr().err
