"""Embeddings: committed or cached, keyed by encoder revision, dataset, split and role; never stale."""

import numpy as np
import pytest

from embdiag.data import load_procedural
from embdiag import artifacts
from embdiag.encoders import embed, prefix
from embdiag.encoders.cache import COMMITTED, regenerate


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
    return load_procedural(
        n_train=6, n_val=4, n_pool=2, n_caption=3, image_size=32, root=tmp_path_factory.mktemp("scenes")
    )


def test_cached_once_then_reused(data, tmp_path):
    enc = CountingEncoder()
    a = embed(enc, data, "val", root=tmp_path)
    b = embed(enc, data, "val", root=tmp_path)
    assert enc.calls == 1 and np.array_equal(a, b) and a.shape == (4, 16)
    t = embed(enc, data, "caption", kind="texts", role="document", root=tmp_path)
    assert t.shape == (15, 16) and enc.calls == 2
    embed(enc, data, "caption", kind="texts", role="query", root=tmp_path)  # another role, another entry
    assert enc.calls == 3


def test_new_revision_recomputes_a_prefix_does_not(data, tmp_path):
    embed(CountingEncoder("r1"), data, "val", root=tmp_path)
    enc2 = CountingEncoder("r2")
    embed(enc2, data, "val", root=tmp_path)
    assert enc2.calls == 1
    full = embed(enc2, data, "val", root=tmp_path)
    short = embed(enc2, data, "val", dim=8, root=tmp_path)  # cut from the cached native vectors
    assert enc2.calls == 1 and short.shape == (4, 8)
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


def test_committed_vectors_are_read_before_the_cache(data, tmp_path):
    enc = CountingEncoder()
    first = regenerate(enc, data, "val", root=tmp_path)  # nothing committed: writes it
    assert first.written and not first.identical and np.isnan(first.max_abs) and first.rows == 4
    assert first.name == f"{COMMITTED}/fake/{data.key}-val-images" and enc.calls == 1
    got = embed(enc, data, "val", root=tmp_path)
    assert enc.calls == 1 and not (tmp_path / artifacts.CACHE).exists()  # read, not computed
    np.testing.assert_array_equal(got, artifacts.load(first.name, root=tmp_path)["vectors"])
    np.testing.assert_allclose(embed(enc, data, "val", dim=8, root=tmp_path), prefix(got, 8))
    texts = regenerate(enc, data, "caption", kind="texts", role="document", root=tmp_path)
    assert texts.name.endswith("-caption-texts-document") and texts.rows == 15


class DriftingEncoder(CountingEncoder):
    """The fake encoder on "another machine": its vectors move in the last bits."""

    def encode_images(self, images, *, batch_size=256, progress=False):
        x = super().encode_images(images)
        return x * np.float32(1 + 2**-20)


def test_regenerating_reports_the_distance_and_keeps_the_committed_vectors(data, tmp_path):
    regenerate(CountingEncoder(), data, "train", root=tmp_path)
    committed = embed(CountingEncoder(), data, "train", root=tmp_path).copy()
    same = regenerate(CountingEncoder(), data, "train", root=tmp_path)
    assert same.identical and same.max_abs == 0 and same.max_rel == 0 and not same.written
    moved = regenerate(DriftingEncoder(), data, "train", root=tmp_path)
    assert not moved.identical and not moved.written
    assert 0 < moved.max_abs < 1e-6 and moved.max_rel == pytest.approx(2**-20, rel=0.05)
    np.testing.assert_array_equal(embed(CountingEncoder(), data, "train", root=tmp_path), committed)  # kept
    replaced = regenerate(DriftingEncoder(), data, "train", write=True, root=tmp_path)
    assert replaced.written and not np.array_equal(embed(CountingEncoder(), data, "train", root=tmp_path), committed)


def test_a_committed_entry_of_another_revision_is_not_used(data, tmp_path):
    regenerate(CountingEncoder("r1"), data, "val", root=tmp_path)
    enc = CountingEncoder("r2")
    embed(enc, data, "val", root=tmp_path)
    assert enc.calls == 1 and (tmp_path / artifacts.CACHE / "embeddings").is_dir()  # computed into the cache


def test_a_corrupt_committed_entry_raises(data, tmp_path):
    r = regenerate(CountingEncoder(), data, "val", root=tmp_path)
    path = tmp_path / r.name / "vectors.npy"
    np.save(path, np.zeros((4, 16), np.float32))
    with pytest.raises(artifacts.CorruptArtifactError, match="checksum mismatch"):
        embed(CountingEncoder(), data, "val", root=tmp_path)


def test_the_book_reads_committed_vectors_for_every_entry():
    """Every embedding the chapters read is committed, with a manifest that verifies."""
    from embdiag.encoders.cache import _entry
    from embdiag.encoders.vectors import book_embeddings

    entries = list(book_embeddings())
    assert len(entries) == 10
    for enc, ds, split, kind, role in entries:
        params, name, _ = _entry(enc, ds, split, kind, role or "query")
        vectors = artifacts.load(name, params)["vectors"]
        assert vectors.dtype == np.float32 and vectors.shape == (params["rows"], 768)


def test_the_embeddings_command_says_how_far_and_exits_1_when_it_kept_different_vectors(monkeypatch, capsys):
    from embdiag.encoders import cache, vectors
    from embdiag.paper import cli

    rows = [
        cache.Regenerated("embeddings/a/x-train-images", 4, 0.0, 0.0, True, False),
        cache.Regenerated("embeddings/a/x-val-images", 3, 2.5e-7, 1e-6, False, False),
    ]
    written = [rows[0], cache.Regenerated("embeddings/a/x-val-images", 3, 2.5e-7, 1e-6, False, True)]
    monkeypatch.setattr(vectors, "regenerate_book_embeddings", lambda write, progress: written if write else rows)
    assert cli.main(["embeddings"]) == 1
    out, err = capsys.readouterr()
    assert "embeddings/a/x-train-images (4 rows): identical" in out
    assert "embeddings/a/x-val-images (3 rows): max abs diff 2.5e-07, max rel diff 1e-06" in out
    assert "1 of 2 differ from the committed vectors, which are kept" in err
    assert cli.main(["embeddings", "--write"]) == 0
    assert "max rel diff 1e-06; written" in capsys.readouterr().out
