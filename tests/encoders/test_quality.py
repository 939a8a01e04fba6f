"""What an encoder carries beyond its inputs: pooled-pixel baseline, spanned directions, training card."""

import numpy as np
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


def test_card_reads_the_committed_manifest():
    c = quality.card("reference-cnn")
    assert c["image tower"] == "CNN" and len(c["revision"]) == 12
    assert c["command"].startswith("python -m embdiag.encoders.train --arch cnn")


def test_spanned_directions_counts_the_affine_span():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((200, 5)) @ rng.standard_normal((5, 40)) + rng.standard_normal(40)
    assert quality.spanned_directions(Z) == 5
    assert quality.spanned_directions(rng.standard_normal((200, 40))) == 40


def test_probe_table_is_the_balanced_accuracy_of_the_probes_scored_row_by_row():
    from sklearn.metrics import balanced_accuracy_score

    from embdiag.metrics.probe import fit_probes

    rng = np.random.default_rng(0)
    y_train = {"a": rng.choice(["p", "q", "r"], 240), "b": rng.choice(["u", "v"], 240)}
    y_val = {"a": rng.choice(["p", "q", "r"], 120).astype(object), "b": rng.choice(["u", "v"], 120)}
    y_val["a"][:4] = None  # unlabelled rows are not counted
    shift = {"p": 0.0, "q": 1.5, "r": 3.0}
    X = rng.standard_normal((240, 6)) + np.array([shift[c] for c in y_train["a"]])[:, None]
    E = rng.standard_normal((120, 6)) + np.array([shift.get(c, 0.0) for c in y_val["a"]])[:, None]
    items = quality.probe_items({"x": (X, E)}, y_train, y_val)
    assert np.isnan(items[("class", "a")][:4]).all() and np.isnan(items[("x", "a BA")][:4]).all()
    table = quality.probe_table(items)
    probes = fit_probes(X, y_train)
    keep = np.arange(120) >= 4
    for attr in ("a", "b"):
        expected = balanced_accuracy_score(np.asarray(y_val[attr])[keep], probes[attr].predict(E)[keep])
        assert table.loc["x", attr] == pytest.approx(100 * expected, abs=1e-9)
