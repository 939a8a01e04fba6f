"""The frontier: bytes per vector against identity and the lowest relevance bound, the Pareto set
against its definition by brute force, and the smallest condition that passes every gate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embdiag.report import measure
from embdiag.report.sections.frontier import frontier_table, smallest_passing


def _summary(rows, k=10):
    return [
        {
            "condition": name,
            "kind": "storage",
            f"overlap@{k}": overlap,
            "relevance": []
            if low is None
            else [{"metric": "delta_p@10", "attribute": "a", "value": low + 1, "low": low, "high": low + 2}],
        }
        for name, overlap, low in rows
    ]


def _dominates(a, b) -> bool:
    both = a["low"] is not None and b["low"] is not None
    geq = a["bytes"] <= b["bytes"] and a["overlap"] >= b["overlap"] and (not both or a["low"] >= b["low"])
    gt = a["bytes"] < b["bytes"] or a["overlap"] > b["overlap"] or (both and a["low"] > b["low"])
    return geq and gt


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([48, 96, 192, 384, 772, 1536]),
            st.sampled_from([0.5, 0.8, 0.9, 1.0]),
            st.one_of(st.none(), st.sampled_from([-3.0, -1.0, 0.0])),
        ),
        min_size=1,
        max_size=7,
    )
)
def test_the_pareto_set_is_the_undominated_conditions(points):
    names = [f"c{i}" for i in range(len(points))]
    summary = _summary([(n, o, lo) for n, (_, o, lo) in zip(names, points)])
    identity = pd.DataFrame({"condition": names, "bytes_per_vector": [float(b) for b, _, _ in points]})
    table = frontier_table(summary, identity, [], 3072.0, 10).set_index("condition")
    rows = {n: {"bytes": b, "overlap": o, "low": lo} for n, (b, o, lo) in zip(names, points)}
    for n in names:
        undominated = not any(_dominates(rows[m], rows[n]) for m in names if m != n)
        assert table.loc[n, "pareto"] == undominated, (n, rows)
    assert list(table["bytes_per_vector"]) == sorted(table["bytes_per_vector"])
    assert table["times_smaller"].tolist() == pytest.approx([3072 / b for b in table["bytes_per_vector"]])


def test_the_smallest_passing_condition_reads_every_gate_row():
    summary = _summary([("int4", 0.8, -2.0), ("int8", 0.97, -0.5), ("fp16", 1.0, 0.0)])
    identity = pd.DataFrame({"condition": ["int4", "int8", "fp16"], "bytes_per_vector": [384.0, 772.0, 1536.0]})
    gates = [
        {"condition": "int4", "passed": True},
        {"condition": "int4", "passed": False},  # one failing row fails the condition
        {"condition": "int8", "passed": True},
        {"condition": "fp16", "passed": True},
        {"condition": "reference", "passed": False},  # a reference row names no condition of the frontier
    ]
    table = frontier_table(summary, identity, gates, 3072.0, 10)
    assert table["gates"].tolist() == ["failed", "passed", "passed"]
    assert smallest_passing(table)["condition"] == "int8"
    assert smallest_passing(frontier_table(summary, identity, [], 3072.0, 10)) is None


def test_a_measured_report_has_its_frontier():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 400)
    X = (2 * rng.standard_normal((3, 16))[y] + rng.standard_normal((400, 16))).astype(np.float32)
    labels = pd.DataFrame({"cls": [f"c{v}" for v in y]})
    report = measure(
        X, labels=labels, compress="fp16,int8,int4,binary,prefix8", k=5, progress=False, fail_if=["delta_p@5.low<-2"]
    )
    table = report.tables["frontier"].set_index("condition")
    assert report.inputs["bytes_per_vector"] == 64.0
    assert table.loc["binary", "bytes_per_vector"] == 2 and table.loc["prefix8", "bytes_per_vector"] == 32
    relevance = report.tables["relevance"]
    for name, row in table.iterrows():
        mine = relevance[relevance.condition == name]
        assert row["lowest_low"] == mine["low"].min()
        assert row["overlap@5"] == report.tables["identity"].set_index("condition").loc[name, "overlap@5"]
    assert table.loc["binary", "pareto"]  # nothing is smaller
    assert not table.loc["fp16", "pareto"] or table.loc["fp16", "overlap@5"] > table.loc["int8", "overlap@5"]
    gates = pd.DataFrame(report.gates)
    failed = set(gates.loc[~gates.passed, "condition"])
    assert set(table.index[table.gates == "failed"]) == failed
    best = smallest_passing(report.tables["frontier"])
    assert best is None or best["condition"] not in failed
    assert "frontier" in report.scope
