"""The chapter pipeline: pairs in sync, executed chapters complete, failures contained."""

from __future__ import annotations

import logging

import jupytext
import nbformat
import pytest
import yaml

from embdiag import floatpath
from embdiag.paper import pipeline
from embdiag.paper.cli import _parameters

NAMES = pipeline.chapter_names()
VARIANTS = pipeline.variants()


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
    assert "20_rank_diagnostics" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_pair_in_sync(name):
    assert pipeline.stale_reason(name) is None


@pytest.mark.parametrize("name", NAMES)
def test_chapter_has_parameters_cell(name):
    nb = jupytext.read(pipeline.DEFAULT.notebooks / f"{name}.py")
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", ())]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"


@pytest.mark.parametrize("name", NAMES)
def test_executed_chapter_is_complete_and_current(name):
    path = pipeline.DEFAULT.chapters / f"{name}.ipynb"
    assert path.exists(), f"{name} was never executed (run: embdiag chapter {name})"
    executed = nbformat.read(path, as_version=4)
    chapter = name
    source = nbformat.read(pipeline.DEFAULT.notebooks / f"{chapter}.ipynb", as_version=4)
    diff = pipeline.difference(source, executed, "source", "executed chapter")
    assert diff is None, f"{name}: the executed chapter is out of date: {diff}"
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "a code cell was not executed"
    assert any(c.outputs for c in code), "the chapter has no outputs"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, f"the chapter recorded an exception: {errors[0].ename}: {errors[0].evalue}"
    hidden = [{"hide-input", "remove-input"} & set(c.metadata.get("tags", ())) for c in code]
    assert all(hidden), "code must be hidden in the book"
    answer = pipeline._result_cell(executed)
    before = [c for c in executed.cells[: answer + 1] if c.cell_type == "code"]
    assert all("remove-input" in c.metadata.get("tags", ()) for c in before), "a code toggle precedes the result"


def test_toc_lists_every_executed_chapter_and_nothing_missing():
    toc = yaml.safe_load((pipeline.REPO / "_toc.yml").read_text())
    files = [toc["root"], *_toc_files(toc)]
    for f in files:
        assert any((pipeline.DEFAULT.book / f).with_suffix(s).exists() for s in (".md", ".ipynb")), f
    for name in NAMES:
        assert f"chapters/{name}" in files, f"{name} is not in _toc.yml"
    assert (pipeline.DEFAULT.book / "_toc.yml").resolve() == (pipeline.REPO / "_toc.yml").resolve()
    assert (pipeline.DEFAULT.book / "_config.yml").resolve() == (pipeline.REPO / "_config.yml").resolve()


def test_chapters_are_numbered_in_reading_order_within_each_part():
    """Page names keep their numbers when a page moves (links outside the site point at them), so
    numbers rise within each part of _toc.yml, and every chapter is listed once."""
    toc = yaml.safe_load((pipeline.REPO / "_toc.yml").read_text())
    parts = [[toc["root"]]] + [[c["file"] for c in part["chapters"]] for part in toc["parts"]]
    for files in parts:
        numbers = [int(f.removeprefix("chapters/")[:2]) for f in files if f.startswith("chapters/")]
        assert numbers == sorted(numbers), f"_toc.yml reads {files}: numbers must rise within a part"
    listed = [f.removeprefix("chapters/") for files in parts for f in files if f.startswith("chapters/")]
    assert sorted(listed) == sorted(NAMES)


def test_cli_parameters_are_read_as_yaml():
    assert _parameters([("k", "20"), ("path", "a/b.npy"), ("flag", "true"), ("x", "0.5")]) == {
        "k": 20,
        "path": "a/b.npy",
        "flag": True,
        "x": 0.5,
    }


CHAPTER = """# %% tags=["parameters"]
value = 1
fail = False

# %%
if fail:
    raise RuntimeError("boom")
print(value * 2)
"""


@pytest.fixture
def layout(tmp_path) -> pipeline.Layout:
    lay = pipeline.Layout(notebooks=tmp_path / "notebooks", book=tmp_path / "book")
    lay.notebooks.mkdir()
    (lay.notebooks / "01_demo.py").write_text(
        jupytext.writes(jupytext.reads(CHAPTER, fmt="py:percent"), fmt="py:percent")
    )
    return lay


def test_stale_pair_is_detected(layout):
    assert "missing" in pipeline.stale_reason("demo", layout)
    pipeline.sync("demo", layout)
    assert pipeline.stale_reason("demo", layout) is None
    py = layout.notebooks / "01_demo.py"
    py.write_text(py.read_text().replace("value * 2", "value * 3"))
    assert "cell 1 differs" in pipeline.stale_reason("demo", layout)
    with pytest.raises(pipeline.ChapterError, match="stale"):
        pipeline.execute("demo", layout=layout)


def test_unknown_chapter_is_named(layout):
    with pytest.raises(pipeline.ChapterError, match="unknown chapter 'nope'.*01_demo"):
        pipeline.stale_reason("nope", layout)


@pytest.mark.slow
def test_execute_with_parameters_and_failure_leaves_previous_output(layout):
    pipeline.sync("demo", layout)
    out = pipeline.execute("demo", {"value": 21}, layout)
    nb = nbformat.read(out, as_version=4)
    assert nb.cells[-1].outputs[0].text.strip() == "42"
    assert "papermill" not in nb.metadata
    assert nb.metadata["embdiag"]["float_path"] == pipeline.float_path(out) == floatpath.current()
    before = out.read_bytes()
    with pytest.raises(pipeline.ChapterError, match="RuntimeError: boom"):
        pipeline.execute("demo", {"fail": True}, layout)
    assert out.read_bytes() == before
    assert sorted(p.name for p in layout.chapters.iterdir()) == ["01_demo.ipynb"], "no temporary file left"


@pytest.mark.slow
def test_an_annotated_parameter_is_passed_without_papermills_warning(tmp_path, caplog):
    lay = pipeline.Layout(notebooks=tmp_path / "notebooks", book=tmp_path / "book")
    lay.notebooks.mkdir()
    text = '# %% tags=["parameters"]\ndims: list | None = None\n\n# %%\nprint(dims)\n'
    (lay.notebooks / "01_annotated.py").write_text(text)
    pipeline.sync("annotated", lay)
    with caplog.at_level("WARNING", logger="papermill"):
        out = pipeline.execute("annotated", {"dims": [4, 2]}, lay)
    assert nbformat.read(out, as_version=4).cells[-1].outputs[0].text.strip() == "[4, 2]"
    assert not [r for r in caplog.records if "unknown parameter" in r.getMessage()]
    assert not logging.getLogger("papermill").filters, "the filter is removed after the run"


def test_declared_variants_name_chapters_and_their_parameters():
    for out, spec in VARIANTS.items():
        assert spec["chapter"] in NAMES, out
        assert pipeline.check_parameters(spec["chapter"], spec["parameters"]) is not None


@pytest.mark.slow
def test_a_chapter_executes_under_another_name_outside_the_book(layout, tmp_path):
    pipeline.sync("demo", layout)
    out = pipeline.execute("demo", {"value": 50}, layout, out_dir=tmp_path / "mine", output="demo_big")
    assert out == tmp_path / "mine" / "demo_big.ipynb"
    assert nbformat.read(out, as_version=4).cells[-1].outputs[0].text.strip() == "100"
    assert not layout.chapters.exists(), "the book holds no variant"


@pytest.mark.parametrize(
    "text, message",
    [
        ("x: {parameters: {value: 2}}\n", "needs 'chapter'"),
        ("x: {chapter: 01_demo, params: {}}\n", "needs 'chapter'"),
        ("01_demo: {chapter: 01_demo}\n", "has the name of a chapter source"),
    ],
)
def test_malformed_variants_are_refused(layout, text, message):
    (layout.notebooks / "variants.yml").write_text(text)
    with pytest.raises(pipeline.ChapterError, match=message):
        pipeline.variants(layout)


def test_parameters_are_read_from_the_parameters_cell(layout):
    assert pipeline.parameters("demo", layout) == {"value": 1, "fail": False}


@pytest.mark.parametrize(
    "values, message",
    [
        ({"valeu": 2}, r"no parameter 'valeu'; its parameters are: value = 1; fail = False"),
        ({"value": "abc"}, r"parameter 'value' expects int \(default 1\), got str 'abc'"),
        ({"value": 2.5}, r"parameter 'value' expects int"),
        ({"fail": 1}, r"parameter 'fail' expects bool"),
    ],
)
def test_bad_parameters_are_refused_before_anything_runs(layout, values, message):
    pipeline.sync("demo", layout)
    with pytest.raises(pipeline.ChapterError, match=message):
        pipeline.execute("demo", values, layout)
    assert not layout.chapters.exists(), "nothing was executed"


def test_parameter_types_that_fit():
    assert pipeline._fits(3, (float,)) and pipeline._fits("x.npy", (str, type(None))) and pipeline._fits((2,), (list,))
    assert not pipeline._fits(True, (int,)) and not pipeline._fits(1, (bool,)) and not pipeline._fits("1", (int,))
    assert pipeline._fits(None, (int, type(None))) and not pipeline._fits(5, (str, type(None)))


TYPED = """# %% tags=["parameters"]
k = 10
example: int | None = None
vectors_path = None
names: list | None = None
"""


def _typed(tmp_path, source=TYPED) -> pipeline.Layout:
    lay = pipeline.Layout(notebooks=tmp_path / "notebooks", book=tmp_path / "book")
    lay.notebooks.mkdir(parents=True)
    (lay.notebooks / "01_demo.py").write_text(source)
    return lay


def test_parameter_types_come_from_annotations_defaults_and_path_names(tmp_path):
    lay = _typed(tmp_path)
    assert pipeline.parameters("demo", lay) == {"k": 10, "example": None, "vectors_path": None, "names": None}
    assert pipeline.parameter_types("demo", lay) == {
        "k": (int,),
        "example": (int, type(None)),
        "vectors_path": (str, type(None)),
        "names": (list, type(None)),
    }
    assert pipeline.check_parameters("demo", {"example": 3, "names": ["a"]}, lay) == {"example": 3, "names": ["a"]}


@pytest.mark.parametrize(
    "values, message",
    [
        ({"vectors_path": 5}, r"'vectors_path' expects str \| None \(default None\), got int 5"),
        ({"example": "3"}, r"'example' expects int \| None \(default None\), got str '3'"),
        ({"names": "a"}, r"'names' expects list \| None"),
    ],
)
def test_every_parameter_is_type_checked_paths_included(tmp_path, values, message):
    with pytest.raises(pipeline.ChapterInputError, match=message):
        pipeline.check_parameters("demo", values, _typed(tmp_path))


@pytest.mark.parametrize("key", ["seed", "offset_seed"])
def test_a_negative_seed_is_refused_naming_it(tmp_path, key):
    lay = _typed(tmp_path, f'# %% tags=["parameters"]\n{key} = 0\n')
    assert pipeline.check_parameters("demo", {key: 3}, lay) == {key: 3}
    with pytest.raises(pipeline.ChapterInputError) as refused:
        pipeline.check_parameters("demo", {key: -1}, lay)
    assert (
        str(refused.value) == f"chapter 01_demo: parameter '{key}' (-p {key}): expected a non-negative integer, got -1"
    )


def test_every_chapter_seed_is_checked_before_the_kernel_starts():
    seeds = [(name, key) for name in NAMES for key in pipeline.parameters(name) if pipeline._is_seed(key)]
    assert ("20_rank_diagnostics", "seed") in seeds and ("07_neighbour_stability", "offset_seed") in seeds
    for name, key in seeds:
        with pytest.raises(pipeline.ChapterInputError, match=rf"parameter '{key}' \(-p {key}\): expected a non-neg"):
            pipeline.check_parameters(name, {key: -1})


def test_a_none_default_needs_a_declared_type(tmp_path):
    lay = _typed(tmp_path, '# %% tags=["parameters"]\nexample = None\n')
    with pytest.raises(pipeline.ChapterError, match="'example' defaults to None; annotate its type"):
        pipeline.parameter_types("demo", lay)
    lay = _typed(tmp_path / "b", '# %% tags=["parameters"]\nexample: "int" = None\n')
    with pytest.raises(pipeline.ChapterError, match="not builtin types"):
        pipeline.parameter_types("demo", lay)


@pytest.mark.parametrize("name", NAMES)
def test_every_chapter_parameter_has_a_known_type(name):
    types = pipeline.parameter_types(name)
    assert set(types) == set(pipeline.parameters(name))


def test_relative_paths_resolve_against_the_working_directory(tmp_path):
    chapter = tmp_path / "ch"
    lay = pipeline.Layout(notebooks=chapter / "notebooks", book=chapter / "book")
    lay.notebooks.mkdir(parents=True)
    (lay.notebooks / "01_demo.py").write_text('# %% tags=["parameters"]\nvectors_path = None\n')
    (tmp_path / "v.npy").write_bytes(b"")
    assert pipeline.check_parameters("demo", {"vectors_path": "v.npy"}, lay, cwd=tmp_path) == {
        "vectors_path": str((tmp_path / "v.npy").resolve())
    }
    with pytest.raises(pipeline.ChapterInputError, match="'vectors_path': no such file: "):
        pipeline.check_parameters("demo", {"vectors_path": "w.npy"}, lay, cwd=tmp_path)
    with pytest.raises(pipeline.ChapterInputError, match="'vectors_path': not a file: "):
        pipeline.check_parameters("demo", {"vectors_path": "."}, lay, cwd=tmp_path)


STYLED = """# %% tags=["parameters"]
value = 1

# %%
import pandas as pd
pd.DataFrame({"a": [value, 2]}).style.format("{:.1f}")
"""


@pytest.mark.slow
def test_unchanged_chapter_re_executes_byte_for_byte(tmp_path):
    lay = pipeline.Layout(notebooks=tmp_path / "notebooks", book=tmp_path / "book")
    lay.notebooks.mkdir()
    (lay.notebooks / "01_styled.py").write_text(STYLED)
    pipeline.sync("styled", lay)
    first = pipeline.execute("styled", layout=lay).read_bytes()
    assert pipeline.execute("styled", layout=lay).read_bytes() == first
    nb = nbformat.reads(first.decode(), as_version=4)
    assert [c.id for c in nb.cells] == ["cell-0", "cell-1"]
    out = nb.cells[-1].outputs[0]["data"]
    assert "0x" not in out["text/plain"] and "T_" in out["text/html"]


def test_parameter_table_is_every_chapters_parameters_cell():
    import ast

    table = pipeline.parameter_table()
    for name in NAMES:
        rows = table[table["chapter"] == name]
        declared = pipeline.parameters(name)
        assert rows["parameter"].tolist() == list(declared)
        assert [ast.literal_eval(v) for v in rows["default"]] == list(declared.values())
    cover = table[(table["chapter"] == "00_cover") & (table["parameter"] == "profile")].iloc[0]
    assert cover["default"] == '"cpu-steps6400"' and cover["meaning"].startswith("training records folder")


def test_book_stylesheets_are_well_formed():
    """Every rule block of the book's own CSS closes (an unclosed block once swallowed every rule
    after it, silently), and comments close."""
    import re

    for css in sorted((pipeline.DEFAULT.book / "_static").glob("*.css")):
        text = css.read_text()
        assert text.count("/*") == text.count("*/"), f"{css.name}: unclosed comment"
        depth = 0
        for n, ch in enumerate(re.sub(r"/\*.*?\*/", "", text, flags=re.S)):
            depth += {"{": 1, "}": -1}.get(ch, 0)
            assert 0 <= depth <= 2, f"{css.name}: unbalanced braces near character {n}"
        assert depth == 0, f"{css.name}: {depth} block(s) left open"


def test_root_redirect_gets_a_head_with_the_icon(tmp_path):
    from embdiag.paper.pipeline import _complete_redirect

    index = tmp_path / "index.html"
    index.write_text('<meta http-equiv="Refresh" content="0; url=chapters/00_cover.html" />\n')
    _complete_redirect(index)
    text = index.read_text()
    assert '<meta http-equiv="Refresh" content="0; url=chapters/00_cover.html" />' in text
    assert '<link rel="icon" href="_static/favicon.svg"' in text and '<a href="chapters/00_cover.html">' in text
    _complete_redirect(index)  # a page that is not the bare redirect is left alone
    assert index.read_text() == text


def test_the_committed_chapters_were_executed_on_one_float_path():
    """The book is one run: every executed chapter records the same float path, the pinned one
    (a page re-executed on another path, e.g. with EMBDIAG_FLOAT_PATH=native, must not be committed)."""
    assert pipeline.committed_float_paths() == {floatpath.LEVEL}
    assert set(pipeline.executed()) == {p.stem for p in pipeline.DEFAULT.chapters.glob("*.ipynb")}


def test_the_build_skips_what_a_killed_chapter_leaves():
    """A chapter killed mid-run leaves a hidden workspace beside its output (embdiag._atomic): the
    book build must not read it as a page (it did: 'document isn't included in any toctree', exit 1)."""
    from sphinx.util.matching import Matcher

    from embdiag import _atomic

    config = yaml.safe_load((pipeline.REPO / "_config.yml").read_text())
    skipped = Matcher(config["exclude_patterns"])
    leftovers = [
        ".chapters.tmp-5qsusqbk/21_report.ipynb",
        "chapters/" + _atomic.TEMPORARY.format(name="21_report.ipynb") + "ab12",
        "chapters/.ipynb_checkpoints/21_report-checkpoint.ipynb",
    ]
    assert all(skipped(path) for path in leftovers)
    assert not any(skipped(f"chapters/{name}.ipynb") for name in ("00_cover", "21_report", "24_reproduce"))
