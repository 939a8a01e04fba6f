"""The report chapter's sections as exhibits: what ``embdiag report`` shows of a
:class:`~embdiag.report.Report`.

:func:`section` returns the displayable parts of one section (the section's scope sentence, then
its tables and figures through :mod:`embdiag.view.exhibits`), or one sentence saying why the
section was not measured; ``summary`` (each condition's identity, relevance, probe change and
verdict) comes first on the page and ``gates`` (the ``--fail-if`` outcomes) last. Every caption
names the data (``source``), the uncertainty shown and what each column means. The charts are
plain Altair, drawn offline like the book's, each condition coloured by its kind
(:data:`KIND_COLOURS`, the same in every chart).
"""

from __future__ import annotations

import html
import re

import altair as alt
import numpy as np
import pandas as pd
from IPython.display import Markdown

from ..artifacts import Read
from ..report import Report
from ..report.cli import CHAPTER
from ..report.frontier import smallest_passing
from ..report.summary import CANNOT_REPRESENT, VERDICTS, change_name
from ..view import exhibits, theme
from ..view.result import Result, box

__all__ = [
    "SECTIONS",
    "KIND_COLOURS",
    "overview",
    "result",
    "section",
    "labels_chart",
    "identity_chart",
    "relevance_chart",
    "index_curves",
    "index_curve_chart",
]

#: Section -> why it can be missing (the chapter's headings name the sections).
SECTIONS = {
    "summary": "no second representation (--compare, --compress or --index) was given",
    "conditions": "no second representation (--compare, --compress or --index) was given",
    "geometry": "",
    "labels": "no --labels file was given",
    "identity": "no second representation (--compare, --compress or --index) was given",
    "relevance": "it needs labels (with queries drawn from VECTORS) or --pairs, and a second representation",
    "stress": "--stress was not asked for",
    "indexes": "no approximate index (--index) was given",
    "frontier": "no second representation (--compare, --compress or --index) was given",
    "gates": "no --fail-if rule was given",
}
#: One colour per kind of representation, used by every chart of the report.
KIND_COLOURS = {kind: theme.colour(kind) for kind in ("reference", "file", "storage", "compression", "index")}


def _kind_colour(title: str | None = "kind") -> alt.Color:
    """The colour channel of every report chart: field ``kind``, :data:`KIND_COLOURS`."""
    scale = alt.Scale(domain=list(KIND_COLOURS), range=list(KIND_COLOURS.values()))
    return alt.Color("kind:N", title=title, scale=scale)


def _kinds(report: Report) -> dict[str, str]:
    """Representation name -> its kind (``reference`` for the reference vectors)."""
    return {"reference": "reference", **{c["name"]: c["kind"] for c in report.inputs["conditions"]}}


def overview(report: Report, source: str) -> Markdown:
    """Which data, how much of it, and how it was sampled; notes on anything left out."""
    i = report.inputs
    s = i["sampling"]
    lines = [f"**Data:** {source}. {i['n']:,} vectors of dimension {i['d']}, k = {i['k']}, seed {i['seed']}."]
    if "quick_statement" in i:
        lines.append(f"**{i['quick_statement']}**")
    lines.append(f"**Searched:** {s['queries']} as queries, against {s['gallery']} ({i['exact_search']}).")
    lines.append(f"**Samples:** geometry on {s['geometry']}; probes on {s['probes']}; intervals from {s['bootstrap']}.")
    if "scored" in s:
        lines.append(f"**Relevance:** {s['scored']}.")
    missing = {a: m for a, m in i.get("missing_labels", {}).items() if m}
    if missing:
        lost = ", ".join(f"{a} {m:,} of {i['n']:,}" for a, m in missing.items())
        lines.append(f"**Missing labels** (each row left out for that attribute only): {lost}.")
    lines += [f"- Note: {note}" for note in i["notes"]]
    return Markdown("\n\n".join(lines))


def _worst(changes: list[dict]) -> str:
    """The informative relevance change with the lowest lower bound (as the frontier ranks them),
    in words (pp); the lowest of all when none is informative."""
    pool = [c for c in changes if c.get("informative", True)] or changes
    r = min(pool, key=lambda c: (c["low"], c["value"]))
    return f"{change_name(r)} {r['value']:+.2f} pp [{r['low']:+.2f}, {r['high']:+.2f}]"


def _needed(e: dict) -> str:
    """For an inconclusive condition, how many queries would decide it, in words ('' otherwise)."""
    n = e.get("queries_needed")
    if e["verdict"] != "inconclusive" or n is None or n != n:
        return ""
    return f"; about {n:,.0f} queries would decide it at this spread"


def result(report: Report) -> Result:
    """The page's result box: does each condition hurt these vectors? Conditions grouped by
    their verdict (:func:`embdiag.report.summary.verdict`), each with its share of changed
    top-k sets and its lowest-reaching relevance change, then the gates' outcome."""
    k = report.inputs["k"]
    if not report.summary:
        text = f"Nothing is compared: {html.escape(SECTIONS['summary'])}."
    else:
        groups: dict[str, list[str]] = {}
        for e in report.summary:
            if e["verdict"] == CANNOT_REPRESENT:
                detail = html.escape(e["reason"])  # not measured: why
            else:
                detail = f"{100 * e['changed_queries']:.3g}% of top-{k} sets changed"
            if e["relevance"]:
                detail += f"; lowest: {_worst(e['relevance'])}{_needed(e)}"
            groups.setdefault(e["verdict"], []).append(f"<strong>{html.escape(e['condition'])}</strong> ({detail})")
        order = sorted(groups, key=lambda v: VERDICTS.index(v) if v in VERDICTS else len(VERDICTS))
        margin = report.inputs["margin_pp"]
        text = f"Does each change cost more than {margin:g} pp of relevance? " + " ".join(
            f"<em>{html.escape(v)}</em>: {'; '.join(groups[v])}." for v in order
        )
    if report.gates:
        failed = sum(not g["passed"] for g in report.gates)
        text += f" Gates: {failed} of {len(report.gates)} rule checks fail" + (
            " (embdiag report exits with status 1)." if failed else "."
        )
    return box(text)


def _provenance(report: Report) -> dict:
    """The provenance arguments of a report's exhibits: for a user's files, made by
    ``embdiag report`` from those files (name, option, SHA-256); else (the book's run on the
    project's cached vectors) the chapter pipeline's own line."""
    files = report.inputs.get("files") or {}
    if not files:
        return {}
    version = report.inputs.get("versions", {}).get("embdiag", "")
    made = (
        f"Made by <code>embdiag report</code>{' ' + html.escape(version) if version else ''} "
        f"(the book's chapter notebooks/{CHAPTER.name})"
    )
    return {"made": made, "reads": [Read(f"{r['file']} ({option})", r["sha256"]) for option, r in files.items()]}


def _scope(report: Report, name: str) -> list[Markdown]:
    if name in report.tables and not report.tables[name].empty:
        scope = report.scope.get(name)
        return [Markdown(f"*Scope:* {scope}")] if scope else []
    unmeasurable = report.summary and all(e["verdict"] == CANNOT_REPRESENT for e in report.summary)
    if unmeasurable and name in ("identity", "relevance", "frontier"):
        return [Markdown("*Not measured:* no condition given can represent these vectors (see the summary).")]
    return [Markdown(f"*Not measured:* {_code_options(SECTIONS[name])}.")]


def _code_options(text: str) -> str:
    """``text`` with each ``--option`` as code, so Markdown keeps its two hyphens."""
    return re.sub(r"(--[a-z][a-z-]*)", r"`\1`", text)


#: Report columns as the page heads them.
_HEADERS = {
    "total_variance": "total variance",
    "mean_cosine": "mean cosine",
    "rankme": "RankMe",
    "participation_ratio": "participation ratio",
    "eligible_classes": "eligible classes",
    "missing_labels": "unlabelled rows",
    "probe_ba": "probe BA",
    "ba_floor": "BA floor",
    "p_floor": "P@k floor",
    "n_queries": "queries",
    "changed_queries": "changed queries",
    "median_margin_changed": "median margin, changed",
    "median_margin_unchanged": "median margin, unchanged",
    "cert_coverage": "certified",
    "cert_violations": "certified but changed",
    "bytes_per_vector": "bytes per vector",
    "queries_needed": "queries needed",
    "informative": "informative",
}
#: Columns holding a share (0-1), which the page shows in percent: exact names, then endings.
_SHARES = {"probe_ba", "ba_floor", "p_floor", "changed_queries", "cert_coverage"}
_SHARE_END = re.compile(r"(?:^| )(?:BA|accuracy|[pP]@\d+|overlap@\d+)$")


def _for_reading(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as a page shows it: shares in percent with ``(%)`` in their header, other
    columns under their readable name (:data:`_HEADERS`; ``p@k`` as ``P@k``)."""
    out = frame.copy()
    names = {}
    for c in out.columns:
        share = c in _SHARES or bool(_SHARE_END.search(c))
        name = _HEADERS.get(c, re.sub(r"^p@", "P@", c).replace(" p@", " P@"))
        if share:
            out[c] = 100.0 * out[c]
            name += " (%)"
        names[c] = name
    return out.rename(columns=names)


def section(report: Report, name: str, timings: bool = False) -> list:
    """The scope sentence and the exhibits of section ``name`` (one of :data:`SECTIONS`), or the
    reason it was not measured. ``timings``: show the run's speeds (``indexes``: queries per
    second and build time), which differ from run to run (a page that must re-execute byte for
    byte leaves them out)."""
    if name not in SECTIONS:
        raise ValueError(f"name: unknown section {name!r}; sections are {', '.join(SECTIONS)}")
    parts = _scope(report, name)
    table = report.tables.get(name)
    if table is None or table.empty:
        return parts
    if name == "indexes":
        return parts + _indexes(report, table, _provenance(report), timings)
    return parts + _EXHIBITS[name](report, table, _provenance(report))


def _summary(report: Report, table: pd.DataFrame, mark: dict) -> list:
    k, margin = report.inputs["k"], report.inputs["margin_pp"]
    lines = {c: table[c].str.replace("; ", "<br>") for c in ("relevance_change_pp", "probe_ba_change_pp")}
    shown = (
        _for_reading(table.assign(**lines))
        .rename(  # one change per line
            columns={
                "changed queries (%)": f"changed top-{k} (%)",
                "relevance_change_pp": "relevance change, pp [95% interval]",
                "probe_ba_change_pp": "probe BA change, pp",
            }
        )
        .set_index("condition")
    )
    if shown["queries needed"].isna().all():  # nothing inconclusive: the column would be empty
        shown = shown.drop(columns="queries needed")
    return [
        exhibits.table(
            shown,
            name="report-summary",
            **mark,
            extremes=False,
            caption=(
                f"Each condition against the reference. changed top-{k}: percent of searched queries whose top-{k} "
                f"set differs from exact search; overlap@{k}: mean percent of the reference's top {k} still returned; "
                f"relevance change: the condition's per-query P@{k} (per label column), Hit@{k} and recall@{k} minus "
                "the reference's, in percentage points, with a 95% paired bootstrap interval over the searched "
                "queries; probe BA change: a linear probe's balanced accuracy on the condition's vectors minus the "
                "reference's, in pp (one split, no interval). Verdict, against the declared margin of "
                f"{margin:g} pp (--margin): 'costs relevance' if an interval lies wholly below −{margin:g}, "
                f"'inconclusive' if one reaches below −{margin:g} (queries needed: how many would decide it), "
                "'gains relevance' if all lie above 0, else 'within margin'; an uninformative change (the "
                "reference's P@k not clearly above its random floor) decides nothing; identity is shown, not "
                f"judged; '{CANNOT_REPRESENT}': nothing is measured on it (the note above says "
                "why)."
            ),
        )
    ]


def _conditions(report: Report, table: pd.DataFrame, mark: dict) -> list:
    return [
        exhibits.table(
            table.set_index("name"),
            name="report-conditions",
            **mark,
            extremes=False,
            caption=(
                "Each condition compared with the reference VECTORS, with every parameter stated (a definition, "
                "not a measurement). kind: file (--compare), storage (a number format), compression (fewer "
                "dimensions) or index (an approximate search over the reference vectors)."
            ),
        )
    ]


_GEOMETRY_COLUMNS = (
    "total variance: sum of the per-dimension variances; mean cosine: mean cosine of distinct "
    "pairs of rows; RankMe: effective rank, exp of the entropy of the normalized singular values; "
    "participation ratio: (sum of covariance eigenvalues)² / sum of their squares"
)


def _geometry(report: Report, table: pd.DataFrame, mark: dict) -> list:
    rows = int(table["n_rows"].iloc[0])
    every = rows == report.inputs["n"]
    which = f"{'all' if every else 'the same'} {rows:,} {'' if every else 'sampled '}rows"
    spaces = {
        "raw": (
            "raw rows: the vectors as given, a storage format's reconstruction, a compression's "
            "projection before any renormalization"
        ),
        "unit": "unit rows: every row divided by its norm (what cosine search compares)",
    }
    out = []
    for space, what in spaces.items():
        part = _for_reading(table[table["space"] == space].drop(columns=["space", "n_rows"]))
        out.append(
            exhibits.table(
                part.set_index("representation"),
                name=f"report-geometry-{space}",
                **mark,
                caption=(
                    f"Geometry of {what}, each representation on {which} (embdiag.metrics.geometry.summary): "
                    f"{_GEOMETRY_COLUMNS}. Compare rows within this table only. "
                    f"{'No' if every else 'One sample, no'} interval."
                ),
            )
        )
    return out


def _labels(report: Report, table: pd.DataFrame, mark: dict) -> list:
    k = report.inputs["k"]
    out = [
        exhibits.figure(
            labels_chart(table.assign(kind=table["representation"].map(_kinds(report))), k),
            name="report-labels",
            **mark,
            caption=(
                f"Balanced accuracy of a linear probe and P@{k} per label column and representation (dots, coloured by "
                f"kind), with each measure's chance floor (grey tick). One probe split and one query sample, no "
                "interval."
            ),
        ),
        exhibits.table(
            shown := _for_reading(table).set_index(["representation", "attribute"]),
            name="report-labels-table",
            collapsed="Probe accuracy and P@k per representation and attribute",
            **mark,
            extremes=[c for c in ("probe BA (%)", f"P@{k} (%)") if c in shown] or False,  # no floors
            caption=(
                f"The values of the figure. eligible classes: classes with at least {report.inputs['min_support']} "
                "labelled items; unlabelled rows: rows without a label for the attribute (left out of its numbers); "
                "probe BA: the probe's balanced accuracy (%) on the evaluation rows over the eligible classes present, "
                f"BA floor: its chance level (1 / classes); P@{k}: percent of a query's labelled neighbours with its "
                f"label (unlabelled queries skipped), P@k floor: its chance level (sum of squared class shares)."
            ),
        ),
    ]
    support = report.tables.get("support")
    if support is not None:
        out.append(
            exhibits.table(
                support.set_index(["attribute", "class"]),
                name="report-support",
                collapsed="Labels with too few rows, left out",
                **mark,
                extremes=False,
                caption=(
                    f"Labelled items per class (count); eligible: at least {report.inputs['min_support']} items, so "
                    f"the class counts in probe accuracy and the comparisons."
                ),
            )
        )
    return out


def _certified_on(table: pd.DataFrame) -> str:
    """Which queries and gallery rows the certificates were computed on (a clause, or '')."""
    if "cert_queries" not in table or table["cert_queries"].isna().all():
        return ""
    row = table.dropna(subset=["cert_queries"]).iloc[0]
    return f" (on {int(row['cert_queries']):,} queries against {int(row['cert_gallery']):,} gallery rows)"


def _identity(report: Report, table: pd.DataFrame, mark: dict) -> list:
    k = report.inputs["k"]
    n_queries = int(table["n_queries"].iloc[0])
    shown = table.drop(columns=[c for c in ("n_queries", "cert_queries", "cert_gallery") if c in table])
    shown = _for_reading(shown).set_index("condition")
    return [
        exhibits.figure(
            identity_chart(table, k),
            name="report-identity",
            **mark,
            caption=(
                f"Mean overlap@{k} of each condition's top {k} with exact search on the reference vectors (bar, "
                f"coloured by kind) and the share of queries whose top-{k} set changed (dot). Exact counts over "
                f"{n_queries:,} queries, no interval."
            ),
        ),
        exhibits.table(
            shown,
            name="report-identity-table",
            collapsed="Identity per condition: every number",
            **mark,
            extremes=[f"overlap@{k} (%)", "changed queries (%)"],
            caption=(
                f"Identity per condition over {n_queries:,} searched queries. overlap@{k}: mean percent of the "
                f"reference's top {k} still returned; changed queries: percent of queries whose top-{k} set changed; "
                f"median margin, changed / unchanged: median boundary margin (rank-{k} minus rank-{k + 1} cosine of "
                "the reference) of the changed and of the unchanged queries, small margins being the ones that flip; "
                "storage conditions searched by cosine (not sign bits) and truncations (PCA, prefixes) only: "
                "certified: percent of the certificate's queries proven unchanged, whose boundary margin is wider "
                "than twice the largest score change the stored format's rounding, or the dropped dimensions, can "
                "cause (a proof, not a measurement: those queries cannot change); certified but changed: certified "
                f"queries that changed all the same (0 unless the bound is wrong){_certified_on(table)}; bytes per "
                "vector: what one vector takes in the condition's representation (codes and any per-row scale; a "
                "shared calibration table, PCA basis or index codebook not counted; an index: its codes, links and "
                "ids)."
            ),
        ),
    ]


def _change_of(row: dict) -> str:
    """:func:`~embdiag.report.summary.change_name` of a relevance table's row (no attribute: NaN)."""
    return change_name({**row, "attribute": row["attribute"] if isinstance(row["attribute"], str) else ""})


def _relevance(report: Report, table: pd.DataFrame, mark: dict) -> list:
    scored = report.inputs["sampling"].get("scored")  # with pairs or qrels: the queries scored
    head = [Markdown(f"*Queries:* {scored}.")] if scored else []
    return head + [
        exhibits.figure(
            relevance_chart(table.assign(kind=table["condition"].map(_kinds(report)))),
            name="report-relevance",
            **mark,
            caption=(
                "Change of each condition from the reference in percentage points (diamond, coloured by kind) with "
                "its 95% paired bootstrap interval over the searched queries (line); the dashed line is no change."
            ),
        ),
        exhibits.table(
            _for_reading(table.assign(metric=[_change_of(r) for r in table.to_dict("records")]))
            .rename(columns={"value": "change (pp)", "low": "low (pp)", "high": "high (pp)"})
            .set_index(["metric", "condition"])
            .drop(columns="attribute"),
            name="report-relevance-table",
            **mark,
            collapsed=f"Every change with its interval ({len(table)} rows)" if len(table) > LONG_TABLE else None,
            caption=(  # rows: metrics
                "The changes: change: the mean per-query difference (condition minus reference) in percentage "
                "points; low, high: its 95% paired bootstrap interval; queries: the queries where both are defined "
                "(for P@k: a label and a labelled neighbour)."
            ),
        ),
    ]


def _stress(report: Report, table: pd.DataFrame, mark: dict) -> list:
    return [
        exhibits.table(
            _for_reading(table).set_index(["intervention", "severity"]),
            name="report-stress",
            **mark,
            caption=(
                "Metrics of the reference vectors under each declared intervention and severity "
                "(embdiag.interventions.stress): geometry as above, per label column probe accuracy, BA and P@k (%), "
                "and overlap@k (%) with the unchanged vectors' neighbours."
            ),
        )
    ]


def _gates(report: Report, table: pd.DataFrame, mark: dict) -> list:
    shown = table.assign(
        outcome=[
            ("pass" if ok else "FAIL") if measured else "FAIL (not measured)"
            for ok, measured in zip(table["passed"], table["measured"])
        ]
    )
    shown = shown[["rule", "condition", "attribute", "value", "threshold", "outcome"]].set_index("rule")
    failed = int((shown["outcome"] != "pass").sum())
    return [
        exhibits.table(
            shown,
            name="report-gates",
            **mark,
            collapsed=f"Every rule on every row it reads: {failed} of {len(shown)} fail"
            if len(shown) > LONG_TABLE
            else None,
            extremes=False,
            caption=(
                "Each --fail-if rule on each row it checks: condition, attribute: the row's; value: the measured "
                "number; threshold: the rule's number; outcome: FAIL when the rule's comparison holds (or "
                "the value is undefined or was not measured), which makes embdiag report exit with status 1."
            ),
        )
    ]


def _lowest_name(row: dict) -> str:
    """The name of a frontier row's lowest relevance change (``ΔP@10 weather``)."""
    return change_name({"metric": row["lowest_metric"], "attribute": row["lowest_attribute"]})


def frontier_result(report: Report) -> Result:
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
    figure = exhibits.figure(
        frontier_chart(table, k, reference, room=theme.RESULT_PX),
        name="frontier-result",
        caption=(
            f"Bytes per vector (log axis; dashed: the reference's {reference:,}) against overlap@{k} (left) and the "
            "lowest relevance change with its 95% interval (right); filled marks are the Pareto set."
        ),
    )
    return box(text, figure=figure)


def certificates(report: Report) -> exhibits.Exhibit:
    """Each certified condition's share of queries proven unchanged beside the share that changed."""
    k = report.inputs["k"]
    identity = report.tables["identity"].dropna(subset=["cert_coverage"])
    shown = identity[["condition", "kind", "bytes_per_vector", "changed_queries", "cert_coverage", "cert_violations"]]
    return exhibits.table(
        _for_reading(shown).set_index("condition"),
        name="report-certificates",
        extremes=False,
        caption=(
            f"Proof beside measurement, per condition: changed queries, the percent of searched queries whose top-{k} "
            "set changed; certified, the percent of the certificate's queries proven unchanged (a storage format by "
            "the float certificate of its rounding, a truncation by the bound on what the dropped dimensions can "
            f"move){_certified_on(report.tables['identity'])}; certified but changed must be 0."
        ),
    )


def frontier_table(report: Report, mark: dict | None = None) -> exhibits.Exhibit:
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
    shown = _for_reading(shown[columns]).rename(
        columns={
            "times_smaller": "times smaller",
            "lowest": "lowest relevance change",
            "change": "its change, pp [95% interval]",
            "pareto": "Pareto set",
        }
    )
    return exhibits.table(
        shown.set_index("condition"),
        name="report-frontier-table",
        **(mark if mark is not None else _provenance(report)),
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


def _frontier(report: Report, table: pd.DataFrame, mark: dict) -> list:
    k = report.inputs["k"]
    reference = int(report.inputs["bytes_per_vector"])
    out = [
        exhibits.figure(
            frontier_chart(table, k, reference),
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
        frontier_table(report, mark),
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


def index_curves(report: Report, timings: bool = False) -> pd.DataFrame:
    """Each index's curve (table ``index_curves``), with this run's queries per second beside each
    point when ``timings`` and the report has them."""
    curves = report.tables["index_curves"]
    speeds = report.timings.get("index_searches") if timings else None
    if not speeds:
        return curves
    qps = pd.DataFrame(speeds)[["condition", "value", "queries_per_s"]]
    return curves.merge(qps, on=["condition", "value"], how="left")


def _indexes(report: Report, table: pd.DataFrame, mark: dict, timings: bool) -> list:
    k = report.inputs["k"]
    curves = index_curves(report, timings)
    fast = "queries_per_s" in curves
    builds = {b["condition"]: b["build_s"] for b in report.timings.get("index_builds", [])} if fast else {}
    shown = table.assign(
        default=[f"{knob} {int(v)}" if knob else "—" for knob, v in zip(table["knob"], table["default"])],
        index_bytes=table["index_bytes"] / 2**20,
    )
    columns = ["condition", "default", "rows", "index_bytes", "bytes_per_vector"]
    if builds:
        shown["build_s"] = shown["condition"].map(builds)
        columns.append("build_s")
    columns.append("factory")  # last: a long string without spaces
    shown = _for_reading(shown[columns]).rename(
        columns={"default": "knob (default)", "index_bytes": "index (MiB)", "build_s": "build (s)"}
    )
    where = report.inputs.get("index_curves", "")
    speed = f", this run's timing with {report.timings['faiss_threads']} FAISS thread(s), not verified" if fast else ""
    return [
        exhibits.figure(
            index_curve_chart(curves, k),
            name="report-index-curves",
            **mark,
            caption=(
                f"recall@{k} of each index against exact search (tie-aware: a row tied with the k-th exact "
                f"neighbour counts) at each knob value ({where}); filled: its default"
                + (f"; x: queries per second (log){speed}." if fast else "; x: the knob's value (log).")
            ),
        ),
        exhibits.table(
            shown.set_index("condition"),
            name="report-indexes",
            **mark,
            extremes=False,
            caption=(
                "Each index: knob and default, rows, serialized size, what each row adds (codes, ids, links; "
                "shared codebooks not counted), and its FAISS factory string"
                + ("; build: this run's seconds on one thread (a timing, not verified)." if builds else ".")
            ),
        ),
    ]


#: Longer tables than this many rows are shown collapsed under one line (their figure shows them).
LONG_TABLE = 15


_EXHIBITS = {
    "summary": _summary,
    "conditions": _conditions,
    "geometry": _geometry,
    "labels": _labels,
    "identity": _identity,
    "relevance": _relevance,
    "stress": _stress,
    "frontier": _frontier,
    "gates": _gates,
}


def labels_chart(labels: pd.DataFrame, k: int = 10) -> alt.FacetChart:
    """Probe balanced accuracy and P@k per representation (dots, coloured by ``kind`` when the table
    has that column) with their floors (ticks), one panel per measure and label column."""
    parts = []
    labels = labels if "kind" in labels else labels.assign(kind="reference")
    for value, floor, measure in (("probe_ba", "ba_floor", "probe BA"), (f"p@{k}", "p_floor", f"P@{k}")):
        if value in labels:
            parts.append(
                labels[["representation", "kind", "attribute", value, floor]]
                .rename(columns={value: "value", floor: "floor"})
                .assign(measure=measure)
            )
    data = pd.concat(parts, ignore_index=True).dropna(subset=["value"])
    order = list(dict.fromkeys(labels["representation"]))
    y = alt.Y("representation:N", sort=order, title=None)
    dots = (
        alt.Chart()
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("value:Q", title="share", scale=alt.Scale(domain=[0, 1])),
            y=y,
            color=_kind_colour(),
            tooltip=[
                "representation",
                "kind",
                "attribute",
                "measure",
                alt.Tooltip("value:Q", format=".4f"),
                alt.Tooltip("floor:Q", format=".4f"),
            ],
        )
    )
    floor = alt.Chart().mark_tick(color="gray", thickness=2).encode(x="floor:Q", y=y)
    attributes = list(dict.fromkeys(labels["attribute"]))
    chart = (
        alt.layer(floor, dots, data=data)
        .properties(width=theme.panel_width(len(attributes), gap=80), height=18 * len(order))
        .facet(
            row=alt.Row("measure:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
            column=alt.Column("attribute:N", title=None, sort=attributes),
        )
    )
    return theme.legend_below(chart)


def identity_chart(identity: pd.DataFrame, k: int = 10) -> alt.LayerChart:
    """Mean overlap@k per condition (bars, coloured by kind) and the share of changed queries (dots)."""
    order = list(identity["condition"])
    data = identity[["condition", "kind", f"overlap@{k}", "changed_queries"]].rename(
        columns={f"overlap@{k}": "overlap"}
    )
    y = alt.Y("condition:N", sort=order, title=None)
    bars = (
        alt.Chart(data)
        .mark_bar(opacity=0.6)
        .encode(
            x=alt.X(
                "overlap:Q", title=f"overlap@{k} (bar) and changed queries (dot), share", scale=alt.Scale(domain=[0, 1])
            ),
            y=y,
            color=_kind_colour(),
            tooltip=[
                "condition",
                "kind",
                alt.Tooltip("overlap:Q", format=".4f"),
                alt.Tooltip("changed_queries:Q", format=".4f"),
            ],
        )
    )
    dots = alt.Chart(data).mark_point(filled=True, color="black", size=50).encode(x="changed_queries:Q", y=y)
    return alt.layer(bars, dots).properties(width=360, height=22 * len(order))


def relevance_chart(relevance: pd.DataFrame) -> alt.FacetChart:
    """Each change in pp (diamond, coloured by ``kind`` when the table has that column) with its paired
    bootstrap interval (rule), one panel per measure and label column; the dashed rule is no change."""
    data = relevance.assign(panel=[_change_of(r) for r in relevance.to_dict("records")])  # e.g. ΔP@10 weather
    data = data if "kind" in data else data.assign(kind="reference")
    order = list(dict.fromkeys(relevance["condition"]))
    about = ["condition", "kind", "metric", "attribute", "n_queries"]
    y = alt.Y("condition:N", sort=order, title=None)
    x = alt.X("value:Q", title="change (pp)")
    layers = theme.changes_with_intervals(data, x, "low", "high", about, "+.3f", y=y, color=_kind_colour())
    chart = (
        layers.properties(width=theme.panel_width(3, gap=50), height=20 * len(order))
        .facet(facet=alt.Facet("panel:N", title=None, sort=list(dict.fromkeys(data["panel"]))), columns=3)
        .resolve_scale(x="independent")
    )
    return theme.legend_below(chart)


def index_curve_chart(curves: pd.DataFrame, k: int = 10, room: int = theme.COLUMN_PX) -> alt.LayerChart:
    """recall@k of each index (one colour each, a line through its knob values) against this run's
    queries per second when ``curves`` has them (log x, the curve ann-benchmarks draws), else
    against the knob's value (log x); the default knob value filled, each point's value on hover."""
    fast = "queries_per_s" in curves
    data = curves.assign(
        setting=[f"{knob}={int(v)}" if knob else "no knob" for knob, v in zip(curves["knob"], curves["value"])],
        x=curves["queries_per_s"] if fast else curves["value"].fillna(1),
    )
    floor = max(0.0, float(np.floor((data[f"recall@{k}"].min() - 0.02) * 10) / 10))
    names = list(dict.fromkeys(data["condition"]))
    colour = alt.Color("condition:N", title="index", scale=theme.scale(names), sort=names)
    x = alt.X(
        "x:Q",
        title="queries per second (log)" if fast else "knob value (log: nprobe or efSearch)",
        scale=alt.Scale(type="log"),
        axis=alt.Axis(format=",.0f"),
    )
    y = alt.Y(f"recall@{k}:Q", title=f"recall@{k} (tie-aware)", scale=alt.Scale(domain=[floor, 1]))
    about = ["condition", "setting", alt.Tooltip(f"recall@{k}:Q", format=".4f")]
    if fast:
        about.append(alt.Tooltip("queries_per_s:Q", format=",.0f"))
    base = alt.Chart().encode(x=x, y=y, color=colour)
    line = base.mark_line(strokeWidth=2).encode(order="value:Q", detail="condition:N")
    hollow = base.transform_filter(alt.datum.default == False).mark_point(size=60, filled=False)  # noqa: E712
    solid = base.transform_filter(alt.datum.default == True).mark_point(size=80, filled=True)  # noqa: E712
    chart = alt.layer(line, hollow.encode(tooltip=about), solid.encode(tooltip=about), data=data)
    return theme.legend_below(chart.properties(width=theme.panel_width(1, room=room), height=260))


def frontier_chart(
    frontier: pd.DataFrame, k: int, reference_bytes: float, room: int = theme.COLUMN_PX
) -> alt.HConcatChart:
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
        base = alt.Chart().encode(x=x, y=y, color=_kind_colour(), shape=shape)
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
        alt.Chart().mark_rule(strokeWidth=2).encode(x=x, y="lowest_low:Q", y2="lowest_high:Q", color=_kind_colour())
    )
    zero = (
        alt.Chart().mark_rule(color=theme.PALETTE["grey"], strokeDash=theme.DASHES["reference"]).encode(y=alt.datum(0))
    )
    right = alt.layer(ref, zero, *points(y, extra=[interval]), data=measured).properties(width=width, height=260)
    return theme.legend_below(alt.hconcat(left, right))
