"""Figures, tables and words of the neighbour-stability chapter; it measures nothing.

Every function draws from a measurement of :mod:`embdiag.study.neighbour_stability` (the
section's home, which measures and decides the findings): its
:class:`~embdiag.interventions.precision.StorageResult` list (one per condition, in the study's
order), its storage table (:func:`~embdiag.study.neighbour_stability.storage_table`), a
boundary table or a verdict table, and, for the study's side, ``data/study/storage.csv``
(:func:`~embdiag.study.neighbour_stability.read_study`). Tables are pandas, figures Altair;
percentages are percentage points. Margins are the reference rank-k minus rank-(k+1) scores;
"changed" means the top-k identity set changed.
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from ...interventions.precision import OFFSET_CONDITIONS, StorageResult
from ...study.neighbour_stability import MARGIN_EDGES, OFFSET_FP16, attribute_name, result_named
from ...view import theme
from ...study.findings import SCOPE

#: Exact zeros (the references' score error) are drawn here on log axes.
ZERO_AT = 1e-17
#: Conditions of the certificate figure: one that is mostly certified, one that is not, and the offset.
CERTIFICATE_CONDITIONS = ("FP16 gallery", "INT8 gallery", OFFSET_FP16)
SOURCES = ("study", "this run")


# ------------------------------------------------------------------------------ tables


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
            row[f"Δ {attribute_name(a)} P@{k} (pp)"] = float(r.get(f"delta_{a}_p10_pp", np.nan))
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
    columns = ["changed queries"] + [f"{attribute_name(a)} P@{k} kept{unit}" for a in attrs for unit in ("", " (%)")]
    rows = []
    for cond, source, r in _paired_rows(ours, study):
        n = int(r["changed_queries"])
        kept = {a: float(r.get(f"{a}_p10_kept", np.nan)) for a in attrs}
        if n == 0 or all(pd.isna(v) for v in kept.values()):
            continue
        row = {"condition": cond, "source": source, "changed queries": n}
        for a, v in kept.items():
            row[f"{attribute_name(a)} P@{k} kept"], row[f"{attribute_name(a)} P@{k} kept (%)"] = v, 100 * v / n
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
    return _long(ours, study, {f"delta_{a}_p10_pp": attribute_name(a) for a in attrs})


def precision_change_chart(ours: pd.DataFrame, study: pd.DataFrame, k: int = 10) -> alt.HConcatChart:
    """ΔP@k per attribute (points, perturbed minus reference), study and this run, zero marked."""
    order = list(ours.index)
    attrs = [c[len("delta_") : -len("_p10_pp")] for c in ours.columns if c.startswith("delta_")]
    data = precision_change_frame(ours, study)
    lim = max(0.25, float(data["value"].abs().max()) * 1.1) if len(data) else 0.25
    panels = []
    for i, a in enumerate(attrs):
        part = data[data["metric"] == attribute_name(a)]
        x = alt.X("value:Q", title=f"Δ P@{k} (pp)", scale=alt.Scale(domain=[-lim, lim]))
        zero = alt.Chart(pd.DataFrame({"value": [0.0]}))
        zero = zero.mark_rule(color="black", strokeDash=theme.DASHES["reference"]).encode(x="value:Q")
        p = alt.layer(
            zero, _points(part, x, order, attribute_name(a), width=theme.panel_width(len(attrs), gap=15, room=500))
        )
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
    """How ``condition``'s certificate bound compares with its margins and its actual score changes,
    beside ``fp16``'s reconstruction error, in this run's numbers (Markdown)."""
    r, f = result_named(results, condition), result_named(results, fp16)
    g = r.gallery_error[r.gallery_error > 0] if (r.gallery_error > 0).any() else r.query_error
    gf = f.gallery_error[f.gallery_error > 0] if (f.gallery_error > 0).any() else f.query_error
    act = r.score_error if r.score_error is not None else np.full(r.changed.shape, np.nan)
    half = r.margins / 2
    return (
        f"Under **{condition}** a stored vector, normalized, lies a median {np.median(g):.2g} from the original "
        f"unit vector ({fp16}: {np.median(gf):.2g}). The certificate assumes the worst direction, an error along "
        f"the query, so its bound is at least the gallery's largest error ({g.max():.2g}) plus the query's own: "
        f"median {np.median(r.bound):.2g}, against a median half margin of {np.median(half):.2g}; "
        f"{int(r.certified.sum()):,} of {r.changed.size:,} queries ({100 * r.coverage:.1f}%) are certified. An actual "
        f"score change is the error's projection on another vector, typically about 1/√{d} ≈ "
        f"{1 / math.sqrt(d):.3f} of its length: each query's largest has a median of {np.nanmedian(act):.2g}, "
        f"{np.median(r.bound) / np.nanmedian(act):.0f} times below the median bound, and stays below half the "
        f"margin for {100 * np.mean(act < half):.1f}% of the queries; {r.n_changed:,} changed. Coverage counts the "
        f"queries whose top {r.k} can be proved stable in advance, not those that change."
    )


def margin_statement(results, fp16: str = "FP16 gallery", offset: str = OFFSET_FP16) -> str:
    """The median reference margin of the vectors as embedded and after the common offset, and the
    queries FP16 storage changes in each (Markdown; empty where either condition is absent)."""
    names = {r.condition.name for r in results}
    if fp16 not in names or offset not in names:
        return ""
    f, o = result_named(results, fp16), result_named(results, offset)
    return (
        f"The median reference margin is {np.median(f.margins):.2g} on the vectors as embedded and "
        f"{np.median(o.margins):.2g} after the common offset; storing the gallery in FP16 changes "
        f"{f.n_changed:,} and {o.n_changed:,} of {f.changed.size:,} queries respectively."
    )


def data_statement(vectors, k: int) -> str:
    """Which data and encoder this run measured, how it searches, and whose the study's values are (Markdown)."""
    n = len(vectors.val)
    return (
        f"**Data and encoder:** {vectors.source}. Each of the {n:,} evaluation vectors ({vectors.dim}-d) queries "
        f"the other {n - 1:,} for its exact top {k}; the offset is fitted on the {len(vectors.train):,} training "
        f"vectors. The study's values: EmbeddingGemma 2 on 983 BDD100K validation images (data/study/storage.csv)."
    )


# ------------------------------------------------------------------ boundary illustration


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
    """The top-k boundary of one query (from :func:`~embdiag.study.neighbour_stability.boundary_data`):
    reference scores (filled circles) and the condition's scores of the same items (open diamonds) by reference rank;
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


# ------------------------------------------------------------------------------- findings


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
