"""Embedding cache: keyed by encoder revision, dataset, split, role and dimension; never stale."""

import numpy as np
import pytest

from embdiag.data import load_procedural
from embdiag.encoders import embed, prefix


class CountingEncoder:
    """A deterministic fake encoder that counts its calls."""

    name, dim = "fake", 16

    def __init__(self, revision="r1"):
        self.revision = revision
        self.calls = 0

    def encode_images(self, images, *, batch_size=256, progress=False):
        self.calls += 1
        x = images.reshape(len(images), -1)[:, :16].astype(np.float32) + 1
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    def encode_texts(self, texts, role="query", *, batch_size=256, progress=False):
        self.calls += 1
        x = np.array([[len(t) + i + (role == "query") for i in range(16)] for t in texts], np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return load_procedural(n_train=6, n_val=4, n_pool=2, n_caption=3, image_size=32,
                           root=tmp_path_factory.mktemp("scenes"))


def test_cached_once_then_reused(data, tmp_path):
    enc = CountingEncoder()
    a = embed(enc, data, "val", root=tmp_path)
    b = embed(enc, data, "val", root=tmp_path)
    assert enc.calls == 1 and np.array_equal(a, b) and a.shape == (4, 16)
    t = embed(enc, data, "caption", kind="texts", role="document", root=tmp_path)
    assert t.shape == (15, 16) and enc.calls == 2
    embed(enc, data, "caption", kind="texts", role="query", root=tmp_path)    # another role, another entry
    assert enc.calls == 3


def test_new_revision_or_dimension_recomputes(data, tmp_path):
    embed(CountingEncoder("r1"), data, "val", root=tmp_path)
    enc2 = CountingEncoder("r2")
    embed(enc2, data, "val", root=tmp_path)
    assert enc2.calls == 1
    full = embed(enc2, data, "val", root=tmp_path)
    short = embed(enc2, data, "val", dim=8, root=tmp_path)
    assert enc2.calls == 2 and short.shape == (4, 8)
    np.testing.assert_allclose(short, prefix(full, 8))
    np.testing.assert_allclose(np.linalg.norm(short, axis=1), 1, atol=1e-6)


def test_corrupt_entry_is_detected_and_recomputed(data, tmp_path, capsys):
    enc = CountingEncoder()
    a = embed(enc, data, "train", root=tmp_path)
    [path] = list(tmp_path.rglob("vectors.npy"))
    np.save(path, np.zeros_like(a))
    b = embed(enc, data, "train", root=tmp_path)
    assert enc.calls == 2 and np.array_equal(a, b)
    assert "rebuilding a corrupt cache entry" in capsys.readouterr().err


def test_errors_name_the_argument(data, tmp_path):
    enc = CountingEncoder()
    with pytest.raises(ValueError, match="kind"):
        embed(enc, data, "val", kind="audio", root=tmp_path)
    with pytest.raises(ValueError, match="role"):
        embed(enc, data, "caption", kind="texts", role="passage", root=tmp_path)
    with pytest.raises(ValueError, match="dim"):
        embed(enc, data, "val", dim=17, root=tmp_path)
    with pytest.raises(ValueError, match="split"):
        embed(enc, data.subset("val"), "train", root=tmp_path)
