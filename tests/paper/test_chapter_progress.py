"""A chapter's progress reaches the terminal while it runs, and never its page's provenance."""

from __future__ import annotations

import json

import jupytext
import nbformat
import pytest

from embdiag.paper import pipeline

CHAPTER = """# %% tags=["parameters"]
value = 1
progress = False

# %%
import os
import sys

if progress:
    print(f"demo: step {value} done", file=sys.stderr, flush=True)
print(os.environ["EMBDIAG_CHAPTER_PARAMETERS"])
"""


@pytest.fixture
def layout(tmp_path) -> pipeline.Layout:
    lay = pipeline.Layout(notebooks=tmp_path / "notebooks", book=tmp_path / "book")
    lay.notebooks.mkdir()
    (lay.notebooks / "01_demo.py").write_text(
        jupytext.writes(jupytext.reads(CHAPTER, fmt="py:percent"), fmt="py:percent")
    )
    pipeline.sync("demo", lay)
    return lay


def _printed(path) -> dict:
    nb = nbformat.read(path, as_version=4)
    return json.loads(next(o.text for o in nb.cells[-1].outputs if o.get("name") == "stdout"))


@pytest.mark.slow
def test_progress_is_streamed_to_stderr_only_when_asked(layout, tmp_path, capsys):
    quiet = pipeline.execute("demo", {"value": 2}, layout, out_dir=tmp_path / "quiet")
    assert "demo: step" not in capsys.readouterr().err
    assert _printed(quiet) == {"value": 2}
    loud = pipeline.execute("demo", {"value": 2, "progress": True}, layout, out_dir=tmp_path / "loud")
    assert "demo: step 2 done\n" in capsys.readouterr().err
    assert _printed(loud) == {"value": 2}, "the page's provenance does not name how it reported"


@pytest.mark.slow
def test_a_chapter_on_a_users_vectors_reports_progress_and_states_its_sample(tmp_path, monkeypatch, capsys):
    import numpy as np
    import pandas as pd

    from embdiag.paper.cli import main

    rng = np.random.default_rng(0)
    y = np.tile(["a", "b", "c"], 100)
    Z = rng.normal(size=(300, 16))
    Z[:, :3] += 3 * (y[:, None] == np.array(["a", "b", "c"]))  # each kind shifted along its own axis
    np.save(tmp_path / "z.npy", Z.astype(np.float32))
    pd.DataFrame({"kind": y, "split": np.where(rng.random(300) < 0.6, "train", "val")}).to_csv(
        tmp_path / "labels.csv", index=False
    )
    monkeypatch.chdir(tmp_path)
    argv = ["chapter", "stress_tests", "-p", "vectors_path", "z.npy", "-p", "labels_path", "labels.csv"]
    assert main([*argv, "-p", "max_rows", "100", "-p", "severities", "[0.5]", "--out", "page"]) == 0
    err = capsys.readouterr().err
    assert "stress tests: 4 interventions x 2 severities; Measured on 100 of " in err
    assert "stress tests: 9/9 noise s=0.5 (" in err, "the chapter's progress reached our stderr"
    html = (tmp_path / "page" / "05_stress_tests.html").read_text()
    assert "Measured on 100 of " in html and "drawn uniformly without replacement with seed 0" in html
    assert "progress=" not in html and "max_rows=100" in html, "the provenance names what was measured"
