"""Figures for the data chapter: sample grids per attribute value and class-count charts.

Images are embedded as PNG data URLs in Altair ``mark_image`` charts, so the figures are
self-contained and work offline in static HTML.
"""

from __future__ import annotations


import altair as alt
import numpy as np
import pandas as pd

from ...view import theme
from ..._images import to_data_url
from ...data.dataset import SPLITS, Dataset
from ...data.vocab import VOCAB


def sample_table(ds: Dataset, attribute: str, per_class: int = 6, split: str = "train", seed: int = 0) -> pd.DataFrame:
    """Up to ``per_class`` seeded example rows per value of ``attribute`` in ``split``."""
    labels = ds.labels(attribute)
    rng = np.random.default_rng(seed)
    rows = []
    for value in VOCAB[attribute]:
        idx = np.flatnonzero((labels == value) & (ds.split == split))
        for slot, i in enumerate(rng.permutation(idx)[:per_class]):
            rows.append({"value": value, "slot": slot, "row": int(i), "id": str(ds.ids[i])})
    return pd.DataFrame(rows, columns=["value", "slot", "row", "id"])


def sample_grid_chart(
    ds: Dataset,
    attribute: str,
    per_class: int = 6,
    split: str = "train",
    seed: int = 0,
    size: int = 64,
    fmt: str = "jpeg",
) -> alt.Chart:
    """One row of example images per value of ``attribute``; each row label gives the class count."""
    t = sample_table(ds, attribute, per_class, split, seed)
    t["url"] = [to_data_url(ds.images[r], fmt) for r in t["row"]]
    counts = pd.Series(ds.labels(attribute)[ds.split == split]).value_counts()
    order = [f"{v} (n={int(counts.get(v, 0))})" for v in VOCAB[attribute]]
    t["class"] = [f"{v} (n={int(counts.get(v, 0))})" for v in t["value"]]
    return (
        alt.Chart(t, title=f"{attribute}: examples from the {split} split")
        .mark_image(width=size, height=size)
        .encode(
            x=alt.X("slot:O", axis=None),
            y=alt.Y("class:N", sort=order, title=None, scale=alt.Scale(domain=order)),
            url="url:N",
            tooltip=["id:N", "value:N"],
        )
        .properties(width=(size + 6) * per_class, height=(size + 6) * len(order))
    )


def class_count_chart(counts: pd.DataFrame, attribute: str) -> alt.Chart:
    """Horizontal bars of class shares per split for one attribute (from :meth:`Dataset.class_counts`)."""
    c = counts[counts["attribute"] == attribute]
    order = [s for s in SPLITS if s in set(c["split"])]
    return (
        alt.Chart(c, title=f"{attribute}: class shares per split")
        .mark_bar()
        .encode(
            x=alt.X("share:Q", axis=alt.Axis(format="%"), title="share of split"),
            y=alt.Y("value:N", sort=list(VOCAB[attribute]), title=None),
            color=alt.Color("split:N", sort=order, scale=theme.scale(order)),
            yOffset=alt.YOffset("split:N", sort=order),
            tooltip=["value:N", "split:N", "count:Q", alt.Tooltip("share:Q", format=".2%")],
        )
        .properties(width=320, height=alt.Step(7))
    )


def count_table(counts: pd.DataFrame) -> pd.DataFrame:
    """Wide table: one row per (attribute, value), one column of counts per split."""
    order = [s for s in SPLITS if s in set(counts["split"])]
    wide = counts.set_index(["attribute", "value", "split"])["count"].unstack("split")[order]
    rows = list(dict.fromkeys(zip(counts["attribute"], counts["value"])))
    return wide.reindex(pd.MultiIndex.from_tuples(rows, names=["attribute", "value"])).astype(int)


def caption_table(ds: Dataset, rows: list[int]) -> pd.DataFrame:
    """The five captions of the given rows, one line each."""
    if ds.captions is None:
        raise ValueError(f"caption_table: this dataset has no captions ({ds.source})")
    return pd.DataFrame(
        [{"id": ds.ids[r], "caption #": k + 1, "caption": c} for r in rows for k, c in enumerate(ds.captions[r])]
    )


def support_table(counts: pd.DataFrame, split: str = "val", floor: int = 10) -> pd.DataFrame:
    """Classes of ``split`` below the support floor (fewer than ``floor`` samples), absent ones included."""
    c = counts[(counts["split"] == split) & (counts["count"] < floor)]
    out = c[["attribute", "value", "count"]].reset_index(drop=True)
    out["status"] = np.where(out["count"] == 0, "absent", f"present, below {floor}")
    return out


def category_table(ds: Dataset) -> pd.DataFrame:
    """Per object category and split: share of images that contain it (the multi-label targets)."""
    rows = []
    for s in ds.splits:
        m = ds.split == s
        for k, name in enumerate(ds.category_names):
            rows.append({"category": name, "split": s, "share of images": float(ds.categories[m, k].mean())})
    return (
        pd.DataFrame(rows)
        .pivot(index="category", columns="split", values="share of images")
        .reindex(index=list(ds.category_names), columns=list(ds.splits))
    )


def image_strip_chart(ds: Dataset, rows: list[int], size: int = 128) -> alt.Chart:
    """The given images side by side, labelled by id."""
    t = pd.DataFrame(
        {
            "slot": range(len(rows)),
            "id": [str(ds.ids[r]) for r in rows],
            "url": [to_data_url(ds.images[r], "png") for r in rows],
        }
    )
    img = (
        alt.Chart(t)
        .mark_image(width=size, height=size)
        .encode(
            x=alt.X(
                "id:N",
                sort=list(t["id"]),
                title=None,
                axis=alt.Axis(labelAngle=0, orient="top", ticks=False, domain=False),
            ),
            y=alt.value(size / 2 + 2),
            url="url:N",
        )
    )
    return img.properties(width=(size + 12) * len(rows), height=size + 4).configure_view(stroke=None)


def balance_sentence(counts: pd.DataFrame, split: str = "train", floor: int = 10, evaluation: str = "val") -> str:
    """The class balance in words (plain text): each attribute's largest class in ``split`` with its
    share, and the classes of ``evaluation`` absent or below ``floor`` (which balanced accuracy
    leaves out, so no result speaks for them)."""
    c = counts[counts["split"] == split]
    tops = c.loc[c.groupby("attribute", sort=False)["count"].idxmax()]
    largest = "; ".join(f"{r.attribute}: {r.value} {r.share:.0%}" for r in tops.itertuples())
    low = support_table(counts, evaluation, floor)
    named = low["attribute"] + " " + low["value"]
    absent, few = ", ".join(named[low["count"] == 0]), ", ".join(named[low["count"] > 0])
    return (
        f"Largest class per attribute ({split}): {largest}."
        + (f" Absent from {evaluation}: {absent}." if absent else "")
        + (f" Below {floor} {evaluation} images: {few}." if few else "")
        + (" Balanced accuracy leaves these out, so no result speaks for them." if absent or few else "")
    )
