"""The summary: each condition's identity, relevance and probe change side by side with a verdict
in words (measured by :func:`~embdiag.report.summary.summarize`), and the page's result box
(:func:`result`)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import pandas as pd

from ...view import exhibits as exhibit
from ...view.result import Result, box
from ..summary import CANNOT_REPRESENT, VERDICTS, change_name
from .presentation import for_reading, section

if TYPE_CHECKING:
    from ..measurement import Report

NAME = "summary"
TITLE = "Summary: what each condition changes"
INTRO = (
    "One row per condition, with a verdict in words by the rule stated under the table; the "
    "sections below give every number behind it."
)
#: Why the section can be missing.
MISSING = "no second representation (--compare, --compress or --index) was given"
#: What the section establishes and what not (the report's ``scope``).
SCOPE = (
    "Each condition's identity, relevance and probe change side by side, read from the sections below, "
    "with a verdict of non-inferiority from its relevance intervals against the declared margin only: within "
    "margin when every interval lies above minus the margin, costs relevance when one lies wholly below it, "
    "inconclusive when one straddles it; identity is stated beside the verdict and the probe change (no "
    "interval) is shown, neither judged."
)


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence and the summary table, or why there is none."""
    return section(report, NAME, MISSING, _draw)


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
        text = f"Nothing is compared: {html.escape(MISSING)}."
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


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    k, margin = report.inputs["k"], report.inputs["margin_pp"]
    lines = {c: table[c].str.replace("; ", "<br>") for c in ("relevance_change_pp", "probe_ba_change_pp")}
    shown = (
        for_reading(table.assign(**lines))
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
        exhibit.table(
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
