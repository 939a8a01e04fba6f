"""The report's summary: one entry per condition, its identity, relevance and probe changes side
by side, and its verdict in words (:func:`verdict`: non-inferiority of its relevance changes
against a declared margin; identity is stated beside it and the probe change is shown, neither
judged), measured by :func:`summarize` (pure functions of the measured tables, read by the summary
table, the frontier and the pages); and what the page shows of it: the summary table and the
result box (:func:`result`)."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...metrics.inference import NOT_TESTABLE, non_inferiority, queries_needed
from ...view import exhibits as exhibit
from ...view.result import Result, box
from ..options import MARGIN_PP
from .presentation import NO_CONDITION, Html, for_reading, section

if TYPE_CHECKING:
    from ..measurement import Report


#: The verdict of a condition that cannot represent the rows
#: (:class:`~embdiag.report.measurement.CannotRepresent`).
CANNOT_REPRESENT = "cannot represent these vectors"
#: A condition's verdicts, worst first (:func:`verdict`), then the two without a decision.
VERDICTS = (
    "costs relevance",
    "inconclusive",
    "within margin",
    "gains relevance",
    "relevance not informative",
    "relevance not measured",
)


def change_verdict(change: dict, margin: float) -> str:
    """One relevance change's verdict against the loss ``margin`` (pp): *gains*, *within margin*,
    *costs*, *inconclusive* or *not testable* (:func:`embdiag.metrics.inference.non_inferiority`
    of its interval ``low``, ``high``)."""
    return non_inferiority(change["low"], change["high"], margin)


def verdict(changes, margin: float = MARGIN_PP) -> str:
    """One condition's verdict in words, from its relevance changes (dicts with ``low`` and
    ``high``, the 95% interval in pp, and ``informative``: False for ΔP@k on an attribute whose
    reference P@k is not clearly above its random floor, which decides nothing) against the loss
    ``margin`` in pp. The first rule that holds:

    - ``"costs relevance"``: some informative change's interval lies wholly below ``-margin``;
    - ``"inconclusive"``: some informative change's interval straddles ``-margin`` (or has none):
      a loss of the margin is as compatible with the data as none;
    - ``"gains relevance"``: every informative change's interval lies wholly above 0;
    - ``"within margin"``: every informative change's interval lies above ``-margin``;
    - ``"relevance not informative"``: relevance was measured on uninformative attributes only;
    - ``"relevance not measured"``: there is no relevance change.

    Identity (the share of queries whose top-k changed) is stated beside the verdict, never
    folded into it; the probe change is shown beside it (one probe split, no interval).

    Example:
        >>> verdict([{"low": -0.5, "high": 0.2}]), verdict([{"low": -1.75, "high": 0.63}])
        ('within margin', 'inconclusive')
        >>> verdict([{"low": -0.5, "high": 0.2}, {"low": -3.0, "high": -1.2}]), verdict([])
        ('costs relevance', 'relevance not measured')
        >>> verdict([{"low": -9.0, "high": -2.0, "informative": False}])
        'relevance not informative'
    """
    changes = list(changes)
    decisive = [c for c in changes if c.get("informative", True)]
    if not decisive:
        return "relevance not informative" if changes else "relevance not measured"
    words = {change_verdict(c, margin) for c in decisive}
    if "costs" in words:
        return "costs relevance"
    if "inconclusive" in words or NOT_TESTABLE in words:
        return "inconclusive"
    return "gains relevance" if words == {"gains"} else "within margin"


def _queries_needed(changes: list[dict], margin: float) -> float:
    """How many queries the inconclusive informative changes would need for each interval to clear
    ``-margin`` at the observed mean and spread, at most (NaN: none is inconclusive, or every
    inconclusive mean already lies past the margin, where more queries would not clear it)."""
    needs = [
        queries_needed(c["low"], c["high"], int(c["n_queries"]), margin)
        for c in changes
        if c.get("informative", True) and change_verdict(c, margin) == "inconclusive" and c.get("n_queries", 0) >= 1
    ]
    needs = [n for n in needs if math.isfinite(n)]
    return float(max(needs)) if needs else math.nan


def _probe_changes(labels: pd.DataFrame | None, name: str) -> list[dict]:
    """Per attribute, the probe's balanced accuracy under condition ``name`` minus the reference's, in pp."""
    if labels is None or "probe_ba" not in labels:
        return []
    ba = labels.set_index(["representation", "attribute"])["probe_ba"]
    return [
        {
            "attribute": a,
            "probe_ba": float(ba[(name, a)]),
            "reference_probe_ba": float(ba[("reference", a)]),
            "change_pp": 100.0 * float(ba[(name, a)] - ba[("reference", a)]),
        }
        for a in dict.fromkeys(labels["attribute"])
        if (name, a) in ba.index and np.isfinite(ba[(name, a)])
    ]


def summarize(
    conditions,
    identity: pd.DataFrame | None,
    relevance: pd.DataFrame | None,
    labels: pd.DataFrame | None,
    k: int,
    margin: float = MARGIN_PP,
) -> list[dict]:
    """One entry per condition: ``condition``, ``kind``; identity: ``changed_queries`` (share of
    searched queries whose top-k set changed) and ``overlap@k``; ``relevance``: each change of
    the condition (``metric``, ``attribute``, ``value``, ``low``, ``high`` in pp, ``n_queries``,
    ``informative`` and its own ``verdict`` against ``margin``, :func:`change_verdict`);
    ``labels``: per attribute its probe change (:func:`_probe_changes`; none for an index);
    ``verdict`` (:func:`verdict` of the relevance changes against ``margin``, in pp) and
    ``queries_needed`` (for an inconclusive verdict, how many queries would decide it at the
    observed spread; NaN otherwise). Empty without conditions."""
    if identity is None or identity.empty:
        return []
    ident = identity.set_index("condition")
    out = []
    for c in conditions:
        rel = (
            []
            if relevance is None
            else [
                {key: r[key] for key in ("metric", "attribute", "value", "low", "high", "n_queries")}
                | {"informative": bool(r.get("informative", True))}
                for r in relevance.to_dict("records")
                if r["condition"] == c.name
            ]
        )
        for r in rel:
            r["verdict"] = change_verdict(r, margin)
        changed = float(ident.loc[c.name, "changed_queries"])
        out.append(
            {
                "condition": c.name,
                "kind": c.kind,
                "changed_queries": changed,
                f"overlap@{k}": float(ident.loc[c.name, f"overlap@{k}"]),
                "relevance": rel,
                "labels": _probe_changes(labels, c.name),
                "verdict": verdict(rel, margin),
                "queries_needed": _queries_needed(rel, margin),
            }
        )
    return out


def with_unrepresented(summary: list[dict], conditions, cannot: dict[str, str], k: int) -> list[dict]:
    """:func:`summarize`'s entries with one for each condition that cannot represent the rows
    (verdict :data:`CANNOT_REPRESENT`, ``reason``: why; nothing measured), in the conditions' order."""
    by_name = {e["condition"]: e for e in summary}
    for c in conditions:
        if c.name in cannot:
            by_name[c.name] = {
                "condition": c.name,
                "kind": c.kind,
                "changed_queries": np.nan,
                f"overlap@{k}": np.nan,
                "relevance": [],
                "labels": [],
                "verdict": CANNOT_REPRESENT,
                "queries_needed": np.nan,
                "reason": cannot[c.name],
            }
    return [by_name[c.name] for c in conditions if c.name in by_name]


def change_name(r: dict) -> str:
    """The name of a relevance change of :func:`summarize`: ``ΔP@10 digit``, ``ΔHit@10``."""
    what = r["metric"].replace("delta_", "Δ")
    for short, name in (("ndcg@", "nDCG@"), ("mrr@", "MRR@"), ("map@", "MAP@"), ("hit@", "Hit@"), ("p@", "P@")):
        if what.lstrip("Δ").startswith(short):
            what = what.replace(short, name, 1)
            break
    return f"{what} {r['attribute']}" if r["attribute"] else what


def _change(r: dict) -> str:
    """``ΔP@10 digit -0.31 [-0.90, +0.22]`` (pp), with ``(uninformative)`` when it decides nothing."""
    said = "" if r.get("informative", True) else " (uninformative)"
    return f"{change_name(r)} {r['value']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}]{said}"


def summary_table(summary: list[dict], k: int) -> pd.DataFrame:
    """:func:`summarize`'s entries as one row per condition (changes and probe changes in words)."""
    return pd.DataFrame(
        [
            {
                "condition": e["condition"],
                "kind": e["kind"],
                "changed_queries": e["changed_queries"],
                f"overlap@{k}": e[f"overlap@{k}"],
                "relevance_change_pp": "; ".join(map(_change, e["relevance"])) or "not measured",
                "probe_ba_change_pp": "; ".join(f"{p['attribute']} {p['change_pp']:+.2f}" for p in e["labels"]) or "—",
                "verdict": e["verdict"],
                "queries_needed": e["queries_needed"],
            }
            for e in summary
        ]
    )


NAME = "summary"
TITLE = "Summary: what each condition changes"
INTRO = "The result box's verdicts with every change behind them; the sections below measure each one."
#: Why the section can be missing.
MISSING = NO_CONDITION
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
    return f"about {n:,.0f} queries would decide it"


def _counts(summary: list[dict]) -> str:
    """How many conditions have each verdict, worst first: ``4 within margin, 2 costs relevance``."""
    counts: dict[str, int] = {}
    for e in summary:
        counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
    order = sorted(counts, key=lambda v: VERDICTS.index(v) if v in VERDICTS else len(VERDICTS))
    return ", ".join(f"{counts[v]} {html.escape(v)}" for v in order)


def gates_sentence(report: Report) -> str:
    """The gates' outcome in one sentence (HTML): the smallest condition passing every rule (or
    none) and how many rule checks fail; '' without rules."""
    if not report.gates:
        return ""
    from .frontier import smallest_passing  # the frontier section imports this module

    rules = ", ".join(f"<code>{html.escape(r)}</code>" for r in dict.fromkeys(g["rule"] for g in report.gates))
    frontier = report.tables.get("frontier")
    best = None if frontier is None or frontier.empty else smallest_passing(frontier)
    passing = (
        f"smallest condition passing every rule ({rules}): <strong>{html.escape(best['condition'])}</strong>, "
        f"{best['bytes_per_vector']:,.0f} bytes per vector, {best['times_smaller']:.3g} times smaller"
        if best is not None
        else f"no condition passes every rule ({rules})"
    )
    failed = sum(not g["passed"] for g in report.gates)
    status = " (embdiag report exits with status 1)" if failed else ""
    return f"{passing[0].upper()}{passing[1:]}; {failed} of {len(report.gates)} rule checks fail{status}."


def verdict_table(report: Report) -> str:
    """The result box's table (HTML), one row per condition: its verdict beside its name (both
    in view on a phone), the share of its top-k sets that changed and its lowest-reaching
    relevance change with interval; with rules, whether the condition passed them."""
    k = report.inputs["k"]
    gates = {}
    for g in report.gates or []:
        gates[g["condition"]] = gates.get(g["condition"], True) and g["passed"]
    head = ["condition", "verdict", f"top-{k} changed", "lowest change, pp [95%]"] + (["rules"] if gates else [])
    rows = []
    for e in report.summary:
        verdict = html.escape(e["verdict"])
        needed = _needed(e)
        if needed:
            verdict += f"<br><small>{needed}</small>"
        if e["verdict"] == CANNOT_REPRESENT:
            changed, lowest = "—", html.escape(e["reason"])
        else:
            changed = f"{100 * e['changed_queries']:.3g}%"
            lowest = html.escape(_worst(e["relevance"]).replace(" pp ", " ")) if e["relevance"] else "not measured"
        cells = [f"<strong>{html.escape(e['condition'])}</strong>", verdict, changed, lowest]
        if gates:
            cells.append("" if e["condition"] not in gates else "passed" if gates[e["condition"]] else "failed")
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    header = "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
    return (
        '<div class="embdiag-scroll"><table class="embdiag-verdicts">'
        f"<thead>{header}</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def result(report: Report) -> Result:
    """The page's result box: how many conditions have each verdict against the margin
    (:func:`verdict`), the gates' outcome with the smallest condition passing every rule
    (:func:`gates_sentence`), and a row per condition (:func:`verdict_table`)."""
    if not report.summary:
        text = f"Nothing is compared: {html.escape(MISSING)}."
        gates = gates_sentence(report)
        return box(f"{text} {gates}" if gates else text)
    margin = report.inputs["margin_pp"]
    n = len(report.summary)
    text = f"Verdicts of {n} condition{'s' if n > 1 else ''} against a {margin:g} pp margin on relevance loss: "
    text += f"{_counts(report.summary)}."
    gates = gates_sentence(report)
    if gates:
        text += f" {gates}"
    return box(text, figure=Html(verdict_table(report)))


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
    shown = shown[["verdict", *(c for c in shown.columns if c != "verdict")]]  # the answer first
    if shown["queries needed"].isna().all():  # nothing inconclusive: the column would be empty
        shown = shown.drop(columns="queries needed")
    return [
        exhibit.table(
            shown,
            name="report-summary",
            **mark,
            extremes=False,
            collapsed="Every relevance and probe change of each condition",
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
