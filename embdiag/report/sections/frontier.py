"""The compression frontier: each condition's quality against the bytes one vector takes.

Quality is read, never judged twice: identity (overlap@k with exact search on the reference) and
relevance (the condition's lowest interval bound over every relevance change it has: ΔP@k per
label column, ΔHit@k, Δrecall@k, in percentage points). A condition is on the **Pareto set**
when no other condition takes at most as many bytes per vector with at least as high an
overlap@k and at least as high a lowest bound (relevance compared only when both have it), one
of them strictly. With ``--fail-if`` rules, the **smallest passing** condition is the one of
fewest bytes whose every gate row passed.

The page shows the frontier table and chart, the Pareto set and the smallest passing condition
(:func:`result`).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import altair as alt
import numpy as np
import pandas as pd

from ...view import exhibits as exhibit
from ...view import theme
from ...view.markdown import Markdown
from ...view.result import Result, box
from .presentation import NO_CONDITION, for_reading, kind_colour, provenance, section
from .summary import change_name

if TYPE_CHECKING:
    from ..measurement import Report


COLUMNS = [
    "condition",
    "kind",
    "bytes_per_vector",
    "times_smaller",
    "overlap@k",
    "lowest_metric",
    "lowest_attribute",
    "lowest_low",
    "lowest_value",
    "lowest_high",
    "pareto",
    "gates",
]


def _lowest(relevance: list[dict]) -> dict:
    """The relevance change whose interval reaches lowest (its name, bound, value and upper end)."""
    rows = [r for r in relevance if r.get("low") is not None and not pd.isna(r["low"])]
    if not rows:
        return {"lowest_metric": "", "lowest_attribute": "", "lowest_low": np.nan, "lowest_value": np.nan,
                "lowest_high": np.nan}  # fmt: skip
    r = min(rows, key=lambda r: (r["low"], r["metric"], r["attribute"]))
    return {
        "lowest_metric": r["metric"],
        "lowest_attribute": r["attribute"],
        "lowest_low": r["low"],
        "lowest_value": r["value"],
        "lowest_high": r["high"],
    }


def _dominated(i: int, table: pd.DataFrame) -> bool:
    me = table.iloc[i]
    for j in range(len(table)):
        other = table.iloc[j]
        if j == i:
            continue
        both = not (np.isnan(me.lowest_low) or np.isnan(other.lowest_low))
        at_least = (
            other.bytes_per_vector <= me.bytes_per_vector
            and other["overlap@k"] >= me["overlap@k"]
            and (not both or other.lowest_low >= me.lowest_low)
        )
        strictly = (
            other.bytes_per_vector < me.bytes_per_vector
            or other["overlap@k"] > me["overlap@k"]
            or (both and other.lowest_low > me.lowest_low)
        )
        if at_least and strictly:
            return True
    return False


def frontier_table(summary: list[dict], identity: pd.DataFrame, gates: list[dict], reference_bytes: float, k: int):
    """One row per measured condition (:data:`COLUMNS`, ``overlap@k`` named for ``k``), fewest bytes
    first: its bytes per vector (and how many times fewer than the reference's ``reference_bytes``),
    overlap@k, its lowest relevance change with interval, whether it is on the Pareto set, and its
    gates (``"passed"``, ``"failed"``, or ``""`` when no rule reads it).

    Example:
        >>> summary = [{"condition": c, "kind": "storage", f"overlap@10": o, "relevance": [{"metric": "delta_p@10",
        ...             "attribute": "", "value": v, "low": v - 1, "high": v + 1}]}
        ...            for c, o, v in (("int8", 0.99, 0.0), ("int4", 0.9, -0.5), ("fp16", 0.99, 0.0))]
        >>> identity = pd.DataFrame({"condition": ["int8", "int4", "fp16"], "bytes_per_vector": [772, 384, 1536]})
        >>> table = frontier_table(summary, identity, [], 3072, 10)
        >>> table[["condition", "pareto"]].to_dict("list")  # fp16: as good as int8, and larger
        {'condition': ['int4', 'int8', 'fp16'], 'pareto': [True, True, False]}
    """
    size = identity.set_index("condition")["bytes_per_vector"]
    failed = {g["condition"] for g in gates if not g["passed"]}
    read = {g["condition"] for g in gates}
    rows = []
    for entry in summary:
        name = entry["condition"]
        if name not in size.index or pd.isna(size[name]):  # cannot represent the rows: nothing measured
            continue
        rows.append(
            {
                "condition": name,
                "kind": entry["kind"],
                "bytes_per_vector": float(size[name]),
                "times_smaller": reference_bytes / float(size[name]),
                "overlap@k": float(entry[f"overlap@{k}"]),
                **_lowest(entry["relevance"]),
                "gates": "failed" if name in failed else "passed" if name in read else "",
            }
        )
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "pareto"])
    table["lowest_low"] = table["lowest_low"].astype(float)
    table = table.sort_values(["bytes_per_vector", "condition"], kind="stable").reset_index(drop=True)
    table.insert(COLUMNS.index("pareto"), "pareto", [not _dominated(i, table) for i in range(len(table))])
    return table.rename(columns={"overlap@k": f"overlap@{k}"})


def smallest_passing(table: pd.DataFrame) -> dict | None:
    """The row of fewest bytes per vector whose gates all passed (None when no rule read a
    condition, or none passed)."""
    passed = table[table["gates"] == "passed"]
    return None if passed.empty else passed.iloc[0].to_dict()


NAME = "frontier"
TITLE = "The frontier: what each condition keeps for its bytes"
INTRO = (
    "The Pareto set holds the conditions that no other matches or beats on bytes, identity and "
    "relevance at once; with `--fail-if` rules, the smallest condition that passes every one is "
    "named."
)
#: Why the section can be missing.
MISSING = NO_CONDITION
#: What the section establishes and what not (the report's ``scope``).
SCOPE = (
    "What each condition keeps (identity, and the lowest bound of its relevance intervals) against "
    "the bytes one vector takes, and which conditions no other beats on all of these at once; the "
    "bytes count a vector's codes, not the shared tables, and not search speed."
)


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence, the frontier figure and table, or why there are none."""
    return section(report, NAME, MISSING, _draw)


def _lowest_name(row: dict) -> str:
    """The name of a frontier row's lowest relevance change (``ΔP@10 weather``)."""
    return change_name({"metric": row["lowest_metric"], "attribute": row["lowest_attribute"]})


def result(report: Report) -> Result:
    """A result box for the frontier: the Pareto set with each member's bytes, overlap and lowest
    relevance bound, the smallest condition passing every rule, and the frontier figure."""
    table = report.tables["frontier"]
    k = report.inputs["k"]
    reference = int(report.inputs["bytes_per_vector"])

    def member(r) -> str:
        low = "" if not r["lowest_metric"] else f", {_lowest_name(r)} reaching {r['lowest_low']:+.2f} pp"
        return (
            f"<strong>{html.escape(r['condition'])}</strong> ({r['bytes_per_vector']:,.0f} bytes, "
            f"overlap@{k} {100 * r[f'overlap@{k}']:.1f}%{low})"
        )

    pareto = table[table["pareto"]]
    text = (
        f"Of {len(table)} conditions measured against the reference's {reference:,} bytes per vector (float32), "
        f"{len(pareto)} form the Pareto set: " + "; ".join(member(r) for r in pareto.to_dict("records")) + "."
    )
    if report.gates:
        best = smallest_passing(table)
        rules = ", ".join(f"<code>{html.escape(g)}</code>" for g in dict.fromkeys(g["rule"] for g in report.gates))
        text += f" The smallest condition passing every rule ({rules}, each the failing side): " + (
            f"<strong>{html.escape(best['condition'])}</strong>, {best['times_smaller']:.3g} times smaller."
            if best is not None
            else "none."
        )
    figure = exhibit.figure(
        chart(table, k, reference, room=theme.RESULT_PX),
        name="frontier-result",
        caption=(
            f"Bytes per vector (log axis; dashed: the reference's {reference:,}) against overlap@{k} (left) and the "
            "lowest relevance change with its 95% interval (right); filled marks are the Pareto set."
        ),
    )
    return box(text, figure=figure)


def ranked(report: Report, mark: dict | None = None) -> exhibit.Exhibit:
    """The frontier as a table, fewest bytes first (:func:`embdiag.report.frontier.frontier_table`)."""
    table = report.tables["frontier"]
    k = report.inputs["k"]
    reference = int(report.inputs["bytes_per_vector"])  # the reference as float32 rows
    records = table.to_dict("records")
    shown = table.assign(
        pareto=table["pareto"].map({True: "yes", False: ""}),
        lowest=[_lowest_name(r) if r["lowest_metric"] else "—" for r in records],
        change=[
            f"{r['lowest_value']:+.2f} [{r['lowest_low']:+.2f}, {r['lowest_high']:+.2f}]" if r["lowest_metric"] else "—"
            for r in records
        ],
    )
    columns = ["condition", "kind", "bytes_per_vector", "times_smaller", f"overlap@{k}", "lowest", "change", "pareto"]
    if table["gates"].astype(bool).any():
        columns.append("gates")
    shown = for_reading(shown[columns]).rename(
        columns={
            "times_smaller": "times smaller",
            "lowest": "lowest relevance change",
            "change": "its change, pp [95% interval]",
            "pareto": "Pareto set",
        }
    )
    return exhibit.table(
        shown.set_index("condition"),
        name="report-frontier-table",
        **(mark if mark is not None else provenance(report)),
        extremes=[f"overlap@{k} (%)"],
        caption=(
            "The frontier, fewest bytes first. bytes per vector: a vector's codes and per-row scale (shared "
            f"tables not counted); times smaller: the reference's float32 rows ({reference:,} bytes) over it; "
            "lowest relevance change: of all the condition's changes (per label column, Hit@k, recall@k, nDCG, "
            "MRR, MAP), the one whose interval reaches lowest; Pareto set: no other condition takes at most as "
            "many bytes with at least as high an overlap and lowest bound, one strictly"
            + ("; gates: whether every --fail-if row of the condition passed." if "gates" in columns else ".")
        ),
    )


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    k = report.inputs["k"]
    reference = int(report.inputs["bytes_per_vector"])
    out = [
        exhibit.figure(
            chart(table, k, reference),
            name="report-frontier",
            **mark,
            caption=(
                "Each condition's bytes per vector (log axis; the dashed line is the reference's float32 rows, "
                f"{reference:,} bytes) against what it keeps: overlap@{k} with exact search on the reference (left) "
                "and the lowest relevance change with its 95% interval (right, where relevance was measured). Filled "
                "marks: the Pareto set, conditions that no other matches or beats on bytes, overlap and lowest bound "
                "at once."
            ),
        ),
        ranked(report, mark),
    ]
    best = smallest_passing(table)
    if best is not None:
        out.insert(
            0,
            Markdown(
                f"**Smallest condition passing every rule:** `{best['condition']}`, {best['bytes_per_vector']:,.0f} "
                f"bytes per vector ({best['times_smaller']:.3g} times smaller than the reference)."
            ),
        )
    return out


def chart(frontier: pd.DataFrame, k: int, reference_bytes: float, room: int = theme.COLUMN_PX) -> alt.HConcatChart:
    """Bytes per vector (log x) against overlap@k (left) and against the lowest relevance change
    with its interval (right, when measured); filled marks and names are the Pareto set (the
    others are named on hover), the dashed line the reference's bytes; colour is the condition's
    kind. Two panels share ``room`` pixels."""
    pareto_rank = frontier["pareto"].cumsum().where(frontier["pareto"], 0)  # 1, 2, ... by bytes
    data = frontier.assign(
        set=frontier["pareto"].map({True: "Pareto set", False: "dominated"}),
        overlap=frontier[f"overlap@{k}"],
        label=np.where(pareto_rank % 2 == 1, "above", np.where(frontier["pareto"], "below", "")),
    )
    low, high = float(data["bytes_per_vector"].min()) / 1.5, reference_bytes * 1.5
    ticks = [v for e in range(0, 8) for v in (10**e, 3 * 10**e) if low <= v <= high]
    x = alt.X(
        "bytes_per_vector:Q",
        title="bytes per vector (log)",
        scale=alt.Scale(type="log", domain=[low, high]),
        axis=alt.Axis(values=ticks, format=",.0f"),
    )
    about = ["condition", "kind", alt.Tooltip("bytes_per_vector:Q", format=",.0f"), "set"]
    shape = alt.Shape(
        "set:N", title=None, scale=alt.Scale(domain=["Pareto set", "dominated"], range=["circle", "diamond"])
    )
    ref = (
        alt.Chart()
        .mark_rule(color=theme.PALETTE["grey"], strokeDash=theme.DASHES["reference"])
        .encode(x=alt.datum(reference_bytes))
    )
    width = theme.panel_width(2, gap=70, room=room)

    def points(y: alt.Y, extra=()):
        base = alt.Chart().encode(x=x, y=y, color=kind_colour(), shape=shape)
        hollow = base.transform_filter(alt.datum.pareto == False).mark_point(size=70, filled=False)  # noqa: E712
        solid = base.transform_filter(alt.datum.pareto == True).mark_point(size=70, filled=True)  # noqa: E712
        labels = [  # the Pareto set named, alternately above and below its marks (neighbours differ)
            alt.Chart()
            .transform_filter(alt.datum.label == side)
            .mark_text(align="left", dx=6, dy=dy)
            .encode(x=x, y=y, text="condition:N")
            for side, dy in (("above", -9), ("below", 12))
        ]
        return [*extra, hollow.encode(tooltip=about + ["overlap"]), solid.encode(tooltip=about + ["overlap"]), *labels]

    floor = max(0.0, float(np.floor((data["overlap"].min() - 0.02) * 10) / 10))
    overlap = alt.Y("overlap:Q", title=f"overlap@{k} (share)", scale=alt.Scale(domain=[floor, 1]))
    left = alt.layer(ref, *points(overlap), data=data).properties(width=width, height=260)
    measured = data.dropna(subset=["lowest_low"])
    if measured.empty:
        return theme.legend_below(alt.hconcat(left))
    y = alt.Y("lowest_value:Q", title="lowest relevance change (pp)")
    interval = (
        alt.Chart().mark_rule(strokeWidth=2).encode(x=x, y="lowest_low:Q", y2="lowest_high:Q", color=kind_colour())
    )
    zero = (
        alt.Chart().mark_rule(color=theme.PALETTE["grey"], strokeDash=theme.DASHES["reference"]).encode(y=alt.datum(0))
    )
    right = alt.layer(ref, zero, *points(y, extra=[interval]), data=measured).properties(width=width, height=260)
    return theme.legend_below(alt.hconcat(left, right))
