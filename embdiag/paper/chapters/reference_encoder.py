"""The reference-encoder chapter (04): the two declared bars an encoder must meet to be a
meaningful subject, and their verdicts.

:data:`BARS` declares the two tests (before any measurement): its standardized linear probes
beat the same probes on pooled pixels (:func:`embdiag.encoders.quality.pooled_pixels`) in
balanced accuracy on at least two of the three attributes, and its text→image Hit@10 on the
caption groups lies in [50%, 100%) (useful, not trivial). :func:`caption_table` reads the
second from the caption-retrieval measurement
(:func:`embdiag.interventions.caption_retrieval.evaluate`); :func:`verdicts` applies the bars.
"""

from __future__ import annotations

import html

import pandas as pd

from .. import findings

__all__ = ["BARS", "caption_table", "verdicts", "result"]

BARS = {
    "labels beyond pixels": "standardized-probe balanced accuracy above the pooled-pixel probe's "
    "on at least 2 of the 3 attributes",
    "captions find their image": "text→image Hit@10 on the caption groups at least 50% and below 100%",
}


def caption_table(retrieval) -> pd.DataFrame:
    """Text→image Hit@1 and Hit@10 (%) of query-role captions over their images, one row per
    representation (indexed by its ``dimensions``, native first), with chance Hit@10 (10 in the
    number of images).

    ``retrieval``: the result of :func:`embdiag.interventions.caption_retrieval.evaluate` with
    ``k = 10`` (its :class:`~embdiag.interventions.caption_retrieval.CaptionRetrieval`), whose
    per-caption hits are read here, not recomputed.
    """
    if getattr(retrieval, "k", None) != 10:
        raise ValueError(
            f"retrieval: expected a caption-retrieval result searched with k = 10 (the bar reads "
            f"Hit@10), got k = {getattr(retrieval, 'k', None)!r}"
        )
    rows = {
        r.dim: {
            "Hit@1": 100 * r.t2i.mean("hit_1"),
            "Hit@10": 100 * r.t2i.mean("hit_k"),
            "chance Hit@10": 100 * 10 / retrieval.n_images,
        }
        for r in retrieval.representations
    }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("dimensions")


def verdicts(probes: pd.DataFrame, captions: pd.DataFrame, encoder: str, pixels: str = "pooled pixels") -> pd.DataFrame:
    """Each bar of :data:`BARS` with this encoder's numbers and whether it is met."""
    beats = probes.loc[encoder] > probes.loc[pixels]
    native = captions.iloc[0]
    detail = ", ".join(f"{a} {probes.loc[encoder, a]:.1f} vs {probes.loc[pixels, a]:.1f}" for a in probes.columns)
    return pd.DataFrame(
        [
            {
                "bar": "labels beyond pixels",
                "criterion": BARS["labels beyond pixels"],
                "this encoder": f"{detail} ({int(beats.sum())} of {len(beats)})",
                "met": bool(beats.sum() >= 2),
            },
            {
                "bar": "captions find their image",
                "criterion": BARS["captions find their image"],
                "this encoder": f"Hit@10 {native['Hit@10']:.2f}% (Hit@1 {native['Hit@1']:.2f}%)",
                "met": bool(50 <= native["Hit@10"] < 100),
            },
        ]
    )


def result(table: pd.DataFrame) -> findings.Result:
    """The chapter's result box: per encoder of ``table`` (the :func:`verdicts` of each, stacked
    and indexed by ``encoder``), whether it meets both bars, with the numbers of any bar missed.

    >>> t = pd.DataFrame({"bar": ["a", "b"], "this encoder": ["x 1", "y 2"], "met": [True, False]},
    ...                  index=pd.Index(["e", "e"], name="encoder"))
    >>> print(result(t).html)  # doctest: +NORMALIZE_WHITESPACE
    <div class="embdiag-result"><p><strong>Result.</strong>
    <strong>e</strong> misses the bar <em>b</em> (y 2).</p></div>
    """
    sentences = []
    for encoder, rows in table.groupby(level="encoder", sort=False):
        missed = rows[~rows["met"].astype(bool)]
        name = f"<strong>{html.escape(str(encoder))}</strong>"
        if missed.empty:
            sentences.append(f"{name} meets both bars.")
        else:
            what = "; ".join(
                f"<em>{html.escape(r['bar'])}</em> ({html.escape(r['this encoder'], quote=False)})"
                for _, r in missed.iterrows()
            )
            sentences.append(f"{name} misses the bar {what}.")
    return findings.box(" ".join(sentences))
