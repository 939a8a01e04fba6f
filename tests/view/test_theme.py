"""The visual system: every colour readable and colour-blind safe, one colour per name on every
page, one meaning per dash, text at least 12 px (read from the executed chapters' Vega specs)."""

from __future__ import annotations

import itertools
import json
import re

import altair as alt
import pandas as pd
import nbformat
import pytest

from embdiag.paper import pipeline
from embdiag.view import theme
from embdiag.training.conditions import CONDITIONS

_SPEC = re.compile(r"var spec = (\{.*?\});\n", re.S)


def test_contrast_is_wcags_ratio():
    assert theme.contrast("#000000") == pytest.approx(21.0)
    assert theme.contrast("#ffffff") == pytest.approx(1.0)
    assert theme.contrast("#767676") == pytest.approx(4.54, abs=0.01)  # the usual 4.5:1 grey
    assert theme.contrast("#0072B2", "#0072B2") == pytest.approx(1.0)
    assert theme.contrast("#123456", "#abcdef") == pytest.approx(theme.contrast("#abcdef", "#123456"))


@pytest.mark.parametrize("name, colour", sorted(theme.PALETTE.items()))
def test_every_palette_colour_stands_out_from_the_page(name, colour):
    assert theme.contrast(colour) >= 3.0, f"{name} {colour}: below WCAG's 3:1 for graphics"


def _simulate_deuteranopia(colour: str) -> tuple[float, float, float]:
    """Machado et al. (2009) severity-1.0 deuteranopia matrix on linear RGB."""
    c = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
    m = [(0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)]
    return tuple(sum(a * b for a, b in zip(row, lin)) for row in m)


def test_the_conditions_colours_stay_apart_for_a_deuteranope():
    """The training conditions are drawn together: under simulated deuteranopia no two of their
    colours may come closer than a twelfth of the RGB cube's edge (linear RGB distance)."""
    names = [c.name for c in CONDITIONS] + ["untrained"]
    seen = {n: _simulate_deuteranopia(theme.colour(n)) for n in names}
    for a, b in itertools.combinations(names, 2):
        d = sum((x - y) ** 2 for x, y in zip(seen[a], seen[b])) ** 0.5
        assert d > 1 / 12, f"{a} and {b} look alike to a deuteranope ({d:.3f})"


def test_every_training_condition_has_its_own_colour():
    names = [c.name for c in CONDITIONS]
    assert len({theme.colour(n) for n in names}) == len(names)


def test_unknown_names_get_free_palette_colours_in_order():
    assert theme.colours(["MRL", "PCA"]) == [theme.COLOURS["MRL"], theme.COLOURS["PCA"]]
    mine = theme.colours(["MRL", "my condition", "another"])
    assert mine[0] == theme.COLOURS["MRL"] and len(set(mine)) == 3, "a user's names take colours no known name uses"
    assert theme.colours(["a", "b"]) == theme.colours(["a", "b"]), "deterministic"
    with pytest.raises(KeyError, match="no colour for 'nope'"):
        theme.colour("nope")


def test_panel_widths_fill_the_column():
    assert theme.panel_width(1) + 60 == theme.COLUMN_PX
    assert 3 * (theme.panel_width(3) + 60) <= theme.COLUMN_PX
    with pytest.raises(ValueError, match="panels"):
        theme.panel_width(0)


def test_the_theme_sets_every_text_size():
    theme.enable()
    spec = alt.Chart({"values": [{"a": 1}]}).mark_point().encode(x="a:Q").to_dict()
    config = spec["config"]
    for part in ("axis", "legend", "header"):
        assert config[part]["labelFontSize"] >= theme.TEXT_PX and config[part]["titleFontSize"] >= theme.TEXT_PX


# -- the executed book ------------------------------------------------------------------------------
def _specs():
    """(page, spec) of every chart in the executed chapters."""
    for path in sorted(pipeline.DEFAULT.chapters.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                html = out.get("data", {}).get("text/html", "")
                for m in _SPEC.finditer(html if isinstance(html, str) else "".join(html)):
                    yield path.stem, json.loads(m.group(1))


def _walk(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


SPECS = list(_specs())


def test_the_book_has_charts_to_check():
    assert len(SPECS) > 35 and len({page for page, _ in SPECS}) > 10


def test_a_name_has_one_colour_on_every_page():
    """Every colour scale with a domain and a range, on every page: a name the theme knows has
    its theme colour, and no name is drawn in two colours anywhere in the book."""
    where = {}
    for page, spec in SPECS:
        for node in _walk(spec):
            s = node.get("scale") if isinstance(node.get("scale"), dict) else None
            if node.get("field") is None or s is None or "domain" not in s or "range" not in s:
                continue
            if not isinstance(s["domain"], list) or not isinstance(s["range"], list):
                continue
            for name, colour in zip(s["domain"], s["range"]):
                if isinstance(name, str) and isinstance(colour, str) and colour.startswith("#"):
                    where.setdefault(name, {}).setdefault(colour.lower(), set()).add(page)
    assert len(where) > 15
    problems = [f"{n}: {dict(c)}" for n, c in where.items() if len(c) > 1]
    problems += [
        f"{n}: {next(iter(c))} where the theme says {theme.COLOURS[n]}"
        for n, c in where.items()
        if n in theme.COLOURS and set(c) != {theme.COLOURS[n].lower()}
    ]
    assert not problems, "\n".join(problems)


def test_every_categorical_colour_is_the_themes():
    """No chart colours a nominal field with Vega's default scheme (whose colour of a name
    depends on the domain's order): each has the theme's scale, or a fixed value."""
    unthemed = set()
    for page, spec in SPECS:
        for node in _walk(spec):
            enc = node.get("encoding") if isinstance(node.get("encoding"), dict) else {}
            for channel in ("color", "fill", "stroke"):
                c = enc.get(channel)
                if isinstance(c, dict) and c.get("field") and c.get("type") == "nominal":
                    if not isinstance((c.get("scale") or {}).get("range"), list):
                        unthemed.add(f"{page}: {channel} {c.get('field')}")
    assert not unthemed, "\n".join(sorted(unthemed))


def test_chart_text_is_at_least_12_px():
    small = set()
    for page, spec in SPECS:
        for node in _walk(spec):
            for key, value in node.items():
                if re.fullmatch(r"(label|title|subtitle)?[fF]ontSize", key) and isinstance(value, (int, float)):
                    if value < theme.TEXT_PX:
                        small.add(f"{page}: {key} {value}")
    assert not small, "\n".join(sorted(small))
    unthemed = sorted(
        {page for page, spec in SPECS if spec.get("config", {}).get("axis", {}).get("labelFontSize") is None}
    )
    assert not unthemed, f"charts without the theme's text sizes on {unthemed}"


def test_dashes_mean_one_thing():
    allowed = {json.dumps(d) for d in theme.DASHES.values()}
    other = set()
    for page, spec in SPECS:
        for node in _walk(spec):
            dash = node.get("strokeDash")
            if isinstance(dash, list) and json.dumps(dash) not in allowed:
                other.add(f"{page}: {dash}")
    assert not other, "\n".join(sorted(other))


def test_legend_below_puts_every_legend_under_the_plot_in_columns():
    chart = alt.Chart(alt.Data(values=[{"a": "x", "b": 1}])).mark_point().encode(x="b:Q", color="a:N")
    legend = theme.legend_below(chart, columns=2).to_dict()["config"]["legend"]
    assert legend["orient"] == "bottom" and legend["direction"] == "vertical" and legend["columns"] == 2


def test_panels_fill_the_room_they_are_given():
    assert theme.RESULT_PX < theme.COLUMN_PX
    for room in (theme.COLUMN_PX, theme.RESULT_PX):
        for panels in (1, 2, 3):
            assert panels * (theme.panel_width(panels, gap=60, room=room) + 60) <= room


def test_a_change_is_drawn_once_the_same_way_estimate_interval_and_no_change_line():
    data = pd.DataFrame({"row": ["a", "b"], "value": [1.0, -2.0], "low": [0.5, -3.0], "high": [1.5, -1.0]})
    x = alt.X("value:Q", title="change (pp)")
    spec = theme.changes_with_intervals(data, x, "low", "high", ["row"], "+.1f", y=alt.Y("row:N")).to_dict()
    zero, line, dot = spec["layer"]
    assert zero["mark"]["strokeDash"] == theme.DASHES["reference"] and zero["encoding"]["x"] == {"datum": 0}
    assert line["encoding"]["x"]["field"] == "low" and line["encoding"]["x2"]["field"] == "high"
    assert line["encoding"]["x"]["title"] == dot["encoding"]["x"]["title"] == "change (pp)"  # one axis title
    assert dot["mark"]["shape"] == "diamond" and line["encoding"]["y"] == dot["encoding"]["y"]
    tips = dot["encoding"]["tooltip"]
    assert [t["field"] for t in tips] == ["row", "value", "low", "high"] and tips[1]["format"] == "+.1f"
