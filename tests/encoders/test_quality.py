"""The encoder's bars: pooled-pixel baseline, caption hits, verdicts, training card."""

import numpy as np
import pandas as pd
import pytest

from embdiag.encoders import quality
from embdiag.interventions import caption_retrieval


def test_pooled_pixels_average_blocks_and_add_channel_moments():
    img = np.zeros((1, 16, 16, 3), np.uint8)
    img[0, :2, :2, 0] = 255  # one full 2 x 2 block of red
    f = quality.pooled_pixels(img)
    assert f.shape == (1, 8 * 8 * 3 + 6)
    assert f[0, 0] == pytest.approx(1.0) and f[0, 1:192].sum() == pytest.approx(0.0)
    assert f[0, 192] == pytest.approx(4 / 256)  # red channel mean
    with pytest.raises(ValueError, match="divisible by 8"):
        quality.pooled_pixels(np.zeros((1, 12, 12, 3), np.uint8))


def test_caption_table_counts_own_image_hits():
    rng = np.random.default_rng(0)
    images = rng.standard_normal((20, 16))
    images /= np.linalg.norm(images, axis=1, keepdims=True)
    group = np.repeat(np.arange(20), 2)
    queries = images[group].copy()
    queries[1::2] = -queries[1::2]  # every second caption points away from its image
    t = quality.caption_table(caption_retrieval.evaluate(images, queries, queries, group, dims=(8,)))
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
    t = quality.caption_table(result)
    summary = caption_retrieval.summary_table(result)
    assert np.allclose(t["Hit@1"].to_numpy(), 100 * summary["T→I Hit@1"].to_numpy())
    assert np.allclose(t["Hit@10"].to_numpy(), 100 * summary["T→I Hit@10"].to_numpy())
    for dim in (32, 16):
        assert t.loc[dim, "Hit@10"] == pytest.approx(_brute_hits(images, queries, group, dim, 10))
        assert t.loc[dim, "Hit@1"] == pytest.approx(_brute_hits(images, queries, group, dim, 1))
    assert 0 < t.loc[32, "Hit@1"] < t.loc[32, "Hit@10"] < 100
    with pytest.raises(ValueError, match="k = 10"):
        quality.caption_table(caption_retrieval.evaluate(images, queries, documents, group, dims=(16,), k=5))


def _probes(enc):
    return pd.DataFrame({"weather": [50.0, enc[0]], "scene": [60.0, enc[1]], "timeofday": [70.0, enc[2]]},
                        index=["pooled pixels", "enc"])


@pytest.mark.parametrize("enc, hit10, met", [
    ((51, 61, 69), 55.0, [True, True]),
    ((51, 59, 69), 55.0, [False, True]),
    ((51, 61, 69), 49.9, [True, False]),
    ((51, 61, 69), 100.0, [True, False]),
])
def test_verdicts_apply_the_declared_bars(enc, hit10, met):
    caps = pd.DataFrame({"Hit@1": [10.0], "Hit@10": [hit10], "chance Hit@10": [1.0]},
                        index=pd.Index([768], name="dimensions"))
    v = quality.verdicts(_probes(enc), caps, "enc")
    assert v["met"].tolist() == met
    assert v["bar"].tolist() == list(quality.BARS)


def test_card_reads_the_committed_manifest():
    c = quality.card("reference-cnn")
    assert c["image tower"] == "CNN" and len(c["revision"]) == 12
    assert c["command"].startswith("python -m embdiag.encoders.train --arch cnn")


def test_spanned_directions_counts_the_affine_span():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((200, 5)) @ rng.standard_normal((5, 40)) + rng.standard_normal(40)
    assert quality.spanned_directions(Z) == 5
    assert quality.spanned_directions(rng.standard_normal((200, 40))) == 40
