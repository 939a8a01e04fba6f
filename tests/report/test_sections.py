"""The report's sections: one home each (measure and view), shown without IPython, in the
order and under the titles of the book's report chapter; tables as a page shows them
(readable headers, shares in percent)."""

from __future__ import annotations

import ast
import re

import numpy as np
import pandas as pd
import pytest

from embdiag.report import sections
from embdiag.report.sections.presentation import code_options, for_reading


def test_shares_become_percent_and_headers_become_words():
    frame = pd.DataFrame(
        {
            "representation": ["reference"],
            "eligible_classes": [7],
            "probe_ba": [0.7287],
            "ba_floor": [0.25],
            "p@10": [0.8307],
            "p_floor": [0.332],
            "rankme": [37.24],
            "weather BA": [0.5],
            "overlap@10": [0.9],
        }
    )
    shown = for_reading(frame)
    assert list(shown.columns) == [
        "representation",
        "eligible classes",
        "probe BA (%)",
        "BA floor (%)",
        "P@10 (%)",
        "P@k floor (%)",
        "RankMe",
        "weather BA (%)",
        "overlap@10 (%)",
    ]
    assert shown["probe BA (%)"].iloc[0] == pytest.approx(72.87)
    assert shown["overlap@10 (%)"].iloc[0] == pytest.approx(90.0)
    assert shown["RankMe"].iloc[0] == 37.24 and shown["eligible classes"].iloc[0] == 7  # not shares
    assert frame["probe_ba"].iloc[0] == 0.7287  # the report's own table is left as it is


@pytest.fixture(scope="module")
def indexed():
    """Two reports of the same vectors with two indexes (one a factory string): their timings differ."""
    pytest.importorskip("faiss")
    import numpy as np

    from embdiag.report import measure

    X = np.random.default_rng(0).standard_normal((1500, 16)).astype(np.float32)
    return [measure(X, index="hnsw;faiss:IVF16,Flat", k=5, progress=False) for _ in range(2)]


def test_index_section_without_timings_is_the_same_every_run(indexed):
    """What a byte-for-byte page shows: recall against the knob's value, no speed anywhere."""
    a, b = (
        [x._repr_html_() if hasattr(x, "_repr_html_") else x.data for x in sections.indexes.exhibits(r)]
        for r in indexed
    )
    assert a == b
    page = "\n".join(a)
    assert "knob value (log" in page and "queries per second (log)" not in page and "build (s)" not in page
    curves = indexed[0].tables["index_curves"]
    assert set(curves["condition"]) == {"hnsw", "ivf16-flat"}
    assert curves.loc[(curves["condition"] == "ivf16-flat") & (curves["value"] == 16), "recall@5"].item() == 1.0


def test_index_section_with_timings_plots_recall_against_queries_per_second(indexed):
    parts = sections.indexes.exhibits(indexed[0], timings=True)
    page = "\n".join(x._repr_html_() if hasattr(x, "_repr_html_") else x.data for x in parts)
    assert "queries per second (log)" in page and "build (s)" in page
    curves = sections.indexes.curve_table(indexed[0], timings=True)
    assert (curves["queries_per_s"] > 0).all() and len(curves) == len(indexed[0].tables["index_curves"])


def test_the_chapter_shows_each_section_under_its_title_in_page_order():
    """The book's report chapter: one markdown cell ``## TITLE`` per section of PAGE, in order,
    each followed by one call showing that section."""
    from embdiag.report.cli import CHAPTER

    chapter = CHAPTER.read_text()
    assert re.findall(r"^# ## (.+)$", chapter, re.M) == [s.TITLE for s in sections.PAGE]
    shown = re.findall(r'^display\(\*sections\.show\(report, "(\w+)"', chapter, re.M)
    assert shown == [s.NAME for s in sections.PAGE]


def test_every_section_has_its_page_parts_and_a_unique_name():
    names = [s.NAME for s in sections.PAGE]
    assert len(set(names)) == len(names) == 12
    for s in sections.PAGE:
        assert s.TITLE and isinstance(s.INTRO, str) and isinstance(s.MISSING, str) and callable(s.exhibits), s.NAME
        assert s.__doc__, s.NAME


@pytest.fixture(scope="module")
def full():
    """A report with every section measured: labels, pairs, a compression, an index, stress, a rule."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 700)
    X = (2 * rng.standard_normal((3, 16))[y] + rng.standard_normal((700, 16))).astype(np.float32)
    labels = pd.DataFrame({"cls": [f"c{v}" for v in y]})
    pairs = [np.array([(i + 1) % 700]) for i in range(700)]
    from embdiag.report import measure

    return measure(
        X,
        labels=labels,
        pairs=pairs,
        compress="fp16,pca8",
        index="hnsw",
        k=5,
        stress=True,
        quick=True,
        fail_if=["overlap@5<0.9"],
        progress=False,
    )


def _shown(x) -> bool:
    return any(hasattr(x, m) for m in ("_repr_html_", "_repr_markdown_", "_repr_mimebundle_"))


def test_every_display_object_renders_without_ipython(full):
    """Each object of the page (head, intro, exhibits) shows itself: no IPython display class."""
    objects = sections.head(full, "test") + [x for s in sections.PAGE for x in sections.show(full, s.NAME)]
    assert len(objects) > 20 and all(_shown(x) for x in objects)
    assert not [type(x) for x in objects if type(x).__module__.startswith("IPython")]
    assert all(s.NAME in full.tables for s in sections.PAGE)  # every section measured


def test_show_opens_a_section_with_its_intro_and_refuses_an_unknown_name(full):
    parts = sections.show(full, "geometry")
    assert parts[0]._repr_markdown_() == sections.geometry.INTRO
    assert [x._repr_html_() for x in parts[2:]] == [x._repr_html_() for x in sections.geometry.exhibits(full)[1:]]
    (scope,) = sections.show(full, "indexes")[:1]  # no intro: the folded scope comes first
    assert (scope.title, scope.text) == ("Scope", code_options(full.scope["indexes"]))
    assert scope._repr_html_().startswith('<details class="embdiag-more"><summary>Scope</summary>')
    with pytest.raises(ValueError, match="unknown section 'geometri'"):
        sections.show(full, "geometri")


def test_a_section_not_measured_says_why_with_its_options_as_code():
    from embdiag.report import measure

    X = np.random.default_rng(0).standard_normal((60, 8)).astype(np.float32)
    rep = measure(X, k=5, progress=False)
    (why,) = sections.labels.exhibits(rep)
    assert why._repr_markdown_() == "*Not measured:* no `--labels` file was given."


def test_neither_the_sections_nor_the_view_import_ipython():
    """The command's light install has no IPython."""
    import embdiag

    root = __import__("pathlib").Path(embdiag.__file__).parent
    for path in [*(root / "report" / "sections").glob("*.py"), *(root / "view").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(n.startswith("IPython") for n in names), path
