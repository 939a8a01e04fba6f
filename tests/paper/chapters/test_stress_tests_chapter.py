"""The stress chapter's figures and tables, drawn from a measurement of small synthetic vectors."""

import dataclasses
import json

import altair as alt
import numpy as np
import pandas as pd
import pytest

from embdiag.encoders.vectors import LabelledVectors
from embdiag.interventions.identities import exact_responses
from embdiag.paper.chapters import stress_tests as sf
from embdiag.study import stress_tests
from embdiag.synthetic import labelled_clusters


@pytest.fixture(scope="module")
def vectors():
    train, y_train = labelled_clusters(240, d=32, seed=1)
    val, y_val = labelled_clusters(160, d=32, seed=2)
    return LabelledVectors(train, val, y_train, y_val, source="synthetic clusters")


@pytest.fixture(scope="module")
def results(vectors):
    return stress_tests.run(vectors, stress_tests.Settings(severities=(0.5, 0.99), k=5, attribute="weather", seed=3))


@pytest.fixture(scope="module")
def no_probes(vectors):
    return stress_tests.run(vectors, stress_tests.Settings(severities=(0.25, 0.9), k=5), probes=False)


def test_severity_table(results):
    table = sf.severity_table(results)
    assert list(table.index) == ["s = 0", "s = .5", "s = .99"]
    assert list(table.columns) == [
        ("contraction", "scale factor"),
        ("common offset", "offset norm"),
        ("rank restriction", "directions kept"),
        ("noise", "noise total variance"),
    ]
    assert table.loc["s = .99", ("rank restriction", "directions kept")] == 1
    assert table.loc["s = 0", ("contraction", "scale factor")] == 1 and table.loc["s = 0"].iloc[1] == 0


def test_curves_without_probes(no_probes):
    spec = json.dumps(sf.curves_chart(no_probes).to_dict())
    assert "BA (%)" not in spec and "weather P@5 (%)" in spec


def test_figures_reject_an_unknown_attribute(results):
    for f in (sf.headline_chart, sf.headline_frame, sf.headline_text, sf.severe_frame, sf.severe_table):
        with pytest.raises(ValueError, match="attribute: 'fog'"):
            f(results, "fog")


def _layers(spec):
    for key in ("hconcat", "vconcat", "layer"):
        for part in spec.get(key, []):
            yield from _layers(part)
    yield spec


def test_headline_chart(results):
    chart = sf.headline_chart(results)
    assert isinstance(chart, alt.HConcatChart)
    data = sf.headline_frame(results)
    assert list(data.columns) == ["condition", "RankMe", "P@k", "group", "random floor"]
    assert (data["random floor"] == 100 * results.floors["weather"]).all()
    assert sf.headline_frame(results, "scene")["P@k"].iloc[0] == 100 * results.unchanged["scene P@5"]
    assert list(data["condition"]) == [
        "unchanged",
        "contraction",
        "common offset",
        "rank restriction (1 direction)",
        "noise",
    ]
    assert list(data["group"]) == ["unchanged", "other", "other", "other", "noise"]  # noise highlighted
    assert data["P@k"].iloc[-1] == pytest.approx(100 * results.row("noise", 0.99)["weather P@5"])
    text = json.dumps(chart.to_dict())
    assert f"random floor {100 * results.floors['weather']:.1f}%" in text  # the floor is marked
    assert '"type": "log"' in text and sf.GROUPS["noise"] in text and "severity .99" in text


def test_headline_text_numbers(results):
    text = sf.headline_text(results)
    u, noise = results.unchanged, results.row("noise", 0.99)
    assert f"{u['rankme']:.2f}" in text and f"{noise['rankme']:.2f}" in text
    assert f"{100 * results.floors['weather']:.2f}%" in text and "1 of 32 directions" in text
    assert f"under **contraction** RankMe stays at {u['rankme']:.2f}" in text  # exact: no direction to report
    assert "study" not in text, "without verdicts, no reading of the study's contrast"


def test_headline_text_says_which_way_each_number_moved(results):
    """The directions are read from the run: a run whose noise lowered RankMe says so."""
    grid = results.grid.copy()
    noise = (grid["intervention"] == "noise") & (grid["severity"] == 0.99)
    grid.loc[noise, "rankme"] = results.unchanged["rankme"] / 2
    text = sf.headline_text(dataclasses.replace(results, grid=grid))
    assert f"under **noise** RankMe falls to {results.unchanged['rankme'] / 2:.2f}" in text


def test_headline_text_reads_the_verdicts(results):
    verdicts = stress_tests.findings(results)
    held = verdicts.set_index("finding")["verdict"]
    text = sf.headline_text(results, verdicts=verdicts)
    if all(held[f] == "holds" for f in sf.CONTRAST):
        assert "As in the study" in text
    failed = verdicts.assign(verdict=verdicts["verdict"].where(verdicts["finding"] != sf.CONTRAST[0], "inconclusive"))
    text = sf.headline_text(results, verdicts=failed)
    assert "As in the study" not in text and f"*{sf.CONTRAST[0]}* is inconclusive" in text


def test_the_exact_responses_note_reads_its_table(results, vectors):
    table = exact_responses(vectors.train, vectors.val, (0.5, 0.99), k=5, seed=3)
    body = sf.exact_note(table)
    exact, noisy = table[table["kind"] == "exact"], table[table["kind"] != "exact"]
    assert f"at s = .5, .99, the {len(exact)} exact identities hold to float64 rounding" in body
    assert f"the {len(noisy)} noise rows" in body and f"{noisy['relative error'].max():.1e}" in body
    assert "$" not in body, "no TeX in a code output: MathJax does not render it there"
    broken = table.assign(measured=table["measured"] * np.where(table["kind"] == "exact", 1.001, 1.0))
    broken["relative error"] = (broken["measured"] - broken["predicted"]).abs() / broken["predicted"].abs()
    assert "more than rounding" in sf.exact_note(broken)
    html = sf.identities_table(table).to_html()
    assert "below 1e-09" in html and ">.99<" in html
    box = sf.note("Note: why", body)._repr_html_()
    assert box.startswith('<div class="admonition note"><p class="admonition-title">Note: why</p>')


def test_curves_chart(results):
    spec = sf.curves_chart(results).to_dict()
    titles = [p.get("title") for p in _layers(spec) if isinstance(p.get("title"), str)]
    for t in (
        "total variance (log)",
        "RankMe (log)",
        "participation ratio (PR) (log)",
        "mean cosine",
        "overlap@5 (%)",
        "weather BA (%)",
        "scene P@5 (%)",
    ):
        assert t in titles
    long = sf.long_grid(results)
    p = long[long["panel"] == "weather P@5"]
    assert (p["floor"] == 100 * results.floors["weather"]).all()
    assert long[long["panel"] == "rankme"]["floor"].isna().all()


def test_decades():
    assert sf._decades(pd.Series([0.3, 50.0])) == [0.1, 1.0, 10.0, 100.0]
    assert sf._decades(pd.Series([1e-5, 1e4])) == [1e-5, 1e-3, 0.1, 10.0, 1000.0]


def test_severe_table_layout(results):
    t = sf.severe_frame(results)
    assert t.columns.get_level_values(1).unique().tolist() == ["study", "this run"]
    assert t.columns.get_level_values(0).unique().tolist() == [
        "variance",
        "mean cosine",
        "RankMe",
        "PR",
        "weather BA %",
        "weather P@5 %",
    ]
    assert t.index.get_level_values(0).tolist()[:5] == list(stress_tests.read_study().index[:5])
    assert (t.dtypes == np.float64).all()
    assert t.loc[("shrink (.99)", "contraction, s = .99"), ("variance", "study")] == 2.5703e-05
    noise = t.loc[("severe noise (.99)", "noise, s = .99")]
    assert noise[("RankMe", "this run")] == results.row("noise", 0.99)["rankme"]
    assert t.loc[("unchanged", "unchanged"), ("weather BA %", "this run")] == 100 * results.unchanged["weather BA"]
    floor = t.loc[("random-neighbour floor", "random-neighbour floor")]
    assert floor[("weather P@5 %", "study")] == 39.87
    assert floor[("weather P@5 %", "this run")] == 100 * results.floors["weather"]
    assert floor.drop(index="weather P@5 %", level=0).isna().all()
    assert sf.severe_compared(t).tolist() == [True] * 5 + [False]
    other = sf.severe_frame(results, "scene")
    assert ("scene BA %", "study (weather)") in other.columns


def test_severe_table_shows_the_study_as_printed(results):
    html = sf.severe_table(results).to_html()
    for printed in ("2.5703e-05", "0.9050", "0.742967", "9799", "39.87", "57.79"):  # as in stress_severe.csv
        assert f">{printed}<" in html
    assert f">{results.row('noise', 0.99)['rankme']:.2f}<" in html  # this run in the study's precision
    assert f">{100 * results.floors['weather']:.2f}<" in html
    assert "nan" not in html.lower()
