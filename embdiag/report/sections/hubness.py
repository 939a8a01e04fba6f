"""Hubness: how unevenly the rows are anyone's neighbour, and what each condition does to the anti-hubs.

Measured (:func:`measure`) after every condition is searched, from :mod:`embdiag.metrics.hubness`:
the k-occurrence ``N_k`` of the gallery's own kNN graph (every gallery row searched against the
others, :func:`graph_rows`), its skewness, hub and anti-hub shares; then the anti-hub tail of each
condition. When the queries are VECTORS rows, the anti-hub *queries* (rows no other row has in
its top k): their overlap@k with the reference and their ΔP@k and ΔHit@k, each beside the same
measure over all queries, with paired bootstrap intervals over the queries. With ``--queries``,
the anti-hub *gallery rows* in the reference top-k: the share each condition keeps (recall of
anti-hubs), and ΔHit@k of the queries with an anti-hub positive. Shown: the k-occurrence
distribution and the table of each condition's all-query and anti-hub values."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import altair as alt
import numpy as np
import pandas as pd

from ..._mapped import take_rows
from ...metrics import hubness as hub
from ...metrics.retrieval import hit_at_k, overlap_at_k, precision_at_k
from ...view import exhibits as exhibit
from ...view import theme
from ...view.markdown import Markdown
from ..conditions import _sample_rows
from .measured import Section, label_arrays, record
from .presentation import section

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..measurement import Plan, Report

NAME = "hubness"
TITLE = "Hubness: where the damage hides"
INTRO = (
    "Some rows are nearly everyone's neighbour (hubs), others nobody's (anti-hubs). An average can "
    "hide a condition that loses the anti-hubs, so their values stand beside all queries'."
)
#: Why the section can be missing.
MISSING = "the gallery has too few rows for a kNN graph at this k"
#: What the section establishes and what not (the report's ``scope``).
SCOPE = (
    "The reference's exact kNN graph and each condition on the reference's anti-hubs, with intervals "
    "over the searched queries only."
)

#: The kNN graph is exact over the whole gallery while its search takes at most this many
#: multiply-adds (rows x rows x d: 120,000 rows at d = 256, about two minutes on two cores), else it
#: is the graph of a seeded sample of as many rows as that allows (holding the searched queries'
#: own rows first), whose k-occurrence is that sample's, not the gallery's (less skewed: on
#: 117,659 WordNet definitions, 3.47 for a 50,000-row sample against 3.90 for every row).
GRAPH_WORK = 120_000**2 * 256
#: A quick run's graph: a hundredth of that (12,000 rows at d = 256).
QUICK_GRAPH_WORK = GRAPH_WORK // 100
#: The random stream of the graph's sample (:mod:`embdiag.report.streams` holds the others).
GRAPH_STREAM = 4701
#: The table of each condition's all-query and anti-hub values.
TAIL = "hubness_tail"


def available(conditions, attributes=(), *, k: int = 10, pairs: bool = False, self_search: bool = True) -> dict:
    """Each metric the section records -> the conditions and attributes of its rows: the reference's
    ``k_skewness``, ``hub_share``, ``hub_occurrence``, ``antihub_share`` (with ``--queries`` also
    ``query_k_skewness``); per condition ``antihub_overlap@k`` (queries are VECTORS rows) or
    ``antihub_recall@k`` (``--queries``), ``delta_antihub_p@k`` per label column (VECTORS rows as
    queries) and ``delta_antihub_hit@k`` (with pairs).

    Example:
        >>> from embdiag.report.conditions import parse_conditions
        >>> m = available(parse_conditions("int8", "", n=100, d=8), ["digit"], k=10)
        >>> sorted(m["antihub_overlap@10"]), sorted(m["delta_antihub_p@10"]), "delta_antihub_hit@10" in m
        (['int8'], ['digit', 'int8'], False)
    """
    names = [c.name for c in conditions]
    out: dict[str, set[str]] = {
        m: {"reference"} for m in ("k_skewness", "hub_share", "hub_occurrence", "antihub_share")
    }
    if not self_search:
        out["query_k_skewness"] = {"reference"}
    if names:
        out[f"antihub_overlap@{k}" if self_search else f"antihub_recall@{k}"] = set(names)
        if self_search and len(attributes):
            out[f"delta_antihub_p@{k}"] = set(names) | {str(a) for a in attributes}
        if pairs:
            out[f"delta_antihub_hit@{k}"] = set(names)
    return out


def graph_rows(plan: Plan) -> np.ndarray:
    """The gallery positions whose kNN graph gives the k-occurrence: every gallery row while their
    search fits :data:`GRAPH_WORK` (quick: :data:`QUICK_GRAPH_WORK`), else a seeded sample of as many
    as fit, holding the searched queries' own rows (a seeded sample of them when they are more)."""
    n, d = plan.G.shape
    size = int(np.sqrt((QUICK_GRAPH_WORK if plan.quick else GRAPH_WORK) / d))
    if n <= size:
        return np.arange(n)
    own = np.unique(plan.self_pos) if plan.self_search else np.empty(0, np.int64)
    if len(own) >= size:
        return np.sort(own[_sample_rows(len(own), size, plan.seed, GRAPH_STREAM)])
    rest = np.setdiff1d(np.arange(n), own)
    return np.sort(np.concatenate([own, rest[_sample_rows(len(rest), size - len(own), plan.seed, GRAPH_STREAM)]]))


def occurrence(plan: Plan, neighbours: dict[str, np.ndarray], search: Callable) -> tuple[np.ndarray, np.ndarray]:
    """(the graph's gallery positions, ``N_k`` of each gallery position: -1 outside the graph). When
    every gallery row was searched as a query, the reference lists are the graph (no search)."""
    rows = graph_rows(plan)
    full = np.full(len(plan.G), -1, np.int64)
    if plan.self_search and len(rows) == len(plan.G) and np.array_equal(np.sort(plan.self_pos), rows):
        full[:] = hub.k_occurrence(neighbours["reference"], len(plan.G))
    else:
        full[rows] = hub.k_occurrence(hub.knn_graph(take_rows(plan.G, rows), plan.k, search), len(rows))
    return rows, full


def _mean_draw(values: np.ndarray) -> tuple:
    """A bootstrap of the mean of ``values``, as a paired draw against zeros."""
    return values, np.zeros(len(values))


def _tails(plan: Plan, neighbours, sample: tuple, occ: np.ndarray) -> list[tuple[dict, tuple, tuple]]:
    """Per condition and measure: (the table row's keys, the all-query draw, the anti-hub draw),
    each draw the paired samples (condition, reference) in percent."""
    k, draws = plan.k, []
    splan, snb = sample
    if plan.self_search:
        anti = occ[splan.self_pos] == 0  # anti-hub queries of the query sample
        for c in plan.conds:
            ov = 100.0 * overlap_at_k(snb["reference"], snb[c.name], per_query=True)
            keys = {"condition": c.name, "measure": f"overlap@{k}", "attribute": "", "metric": f"antihub_overlap@{k}"}
            draws.append((keys, _mean_draw(ov), _mean_draw(ov[anti])))
        if plan.labels is not None:
            for col, y in label_arrays(plan.labels).items():
                pq = {
                    name: 100.0 * precision_at_k(nb, y[plan.g_idx], y[splan.q_sel], per_query=True)
                    for name, nb in snb.items()
                }
                for c in plan.conds:
                    both = ~np.isnan(pq[c.name]) & ~np.isnan(pq["reference"])
                    keys = {
                        "condition": c.name,
                        "measure": f"ΔP@{k}",
                        "attribute": col,
                        "metric": f"delta_antihub_p@{k}",
                    }
                    a, b = pq[c.name], pq["reference"]
                    draws.append((keys, (a[both], b[both]), (a[both & anti], b[both & anti])))
    else:
        ref = snb["reference"]
        on_anti = occ[ref] == 0  # the reference top-k slots holding an anti-hub gallery row
        has = on_anti.any(axis=1)
        for c in plan.conds:
            kept = (ref[:, :, None] == snb[c.name][:, None, :]).any(axis=2)
            all_kept = 100.0 * kept.mean(axis=1)
            anti_kept = 100.0 * (kept & on_anti).sum(axis=1)[has] / on_anti.sum(axis=1)[has]
            keys = {"condition": c.name, "measure": f"overlap@{k}", "attribute": "", "metric": f"antihub_recall@{k}"}
            draws.append((keys, _mean_draw(all_kept), _mean_draw(anti_kept)))
    if plan.positives is not None and plan.scored is not None and plan.scored.size:
        scored = plan.scored
        pos = [np.searchsorted(plan.g_idx, plan.positives[plan.q_sel[i]]) for i in scored]
        if plan.self_search:
            anti = occ[plan.self_pos[scored]] == 0
        else:
            anti = np.array([bool((occ[p] == 0).any()) for p in pos])
        hits = {name: 100.0 * hit_at_k(nb[scored], pos, per_query=True) for name, nb in neighbours.items()}
        for c in plan.conds:
            a, b = hits[c.name], hits["reference"]
            keys = {"condition": c.name, "measure": f"ΔHit@{k}", "attribute": "", "metric": f"delta_antihub_hit@{k}"}
            draws.append((keys, (a, b), (a[anti], b[anti])))
    return draws


def measure(
    plan: Plan, neighbours: dict[str, np.ndarray], sample: tuple, intervals: Callable, search: Callable
) -> Section:
    """The reference's k-occurrence (:func:`occurrence`) summarized, and per condition each measure
    over all queries and over the anti-hub subset (:func:`_tails`) with bootstrap intervals (one
    ``intervals`` call); a subset of fewer than 2 queries records NaN, so a ``--fail-if`` rule on it fails."""
    k = plan.k
    if len(graph_rows(plan)) <= k + 1:
        return Section(False)
    start = time.perf_counter()
    rows, occ = occurrence(plan, neighbours, search)
    seconds = time.perf_counter() - start
    n_k = occ[rows]
    summary = hub.hubness(n_k, k)
    records = [record(NAME, m, "reference", v) for m, v in summary.items()]
    if not plan.self_search:
        records.append(
            record(
                NAME,
                "query_k_skewness",
                "reference",
                hub.k_skewness(hub.k_occurrence(neighbours["reference"], len(plan.G))),
            )
        )
    draws = _tails(plan, neighbours, sample, occ)
    calls, where = [], []
    for _, every, anti in draws:
        for d in (every, anti):
            where.append(len(calls) if len(d[0]) >= 2 else None)
            if len(d[0]) >= 2:
                calls.append((*d, None, plan.n_draws, 0.95, plan.seed))
    ivs = intervals(calls) if calls else []
    table, notes = [], []
    for i, (keys, every, anti) in enumerate(draws):
        got = [ivs[w] if w is not None else None for w in where[2 * i : 2 * i + 2]]
        row = {"condition": keys["condition"], "measure": keys["measure"], "attribute": keys["attribute"]}
        for label, iv, d in zip(("all", "antihub"), got, (every, anti)):
            row |= {
                label: np.nan if iv is None else iv.mean,
                f"{label}_low": np.nan if iv is None else iv.low,
                f"{label}_high": np.nan if iv is None else iv.high,
                f"{label}_queries": len(d[0]),
            }
        table.append(row)
        scale = 100.0 if keys["measure"].startswith("overlap") else 1.0  # overlap and recall: shares; changes: pp
        records.append(
            record(
                NAME,
                keys["metric"],
                keys["condition"],
                row["antihub"] / scale,
                keys["attribute"],
                row["antihub_low"] / scale,
                row["antihub_high"] / scale,
            )
        )
    small = {r["measure"] for r in table if r["antihub_queries"] < 2}
    if small:
        notes.append(f"hubness: fewer than 2 anti-hub queries for {', '.join(sorted(small))}; recorded as NaN")
    graph = (
        f"every one of the {len(plan.G):,} gallery rows"
        if len(rows) == len(plan.G)
        else f"a seeded sample of {len(rows):,} of the {len(plan.G):,} gallery rows (its own kNN graph)"
    )
    inputs = {"hubness": {"graph_rows": int(len(rows)), "graph": graph, "antihubs": int((n_k == 0).sum())}}
    counts = np.bincount(n_k)
    hist = pd.DataFrame({"k_occurrence": np.nonzero(counts)[0], "rows": counts[counts > 0]})
    tables = {NAME: hist} | ({TAIL: pd.DataFrame(table)} if table else {})
    return Section(True, records, tables, notes, inputs, {"hubness_graph_s": seconds})


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence, the k-occurrence's summary and chart, the anti-hub table."""
    return section(report, NAME, MISSING, _draw)


def _value(report: Report, metric: str) -> float:
    m = report.metrics
    return float(m[(m["section"] == NAME) & (m["metric"] == metric)]["value"].iloc[0])


def _draw(report: Report, hist: pd.DataFrame, mark: dict) -> list:
    k = report.inputs["k"]
    about = report.inputs.get("hubness", {})
    n_rows = int(hist["rows"].sum())
    line = (
        f"*k-occurrence* (how many rows have a row among their {k} nearest others), over "
        f"{about.get('graph', f'{n_rows:,} rows')}: "
        f"skewness {_value(report, 'k_skewness'):.4f}; hubs (N_k ≥ {hub.HUB_FACTOR * k}) "
        f"{100 * _value(report, 'hub_share'):.2f}% of rows, filling {100 * _value(report, 'hub_occurrence'):.1f}% of "
        f"the neighbour slots; anti-hubs (N_k = 0) {100 * _value(report, 'antihub_share'):.2f}% of rows "
        f"({about.get('antihubs', 0):,})."
    )
    if not report.inputs.get("queries_are_vectors", True):
        skew = _value(report, "query_k_skewness")
        line += f" From the searched queries, the gallery's k-occurrence has skewness {skew:.4f}."
    parts = [
        Markdown(line),
        exhibit.figure(
            chart(hist, k),
            name="report-hubness",
            **mark,
            caption=(
                f"How many gallery rows (symmetric-log scale, so that one row shows) have each k-occurrence N_k in "
                f"the kNN graph at k = {k} (exact counts, no interval): anti-hubs (N_k = 0) and hubs "
                f"(N_k ≥ {hub.HUB_FACTOR * k}) coloured apart."
            ),
        ),
    ]
    tail = report.tables.get(TAIL)
    if tail is not None and not tail.empty:
        parts.append(_tail_table(report, tail, mark))
    return parts


def _tail_table(report: Report, tail: pd.DataFrame, mark: dict) -> exhibit.Exhibit:
    k = report.inputs["k"]
    self_search = report.inputs.get("queries_are_vectors", True)
    subset = "anti-hub queries" if self_search else "anti-hub rows"
    shown = tail.assign(
        measure=[
            f"{r['measure']} {r['attribute']}".strip() + (" (%)" if r["measure"].startswith("overlap") else " (pp)")
            for r in tail.to_dict("records")
        ]
    ).drop(columns="attribute")
    shown = shown.set_index(["measure", "condition"])
    shown.columns = pd.MultiIndex.from_tuples(
        [
            (
                "all queries" if c.startswith("all") else subset,
                c.split("_")[-1].replace("antihub", "value").replace("all", "value").replace("queries", "n"),
            )
            for c in shown.columns
        ]
    )
    what = (
        f"the queries whose own row is an anti-hub (in no other row's top {k})"
        if self_search
        else f"the anti-hub gallery rows (in no other gallery row's top {k}) in the reference top {k}: the share kept, "
        "over the queries whose reference top k holds one"
    )
    return exhibit.table(
        shown,
        name="report-hubness-table",
        **mark,
        collapsed="Each condition on all queries and on the anti-hubs: every number",
        caption=(
            f"Each condition over all queries and over {what}, with 95% bootstrap intervals over those queries "
            f"(low, high). overlap@{k}: mean percent of the reference's top {k} still returned; ΔP@{k}, ΔHit@{k}: "
            "mean per-query change from the reference in percentage points (paired); n: the queries in each subset. "
            "A gap between the two columns is damage an average hides."
        ),
    )


def chart(hist: pd.DataFrame, k: int) -> alt.Chart:
    """Rows per k-occurrence (bars on a symmetric-log count, which draws them from 0), anti-hubs and
    hubs coloured apart."""
    group = np.where(
        hist["k_occurrence"] == 0, "anti-hub", np.where(hist["k_occurrence"] >= hub.HUB_FACTOR * k, "hub", "neither")
    )
    data = hist.assign(group=group)
    domain = ["anti-hub", "neither", "hub"]
    colours = [theme.PALETTE["vermillion"], theme.PALETTE["grey"], theme.PALETTE["blue"]]
    return theme.legend_below(
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X("k_occurrence:Q", title=f"k-occurrence N_k (k = {k})", bin=False),
            y=alt.Y("rows:Q", title="gallery rows", scale=alt.Scale(type="symlog")),
            color=alt.Color("group:N", title=None, scale=alt.Scale(domain=domain, range=colours)),
            tooltip=["k_occurrence", "rows", "group"],
        )
        .properties(width=theme.panel_width(1), height=180)
    )
