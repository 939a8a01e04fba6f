"""The report's first screen: the result box (each condition's verdict beside its name, the smallest
condition passing every rule) opens the page before the command and any folded detail; the command
shown is the one the report records; the frontier chart's legend and caption say how its marks are
drawn."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from embdiag.report import cli, measure, page, sections
from embdiag.report.options import ReportOptions
from embdiag.report.sections import frontier, summary

RULES = ["overlap@5<0.97", "delta_p@5.low<-50"]


@pytest.fixture(scope="module")
def report():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 400)
    X = (2 * rng.standard_normal((3, 16))[y] + rng.standard_normal((400, 16))).astype(np.float32)
    files = {
        "VECTORS": {"file": "emb.npy", "bytes": 1, "sha256": "ab" * 32},
        "--labels": {"file": "lab.csv", "bytes": 1, "sha256": "cd" * 32},
    }
    labels = pd.DataFrame({"cls": [f"c{v}" for v in y]})
    return measure(
        X, labels=labels, compress="fp16,pca4", k=5, seed=3, margin=2.0, fail_if=RULES, sources=files, progress=False
    )


def test_the_command_shown_is_the_one_the_report_records(report):
    args = page.recorded(report, out="out")
    given = ReportOptions.from_namespace(cli.build_parser().parse_args(args))
    assert (given.vectors, given.labels, given.compress, given.k, given.seed) == (
        "emb.npy",
        "lab.csv",
        "fp16,pca4",
        5,
        3,
    )
    assert (given.margin, given.fail_if, given.out, given.index) == (2.0, tuple(RULES), "out", "")
    files, report.inputs["files"] = report.inputs["files"], {}  # the book's cached vectors: placeholders
    try:
        assert page.recorded(report)[:3] == ["vectors.npy", "--labels", "labels.csv"]
    finally:
        report.inputs["files"] = files


def test_the_result_box_puts_each_verdict_beside_its_condition_and_names_the_smallest_passing(report):
    html = summary.result(report).html
    rows = re.findall(r"<tr><td><strong>(.*?)</strong></td><td>(.*?)</td><td>(.*?)</td>", html)
    assert [(c, v) for c, v, _ in rows] == [(e["condition"], e["verdict"]) for e in report.summary]
    assert [changed for *_, changed in rows] == [f"{100 * e['changed_queries']:.3g}%" for e in report.summary]
    counts = {v: sum(e["verdict"] == v for e in report.summary) for v in {e["verdict"] for e in report.summary}}
    assert all(f"{n} {v}" in html for v, n in counts.items()) and "against a 2 pp margin" in html
    best = frontier.smallest_passing(report.tables["frontier"])
    assert best is not None and f"<strong>{best['condition']}</strong>, {best['bytes_per_vector']:,.0f} bytes" in html
    failed = sum(not g["passed"] for g in report.gates)
    assert f"{failed} of {len(report.gates)} rule checks fail" in html


def test_the_page_opens_with_the_result_then_the_data_and_command_then_folded_detail(report):
    text = page.render(report, "test data", title="t", arguments=page.recorded(report))
    body = text[text.index("<main") :]
    box, data = body.index('class="embdiag-result"'), body.index("<strong>Data:</strong> test data")
    command = body.index("embdiag report emb.npy --labels lab.csv")
    assert box < data < command < body.index("<details") and body.index("<h1>") < box
    assert box < body.index("<h2>")


def _point_layers(spec):
    for layer in spec.get("layer", []):
        enc = layer.get("encoding", {})
        if "shape" in enc:
            yield layer["mark"], enc["shape"]


def test_the_frontier_legend_draws_each_set_as_its_marks_and_the_caption_says_so(report):
    spec = frontier.chart(report.tables["frontier"], 5, 64.0, margin=2.0).to_dict()
    left, right = spec["hconcat"]
    for panel, legend in ((left, True), (right, False)):
        drawn = {
            shape["scale"]["domain"][0]: (shape["scale"]["range"][0], mark["filled"])
            for mark, shape in _point_layers(panel)
        }
        assert drawn == dict(frontier.MARKS)
        assert all(("legend" in shape) != legend for _, shape in _point_layers(panel))  # one legend, the left's
    assert frontier.marks_sentence() == "filled circles: the Pareto set; hollow diamonds: dominated"
    box = frontier.result(report).html
    assert "Filled circles: the Pareto set; hollow diamonds: dominated; names on the right" in box
    names = [r for r in report.tables["frontier"].loc[report.tables["frontier"]["pareto"], "condition"]]
    assert ", ".join(f"<strong>{n}</strong>" for n in names) in box


def test_a_crowded_pareto_set_names_no_two_members_on_top_of_each_other():
    x, y = np.array([100.0, 101, 102, 400]), np.array([50.0, 50, 51, 50])
    spots = frontier.label_spots(x, y, ["int8", "int8cal", "fp8", "big"], [True, True, True, True], 420)
    assert len({s for s in spots[:3] if s}) == sum(bool(s) for s in spots[:3]) >= 2  # each in its own spot
    assert spots[3] in ("left above", "left below")  # beside the right edge: named to its left


def test_the_conditions_are_described_in_a_folded_list_one_line_each(report):
    folded = sections.conditions.described(report)
    names = list(report.tables["conditions"]["name"])
    assert folded.title == "What each condition is" and len(folded.text.splitlines()) == len(names)
    assert all(line.startswith(f"- **{n}** (") for line, n in zip(folded.text.splitlines(), names))
    assert folded._repr_html_().count("<li>") == len(names)
