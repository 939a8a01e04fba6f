"""Exhibits: extremes against a brute-force reference, CSV links that decode to the data, chart
data extraction, provenance inside and outside the chapter pipeline, determinism."""

from __future__ import annotations

import configparser
import hashlib
import io
import json
import math
import numbers
import os
import re
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import altair as alt
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embdiag import artifacts
from embdiag.paper import pipeline, sphinxext
from embdiag.view import exhibits

SANITIZE = Path(__file__).parents[1] / "nbval_sanitize.cfg"


@pytest.fixture(autouse=True)
def outside_the_pipeline(monkeypatch):
    """Each test starts outside a chapter, with an empty read log."""
    monkeypatch.delenv(exhibits.CHAPTER_ENV, raising=False)
    monkeypatch.delenv(exhibits.PARAMETERS_ENV, raising=False)
    artifacts.clear_reads()
    yield
    artifacts.clear_reads()


def _csv_frames(html: str) -> dict[str, pd.DataFrame]:
    """Every CSV link of ``html``, decoded: {download name: frame}."""
    out = {}
    for name, href in re.findall(r'<a class="embdiag-csv" download="([^"]+)" href="([^"]+)"', html):
        assert href.startswith("data:text/csv;charset=utf-8,")
        out[name] = pd.read_csv(io.StringIO(unquote(href.split(",", 1)[1])), keep_default_na=True)
    return out


def _marks_in_html(html: str, name: str, shape) -> np.ndarray:
    out = np.full(shape, "", dtype=object)
    for r, c, classes in re.findall(rf'<td id="T_{name}_row(\d+)_col(\d+)" class="([^"]*)"', html):
        found = [k for k in classes.split() if k in (exhibits.MAX, exhibits.MIN)]
        out[int(r), int(c)] = found[0] if found else ""
    return out


# -- extremes ------------------------------------------------------------------------------------
def _reference_marks(frame: pd.DataFrame, rows) -> np.ndarray:
    """Brute force: loop over the cells of each numeric, non-boolean column."""
    out = np.full(frame.shape, "", dtype=object)
    for j, name in enumerate(frame.columns):
        if not all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in frame[name]):
            continue
        values = [(i, float(v)) for i, v in enumerate(frame[name]) if rows[i] and not math.isnan(float(v))]
        if len(values) < 2:
            continue
        high, low = max(v for _, v in values), min(v for _, v in values)
        if high == low:
            continue
        for i, v in values:
            out[i, j] = exhibits.MAX if v == high else exhibits.MIN if v == low else ""
    return out


@st.composite
def frames_and_rows(draw):
    n = draw(st.integers(0, 7))
    small = st.one_of(st.integers(-2, 2).map(float), st.just(math.nan))  # ties and NaN are frequent
    columns = {
        "f": draw(st.lists(small, min_size=n, max_size=n)),
        "i": draw(st.lists(st.integers(-1, 1), min_size=n, max_size=n)),
        "same": [3.5] * n,
        "b": draw(st.lists(st.booleans(), min_size=n, max_size=n)),
        "s": [f"r{k}" for k in range(n)],
        "g": draw(st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(math.nan)), min_size=n, max_size=n)),
    }
    frame = pd.DataFrame(columns)
    frame["i"] = frame["i"].astype("int64")
    frame["f"] = frame["f"].astype(float)
    frame["g"] = frame["g"].astype(float)
    rows = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return frame, rows


@given(frames_and_rows())
@settings(max_examples=150, deadline=None)
def test_extremes_match_a_brute_force_reference(case):
    frame, rows = case
    np.testing.assert_array_equal(exhibits.extreme_marks(frame), _reference_marks(frame, [True] * len(frame)))
    np.testing.assert_array_equal(exhibits.extreme_marks(frame, rows), _reference_marks(frame, rows))


@given(frames_and_rows())
@settings(max_examples=25, deadline=None)
def test_the_rendered_table_carries_exactly_those_marks(case):
    """The table marks the values as it displays them (readable_number: 4 significant digits)."""
    frame, rows = case
    html = exhibits.table(frame, name="t", caption="Random.", extremes_rows=rows, extremes=True).html
    shown = frame.apply(
        lambda c: c.map(lambda v: exhibits._shown_value(exhibits.readable_number(v))) if c.dtype == float else c
    )
    np.testing.assert_array_equal(_marks_in_html(html, "t", frame.shape), _reference_marks(shown, rows))
    assert (exhibits.LEGEND in html) == (_reference_marks(shown, rows) != "").any()


def test_cells_printed_alike_are_marked_alike_whatever_their_last_bits():
    frame = pd.DataFrame({"PR": [13.7200000001, 13.72, 13.7199999], "x": [1.0, 2.0, 3.0]})
    html = exhibits.table(frame.style.format("{:.2f}"), name="ties", caption="Ties.", extremes=True).html
    assert _marks_in_html(html, "ties", frame.shape)[:, 0].tolist() == ["", "", ""]  # all print 13.72
    more = pd.concat([frame, pd.DataFrame({"PR": [13.8], "x": [4.0]})], ignore_index=True)
    html = exhibits.table(more.style.format("{:.2f}"), name="ties", caption="Ties.", extremes=True).html
    assert _marks_in_html(html, "ties", more.shape)[:, 0].tolist() == [exhibits.MIN] * 3 + [exhibits.MAX]
    percent = pd.DataFrame({"share": [0.12344, 0.12341, 0.5]})
    html = exhibits.table(percent.style.format("{:.1%}"), name="pct", caption="Shares.", extremes=True).html
    assert _marks_in_html(html, "pct", percent.shape)[:, 0].tolist() == [exhibits.MIN, exhibits.MIN, exhibits.MAX]


def test_extremes_only_on_the_columns_that_declare_a_best():
    frame = pd.DataFrame({"classes": [3, 5, 4], "P@10 (%)": [50.0, 40.0, 45.0]})
    html = exhibits.table(frame, name="some", caption="Some columns.", extremes=["P@10 (%)"]).html
    marks = _marks_in_html(html, "some", frame.shape)
    assert marks[:, 0].tolist() == ["", "", ""] and marks[:, 1].tolist() == [exhibits.MAX, exhibits.MIN, ""]
    with pytest.raises(ValueError, match=r"extremes: .*no column is labelled 'P@5'"):
        exhibits.table(frame, name="some", caption="Some columns.", extremes=["P@5"])


def test_hand_worked_extremes():
    frame = pd.DataFrame(
        {"a": [1.0, 3.0, 3.0, np.nan], "b": [2, 2, 2, 2], "c": [np.nan, 5.0, np.nan, np.nan], "d": ["x", "y", "z", "w"]}
    )
    M, m = exhibits.MAX, exhibits.MIN
    assert exhibits.extreme_marks(frame).tolist() == [
        [m, "", "", ""],
        [M, "", "", ""],
        [M, "", "", ""],
        ["", "", "", ""],
    ]
    assert exhibits.extreme_marks(frame, [False, True, True, True])[:, 0].tolist() == ["", "", "", ""], (
        "3.0 and 3.0 are all equal among the rows compared"
    )


def test_extremes_rows_as_labels_compares_only_those_rows():
    frame = pd.DataFrame(
        {"P@10": [0.9, 0.5, 0.7, 0.1]},
        index=pd.MultiIndex.from_tuples(
            [("a", "study"), ("a", "this run"), ("b", "study"), ("b", "this run")], names=["representation", "source"]
        ),
    )
    ours = [("a", "this run"), ("b", "this run")]
    html = exhibits.table(frame, name="mixed", caption="Mixed rows.", extremes_rows=ours, extremes=True).html
    assert _marks_in_html(html, "mixed", frame.shape)[:, 0].tolist() == ["", exhibits.MAX, "", exhibits.MIN]
    assert "among the 2 rows compared" in html
    mask = frame.index.get_level_values("source") == "this run"
    assert exhibits.table(frame, name="mixed", caption="Mixed rows.", extremes_rows=mask, extremes=True).html == html
    with pytest.raises(ValueError, match="extremes_rows: .*no row is labelled"):
        exhibits.table(frame, name="mixed", caption="Mixed rows.", extremes_rows=[("c", "study")], extremes=True)


def test_nothing_is_marked_unless_a_column_declares_that_highest_or_lowest_means_something():
    frame = pd.DataFrame({"a": [1, 2]})
    for html in (
        exhibits.table(frame, name="off", caption="No marks.").html,
        exhibits.table(frame, name="off", caption="No marks.", extremes=False).html,
    ):
        assert exhibits.MAX not in html and exhibits.MIN not in html and exhibits.LEGEND not in html


def test_non_unique_labels_are_marked_by_position():
    frame = pd.DataFrame([[1, 5], [2, 5], [3, 4]], index=["x", "x", "y"], columns=["a", "a"])
    html = exhibits.table(frame, name="dup", caption="Duplicate labels.", extremes=True).html
    assert _marks_in_html(html, "dup", frame.shape).tolist() == [
        [exhibits.MIN, exhibits.MAX],
        ["", exhibits.MAX],
        [exhibits.MAX, exhibits.MIN],
    ]


# -- Stylers -------------------------------------------------------------------------------------
def test_styler_formats_styles_and_hidden_parts_are_kept_and_the_callers_styler_unchanged():
    frame = pd.DataFrame({"share": [0.12345, 0.5, 0.25], "n": [1, 2, 3]}, index=pd.Index(list("pqr"), name="k"))
    own = pd.DataFrame("", index=frame.index, columns=frame.columns)
    own.loc["q", "share"] = "mine"
    styler = (
        frame.style.format({"share": "{:.1%}"})
        .set_td_classes(own)
        .map(lambda v: "color: red" if v == 3 else "", subset=["n"])
        .hide(axis="index")
    )
    before = styler.to_html()
    html = exhibits.table(styler, name="styled", caption="A styled table.", extremes=True).html
    assert "12.3%" in html and "50.0%" in html and "0.12345" not in html.split("<figcaption>")[0]
    assert 'class="data row1 col0 mine embdiag-max"' in html, "the Styler's own classes are kept"
    assert "color: red" in html and 'id="T_styled"' in html
    assert "row_heading" not in html, "the hidden index stays hidden"
    assert styler.to_html() == before, "the caller's Styler is not changed"
    (csv,) = _csv_frames(html).values()
    assert list(csv.columns) == ["share", "n"], "a hidden index is not in the CSV"


# -- CSV ------------------------------------------------------------------------------------------
texts = st.from_regex(r"[a-zA-Zé▲][a-zA-Z0-9 ,;:/()\"'#%&+=<>é▲\n]{0,8}", fullmatch=True)


@given(
    st.integers(1, 6).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(-1e9, 1e9, allow_nan=False), min_size=n, max_size=n),
            st.lists(st.floats(1e-9, 1e-3), min_size=n, max_size=n),
            st.lists(st.integers(-(10**12), 10**12), min_size=n, max_size=n),
            st.lists(texts, min_size=n, max_size=n),
        )
    )
)
@settings(max_examples=60, deadline=None)
def test_csv_link_decodes_to_the_frame_at_six_significant_digits(columns):
    floats, tiny, ints, words = columns
    frame = pd.DataFrame({"x": floats, "tiny": tiny, "n": ints, 'word, with comma & "quote" #%': words})
    html = exhibits.csv_link(frame, "t.csv")
    assert "base64" not in html and "#" not in html.split("href=")[1].split('"')[1]
    href = re.search(r'href="([^"]+)"', html).group(1)
    back = pd.read_csv(
        io.StringIO(unquote(href.split(",", 1)[1])), dtype={frame.columns[3]: str}, keep_default_na=False
    )
    assert list(back.columns) == list(frame.columns)
    for c in ("x", "tiny"):
        np.testing.assert_allclose(back[c].to_numpy(float), frame[c].to_numpy(), rtol=5e-6, atol=0)
        assert back[c].tolist() == [float(f"{v:.6g}") for v in frame[c]]
    assert back["n"].tolist() == ints
    assert back.iloc[:, 3].tolist() == words


def test_csv_writes_the_index_only_when_it_means_something():
    plain = pd.DataFrame({"a": [1.5, 2.5]})
    assert exhibits.csv_text(plain) == "a\n1.5\n2.5\n"
    assert exhibits.csv_text(plain.set_axis(["p", "q"])) == ",a\np,1.5\nq,2.5\n"
    assert exhibits.csv_text(plain.rename_axis("row")) == "row,a\n0,1.5\n1,2.5\n"
    assert exhibits.csv_text(plain.iloc[::-1]) == ",a\n1,2.5\n0,1.5\n", "a reordered index is information"
    multi = plain.set_axis(pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["k", "j"]))
    assert exhibits.csv_text(multi).splitlines()[0] == "k,j,a"


def test_table_csv_round_trips_a_named_index():
    frame = pd.DataFrame({"count": [3, 1]}, index=pd.Index(["clear", "rainy"], name="weather"))
    (back,) = _csv_frames(exhibits.table(frame, name="counts", caption="Counts.").html).values()
    pd.testing.assert_frame_equal(back.set_index("weather"), frame)


# -- charts ---------------------------------------------------------------------------------------
SCORES = pd.DataFrame({"x": [0.1234567891, 2.0], "label": ["a", "b"]})


def test_chart_data_from_top_level_datasets():
    chart = alt.Chart(SCORES).mark_point().encode(x="x:Q", y="label:N")
    assert "datasets" in chart.to_dict()
    (frame,) = exhibits.chart_data(chart)
    pd.testing.assert_frame_equal(frame, SCORES)


def test_chart_data_from_inline_values():
    spec = {
        "mark": "point",
        "data": {"values": [{"x": 1.5, "y": "p"}, {"x": 2.5, "y": "q"}]},
        "encoding": {"x": {"field": "x", "type": "quantitative"}},
    }
    (frame,) = exhibits.chart_data(spec)
    assert frame.to_dict("list") == {"x": [1.5, 2.5], "y": ["p", "q"]}
    (frame,) = exhibits.chart_data(alt.Chart(alt.InlineData(values=[{"v": 1}, {"v": 2}])).mark_tick().encode(x="v:Q"))
    assert frame["v"].tolist() == [1, 2]


def test_layered_and_concatenated_charts_give_one_frame_per_dataset_in_order():
    other = pd.DataFrame({"threshold": [1.0]})
    points = alt.Chart(SCORES).mark_point().encode(x="x:Q", y="label:N")
    rule = alt.Chart(other).mark_rule().encode(x="threshold:Q")
    frames = exhibits.chart_data(points + rule)
    assert [list(f.columns) for f in frames] == [["x", "label"], ["threshold"]]
    assert len(exhibits.chart_data(points + points.mark_line())) == 1, "one dataset shared by two layers"
    assert len(exhibits.chart_data(alt.hconcat(points, rule))) == 2
    datum = alt.Chart().mark_rule().encode(y=alt.datum(1))  # Altair's "empty" dataset: nothing to download
    assert exhibits.chart_data(points + datum)[0].equals(SCORES) and len(exhibits.chart_data(points + datum)) == 1
    html = exhibits.figure(points + rule, name="layered", caption="Two layers.").html
    assert sorted(_csv_frames(html)) == ["layered-1.csv", "layered-2.csv"]


def test_image_columns_are_not_offered_as_data():
    images = SCORES.assign(url=["data:image/png;base64,AAAA", "data:image/png;base64,BBBB"])
    (frame,) = exhibits.chart_data(alt.Chart(images).mark_image().encode(x="x:Q", url="url:N"))
    assert list(frame.columns) == ["x", "label"]


def test_figure_html_draws_the_chart_and_offers_its_data():
    chart = alt.Chart(SCORES).mark_point().encode(x="x:Q", y="label:N")
    f = exhibits.figure(chart, name="scores", caption="Scores per label.")
    assert repr(f) == "<Figure: scores>" and f._repr_html_() == f.html
    assert f.html.startswith('<figure class="embdiag-exhibit embdiag-figure" id="figure-scores">')
    assert 'class="embdiag-scroll"' in f.html and 'class="embdiag-chart"' in f.html
    assert '<figcaption><span class="embdiag-label">Figure:</span> Scores per label.</figcaption>' in f.html
    (csv,) = _csv_frames(f.html).values()
    assert csv["x"].tolist() == [0.123457, 2.0]
    explicit = exhibits.figure(chart, name="scores", caption="Scores.", data=[SCORES.head(1), SCORES])
    assert sorted(_csv_frames(explicit.html)) == ["scores-1.csv", "scores-2.csv"]
    with pytest.raises(ValueError, match="data: "):
        exhibits.figure(chart, name="scores", caption="Scores.", data={"x": 1})
    with pytest.raises(ValueError, match="chart: "):
        exhibits.figure("not a chart", name="scores", caption="Scores.")


# -- provenance -----------------------------------------------------------------------------------
def test_outside_the_pipeline_the_chapter_is_unknown_without_error():
    html = exhibits.provenance()
    assert "chapter not known" in html and "href" not in html and "reading no recorded input" in html


def test_inside_the_pipeline_the_source_and_non_default_parameters_are_named(monkeypatch, tmp_path):
    monkeypatch.setenv(exhibits.CHAPTER_ENV, "06_compression")
    monkeypatch.setenv(exhibits.PARAMETERS_ENV, json.dumps({"encoder": "reference-vit", "k": 5}))
    study = tmp_path / "study.csv"
    study.write_text("a\n1\n")
    artifacts.record_read(study)
    html = exhibits.table(pd.DataFrame({"a": [1]}), name="t", caption="T.").html
    assert (
        '<a class="embdiag-source" href="../_sources_py/06_compression.py.txt">notebooks/06_compression.py</a>' in html
    )
    assert "<code>encoder=reference-vit</code>, <code>k=5</code>" in html
    short = hashlib.sha256(b"a\n1\n").hexdigest()[:12]
    assert f'<code>{study.resolve().as_posix()}</code> <span class="embdiag-sha"' in html and f">{short}</span>" in html
    assert 'href="24_reproduce.html#artifacts"' in html
    monkeypatch.setenv(exhibits.PARAMETERS_ENV, "{}")
    assert " with " not in exhibits.provenance()


def test_a_page_outside_the_book_states_its_own_maker_and_inputs(monkeypatch):
    monkeypatch.setenv(exhibits.CHAPTER_ENV, "21_report")  # even inside the pipeline, made= wins
    reads = [artifacts.Read("emb.npy (VECTORS)", "ab" * 32)]
    html = exhibits.provenance(reads, made="Made by <code>embdiag report</code>")
    assert html == (
        '<div class="embdiag-provenance"><p><span class="embdiag-made">Made by <code>embdiag report'
        '</code></span> from <code>emb.npy (VECTORS)</code> <span class="embdiag-sha" title="SHA-256, '
        'first 12 hex digits">abababababab</span>.</p></div>'
    )  # no link into the book
    for exhibit in (
        exhibits.table(SCORES, name="t", caption="T.", reads=reads, made="By hand"),
        exhibits.figure(
            alt.Chart(SCORES).mark_point().encode(x="x:Q"), name="f", caption="F.", reads=reads, made="By hand"
        ),
    ):
        assert '<span class="embdiag-made">By hand</span> from <code>emb.npy (VECTORS)</code>' in exhibit.html
        assert "embdiag-source" not in exhibit.html and "what these are" not in exhibit.html


def test_many_inputs_are_listed_in_a_collapsed_list_and_explicit_reads_override(tmp_path):
    paths = []
    for k in range(exhibits.INLINE_READS + 1):
        paths.append(tmp_path / f"f{k}.csv")
        paths[-1].write_text(str(k))
        artifacts.record_read(paths[-1])
    html = exhibits.provenance()
    assert "<details>" in html and html.count("<li>") == len(paths)
    only = exhibits.provenance(reads=[paths[0]])
    assert "<details>" not in only and "f0.csv" in only and "f1.csv" not in only
    assert "reading no recorded input" in exhibits.provenance(reads=[])
    with pytest.raises(ValueError, match="reads: path: no such file"):
        exhibits.provenance(reads=[tmp_path / "missing.csv"])
    with pytest.raises(ValueError, match="reads: expected a list"):
        exhibits.provenance(reads=str(paths[0]))


def _sanitized(text: str) -> str:
    rules = configparser.ConfigParser()
    rules.read(SANITIZE)
    for section in rules.sections():
        text = re.sub(rules[section]["regex"], rules[section]["replace"], text)
    return text


def test_the_sanitizer_masks_checksums_and_the_chapter_clause_only(tmp_path, monkeypatch):
    f = tmp_path / "a.csv"
    f.write_text("x")
    artifacts.record_read(f)
    outside = exhibits.provenance()
    monkeypatch.setenv(exhibits.CHAPTER_ENV, "06_compression")
    monkeypatch.setenv(exhibits.PARAMETERS_ENV, '{"encoder": "reference-vit"}')
    inside = exhibits.provenance()
    assert hashlib.sha256(b"x").hexdigest()[:12] not in _sanitized(inside)
    assert _sanitized(inside) == _sanitized(outside), "nbval, re-running outside the pipeline, sees the same"
    masked = re.sub(r"(embdiag-sha[^>]*>)[0-9a-f]{12}", r"\1SHA256", inside)
    masked = re.sub(r'(<span class="embdiag-made">).*?</span>(?= from)', r"\1MADE</span>", masked)
    assert _sanitized(inside) == masked, "nothing else changes"


def test_the_study_readers_record_what_they_read():
    from embdiag import study

    for section in ("compression", "stress tests", "caption retrieval", "neighbour stability"):
        study.home(section).read_study()
    paths = [r.path for r in artifacts.reads()]
    assert paths == [
        "data/study/compression.csv",
        "data/study/stress_severe.csv",
        "data/study/caption_retrieval.csv",
        "data/study/storage.csv",
    ]
    study = artifacts.project_root() / "data" / "study" / "storage.csv"
    assert artifacts.reads()[-1].sha256 == hashlib.sha256(study.read_bytes()).hexdigest()


def test_the_training_findings_record_the_study_values_they_read(training_records):
    from embdiag.study import training

    records = training_records()
    training.findings(training.measure(records))
    training.comparisons(records)
    assert [r.path for r in artifacts.reads()] == [
        "data/study/training_means.csv",
        "data/study/training_comparisons.csv",
    ]


# -- the pipeline and the site --------------------------------------------------------------------
def test_chapter_environment_is_set_inside_and_restored_after(monkeypatch):
    monkeypatch.setenv(exhibits.CHAPTER_ENV, "before")
    with pipeline._chapter_environment("02_data", {"seed": 1}):
        assert exhibits._chapter() == ("02_data", {"seed": 1})
    assert exhibits._chapter() == ("before", {})
    assert exhibits.PARAMETERS_ENV not in os.environ


ENV_CHAPTER = """# %% tags=["parameters"]
value = 1

# %%
import os
print(os.environ.get("EMBDIAG_CHAPTER"), os.environ.get("EMBDIAG_CHAPTER_PARAMETERS"))
"""


@pytest.mark.slow
def test_the_kernel_is_told_its_chapter_and_non_default_parameters(tmp_path):
    import nbformat

    lay = pipeline.Layout(notebooks=tmp_path / "notebooks", book=tmp_path / "book")
    lay.notebooks.mkdir()
    (lay.notebooks / "01_env.py").write_text(ENV_CHAPTER)
    pipeline.sync("env", lay)
    printed = lambda path: nbformat.read(path, as_version=4).cells[-1].outputs[0].text.strip()  # noqa: E731
    assert printed(pipeline.execute("env", {"value": 2}, lay)) == '01_env {"value": 2}'
    assert printed(pipeline.execute("env", {"value": 1}, lay, output="01_env_default")) == "01_env {}"


def test_the_site_carries_the_chapter_sources_where_the_links_point(tmp_path, monkeypatch):
    book, notebooks, out = tmp_path / "book", tmp_path / "notebooks", tmp_path / "html"
    book.mkdir()
    notebooks.mkdir()
    (notebooks / "02_data.py").write_text("# %% chapter\n")
    (notebooks / "helper.py").write_text("not a chapter\n")
    app = SimpleNamespace(builder=SimpleNamespace(format="html"), outdir=str(out), srcdir=str(book))
    sphinxext._copy_sources(app, None)
    assert sorted(p.name for p in (out / exhibits.SOURCES).iterdir()) == ["02_data.py.txt"]
    monkeypatch.setenv(exhibits.CHAPTER_ENV, "02_data")
    href = re.search(r'href="([^"]+)"', exhibits.provenance(reads=[])).group(1)
    page = out / "chapters" / "02_data.html"  # where the book puts an executed chapter
    page.parent.mkdir()
    assert (page.parent / href).read_text() == "# %% chapter\n"


# -- checks and determinism -----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["two words", "a/b", "", "-lead", "dot.name", None, 3])
def test_a_bad_name_is_refused_naming_the_argument(name):
    with pytest.raises(ValueError, match=r"^name: "):
        exhibits.table(pd.DataFrame({"a": [1]}), name=name, caption="C.")
    with pytest.raises(ValueError, match=r"^name: "):
        exhibits.figure(alt.Chart(SCORES).mark_point(), name=name, caption="C.")


@pytest.mark.parametrize("caption", ["", "   ", None])
def test_an_empty_caption_is_refused_naming_the_argument(caption):
    with pytest.raises(ValueError, match=r"^caption: "):
        exhibits.table(pd.DataFrame({"a": [1]}), name="t", caption=caption)
    with pytest.raises(ValueError, match=r"^caption: "):
        exhibits.figure(alt.Chart(SCORES).mark_point(), name="f", caption=caption)


def test_data_of_another_type_is_refused():
    with pytest.raises(ValueError, match=r"^data: "):
        exhibits.table([[1, 2]], name="t", caption="C.")


def test_same_input_gives_identical_html_and_the_caption_is_escaped(tmp_path):
    f = tmp_path / "a.csv"
    f.write_text("x")
    artifacts.record_read(f)
    frame = pd.DataFrame({"a": [0.1, 0.2], "b": ["<b>", "&"]})

    def make():
        return exhibits.table(frame.style.format({"a": "{:.2f}"}), name="det", caption="a < b & c").html

    assert make() == make()
    assert "a &lt; b &amp; c" in make()
    chart = alt.Chart(SCORES).mark_point().encode(x="x:Q")
    first, second = (exhibits.figure(chart, name="det", caption="C.").html for _ in range(2))
    assert first == second
    t = exhibits.table(frame, name="det", caption="C.")
    assert repr(t) == "<Table: det>"
    assert t.html.startswith(
        '<figure class="embdiag-exhibit embdiag-table" id="table-det">\n<div class="embdiag-scroll">'
    )


def test_csv_of_hierarchical_columns_has_one_header_line():
    frame = pd.DataFrame(
        [[1.0, 2.0, 3.0]],
        index=pd.Index(["unchanged"], name="condition"),
        columns=pd.MultiIndex.from_tuples([("variance", "study"), ("variance", "this run"), ("RankMe", "")]),
    )
    lines = exhibits.csv_text(frame).splitlines()
    assert lines == ["condition,variance study,variance this run,RankMe", "unchanged,1,2,3"]


# -- charts ----------------------------------------------------------------------------------------
def test_chart_floats_are_rounded_and_datasets_named_in_order():
    from embdiag.view import charts

    def spec(x):
        return (
            alt.Chart(pd.DataFrame({"x": [x, 1 / 3]})).mark_point().encode(x="x")
            + alt.Chart(pd.DataFrame({"y": [2.0]})).mark_rule().encode(y="y")
        ).to_dict()

    html = charts.chart_html(spec(0.05623413251903491))
    assert '"x":0.0562341' in html and '"x":0.333333' in html and "0.05623413" not in html
    assert '"data-1":' in html and '"data-2":' in html and '{"name":"data-1"}' in html
    assert charts.chart_html(spec(0.056234132519034905)) == html  # the 17th digit never reaches the page
    assert charts.chart_html(spec(0.0562342)) != html
    assert charts.rounded({"a": [1.23456789, float("inf"), 3], "b": (0.1 + 0.2,)}) == {
        "a": [1.23457, float("inf"), 3],
        "b": [0.3],
    }


def test_tables_show_missing_values_as_a_dash_formatted_or_not():
    frame = pd.DataFrame({"a": [0.821445, np.nan], "b": [np.nan, 2.5]})
    html = exhibits.table(frame.style.format({"b": "{:.2f}"}), name="t", caption="Missing.", extremes=False).html
    assert ">nan<" not in html.lower()
    assert html.count(f">{exhibits.MISSING}</td>") == 2
    assert ">0.8214</td>" in html and ">2.50</td>" in html


def test_a_named_index_adds_no_header_row_of_its_own():
    frame = pd.DataFrame({"BA (%)": [80.0, 90.0]}, index=pd.Index(["pca", "prefix"], name="method"))
    html = exhibits.table(frame, name="t", caption="Named index.", extremes=False).html
    head = html[html.index("<thead>") : html.index("</thead>")]
    assert head.count("<tr>") == 1 and 'class="index_name level0" >method</th>' in head
    two = frame.set_axis(pd.MultiIndex.from_tuples([("a", 1), ("b", 2)], names=["x", "y"]))
    head = (lambda h: h[h.index("<thead>") : h.index("</thead>")])(
        exhibits.table(two, name="u", caption="Two levels.", extremes=False).html
    )
    assert head.count("<tr>") == 1 and ">x</th>" in head and ">y</th>" in head
