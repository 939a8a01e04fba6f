"""Verdicts at a glance (embdiag/paper/scoreboard.py): counted by section, and as a matrix."""

from __future__ import annotations

import json

import pandas as pd

from embdiag.paper import scoreboard
from embdiag.view import theme

VERDICTS = pd.DataFrame(
    {
        "section": ["training", "training", "stress tests", "stress tests", "stress tests"],
        "finding": ["a", "b", "c", "d", "e"],
        "kind": ["study", "study", "study", "addition", "study"],
        "study": ["1", "2", "3", "4", "5"],
        "this run": ["1 [0, 2]", "2 [1, 3]", "3", "4", "5"],
        "verdict": ["holds", "contradicted", "holds", "holds", None],
        "reason": ["r"] * 5,
    }
)


def test_counts_score_only_the_studys_findings_in_section_and_verdict_order():
    got = scoreboard.counts(VERDICTS)
    assert got.to_dict("records") == [
        {"section": "training", "verdict": "holds", "findings": 1},
        {"section": "training", "verdict": "contradicted", "findings": 1},
        {"section": "stress tests", "verdict": "holds", "findings": 1},
        {"section": "stress tests", "verdict": "not measured", "findings": 1},
    ]
    assert got["findings"].sum() == (VERDICTS["kind"] == "study").sum()


def test_the_chart_colours_each_verdict_with_its_theme_colour():
    spec = scoreboard.chart(VERDICTS).to_dict()
    scale = spec["encoding"]["color"]["scale"]
    assert scale["domain"] == ["holds", "contradicted", "not measured"]
    assert scale["range"] == [theme.COLOURS[v] for v in scale["domain"]]


def test_the_table_pairs_published_and_this_runs_numbers():
    t = scoreboard.table(VERDICTS)
    assert list(t.columns) == ["verdict", "published", "this run", "decided by"]
    assert t.loc[("training", "a"), "this run"] == "1 [0, 2]" and len(t) == 4


def test_the_matrix_has_one_cell_per_row_and_column():
    frame = pd.DataFrame(
        {"finding": ["x", "x", "y", "y"], "encoder": ["p", "q", "p", "q"], "verdict": ["holds", "inconclusive"] * 2}
    )
    spec = scoreboard.matrix(frame).to_dict()
    assert spec["height"] == 2 * 22 and spec["width"] == 2 * 96
    two = scoreboard.matrix(frame.assign(finding=["s — x: a", "s — x: a", "s — y", "s — y"])).to_dict()
    assert two["height"] == 2 * 34 and "split(datum.label, ' — ')" in json.dumps(two, ensure_ascii=False)
    layer = spec["layer"][0]["encoding"]
    assert layer["y"]["sort"] == ["x", "y"] and layer["x"]["sort"] == ["p", "q"]
