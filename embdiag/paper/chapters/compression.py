"""Figures, tables and findings of the Compression chapter.

Every function takes the tables that :func:`~embdiag.interventions.compression.compression_grid`
and :func:`~embdiag.interventions.compression.centring_effect` return (or the study's table,
read by :func:`read_study` into the same layout) and returns an Altair chart, a DataFrame, a
pandas Styler or a Markdown string; none fits or measures anything. Shares are shown in
percent, changes from native in percentage points (pp).

The findings of the study's compression section are restated as criteria in :data:`CRITERIA`
(with the tolerances :data:`NEAR_PP` and :data:`LOSS_PP`), declared before this project's
numbers were looked at, and evaluated by one function on the study's table and on this run's.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from ...metrics.inference import Decision, all_of, any_of, at_least, at_least_of, at_most, not_testable, within
from ...metrics.stats import ItemIntervals
from .. import theme
from ..findings import ADDITION, Claim, read_published, verdicts

__all__ = [
    "ATTRIBUTE_NAMES",
    "AXIS_PP",
    "CRITERIA",
    "LOSS_PP",
    "NEAR_PP",
    "attributes_of",
    "centring_table",
    "centring_text",
    "change_caption",
    "change_chart",
    "changes",
    "evaluate_criteria",
    "findings",
    "largest_loss",
    "overlap_chart",
    "overlap_text",
    "prefix_note",
    "read_study",
    "results_frame",
    "results_table",
    "retrieval_text",
    "schematic_chart",
    "spectrum_table",
    "standardization_text",
]

#: Display names of the driving attributes, in the study's column order.
ATTRIBUTE_NAMES = {"weather": "weather", "scene": "scene", "timeofday": "time"}
#: The one fixed axis of every change-from-native panel (pp), as in the study's figures.
AXIS_PP = (-10.0, 5.0)
#: Colour and point shape of each method (colours from :mod:`embdiag.paper.theme`; lines all solid).
STYLE = {
    m: (theme.colour(m), shape) for m, shape in (("MRL", "circle"), ("PCA", "square"), ("PCA uncentred", "triangle"))
}
#: Equivalence margin of "near native" (pp, each column): midway between the largest change of the
#: study's near-native rows (1.95 pp) and the smallest largest change of its other compressed rows (4.17 pp).
NEAR_PP = 3.0
#: "Loses": a fall beyond the equivalence margin (pp).
LOSS_PP = NEAR_PP
#: Orderings ("ahead", "most") are signs: a paired difference wholly on one side of this (pp).
ORDER_PP = 0.0
#: The point-estimate tolerance of the criteria the interval ones replace (pp; :func:`evaluate_criteria`).
POINT_PP = 2.0
#: Centring moves neighbours: centred PCA at the full dimension keeps overlap@k below this ...
MOVED = 0.99
#: ... while uncentred PCA (a rotation) keeps it within this of 1 (rounding).
ROUNDING = 1e-9
#: Bootstrap draws and seed of every interval (the study's 5,000 draws).
N_DRAWS, SEED = 5000, 0
_PAIRED = "paired 95% percentile bootstrap interval over the evaluation images (probes and PCA bases as fitted)"
#: The study's findings and this project's addition, declared before looking at this project's numbers.
CRITERIA = {
    "no method leads everywhere": Claim(
        "at each compressed dimension, MRL ahead of (centred) PCA on at least one of the six columns (BA and P@10 "
        "of three attributes) and PCA ahead of MRL on at least one; ahead: the " + _PAIRED + " of MRL − PCA lies "
        "wholly on that side of 0",
        f"{ORDER_PP:g} pp (an ordering)",
        "the study states no size for leading: an ordering is the sign of the paired difference",
        was="at each compressed dimension, MRL's point estimate above PCA's on at least one of the six columns "
        "and below it on at least one",
    ),
    "MRL 512 and 256 near native": Claim(
        f"MRL 512 − native and MRL 256 − native within ±{NEAR_PP:g} pp on every one of the six columns ({_PAIRED})",
        f"±{NEAR_PP:g} pp per column",
        "midway between the largest change of the study's near-native rows (1.95 pp, MRL 256 weather BA) and the "
        "smallest largest change of its other compressed rows (4.17 pp, PCA 256 weather BA)",
        was=f"MRL 512 and MRL 256 within {POINT_PP:g} pp of native on all six columns (point estimates)",
    ),
    "MRL 128 loses most on weather BA": Claim(
        f"MRL 128's weather BA falls by more than {LOSS_PP:g} pp, and by more than each of its other five columns "
        f"({_PAIRED}, of native − MRL 128 and of the difference of two columns' falls)",
        f"{LOSS_PP:g} pp (the fall); {ORDER_PP:g} pp (most: an ordering)",
        "a loss is a change beyond the near-native margin; most is an ordering, the sign of the difference",
        was=f"of MRL 128's six columns, weather BA falls most, at least {POINT_PP:g} pp below native (point estimates)",
    ),
    "PCA 128 close to native": Claim(
        f"PCA 128 − native within ±{NEAR_PP:g} pp on every one of the six columns ({_PAIRED})",
        f"±{NEAR_PP:g} pp per column",
        "the near-native margin (midway between the study's near rows, at most 1.95 pp, and its other rows, "
        "4.17 pp or more)",
        was=f"PCA 128 within {POINT_PP:g} pp of native on all six columns (point estimates)",
    ),
    "PCA ahead at 128": Claim(
        "at 128 dimensions PCA ahead of MRL on more than half of the six columns: the " + _PAIRED + " of PCA − "
        "MRL lies wholly above 0 (contradicted where it lies wholly below 0 on at least half)",
        f"{ORDER_PP:g} pp (an ordering)",
        "the study's table has PCA ahead at 128 on 5 of 6 columns; ahead is the sign of the paired difference",
    ),
    "centring alone moves neighbours": Claim(
        f"at the full dimension (nothing projected away) centred PCA keeps overlap@10 with the native top-10 "
        f"below {MOVED:g}, while uncentred PCA keeps it within {ROUNDING:g} of 1; computed exactly on the fixed "
        f"gallery (no sampling)",
        f"overlap {MOVED:g} (centred); {ROUNDING:g} (uncentred)",
        "one neighbour in a hundred replaced is far beyond rounding, which uncentred PCA (a rotation) shows moves none",
        kind=ADDITION,
    ),
}
USER_OVERLAP = 0.89  # the user's reported overlap@10 of centred PCA (reported, not computed here)


# -- inputs ------------------------------------------------------------------------------------
def read_study(path=None) -> pd.DataFrame:
    """The study's compression table (``data/study/compression.csv``) in
    :func:`compression_grid`'s layout: ``representation``, ``method``, ``dim``, ``{a} BA`` and
    ``{a} P@10`` as shares (the CSV holds percentages)."""
    raw = read_published("compression.csv", path)
    out = raw[["representation", "method", "dim"]].copy()
    for a in ATTRIBUTE_NAMES:
        out[f"{a} BA"] = raw[f"{a}_ba_pct"] / 100.0
        out[f"{a} P@10"] = raw[f"{a}_p_at_10_pct"] / 100.0
    return out


def attributes_of(table: pd.DataFrame) -> list[str]:
    """The attributes a table has columns for (``{a} BA`` or ``{a} P@k``), the study's three first."""
    found = {c.rsplit(" ", 1)[0] for c in table.columns if c.endswith(" BA") or " P@" in c}
    return [a for a in ATTRIBUTE_NAMES if a in found] + sorted(found - set(ATTRIBUTE_NAMES))


def _name(attribute: str) -> str:
    return ATTRIBUTE_NAMES.get(attribute, attribute)


def _columns(k: int, attributes) -> list[tuple[str, str, str]]:
    """(grid column, attribute, endpoint) for the BA then the P@k columns, in the study's order."""
    return [(f"{a} BA", a, "BA") for a in attributes] + [(f"{a} P@{k}", a, f"P@{k}") for a in attributes]


def _native(table: pd.DataFrame) -> pd.Series:
    rows = table[table["method"] == "native"]
    if len(rows) != 1:
        raise ValueError(f"table: expected one native row, found {len(rows)}")
    return rows.iloc[0]


def changes(table: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Long table of every compressed row's six columns: ``representation``, ``method``, ``dim``,
    ``attribute`` (display name), ``endpoint`` (``BA`` or ``P@k``), ``value`` (%) and
    ``change`` (pp from native)."""
    native = _native(table)
    rows = []
    for _, r in table[table["method"] != "native"].iterrows():
        for col, a, endpoint in _columns(k, attributes_of(table)):
            if col in table.columns and pd.notna(r[col]):
                rows.append(
                    {
                        "representation": r["representation"],
                        "method": r["method"],
                        "dim": int(r["dim"]),
                        "attribute": _name(a),
                        "endpoint": endpoint,
                        "value": 100 * r[col],
                        "change": 100 * (r[col] - native[col]),
                    }
                )
    return pd.DataFrame(rows, columns=["representation", "method", "dim", "attribute", "endpoint", "value", "change"])


# -- figures -----------------------------------------------------------------------------------
def _method_scales(methods):
    methods = [m for m in STYLE if m in set(methods)]
    color = alt.Scale(domain=methods, range=[STYLE[m][0] for m in methods])
    shape = alt.Scale(domain=methods, range=[STYLE[m][1] for m in methods])
    return methods, color, shape


def change_chart(grid: pd.DataFrame, k: int = 10, study: pd.DataFrame | None = None) -> alt.FacetChart:
    """Six panels (rows BA and P@k, columns the three attributes) of the change from native in pp,
    on one fixed :data:`AXIS_PP` axis (values beyond it are drawn at its edge); one line per
    method over the kept dimensions, one colour per method. With ``study``
    (from :func:`read_study`), the study's values are open diamonds (its P@10 beside our P@k)."""
    ours = changes(grid, k).assign(source="this run")
    parts = [ours]
    if study is not None:
        theirs = changes(study, 10).assign(source="study (published)")
        theirs = theirs[theirs["dim"].isin(ours["dim"]) & theirs["attribute"].isin(ours["attribute"])]
        theirs["endpoint"] = theirs["endpoint"].replace({"P@10": f"P@{k}"})
        parts.append(theirs)
    data = pd.concat(parts, ignore_index=True)
    data["shown"] = data["change"].clip(*AXIS_PP)
    methods, color, _ = _method_scales(data["method"])
    dims = sorted(data["dim"].unique(), reverse=True)
    x = alt.X("dim:O", sort=[int(d) for d in dims], title="dimensions kept", axis=alt.Axis(labelAngle=0))
    y = alt.Y("shown:Q", scale=alt.Scale(domain=list(AXIS_PP)), title="change from native (pp)")
    tooltip = [
        "source",
        "representation",
        "attribute",
        "endpoint",
        alt.Tooltip("value:Q", format=".2f", title="%"),
        alt.Tooltip("change:Q", format="+.2f", title="change (pp)"),
    ]
    base = alt.Chart().encode(x=x, y=y, color=alt.Color("method:N", scale=color, title="method"))
    lines = base.transform_filter(alt.datum.source == "this run").mark_line(strokeWidth=2)
    shape = alt.Shape(
        "source:N", scale=alt.Scale(domain=["this run", "study (published)"], range=["circle", "diamond"]), title=None
    )
    ours_points = (
        base.transform_filter(alt.datum.source == "this run")
        .mark_point(size=40, filled=True)
        .encode(shape=shape, tooltip=tooltip)
    )
    study_points = (
        base.transform_filter(alt.datum.source != "this run")
        .mark_point(size=70, filled=False, strokeWidth=1.6)
        .encode(shape=shape, tooltip=tooltip)
    )
    points = alt.layer(ours_points, study_points)
    zero = alt.Chart().mark_rule(color="gray", strokeDash=theme.DASHES["reference"]).encode(y=alt.datum(0))
    endpoints = ["BA", f"P@{k}"]
    chart = (
        alt.layer(zero, lines, points, data=data)
        .properties(width=theme.panel_width(len(attributes_of(grid)), gap=90, room=theme.RESULT_PX), height=150)
        .facet(
            row=alt.Row("endpoint:N", sort=endpoints, title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
            column=alt.Column("attribute:N", sort=[_name(a) for a in attributes_of(grid)], title=None),
        )
        .resolve_scale(y="shared")
    )
    return theme.legend_below(chart)


def change_caption(grid: pd.DataFrame, k: int = 10) -> str:
    """Caption of :func:`change_chart` naming any value beyond the fixed axis (plain text)."""
    data = changes(grid, k)
    out = data[(data["change"] < AXIS_PP[0]) | (data["change"] > AXIS_PP[1])]
    beyond = (
        "every value lies within the axis"
        if out.empty
        else f"{len(out)} value(s) lie beyond it and are drawn at its edge: "
        + "; ".join(f"{r.representation} {r.attribute} {r.endpoint} {r.change:+.2f} pp" for r in out.itertuples())
    )
    note = "" if k == 10 else f" (this run's P@{k} beside the study's P@10)"
    return (
        f"Change from the native vectors in percentage points, balanced accuracy (top row) and P@{k} "
        f"(bottom row) per attribute, on one fixed {AXIS_PP[0]:+g} to {AXIS_PP[1]:+g} pp axis: "
        f"{beyond}. Lines and filled circles: this run, one colour per method; open diamonds: the "
        f"study's published values{note}."
    )


def overlap_chart(curve: pd.DataFrame, k: int = 10) -> alt.Chart:
    """Overlap@k of each method's top-k with the native top-k against the dimensions kept
    (log axis, decreasing to the right), from a probe-free :func:`compression_grid` over a
    ladder of dimensions that includes the full one."""
    col = f"overlap@{k}"
    data = curve[curve["method"] != "native"][["representation", "method", "dim", col]].rename(columns={col: "overlap"})
    methods, color, shape = _method_scales(data["method"])
    lo = float(min(data["overlap"].min(), 0.8))
    return (
        alt.Chart(data)
        .mark_line(point=alt.OverlayMarkDef(filled=True, size=50), strokeWidth=2)
        .encode(
            x=alt.X(
                "dim:Q",
                scale=alt.Scale(type="log", base=2, reverse=True),
                title="dimensions kept (log)",
                axis=alt.Axis(values=sorted(int(d) for d in data["dim"].unique())),
            ),
            y=alt.Y(
                "overlap:Q",
                scale=alt.Scale(domain=[np.floor(lo * 20) / 20, 1.0]),
                title=f"overlap@{k} with the native top-{k}",
            ),
            color=alt.Color("method:N", scale=color),
            shape=alt.Shape("method:N", scale=shape),
            tooltip=["representation", alt.Tooltip("overlap:Q", format=".4f")],
        )
        .properties(width=theme.panel_width(1, gap=200), height=220)
    )


def schematic_chart(seed: int = 0) -> alt.HConcatChart:
    """MRL vs PCA in two small diagrams: a prefix keeps the leading coordinates of the vector
    itself; PCA projects onto directions fitted on training vectors (centred: through their mean;
    uncentred: through the origin). Illustrative data (seeded), not measurements."""
    d, kept = 12, 4
    parts = ["kept, then renormalised", "dropped coordinates"]
    coords = pd.DataFrame(
        {
            "coordinate": np.arange(1, d + 1),
            "magnitude": 0.9 * 0.78 ** np.arange(d) + 0.05,
            "part": [parts[0]] * kept + [parts[1]] * (d - kept),
        }
    )
    prefix = (
        alt.Chart(coords)
        .mark_bar()
        .encode(
            x=alt.X("coordinate:O", title="coordinate index", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("magnitude:Q", title="|coordinate|", axis=None),
            color=alt.Color(
                "part:N",
                scale=alt.Scale(domain=parts, range=[theme.colour("MRL"), "#d9d9d9"]),
                title=None,
                legend=alt.Legend(orient="bottom"),
            ),
        )
        .properties(
            width=230,
            height=170,
            title=alt.TitleParams(
                "MRL prefix: keep coordinates 1 to k", subtitle="the encoder's own axes; nothing fitted"
            ),
        )
    )
    rng = np.random.default_rng(seed)
    mean, angle = np.array([2.6, 0.9]), np.deg2rad(70)
    axis = np.array([np.cos(angle), np.sin(angle)])
    t, s = rng.normal(0, 0.7, 40), rng.normal(0, 0.25, 40)
    pts = mean + np.outer(t, axis) + np.outer(s, [-axis[1], axis[0]])
    first = np.linalg.svd(pts - pts.mean(axis=0))[2][0]  # the cloud's centred principal direction
    raw = np.linalg.svd(pts)[2][0]  # its uncentred one (through the origin)
    raw = raw * np.sign(raw @ mean)
    centre = pts.mean(axis=0)
    names = ["PCA: through the training mean", "uncentred PCA: through the origin"]
    ends = np.array([centre - 1.6 * first, centre + 1.6 * first, [0.0, 0.0], 3.8 * raw])
    lines = pd.DataFrame({"x": ends[:, 0], "y": ends[:, 1], "direction": [names[0]] * 2 + [names[1]] * 2})
    p = pts[np.argmax(np.abs(s))]
    foot = centre + ((p - centre) @ first) * first
    drop = pd.DataFrame({"x": [p[0], foot[0]], "y": [p[1], foot[1]]})
    marks = pd.DataFrame({"x": [0.0, centre[0]], "y": [0.0, centre[1]], "label": ["origin", "training mean"]})
    xy = dict(
        x=alt.X("x:Q", scale=alt.Scale(domain=[-0.5, 4.5]), axis=None),  # equal units on both axes
        y=alt.Y("y:Q", scale=alt.Scale(domain=[-0.75, -0.75 + 5.0 * 170 / 260]), axis=None),
    )
    pca = alt.layer(
        alt.Chart(pd.DataFrame({"x": pts[:, 0], "y": pts[:, 1]})).mark_circle(size=22, color="#999999").encode(**xy),
        alt.Chart(lines)
        .mark_line(strokeWidth=2.5, clip=True)
        .encode(
            **xy,
            detail="direction:N",
            color=alt.Color(
                "direction:N",
                scale=alt.Scale(domain=names, range=[STYLE["PCA"][0], STYLE["PCA uncentred"][0]]),
                title=None,
                legend=alt.Legend(orient="bottom", direction="vertical"),
            ),
        ),
        alt.Chart(drop).mark_line(color="#999999", strokeWidth=1).encode(**xy),
        alt.Chart(marks).mark_point(shape="cross", size=90, color="black", filled=True).encode(**xy),
        alt.Chart(marks).mark_text(dx=10, dy=12, align="left", fontWeight="bold").encode(**xy, text="label:N"),
    ).properties(
        width=260,
        height=170,
        title=alt.TitleParams("PCA: project onto fitted directions", subtitle="new axes, fitted on training vectors"),
    )
    return alt.hconcat(prefix, pca).resolve_scale(color="independent")


# -- tables ------------------------------------------------------------------------------------
def _order(table: pd.DataFrame) -> list[str]:
    native = table.loc[table["method"] == "native", "representation"].tolist()
    rest = table[table["method"] != "native"].copy()
    rest["m"] = rest["method"].map({m: i for i, m in enumerate(STYLE)}).fillna(len(STYLE))
    rest = rest.sort_values(["dim", "m"], ascending=[False, True], kind="stable")
    return native + rest["representation"].tolist()


def _block(table: pd.DataFrame, source: str, k_read: int, k: int, attributes) -> pd.DataFrame:
    names = {f"{_name(a)} BA": f"{a} BA" for a in attributes}
    names |= {f"{_name(a)} P@{k}": f"{a} P@{k_read}" for a in attributes}
    out = pd.DataFrame({n: 100 * table[c] if c in table else np.nan for n, c in names.items()}, index=table.index)
    out[f"overlap@{k}"] = table[f"overlap@{k}"] if f"overlap@{k}" in table else np.nan
    out.index = pd.MultiIndex.from_arrays(
        [table["representation"], [source] * len(table)], names=["representation", "source"]
    )
    return out


def results_frame(grid: pd.DataFrame, study: pd.DataFrame | None = None, k: int = 10) -> pd.DataFrame:
    """The study's table layout (percent): rows ``(representation, source)``, this run's row first
    and the study's below it where the study has one (its native row under ours, its P@10 under
    our P@k); columns BA and P@k per attribute and overlap@k (this run only). The study's rows
    are left out when it has none of this run's attributes."""
    order = _order(grid)
    attributes = attributes_of(grid)
    parts = [_block(grid, "this run", k, k, attributes)]
    if study is not None and set(attributes_of(study)) & set(attributes):
        study = study.copy()
        study.loc[study["method"] == "native", "representation"] = order[0]
        parts.append(_block(study[study["representation"].isin(order)], "study", 10, k, attributes))
    frame = pd.concat(parts)
    rank = {r: i for i, r in enumerate(order)}
    position = [(rank[r], s != "this run") for r, s in frame.index]
    return frame.iloc[sorted(range(len(frame)), key=position.__getitem__)]


def results_table(grid: pd.DataFrame, study: pd.DataFrame | None = None, k: int = 10):
    """:func:`results_frame` as a Styler: two decimals (overlap in percent), the study's rows in
    grey, ``—`` where a value does not exist (the study has no uncentred PCA and no overlap)."""
    frame = results_frame(grid, study, k)
    fmt = {c: "{:.2f}" for c in frame.columns}
    fmt[f"overlap@{k}"] = "{:.1%}"  # a share, shown in percent like the rest
    grey = lambda row: ["color:#6e7781" if row.name[1] == "study" else "" for _ in row]  # noqa: E731
    return frame.style.format(fmt, na_rep="—").apply(grey, axis=1)


def centring_table(centring: pd.DataFrame, k: int = 10):
    """:func:`~embdiag.interventions.compression.centring_effect` as a Styler (shares in percent)."""
    fmt = {c: "{:.1%}" for c in centring.columns if c.endswith(f"P@{k}") or c == f"changed@{k}"}
    fmt.update({f"overlap@{k}": "{:.2%}", f"overlap@{k} with centred cosine": "{:.2%}", "max |Δ cosine|": "{:.2g}"})
    return centring.set_index("representation").style.format(fmt)


def centring_text(centring: pd.DataFrame, k: int = 10) -> str:
    """The centring finding in words, every number read from ``centring`` (Markdown)."""
    t = centring.set_index("representation")
    d = int(next(r for r in t.index if r.startswith("PCA ") and "uncentred" not in r).split()[-1])
    c, u = t.loc[f"PCA {d}"], t.loc[f"PCA uncentred {d}"]
    o = f"overlap@{k}"
    return (
        f"At the full dimension ({d}, nothing projected away) centred PCA keeps on average "
        f"**{c[o]:.3f}** of each query's {k} native neighbours (the user reported about {USER_OVERLAP}) and "
        f"changes the top-{k} of {c[f'changed@{k}']:.1%} of the queries; its cosines differ from the native "
        f"ones by up to {c['max |Δ cosine|']:.2f}. Its top-{k} is that of the native vectors minus the training "
        f"mean (overlap {c[f'{o} with centred cosine']:.4f}): the change is the centring, not the projection. "
        f"Uncentred PCA at {d} keeps overlap **{u[o]:.4f}**, with cosines within {u['max |Δ cosine|']:.1g} of "
        f"the native ones (rounding)."
    )


def retrieval_text(grid: pd.DataFrame, centring: pd.DataFrame, k: int = 10) -> str:
    """What each method does to P@k across the dimensions, in words (Markdown), from the grid
    and :func:`~embdiag.interventions.compression.centring_effect`'s table."""
    ch = changes(grid, k)
    ch = ch[ch["endpoint"] == f"P@{k}"]
    if ch.empty:
        return ""
    by = ch.groupby("method")["change"]
    largest = by.agg(lambda x: x.abs().max())
    spread = ch.groupby(["method", "attribute"])["change"].agg(lambda x: x.max() - x.min()).groupby("method").max()
    t = centring.set_index("representation")
    centred = next(r for r in t.index if r.startswith("PCA ") and "uncentred" not in r)
    cols = [c for c in t.columns if c.endswith(f" P@{k}")]
    shift = max(abs(100 * (t.loc[centred, c] - t.loc["native", c])) for c in cols)
    dims = sorted(ch["dim"].unique(), reverse=True)
    parts = [
        f"{m} {largest[m]:.2f} pp (varying by {spread[m]:.2f} pp between dimensions)"
        for m in STYLE
        if m in largest.index
    ]
    return (
        f"At {', '.join(map(str, dims))} dimensions, P@{k} moves from native by at most: "
        + "; ".join(parts)
        + f". Centring alone, at the full dimension, moves it by up to {shift:.2f} pp."
    )


def overlap_text(curve: pd.DataFrame, k: int = 10, trained_prefixes=None) -> str:
    """The overlap curve in words (Markdown): each method's overlap@k at the smallest and largest
    dimension, and for MRL its overlap at the trained prefixes beside the dimensions in between."""
    col = f"overlap@{k}"
    lines = []
    for m in [m for m in STYLE if m in set(curve["method"])]:
        c = curve[curve["method"] == m].sort_values("dim", ascending=False)
        lines.append(
            f"- {m}: {c[col].iloc[0]:.3f} at {int(c['dim'].iloc[0])}, {c[col].min():.3f} at its lowest "
            f"({int(c.loc[c[col].idxmin(), 'dim'])})."
        )
    mrl = curve[curve["method"] == "MRL"].set_index("dim")[col]
    if trained_prefixes is not None and not mrl.empty:
        top = max(trained_prefixes)
        on = [d for d in mrl.index if d in set(trained_prefixes) and d < top]
        off = [d for d in mrl.index if d not in set(trained_prefixes) and min(on or [0]) < d < top]
        if on and off:
            lines.append(
                "- The prefix keeps more at the lengths the encoder was trained at ("
                + ", ".join(f"{d}: {mrl[d]:.3f}" for d in on)
                + ") than in between ("
                + ", ".join(f"{d}: {mrl[d]:.3f}" for d in off)
                + ")."
            )
    return "\n".join(lines)


def largest_loss(grid: pd.DataFrame, representation: str) -> str:
    """The attribute whose balanced accuracy ``representation`` loses most against native."""
    row, native = _row(grid, representation), _native(grid)
    if row is None:
        raise ValueError(f"representation: {representation!r} is not in the grid")
    attributes = [a for a in attributes_of(grid) if f"{a} BA" in grid]
    if not attributes:
        raise ValueError("grid: has no balanced-accuracy columns (measured with probes=False)")
    return min(attributes, key=lambda a: row[f"{a} BA"] - native[f"{a} BA"])


def spectrum_table(spectrum: pd.DataFrame):
    """:func:`~embdiag.interventions.compression.variance_spectrum` as a Styler."""
    left, weak = "share of training variance left out", "variance of direction k / of direction 1"
    table = pd.DataFrame({"k": spectrum["dim"], left: 1.0 - spectrum["share"], weak: spectrum["weakest"]})
    return table.set_index("k").style.format({left: "{:.1e}", weak: "{:.1e}"})


def standardization_text(
    grid: pd.DataFrame, spectrum: pd.DataFrame, raw_ba: float, representation: str, attribute: str
) -> str:
    """Whether the standardized probe, not PCA, costs ``representation`` its balanced accuracy
    on ``attribute``: the probe's BA with and without standardization beside native (Markdown)."""
    row, native = _row(grid, representation), _native(grid)
    dim = int(row["dim"])
    sp = spectrum.set_index("dim")
    std, nat = row[f"{attribute} BA"], native[f"{attribute} BA"]
    verdict = (
        "so here the loss comes from standardizing directions that carry almost no variance, not from what PCA keeps"
        if raw_ba - std >= 0.01
        else "so standardization does not explain the loss here"
    )
    rank = spectrum.attrs.get("rank")
    span = f"The training vectors span {rank} directions (variance above 1e-12 of the largest). " if rank else ""
    if rank and dim > rank:
        weakest = (
            f"{representation} keeps those {rank} and sets its other {dim - rank} coordinates to zero: "
            f"they would hold rounding alone, which differs between machines' float paths. The weakest "
            f"direction it keeps, direction {rank}, has {spectrum.attrs['weakest spanned']:.1e} of the "
            f"first one's variance"
        )
    else:
        weakest = f"Principal direction {dim} has {sp.loc[dim, 'weakest']:.1e} of the first one's variance"
    return (
        f"{span}{weakest}, and a standardized probe rescales it, like every other, to unit variance. "
        f"Fitted without standardization, the probe on {representation} reaches **{raw_ba:.2%}** "
        f"{_name(attribute)} balanced accuracy, against {std:.2%} standardized and {nat:.2%} on the native "
        f"vectors (standardized), {verdict}."
    )


def trained_prefixes(encoder: str, vectors_path=None) -> tuple[int, ...] | None:
    """The Matryoshka prefixes ``encoder`` was trained at (its native width first): the
    reference encoders' :data:`embdiag.encoders.DIMS`, WordLlama's
    :data:`embdiag.encoders.wordllama.DIMS`; None for a user's vectors or any other encoder."""
    from ...encoders import DIMS, REFERENCE_NAMES, wordllama

    if vectors_path is not None:
        return None
    if encoder in REFERENCE_NAMES:
        return DIMS
    return wordllama.DIMS if encoder == wordllama.NAME else None


def prefix_note(trained_prefixes, dims) -> str:
    """Whether the prefix means anything for these vectors (Markdown). ``trained_prefixes``: the
    prefix lengths the encoder was trained at (Matryoshka), or None when unknown (a user's
    vectors, a Hugging Face model)."""
    dims = [int(x) for x in dims]
    if trained_prefixes is None:
        return (
            "**The prefix is only meaningful for Matryoshka encoders.** These vectors' encoder is not known to "
            "have been trained with nested prefixes; if it was not, its leading coordinates are no more "
            "important than any others and the MRL rows measure an arbitrary coordinate subset (PCA is "
            "meaningful either way)."
        )
    trained = sorted({int(x) for x in trained_prefixes}, reverse=True)
    extra = [x for x in dims if x not in trained]
    return (
        f"The encoder was trained with the Matryoshka loss at prefixes {', '.join(map(str, trained))}, so "
        f"each prefix {'in' if not extra else 'of'} {', '.join(map(str, dims))} "
        + (
            "was trained to be an embedding of its own."
            if not extra
            else f"is meaningful where it was trained; {', '.join(map(str, extra))} was not a trained prefix."
        )
    )


# -- findings ----------------------------------------------------------------------------------
def _row(table: pd.DataFrame, representation: str):
    rows = table[table["representation"] == representation]
    return None if rows.empty else rows.iloc[0]


def _table_attributes(table: pd.DataFrame) -> list[str]:
    """The study's three driving attributes where the table has them, else the table's own
    (every ``<attribute> BA`` column), e.g. ``pos`` and ``lexname`` of WordNet glosses."""
    if all(f"{a} BA" in table.columns for a in ATTRIBUTE_NAMES):
        return list(ATTRIBUTE_NAMES)
    return [c[: -len(" BA")] for c in table.columns if str(c).endswith(" BA")]


def _diffs(table: pd.DataFrame, representation: str, k: int) -> pd.Series | None:
    """pp change from native of the BA and P@k columns of one representation, on the table's
    attributes (:func:`_table_attributes`); None when the representation is absent."""
    row, native = _row(table, representation), _native(table)
    if row is None:
        return None
    cols = _columns(k, _table_attributes(table))
    if any(c not in table.columns for c, _, _ in cols):
        return None
    return pd.Series({f"{_name(a)} {e}": 100 * (row[c] - native[c]) for c, a, e in cols})


def _leads(table: pd.DataFrame, k: int):
    dims = sorted(
        set(table.loc[table["method"] == "MRL", "dim"]) & set(table.loc[table["method"] == "PCA", "dim"]), reverse=True
    )
    if not dims:
        return "not measured", None
    words, ok = [], True
    for d in dims:
        m, p = _diffs(table, f"MRL {d}", k), _diffs(table, f"PCA {d}", k)
        if m is None or p is None:
            return "not measured", None
        a, b = int((m > p).sum()), int((p > m).sum())
        words.append(f"{d}: MRL ahead on {a}, PCA on {b}")
        ok = ok and a > 0 and b > 0
    return "; ".join(words), ok


def _near(table: pd.DataFrame, names, k: int):
    diffs = {n: _diffs(table, n, k) for n in names}
    if any(v is None for v in diffs.values()):
        return "not measured", None
    words = [f"{n}: largest |change| {v.abs().max():.2f} pp ({v.abs().idxmax()})" for n, v in diffs.items()]
    return "; ".join(words), bool(all(v.abs().max() <= POINT_PP for v in diffs.values()))


def _weather_loss(table: pd.DataFrame, k: int, attribute: str = "weather"):
    v = _diffs(table, "MRL 128", k)
    if v is None or attribute not in _table_attributes(table):
        return "not measured", None
    worst, column = v.idxmin(), f"{_name(attribute)} BA"
    return (
        f"{column} {v[column]:+.2f} pp; largest loss {worst} {v[worst]:+.2f} pp",
        bool(worst == column and v[column] <= -POINT_PP),
    )


def _pca_ahead(table: pd.DataFrame, k: int, dim: int = 128):
    m, p = _diffs(table, f"MRL {dim}", k), _diffs(table, f"PCA {dim}", k)
    if m is None or p is None:
        return "not measured", None
    ahead = int((p > m).sum())
    return f"{dim}: PCA ahead on {ahead} of {len(p)}, MRL on {int((m > p).sum())}", bool(ahead > len(p) / 2)


def _centring(centring: pd.DataFrame | None, k: int):
    if centring is None:
        return "not measured", None
    c, u, d = _full_overlaps(centring, k)
    return f"centred {c:.3f}, uncentred {u:.4f} at the full dimension {d}", bool(c < MOVED and u > 1 - ROUNDING)


def _full_overlaps(centring: pd.DataFrame, k: int) -> tuple[float, float, int]:
    """Overlap@k of centred and of uncentred PCA at the full dimension, and that dimension."""
    t = centring.set_index("representation")
    d = next(r for r in t.index if r.startswith("PCA ") and "uncentred" not in r).split()[-1]
    return float(t.loc[f"PCA {d}", f"overlap@{k}"]), float(t.loc[f"PCA uncentred {d}", f"overlap@{k}"]), int(d)


def evaluate_criteria(
    table: pd.DataFrame, centring: pd.DataFrame | None = None, k: int = 10, attribute: str = "weather"
) -> dict:
    """Each finding of :data:`CRITERIA` read from point estimates alone (the old criteria,
    :attr:`Claim.was`, at :data:`POINT_PP`): ``{finding: (numbers in words, holds or None)}``.

    Where the table has other attributes than the study's three (WordNet's ``pos`` and
    ``lexname``), "all six columns" reads all of its columns and ``attribute`` takes weather's
    place; a finding at a dimension the table lacks is not measured."""
    return {
        "no method leads everywhere": _leads(table, k),
        "MRL 512 and 256 near native": _near(table, ["MRL 512", "MRL 256"], k),
        "MRL 128 loses most on weather BA": _weather_loss(table, k, attribute),
        "PCA 128 close to native": _near(table, ["PCA 128"], k),
        "PCA ahead at 128": _pca_ahead(table, k),
        "centring alone moves neighbours": _centring(centring, k),
    }


# -- intervals ---------------------------------------------------------------------------------
def _labelled(decision: Decision, label: str) -> Decision:
    return decision._replace(reason=f"{label}: {decision.reason}")


def _column_names(k: int, attributes) -> list[tuple[str, str]]:
    """(items column, display name) of the BA then the P@k columns."""
    return [(col, f"{_name(a)} {e}") for col, a, e in _columns(k, attributes)]


def _native_name(grid: pd.DataFrame) -> str:
    return str(_native(grid)["representation"])


def _has(grid: pd.DataFrame, *reps: str) -> bool:
    return all(_row(grid, r) is not None for r in reps)


def _near_decision(grid, intervals, reps, k: int, attributes) -> Decision | None:
    if not _has(grid, *reps):
        return None
    native = _native_name(grid)
    return all_of(
        *(
            _labelled(within(*intervals((1, r, col), (-1, native, col))[1:], NEAR_PP), f"{r} {name}")
            for r in reps
            for col, name in _column_names(k, attributes)
        )
    )


def _ahead(grid, intervals, dim: int, k: int, attributes, first: str, second: str) -> list[Decision]:
    """Per column, the claim that ``first`` is ahead of ``second`` at ``dim`` (``first − second`` above 0)."""
    return [
        _labelled(
            at_least(*intervals((1, f"{first} {dim}", col), (-1, f"{second} {dim}", col))[1:], ORDER_PP),
            f"{first} − {second} {name}",
        )
        for col, name in _column_names(k, attributes)
    ]


def _ahead_on(parts: list[Decision]) -> int:
    return sum(p.verdict == "holds" for p in parts)


def _leads_decision(grid, intervals, k: int, attributes) -> Decision | None:
    dims = sorted(set(grid.loc[grid["method"] == "MRL", "dim"]) & set(grid.loc[grid["method"] == "PCA", "dim"]))
    if not dims:
        return None
    parts = []
    for d in sorted(dims, reverse=True):
        mrl = _ahead(grid, intervals, int(d), k, attributes, "MRL", "PCA")
        pca = _ahead(grid, intervals, int(d), k, attributes, "PCA", "MRL")
        label = f"{d}: MRL ahead on {_ahead_on(mrl)} of {len(mrl)} columns, PCA on {_ahead_on(pca)}"
        both = all_of(any_of(*mrl), any_of(*pca))
        parts.append(both._replace(reason=label if both.verdict == "holds" else f"{label}; {both.reason}"))
    return all_of(*parts)


def _most_of(parts: list[Decision], names: list[str], what: str, other: str) -> Decision:
    """The claim that more than half of ``parts`` (each an ordering) hold: the m-th largest of their
    intervals (m = half, rounded down, plus one) lies above the margin. Holds when more than half
    hold; contradicted when at least half are contradicted; inconclusive otherwise. ``names``:
    each part's column; ``what`` and ``other``: the words for a part that holds and one contradicted."""
    m = len(parts) // 2 + 1
    decided = at_least_of(m, parts)
    low, high = decided.low, decided.high
    held = [n for n, p in zip(names, parts) if p.verdict == "holds"]
    against = [n for n, p in zip(names, parts) if p.verdict == "contradicted"]
    reason = (
        f"{what} on {len(held)} of {len(parts)} columns{_listed(held)}, {other} on {len(against)}"
        f"{_listed(against)}; more than half needs the {_ordinal(m)} largest interval above {decided.margin:g}: "
        f"{decided.reason}"
    )
    return Decision(decided.verdict, "most of", decided.margin, low, high, reason)


def _ordinal(m: int) -> str:
    return f"{m}{'th' if 10 <= m % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(m % 10, 'th')}"


def _listed(names: list[str]) -> str:
    return f" ({', '.join(names)})" if names else ""


def _pca_ahead_decision(grid, intervals, k: int, attributes, dim: int = 128) -> Decision | None:
    if not _has(grid, f"MRL {dim}", f"PCA {dim}"):
        return None
    names = [name for _, name in _column_names(k, attributes)]
    return _most_of(_ahead(grid, intervals, dim, k, attributes, "PCA", "MRL"), names, "PCA ahead", "MRL ahead")


def _loss_decision(grid, intervals, k: int, attributes, attribute: str) -> Decision | None:
    if not _has(grid, "MRL 128") or attribute not in attributes:
        return None
    native, w = _native_name(grid), f"{attribute} BA"
    fall = at_least(*intervals((-1, "MRL 128", w), (1, native, w))[1:], LOSS_PP)
    parts = [_labelled(fall, f"{_name(attribute)} BA fall")]
    for col, name in _column_names(k, attributes):
        if col != w:
            terms = ((1, "MRL 128", col), (-1, native, col), (-1, "MRL 128", w), (1, native, w))
            parts.append(_labelled(at_least(*intervals(*terms)[1:], ORDER_PP), f"its fall − {name}'s"))
    return all_of(*parts)


def _centring_decision(centring: pd.DataFrame | None, k: int) -> Decision | None:
    if centring is None:
        return None
    c, u, d = _full_overlaps(centring, k)
    exact = "computed exactly on the fixed gallery (no sampling)"
    return all_of(
        _labelled(at_most(c, c, MOVED), f"centred PCA {d} overlap@{k}, {exact}"),
        _labelled(at_most(1 - u, 1 - u, ROUNDING), f"uncentred PCA {d} share of neighbours lost (1 − overlap@{k})"),
    )


def decide(
    grid: pd.DataFrame,
    centring: pd.DataFrame | None,
    items: pd.DataFrame | None,
    k: int = 10,
    attribute: str = "weather",
    n_draws: int = N_DRAWS,
    seed: int = SEED,
) -> dict:
    """Each finding of :data:`CRITERIA` decided on this run: ``{finding: Decision or None}``
    (None: the finding's dimension or attribute is not in the grid). ``items``:
    :func:`~embdiag.interventions.compression.compression_items` of the same vectors, whose
    evaluation images the intervals resample; without it every interval finding is not testable."""
    attributes = _table_attributes(grid)
    out = {"centring alone moves neighbours": _centring_decision(centring, k)}
    deciders = {
        "no method leads everywhere": lambda i: _leads_decision(grid, i, k, attributes),
        "MRL 512 and 256 near native": lambda i: _near_decision(grid, i, ["MRL 512", "MRL 256"], k, attributes),
        "MRL 128 loses most on weather BA": lambda i: _loss_decision(grid, i, k, attributes, attribute),
        "PCA 128 close to native": lambda i: _near_decision(grid, i, ["PCA 128"], k, attributes),
        "PCA ahead at 128": lambda i: _pca_ahead_decision(grid, i, k, attributes),
    }
    intervals = ItemIntervals(items, n_draws, seed) if items is not None else _Nothing()
    missing = not_testable("no per-image scores (compression_items) were given, so no interval")
    for name, decider in deciders.items():
        decided = decider(intervals)
        out[name] = missing if decided is not None and items is None else decided
    return {name: out[name] for name in CRITERIA}


class _Nothing:
    """Stands in for the intervals where there are none: every interval is (nan, nan, nan)."""

    def __call__(self, *terms):
        return (np.nan, np.nan, np.nan)


def findings(
    grid: pd.DataFrame,
    centring: pd.DataFrame | None = None,
    study: pd.DataFrame | None = None,
    k: int = 10,
    attribute: str = "weather",
    items: pd.DataFrame | None = None,
    n_draws: int = N_DRAWS,
    seed: int = SEED,
) -> pd.DataFrame:
    """The verdict table (:func:`~embdiag.paper.findings.verdicts`) of :data:`CRITERIA`: ``study``
    and ``this run`` give the point estimates in words (the study's from its published table,
    default :func:`read_study`; the centring finding is a user's, reported as overlap 0.89), the
    verdicts come from :func:`decide` on ``items``. The study published point estimates only, so
    its findings are not testable there; the old point-estimate verdicts (:func:`evaluate_criteria`)
    are shown beside the criteria they replace. ``attribute``: this run's attribute in weather's place."""
    study = read_study() if study is None else study
    ours, theirs = evaluate_criteria(grid, centring, k, attribute), evaluate_criteria(study, None, 10)
    theirs["centring alone moves neighbours"] = (f"not in the study; a user measured about {USER_OVERLAP}", None)
    point_only = not_testable("the study published point estimates without intervals")
    decided = decide(grid, centring, items, k, attribute, n_draws, seed)
    rows = [
        (
            name,
            theirs[name][0],
            ours[name][0],
            point_only if CRITERIA[name].kind == "study" else None,
            decided[name],
        )
        for name in CRITERIA
    ]
    was = {name: ours[name][1] for name, claim in CRITERIA.items() if claim.was is not None}
    return verdicts(CRITERIA, rows, was=was)
