"""The encoder's bars: pooled-pixel baseline, caption hits, verdicts, training card."""

import numpy as np
import pandas as pd
import pytest

from embdiag.encoders import quality


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
    t = quality.caption_table(images, queries, group, dims=(None, 8))
    assert t["Hit@1"].iloc[0] == pytest.approx(50.0)
    assert t["Hit@10"].iloc[0] == pytest.approx(50.0)
    assert t["chance Hit@10"].iloc[0] == pytest.approx(50.0)
    assert t["dimensions"].tolist() == [16, 8]


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
    caps = pd.DataFrame({"dimensions": [768], "Hit@1": [10.0], "Hit@10": [hit10], "chance Hit@10": [1.0]})
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
