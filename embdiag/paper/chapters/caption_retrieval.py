"""Figures, tables and wording of the image–caption retrieval chapter.

Every function takes a measurement of :func:`embdiag.study.caption_retrieval.run` (its
:class:`~embdiag.interventions.caption_retrieval.CaptionRetrieval` or the tables made from it)
and returns an Altair chart, a DataFrame, a Styler or Markdown text; none measures anything,
and the findings and their verdicts live in :mod:`embdiag.study.caption_retrieval`. Shares are
shown in percent, changes in percentage points (pp); the study's published values beside them
are :func:`~embdiag.study.caption_retrieval.read_study`'s.
"""

from __future__ import annotations

import colorsys

import altair as alt
import numpy as np
import pandas as pd

from ..._images import to_data_url
from ...interventions.caption_retrieval import (
    I2T,
    METRICS,
    T2I,
    CaptionRetrieval,
    category_floor,
    overlap_table,
    random_hit_chance,
    summary_table,
)
from ...metrics.inference import at_least
from ...study.caption_retrieval import (
    DIRECTIONS,
    HIGH,
    KEEPS,
    change_text,
    in_pp,
    pick,
    read_study,
    study_changes,
    study_value,
)
from ...view import theme

THIS_RUN, STUDY = "this run", "study (COCO)"
COLOURS = {d: theme.colour(d) for d in (T2I, I2T)}
PARENT = theme.PALETTE["vermillion"]

#: Hue names by the upper bound of their hue band (degrees), for :func:`colour_name`.
HUES = ((15, "red"), (45, "orange"), (70, "yellow"), (165, "green"), (200, "cyan"), (255, "blue"), (290, "purple"),
        (345, "pink"), (360, "red"))  # fmt: skip


def colour_name(colour: str) -> str:
    """A plain name of the ``#RRGGBB`` ``colour`` as drawn: its hue band (:data:`HUES`), or black,
    white or grey where it has next to no hue."""
    if not (isinstance(colour, str) and len(colour) == 7 and colour.startswith("#")):
        raise ValueError(f"colour: expected #RRGGBB, got {colour!r}")
    h, lightness, saturation = colorsys.rgb_to_hls(*(int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)))
    if saturation < 0.2 or lightness < 0.08 or lightness > 0.95:
        return "black" if lightness < 0.2 else "white" if lightness > 0.9 else "grey"
    return next(name for bound, name in HUES if 360 * h < bound)


# ----------------------------------------------------------------------------- the worked example


def data_statement(vectors, result: CaptionRetrieval) -> str:
    """Which data and encoder ran, how its captions were embedded, and, where captions are text with
    the same count per image, how far exact duplicates can cap text→image Hit@1."""
    queries, documents = getattr(vectors, "queries", None), getattr(vectors, "documents", None)
    roles = (
        "embedded once, the same vectors serving as query and as document"
        if queries is not None and documents is not None and np.array_equal(queries, documents)
        else "each embedded in the query and in the document role"
    )
    captions = plural(getattr(vectors, "caption", "caption"))
    text = f"**Data and encoder:** {vectors.source}. {len(vectors.group):,} {captions}, {roles}."
    stats = vectors.caption_statistics()
    if stats is not None:
        text += (
            f" Of the captions, {stats['distinct']:.2%} are distinct and {stats['shared_with_other_image']:.2%} "
            f"exactly match a caption of another image, so exact duplicates can cost text→image Hit@1 at "
            f"most {stats['shared_with_other_image']:.2%}."
        )
    return text


def categories_statement(vectors, result: CaptionRetrieval) -> str:
    """The eligible object categories of the category comparator and its random floor."""
    if not result.categories:
        return (
            f"No object category is eligible here ({len(vectors.category_names)} given), so category "
            f"P@{result.k} is not computed."
        )
    names = ", ".join(vectors.category_names[c] for c in result.categories)
    return (
        f"Eligible categories here: {len(result.categories)} of {len(vectors.category_names)} ({names}); the "
        f"study had 75 of COCO's 80. Random neighbours would give category P@{result.k} = "
        f"{category_floor(vectors.categories):.2%}."
    )


def plural(noun: str) -> str:
    """``image`` → ``images``, ``gloss`` → ``glosses`` (the nouns the caption data uses)."""
    return noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")


def item_label(vectors, image: int) -> str:
    """How the page names item ``image``: ``image 41``, or ``gloss 41 (05125377-n)`` with its id."""
    ids = vectors.item_ids
    return f"{vectors.item} {image}" + ("" if ids is None else f" ({ids[image]})")


def _wrapped(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in str(text).split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + [line] if line else lines


def example_chart(vectors, image: int, size: int = 192) -> alt.Chart:
    """Item ``image`` of :class:`~embdiag.encoders.vectors.CaptionVectors` ``vectors``: its
    picture, its text (text items, wrapped), or else its label."""
    label = item_label(vectors, image)
    if vectors.image_pixels is not None:
        frame = pd.DataFrame({"x": [0], "y": [0], "label": [label]})
        mark = (
            alt.Chart(frame)
            .transform_calculate(url=alt.expr.toString(to_data_url(vectors.image_pixels[image])))
            .mark_image(width=size, height=size)
            .encode(x=alt.X("x:Q", axis=None), y=alt.Y("y:Q", axis=None), url="url:N")
        )
        return mark.properties(width=size, height=size, title=label).configure_view(stroke=None)
    lines = [label] if vectors.item_texts is None else _wrapped(vectors.item_texts[image], 60)
    frame = pd.DataFrame({"line": lines, "y": range(len(lines))})
    mark = (
        alt.Chart(frame)
        .mark_text(align="left", baseline="top", fontSize=16, x=0)
        .encode(y=alt.Y("y:O", axis=None), text="line:N")
    )
    return mark.properties(width=520, height=24 * len(lines), title=label).configure_view(stroke=None)


_LEFT = [{"selector": "td", "props": "text-align: left;"}]


def example_captions(result: CaptionRetrieval, vectors, image: int):
    """The captions of ``image``, each with the rank its parent gets when the caption queries
    the images (text→image), in every representation (a Styler: full text, the data's nouns)."""
    rows = np.flatnonzero(result.group == image)
    caption = vectors.caption
    table = pd.DataFrame({f"{caption} #": np.arange(1, len(rows) + 1), caption: np.asarray(vectors.captions)[rows]})
    for r in result.representations:
        table[f"parent's rank, {r.name}"] = r.t2i.rank[rows]
    return table.set_index(f"{caption} #").style.set_table_styles(_LEFT)


def ranking_frame(result: CaptionRetrieval, image: int, slot: int | None = None) -> pd.DataFrame:
    """The data of :func:`ranking_chart`: the top ``k`` images for one caption query (caption
    ``slot``, counted from 0, of ``image``; default: its first caption whose parent is in the
    native top ``k``, else its first), one row per representation and rank: ``representation``
    (with the parent's rank), ``rank``, ``image``, ``score`` and ``parent``."""
    own = np.flatnonzero(result.group == image)
    if slot is None:
        found = np.flatnonzero(result.native.t2i.hit_k[own] > 0)
        slot = int(found[0]) if found.size else 0
    if not 0 <= slot < len(own):
        raise ValueError(f"slot: image {image} has {len(own)} captions, got {slot}")
    caption, parent = int(own[slot]), int(image)
    rows = []
    for r in result.representations:
        rank = int(r.t2i.rank[caption])
        label = f"{r.name} (parent at rank {rank})"
        for j, (img, score) in enumerate(zip(r.t2i.neighbors[caption], r.t2i.scores[caption])):
            rows.append(
                {
                    "representation": label,
                    "rank": j + 1,
                    "image": int(img),
                    "score": float(score),
                    "parent": bool(img == parent),
                }
            )
    return pd.DataFrame(rows)


def ranking_chart(result: CaptionRetrieval, vectors, image: int, slot: int | None = None, size: int = 45) -> alt.Chart:
    """:func:`ranking_frame` drawn: one row per representation, best first; the parent image is
    outlined in :data:`PARENT` (the row label gives its rank, also when it falls outside the top ``k``).
    Pictures where ``vectors`` has them, else item numbers (with the item's text on hover)."""
    data = ranking_frame(result, image, slot)
    pixels, texts = vectors.image_pixels, vectors.item_texts
    tooltip = ["representation", "rank", "image", alt.Tooltip("score:Q", format=".4f"), "parent"]
    if texts is not None:
        data[vectors.item] = np.asarray(texts)[data["image"].to_numpy()]
        tooltip.insert(3, vectors.item)
    order = list(dict.fromkeys(data["representation"]))
    x = alt.X("rank:O", title="rank", axis=alt.Axis(labelAngle=0, orient="top"))
    y = alt.Y("representation:N", sort=order, title=None, axis=alt.Axis(labelLimit=260))
    base = alt.Chart(data).properties(width=(size + 6) * result.k, height=(size + 6) * len(order))
    if pixels is None:
        thumbs = base.mark_text().encode(x=x, y=y, text="image:N", tooltip=tooltip)
    else:
        urls = pd.DataFrame({"image": sorted(set(data["image"]))})
        urls["url"] = [to_data_url(pixels[i]) for i in urls["image"]]
        thumbs = (
            base.transform_lookup(lookup="image", from_=alt.LookupData(urls, "image", ["url"]))
            .mark_image(width=size, height=size)
            .encode(x=x, y=y, url="url:N", tooltip=tooltip)
        )
    outline = (
        base.transform_filter(alt.datum.parent).mark_rect(fillOpacity=0, stroke=PARENT, strokeWidth=3).encode(x=x, y=y)
    )
    return alt.layer(thumbs, outline).configure_view(stroke=None)


def caption_ranking_table(result: CaptionRetrieval, vectors, image: int, representation: str | None = None):
    """The example item's image→text search: its top ``k`` captions with score, the item that
    owns each, and whether it is one of the item's own (a Styler; headers in the data's nouns)."""
    r = result.native if representation is None else result[representation]
    nb, sc = r.i2t.neighbors[image], r.i2t.scores[image]
    item, caption = vectors.item, vectors.caption
    table = pd.DataFrame(
        {
            "rank": np.arange(1, len(nb) + 1),
            "score": sc,
            caption: np.asarray(vectors.captions)[nb],
            f"owner {item}": result.group[nb].astype(str),  # an id, not a quantity
            f"own {caption}": np.where(result.group[nb] == image, "yes", ""),
        }
    )
    return table.set_index("rank").style.format({"score": "{:.4f}"}).set_table_styles(_LEFT)


# ----------------------------------------------------------------------------- results


def percent_table(result: CaptionRetrieval):
    """The study's table for this run (percent, two decimals)."""
    return (100 * summary_table(result)).style.format("{:.2f}")


def _long_summary(result: CaptionRetrieval) -> pd.DataFrame:
    rows = []
    for r in result.representations:
        for direction, metric, attr in METRICS:
            rows.append(
                {
                    "representation": r.name,
                    "dim": r.dim,
                    "direction": direction,
                    "metric": metric.replace("@k", f"@{result.k}"),
                    "value": 100 * r.ranking(direction).mean(attr),
                }
            )
    return pd.DataFrame(rows)


def metrics_chart(result: CaptionRetrieval) -> alt.Chart:
    """Hit@1, Hit@k and caption recall@k per representation, both directions, on one fixed
    0–100% axis (flat lines mean compression costs nothing)."""
    data = _long_summary(result)
    order = result.names
    metrics = list(dict.fromkeys(data["metric"]))
    base = alt.Chart(data).encode(
        x=alt.X("representation:N", sort=order, title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("value:Q", title="%", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color(
            "direction:N",
            scale=alt.Scale(domain=list(COLOURS), range=list(COLOURS.values())),
            legend=alt.Legend(orient="bottom", title=None),
        ),
        tooltip=["representation", "direction", "metric", alt.Tooltip("value:Q", format=".2f")],
    )
    layer = alt.layer(base.mark_line(strokeWidth=1.5), base.mark_point(filled=True, size=50))
    return layer.properties(width=theme.panel_width(3), height=200).facet(
        column=alt.Column("metric:N", sort=metrics, title=None)
    )


def changes_table(changes: pd.DataFrame):
    """:func:`~embdiag.interventions.caption_retrieval.bootstrap_changes` in percent and pp."""
    t = changes.copy()
    t[["native", "compressed", "change", "low", "high"]] *= 100
    t = t.rename(
        columns={
            "native": "native %",
            "compressed": "compressed %",
            "change": "change (pp)",
            "low": "95% interval: low (pp)",
            "high": "95% interval: high (pp)",
        }
    )
    cols = [
        "representation",
        "direction",
        "metric",
        "native %",
        "compressed %",
        "change (pp)",
        "95% interval: low (pp)",
        "95% interval: high (pp)",
    ]
    return (
        t[cols]
        .set_index(["representation", "direction", "metric"])
        .style.format(
            {
                "native %": "{:.2f}",
                "compressed %": "{:.2f}",
                "change (pp)": "{:+.2f}",
                "95% interval: low (pp)": "{:+.2f}",
                "95% interval: high (pp)": "{:+.2f}",
            }
        )
    )


def intervals_chart(changes: pd.DataFrame, study: pd.DataFrame | None = None) -> alt.Chart:
    """Compressed minus native (pp) with 95% paired-bootstrap intervals: one panel per metric
    on one shared axis, a row per direction and dimension, the study's published changes in
    grey beside (differences of its table; it printed intervals for Hit@10 only, so its other
    changes are points)."""
    ours = changes.assign(
        change=100 * changes["change"], low=100 * changes["low"], high=100 * changes["high"], source=THIS_RUN
    )[["representation", "direction", "metric", "change", "low", "high", "source"]]
    data = (
        pd.concat([ours, study_changes(study).assign(source=STUDY)], ignore_index=True) if study is not None else ours
    )
    data["row"] = data["direction"] + ", " + data["representation"]
    values = data[["change", "low", "high"]].to_numpy(dtype=float)
    lo, hi = np.nanmin(values), np.nanmax(values)
    pad = 0.06 * max(hi - lo, 1.0)
    x = alt.X("change:Q", title="change (pp)", scale=alt.Scale(domain=[min(lo, 0) - pad, max(hi, 0) + pad]))
    rows = [f"{d}, {r}" for r in dict.fromkeys(changes["representation"]) for d in (T2I, I2T)]
    y = alt.Y("row:N", sort=rows, title=None, axis=alt.Axis(labelLimit=220))
    colour = alt.Color(
        "source:N",
        scale=theme.scale([THIS_RUN, STUDY]),
        legend=alt.Legend(orient="bottom", title=None),
    )
    about = ["source", "direction", "representation", "metric"]
    offset = alt.YOffset("source:N", sort=[THIS_RUN, STUDY])
    layers = theme.changes_with_intervals(data, x, "low", "high", about, y=y, yOffset=offset, color=colour)
    metrics = list(dict.fromkeys(changes["metric"]))
    return layers.properties(
        width=theme.panel_width(len(metrics), gap=20, room=theme.COLUMN_PX - 230), height=190
    ).facet(column=alt.Column("metric:N", sort=metrics, title=None))


def changes_statement(changes: pd.DataFrame, result: CaptionRetrieval, study: pd.DataFrame | None = None) -> str:
    """Markdown: the largest change, how many intervals exclude 0, and the lowest overlap
    beside the study's overlaps."""
    study = read_study() if study is None else study
    pp = changes.assign(change=100 * changes["change"], low=100 * changes["low"], high=100 * changes["high"])
    top = pp.loc[pp["change"].abs().idxmax()]
    n_excl = int(((pp["low"] > 0) | (pp["high"] < 0)).sum())
    overlaps = overlap_table(result)
    low = overlaps.loc[overlaps["overlap"].idxmin()]
    s_over = study.loc[study["metric"] == "overlap@10", "value"]
    return (
        f"Here the largest change is {top['metric']} {top['direction']} at {top['representation']}, "
        f"{change_text(top['change'], top['low'], top['high'])} pp; {n_excl} of {len(pp)} intervals exclude 0. "
        f"The lowest overlap with the native top {result.k} is "
        f"{100 * low['overlap']:.2f}% ({low['direction']}, {low['representation']}); the study's overlaps ranged "
        f"from {s_over.min():.2f}% to {s_over.max():.2f}%."
    )


def overlaps_side_by_side(result: CaptionRetrieval, study: pd.DataFrame | None = None):
    """Overlap with the native top-k (percent), this run beside the study's."""
    overlaps = overlap_table(result)
    t = overlaps.assign(**{THIS_RUN: 100 * overlaps["overlap"]}).drop(columns="overlap")
    if study is not None:
        t[STUDY] = [study_value(study, "overlap@10", d, r) for r, d in zip(t["representation"], t["direction"])]
    return t.set_index(["representation", "direction"]).style.format("{:.2f}", na_rep="–")


def side_by_side(result: CaptionRetrieval, study: pd.DataFrame):
    """Every metric of the study's table: the study's value beside this run's (percent)."""
    rows = []
    for r in result.representations:
        for direction, metric, attr in METRICS:
            name = metric.replace("@k", "@10")
            rows.append(
                {
                    "representation": r.name,
                    "metric": f"{'T→I' if direction == T2I else 'I→T'} {name}",
                    STUDY: study_value(study, name, direction, r.name),
                    THIS_RUN: 100 * r.ranking(direction).mean(attr),
                }
            )
        rows.append(
            {
                "representation": r.name,
                "metric": "category P@10",
                STUDY: study_value(study, "category P@10", "image→image", r.name),
                THIS_RUN: 100 * r.category_p,
            }
        )
    t = pd.DataFrame(rows).set_index(["representation", "metric"])
    return t.style.format("{:.2f}", na_rep="–")


#: Columns of :func:`~embdiag.interventions.caption_retrieval.shuffled_control` -> their names in percent.
CONTROL_COLUMNS = {
    "real": "real %",
    "shuffled": "shuffled %",
    "chance": "exact chance %",
    "permutation low": "shuffles, 2.5th percentile %",
    "permutation high": "shuffles, 97.5th percentile %",
}


def control_frame(control: pd.DataFrame) -> pd.DataFrame:
    """:func:`~embdiag.interventions.caption_retrieval.shuffled_control` in percent, its columns
    renamed by :data:`CONTROL_COLUMNS` (the last two: the central 95% of the further shuffles);
    the data of the control's chart and table."""
    return control.assign(**{c: 100 * control[c] for c in CONTROL_COLUMNS}).rename(columns=CONTROL_COLUMNS)


def control_chart(control: pd.DataFrame) -> alt.Chart:
    """The shuffled-correspondence control (log axis, percent): the real value, the seeded
    shuffle, the exact chance level (black tick) and the central 95% of further shuffles (grey line)."""
    data = control_frame(control).rename(columns={v: k for k, v in CONTROL_COLUMNS.items()})
    data["row"] = data["direction"] + ", " + data["metric"]
    order = list(data["row"])
    y = alt.Y("row:N", sort=order, title=None, axis=alt.Axis(labelLimit=240))
    x_scale = alt.Scale(type="log", domain=[0.01, 100])
    points = data.melt(id_vars=["row"], value_vars=["real", "shuffled"], var_name="value", value_name="percent")
    points = points[points["percent"] > 0]  # a shuffle with no hit cannot sit on a log axis; the table shows it
    dots = (
        alt.Chart(points)
        .mark_point(filled=True, size=70)
        .encode(
            x=alt.X("percent:Q", title="% (log axis)", scale=x_scale),
            y=y,
            color=alt.Color(
                "value:N",
                scale=theme.scale(["real", "shuffled"]),
                legend=alt.Legend(orient="bottom", title=None),
            ),
            tooltip=["row", "value", alt.Tooltip("percent:Q", format=".2f")],
        )
    )
    spread = (
        alt.Chart(data)
        .mark_rule(color="#9e9e9e", strokeWidth=3)
        .encode(x=alt.X("permutation low:Q", scale=x_scale), x2="permutation high:Q", y=y)
    )
    chance = (
        alt.Chart(data)
        .mark_tick(color="black", thickness=2, size=18)
        .encode(x=alt.X("chance:Q", scale=x_scale), y=y, tooltip=["row", alt.Tooltip("chance:Q", format=".3f")])
    )
    return alt.layer(spread, chance, dots).properties(width=theme.panel_width(1, gap=240), height=170)


def control_table(control: pd.DataFrame):
    """:func:`control_frame` as a Styler, indexed by direction and metric."""
    fmt = {name: "{:.3f}" if name == "exact chance %" else "{:.2f}" for name in CONTROL_COLUMNS.values()}
    return control_frame(control).set_index(["direction", "metric"]).style.format(fmt)


def control_statement(control: pd.DataFrame, result: CaptionRetrieval, study: pd.DataFrame | None = None) -> str:
    """Markdown: the image→text chance level explained, against the random-draw figures and the
    study's single shuffle."""
    study = read_study() if study is None else study
    k, n = result.k, result.n_images
    n_captions = len(result.group)
    sizes = np.bincount(result.group, minlength=n)  # captions per image
    c = control.set_index(["direction", "metric"])
    i2t = c.loc[(I2T, f"Hit@{k}")]
    s_t2i, s_i2t = (study_value(study, "shuffled Hit@10", d, "native 768") for d in (T2I, I2T))
    draws, few = (float(np.mean([random_hit_chance(g, int(m), k) for m in sizes])) for g in (n_captions, n))
    positives = (
        f"{sizes[0]} positives among {n_captions:,} captions"
        if (sizes == sizes[0]).all()
        else f"an image's own {sizes.min()} to {sizes.max()} captions among {n_captions:,}, averaged over images"
    )
    return (
        f"Here the image→text chance is {i2t['chance']:.2%}: the top {k} captions come from "
        f"{i2t['chance'] * n:.2f} images on average. Treating the {k} results as random draws would give "
        f"{draws:.2%} ({positives}), or {few:.2%} if the gallery held only {n:,} items; neither "
        f"is the control's chance, because the shuffle moves whole groups past a fixed ranking. The study's one "
        f"shuffle gave {s_i2t:.2f}% image→text, the lowest chance a shuffle of five-caption groups allows "
        f"({100 * np.ceil(10 / 5) / 1000:.2f}%: top ten captions owned by two images) and a plausible single "
        f"draw at a chance of a few tenths of a percent; its {s_t2i:.2f}% text→image is near that direction's "
        f"{100 * 10 / 1000:.2f}%."
    )


# ----------------------------------------------------------------------------- findings


def level_statement(changes: pd.DataFrame) -> str:
    """Markdown: native Hit@k in each direction against :data:`HIGH`, and the 128-d change against
    ``-KEEPS``, the two parts of "128-d keeps Hit@10 high" (the verdict names only the deciding one)."""
    pp = in_pp(changes)
    k = next(m for m in pp["metric"] if m.startswith("Hit@") and m != "Hit@1")
    native = {a: pp[(pp["direction"] == d) & (pp["metric"] == k)]["native"].iloc[0] for d, a in DIRECTIONS}
    text = "Native " + " and ".join(f"{a} {k} is {v:.2f}%" for a, v in native.items()) + f" here, against {HIGH:g}%"
    below = [a for a, v in native.items() if v <= HIGH]
    text += (
        f": {' and '.join(below)} {k} {'is' if len(below) == 1 else 'are'} not high even before compression."
        if below
        else ": high before compression."
    )
    rows = [(a, pick(pp, "MRL 128", d, k)) for d, a in DIRECTIONS]
    if all(o is not None for _, o in rows):
        text += (
            " The 128-d change, the other part: "
            + "; ".join(f"{a} {at_least(o['low'], o['high'], -KEEPS).reason}" for a, o in rows)
            + "."
        )
    return text
