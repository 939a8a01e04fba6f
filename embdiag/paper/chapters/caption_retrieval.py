"""Figures, tables and findings of the image–caption retrieval chapter.

Every function takes the measurements of :mod:`~embdiag.interventions.caption_retrieval`
(a :class:`~embdiag.interventions.caption_retrieval.CaptionRetrieval` or the tables made
from it) and returns an Altair chart, a DataFrame, a Styler or Markdown text; none measures
anything. Shares are shown in percent, changes in percentage points (pp). The study's
published values are read from ``data/study/caption_retrieval.csv`` (:func:`read_study`);
:data:`CRITERIA` restates each finding of the study's section as a test, declared here,
which :func:`findings` applies to this run's numbers and to the study's.
"""

from __future__ import annotations

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
from .. import theme
from ...metrics.inference import Decision, all_of, at_least, at_most, not_testable, within
from ...metrics.stats import proportion_interval
from ..findings import Claim, read_published, verdicts

STUDY_FILE = "caption_retrieval.csv"
THIS_RUN, STUDY = "this run", "study (COCO)"
COLOURS = {d: theme.colour(d) for d in (T2I, I2T)}
PARENT = theme.PALETTE["vermillion"]


def read_study(path=None) -> pd.DataFrame:
    """The study's caption-retrieval values as printed (``data/study/caption_retrieval.csv``;
    percent, or pp for changes): columns ``metric``, ``direction``, ``representation``,
    ``value``, ``low``, ``high``, ``unit``."""
    return read_published(STUDY_FILE, path)


def _study_value(study: pd.DataFrame, metric: str, direction: str, representation: str, column: str = "value"):
    row = study[
        (study["metric"] == metric) & (study["direction"] == direction) & (study["representation"] == representation)
    ]
    return float(row[column].iloc[0]) if len(row) else float("nan")


# ----------------------------------------------------------------------------- the worked example


def data_statement(vectors, result: CaptionRetrieval) -> str:
    """Which data and encoder ran, and, where captions are text with the same count per image,
    how far exact duplicates can cap text→image Hit@1."""
    text = (
        f"**Data and encoder:** {vectors.source}. {len(vectors.group):,} captions, each embedded in the query "
        f"and in the document role."
    )
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
    outlined in red (the row label gives its rank, also when it falls outside the top ``k``).
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


def _study_changes(study: pd.DataFrame) -> pd.DataFrame:
    """The study's changes from native (pp): from its table, with its printed intervals where it gave them."""
    rows = []
    for rep in ("MRL 256", "MRL 128"):
        for direction, metric, _ in METRICS:
            name = metric.replace("@k", "@10")
            change = _study_value(study, name, direction, rep) - _study_value(study, name, direction, "native 768")
            low, high = (_study_value(study, f"{name} change", direction, rep, c) for c in ("low", "high"))
            rows.append(
                {
                    "representation": rep,
                    "direction": direction,
                    "metric": name,
                    "change": round(change, 2),
                    "low": low,
                    "high": high,
                    "source": STUDY,
                }
            )
    return pd.DataFrame(rows)


def intervals_chart(changes: pd.DataFrame, study: pd.DataFrame | None = None) -> alt.Chart:
    """Compressed minus native (pp) with 95% paired-bootstrap intervals: one panel per metric
    on one shared axis, a row per direction and dimension, the study's published changes in
    grey beside (differences of its table; it printed intervals for Hit@10 only, so its other
    changes are points)."""
    ours = changes.assign(
        change=100 * changes["change"], low=100 * changes["low"], high=100 * changes["high"], source=THIS_RUN
    )[["representation", "direction", "metric", "change", "low", "high", "source"]]
    data = pd.concat([ours, _study_changes(study)], ignore_index=True) if study is not None else ours
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
        f"{_fmt(top['change'], top['low'], top['high'])} pp; {n_excl} of {len(pp)} intervals exclude 0. "
        f"The lowest overlap with the native top {result.k} is "
        f"{100 * low['overlap']:.2f}% ({low['direction']}, {low['representation']}); the study's overlaps ranged "
        f"from {s_over.min():.2f}% to {s_over.max():.2f}%."
    )


def overlaps_side_by_side(result: CaptionRetrieval, study: pd.DataFrame | None = None):
    """Overlap with the native top-k (percent), this run beside the study's."""
    overlaps = overlap_table(result)
    t = overlaps.assign(**{THIS_RUN: 100 * overlaps["overlap"]}).drop(columns="overlap")
    if study is not None:
        t[STUDY] = [_study_value(study, "overlap@10", d, r) for r, d in zip(t["representation"], t["direction"])]
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
                    STUDY: _study_value(study, name, direction, r.name),
                    THIS_RUN: 100 * r.ranking(direction).mean(attr),
                }
            )
        rows.append(
            {
                "representation": r.name,
                "metric": "category P@10",
                STUDY: _study_value(study, "category P@10", "image→image", r.name),
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
    n_positives = int(np.bincount(result.group).max())  # captions per image (five)
    c = control.set_index(["direction", "metric"])
    i2t = c.loc[(I2T, f"Hit@{k}")]
    s_t2i, s_i2t = (_study_value(study, "shuffled Hit@10", d, "native 768") for d in (T2I, I2T))
    return (
        f"Here the image→text chance is {i2t['chance']:.2%}: the top {k} captions come from "
        f"{i2t['chance'] * n:.2f} images on average. Treating the {k} results as random draws would give "
        f"{random_hit_chance(n_captions, n_positives, k):.2%} ({n_positives} positives among {n_captions:,} "
        f"captions), or {random_hit_chance(n, n_positives, k):.2%} if the gallery held only {n:,} items; neither "
        f"is the control's chance, because the shuffle moves whole groups past a fixed ranking. The study's one "
        f"shuffle gave {s_i2t:.2f}% image→text, the lowest chance a shuffle of five-caption groups allows "
        f"({100 * np.ceil(10 / 5) / 1000:.2f}%: top ten captions owned by two images) and a plausible single "
        f"draw at a chance of a few tenths of a percent; its {s_t2i:.2f}% text→image is near that direction's "
        f"{100 * 10 / 1000:.2f}%."
    )


# ----------------------------------------------------------------------------- findings

#: The margins of the findings, declared before this run's numbers: a cost smaller than ``SMALL`` pp
#: is little, and a fall larger than ``SMALL`` pp is a cost; Hit@10 is high at ``HIGH`` % or more and
#: kept when it falls less than ``KEEPS`` pp; "far more" is more than ``FAR_MORE`` times the Hit@10
#: fall; a shuffled Hit@10 within ``NEAR_CHANCE`` pp of its exact chance level is at chance.
SMALL, HIGH, KEEPS, FAR_MORE, NEAR_CHANCE = 1.0, 90.0, 5.0, 2.0, 1.0
#: The study's design: queries per direction (1,000 images with five captions each) and its cut-off.
STUDY_QUERIES, STUDY_IMAGES, STUDY_K = {T2I: 5000, I2T: 1000}, 1000, 10
#: The lowest and highest image→text chance a shuffle of five-caption groups allows (top ten captions
#: owned by 2 to 10 of the 1,000 images), percent: the study printed no chance level for it.
STUDY_I2T_CHANCE = (100 * 2 / STUDY_IMAGES, 100 * 10 / STUDY_IMAGES)

#: The findings of the study's caption section, each a claim with its declared margin.
CRITERIA = {
    "256-d costs little": Claim(
        f"in both directions the 95% interval of the 256-d Hit@10 change lies within ±{SMALL:g} pp",
        f"±{SMALL:g} pp",
        "1 pp of Hit@10 is one query in 100; the study calls its 256-d changes (-0.20, -0.30 pp) little and its "
        "128-d ones (-2.50, -3.34 pp) a cost",
        was="in both directions the 256-d Hit@10 change's 95% interval includes 0 or lies within ±1 pp",
    ),
    "128-d keeps Hit@10 high": Claim(
        f"in both directions the 95% interval of the 128-d Hit@10 lies above {HIGH:g}% and that of its change "
        f"above -{KEEPS:g} pp",
        f"{HIGH:g}% (level); -{KEEPS:g} pp (change)",
        "the study calls its 128-d Hit@10 of 93.82% and 95.90% high, after falls of 3.34 and 2.50 pp; 90% and 5 pp "
        "are the round bounds beyond them",
        was="in both directions the 128-d Hit@10 falls by less than 5 pp",
    ),
    "128-d costs Hit@1 and caption recall far more": Claim(
        f"at 128-d the 95% intervals of the T→I Hit@1, I→T Hit@1 and I→T caption recall@10 changes each lie below "
        f"-{SMALL:g} pp, and of each change minus {FAR_MORE:g} times its direction's Hit@10 change (paired, over "
        f"image groups) below 0",
        f"-{SMALL:g} pp (change); factor {FAR_MORE:g} (far more)",
        "1 pp is the cost margin above; the study's falls are 3.4 to 4.5 times its Hit@10 falls, so twice is a "
        "lower bound of its far more",
        was="at 128-d, T→I Hit@1, I→T Hit@1 and I→T caption recall@10 each fall by at least 1 pp and by at least "
        "twice the Hit@10 fall of their direction",
    ),
    "shuffled control falls to chance": Claim(
        f"in both directions the 95% interval of the shuffled Hit@10 minus its exact chance level lies within "
        f"±{NEAR_CHANCE:g} pp (this run: the central 95% of further seeded shuffles; the study: a Wilson interval over "
        f"its queries, against the range of chance its shuffle allows)",
        f"±{NEAR_CHANCE:g} pp",
        "1 pp is the study's text→image chance level (10 of 1,000 images) and under 1/90 of its real Hit@10",
        was="in both directions the shuffled Hit@10 lies within 1 pp of its exact chance level",
    ),
}


#: The columns of this run's tables that hold fractions: percent, or pp for changes, in the study's units.
_SHARES = (
    "native", "compressed", "change", "low", "high", "compressed low", "compressed high", "contrast",
    "real", "shuffled", "chance", "permutation low", "permutation high",
)  # fmt: skip


def _in_pp(table: pd.DataFrame) -> pd.DataFrame:
    """This run's ``table`` (fractions) in the units of the study's: percent, and pp for changes."""
    return table.assign(**{c: 100 * table[c] for c in _SHARES if c in table.columns})


def _pick(pp: pd.DataFrame, representation: str, direction: str, metric: str) -> pd.Series | None:
    row = pp[(pp["representation"] == representation) & (pp["direction"] == direction) & (pp["metric"] == metric)]
    return row.iloc[0] if len(row) else None


def _fmt(mean, low=None, high=None) -> str:
    return f"{mean:+.2f}" + ("" if low is None or np.isnan(low) else f" [{low:+.2f}, {high:+.2f}]")


def _labelled(label: str, d: Decision) -> Decision:
    return d._replace(reason=f"{label} {d.reason}")


_DIRS = ((T2I, "T→I"), (I2T, "I→T"))
_LOSSES = (
    ("T→I Hit@1", T2I, "Hit@1"),
    ("I→T Hit@1", I2T, "Hit@1"),
    ("I→T caption recall@10", I2T, "caption recall@10"),
)
_NOT_MEASURED = "not measured ({} not among dims, or k is not 10)"


def _little(pp: pd.DataFrame) -> tuple[str, Decision | None]:
    """256-d costs little: each direction's Hit@10 change within ±SMALL pp."""
    rows = [(a, _pick(pp, "MRL 256", d, "Hit@10")) for d, a in _DIRS]
    if any(o is None for _, o in rows):
        return _NOT_MEASURED.format(256), None
    words = "; ".join(f"{a} {_fmt(o['change'], o['low'], o['high'])}" for a, o in rows)
    return words, all_of(*(_labelled(a, within(o["low"], o["high"], SMALL)) for a, o in rows))


def _level(o: pd.Series) -> tuple[float, float]:
    return (o["compressed low"], o["compressed high"]) if "compressed low" in o else (np.nan, np.nan)


def _high(pp: pd.DataFrame, levels=None) -> tuple[str, Decision | None]:
    """128-d keeps Hit@10 high: each direction's Hit@10 above HIGH % and its change above -KEEPS pp;
    ``levels`` gives each direction's level interval where ``pp`` has none (the study's)."""
    rows = [(d, a, _pick(pp, "MRL 128", d, "Hit@10")) for d, a in _DIRS]
    if any(o is None for *_, o in rows):
        return _NOT_MEASURED.format(128), None
    parts, words = [], []
    for d, a, o in rows:
        low, high = _level(o) if levels is None else levels[d]
        level = f"{o['compressed']:.2f}%" + ("" if np.isnan(low) else f" [{low:.2f}, {high:.2f}]")
        words.append(f"{a} Hit@10 {level}, change {_fmt(o['change'], o['low'], o['high'])}")
        parts += [
            _labelled(f"{a} Hit@10:", at_least(low, high, HIGH)),
            _labelled(f"{a} change:", at_least(o["low"], o["high"], -KEEPS)),
        ]
    return "; ".join(words), all_of(*parts)


def _far_more(pp: pd.DataFrame, contrasts: pd.DataFrame | None) -> tuple[str, Decision | None]:
    """128-d costs Hit@1 and caption recall far more: each change below -SMALL pp and below FAR_MORE
    times its direction's Hit@10 change (``contrasts``: :func:`bootstrap_contrasts`, in pp)."""
    rows = [(n, _pick(pp, "MRL 128", d, m), _pick(pp, "MRL 128", d, "Hit@10")) for n, d, m in _LOSSES]
    if any(o is None or h is None for _, o, h in rows):
        return _NOT_MEASURED.format(128), None
    parts, words = [], []
    for (name, direction, metric), (_, o, h) in zip(_LOSSES, rows):
        c = None if contrasts is None else _pick(contrasts, "MRL 128", direction, metric)
        parts.append(_labelled(f"{name}:", at_most(o["low"], o["high"], -SMALL)))
        text = f"{name} {_fmt(o['change'], o['low'], o['high'])} vs Hit@10 {_fmt(h['change'], h['low'], h['high'])}"
        if c is None:
            parts.append(not_testable(f"{name}: no paired interval of the change against {FAR_MORE:g} times Hit@10's"))
        else:
            parts.append(_labelled(f"{name} minus {FAR_MORE:g}× Hit@10:", at_most(c["low"], c["high"], 0)))
            text += f", contrast {_fmt(c['contrast'], c['low'], c['high'])}"
        words.append(text)
    return "; ".join(words), all_of(*parts)


def _near_chance(rows) -> tuple[str, Decision]:
    """(direction label, shuffled %, interval low %, interval high %, chance low %, chance high %) per
    direction: the interval minus chance within ±NEAR_CHANCE pp (the chance a range where unknown)."""
    words, parts = [], []
    for a, s, low, high, c_low, c_high in rows:
        chance = f"{c_low:.2f}%" if c_low == c_high else f"{c_low:.2f}–{c_high:.2f}%"
        words.append(f"{a} {s:.2f}% [{low:.2f}, {high:.2f}] (chance {chance})")
        parts.append(_labelled(f"{a} minus chance:", within(low - c_high, high - c_low, NEAR_CHANCE)))
    return "; ".join(words), all_of(*parts)


def _study_levels(study: pd.DataFrame) -> dict:
    """The study's 128-d Hit@10 per direction with its Wilson interval over its queries (percent)."""
    out = {}
    for d, _ in _DIRS:
        n = STUDY_QUERIES[d]
        iv = proportion_interval(round(_study_value(study, "Hit@10", d, "MRL 128") * n / 100), n)
        out[d] = (100 * iv.low, 100 * iv.high)
    return out


def _study_control(study: pd.DataFrame) -> list[tuple]:
    rows = []
    for d, a in _DIRS:
        n, s = STUDY_QUERIES[d], _study_value(study, "shuffled Hit@10", d, "native 768")
        iv = proportion_interval(round(s * n / 100), n)
        chance = (100 * STUDY_K / STUDY_IMAGES,) * 2 if d == T2I else STUDY_I2T_CHANCE
        rows.append((a, s, 100 * iv.low, 100 * iv.high, *chance))
    return rows


def _old_verdicts(pp: pd.DataFrame, control_rows) -> dict:
    """The point-estimate verdicts of the old criteria (:attr:`Claim.was`) on this run's numbers."""
    h256 = [_pick(pp, "MRL 256", d, "Hit@10") for d, _ in _DIRS]
    h128 = {d: _pick(pp, "MRL 128", d, "Hit@10") for d, _ in _DIRS}
    losses = [(_pick(pp, "MRL 128", d, m), h128[d]) for _, d, m in _LOSSES]
    measured128 = all(h is not None for h in h128.values())
    return {
        "256-d costs little": None
        if any(o is None for o in h256)
        else all((o["low"] <= 0 <= o["high"]) or max(abs(o["low"]), abs(o["high"])) <= 1 for o in h256),
        "128-d keeps Hit@10 high": all(o["change"] > -5 for o in h128.values()) if measured128 else None,
        "128-d costs Hit@1 and caption recall far more": all(
            p["change"] <= -1 and p["change"] <= 2 * min(h["change"], 0) for p, h in losses
        )
        if measured128
        else None,
        "shuffled control falls to chance": None
        if control_rows is None
        else all(abs(s - c) <= 1 for _, s, _, _, c, _ in control_rows),
    }


def level_statement(changes: pd.DataFrame) -> str:
    """Markdown: native Hit@k in each direction against :data:`HIGH`, and the 128-d change against
    ``-KEEPS``, the two parts of "128-d keeps Hit@10 high" (the verdict names only the deciding one)."""
    pp = _in_pp(changes)
    k = next(m for m in pp["metric"] if m.startswith("Hit@") and m != "Hit@1")
    native = {a: pp[(pp["direction"] == d) & (pp["metric"] == k)]["native"].iloc[0] for d, a in _DIRS}
    text = "Native " + " and ".join(f"{a} {k} is {v:.2f}%" for a, v in native.items()) + f" here, against {HIGH:g}%"
    below = [a for a, v in native.items() if v <= HIGH]
    text += (
        f": {' and '.join(below)} {k} {'is' if len(below) == 1 else 'are'} not high even before compression."
        if below
        else ": high before compression."
    )
    rows = [(a, _pick(pp, "MRL 128", d, k)) for d, a in _DIRS]
    if all(o is not None for _, o in rows):
        text += (
            " The 128-d change, the other part: "
            + "; ".join(f"{a} {at_least(o['low'], o['high'], -KEEPS).reason}" for a, o in rows)
            + "."
        )
    return text


def findings(
    changes: pd.DataFrame,
    control: pd.DataFrame,
    study: pd.DataFrame | None = None,
    contrasts: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The verdict table (:func:`~embdiag.paper.findings.verdicts`) of :data:`CRITERIA`, each
    decided by 95% intervals against its declared margin, on this run's numbers and on the
    study's (``holds in the study``), with the old point-estimate verdicts beside.

    ``changes`` is :func:`~embdiag.interventions.caption_retrieval.bootstrap_changes`,
    ``control`` :func:`~embdiag.interventions.caption_retrieval.shuffled_control`,
    ``contrasts`` :func:`~embdiag.interventions.caption_retrieval.bootstrap_contrasts` with
    ``factor`` :data:`FAR_MORE` (without it the paired part of the third finding is not
    testable); ``study`` defaults to :func:`read_study`. The findings speak of Hit@10 at 256
    and 128 dimensions: a run without ``k = 10`` or those dims does not measure them. This
    run's intervals are paired bootstraps over image groups, conditional on these images and
    captions (fixed encoder); its control's interval is the central 95% of further seeded
    shuffles with the rankings fixed. The study's: its printed Hit@10 change intervals; Wilson
    intervals over its 5,000 caption and 1,000 image queries for its levels and its shuffle
    (treating an image's captions as independent); its Hit@1 and caption-recall changes were
    printed without intervals, so that finding is not testable on them. The study printed no
    image→text chance level: a group shuffle's lies between 2 and 10 owners of the top ten
    captions out of 1,000 (:data:`STUDY_I2T_CHANCE`)."""
    study = read_study() if study is None else study
    ours, theirs = _in_pp(changes), _study_changes(study)
    theirs["compressed"] = [
        _study_value(study, m, d, r) for m, d, r in zip(theirs["metric"], theirs["direction"], theirs["representation"])
    ]
    c10 = _in_pp(control[control["metric"] == "Hit@10"]).set_index("direction")
    control_rows = (
        [
            (a, c10.loc[d, "shuffled"], c10.loc[d, "permutation low"], c10.loc[d, "permutation high"])
            + (c10.loc[d, "chance"],) * 2
            for d, a in _DIRS
        ]
        if len(c10) == 2
        else None
    )
    paired = not_testable("the study printed its Hit@1 and caption-recall changes without intervals")
    study_rows = [
        _little(theirs),
        _high(theirs, _study_levels(study)),
        (_far_more(theirs, None)[0], paired),
        _near_chance(_study_control(study)),
    ]
    our_rows = [
        _little(ours),
        _high(ours),
        _far_more(ours, None if contrasts is None else _in_pp(contrasts)),
        ("not measured (k is not 10)", None) if control_rows is None else _near_chance(control_rows),
    ]
    rows = [(f, s[0], o[0], s[1], o[1]) for f, s, o in zip(CRITERIA, study_rows, our_rows)]
    return verdicts(CRITERIA, rows, was=_old_verdicts(ours, control_rows))
