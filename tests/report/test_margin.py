"""The report's verdict is non-inferiority against a declared margin (``--margin``): recorded in
report.json, refused by name when it is not a margin, and an attribute whose reference P@k sits
on its chance floor decides no verdict."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from embdiag import exits
from embdiag.data.files import InputError
from embdiag.report import cli, measure
from embdiag.report.measurement import check_margin

N, D, K = 240, 8, 5


def _vectors_and_labels():
    rng = np.random.default_rng(0)
    cluster = rng.integers(0, 3, N)
    X = (3 * rng.standard_normal((3, D))[cluster] + rng.standard_normal((N, D))).astype(np.float32)
    labels = pd.DataFrame({"cluster": cluster.astype(str), "noise": rng.integers(0, 3, N).astype(str)})
    return X, labels


def test_an_attribute_on_its_chance_floor_is_uninformative_and_the_margin_is_recorded():
    X, labels = _vectors_and_labels()
    report = measure(X, labels=labels, compress="pca2", k=K, margin=0.5, progress=False)
    assert report.inputs["margin_pp"] == 0.5
    rel = report.tables["relevance"].set_index("attribute")["informative"]
    assert bool(rel["cluster"]) and not bool(rel["noise"])  # labels the vectors hold, and labels drawn at random
    (entry,) = report.summary
    noise = [r for r in entry["relevance"] if r["attribute"] == "noise"]
    assert noise and not noise[0]["informative"] and "uninformative" in report.tables["summary"].iloc[0, 4]


@pytest.mark.parametrize("margin", [0, -1, 100, float("nan"), float("inf"), "a", True])
def test_a_margin_that_is_not_one_is_refused_naming_it(margin):
    with pytest.raises(InputError, match=r"^--margin "):
        check_margin(margin)


@pytest.mark.parametrize("margin", ["0", "-1", "nan", "x"])
def test_the_command_refuses_a_bad_margin_before_the_kernel(tmp_path, monkeypatch, capsys, margin):
    def must_not_run(*args, **kwargs):
        raise AssertionError("the chapter ran")

    monkeypatch.setattr(cli, "write_report", must_not_run)
    np.save(tmp_path / "v.npy", _vectors_and_labels()[0])
    status = cli.main([str(tmp_path / "v.npy"), "--margin", margin, "--out", str(tmp_path / "r")], progress=False)
    assert status == exits.BAD_INPUT and "--margin" in capsys.readouterr().err
