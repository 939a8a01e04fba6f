"""The chapter pipeline: pairs in sync, executed chapters complete, failures contained."""

from __future__ import annotations

import shutil
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

from embdiag import paper
from embdiag.cli import _parameters

NAMES = paper.chapter_names()


def _toc_files(node) -> list[str]:
    out = []
    if isinstance(node, dict):
        if "file" in node:
            out.append(node["file"])
        for v in node.values():
            out += _toc_files(v)
    elif isinstance(node, list):
        for v in node:
            out += _toc_files(v)
    return out


def test_there_are_chapters():
    assert "01_rank_diagnostics" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_pair_in_sync(name):
    assert paper.stale_reason(name) is None


@pytest.mark.parametrize("name", NAMES)
def test_chapter_has_parameters_cell(name):
    nb = jupytext.read(paper.DEFAULT.notebooks / f"{name}.py")
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", ())]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"


@pytest.mark.parametrize("name", NAMES)
def test_executed_chapter_is_complete_and_current(name):
    path = paper.DEFAULT.chapters / f"{name}.ipynb"
    assert path.exists(), f"{name} was never executed (run: embdiag chapter {name})"
    executed = nbformat.read(path, as_version=4)
    source = nbformat.read(paper.DEFAULT.notebooks / f"{name}.ipynb", as_version=4)
    diff = paper.difference(source, executed, "source", "executed chapter")
    assert diff is None, f"{name}: the executed chapter is out of date: {diff}"
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "a code cell was not executed"
    assert any(c.outputs for c in code), "the chapter has no outputs"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, f"the chapter recorded an exception: {errors[0].ename}: {errors[0].evalue}"
    assert all("hide-input" in c.metadata.get("tags", ()) for c in code), "code must be hidden in the book"


def test_toc_lists_every_executed_chapter_and_nothing_missing():
    toc = yaml.safe_load((paper.REPO / "_toc.yml").read_text())
    files = _toc_files(toc)
    for f in files:
        assert any((paper.DEFAULT.book / f).with_suffix(s).exists() for s in (".md", ".ipynb")), f
    for name in NAMES:
        assert f"chapters/{name}" in files, f"{name} is not in _toc.yml"
    assert (paper.DEFAULT.book / "_toc.yml").resolve() == (paper.REPO / "_toc.yml").resolve()
    assert (paper.DEFAULT.book / "_config.yml").resolve() == (paper.REPO / "_config.yml").resolve()


def test_cli_parameters_are_read_as_yaml():
    assert _parameters([("k", "20"), ("path", "a/b.npy"), ("flag", "true"), ("x", "0.5")]) == {
        "k": 20, "path": "a/b.npy", "flag": True, "x": 0.5}


CHAPTER = """# %% tags=["parameters"]
value = 1
fail = False

# %%
if fail:
    raise RuntimeError("boom")
print(value * 2)
"""


@pytest.fixture
def layout(tmp_path) -> paper.Layout:
    lay = paper.Layout(notebooks=tmp_path / "notebooks", book=tmp_path / "book")
    lay.notebooks.mkdir()
    (lay.notebooks / "01_demo.py").write_text(jupytext.writes(jupytext.reads(CHAPTER, fmt="py:percent"), fmt="py:percent"))
    return lay


def test_stale_pair_is_detected(layout):
    assert "missing" in paper.stale_reason("demo", layout)
    paper.sync("demo", layout)
    assert paper.stale_reason("demo", layout) is None
    py = layout.notebooks / "01_demo.py"
    py.write_text(py.read_text().replace("value * 2", "value * 3"))
    assert "cell 1 differs" in paper.stale_reason("demo", layout)
    with pytest.raises(paper.ChapterError, match="stale"):
        paper.execute("demo", layout=layout)


def test_unknown_chapter_is_named(layout):
    with pytest.raises(paper.ChapterError, match="unknown chapter 'nope'.*01_demo"):
        paper.stale_reason("nope", layout)


@pytest.mark.slow
def test_execute_with_parameters_and_failure_leaves_previous_output(layout):
    paper.sync("demo", layout)
    out = paper.execute("demo", {"value": 21}, layout)
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[-1].outputs[0].text.strip() == "42"
    assert "papermill" not in nb.metadata
    before = out.read_bytes()
    with pytest.raises(paper.ChapterError, match="RuntimeError: boom"):
        paper.execute("demo", {"fail": True}, layout)
    assert out.read_bytes() == before
    assert sorted(p.name for p in layout.chapters.iterdir()) == ["01_demo.ipynb"], "no temporary file left"
