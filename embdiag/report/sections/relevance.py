"""Relevance: what each condition's changed neighbours cost, with paired bootstrap intervals.

Measured (:func:`measure`): with pairs, Hit@k and recall@k of every representation; with graded
judgments (qrels), nDCG@k, MRR@k, MAP@100 and recall@100 (:mod:`embdiag.metrics.graded`,
searched to depth :data:`~embdiag.report.measurement.QRELS_DEPTH`); per condition, ΔP@k per
label column and each of these as a change, in percentage points with paired bootstrap
intervals over queries. Shown: the changes with their intervals, as a figure and a table."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import altair as alt
import numpy as np
import pandas as pd

from ...metrics.graded import average_precision_at_k, graded_recall_at_k, mrr_at_k, ndcg_at_k
from ...metrics.retrieval import hit_at_k, precision_at_k, random_floor, recall_at_k
from ...metrics.stats import paired_t_interval
from ...view import exhibits as exhibit
from ...view import theme
from ...view.markdown import Markdown
from .summary import change_name
from .measured import Section, label_arrays, record
from .presentation import LONG_TABLE, for_reading, kind_colour, kinds, section

if TYPE_CHECKING:
    from ..measurement import Plan, Report

NAME = "relevance"
TITLE = "Relevance: what the changes cost"
INTRO = (
    "Whether the changed neighbours are worse ones. Each change is the condition's per-query value "
    "minus the reference's, averaged, with a paired bootstrap interval over the searched queries."
)
#: Why the section can be missing.
MISSING = "it needs labels (with queries drawn from VECTORS) or --pairs, and a second representation"
#: What the section establishes and what not (the report's ``scope``).
SCOPE = (
    "The change of label agreement (and of retrieval of the given pairs) of each condition's top-k, "
    "with intervals over the searched queries only (not over re-encodings or other data)."
)


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence, the changes' figure and table, or why there are none."""
    return section(report, NAME, MISSING, _draw)


def _self_match_note(option: str, self_matches: dict | None) -> list[str]:
    """The page's note on the self-matches left out (none when there were none)."""
    if not self_matches or not self_matches["excluded"]:
        return []
    what = (
        "self-pairs (a query paired with its own row)"
        if option == "--pairs"
        else "self-judgments (a query judging its own row)"
    )
    unscored = self_matches["queries_unscored"]
    left = "positive" if option == "--pairs" else "relevant judgment"
    return [
        f"{option}: {self_matches['excluded']:,} {what} excluded: the queries are VECTORS' rows and a query is never "
        f"its own neighbour, so these could never be found"
        + (f"; {unscored:,} queries left with no {left} are not scored." if unscored else ".")
    ]


def _informative(reference_pq: np.ndarray, floor: float) -> bool:
    """Whether the reference's per-query P@k (percent) lies clearly above its random floor
    (percent): the Student-t 95% interval of its mean minus the floor lies wholly above 0."""
    values = reference_pq[~np.isnan(reference_pq)]
    if len(values) < 2:
        return False
    iv = paired_t_interval(values, np.full(len(values), floor))
    return bool(iv.low > 0)


def _delta_p_draws(plan: Plan, neighbours: dict[str, np.ndarray]) -> list[tuple[dict, np.ndarray, np.ndarray]]:
    """Per label column and condition: (row keys, the condition's and the reference's per-query
    P@k in percent), the paired samples of ΔP@k; none without labels or with separate queries.
    The keys hold ``informative``: whether the reference's P@k on that column is clearly above
    its random floor (:func:`_informative`); a change of an uninformative column decides no verdict."""
    if plan.labels is None or not plan.self_search:
        return []
    draws = []
    for col, y in label_arrays(plan.labels).items():
        pq = {
            name: 100.0 * precision_at_k(nb, y[plan.g_idx], y[plan.q_sel], per_query=True)
            for name, nb in neighbours.items()
        }
        informative = _informative(pq["reference"], 100.0 * random_floor(y[plan.g_idx]))
        for c in plan.conds:  # the queries where both are defined (a query's label or its neighbours' may be missing)
            both = ~np.isnan(pq[c.name]) & ~np.isnan(pq["reference"])
            draws.append(
                (
                    {"condition": c.name, "attribute": col, "metric": f"delta_p@{plan.k}", "informative": informative},
                    pq[c.name][both],
                    pq["reference"][both],
                )
            )
    return draws


def _pairs(plan: Plan, neighbours: dict[str, np.ndarray]) -> tuple[Section, list]:
    """Hit@k and recall@k of every representation over the scored queries (every query with a
    positive; a quick run: a sample of them), and the paired samples of each condition's ΔHit@k
    and Δrecall@k (in percent)."""
    if plan.positives is None:
        return Section(False), []
    has = plan.scored
    if has.size < 2:
        return Section(
            False,
            notes=_self_match_note("--pairs", plan.self_matches)
            + [f"--pairs: only {has.size} query(ies) have positives; Hit@k and recall@k skipped"],
            inputs=_self_match_inputs(plan),
        ), []
    pos = [np.searchsorted(plan.g_idx, plan.positives[plan.q_sel[i]]) for i in has]
    vals = {
        name: {
            "hit": 100.0 * hit_at_k(nb[has], pos, per_query=True),
            "recall": 100.0 * recall_at_k(nb[has], pos, per_query=True),
        }
        for name, nb in neighbours.items()
    }
    rows = [
        record("relevance", f"{what}@{plan.k}", name, vals[name][what].mean() / 100.0)
        for name in vals
        for what in ("hit", "recall")
    ]
    draws = [
        (
            {"condition": c.name, "attribute": "", "metric": f"delta_{what}@{plan.k}", "informative": True},
            vals[c.name][what],
            vals["reference"][what],
        )
        for c in plan.conds
        for what in ("hit", "recall")
    ]
    inputs = {"n_queries_with_positives": int(has.size)} | _self_match_inputs(plan)
    return Section(False, rows, notes=_self_match_note("--pairs", plan.self_matches), inputs=inputs), draws


def _self_match_inputs(plan: Plan) -> dict:
    """report.json's record of the self-matches left out (none with ``--queries``)."""
    return {} if plan.self_matches is None else {"self_matches": dict(plan.self_matches)}


def graded_names(k: int, depth: int) -> tuple[str, ...]:
    """The graded metrics' names: nDCG and MRR at ``k``, MAP and recall at ``depth``."""
    return (f"ndcg@{k}", f"mrr@{k}", f"map@{depth}", f"recall@{depth}")


def _graded(plan: Plan, deep: dict[str, np.ndarray]) -> tuple[Section, list]:
    """nDCG@k, MRR@k, MAP@depth and recall@depth (:mod:`embdiag.metrics.graded`) of every
    representation over the scored queries (every query with a relevant judgment; a quick run: a
    sample of them), and the paired samples of each condition's changes (in percent)."""
    if plan.qrels is None:
        return Section(False), []
    judged = []
    for q in plan.q_sel[plan.scored]:
        rows = np.array(sorted(plan.qrels[q]), dtype=np.int64)
        pos = np.searchsorted(plan.g_idx, rows)
        inside = (pos < len(plan.g_idx)) & (plan.g_idx[np.minimum(pos, len(plan.g_idx) - 1)] == rows)
        judged.append({int(p): plan.qrels[q][int(r)] for p, r in zip(pos[inside], rows[inside])})
    has = plan.scored[[any(g >= 1 for g in j.values()) for j in judged]]
    notes = _self_match_note("--qrels", plan.self_matches)
    if has.size < 2:
        note = f"--qrels: only {has.size} query(ies) have a relevant judgment; graded relevance skipped"
        return Section(False, notes=notes + [note], inputs=_self_match_inputs(plan)), []
    qrels = [j for j in judged if any(g >= 1 for g in j.values())]
    names = graded_names(plan.k, plan.depth)
    measures = dict(zip(names, (ndcg_at_k, mrr_at_k, average_precision_at_k, graded_recall_at_k)))
    cut = dict(zip(names, (plan.k, plan.k, plan.depth, plan.depth)))
    vals = {
        rep: {m: 100.0 * f(nb[has], qrels, k=cut[m], per_query=True) for m, f in measures.items()}
        for rep, nb in deep.items()
    }
    rows = [record("relevance", m, rep, vals[rep][m].mean() / 100.0) for rep in vals for m in names]
    draws = [
        (
            {"condition": c.name, "attribute": "", "metric": f"delta_{m}", "informative": True},
            vals[c.name][m],
            vals["reference"][m],
        )
        for c in plan.conds
        for m in names
    ]
    inputs = {"n_queries_judged": int(has.size), "qrels_depth": plan.depth} | _self_match_inputs(plan)
    return Section(False, rows, notes=notes, inputs=inputs), draws


def measure(
    plan: Plan, neighbours: dict[str, np.ndarray], deep: dict[str, np.ndarray], intervals: Callable, sample
) -> Section:
    """With pairs, Hit@k and recall@k of every representation over the scored queries; with qrels,
    its graded relevance (:func:`_graded`, on the ``deep`` lists); each condition's ΔP@k per column
    (over the query sample: ``sample`` is its plan and neighbour lists) and its changes of these
    with paired bootstrap intervals over the queries (all drawn by one ``intervals`` call)."""
    pairs, pair_draws = _pairs(plan, neighbours)
    graded, graded_draws = _graded(plan, deep)
    pairs = Section(
        False, pairs.rows + graded.rows, notes=pairs.notes + graded.notes, inputs=pairs.inputs | graded.inputs
    )
    draws = _delta_p_draws(*sample) + pair_draws + graded_draws
    ivs = intervals([(a, b, None, plan.n_draws, 0.95, plan.seed) for _, a, b in draws])
    rel = [
        {**row, "value": iv.mean, "low": iv.low, "high": iv.high, "n_queries": iv.n}
        for (row, _, _), iv in zip(draws, ivs)
    ]
    rows = pairs.rows + [
        record("relevance", r["metric"], r["condition"], r["value"], r["attribute"], r["low"], r["high"]) for r in rel
    ]
    return Section(bool(rel), rows, {"relevance": pd.DataFrame(rel)} if rel else {}, pairs.notes, pairs.inputs)


def _change_of(row: dict) -> str:
    """:func:`~embdiag.report.sections.summary.change_name` of a relevance table's row (no attribute: NaN)."""
    return change_name({**row, "attribute": row["attribute"] if isinstance(row["attribute"], str) else ""})


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    scored = report.inputs["sampling"].get("scored")  # with pairs or qrels: the queries scored
    head = [Markdown(f"*Queries:* {scored}.")] if scored else []
    return head + [
        exhibit.figure(
            chart(table.assign(kind=table["condition"].map(kinds(report)))),
            name="report-relevance",
            **mark,
            caption=(
                "Change of each condition from the reference in percentage points (diamond, coloured by kind) with "
                "its 95% paired bootstrap interval over the searched queries (line); the dashed line is no change."
            ),
        ),
        exhibit.table(
            for_reading(table.assign(metric=[_change_of(r) for r in table.to_dict("records")]))
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


def chart(relevance: pd.DataFrame) -> alt.FacetChart:
    """Each change in pp (diamond, coloured by ``kind`` when the table has that column) with its paired
    bootstrap interval (rule), one panel per measure and label column; the dashed rule is no change."""
    data = relevance.assign(panel=[_change_of(r) for r in relevance.to_dict("records")])  # e.g. ΔP@10 weather
    data = data if "kind" in data else data.assign(kind="reference")
    order = list(dict.fromkeys(relevance["condition"]))
    about = ["condition", "kind", "metric", "attribute", "n_queries"]
    y = alt.Y("condition:N", sort=order, title=None)
    x = alt.X("value:Q", title="change (pp)")
    layers = theme.changes_with_intervals(data, x, "low", "high", about, "+.3f", y=y, color=kind_colour())
    chart = (
        layers.properties(width=theme.panel_width(3, gap=50), height=20 * len(order))
        .facet(facet=alt.Facet("panel:N", title=None, sort=list(dict.fromkeys(data["panel"]))), columns=3)
        .resolve_scale(x="independent")
    )
    return theme.legend_below(chart)
