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
INTRO = "The conditions no other matches or beats on bytes, identity and relevance at once: the Pareto set."
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


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def result(report: Report) -> Result:
    """A result box for the frontier: the Pareto set by name, fewest bytes first, the smallest
    condition passing every rule, and the frontier figure (each member's numbers)."""
    table = report.tables["frontier"]
    k = report.inputs["k"]
    reference = int(report.inputs["bytes_per_vector"])
    pareto = list(table.loc[table["pareto"], "condition"])
    names = ", ".join(f"<strong>{html.escape(c)}</strong>" for c in pareto)
    text = f"Of {len(table)} conditions, {len(pareto)} form the Pareto set (fewest bytes first): {names}."
    if report.gates:
        from .summary import gates_sentence  # this module is imported by the summary's

        text += f" {gates_sentence(report)}"
    figure = exhibit.figure(
        chart(table, k, reference, room=theme.RESULT_PX, margin=report.inputs["margin_pp"]),
        name="frontier-result",
        caption=(
            f"Bytes per vector (log; dashed: the reference's {reference:,} as float32) against overlap@{k} (left), "
            f"and each condition's lowest relevance change with its 95% interval (right; dashed: no change and "
            f"−{report.inputs['margin_pp']:g} pp). {_first_upper(marks_sentence())}; names on the right, and on the "
            "left beside the Pareto set where they fit."
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
            f"The frontier, fewest bytes first. times smaller: the reference's float32 rows ({reference:,} bytes) "
            "over the condition's bytes (its codes and per-row scale); lowest relevance change: of all its changes, "
            "the one whose interval reaches lowest; Pareto set: no other condition matches or beats it on bytes, "
            "overlap and lowest bound at once"
            + ("; gates: whether every --fail-if row of the condition passed." if "gates" in columns else ".")
        ),
    )


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    k = report.inputs["k"]
    reference = int(report.inputs["bytes_per_vector"])
    out = [
        exhibit.figure(
            chart(table, k, reference, margin=report.inputs["margin_pp"]),
            name="report-frontier",
            **mark,
            caption=(
                f"Bytes per vector (log; dashed: the reference's {reference:,} as float32) against overlap@{k} with "
                "exact search (left), and each condition's lowest relevance change with its 95% interval (right; "
                f"dashed: no change and −{report.inputs['margin_pp']:g} pp). {_first_upper(marks_sentence())}: the "
                "Pareto set holds what no other condition matches or beats on bytes, overlap and lowest bound at once, "
                "named on the left where its names fit; every condition is named on the right."
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


#: How each set is marked in :func:`chart`: its shape, and whether the mark is filled.
MARKS = {"Pareto set": ("circle", True), "dominated": ("diamond", False)}


def marks_sentence() -> str:
    """How :func:`chart` marks the Pareto set and the others, in words, from :data:`MARKS`.

    Example:
        >>> marks_sentence()
        'filled circles: the Pareto set; hollow diamonds: dominated'
    """
    said = []
    for name, (shape, filled) in MARKS.items():
        said.append(f"{'filled' if filled else 'hollow'} {shape}s: {'the ' if name == 'Pareto set' else ''}{name}")
    return "; ".join(said)


#: Where a Pareto member's name may sit beside its mark: (dx, dy, align), tried in this order.
LABEL_SPOTS = {
    "above": (6, -9, "left"),
    "below": (6, 12, "left"),
    "left above": (-6, -9, "right"),
    "left below": (-6, 12, "right"),
    "high": (0, -22, "center"),
    "low": (0, 25, "center"),
}
#: Width (px) of one character of a 12 px label, and a label's height: to keep names apart.
_CHAR_PX, _LABEL_PX = 7.2, 14


def label_spots(x_px, y_px, names, pareto, width: float) -> list[str]:
    """For each mark at pixel ``(x_px, y_px)``, where its name goes (a key of :data:`LABEL_SPOTS`),
    or ``""``: only the Pareto set is named, fewest bytes first, each name inside ``width`` in the
    first spot that covers no mark and no name placed before it, else in the first that covers
    only dominated marks; a name with neither is left to the tooltip.

    Example:
        >>> label_spots([100, 102, 300], [50, 50, 50], ["a", "b", "c"], [True, True, False], 400)
        ['below', 'above', '']
        >>> label_spots([100, 395], [50, 50], ["a", "b"], [True, True], 400)  # b's name would leave the panel
        ['above', 'left above']
    """
    marks = [((x - 5, y - 5, x + 5, y + 5), bool(m)) for x, y, m in zip(x_px, y_px, pareto)]
    taken = [box for box, member in marks if member]  # the Pareto set's marks, then the names placed
    dominated = [box for box, member in marks if not member]
    out = []
    for x, y, name, member in zip(x_px, y_px, names, pareto):
        w = _CHAR_PX * len(str(name))
        spots = []
        for key, (dx, dy, align) in LABEL_SPOTS.items() if member else ():
            left = x + dx - {"left": 0, "center": w / 2, "right": w}[align]
            if 0 <= left and left + w <= width:
                spots.append((key, (left, y + dy - _LABEL_PX / 2, left + w, y + dy + _LABEL_PX / 2)))
        free = [(k, box) for k, box in spots if not any(_overlap(box, b) for b in taken)]
        clear = [(k, box) for k, box in free if not any(_overlap(box, b) for b in dominated)]
        key, box = (clear or free or [("", None)])[0]
        if box is not None:
            taken.append(box)
        out.append(key)
    return out


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def chart(
    frontier: pd.DataFrame, k: int, reference_bytes: float, room: int = theme.COLUMN_PX, margin: float | None = None
) -> alt.HConcatChart:
    """Bytes per vector (log x) against overlap@k (left; the reference's bytes dashed), and each
    condition's lowest relevance change with its interval (right, when measured; conditions fewest
    bytes first; dashed: no change and, given, ``-margin``). Marks as
    :data:`MARKS` say (the Pareto set named beside its marks where a name fits,
    :func:`label_spots`; every mark named on hover); colour is the condition's kind. Two panels
    share ``room`` pixels."""
    data = frontier.assign(
        set=frontier["pareto"].map({True: "Pareto set", False: "dominated"}),
        overlap=frontier[f"overlap@{k}"],
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
    width, height = theme.panel_width(2, gap=70, room=room), 260
    floor = max(0.0, float(np.floor((data["overlap"].min() - 0.02) * 10) / 10))
    span = np.log(high) - np.log(low)
    data["label"] = label_spots(
        width * (np.log(data["bytes_per_vector"]) - np.log(low)) / span,
        height * (1 - (data["overlap"] - floor) / (1 - floor)),
        data["condition"],
        data["pareto"],
        width,
    )

    def shape(name: str, legend: bool) -> alt.Shape:
        return alt.Shape(
            "set:N",
            title=None,
            scale=alt.Scale(domain=[name], range=[MARKS[name][0]]),
            legend=alt.Undefined if legend else None,
        )

    def points(x, y, tooltip, legend: bool) -> list:
        """One layer per set, each with its own one-entry shape scale, so that its legend entry is
        drawn as its marks are (filled or hollow)."""
        layers = []
        for name, (_, filled) in MARKS.items():
            layers.append(
                alt.Chart()
                .transform_filter(alt.datum.set == name)
                .mark_point(size=70, filled=filled)
                .encode(x=x, y=y, color=kind_colour(), shape=shape(name, legend), tooltip=tooltip)
            )
        return layers

    ref = (
        alt.Chart()
        .mark_rule(color=theme.PALETTE["grey"], strokeDash=theme.DASHES["reference"])
        .encode(x=alt.datum(reference_bytes))
    )
    overlap = alt.Y("overlap:Q", title=f"overlap@{k} (share)", scale=alt.Scale(domain=[floor, 1]))
    names = [
        alt.Chart()
        .transform_filter(alt.datum.label == key)
        .mark_text(align=align, dx=dx, dy=dy)
        .encode(x=x, y=overlap, text="condition:N")
        for key, (dx, dy, align) in LABEL_SPOTS.items()
    ]
    left = (
        alt.layer(ref, *points(x, overlap, about + ["overlap"], True), *names, data=data)
        .resolve_scale(shape="independent")
        .properties(width=width, height=height)
    )
    measured = data.dropna(subset=["lowest_low"])
    if measured.empty:
        return theme.legend_below(alt.hconcat(left))
    order = list(measured["condition"])  # fewest bytes first
    y = alt.Y("condition:N", title=None, sort=order)
    change = alt.X("lowest_value:Q", title="lowest relevance change (pp)")
    interval = (
        alt.Chart()
        .mark_rule(strokeWidth=2)
        .encode(
            x=alt.X("lowest_low:Q", title="lowest relevance change (pp)"), x2="lowest_high:Q", y=y, color=kind_colour()
        )
    )
    lines = [  # reference levels: no change, and the loss margin
        alt.Chart().mark_rule(color=theme.PALETTE["grey"], strokeDash=theme.DASHES["reference"]).encode(x=alt.datum(v))
        for v in [0.0] + ([-margin] if margin is not None else [])
    ]
    tip = about + [alt.Tooltip(f"{f}:Q", format="+.2f") for f in ("lowest_value", "lowest_low", "lowest_high")]
    right = (
        alt.layer(*lines, interval, *points(change, y, tip, False), data=measured)
        .resolve_scale(shape="independent")
        .properties(width=width, height=max(120, 20 * len(measured)))
    )
    return theme.legend_below(alt.hconcat(left, right))
