"""The chart embed script's re-lay of a Vega-Lite spec for a narrow room (:data:`embdiag.view.charts.RELAYOUT_JS`),
run in Node with a stub ``vegaEmbed``; the browser test draws it on every page."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from embdiag.view import charts

NODE = shutil.which("node") or shutil.which("nodejs")


def _js(call: str, *args):
    """``window.embdiagCharts.<call>(*args)`` evaluated in Node after :data:`charts.RELAYOUT_JS`."""
    if not NODE:
        pytest.skip("node is not installed")
    script = (
        "global.window = {vegaEmbed: function () {}};\n"
        + charts.RELAYOUT_JS
        + f"\nprocess.stdout.write(JSON.stringify(window.embdiagCharts.{call}(...{json.dumps(list(args))})));"
    )
    done = subprocess.run([NODE, "-e", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_side_by_side_views_are_stacked_and_capped_at_the_room():
    spec = {
        "hconcat": [{"mark": "bar", "width": 400, "title": "left"}, {"mark": "line", "width": 150}],
        "config": {"legend": {"orient": "right"}, "axis": {"labelFontSize": 12}},
        "datasets": {"data-1": [{"width": 999}]},
    }
    out = _js("relay", spec, 330)
    assert "hconcat" not in out and [v["mark"] for v in out["vconcat"]] == ["bar", "line"]
    assert [v["width"] for v in out["vconcat"]] == [230, 150]  # the room less the axes' room; narrower kept
    assert out["config"]["legend"]["orient"] == "bottom" and out["config"]["axis"] == {"labelFontSize": 12}
    assert out["datasets"] == spec["datasets"]  # data untouched
    assert spec["hconcat"][0]["width"] == 400  # the caller's spec unchanged


def test_facets_and_concatenations_wrap_in_one_column():
    facet = {"facet": {"field": "a"}, "columns": 3, "spec": {"mark": "point", "width": 300}}
    assert _js("relay", facet, 330)["columns"] == 1
    column = {"facet": {"column": {"field": "a", "title": None}}, "spec": {"mark": "point"}}
    assert _js("relay", column, 330)["facet"] == {"field": "a", "title": None}
    encoded = {"mark": "point", "encoding": {"column": {"field": "a"}, "x": {"field": "x"}}}
    assert _js("relay", encoded, 330)["encoding"]["facet"] == {"field": "a", "columns": 1}
    grid = {
        "facet": {
            "row": {"field": "r", "sort": ["p", "q"], "header": {"labelAngle": 0, "title": "R"}},
            "column": {"field": "c", "sort": ["x", "y", "z"]},
        },
        "spec": {"mark": "point"},
    }
    swapped = _js("relay", grid, 330)["facet"]
    assert swapped["row"]["field"] == "c" and swapped["column"]["field"] == "r"
    assert swapped["column"]["header"] == {"title": "R"}  # the orientation set for rows is dropped
    repeat = {
        "repeat": {"column": ["a", "b"]},
        "spec": {"mark": "point", "encoding": {"x": {"field": {"repeat": "column"}}}},
    }
    out = _js("relay", repeat, 330)
    assert out["repeat"] == {"row": ["a", "b"]} and out["spec"]["encoding"]["x"]["field"] == {"repeat": "row"}


def test_long_titles_wrap_and_legends_go_below():
    spec = {
        "mark": "point",
        "width": 500,
        "title": "a title far longer than a phone's column can hold on one line of text",
        "encoding": {
            "x": {"field": "x", "title": "an axis title that is much wider than the narrow panel it labels"},
            "color": {"field": "c", "legend": {"orient": "right", "title": "kind"}},
        },
    }
    out = _js("relay", spec, 300)
    assert isinstance(out["title"], list) and " ".join(out["title"]) == spec["title"]
    assert isinstance(out["encoding"]["x"]["title"], list)
    assert out["encoding"]["color"]["legend"] == {"orient": "bottom", "title": "kind"}


def test_narrowing_takes_the_excess_off_every_panel_down_to_a_floor():
    spec = {
        "vconcat": [
            {"mark": "bar", "width": 200},
            {"mark": "bar", "width": 100},
            {"mark": "bar", "width": {"step": 20}},
        ],
        "config": {"legend": {"orient": "bottom", "columns": 2}},
    }
    out = _js("narrow", spec, 40, 400, 330)
    widths = [v["width"] for v in out["vconcat"]]
    assert widths[0] < 200 - 40 and widths[1] == 90 and widths[2]["step"] < 20
    assert out["config"]["legend"]["columns"] == 1


def test_the_bundle_carries_the_relayout():
    assert charts.RELAYOUT_JS in charts.bundle_js()
    assert "window.vegaEmbed = vegaEmbed" in charts.RELAYOUT_JS
