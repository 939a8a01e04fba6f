"""The reference-encoder chapter's bars: caption hits read from the caption-retrieval result
(against a brute-force search) and the verdicts of the declared bars."""

import numpy as np
import pandas as pd
import pytest

from embdiag.interventions import caption_retrieval
from embdiag.paper.chapters import reference_encoder as chapter


def test_caption_table_counts_own_image_hits():
    rng = np.random.default_rng(0)
    images = rng.standard_normal((20, 16))
    images /= np.linalg.norm(images, axis=1, keepdims=True)
    group = np.repeat(np.arange(20), 2)
    queries = images[group].copy()
    queries[1::2] = -queries[1::2]  # every second caption points away from its image
    t = chapter.caption_table(caption_retrieval.evaluate(images, queries, queries, group, dims=(8,)))
    assert t.loc[16, "Hit@1"] == pytest.approx(50.0)
    assert t.loc[16, "Hit@10"] == pytest.approx(50.0)
    assert t.loc[16, "chance Hit@10"] == pytest.approx(50.0)
    assert t.index.tolist() == [16, 8] and t.index.name == "dimensions"


def _brute_hits(images, queries, group, dim, k):
    """Text→image Hit@k by sorting every caption's full cosine row (float64, ties to the lower index)."""
    X, Q = images[:, :dim], queries[:, :dim]
    S = (Q / np.linalg.norm(Q, axis=1, keepdims=True)) @ (X / np.linalg.norm(X, axis=1, keepdims=True)).T
    order = np.argsort(-S, axis=1, kind="stable")[:, :k]
    return 100 * (order == group[:, None]).any(axis=1).mean()


def test_caption_table_agrees_with_caption_retrieval_and_a_brute_force_search():
    rng = np.random.default_rng(3)
    images = rng.standard_normal((60, 32))
    group = np.repeat(np.arange(60), 5)
    queries = images[group] + 4.0 * rng.standard_normal((300, 32))  # noisy captions: hits between 0 and 100%
    documents = images[group] + 4.0 * rng.standard_normal((300, 32))
    result = caption_retrieval.evaluate(images, queries, documents, group, dims=(16,))
    t = chapter.caption_table(result)
    summary = caption_retrieval.summary_table(result)
    assert np.allclose(t["Hit@1"].to_numpy(), 100 * summary["T→I Hit@1"].to_numpy())
    assert np.allclose(t["Hit@10"].to_numpy(), 100 * summary["T→I Hit@10"].to_numpy())
    for dim in (32, 16):
        assert t.loc[dim, "Hit@10"] == pytest.approx(_brute_hits(images, queries, group, dim, 10))
        assert t.loc[dim, "Hit@1"] == pytest.approx(_brute_hits(images, queries, group, dim, 1))
    assert 0 < t.loc[32, "Hit@1"] < t.loc[32, "Hit@10"] < 100
    with pytest.raises(ValueError, match="k = 10"):
        chapter.caption_table(caption_retrieval.evaluate(images, queries, documents, group, dims=(16,), k=5))


def _probes(enc):
    return pd.DataFrame(
        {"weather": [50.0, enc[0]], "scene": [60.0, enc[1]], "timeofday": [70.0, enc[2]]},
        index=["pooled pixels", "enc"],
    )


@pytest.mark.parametrize(
    "enc, hit10, met",
    [
        ((51, 61, 69), 55.0, [True, True]),
        ((51, 59, 69), 55.0, [False, True]),
        ((51, 61, 69), 49.9, [True, False]),
        ((51, 61, 69), 100.0, [True, False]),
    ],
)
def test_verdicts_apply_the_declared_bars(enc, hit10, met):
    caps = pd.DataFrame(
        {"Hit@1": [10.0], "Hit@10": [hit10], "chance Hit@10": [1.0]}, index=pd.Index([768], name="dimensions")
    )
    v = chapter.verdicts(_probes(enc), caps, "enc")
    assert v["met"].tolist() == met
    assert v["bar"].tolist() == list(chapter.BARS)
