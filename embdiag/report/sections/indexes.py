"""Approximate indexes: recall along each knob against exact search, and each index's size.

Measured (:func:`measure`): per index, recall@k (tie-aware) and overlap@k against the exact
neighbours at each value of its knob, on at most :data:`CURVE_QUERIES` searched queries; its
size; as timings (not verified), its build time and each search's queries per second. Shown:
the recall curves (against the knob's value, or with ``timings`` against queries per second)
and the table of indexes."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import altair as alt
import numpy as np
import pandas as pd

from ...metrics.retrieval import ann_recall, overlap_at_k
from ...view import exhibits as exhibit
from ...view import theme
from .. import streams
from ..conditions import ReportCondition, _sample_rows
from .measured import Section, drop_self, record
from .presentation import for_reading, section

if TYPE_CHECKING:
    from ..measurement import Plan, Report

NAME = "indexes"
TITLE = "Approximate indexes: recall along each knob"
INTRO = ""
#: Why the section can be missing.
MISSING = "no approximate index (--index) was given"
#: What the section establishes and what not (the report's ``scope``).
SCOPE = (
    "Each index's recall@k against exact search at every value of its knob, with its size; speeds are"
    " this run's timings, not verified numbers."
)


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence, the recall curves and the table of indexes, or why there are none;
    ``timings``: show this run's speeds (queries per second, build time), which differ from run to
    run (a page that must re-execute byte for byte leaves them out)."""
    return section(report, NAME, MISSING, lambda report, table, mark: _draw(report, table, mark, timings))


#: Index curves: each knob value is searched with at most this many of the searched queries (quick: a fifth).
CURVE_QUERIES = 1_000


#: A search shorter than this is repeated (up to TIMING_REPEATS times) and its fastest run kept.
TIMING_S, TIMING_REPEATS = 0.25, 5


def _timed_search(c: ReportCondition, Q, G, k: int, value, repeats: int = TIMING_REPEATS):
    """``c``'s search of ``Q`` at knob ``value`` and its wall time: the fastest of up to
    ``repeats`` runs while a run takes less than TIMING_S (the results are the same each run)."""
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        S, I = c.search(Q, G, k, value)
        best = min(best, time.perf_counter() - start)
        if best >= TIMING_S:
            break
    return S, I, best


def measure(plan: Plan, neighbours: dict[str, np.ndarray]) -> Section:
    """Per approximate index: recall@k (tie-aware, :func:`~embdiag.metrics.retrieval.ann_recall`)
    and overlap@k against the reference's exact neighbours at each knob value of its ladder, on
    at most CURVE_QUERIES searched queries; its size; and, as timings, its build time and the
    queries per second of each search."""
    indexes = [c for c in plan.conds if c.kind == "index"]
    if not indexes:
        return Section(False)
    import faiss

    k = plan.k
    sel = _sample_rows(len(plan.Q), CURVE_QUERIES // (5 if plan.quick else 1), plan.seed, streams.CURVE)
    Q = np.asarray(plan.Q[sel])
    own = None if plan.self_pos is None else plan.self_pos[sel]
    exact = neighbours["reference"][sel]
    rows, curves, sizes, build, speed = [], [], [], [], []
    for c in indexes:
        ann = c.ann(plan.G)
        sizes.append(
            {
                "condition": c.name,
                "factory": ann.factory,
                "knob": ann.knob or "",
                "default": ann.default,
                "rows": ann.index_.ntotal,
                "index_bytes": ann.index_bytes,
                "bytes_per_vector": ann.bytes_per_vector,
            }
        )
        build.append({"condition": c.name, "build_s": ann.build_seconds_})
        for value in ann.ladder or (None,):
            S, I, seconds = _timed_search(
                c, Q, plan.G, k + plan.self_search, value, TIMING_REPEATS if plan.timed else 1
            )
            found = drop_self(S, I, own, k)[1]
            recall = ann_recall(Q, plan.G, found, exact)
            overlap = overlap_at_k(exact, found)
            setting = "" if value is None else f"{ann.knob}={value}"
            curves.append(
                {
                    "condition": c.name,
                    "knob": ann.knob or "",
                    "value": value,
                    "default": value == ann.default,
                    f"recall@{k}": recall,
                    f"overlap@{k}": overlap,
                    "queries": len(Q),
                }
            )
            speed.append(
                {"condition": c.name, "knob": ann.knob or "", "value": value, "queries_per_s": len(Q) / seconds}
            )
            rows += [record("indexes", f"recall@{k}", c.name, recall, setting)]
        rows += [record("indexes", "index_bytes", c.name, ann.index_bytes)]
    tables = {"indexes": pd.DataFrame(sizes), "index_curves": pd.DataFrame(curves)}
    timings = {"faiss_threads": faiss.omp_get_max_threads(), "index_builds": build, "index_searches": speed}
    sampled = f"{len(Q):,} of the {len(plan.Q):,} searched queries" if len(Q) < len(plan.Q) else "every searched query"
    return Section(
        True, rows, tables, inputs={"index_curves": f"index curves on {sampled} (seed {plan.seed})"}, timings=timings
    )


def curve_table(report: Report, timings: bool = False) -> pd.DataFrame:
    """Each index's curve (table ``index_curves``), with this run's queries per second beside each
    point when ``timings`` and the report has them."""
    curves = report.tables["index_curves"]
    speeds = report.timings.get("index_searches") if timings else None
    if not speeds:
        return curves
    qps = pd.DataFrame(speeds)[["condition", "value", "queries_per_s"]]
    return curves.merge(qps, on=["condition", "value"], how="left")


def _draw(report: Report, table: pd.DataFrame, mark: dict, timings: bool) -> list:
    k = report.inputs["k"]
    curves = curve_table(report, timings)
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
    shown = for_reading(shown[columns]).rename(
        columns={"default": "knob (default)", "index_bytes": "index (MiB)", "build_s": "build (s)"}
    )
    where = report.inputs.get("index_curves", "")
    speed = f", this run's timing with {report.timings['faiss_threads']} FAISS thread(s), not verified" if fast else ""
    return [
        exhibit.figure(
            curve_chart(curves, k),
            name="report-index-curves",
            **mark,
            caption=(
                f"recall@{k} of each index against exact search (tie-aware: a row tied with the k-th exact "
                f"neighbour counts) at each knob value ({where}); filled: its default"
                + (f"; x: queries per second (log){speed}." if fast else "; x: the knob's value (log).")
            ),
        ),
        exhibit.table(
            shown.set_index("condition"),
            name="report-indexes",
            **mark,
            extremes=False,
            caption=(
                "Each index: knob and default, rows, serialized size, what each row adds (codes, ids, links; "
                "shared codebooks not counted), and its FAISS factory string"
                + (
                    "; build: this run's seconds (an HNSW graph on every FAISS thread, the rest on one; a timing, "
                    "not verified)."
                    if builds
                    else "."
                )
            ),
        ),
    ]


def curve_chart(curves: pd.DataFrame, k: int = 10, room: int = theme.COLUMN_PX) -> alt.LayerChart:
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
