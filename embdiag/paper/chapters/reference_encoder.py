"""The reference encoders on the data page (02): the two declared bars an encoder must meet to be a
meaningful subject, and their verdicts.

:data:`BARS` declares the two tests (before any measurement), each a claim decided by a 95%
bootstrap interval against its margin: its standardized linear probes beat the same probes on
pooled pixels (:func:`embdiag.encoders.quality.pooled_pixels`) in balanced accuracy on at
least two of the three attributes, and its text→image Hit@10 on the caption groups lies in
[50%, 100%) (useful, not trivial). :func:`caption_table` reads the second from the
caption-retrieval measurement (:func:`embdiag.interventions.caption_retrieval.evaluate`);
:func:`verdicts` decides the bars.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from ...metrics.inference import HOLDS, all_of, at_least, at_least_of, at_most
from ...metrics.stats import ItemIntervals, paired_bootstrap
from ...study import findings as protocol
from ...study.findings import Claim
from ...view.result import Result, box

__all__ = ["BARS", "caption_table", "verdicts", "result"]

#: The bars' margins: the encoder's probes beat pixels' by more than 0 pp of balanced accuracy on at
#: least ``BEYOND_ON`` attributes; text→image Hit@10 lies in [``USEFUL``, ``TRIVIAL``) percent.
BEYOND_PP, BEYOND_ON, USEFUL, TRIVIAL = 0.0, 2, 50.0, 100.0
#: The two bars, declared before any measurement, each decided by a 95% bootstrap interval.
BARS = {
    "labels beyond pixels": Claim(
        f"standardized-probe balanced accuracy minus the pooled-pixel probe's above {BEYOND_PP:g} pp on at least "
        f"{BEYOND_ON} of the 3 attributes (paired bootstrap over evaluation images, probes as fitted)",
        f"{BEYOND_PP:g} pp, on {BEYOND_ON} of 3",
        "an encoder that reads no attribute better than its own pixels is no subject for a study of its vectors",
        was="standardized-probe balanced accuracy above the pooled-pixel probe's on at least 2 of the 3 attributes",
    ),
    "captions find their image": Claim(
        f"text→image Hit@10 on the caption groups at least {USEFUL:g}% and below {TRIVIAL:g}% (bootstrap over "
        "caption groups)",
        f"{USEFUL:g}%; {TRIVIAL:g}%",
        "half of the captions finding their image among 1,000 in ten tries is useful (chance is 1%); all of them "
        "leaves no room to fall",
        was="text→image Hit@10 on the caption groups at least 50% and below 100%",
    ),
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


def verdicts(
    items: pd.DataFrame,
    retrieval,
    encoder: str,
    pixels: str = "pooled pixels",
    *,
    n_draws: int = 5000,
    seed: int = 0,
) -> pd.DataFrame:
    """The verdict table (:func:`~embdiag.study.findings.verdicts`) of :data:`BARS` for
    ``encoder``: ``items`` is :func:`embdiag.encoders.quality.probe_items` of ``encoder`` and
    ``pixels`` (paired bootstrap over the evaluation images, ``n_draws`` draws, ``seed``, probes
    held as fitted); ``retrieval`` the encoder's caption-retrieval result with ``k = 10``, whose
    native text→image hits are resampled by caption group."""
    intervals = ItemIntervals(items, n_draws, seed)
    attributes = list(items["class"].columns)
    parts, words = [], []
    for a in attributes:
        mean, low, high = intervals((1, encoder, f"{a} BA"), (-1, pixels, f"{a} BA"))
        parts.append(at_least(low, high, BEYOND_PP))
        words.append(f"{a} {mean:+.1f} [{low:+.1f}, {high:+.1f}]")
    beyond = at_least_of(BEYOND_ON, parts)
    caption_table(retrieval)  # checks k = 10
    hits = 100 * retrieval.native.t2i.hit_k.astype(float)
    hit10 = paired_bootstrap(hits, np.zeros_like(hits), groups=retrieval.group, n_draws=n_draws, seed=seed)
    useful = all_of(at_least(hit10.low, hit10.high, USEFUL), at_most(hit10.low, hit10.high, TRIVIAL))
    rows = [
        ("labels beyond pixels", "", "BA minus pixels (pp): " + "; ".join(words), beyond),
        ("captions find their image", "", f"Hit@10 {hit10.mean:.2f}% [{hit10.low:.2f}, {hit10.high:.2f}]", useful),
    ]
    old = {
        "labels beyond pixels": sum(
            intervals((1, encoder, f"{a} BA"), (-1, pixels, f"{a} BA"))[0] > 0 for a in attributes
        )
        >= BEYOND_ON,
        "captions find their image": bool(USEFUL <= hit10.mean < TRIVIAL),
    }
    return protocol.verdicts(BARS, rows, was=old).drop(columns="study")


def result(table: pd.DataFrame) -> Result:
    """The chapter's result box: per encoder of ``table`` (the :func:`verdicts` of each, stacked
    and indexed by ``encoder``), whether it meets both bars, with the interval and margin of any
    bar it does not meet."""
    sentences = []
    for encoder, rows in table.groupby(level="encoder", sort=False):
        missed = rows[rows["verdict"] != HOLDS]
        name = f"<strong>{html.escape(str(encoder))}</strong>"
        if missed.empty:
            sentences.append(f"{name} meets both bars, each interval clear of its margin.")
        else:
            what = "; ".join(
                f"<em>{html.escape(r['finding'])}</em> is {r['verdict']} "
                f"({html.escape(r['this run'], quote=False)}; margin {html.escape(r['margin'], quote=False)})"
                for _, r in missed.iterrows()
            )
            sentences.append(f"{name}: {what}.")
    return box(" ".join(sentences))
