"""``--target-recall`` is a share of the exact top-k in (0, 1]: recorded in report.json and refused
by name (exit 2, before anything is measured) when it is not one."""

from __future__ import annotations

import numpy as np
import pytest

from embdiag import exits
from embdiag.data.files import InputError
from embdiag.report import cli, measure
from embdiag.report.measurement import check_target_recall


def test_the_target_is_recorded():
    X = np.random.default_rng(0).standard_normal((60, 4)).astype(np.float32)
    report = measure(X, k=3, target_recall=0.9, progress=False)
    assert report.inputs["target_recall"] == 0.9


@pytest.mark.parametrize("target", [0, -0.1, 1.01, 95, float("nan"), float("inf"), "a", True])
def test_a_target_that_is_not_a_recall_is_refused_naming_it(target):
    with pytest.raises(InputError, match=r"^--target-recall "):
        check_target_recall(target)


@pytest.mark.parametrize("target", ["1", "0.5"])
def test_a_recall_is_accepted(target):
    assert check_target_recall(float(target)) == float(target)


@pytest.mark.parametrize("target", ["0", "1.5", "nan", "x"])
def test_the_command_refuses_a_bad_target_before_measuring(tmp_path, monkeypatch, capsys, target):
    def must_not_run(*args, **kwargs):
        raise AssertionError("the report was measured")

    monkeypatch.setattr(cli, "write_report", must_not_run)
    np.save(tmp_path / "v.npy", np.random.default_rng(0).standard_normal((40, 4)).astype(np.float32))
    status = cli.main(
        [str(tmp_path / "v.npy"), "--target-recall", target, "--out", str(tmp_path / "r")], progress=False
    )
    assert status == exits.BAD_INPUT and "--target-recall" in capsys.readouterr().err
