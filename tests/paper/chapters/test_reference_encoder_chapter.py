"""The data and reference-encoders page (02): the class-balance sentence read from the counts,
caption hits read from the caption-retrieval result (against a brute-force search) and the
verdicts of the encoders' declared bars."""

import numpy as np
import pandas as pd
import pytest

from embdiag.interventions import caption_retrieval
from embdiag.paper.chapters import data
from embdiag.paper.chapters import reference_encoder as chapter


def _counts(rows):
    frame = pd.DataFrame(rows, columns=["attribute", "value", "split", "count"])
    return frame.assign(share=frame["count"] / frame.groupby(["attribute", "split"])["count"].transform("sum"))


def test_balance_sentence_names_the_largest_classes_and_the_missing_ones_of_these_counts():
    counts = _counts(
        [
            ("weather", "rainy", "train", 30),
            ("weather", "clear", "train", 10),
            ("weather", "rainy", "val", 20),
            ("weather", "clear", "val", 0),
            ("scene", "highway", "train", 5),
            ("scene", "tunnel", "train", 15),
            ("scene", "highway", "val", 12),
            ("scene", "tunnel", "val", 3),
        ]
    )
    text = data.balance_sentence(counts)
    assert text.startswith("Largest class per attribute (train): weather: rainy 75%; scene: tunnel 75%.")
    assert "Absent from val: weather clear." in text and "Below 10 val images: scene tunnel." in text
    full = counts.assign(count=counts["count"] + 20)
    assert data.balance_sentence(full).count(".") == 1  # nothing missing: no caveat


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


def _items(right_encoder, right_pixels, n: int = 300) -> pd.DataFrame:
    """Per-image probe correctness of ``enc`` and pooled pixels on three attributes of two classes:
    ``right_*[a]`` is the share right, the first images of each class first."""
    codes = np.tile([0.0, 1.0], n // 2)
    columns = {("class", a): codes for a in ATTRS}
    for name, right in (("pooled pixels", right_pixels), ("enc", right_encoder)):
        for a, share in zip(ATTRS, right):
            columns[(name, f"{a} BA")] = (np.arange(n) // 2 < share * n / 2).astype(float)
    return pd.DataFrame(columns)


ATTRS = ("weather", "scene", "timeofday")


def _retrieval(hits_per_group, n_groups: int = 200):
    """A caption result in which the captions of group ``g`` find their image ``hits_per_group(g)``
    times of five (the others point away from it)."""
    rng = np.random.default_rng(0)
    images = rng.standard_normal((n_groups, 32))
    group = np.repeat(np.arange(n_groups), 5)
    queries = images[group].copy()
    for g in range(n_groups):
        queries[5 * g + hits_per_group(g) : 5 * g + 5] *= -1
    return caption_retrieval.evaluate(images, queries, queries, group, dims=(16,))


def _bars(items, retrieval, n_draws=500):
    return chapter.verdicts(items, retrieval, "enc", n_draws=n_draws).set_index("finding")


def test_labels_beyond_pixels_needs_two_attributes_whose_interval_clears_zero():
    caps = _retrieval(lambda g: 3)
    v = _bars(_items((0.9, 0.9, 0.5), (0.5, 0.5, 0.5)), caps)
    assert v.loc["labels beyond pixels", "verdict"] == "holds" and v.loc["labels beyond pixels", "old verdict"] == "yes"
    v = _bars(_items((0.9, 0.5, 0.5), (0.5, 0.5, 0.5)), caps)  # one attribute only: the 2nd interval is [0, 0]
    assert v.loc["labels beyond pixels", "verdict"] == "inconclusive"
    v = _bars(_items((0.9, 0.3, 0.3), (0.5, 0.5, 0.5)), caps)
    assert v.loc["labels beyond pixels", "verdict"] == "contradicted"
    few = _bars(_items((0.6, 0.6, 0.6), (0.5, 0.5, 0.5), n=20), caps)  # a gain on 20 images: not shown
    assert few.loc["labels beyond pixels", "verdict"] == "inconclusive"
    assert few.loc["labels beyond pixels", "old verdict"] == "yes"


@pytest.mark.parametrize(
    "hits, verdict",
    [(lambda g: 3, "holds"), (lambda g: 2, "contradicted"), (lambda g: 5 * (g % 2), "inconclusive")],
)
def test_captions_find_their_image_by_the_interval_of_hit10(hits, verdict):
    v = _bars(_items((0.9, 0.9, 0.9), (0.5, 0.5, 0.5)), _retrieval(hits))
    assert v.loc["captions find their image", "verdict"] == verdict
    assert v.loc["captions find their image", "margin"] == "50%; 100%"


def test_the_result_box_names_the_bars_not_met_with_their_intervals():
    good = chapter.verdicts(_items((0.9, 0.9, 0.9), (0.5, 0.5, 0.5)), _retrieval(lambda g: 3), "enc", n_draws=200)
    bad = chapter.verdicts(_items((0.9, 0.9, 0.9), (0.5, 0.5, 0.5)), _retrieval(lambda g: 2), "enc", n_draws=200)
    table = pd.concat({"a": good, "b": bad}, names=["encoder"]).droplevel(1)
    text = chapter.result(table).html
    assert "<strong>a</strong> meets both bars" in text
    assert (
        "<strong>b</strong>: <em>captions find their image</em> is contradicted (Hit@10 40.00% [40.00, 40.00]" in text
    )
