"""The report chapter's sections as exhibits: what ``embdiag report`` shows of a
:class:`~embdiag.report.Report`.

:func:`section` returns the displayable parts of one section (the section's scope sentence, then
its tables and figures through :mod:`embdiag.paper.exhibits`), or one sentence saying why the
section was not measured. Every caption names the data (``source``) and the
uncertainty shown. The charts are plain Altair, drawn offline like the book's.
"""

from __future__ import annotations

import html

import altair as alt
import pandas as pd
from IPython.display import Markdown

from ..artifacts import Read
from ..report import Report
from ..report.cli import CHAPTER
from . import exhibits

__all__ = ["SECTIONS", "overview", "section", "labels_chart", "identity_chart", "relevance_chart"]

#: Section -> why it can be missing (the chapter's headings name the sections).
SECTIONS = {
    "conditions": "no second representation (--compare, --compress or --index) was given",
    "geometry": "",
    "labels": "no --labels file was given",
    "identity": "no second representation (--compare, --compress or --index) was given",
    "relevance": "it needs labels (with queries drawn from VECTORS) or --pairs, and a second representation",
    "stress": "--stress was not asked for",
}


def overview(report: Report, source: str) -> Markdown:
    """Which data, how much of it, and how it was sampled; notes on anything left out."""
    i = report.inputs
    s = i["sampling"]
    lines = [f"**Data:** {source}. {i['n']:,} vectors of dimension {i['d']}, k = {i['k']}, seed {i['seed']}."]
    if "quick_statement" in i:
        lines.append(f"**{i['quick_statement']}**")
    lines.append(f"**Searched:** {s['queries']} as queries, against {s['gallery']} ({i['exact_search']}).")
    lines.append(f"**Samples:** geometry on {s['geometry']}; probes on {s['probes']}; intervals from "
                 f"{s['bootstrap']}.")
    lines += [f"- Note: {note}" for note in i["notes"]]
    return Markdown("\n\n".join(lines))


def _provenance(report: Report) -> dict:
    """The provenance arguments of a report's exhibits: for a user's files, made by
    ``embdiag report`` from those files (name, option, SHA-256); else (the book's run on the
    project's cached vectors) the chapter pipeline's own line."""
    files = report.inputs.get("files") or {}
    if not files:
        return {}
    version = report.inputs.get("versions", {}).get("embdiag", "")
    made = (f"Made by <code>embdiag report</code>{' ' + html.escape(version) if version else ''} "
            f"(the book's chapter notebooks/{CHAPTER.name})")
    return {"made": made, "reads": [Read(f"{r['file']} ({option})", r["sha256"]) for option, r in files.items()]}


def _scope(report: Report, name: str) -> Markdown:
    if name in report.tables and not report.tables[name].empty:
        scope = report.scope.get(name)
        return Markdown(f"*Scope:* {scope}" if scope else "")
    return Markdown(f"*Not measured:* {SECTIONS[name]}.")


def section(report: Report, name: str, source: str) -> list:
    """The scope sentence and the exhibits of section ``name`` (one of :data:`SECTIONS`), or the
    reason it was not measured."""
    if name not in SECTIONS:
        raise ValueError(f"name: unknown section {name!r}; sections are {', '.join(SECTIONS)}")
    parts = [_scope(report, name)]
    table = report.tables.get(name)
    if table is None or table.empty:
        return parts
    k = report.inputs["k"]
    on = f"Data: {source}."
    mark = _provenance(report)
    if name == "conditions":
        parts.append(exhibits.table(table, name="report-conditions", **mark, extremes=False, caption=(
            "Each condition compared with the reference VECTORS, with every parameter stated (a definition, "
            "not a measurement).")))
    elif name == "geometry":
        rows = int(table["n_rows"].iloc[0])
        every = rows == report.inputs["n"]
        parts.append(exhibits.table(table.set_index("representation"), name="report-geometry", **mark, caption=(
            f"Geometry of each representation on {'all' if every else 'the same'} {rows:,} "
            f"{'' if every else 'sampled '}rows: total variance, mean pairwise cosine, RankMe and participation "
            f"ratio (embdiag.metrics.geometry.summary). {on} {'No' if every else 'One sample, no'} interval.")))
    elif name == "labels":
        parts.append(exhibits.figure(labels_chart(table, k), name="report-labels", **mark, caption=(
            f"Balanced accuracy of a linear probe and P@{k} per label column and representation (dots), "
            f"with each measure's chance floor (grey tick). {on} One probe split and one query sample, no "
            "interval.")))
        parts.append(exhibits.table(table.set_index(["representation", "attribute"]),
                                    name="report-labels-table", **mark,
                                    extremes=[c for c in ("probe_ba", f"p@{k}") if c in table] or False,  # no floors
                                    caption=f"The values of the figure with their floors. {on}"))
        support = report.tables.get("support")
        if support is not None:
            parts.append(exhibits.table(support.set_index(["attribute", "class"]), name="report-support", **mark,
                                        extremes=False, caption=(
                f"Items per class; classes below {report.inputs['min_support']} items are not eligible for "
                f"probe accuracy or the comparisons. {on}")))
    elif name == "identity":
        parts.append(exhibits.figure(identity_chart(table, k), name="report-identity", **mark, caption=(
            f"Mean overlap@{k} of each condition's top {k} with exact search on the reference vectors (bar) and "
            f"the share of queries whose top-{k} set changed (dot). {on} Exact counts over "
            f"{int(table['n_queries'].iloc[0]):,} queries, no interval.")))
        parts.append(exhibits.table(table.set_index("condition"), name="report-identity-table", **mark, caption=(
            f"Identity per condition: overlap@{k}, changed queries (share), median boundary margin (rank-{k} "
            f"minus rank-{k + 1} reference score) of changed and unchanged queries, and for storage conditions "
            f"the float certificate's coverage and violations. {on}")))
    elif name == "relevance":
        parts.append(exhibits.figure(relevance_chart(table), name="report-relevance", **mark, caption=(
            "Change of each condition from the reference in percentage points (dot) with its 95% paired "
            "bootstrap interval over the searched queries (line); the dashed line is no change. "
            f"{on}")))
        parts.append(exhibits.table(table.set_index(["metric", "attribute", "condition"]),
                                    name="report-relevance-table", **mark, extremes=False,  # rows: metrics
                                    caption=(
            f"The changes with their intervals (low, high) and the number of queries. {on}")))
    elif name == "stress":
        parts.append(exhibits.table(table.set_index(["intervention", "severity"]), name="report-stress", **mark,
                                    caption=(f"Metrics of the reference vectors under each declared intervention "
                                             f"and severity (embdiag.interventions.stress). {on}")))
    return parts


def labels_chart(labels: pd.DataFrame, k: int = 10) -> alt.FacetChart:
    """Probe balanced accuracy and P@k per representation (dots) with their floors (ticks), one
    panel per measure and label column."""
    parts = []
    for value, floor, measure in (("probe_ba", "ba_floor", "probe BA"), (f"p@{k}", "p_floor", f"P@{k}")):
        if value in labels:
            parts.append(labels[["representation", "attribute", value, floor]].rename(
                columns={value: "value", floor: "floor"}).assign(measure=measure))
    data = pd.concat(parts, ignore_index=True).dropna(subset=["value"])
    order = list(dict.fromkeys(labels["representation"]))
    y = alt.Y("representation:N", sort=order, title=None)
    dots = alt.Chart().mark_point(filled=True, size=60).encode(
        x=alt.X("value:Q", title="share", scale=alt.Scale(domain=[0, 1])), y=y,
        color=alt.Color("representation:N", sort=order, legend=None),
        tooltip=["representation", "attribute", "measure", alt.Tooltip("value:Q", format=".4f"),
                 alt.Tooltip("floor:Q", format=".4f")])
    floor = alt.Chart().mark_tick(color="gray", thickness=2).encode(x="floor:Q", y=y)
    return alt.layer(floor, dots, data=data).properties(width=220, height=18 * len(order)).facet(
        row=alt.Row("measure:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
        column=alt.Column("attribute:N", title=None, sort=list(dict.fromkeys(labels["attribute"]))))


def identity_chart(identity: pd.DataFrame, k: int = 10) -> alt.LayerChart:
    """Mean overlap@k per condition (bars) and the share of changed queries (dots)."""
    order = list(identity["condition"])
    data = identity[["condition", "kind", f"overlap@{k}", "changed_queries"]].rename(
        columns={f"overlap@{k}": "overlap"})
    y = alt.Y("condition:N", sort=order, title=None)
    bars = alt.Chart(data).mark_bar(opacity=0.6).encode(
        x=alt.X("overlap:Q", title=f"overlap@{k} (bar) and changed queries (dot), share",
                scale=alt.Scale(domain=[0, 1])), y=y, color=alt.Color("kind:N", title="kind"),
        tooltip=["condition", "kind", alt.Tooltip("overlap:Q", format=".4f"),
                 alt.Tooltip("changed_queries:Q", format=".4f")])
    dots = alt.Chart(data).mark_point(filled=True, color="black", size=50).encode(x="changed_queries:Q", y=y)
    return alt.layer(bars, dots).properties(width=360, height=22 * len(order))


def relevance_chart(relevance: pd.DataFrame) -> alt.FacetChart:
    """Each change in pp (dot) with its paired bootstrap interval (rule), one panel per measure and
    label column; the dashed rule is no change."""
    data = relevance.assign(panel=[f"{m} {a}".strip() for m, a in zip(relevance["metric"], relevance["attribute"])])
    order = list(dict.fromkeys(relevance["condition"]))
    y = alt.Y("condition:N", sort=order, title=None)
    x = alt.X("value:Q", title="change (pp)")
    rule = alt.Chart().mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", title="change (pp)"), x2="high:Q", y=y)
    dot = alt.Chart().mark_point(filled=True, size=50).encode(
        x=x, y=y, tooltip=["condition", "metric", "attribute", alt.Tooltip("value:Q", format="+.3f"),
                           alt.Tooltip("low:Q", format="+.3f"), alt.Tooltip("high:Q", format="+.3f"), "n_queries"])
    zero = alt.Chart().mark_rule(color="gray", strokeDash=[3, 3]).encode(x=alt.datum(0))
    return alt.layer(zero, rule, dot, data=data).properties(width=200, height=20 * len(order)).facet(
        facet=alt.Facet("panel:N", title=None, sort=list(dict.fromkeys(data["panel"]))), columns=3
    ).resolve_scale(x="independent")
