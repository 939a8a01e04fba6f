"""Figures, tables and declared findings of the neighbour-stability chapter.

Every function reads the :class:`~embdiag.interventions.precision.StorageResult` list of
:func:`~embdiag.interventions.precision.compare_study_conditions` (one per condition, in
the study's order), the evaluation labels (attribute -> array) and, for the study's side,
``data/study/storage.csv`` (:func:`read_study`). Tables are pandas, figures Altair;
percentages are percentage points. Margins are the reference rank-k minus rank-(k+1)
scores; "changed" means the top-k identity set changed.
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from ...interventions.precision import OFFSET_CONDITIONS, STUDY_CONDITIONS, StorageResult, query_scores
from ...metrics.inference import all_of, at_least, at_most, not_testable, within
from ...metrics.retrieval import precision_at_k
from ...metrics.stats import Interval, paired_bootstrap, proportion_interval
from .. import theme
from ..findings import SCOPE, Claim, read_published, verdicts

#: Margin bins (score units) of the changed-query table, declared before measuring: decades, the
#: smallest bin being every margin below 1e-5.
MARGIN_EDGES = (0.0, 1e-5, 1e-4, 1e-3, 1e-2, math.inf)
#: Exact zeros (the references' score error) are drawn here on log axes.
ZERO_AT = 1e-17
ATTRIBUTE_NAMES = {"weather": "weather", "scene": "scene", "timeofday": "time of day"}
NATIVE, OFFSET = "native reference", "common-offset reference"
OFFSET_FP16 = "offset + FP16 gallery"
FP16 = ("FP16 gallery", "FP16 queries + gallery")
INT8 = ("INT8 gallery", "INT8 queries + gallery")
FP32 = "FP32 arithmetic"
#: Conditions of the certificate figure: one that is mostly certified, one that is not, and the offset.
CERTIFICATE_CONDITIONS = ("FP16 gallery", "INT8 gallery", OFFSET_FP16)
SOURCES = ("study", "this run")

#: Declared margins, fixed before this run's numbers were looked at; shares are percent of the
#: queries (or of the changed queries), P@k changes percentage points.
FEW, NONE, SMALLEST, BARELY_PP, MOST_KEPT, MANY_CERTIFIED = 1.0, 0.5, 50.0, 0.5, 50.0, 50.0
#: Conditions that store or compute differently (every condition but the two references).
PERTURBING = FP16 + INT8 + (FP32, OFFSET_FP16)
_PAIRED = "paired bootstrap over the queries of the changed indicators (conditional on the fixed gallery)"
#: The study's findings, each restated as a claim with a declared margin, fixed before looking at this run's numbers.
CRITERIA = {
    "FP16 changes few queries": Claim(
        f"in each FP16 condition the share of queries whose top k changes is below {FEW:g}% (Wilson 95% interval)",
        f"{FEW:g}% of the queries",
        "twice the study's FP16 rate (5 of 983, 0.5%), which it reports as a handful of changes",
        was="each FP16 condition changes at most 1% of the queries, every change in the smallest margin bin",
    ),
    "FP16 changes sit at the smallest margins": Claim(
        f"in each FP16 condition that changes any query, more than {SMALLEST:g}% of its changed queries have a "
        f"reference margin in the smallest bin (below {MARGIN_EDGES[1]:g}; Wilson 95% interval over the changed "
        "queries); not testable where no FP16 query changes",
        f"{SMALLEST:g}% of the changed queries",
        "'all changes in the smallest bin' read as a majority, the most a handful of changes can show",
        was="each FP16 condition changes at most 1% of the queries, every change in the smallest margin bin",
    ),
    "INT8 changes more": Claim(
        "each INT8 condition changes a larger share of the queries than the FP16 condition storing the same "
        f"sides: the difference (pp), by {_PAIRED}, above 0",
        "0 pp",
        "an ordering: any difference in the stated direction",
        was="each INT8 condition changes more queries than the FP16 condition storing the same sides",
    ),
    "FP32 arithmetic changes none": Claim(
        f"FP32 arithmetic's share of changed queries is below {NONE:g}% (Wilson 95% interval)",
        f"{NONE:g}% of the queries",
        "0 of n can only be bounded: at about 1,000 queries the Wilson interval of 0 reaches 0.39%, so 0.5% is "
        "the tightest round margin such a run can meet",
        was="FP32 arithmetic changes no query",
    ),
    "offset + FP16 changes many": Claim(
        f"offset + FP16 changes more than {FEW:g}% of the queries (Wilson 95% interval) and a larger share than "
        f"every native-scale FP16 and INT8 condition (the difference, pp, by {_PAIRED}, above 0)",
        f"{FEW:g}% of the queries; 0 pp",
        "'many' is more than 'few' (FP16's margin) and more than every native-scale storage",
        was="offset + FP16 changes more queries than every native-scale FP16 and INT8 condition",
    ),
    "agreement hides turnover": Claim(
        f"under offset + FP16 the change of P@k lies within ±{BARELY_PP:g} pp on every attribute (paired "
        "bootstrap over the queries of each query's P@k change, conditional on the fixed gallery) and more than "
        f"{MOST_KEPT:g}% of its changed queries keep their own P@k on every attribute (Wilson 95% interval)",
        f"±{BARELY_PP:g} pp; {MOST_KEPT:g}% of the changed queries",
        "half a point of P@10 is one neighbour swapped in every twentieth query; 'hides' means most keep theirs",
        was="offset + FP16 changes at least one query, moves P@k by at most 0.5 points on every attribute, and at "
        "least 50% of its changed queries keep their P@k on every attribute",
    ),
    "certificate covers many FP16 queries": Claim(
        f"more than {MANY_CERTIFIED:g}% of the FP16-gallery queries are certified (Wilson 95% interval)",
        f"{MANY_CERTIFIED:g}% of the queries",
        "'many' read as most; the study certifies 576 of 983 (59%)",
        was="at least 50% of the FP16-gallery queries are certified",
    ),
    "certificate covers no INT8 or offset query": Claim(
        f"in each INT8 condition and in offset + FP16 the certified share is below {NONE:g}% (Wilson 95% "
        "interval): a limit of the study's certificate, which a tighter certificate need not share",
        f"{NONE:g}% of the queries",
        "as for 'none' above: the tightest round margin 0 of about 1,000 can meet",
        kind=SCOPE,
        was="no query of either INT8 condition or of offset + FP16 is certified",
    ),
    "no exception": Claim(
        "among the queries certified under at least one condition that stores or computes differently, the share "
        f"that changed under a condition certifying it is below {NONE:g}% (Wilson 95% interval)",
        f"{NONE:g}% of the certified queries",
        "as for 'none' above: the tightest round margin 0 of about 1,000 can meet",
        was="no certified query changes, in any of the eight conditions",
    ),
}


def _name(attribute: str) -> str:
    return ATTRIBUTE_NAMES.get(attribute, attribute)


def _by_name(results) -> dict[str, StorageResult]:
    return {r.condition.name: r for r in results}


def result_named(results, name: str) -> StorageResult:
    """The result of the condition called ``name``."""
    by = _by_name(results)
    if name not in by:
        raise ValueError(f"results: no condition named {name!r} (have {list(by)})")
    return by[name]


# ------------------------------------------------------------------------------ tables


def read_study(path=None) -> pd.DataFrame:
    """The study's storage table, one row per condition (index): ``data/study/storage.csv`` of the
    checkout (published values travel with the code, not with ``$EMBDIAG_DATA``)."""
    return read_published("storage.csv", path, index_col="condition")


def conditions_table(results) -> pd.DataFrame:
    """What each condition changes: storage of the gallery and of the queries, the arithmetic,
    and which vectors it ranks (the evaluation vectors, or the same moved by the common offset)."""
    offset = {c.name for c in OFFSET_CONDITIONS}
    fmt = {"native": "native (FP64)", "float16": "FP16", "float32": "FP32", "int8": "INT8 (per-vector scale)"}
    rows = [
        {
            "condition": r.condition.name,
            "vectors": "common offset added" if r.condition.name in offset else "as embedded",
            "gallery stored as": fmt[r.condition.gallery],
            "queries stored as": fmt[r.condition.queries],
            "normalize and score in": r.condition.arithmetic.replace("float", "FP"),
        }
        for r in results
    ]
    return pd.DataFrame(rows).set_index("condition")


def storage_table(results, labels: dict) -> pd.DataFrame:
    """This run in the study's columns: max score error, changed queries, queries, overlap@k,
    ΔP@k per attribute (points), certified queries, and per attribute the changed queries
    whose own P@k is unchanged (``<attribute>_p10_kept``; column stems as in the study's CSV)."""
    rows = []
    for r in results:
        row = {
            "condition": r.condition.name,
            "max_score_error": r.max_score_error,
            "changed_queries": r.n_changed,
            "n_queries": int(r.changed.size),
            "overlap_at_10": r.mean_overlap,
        }
        row.update({f"delta_{a}_p10_pp": r.precision_change(y) for a, y in labels.items()})
        row["certified"] = int(r.certified.sum())
        row["violations"] = r.violations
        row.update({f"{a}_p10_kept": r.agreement_kept(y) for a, y in labels.items()})
        rows.append(row)
    return pd.DataFrame(rows).set_index("condition")


def _sci(x) -> str:
    if pd.isna(x):
        return ""
    return "0" if x == 0 else f"{x:.3g}"


def _paired_rows(ours: pd.DataFrame, study: pd.DataFrame):
    """``(condition, source, row)`` for every condition of ``ours``: the study's row first, where it has one."""
    for cond in ours.index:
        for source, table in zip(SOURCES, (study, ours)):
            if cond in table.index:
                yield cond, source, table.loc[cond]


def side_by_side_frame(ours: pd.DataFrame, study: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """The study's table layout as numbers, the study's row above this run's for every condition:
    max score error, changed queries, queries, overlap@k and ΔP@k per attribute (pp; NaN where
    the source has no value)."""
    attrs = [c[len("delta_") : -len("_p10_pp")] for c in ours.columns if c.startswith("delta_")]
    rows = []
    for cond, source, r in _paired_rows(ours, study):
        row = {
            "condition": cond,
            "source": source,
            "max score error": float(r["max_score_error"]),
            "changed queries": int(r["changed_queries"]),
            "queries": int(r["n_queries"]),
            f"overlap@{k}": float(r["overlap_at_10"]),
        }
        for a in attrs:
            row[f"Δ {_name(a)} P@{k} (pp)"] = float(r.get(f"delta_{a}_p10_pp", np.nan))
        rows.append(row)
    return pd.DataFrame(rows).set_index(["condition", "source"])


def _delta(v) -> str:
    return "0" if v == 0 else f"{v:+.3f}"


def side_by_side(ours: pd.DataFrame, study: pd.DataFrame, k: int = 10):
    """:func:`side_by_side_frame` as a Styler in the study's precision (an exact zero as ``0``)."""
    frame = side_by_side_frame(ours, study, k)
    fmt = {c: _delta for c in frame.columns if c.startswith("Δ ")}
    fmt.update({"max score error": _sci, "changed queries": "{:d}", "queries": "{:d}", f"overlap@{k}": "{:.5f}"})
    return frame.style.format(fmt, na_rep="")


def this_run(table) -> np.ndarray:
    """Which rows of a table indexed by ``(condition, source)`` (a DataFrame or its Styler) are
    this run's: the rows whose highest and lowest values are marked."""
    frame = table.data if hasattr(table, "data") else table
    return np.asarray(frame.index.get_level_values("source") == "this run")


def margin_bins(margins, changed, edges=MARGIN_EDGES) -> pd.DataFrame:
    """Queries and changed queries per margin bin ``[edges[i], edges[i+1])``: columns ``bin``,
    ``queries``, ``changed``."""
    m = np.asarray(margins, dtype=np.float64)
    c = np.asarray(changed, dtype=bool)
    if m.shape != c.shape:
        raise ValueError(f"changed: expected shape {m.shape} like margins, got {c.shape}")
    edges = np.asarray(edges, dtype=np.float64)
    if edges.ndim != 1 or edges.size < 2 or (np.diff(edges) <= 0).any():
        raise ValueError("edges: expected at least two increasing values")
    which = np.searchsorted(edges, m, side="right") - 1
    labels = [_bin_label(lo, hi) for lo, hi in zip(edges[:-1], edges[1:])]
    inside = (which >= 0) & (which < len(labels))
    n = np.bincount(which[inside], minlength=len(labels))
    nc = np.bincount(which[inside & c], minlength=len(labels))
    return pd.DataFrame({"bin": labels, "queries": n, "changed": nc})


def _bin_label(lo: float, hi: float) -> str:
    if lo <= 0:
        return f"< {hi:g}"
    if math.isinf(hi):
        return f"≥ {lo:g}"
    return f"{lo:g} – {hi:g}"


def margin_table(results, edges=MARGIN_EDGES) -> pd.DataFrame:
    """Per condition (rows) and reference-margin bin (column groups): the queries whose top-k
    changed and all queries in the bin (counts)."""
    rows = {}
    for r in results:
        b = margin_bins(r.margins, r.changed, edges)
        rows[r.condition.name] = {
            (bin_, what): int(n)
            for bin_, c, q in zip(b["bin"], b["changed"], b["queries"])
            for what, n in (("changed", c), ("queries", q))
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["reference margin", None])
    table.index.name = "condition"
    return table


def certificate_frame(results, study: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per condition: changed queries, certified queries (this run; the study's where it states
    them, else NaN), coverage, exceptions (certified yet changed), and three medians in score
    units: the bound, the query's actual largest score change, and half the margin."""
    rows = []
    for r in results:
        stated = (
            np.nan if study is None or r.condition.name not in study.index else study.loc[r.condition.name, "certified"]
        )
        err = r.score_error if r.score_error is not None else np.full(r.changed.shape, np.nan)
        rows.append(
            {
                "condition": r.condition.name,
                "changed": r.n_changed,
                "certified": int(r.certified.sum()),
                "certified (study)": float(stated),
                "coverage (%)": 100.0 * r.coverage,
                "exceptions": r.violations,
                "median bound": float(np.median(r.bound)),
                "median actual error": float(np.median(err)),
                "median half margin": float(np.median(r.margins) / 2),
                "actual error below half margin (%)": 100.0 * float(np.mean(err < r.margins / 2)),
            }
        )
    return pd.DataFrame(rows).set_index("condition")


def certificate_table(results, study: pd.DataFrame | None = None):
    """:func:`certificate_frame` as a Styler: shares to one decimal, medians to two significant
    digits, blank where the study states nothing."""
    return certificate_frame(results, study).style.format(
        {
            "certified (study)": "{:.0f}",
            "coverage (%)": "{:.1f}",
            "actual error below half margin (%)": "{:.1f}",
            "median bound": "{:.2g}",
            "median actual error": "{:.2g}",
            "median half margin": "{:.2g}",
        },
        na_rep="",
    )


def agreement_frame(ours: pd.DataFrame, study: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Changed queries whose own P@k is unchanged, per attribute, for conditions that changed
    any query (this run) or for which the study reports it: ``changed queries``, then per
    attribute the count kept and its percentage of the changed queries (NaN where not stated)."""
    attrs = [c[: -len("_p10_kept")] for c in ours.columns if c.endswith("_p10_kept")]
    columns = ["changed queries"] + [f"{_name(a)} P@{k} kept{unit}" for a in attrs for unit in ("", " (%)")]
    rows = []
    for cond, source, r in _paired_rows(ours, study):
        n = int(r["changed_queries"])
        kept = {a: float(r.get(f"{a}_p10_kept", np.nan)) for a in attrs}
        if n == 0 or all(pd.isna(v) for v in kept.values()):
            continue
        row = {"condition": cond, "source": source, "changed queries": n}
        for a, v in kept.items():
            row[f"{_name(a)} P@{k} kept"], row[f"{_name(a)} P@{k} kept (%)"] = v, 100 * v / n
        rows.append(row)
    return pd.DataFrame(rows, columns=["condition", "source"] + columns).set_index(["condition", "source"])


def agreement_table(ours: pd.DataFrame, study: pd.DataFrame, k: int = 10):
    """:func:`agreement_frame` as a Styler: counts, percentages to whole points, blank where not stated."""
    frame = agreement_frame(ours, study, k)
    return frame.style.format({c: "{:.0f}" for c in frame.columns}, na_rep="")


# ----------------------------------------------------------------------------- figures


def _long(ours: pd.DataFrame, study: pd.DataFrame, columns: dict) -> pd.DataFrame:
    rows = []
    for source, table in zip(SOURCES, (study, ours)):
        for cond in ours.index:
            if cond not in table.index:
                continue
            for col, label in columns.items():
                v = table.loc[cond].get(col, np.nan)
                if pd.notna(v):
                    rows.append({"condition": cond, "source": source, "metric": label, "value": float(v)})
    return pd.DataFrame(rows)


def _points(data, x, order, title=None, width=170):
    y = alt.Y("condition:N", sort=order, title=None, axis=alt.Axis(labelLimit=200))
    src = list(SOURCES)  # same domain and title on the three channels: one merged legend
    shape = alt.Shape("source:N", sort=src, scale=alt.Scale(domain=src, range=["diamond", "circle"]), title=None)
    color = alt.Color("source:N", sort=src, scale=theme.scale(src), title=None)
    fill = alt.Fill(
        "source:N", sort=src, scale=alt.Scale(domain=src, range=["white", theme.colour("this run")]), title=None
    )
    return (
        alt.Chart(data)
        .mark_point(size=70, strokeWidth=1.6, opacity=1)
        .encode(
            x=x,
            y=y,
            shape=shape,
            color=color,
            fill=fill,
            tooltip=["condition", "source", alt.Tooltip("value:Q", format=".4g")],
        )
        .properties(width=width, height=22 * len(order), title=title or "")
    )


def overview_frame(ours: pd.DataFrame, study: pd.DataFrame) -> pd.DataFrame:
    """The data of :func:`overview_chart`: one row per condition, source and ``metric`` (``error``:
    max score error, ``changed``: changed queries, ``overlap``: mean overlap@k) with its ``value``."""
    return _long(ours, study, {"max_score_error": "error", "changed_queries": "changed", "overlap_at_10": "overlap"})


def overview_chart(ours: pd.DataFrame, study: pd.DataFrame, k: int = 10) -> alt.HConcatChart:
    """Per condition: max score error (log axis; exact zeros drawn at :data:`ZERO_AT`), changed
    queries and overlap@k; the study as open grey diamonds, this run as filled circles."""
    order = list(ours.index)
    data = overview_frame(ours, study)
    err = data[data["metric"] == "error"].assign(plotted=lambda d: d["value"].where(d["value"] > 0, ZERO_AT))
    p1 = _points(
        err,
        alt.X(
            "plotted:Q",
            title="max score error (log; exact 0 at left edge)",
            scale=alt.Scale(type="log", domain=[ZERO_AT, 1e-1]),
            axis=alt.Axis(values=[1e-16, 1e-10, 1e-4], format="~e"),  # three labels fit the panel
        ),
        order,
        "Max score error",
        width=145,
    )
    p2 = _points(
        data[data["metric"] == "changed"],
        alt.X("value:Q", title="changed queries"),
        order,
        f"Changed top-{k} sets",
        width=120,
    )
    p3 = _points(
        data[data["metric"] == "overlap"],
        alt.X("value:Q", title=f"mean overlap@{k}", scale=alt.Scale(zero=False)),
        order,
        f"Overlap@{k}",
        width=120,
    )
    chart = alt.hconcat(
        p1,
        p2.encode(y=alt.Y("condition:N", sort=order, axis=None)),
        p3.encode(y=alt.Y("condition:N", sort=order, axis=None)),
        spacing=8,
    )
    return theme.legend_below(chart)  # drawn in a result box: theme.RESULT_PX wide


def precision_change_frame(ours: pd.DataFrame, study: pd.DataFrame) -> pd.DataFrame:
    """The data of :func:`precision_change_chart`: one row per condition, source and attribute
    (``metric``) with ΔP@k in points (``value``)."""
    attrs = [c[len("delta_") : -len("_p10_pp")] for c in ours.columns if c.startswith("delta_")]
    return _long(ours, study, {f"delta_{a}_p10_pp": _name(a) for a in attrs})


def precision_change_chart(ours: pd.DataFrame, study: pd.DataFrame, k: int = 10) -> alt.HConcatChart:
    """ΔP@k per attribute (points, perturbed minus reference), study and this run, zero marked."""
    order = list(ours.index)
    attrs = [c[len("delta_") : -len("_p10_pp")] for c in ours.columns if c.startswith("delta_")]
    data = precision_change_frame(ours, study)
    lim = max(0.25, float(data["value"].abs().max()) * 1.1) if len(data) else 0.25
    panels = []
    for i, a in enumerate(attrs):
        part = data[data["metric"] == _name(a)]
        x = alt.X("value:Q", title=f"Δ P@{k} (pp)", scale=alt.Scale(domain=[-lim, lim]))
        zero = alt.Chart(pd.DataFrame({"value": [0.0]}))
        zero = zero.mark_rule(color="black", strokeDash=theme.DASHES["reference"]).encode(x="value:Q")
        p = alt.layer(zero, _points(part, x, order, _name(a), width=theme.panel_width(len(attrs), gap=15, room=500)))
        if i:
            p = p.encode(y=alt.Y("condition:N", sort=order, axis=None))
        panels.append(p)
    return alt.hconcat(*panels, spacing=8)


def margin_chart(results, bins: int = 36) -> alt.LayerChart:
    """Every query's reference margin (log axis) per condition: grey density strip of all queries,
    red circles for the changed ones, and a black tick at twice the condition's largest score
    error (a query can change only if its margin is below it)."""
    order = [r.condition.name for r in results]
    m_all = np.concatenate([r.margins for r in results])
    pos = m_all[m_all > 0]
    lo = 10 ** math.floor(math.log10(pos.min())) if pos.size else 1e-12
    hi = 10 ** math.ceil(math.log10(pos.max())) if pos.size else 1.0
    edges = np.logspace(math.log10(lo), math.log10(hi), bins + 1)
    strip, changed, ticks = [], [], []
    for r in results:
        m = np.clip(r.margins, lo, None)
        n, _ = np.histogram(m, edges)
        strip += [
            {"condition": r.condition.name, "lo": a, "hi": b, "queries": int(c)}
            for a, b, c in zip(edges[:-1], edges[1:], n)
            if c
        ]
        changed += [
            {
                "condition": r.condition.name,
                "margin": float(v),
                "query": int(q),
                "jitter": 12 * ((0.6180339887 * q) % 1 - 0.5),
            }  # fixed spread, so re-renders agree
            for q, v in zip(np.flatnonzero(r.changed), m[r.changed])
        ]
        if r.max_score_error > 0:
            ticks.append({"condition": r.condition.name, "twice": 2 * r.max_score_error})
    y = alt.Y("condition:N", sort=order, title=None, axis=alt.Axis(labelLimit=200))
    x_scale = alt.Scale(type="log", domain=[lo, hi])
    base = (
        alt.Chart(pd.DataFrame(strip))
        .mark_rect(color="#555555")
        .encode(
            x=alt.X(
                "lo:Q",
                scale=x_scale,
                title="reference margin: score at rank k minus rank k+1 (log)",
                axis=alt.Axis(grid=False),
            ),
            x2="hi:Q",
            y=y,
            opacity=alt.Opacity("queries:Q", scale=alt.Scale(range=[0.08, 0.75]), legend=None),
            tooltip=[
                alt.Tooltip("lo:Q", format=".2g", title="from"),
                alt.Tooltip("hi:Q", format=".2g", title="to"),
                "queries:Q",
            ],
        )
    )
    dots = (
        alt.Chart(pd.DataFrame(changed, columns=["condition", "margin", "query", "jitter"]))
        .mark_circle(color=theme.PALETTE["vermillion"], size=28, opacity=0.8)
        .encode(
            x=alt.X("margin:Q", scale=x_scale),
            y=y,
            yOffset=alt.YOffset("jitter:Q"),
            tooltip=["condition", "query", alt.Tooltip("margin:Q", format=".3g")],
        )
    )
    tick = (
        alt.Chart(pd.DataFrame(ticks, columns=["condition", "twice"]))
        .mark_tick(color="black", thickness=2.5, size=20)
        .encode(
            x=alt.X("twice:Q", scale=x_scale),
            y=y,
            tooltip=["condition", alt.Tooltip("twice:Q", format=".3g", title="2 × max score error")],
        )
    )
    return alt.layer(base, dots, tick).properties(width=theme.COLUMN_PX - 240, height=26 * len(order))


def _quantiles(values, n: int = 51) -> np.ndarray:
    return np.quantile(np.clip(np.asarray(values, dtype=np.float64), ZERO_AT, None), np.linspace(0, 1, n))


def certificate_chart(results, conditions=CERTIFICATE_CONDITIONS) -> alt.FacetChart:
    """Why coverage is low where few queries change: per condition, the distribution over queries
    (share of queries at or below x) of half the margin, of the certificate's bound, and of the
    query's actual largest score change, on one log axis. A query is certified when its half
    margin exceeds its bound; it can change only when its actual change reaches half its margin."""
    p = np.linspace(0, 1, 51)
    rows = []
    for name in conditions:
        r = result_named(results, name)
        series = {"half margin": r.margins / 2, "certificate bound": r.bound}
        if r.score_error is not None:
            series["actual largest score change"] = r.score_error
        for label, v in series.items():
            rows += [
                {"condition": name, "quantity": label, "value": float(q), "share": float(s)}
                for q, s in zip(_quantiles(v), p)
            ]
    data = pd.DataFrame(rows)
    kinds = ["half margin", "certificate bound", "actual largest score change"]
    chart = (
        alt.Chart(data)
        .mark_line(strokeWidth=2, interpolate="step-after")
        .encode(
            x=alt.X("value:Q", scale=alt.Scale(type="log"), title="score units (log)", axis=alt.Axis(grid=False)),
            y=alt.Y("share:Q", title="share of queries at or below", axis=alt.Axis(format="%")),
            color=alt.Color(
                "quantity:N",
                sort=kinds,
                scale=theme.scale(kinds),
                title=None,
            ),
            tooltip=[
                "condition",
                "quantity",
                alt.Tooltip("value:Q", format=".3g"),
                alt.Tooltip("share:Q", format=".0%"),
            ],
        )
        .properties(width=theme.panel_width(len(conditions), gap=50), height=190)
        .facet(column=alt.Column("condition:N", sort=list(conditions), title=None))
    )
    return theme.legend_below(chart)


def certificate_explanation(results, d: int, condition: str = "INT8 gallery", fp16: str = "FP16 gallery") -> str:
    """Why ``condition``'s coverage is low although few of its queries change, in numbers (Markdown)."""
    r, f = result_named(results, condition), result_named(results, fp16)
    g = r.gallery_error[r.gallery_error > 0] if (r.gallery_error > 0).any() else r.query_error
    gf = f.gallery_error[f.gallery_error > 0] if (f.gallery_error > 0).any() else f.query_error
    act = r.score_error if r.score_error is not None else np.full(r.changed.shape, np.nan)
    half = r.margins / 2
    return (
        f"Under **{condition}** a stored vector, normalized, lies a median {np.median(g):.2g} from the original "
        f"unit vector ({fp16}: {np.median(gf):.2g}, {np.median(g) / np.median(gf):.0f} times less): INT8 rounds each "
        f"coordinate to a step of 1/127 of the vector's largest coordinate, FP16 to about 1/2048 of the coordinate "
        f"itself. The certificate must hold whatever direction that error takes, so it assumes the worst: an error "
        f"pointing straight along the query, which moves the score by the error's full length. Its bound for a "
        f"query is therefore at least the largest error in the gallery ({g.max():.2g}) plus the query's own; the "
        f"median bound is {np.median(r.bound):.2g}, above the median half margin ({np.median(half):.2g}), so only "
        f"{int(r.certified.sum())} of {r.changed.size} queries ({100 * r.coverage:.1f}%) are certified. The actual "
        f"change of a score is the error's projection on the other vector: spread over {d} coordinates with signs "
        f"unrelated to the query, it is typically about 1/√{d} ≈ {1 / math.sqrt(d):.3f} of the error's length "
        f"(the largest of {r.changed.size - 1} such projections is a few times the typical one). "
        f"The largest actual change over the whole gallery has a median of {np.nanmedian(act):.2g} per query, "
        f"{np.median(r.bound) / np.nanmedian(act):.0f} times below the bound, and stays below half the margin for "
        f"{100 * np.mean(act < half):.1f}% of the queries: only {r.n_changed} changed. The certificate is a "
        f"guarantee, not an estimate; its coverage measures how much of the turnover can be *ruled out* in "
        f"advance, not how much happens."
    )


# ------------------------------------------------------------------ boundary illustration


def example_query(result: StorageResult) -> int:
    """The query the boundary figure shows: the changed query with the largest margin (the most
    visible flip), or the query with the smallest margin when none changed."""
    if result.n_changed:
        idx = np.flatnonzero(result.changed)
        return int(idx[np.argmax(result.margins[idx])])
    return int(np.argmin(result.margins))


def boundary_data(
    vectors, result: StorageResult, query: int | None = None, *, before: int = 4, after: int = 5
) -> pd.DataFrame:
    """One query's ranked reference scores around rank k, with the condition's score of the same
    items: one row per item and side (``rank`` in the reference order, ``side``, ``score``,
    ``status``: stays in, leaves, enters or stays out of the top k). ``vectors`` are the
    vectors ``result`` ranked (queries = gallery). Ranks ``k - before`` to ``k + after``, widened
    to include every item of the condition's top k."""
    k = result.k
    q = example_query(result) if query is None else int(query)
    ref, out = query_scores(vectors, result.condition, q)
    order = np.lexsort((np.arange(ref.size), -ref))[:-1]  # drop the query itself (-inf, last)
    if set(order[:k]) != set(result.reference_neighbors[q]) and result.margins[q] > 1e-12:
        raise ValueError("vectors: not the vectors this result ranked (the reference top-k differs)")
    rank = np.empty(ref.size, dtype=int)
    rank[order] = np.arange(1, order.size + 1)
    new = set(result.neighbors[q].tolist())
    old = set(order[:k].tolist())
    last = max([k + after] + [int(rank[j]) for j in new])
    items = order[max(0, k - 1 - before) : last]
    status = {True: {True: "stays in top k", False: "leaves top k"}, False: {True: "enters top k", False: "stays out"}}
    rows = []
    for j in items:
        st = status[j in old][j in new]
        rows.append({"rank": int(rank[j]), "item": int(j), "side": "reference", "score": float(ref[j]), "status": st})
        rows.append(
            {"rank": int(rank[j]), "item": int(j), "side": result.condition.name, "score": float(out[j]), "status": st}
        )
    table = pd.DataFrame(rows)
    table.attrs["query"] = q
    return table


def _items(ranks) -> str:
    ranks = [str(r) for r in ranks]
    return (
        f"the item at reference rank {ranks[0]}"
        if len(ranks) == 1
        else f"the items at reference ranks {', '.join(ranks[:-1])} and {ranks[-1]}"
    )


def boundary_caption(data: pd.DataFrame, result: StorageResult) -> str:
    """A caption for :func:`boundary_chart` naming the query, its margin and what crossed the cut."""
    k = result.k
    ref = data[data["side"] == "reference"]
    q_scores = ref.set_index("rank")["score"]
    q = int(data.attrs.get("query", -1))
    left = ref.loc[ref["status"] == "leaves top k", "rank"].tolist()
    entered = ref.loc[ref["status"] == "enters top k", "rank"].tolist()
    change = (
        f"{_items(left)} {'leaves' if len(left) == 1 else 'leave'} the top {k} and {_items(entered)} "
        f"{'enters' if len(entered) == 1 else 'enter'} it"
        if left
        else "no item crosses the cut"
    )
    err = (
        ""
        if result.score_error is None or q < 0
        else (f"; the condition moves this query's scores by up to {result.score_error[q]:.2g}")
    )
    return (
        f"Query {q} under {result.condition.name}: its rank-{k} and rank-{k + 1} reference scores differ by "
        f"{q_scores.loc[k] - q_scores.loc[k + 1]:.2g} (the margin, yellow band){err}; {change}. Filled "
        f"circles: reference scores; open diamonds: the same items' scores under the condition."
    )


def _boundary_panel(data: pd.DataFrame, ref: pd.Series, k: int, cond: str, title: str, label: bool):
    statuses = ["stays in top k", "leaves top k", "enters top k", "stays out"]
    color = alt.Color(
        "status:N",
        sort=statuses,
        scale=theme.scale(statuses),
        title=None,
    )
    lo, hi = int(data["rank"].min()), int(data["rank"].max())
    x = alt.X(
        "x:Q",
        title="rank in the reference ordering",
        axis=alt.Axis(values=list(range(lo, hi + 1))),
        scale=alt.Scale(domain=[lo - 0.5, hi + 0.5], nice=False, zero=False),
    )
    y = alt.Y("score:Q", title="cosine score", scale=alt.Scale(zero=False), axis=alt.Axis(format=".4f"))
    d = data.assign(x=data["rank"] + np.where(data["side"] == "reference", -0.12, 0.12))
    margin = float(ref.loc[k] - ref.loc[k + 1])
    band = (
        alt.Chart(pd.DataFrame({"lo": [ref.loc[k + 1]], "hi": [ref.loc[k]]}))
        .mark_rect(color="#ffd92f", opacity=0.5)
        .encode(y="lo:Q", y2="hi:Q")
    )
    cut = (
        alt.Chart(pd.DataFrame({"x": [k + 0.5]}))
        .mark_rule(strokeDash=theme.DASHES["reference"], color="black")
        .encode(x="x:Q")
    )
    links = alt.Chart(d).mark_line(color="#bbbbbb").encode(x=x, y=y, detail="item:N")
    sides = ["reference", cond]
    pts = (
        alt.Chart(d)
        .mark_point(size=80, strokeWidth=2, filled=False)
        .encode(
            x=x,
            y=y,
            color=color,
            shape=alt.Shape(
                "side:N", sort=sides, scale=alt.Scale(domain=sides, range=["circle", "diamond"]), title=None
            ),
            tooltip=["rank", "item", "side", alt.Tooltip("score:Q", format=".6f"), "status"],
        )
    )
    dots = alt.Chart(d[d["side"] == "reference"]).mark_circle(size=80, opacity=1).encode(x=x, y=y, color=color)
    layers = [band, cut, links, pts, dots]
    if label:
        layers.append(
            alt.Chart(pd.DataFrame({"x": [k + 0.55], "score": [float(ref.loc[k])], "text": [f"margin {margin:.2g}"]}))
            .mark_text(align="left", baseline="bottom", dy=-3)
            .encode(x="x:Q", y="score:Q", text="text:N")
        )
    return alt.layer(*layers).properties(width=theme.panel_width(2, gap=90), height=260, title=title)


def boundary_chart(data: pd.DataFrame, k: int = 10) -> alt.HConcatChart:
    """The top-k boundary of one query (from :func:`boundary_data`): reference scores (filled
    circles) and the condition's scores of the same items (open diamonds) by reference rank;
    the yellow band between the rank-k and rank-(k+1) reference scores is the margin, the dashed
    rule the top-k cut. Left: the ranks around k; right: zoom on the items that cross the cut
    and the two ranks beside it."""
    ref = data[data["side"] == "reference"].set_index("rank")["score"]
    cond = [s for s in data["side"].unique() if s != "reference"][0]
    crossing = data["status"].isin(["leaves top k", "enters top k"]) | data["rank"].isin([k, k + 1])
    chart = alt.hconcat(
        _boundary_panel(data, ref, k, cond, f"Ranks around {k}", False),
        _boundary_panel(data[crossing], ref, k, cond, "Zoom on the cut", True),
    ).resolve_scale(y="independent", x="independent")
    return theme.legend_below(chart)


# ----------------------------------------------------------------------------- findings


def share(successes, n) -> Interval:
    """The share ``successes / n`` in percent with its Wilson 95% interval."""
    i = proportion_interval(int(successes), int(n))
    return i._replace(mean=100 * i.mean, low=100 * i.low, high=100 * i.high, se=100 * i.se)


def bounded_difference(a: int, b: int, n: int) -> tuple[float, float, float]:
    """``(a - b) / n`` in percentage points with an interval that holds whatever the pairing of
    two counts of the same ``n`` queries: the far ends of their two Wilson 97.5% intervals
    (Bonferroni), for published counts whose per-query pairing is not known."""
    ia, ib = proportion_interval(int(a), int(n), 0.975), proportion_interval(int(b), int(n), 0.975)
    return 100 * (a - b) / n, 100 * (ia.low - ib.high), 100 * (ia.high - ib.low)


def change_difference(a: StorageResult, b: StorageResult, *, n_draws: int = 5000, seed: int = 0) -> Interval:
    """Share of queries changed under ``a`` minus under ``b`` (pp), by a paired bootstrap over the
    queries of the two changed indicators; conditional on the fixed gallery."""
    if a.changed.shape != b.changed.shape:
        raise ValueError(f"results: {a.condition.name} and {b.condition.name} rank different queries")
    return paired_bootstrap(100.0 * a.changed, 100.0 * b.changed, n_draws=n_draws, seed=seed)


def precision_changes(result: StorageResult, labels) -> np.ndarray:
    """Each query's P@k under the condition minus under its reference (pp; NaN where either is
    undefined for missing labels); their mean is :meth:`StorageResult.precision_change`."""
    before = precision_at_k(result.reference_neighbors, labels, per_query=True)
    after = precision_at_k(result.neighbors, labels, per_query=True)
    return np.round(100.0 * (after - before), 9)  # exact multiples of 100 / k where every label is known


def precision_change_interval(result: StorageResult, labels, *, n_draws: int = 5000, seed: int = 0) -> Interval:
    """Mean change of P@k (pp) with a paired bootstrap interval over the queries where it is defined."""
    d = precision_changes(result, labels)
    d = d[~np.isnan(d)]
    return paired_bootstrap(d, np.zeros_like(d), n_draws=n_draws, seed=seed)


def exceptions(results) -> tuple[int, int]:
    """``(exceptions, certified)``: queries that changed under a condition certifying them, and
    queries certified under at least one condition of :data:`PERTURBING` in ``results``."""
    rs = [r for r in results if r.condition.name in PERTURBING]
    certified = np.any([r.certified for r in rs], axis=0)
    broken = np.any([r.certified & r.changed for r in rs], axis=0)
    return int(broken.sum()), int(certified.sum())


def _about(decision, what: str):
    return decision._replace(reason=f"{what}: {decision.reason}")


def _pct(i) -> str:
    mean, low, high = i[:3]
    return f"{mean:.2f}% [{low:.2f}, {high:.2f}]"


def _pp(i) -> str:
    mean, low, high = i[:3]
    return f"{mean:+.2f} pp [{low:+.2f}, {high:+.2f}]"


def _counted(c: int, n: int) -> str:
    return f"{c} of {n} ({_pct(share(c, n))})"


def old_verdicts(results, labels: dict) -> dict:
    """Each finding's verdict under its old point-estimate criterion (:attr:`Claim.was`)."""
    by = _by_name(results)
    n = {c: by[c].n_changed for c in by}
    size = by[FP16[0]].changed.size
    fp16 = all(n[f] <= FEW / 100 * size and bool((by[f].changed_margins < MARGIN_EDGES[1]).all()) for f in FP16)
    o = by[OFFSET_FP16]
    agreement = (
        n[OFFSET_FP16] > 0
        and all(abs(o.precision_change(y)) <= BARELY_PP for y in labels.values())
        and all(o.agreement_kept(y) >= MOST_KEPT / 100 * n[OFFSET_FP16] for y in labels.values())
    )
    return {
        "FP16 changes few queries": fp16,
        "FP16 changes sit at the smallest margins": fp16,
        "INT8 changes more": n[INT8[0]] > n[FP16[0]] and n[INT8[1]] > n[FP16[1]],
        "FP32 arithmetic changes none": n[FP32] == 0,
        "offset + FP16 changes many": all(n[OFFSET_FP16] > n[c] for c in FP16 + INT8),
        "agreement hides turnover": agreement,
        "certificate covers many FP16 queries": by[FP16[0]].certified.sum() >= MANY_CERTIFIED / 100 * size,
        "certificate covers no INT8 or offset query": all(by[c].certified.sum() == 0 for c in INT8 + (OFFSET_FP16,)),
        "no exception": sum(r.violations for r in results) == 0,
    }


def _study_rows(study: pd.DataFrame) -> dict:
    """``{finding: (words, decision)}`` on the study's published counts, on its own attributes
    (Wilson intervals; a Bonferroni bound for differences of counts whose pairing is not published)."""
    attrs = [c[len("delta_") : -len("_p10_pp")] for c in study.columns if c.startswith("delta_")]
    size = int(study.loc[FP16[0], "n_queries"])

    def n(c):
        return int(study.loc[c, "changed_queries"])

    def diff(a, b):
        return bounded_difference(n(a), n(b), size)

    so = study.loc[OFFSET_FP16]
    kept = {a: int(so[f"{a}_p10_kept"]) for a in attrs if pd.notna(so.get(f"{a}_p10_kept"))}
    cert = {c: int(study.loc[c, "certified"]) for c in (FP16[0],) + INT8 + (OFFSET_FP16,)}
    return {
        "FP16 changes few queries": (
            "; ".join(f"{f}: {_counted(n(f), size)}" for f in FP16),
            all_of(*(_about(at_most(*share(n(f), size)[1:3], FEW), f"{f}, % changed") for f in FP16)),
        ),
        "FP16 changes sit at the smallest margins": (
            "all " + " and ".join(str(n(f)) for f in FP16) + " changes in the study's smallest bin (bins unpublished)",
            all_of(
                *(
                    _about(at_least(*share(n(f), n(f))[1:3], SMALLEST), f"{f}, % of changes in the smallest bin")
                    for f in FP16
                )
            ),
        ),
        "INT8 changes more": (
            "; ".join(f"{i} minus {f}: {_pp(diff(i, f))}" for i, f in zip(INT8, FP16)),
            all_of(*(_about(at_least(*diff(i, f)[1:], 0), f"{i} minus {f} (pp)") for i, f in zip(INT8, FP16))),
        ),
        "FP32 arithmetic changes none": (
            _counted(n(FP32), size),
            _about(at_most(*share(n(FP32), size)[1:3], NONE), "% changed"),
        ),
        "offset + FP16 changes many": (
            f"{_counted(n(OFFSET_FP16), size)}; at most {max(n(c) for c in FP16 + INT8)} under the others",
            all_of(
                _about(at_least(*share(n(OFFSET_FP16), size)[1:3], FEW), "% changed"),
                *(_about(at_least(*diff(OFFSET_FP16, c)[1:], 0), f"minus {c} (pp)") for c in FP16 + INT8),
            ),
        ),
        "agreement hides turnover": (
            "ΔP@10 "
            + ", ".join(f"{_name(a)} {so[f'delta_{a}_p10_pp']:+.3f}" for a in attrs)
            + f" pp; kept {', '.join(f'{_name(a)} {v}' for a, v in kept.items())} of {n(OFFSET_FP16)}",
            all_of(
                not_testable("the study published ΔP@10 as a point estimate without an interval"),
                *(
                    _about(at_least(*share(v, n(OFFSET_FP16))[1:3], MOST_KEPT), f"{_name(a)} kept, % of changed")
                    for a, v in kept.items()
                ),
            ),
        ),
        "certificate covers many FP16 queries": (
            _counted(cert[FP16[0]], size),
            _about(at_least(*share(cert[FP16[0]], size)[1:3], MANY_CERTIFIED), "% certified"),
        ),
        "certificate covers no INT8 or offset query": (
            "; ".join(f"{c}: {cert[c]} of {size}" for c in INT8 + (OFFSET_FP16,)),
            all_of(
                *(_about(at_most(*share(cert[c], size)[1:3], NONE), f"{c}, % certified") for c in INT8 + (OFFSET_FP16,))
            ),
        ),
        "no exception": (
            f"0 of the {cert[FP16[0]]} FP16-gallery queries it certifies changed",
            _about(at_most(*share(0, cert[FP16[0]])[1:3], NONE), "% of certified changed"),
        ),
    }


def findings(results, labels: dict, study: pd.DataFrame | None = None, *, n_draws: int = 5000, seed: int = 0):
    """The verdict table (:func:`~embdiag.paper.findings.verdicts`) of :data:`CRITERIA`: each
    finding decided on this run by Wilson intervals of shares of queries and paired bootstrap
    intervals over the queries (``n_draws`` draws, ``seed``; conditional on the fixed gallery,
    whose vectors are also the queries), and on the study's published counts where they allow
    it (``holds in the study``); the old point-estimate verdicts in ``old verdict``."""
    study = read_study() if study is None else study
    by = _by_name(results)
    need = [c.name for c in STUDY_CONDITIONS] + [OFFSET, OFFSET_FP16]
    missing = [n for n in need if n not in by]
    if missing:
        raise ValueError(f"results: missing the conditions {missing}")
    boot = {"n_draws": n_draws, "seed": seed}
    size = by[FP16[0]].changed.size
    n = {c: by[c].n_changed for c in by}
    ours = {}

    ours["FP16 changes few queries"] = (
        "; ".join(f"{f}: {_counted(n[f], size)}" for f in FP16),
        all_of(*(_about(at_most(*share(n[f], size)[1:3], FEW), f"{f}, % changed") for f in FP16)),
    )
    small = {f: int((by[f].changed_margins < MARGIN_EDGES[1]).sum()) for f in FP16}
    judged = [f for f in FP16 if n[f]]
    ours["FP16 changes sit at the smallest margins"] = (
        "; ".join(f"{f}: {small[f]} of {n[f]} changes in the smallest bin" for f in FP16),
        all_of(
            *(
                _about(at_least(*share(small[f], n[f])[1:3], SMALLEST), f"{f}, % of changes in the smallest bin")
                for f in judged
            )
        )
        if judged
        else not_testable("no FP16 query changed its top k, so where the changes fall cannot be judged"),
    )
    more = {(i, f): change_difference(by[i], by[f], **boot) for i, f in zip(INT8, FP16)}
    ours["INT8 changes more"] = (
        "; ".join(f"{i} minus {f}: {_pp(d)}" for (i, f), d in more.items()),
        all_of(*(_about(at_least(d.low, d.high, 0), f"{i} minus {f} (pp)") for (i, f), d in more.items())),
    )
    ours["FP32 arithmetic changes none"] = (
        f"{_counted(n[FP32], size)} (max score error {by[FP32].max_score_error:.2g})",
        _about(at_most(*share(n[FP32], size)[1:3], NONE), "% changed"),
    )
    over = {c: change_difference(by[OFFSET_FP16], by[c], **boot) for c in FP16 + INT8}
    ours["offset + FP16 changes many"] = (
        f"{_counted(n[OFFSET_FP16], size)}; minus " + ", ".join(f"{c} {_pp(d)}" for c, d in over.items()),
        all_of(
            _about(at_least(*share(n[OFFSET_FP16], size)[1:3], FEW), "% changed"),
            *(_about(at_least(d.low, d.high, 0), f"minus {c} (pp)") for c, d in over.items()),
        ),
    )
    o = by[OFFSET_FP16]
    delta = {a: precision_change_interval(o, y, **boot) for a, y in labels.items()}
    kept = {a: o.agreement_kept(y) for a, y in labels.items()}
    parts = [_about(within(d.low, d.high, BARELY_PP), f"Δ {_name(a)} P@k (pp)") for a, d in delta.items()]
    if n[OFFSET_FP16]:
        parts += [
            _about(at_least(*share(v, n[OFFSET_FP16])[1:3], MOST_KEPT), f"{_name(a)} kept, % of changed")
            for a, v in kept.items()
        ]
    else:
        parts.append(not_testable("offset + FP16 changed no query, so no turnover can be hidden"))
    ours["agreement hides turnover"] = (
        "ΔP@k "
        + ", ".join(f"{_name(a)} {_pp(d)}" for a, d in delta.items())
        + f"; kept {', '.join(f'{_name(a)} {v}' for a, v in kept.items())} of {n[OFFSET_FP16]}",
        all_of(*parts),
    )
    cert = {c: int(by[c].certified.sum()) for c in by}
    ours["certificate covers many FP16 queries"] = (
        _counted(cert[FP16[0]], size),
        _about(at_least(*share(cert[FP16[0]], size)[1:3], MANY_CERTIFIED), "% certified"),
    )
    ours["certificate covers no INT8 or offset query"] = (
        "; ".join(f"{c}: {_counted(cert[c], size)}" for c in INT8 + (OFFSET_FP16,)),
        all_of(
            *(_about(at_most(*share(cert[c], size)[1:3], NONE), f"{c}, % certified") for c in INT8 + (OFFSET_FP16,))
        ),
    )
    broken, certified = exceptions(results)
    ours["no exception"] = (
        f"{broken} of the {certified} queries certified under some condition changed under one certifying it",
        _about(at_most(*share(broken, certified)[1:3], NONE), "% of certified changed")
        if certified
        else not_testable("no query is certified under any condition"),
    )
    theirs = _study_rows(study)
    rows = [(f, theirs[f][0], ours[f][0], theirs[f][1], ours[f][1]) for f in CRITERIA]
    return verdicts(CRITERIA, rows, was=old_verdicts(results, labels))


def scope_note(verdict_table: pd.DataFrame) -> str:
    """The scope statements of ``verdict_table`` in words (Markdown), shown apart from the study's
    findings and not counted among them; empty when there are none."""
    lines = []
    for _, r in verdict_table[verdict_table["kind"] == SCOPE].iterrows():
        text = f"*{r['finding']}* is {r['verdict']} here ({r['reason']})."
        if r["verdict"] == "contradicted":
            text += " This certificate proves some such queries stable where the study's check proved none: good news."
        lines.append(text)
    if not lines:
        return ""
    return "**Scope, not counted among the study's findings:** " + " ".join(lines)
