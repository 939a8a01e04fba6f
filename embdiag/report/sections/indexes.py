"""Approximate indexes: the cheapest setting reaching a target recall, recall along each knob
against exact search, and each index's size.

Measured (:func:`measure`): per index, recall@k (tie-aware) and overlap@k against the exact
neighbours at each value of its knob, on at most :data:`CURVE_QUERIES` searched queries; its
size; as timings (not verified), its build time and each search's queries per second. Then
(:func:`tune`) the setting of each index reaching the report's target recall at each k of
:func:`tuning_ks`, the cheapest of a sweep (:func:`~embdiag.interventions.ann.sweep`: a named
``hnsw`` over M x efConstruction x efSearch, a named ``ivfpq`` over nlist x nprobe, any other
index along its knob; :func:`~embdiag.interventions.ann.cheapest` for the test and the cost
order). Shown: the answer, the sweep, the recall curves (against the knob's value, or with
``timings`` against queries per second) and the table of indexes."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import altair as alt
import numpy as np
import pandas as pd

from ...interventions import ann as ann_sweep
from ...metrics.retrieval import ann_recall, overlap_at_k, topk
from ...view import exhibits as exhibit
from ...view import theme
from ...view.markdown import Markdown
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
    "Each index's recall@k against exact search at every value of its knob, with its size, and the cheapest swept"
    " setting whose recall interval reaches the target recall at each k; speeds are this run's timings, not verified"
    " numbers."
)


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence, each index's setting for the target recall (the answer, its table, the
    sweep), the recall curves and the table of indexes, or why there are none;
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
    tuned_rows, tuned_tables, tuned_timings = tune(plan, indexes, Q, own)
    target = plan.target_recall
    inputs = {
        "index_curves": f"index curves on {sampled} (seed {plan.seed})",
        "index_setting": (
            f"index settings for recall@k >= {target:g} on the curves' queries, at k = "
            f"{', '.join(map(str, tuning_ks(plan.k, len(plan.G), plan.self_search)))}"
        ),
    }
    return Section(True, rows + tuned_rows, tables | tuned_tables, inputs=inputs, timings=timings | tuned_timings)


#: The k a setting is found for besides the report's own, each kept where the gallery allows it.
TUNING_KS = (1, 10, 100)


def tuning_ks(k: int, n_gallery: int, self_search: bool) -> list[int]:
    """The k a setting is found for in a report of k ``k``: :data:`TUNING_KS` and ``k``, each at
    most what a report's k may be on a gallery of ``n_gallery`` rows (less 2, less 1 more when the
    queries are its rows, ``self_search``: :func:`~embdiag.report.measurement.check_k`).

    Example:
        >>> tuning_ks(5, 3000, True), tuning_ks(10, 60, False)
        ([1, 5, 10, 100], [1, 10])
    """
    limit = n_gallery - 2 - bool(self_search)
    return sorted({j for j in (*TUNING_KS, k) if j <= limit})


def tuning_metrics(k: int) -> tuple[str, ...]:
    """The metrics an index's setting for the target recall records at ``k`` (:func:`tune`)."""
    return (f"tuned_recall@{k}", f"tuned_bytes_per_vector@{k}", f"reaches_target@{k}")


def _settings_text(row: dict) -> str:
    """``"M=16, efConstruction=200, efSearch=64"``: a sweep row's build and knob value (``"—"``: neither)."""
    parts = [row["build"]] if row["build"] else []
    if row["knob"]:
        parts.append(f"{row['knob']}={int(row['value'])}")
    return ", ".join(parts) or "—"


#: A sweep row's columns that are this run's timings (kept out of the report's tables).
_TIMED = ("build_s", "queries_per_s")


def tune(plan: Plan, indexes: list[ReportCondition], Q, own) -> tuple[list[dict], dict, dict]:
    """Each index's cheapest setting reaching the report's target recall at each k of
    :func:`tuning_ks` (:func:`~embdiag.interventions.ann.cheapest`), from a sweep
    (:func:`~embdiag.interventions.ann.sweep`) of the queries ``Q`` (the curves' sample; ``own``
    their rows in the gallery, or None) against their exact neighbours (``topk``): a named
    ``hnsw`` or ``ivfpq`` over its family's builds (:func:`~embdiag.interventions.ann.sweep_builds`,
    its own build reused), any other index along its knob.

    Returns the metric records (per index and k: ``tuned_recall@k`` with its interval and
    ``tuned_bytes_per_vector@k``, NaN where no swept setting reaches the target;
    ``reaches_target@k``, 1 or 0), the tables ``index_setting`` (per index and k: the setting, or
    the best swept where none reaches) and ``index_sweep`` (every setting searched), and the
    timings ``index_tuning_builds`` and ``index_tuning_searches`` (each counted search timed once,
    untimed without ``plan.timed``: the sweep searches many settings)."""
    target = float(plan.target_recall)
    ks = tuning_ks(plan.k, len(plan.G), plan.self_search)
    n, d = np.shape(plan.G)
    extra = plan.self_search
    I = topk(Q, plan.G, ks[-1] + extra)[1]
    exact = drop_self(I, I, own, ks[-1])[1]
    repeats = 1 if plan.timed else 0  # each counted search timed once: a sweep searches many settings
    records, chosen, swept, builds, searches = [], [], [], [], []
    for c in indexes:
        own_build = c.ann(plan.G)
        if c.params and c.name in ("hnsw", "ivfpq"):
            grid = ann_sweep.sweep_builds(c.name, n, d, c.seed, built=own_build)
        else:
            grid = [({}, own_build)]
        rows = ann_sweep.sweep(
            grid, plan.G, Q, exact, ks, own=own, target=target, repeats=repeats, min_seconds=TIMING_S
        )
        seconds = {r["build"]: r["build_s"] for r in rows}
        builds += [{"condition": c.name, "build": b, "build_s": t} for b, t in seconds.items()]
        for k in ks:
            at_k = [r for r in rows if r["k"] == k]
            pick, best = ann_sweep.cheapest(at_k, target)
            shown = pick if pick is not None else best
            for r in at_k:
                r["chosen"] = r is pick
            chosen.append(
                {
                    "condition": c.name,
                    "k": k,
                    "target": target,
                    "reached": pick is not None,
                    "setting": _settings_text(shown),
                    "build": shown["build"],
                    "nlist": shown.get("nlist", own_build.nlist),
                    "knob": shown["knob"],
                    "value": shown["value"],
                    "recall": shown["recall"],
                    "low": shown["low"],
                    "high": shown["high"],
                    "queries": shown["queries"],
                    "bytes_per_vector": shown["bytes_per_vector"],
                    "ops_per_query": shown["ops_per_query"],
                    "settings_swept": len(at_k),
                    "settings_reaching": sum(r["reaches"] for r in at_k),
                }
            )
            got = pick or {"recall": np.nan, "low": np.nan, "high": np.nan, "bytes_per_vector": np.nan}
            recall, size, reaches = tuning_metrics(k)
            records += [
                record("indexes", recall, c.name, got["recall"], "", got["low"], got["high"]),
                record("indexes", size, c.name, got["bytes_per_vector"]),
                record("indexes", reaches, c.name, float(pick is not None)),
            ]
        searches += [
            {
                "condition": c.name,
                "build": r["build"],
                "k": r["k"],
                "value": r["value"],
                "queries_per_s": r["queries_per_s"],
            }
            for r in rows
        ]
        swept += [
            {"condition": c.name, **{key: v for key, v in r.items() if key not in _TIMED and key != "rank"}}
            for r in rows
        ]
    tables = {"index_setting": pd.DataFrame(chosen), "index_sweep": pd.DataFrame(swept)}
    return records, tables, {"index_tuning_builds": builds, "index_tuning_searches": searches}


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
    return setting_exhibits(report, mark, timings) + [
        exhibit.figure(
            curve_chart(curves, k),
            name="report-index-curves",
            **mark,
            caption=(
                f"recall@{k} of each index against exact search (tie-aware) at each knob value ({where}); "
                "filled: its default"
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


def _tuned_speeds(report: Report) -> pd.DataFrame | None:
    """This run's queries per second of each swept setting (None without them)."""
    speeds = report.timings.get("index_tuning_searches")
    if not speeds:
        return None
    qps = pd.DataFrame(speeds)
    return qps if qps["queries_per_s"].notna().any() else None


def _with_speed(table: pd.DataFrame, report: Report, timings: bool) -> pd.DataFrame:
    """``table`` (rows of the sweep) with this run's queries per second beside each row when
    ``timings`` and the report has them."""
    qps = _tuned_speeds(report) if timings else None
    if qps is None:
        return table
    return table.merge(qps, on=["condition", "build", "k", "value"], how="left")


def answer(report: Report, timings: bool = False) -> Markdown:
    """Per index, at the report's k (every k when the sweep has not it; the others are in the
    folded table), the cheapest setting reaching the target recall, with its recall interval,
    bytes per vector, operations per query and (``timings``) this run's queries per second; or
    that none of the swept settings reaches it, and the best one."""
    table = _with_speed(report.tables["index_setting"], report, timings)
    if (table["k"] == report.inputs["k"]).any():
        table = table[table["k"] == report.inputs["k"]]
    lines = []
    for _, r in table.iterrows():
        head = f"For recall@{r['k']} ≥ {r['target']:g}, **{r['condition']}**"
        recall = f"recall {r['recall']:.3f} [{r['low']:.3f}, {r['high']:.3f}]"
        if r["reached"]:
            cost = [f"{r['bytes_per_vector']:,.0f} bytes/vector"]
            if np.isfinite(r["ops_per_query"]):
                cost.append(f"{r['ops_per_query']:,.0f} operations/query")
            if "queries_per_s" in r and np.isfinite(r["queries_per_s"]):
                cost.append(f"{r['queries_per_s']:,.0f} queries/s (this run)")
            lines.append(f"- {head}: {r['setting']}: {', '.join(cost)} ({recall}).")
        else:
            bound = r["knob"] == "nprobe" and r["value"] == r["nlist"]
            lines.append(
                f"- {head}: none of the {r['settings_swept']} swept settings reaches {r['target']:g}; the best, "
                f"{r['setting']}, has {recall}"
                + (" with every list visited: its codes bound recall." if bound else ".")
            )
    return Markdown("\n".join(lines))


def setting_exhibits(report: Report, mark: dict, timings: bool = False) -> list:
    """The answer (:func:`answer`), the table of settings and the chart of the sweep (nothing for a
    report without them)."""
    if "index_setting" not in report.tables or report.tables["index_setting"].empty:
        return []
    table = _with_speed(report.tables["index_setting"], report, timings)
    target = float(table["target"].iloc[0])
    columns = ["condition", "k", "reached", "setting", "recall", "low", "high", "bytes_per_vector", "ops_per_query"]
    if "queries_per_s" in table:
        columns.append("queries_per_s")
    shown = table[columns].rename(
        columns={
            "recall": "recall@k",
            "low": "low",
            "high": "high",
            "bytes_per_vector": "bytes/vector",
            "ops_per_query": "operations/query",
            "queries_per_s": "queries/s",
        }
    )
    where = report.inputs.get("index_curves", "")
    out = [
        answer(report, timings),
        exhibit.table(
            shown.set_index(["condition", "k"]),
            name="report-index-setting",
            **mark,
            collapsed="The setting of each index at each k: every number",
            extremes=False,
            caption=(
                f"The cheapest swept setting of each index whose recall@k interval lies wholly at or above the target "
                f"{target:g} ({where}; tie-aware recall against exact search, 95% Wilson interval counting each query "
                "once); cheapest: fewest operations per query (FAISS's count of the search's multiply-adds and "
                "look-ups), then fewest bytes per vector, then the lesser build; where none reaches, the best swept"
                + (
                    ": queries/s is this run's timing of that one search, not verified."
                    if "queries_per_s" in table
                    else "."
                )
            ),
        ),
    ]
    sweep = report.tables["index_sweep"]
    counted = sweep[np.isfinite(sweep["ops_per_query"].astype(float))]
    if not counted.empty:
        out.append(
            exhibit.figure(
                sweep_chart(counted, target),
                name="report-index-sweep",
                **mark,
                caption=(
                    "recall@k of every swept setting against its operations per query (log), one line per build, "
                    f"one panel per k; filled: its interval reaches {target:g} (dashed); ringed: the setting chosen."
                ),
            )
        )
    return out


def sweep_chart(sweep: pd.DataFrame, target: float, room: int = theme.COLUMN_PX) -> alt.FacetChart:
    """recall@k of each swept setting against its operations per query (log x), one colour per
    index and build, a line through its knob's values; a panel per k, a row per index; the
    target as a dashed rule, settings reaching it filled, the chosen one ringed."""
    data = sweep.assign(
        series=[f"{c} {b}".strip() for c, b in zip(sweep["condition"], sweep["build"])],
        setting=[f"{knob}={int(v)}" if knob else "no knob" for knob, v in zip(sweep["knob"], sweep["value"])],
    )
    ks = sorted(data["k"].unique())
    floor = max(0.0, float(np.floor((min(data["recall"].min(), target) - 0.02) * 10) / 10))
    names = list(dict.fromkeys(data["series"]))
    legend = alt.Legend(labelLimit=0)  # a build's whole name: M, efConstruction or nlist
    colour = alt.Color("series:N", title="index and build", scale=theme.scale(names), sort=names, legend=legend)
    x = alt.X("ops_per_query:Q", title="operations per query (log)", scale=alt.Scale(type="log"))
    y = alt.Y("recall:Q", title="recall@k (tie-aware)", scale=alt.Scale(domain=[floor, 1]))
    about = [
        "condition",
        "build",
        "setting",
        "k",
        alt.Tooltip("recall:Q", format=".4f"),
        alt.Tooltip("low:Q", format=".4f"),
        alt.Tooltip("ops_per_query:Q", format=",.0f"),
        alt.Tooltip("bytes_per_vector:Q", format=",.1f"),
    ]
    base = alt.Chart().encode(x=x, y=y, color=colour)
    line = base.mark_line(strokeWidth=1.5).encode(order="value:Q", detail="series:N")
    hollow = base.transform_filter(alt.datum.reaches == False).mark_point(size=40, filled=False)  # noqa: E712
    solid = base.transform_filter(alt.datum.reaches == True).mark_point(size=50, filled=True)  # noqa: E712
    ring = base.transform_filter(alt.datum.chosen == True).mark_point(size=260, filled=False, color="black")  # noqa: E712
    rule = (
        alt.Chart()
        .mark_rule(strokeDash=theme.DASHES["reference"], color=theme.PALETTE["grey"])
        .encode(y=alt.datum(target))
    )
    layer = alt.layer(line, hollow.encode(tooltip=about), solid.encode(tooltip=about), ring, rule, data=data)
    width = theme.panel_width(len(ks), room=room)
    chart = layer.properties(width=width, height=200).facet(
        column=alt.Column("k:O", title="k"), row=alt.Row("condition:N", title=None)
    )
    return theme.legend_below(chart.resolve_scale(x="independent"), columns=2)
