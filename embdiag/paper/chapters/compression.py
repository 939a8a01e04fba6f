"""Figures, tables and words of the Compression chapter; it measures nothing.

Every function takes the tables of one measurement of :func:`embdiag.study.compression.run`
(:class:`~embdiag.study.compression.CompressionResults`: the grid, the overlap curve, the
centring effect, the variance spectrum) or the study's table (read by
:func:`embdiag.study.compression.read_study` into the grid's layout) and returns an Altair chart,
a DataFrame, a pandas Styler or a Markdown string. Shares are shown in percent, changes from
native in percentage points (pp). The section's findings and their verdicts are
:mod:`embdiag.study.compression`'s.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from ...study.compression import (
    ROUNDING,
    USER_OVERLAP,
    attributes_of,
    display_name,
    endpoint_columns,
    native_row,
    representation_row,
)
from ...view import theme

__all__ = [
    "AXIS_PP",
    "centring_table",
    "centring_text",
    "change_caption",
    "change_chart",
    "changes",
    "study_changes",
    "overlap_chart",
    "overlap_text",
    "prefix_note",
    "results_frame",
    "results_table",
    "retrieval_text",
    "schematic_chart",
    "spectrum_table",
    "standardization_text",
    "trained_prefixes",
]

#: The one fixed axis of every change-from-native panel (pp), as in the study's figures.
AXIS_PP = (-10.0, 5.0)
#: Colour and point shape of each method (colours from :mod:`embdiag.view.theme`; lines all solid).
STYLE = {
    m: (theme.colour(m), shape) for m, shape in (("MRL", "circle"), ("PCA", "square"), ("PCA uncentred", "triangle"))
}


# -- changes from native ---------------------------------------------------------------------
def changes(table: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Long table of every compressed row's six columns: ``representation``, ``method``, ``dim``,
    ``attribute`` (display name), ``endpoint`` (``BA`` or ``P@k``), ``value`` (%) and
    ``change`` (pp from native)."""
    native = native_row(table)
    rows = []
    for _, r in table[table["method"] != "native"].iterrows():
        for col, a, endpoint in endpoint_columns(k, attributes_of(table)):
            if col in table.columns and pd.notna(r[col]):
                rows.append(
                    {
                        "representation": r["representation"],
                        "method": r["method"],
                        "dim": int(r["dim"]),
                        "attribute": display_name(a),
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
    parts = [changes(grid, k).assign(source="this run")]
    if study is not None:
        parts.append(study_changes(grid, study, k))
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
            column=alt.Column("attribute:N", sort=[display_name(a) for a in attributes_of(grid)], title=None),
        )
        .resolve_scale(y="shared")
    )
    return theme.legend_below(chart)


def study_changes(grid: pd.DataFrame, study: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """The study's :func:`changes` at this grid's dimensions and attributes (its P@10 named as
    our P@k), ``source`` "study (published)": what :func:`change_chart` draws of the study."""
    ours = changes(grid, k)
    theirs = changes(study, 10).assign(source="study (published)")
    theirs = theirs[theirs["dim"].isin(ours["dim"]) & theirs["attribute"].isin(ours["attribute"])]
    return theirs.assign(endpoint=theirs["endpoint"].replace({"P@10": f"P@{k}"}))


def change_caption(grid: pd.DataFrame, k: int = 10, study: pd.DataFrame | None = None) -> str:
    """Caption of :func:`change_chart` naming any value beyond the fixed axis, and the study's
    points where ``study`` has any at this grid's dimensions and attributes (plain text)."""
    data = changes(grid, k)
    out = data[(data["change"] < AXIS_PP[0]) | (data["change"] > AXIS_PP[1])]
    beyond = (
        "every value lies within the axis"
        if out.empty
        else f"{len(out)} value(s) lie beyond it and are drawn at its edge: "
        + "; ".join(f"{r.representation} {r.attribute} {r.endpoint} {r.change:+.2f} pp" for r in out.itertuples())
    )
    theirs = (
        ""
        if study is None or study_changes(grid, study, k).empty
        else (
            "; open diamonds: the study's published values (EmbeddingGemma on BDD100K"
            + ("" if k == 10 else f", its P@10 beside this run's P@{k}")
            + ")"
        )
    )
    return (
        f"Change from native (pp) of balanced accuracy (top row) and P@{k} (bottom row) per attribute, on one "
        f"fixed {AXIS_PP[0]:+g} to {AXIS_PP[1]:+g} pp axis: {beyond}. Lines and filled circles: this run{theirs}."
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
    names = ["PCA", "PCA uncentred"]  # through the training mean; through the origin
    ends = np.array([centre - 1.6 * first, centre + 1.6 * first, [0.0, 0.0], 3.8 * raw])
    lines = pd.DataFrame({"x": ends[:, 0], "y": ends[:, 1], "direction": [names[0]] * 2 + [names[1]] * 2})
    legend = alt.Legend(orient="bottom")
    method = dict(
        color=alt.Color(
            "direction:N", scale=alt.Scale(domain=names, range=[STYLE[n][0] for n in names]), title=None, legend=legend
        ),
        shape=alt.Shape(
            "direction:N", scale=alt.Scale(domain=names, range=[STYLE[n][1] for n in names]), title=None, legend=legend
        ),
    )
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
        *(  # one fixed colour per line: the legend is the end markers' (colour and shape together)
            alt.Chart(lines[lines["direction"] == n])
            .mark_line(strokeWidth=2.5, clip=True, color=STYLE[n][0])
            .encode(**xy)
            for n in names
        ),
        # each direction's far end marked with its method's shape, as in the measured charts
        alt.Chart(lines.iloc[[0, 3]]).mark_point(size=110, filled=True, opacity=1).encode(**xy, **method),
        alt.Chart(drop).mark_line(color="#999999", strokeWidth=1).encode(**xy),
        alt.Chart(marks).mark_point(shape="cross", size=90, color="black", filled=True).encode(**xy),
        alt.Chart(marks).mark_text(dx=10, dy=12, align="left", fontWeight="bold").encode(**xy, text="label:N"),
    ).properties(
        width=260,
        height=170,
        title=alt.TitleParams("PCA: project onto fitted directions", subtitle="new axes, fitted on training vectors"),
    )
    return alt.hconcat(prefix, pca).resolve_scale(color="independent", shape="independent")


# -- tables ------------------------------------------------------------------------------------
def _order(table: pd.DataFrame) -> list[str]:
    native = table.loc[table["method"] == "native", "representation"].tolist()
    rest = table[table["method"] != "native"].copy()
    rest["m"] = rest["method"].map({m: i for i, m in enumerate(STYLE)}).fillna(len(STYLE))
    rest = rest.sort_values(["dim", "m"], ascending=[False, True], kind="stable")
    return native + rest["representation"].tolist()


def _block(table: pd.DataFrame, source: str, k_read: int, k: int, attributes) -> pd.DataFrame:
    names = {f"{display_name(a)} BA": f"{a} BA" for a in attributes}
    names |= {f"{display_name(a)} P@{k}": f"{a} P@{k_read}" for a in attributes}
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
    same = c[f"{o} with centred cosine"] >= 1 - ROUNDING
    cause = (
        "the change is the centring, not the projection"
        if same
        else "so the projection, not the centring alone, accounts for part of the change"
    )
    rounding = " (rounding)" if u["max |Δ cosine|"] <= ROUNDING else ""
    return (
        f"At the full dimension ({d}, nothing projected away) centred PCA keeps on average "
        f"**{c[o]:.3f}** of each query's {k} native neighbours (the user reported about {USER_OVERLAP}) and "
        f"changes the top-{k} of {c[f'changed@{k}']:.1%} of the queries; its cosines differ from the native "
        f"ones by up to {c['max |Δ cosine|']:.2f}. Its overlap with the top-{k} of the native vectors minus the "
        f"training mean is {c[f'{o} with centred cosine']:.4f}: {cause}. Uncentred PCA at {d} keeps overlap "
        f"**{u[o]:.4f}**, with cosines within {u['max |Δ cosine|']:.1g} of the native ones{rounding}."
    )


def retrieval_text(grid: pd.DataFrame, centring: pd.DataFrame, k: int = 10) -> str:
    """What each method does to P@k across the dimensions, in words (Markdown), from the grid
    and :func:`~embdiag.interventions.compression.centring_effect`'s table."""
    ch = changes(grid, k)
    ch = ch[ch["endpoint"] == f"P@{k}"]
    if ch.empty:
        return ""
    largest = ch.groupby("method")["change"].agg(lambda x: x.abs().max())
    t = centring.set_index("representation")
    centred = next(r for r in t.index if r.startswith("PCA ") and "uncentred" not in r)
    cols = [c for c in t.columns if c.endswith(f" P@{k}")]
    shift = max(abs(100 * (t.loc[centred, c] - t.loc["native", c])) for c in cols)
    dims = sorted(ch["dim"].unique(), reverse=True)
    parts = [f"{m} {largest[m]:.2f} pp" for m in STYLE if m in largest.index]
    return (
        f"At {', '.join(map(str, dims))} dimensions, P@{k} moves from native by at most "
        + ", ".join(parts)
        + f"; centring alone, at the full dimension, by up to {shift:.2f} pp."
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
            trained, between = [mrl[d] for d in on], [mrl[d] for d in off]
            reading = (
                "more"
                if min(trained) > max(between)
                else "less"
                if max(trained) < min(between)
                else "neither consistently more nor less"
            )
            lines.append(
                f"- The prefix keeps {reading} at the lengths the encoder was trained at ("
                + ", ".join(f"{d}: {mrl[d]:.3f}" for d in on)
                + ") than in between ("
                + ", ".join(f"{d}: {mrl[d]:.3f}" for d in off)
                + ")."
            )
    return "\n".join(lines)


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
    row, native = representation_row(grid, representation), native_row(grid)
    dim = int(row["dim"])
    sp = spectrum.set_index("dim")
    std, nat = row[f"{attribute} BA"], native[f"{attribute} BA"]
    if std >= nat:
        verdict = f"so {representation} loses no balanced accuracy here for standardization to explain"
    elif raw_ba - std >= 0.01:
        verdict = (
            "so here the loss comes from standardizing directions that carry almost no variance, "
            "not from what PCA keeps"
        )
    else:
        verdict = "so standardization does not explain the loss here"
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
        f"{display_name(attribute)} balanced accuracy, against {std:.2%} standardized and {nat:.2%} on the native "
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
