"""The ``embdiag chapter`` command (embdiag/paper/cli.py): where pages go, and exit codes."""

from __future__ import annotations

import jupytext
import nbformat
import numpy as np
import pandas as pd
import pytest

from embdiag.paper import pipeline
from embdiag.paper.cli import main

BOOK = pipeline.DEFAULT.chapters


def _book_state() -> dict:
    return {p.name: p.stat().st_mtime_ns for p in BOOK.glob("*.ipynb")}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["chapter", "stress_tests", "-p", "k", "20"], "parameters other than the book's (k) make a page of your own"),
        (["chapter", "stress_tests", "-p", "kk", "20"], "has no parameter 'kk'"),
        (["chapter", "stress_tests", "-p", "vectors_path", "5", "--out", "x"], "'vectors_path' expects str | None"),
        (["chapter", "no_such_chapter"], "unknown chapter 'no_such_chapter'"),
        (["chapter", "11_stress_tests_wordnet"], "variant 11_stress_tests_wordnet is not a page of the book"),
    ],
)
def test_bad_input_exits_2_and_leaves_the_book_alone(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = _book_state()
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert _book_state() == before and not (tmp_path / "x").exists()


DEMO = """# %% tags=["parameters"]
error = None

# %%
if error:
    raise {error}("refused")
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "error, kind, message",
    [
        ("ValueError", pipeline.ChapterInputError, "chapter 01_demo refused its input (cell 3): refused"),
        ("RuntimeError", None, "chapter 01_demo failed in cell 3: RuntimeError: refused"),
    ],
)
def test_a_cell_refusing_its_input_is_an_input_error(tmp_path, error, kind, message):
    lay = pipeline.Layout(notebooks=tmp_path / "notebooks", book=tmp_path / "book")
    lay.notebooks.mkdir()
    text = DEMO.replace("{error}", error).replace("error = None", "error: str | None = None")
    (lay.notebooks / "01_demo.py").write_text(jupytext.writes(jupytext.reads(text, fmt="py:percent"), fmt="py:percent"))
    pipeline.sync("demo", lay)
    with pytest.raises(pipeline.ChapterError) as caught:
        pipeline.execute("demo", {"error": "yes"}, lay, out_dir=tmp_path / "out")
    assert str(caught.value) == message
    assert isinstance(caught.value, pipeline.ChapterInputError) == (kind is not None)
    assert list((tmp_path / "out").iterdir()) == [], "nothing half-written"


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    """A user's 384-d vectors with labels the study never had (digit, parity; three digits missing)
    and a split column."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X, y = X[:700], y[:700]
    rng = np.random.default_rng(0)
    Z = np.tanh(X @ rng.normal(size=(64, 384)) / 32).astype(np.float32)
    folder = tmp_path_factory.mktemp("digits")
    np.save(folder / "mlp.npy", Z)
    split = np.where(rng.random(len(y)) < 0.7, "train", "test")
    digit = y.astype(str).astype(object)
    digit[[3, 50, 400]] = None
    pd.DataFrame({"digit": digit, "parity": np.where(y % 2, "odd", "even"), "split": split}).to_csv(
        folder / "labels.csv", index=False
    )
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("chapter", ["compression", "stress_tests", "neighbour_stability"])
def test_a_chapter_on_a_users_files_writes_its_page_under_out(chapter, digits, monkeypatch, capsys):
    monkeypatch.chdir(digits)
    before = _book_state()
    out = digits / f"pages-{chapter}"
    assert (
        main(
            ["chapter", chapter, "-p", "vectors_path", "mlp.npy", "-p", "labels_path", "labels.csv", "--out", str(out)]
        )
        == 0
    ), capsys.readouterr().err
    assert _book_state() == before, "the committed book is untouched"
    (notebook,) = out.glob("*.ipynb")
    page = notebook.with_suffix(".html")
    nb = nbformat.read(notebook, as_version=4)
    text = "".join(
        o.get("text", "") + str(o.get("data", {}).get("text/markdown", ""))
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert "384-d" in text and "digit" in text
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "the user's vectors mlp.npy (384-d" in html
    assert "digit missing on 3 rows, left out for digit" in html


def test_an_out_folder_that_cannot_be_made_is_bad_input(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    with pytest.raises(pipeline.ChapterInputError, match="cannot make the output folder"):
        pipeline.execute("rank_diagnostics", {"n": 50}, out_dir=tmp_path / "file" / "out")


@pytest.mark.slow
def test_the_rank_note_reads_a_users_file_with_the_shared_reader(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "flat.npy", np.arange(10.0))
    assert main(["chapter", "rank_diagnostics", "-p", "vectors_path", "flat.npy", "--out", "pages"]) == 2
    assert "vectors_path" in capsys.readouterr().err and not list((tmp_path / "pages").glob("*"))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "--profile", "cpu", "--steps", "-5"], "embdiag train: steps: expected a positive integer, got -5"),
        (["vectors", "--encoder", "nope", "--out", "v"], "embdiag vectors: name: unknown encoder 'nope'"),
    ],
)
def test_train_and_vectors_exit_2_on_bad_input_without_a_traceback(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
