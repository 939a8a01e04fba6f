"""The book's one visual system: a colour per named thing, one meaning per dash, one text size.

Colours are Okabe and Ito's colour-blind-safe hues, the light ones darkened until each has at
least 3:1 contrast with the white page (WCAG 2.1's minimum for graphics, :func:`contrast`).
Every condition, encoder, storage format, method, direction, intervention and attribute the
book names has one colour, the same on every page (:data:`COLOURS`); :func:`scale` is the
Altair scale of a field's domain, and gives names it does not know (a user's conditions) the
palette's colours in order. Dashes mean one thing each (:data:`DASHES`): a measured series is
solid, a reference level (a floor, a chance level, native) dashed, a published value dotted;
they never tell conditions apart. :func:`enable` registers the Altair theme that sets every
chart's text to at least :data:`TEXT_PX` pixels; :data:`COLUMN_PX` is the width of the book's
text column (:data:`RESULT_PX` inside a result box), which :func:`panel_width` divides among a
chart's panels; :func:`legend_below` keeps a legend from widening a chart past it.
"""

from __future__ import annotations

import altair as alt

#: The palette: Okabe-Ito hues; orange and sky blue darkened for contrast, plus Tol's wine and a grey.
PALETTE = {
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "green": "#009E73",
    "purple": "#CC79A7",
    "orange": "#C17A00",
    "sky": "#2E86C1",
    "wine": "#882255",
    "black": "#000000",
    "grey": "#767676",
}
_P = PALETTE
#: One colour per name, whichever chart shows it.
COLOURS = {
    # training conditions (embdiag.training.conditions) and the untrained encoder
    "EMA reference": _P["blue"],
    "Contracted control": _P["vermillion"],
    "SIGReg + stop-gradient": _P["green"],
    "SIGReg": _P["purple"],
    "Stop-gradient only": _P["black"],
    "Projector + SIGReg + stop-gradient": _P["sky"],
    "Projector + SIGReg": _P["wine"],
    "untrained": _P["grey"],
    "Untrained (step 0)": _P["grey"],
    # encoders
    "reference-cnn": _P["blue"],
    "reference-vit": _P["orange"],
    "WordLlama / WordNet": _P["green"],
    # what a comparison is made against
    "native": _P["black"],
    "unchanged": _P["black"],
    "study": _P["grey"],
    "study (COCO)": _P["grey"],
    "study (published)": _P["grey"],
    "real": _P["blue"],
    "shuffled": _P["vermillion"],
    "this run": _P["black"],
    # the certificate and the top-k boundary (neighbour stability)
    "half margin": _P["black"],
    "certificate bound": _P["vermillion"],
    "actual largest score change": _P["blue"],
    "stays in top k": _P["blue"],
    "leaves top k": _P["vermillion"],
    "enters top k": _P["green"],
    "stays out": _P["grey"],
    # verdicts (embdiag.metrics.inference, embdiag.study.findings)
    "holds": _P["green"],
    "contradicted": _P["vermillion"],
    "inconclusive": _P["orange"],
    "not testable": _P["grey"],
    "not measured": _P["purple"],
    # compression methods
    "MRL": _P["blue"],
    "PCA": _P["vermillion"],
    "PCA uncentred": _P["wine"],
    # storage formats
    "fp32": _P["black"],
    "fp16": _P["blue"],
    "bf16": _P["green"],
    "int8": _P["vermillion"],
    # kinds of representation in a report
    "reference": _P["black"],
    "file": _P["purple"],
    "storage": _P["blue"],
    "compression": _P["orange"],
    "index": _P["vermillion"],
    # splits of the data
    "train": _P["blue"],
    "val": _P["orange"],
    "test": _P["green"],
    "caption": _P["purple"],
    "retrieval": _P["purple"],
    # the two label-free effective dimensions
    "RankMe": _P["blue"],
    "PR": _P["vermillion"],
    "participation ratio": _P["vermillion"],
    # stress interventions
    "contraction": _P["blue"],
    "common offset": _P["orange"],
    "noise": _P["green"],
    "rank restriction": _P["vermillion"],
    # retrieval directions
    "text→image": _P["blue"],
    "image→text": _P["orange"],
    # attributes
    "weather": _P["blue"],
    "scene": _P["orange"],
    "timeofday": _P["green"],
    "time": _P["green"],
    "pos": _P["purple"],
    "lexname": _P["vermillion"],
}
#: The order in which names not in :data:`COLOURS` get colours.
FALLBACK = ("blue", "vermillion", "green", "purple", "orange", "sky", "wine", "grey")
#: One meaning per dash pattern (Vega strokeDash).
DASHES = {"measured": [], "reference": [6, 3], "published": [2, 2]}
#: The smallest text of any chart (px), the body text being 16 px.
TEXT_PX = 12
#: Width of the book's text column (px) that a chart fills.
COLUMN_PX = 840
#: Width (px) a chart has inside a result box: the column less the box's border and padding.
RESULT_PX = 800


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(colour: str, background: str = "#ffffff") -> float:
    """WCAG 2.1 contrast ratio of two ``#rrggbb`` colours, from 1 (same) to 21 (black on white)."""
    a, b = sorted((_luminance(colour), _luminance(background)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def colour(name: str) -> str:
    """The colour of ``name`` (:data:`COLOURS`); ``KeyError`` naming it when it has none."""
    try:
        return COLOURS[name]
    except KeyError:
        raise KeyError(f"theme: no colour for {name!r}; add it to embdiag.view.theme.COLOURS") from None


def colours(domain) -> list[str]:
    """The colour of each name of ``domain``, in order: its own, else the first palette colour
    (:data:`FALLBACK`) that no known name of the domain uses and no earlier unknown name took."""
    domain = list(domain)
    taken = {COLOURS[n] for n in domain if n in COLOURS}
    free = iter([_P[c] for c in FALLBACK if _P[c] not in taken] + [_P[c] for c in FALLBACK] * len(domain))
    return [COLOURS[n] if n in COLOURS else next(free) for n in domain]


def scale(domain, **kw) -> alt.Scale:
    """The Altair colour scale of ``domain``: each name's colour from :func:`colours`."""
    domain = list(domain)
    return alt.Scale(domain=domain, range=colours(domain), **kw)


def panel_width(panels: int = 1, gap: int = 60, room: int = COLUMN_PX) -> int:
    """Width (px) of each of ``panels`` side-by-side panels that, with ``gap`` px beside each for
    axes and spacing, fill ``room``."""
    if panels < 1:
        raise ValueError(f"panels: expected at least 1, got {panels}")
    return max(80, (room - gap * panels) // panels)


def changes_with_intervals(data, x: alt.X, low: str, high: str, about, fmt: str = "+.2f", **encoding) -> alt.LayerChart:
    """The book's one drawing of a change with its uncertainty: the estimate (a filled diamond at
    ``x``) on its interval (a rule from field ``low`` to ``high``) beside the dashed no-change line
    at 0 (a reference level, :data:`DASHES`); ``encoding`` (``y``, ``color``, ``yOffset``, ...) is
    shared by both marks. The tooltip shows the fields ``about``, then the change and its
    interval in format ``fmt``."""
    value = x.to_dict()
    tooltip = [*about, *(alt.Tooltip(f"{f}:Q", format=fmt) for f in (value["field"], low, high))]
    base = alt.Chart().encode(**encoding)
    line = base.mark_rule(strokeWidth=2).encode(x=alt.X(f"{low}:Q", title=value.get("title")), x2=f"{high}:Q")
    dot = base.mark_point(shape="diamond", filled=True, size=70).encode(x=x, tooltip=tooltip)
    zero = alt.Chart().mark_rule(color=PALETTE["grey"], strokeDash=DASHES["reference"]).encode(x=alt.datum(0))
    return alt.layer(zero, line, dot, data=data)


def legend_below(chart: alt.TopLevelMixin, columns: int = 3) -> alt.TopLevelMixin:
    """``chart`` with its legends under the plot in ``columns`` columns (entries top to bottom),
    so that a legend takes height, not the column's width."""
    return chart.configure_legend(orient="bottom", direction="vertical", columns=columns)


def config() -> dict:
    """The Vega-Lite ``config`` of every chart: text sizes and the font of the page."""
    font = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
    text = {"labelFontSize": TEXT_PX, "titleFontSize": TEXT_PX + 1}
    return {
        "font": font,
        "axis": text | {"titleFontWeight": "normal"},
        "legend": text | {"titleFontWeight": "normal", "symbolSize": 80},
        "header": text | {"labelFontSize": TEXT_PX + 1, "titleFontWeight": "normal"},
        "title": {"fontSize": TEXT_PX + 2, "subtitleFontSize": TEXT_PX, "fontWeight": "normal", "anchor": "start"},
        "text": {"fontSize": TEXT_PX},
        "mark": {"fontSize": TEXT_PX},
    }


def enable() -> None:
    """Register and activate the ``embdiag`` Altair theme (idempotent)."""

    @alt.theme.register("embdiag", enable=True)
    def _theme() -> alt.theme.ThemeConfig:
        return {"config": config()}
