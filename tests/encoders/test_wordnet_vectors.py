"""The WordNet sample's committed WordLlama vectors: what the chapters read, what `embdiag vectors` writes."""

import numpy as np
import pandas as pd
import pytest

from embdiag import artifacts
from embdiag.data.wordnet import DEFAULT_DIR
from embdiag.data.wordnet import Synset
from embdiag.data.wordnet_sample import POS_NAMES, SAMPLE, WordNetSample, committed_sample, sample_wordnet
from embdiag.encoders import vectors as vectors_module
from embdiag.encoders import wordnet as wv
from embdiag.encoders import wordllama as wl
from embdiag.encoders.vectors import caption_vectors, driving_vectors, read_labelled_vectors
from embdiag.encoders.wordnet import PARTS, part_name, regenerate_wordnet, wordnet_caption_vectors, wordnet_vectors
from embdiag.report.cli import export_main

installed = pytest.mark.skipif(
    not (DEFAULT_DIR / "data.noun").is_file(), reason="Debian's wordnet-base is not installed (make test installs it)"
)


def test_the_chapters_read_labelled_glosses():
    v = driving_vectors(wl.NAME, "wordnet")
    assert v.train.shape == (2000, 256) and v.val.shape == (1000, 256) and v.train.dtype == np.float64
    assert v.attributes == ("pos", "lexname") and len(set(v.train_labels["lexname"])) == 45
    assert set(v.val_labels["pos"]) == {"noun", "verb", "adj", "adv"}
    assert "wordllama==0.4.0.post1" in v.source and "2,000 training and 1,000 evaluation glosses" in v.source
    np.testing.assert_allclose(np.linalg.norm(v.val, axis=1), 1, rtol=1e-6)
    for d in (128, 64):
        cut = wordnet_vectors(dim=d)
        assert cut.dim == d and f"{d}-d" in cut.source
        np.testing.assert_allclose(
            cut.val, v.val[:, :d] / np.linalg.norm(v.val[:, :d], axis=1, keepdims=True), rtol=1e-5
        )


def test_the_caption_chapter_reads_glosses_and_their_examples():
    c = caption_vectors(wl.NAME, "wordnet")
    assert c.images.shape == (1000, 256) and c.queries.shape == (3709, 256)
    np.testing.assert_array_equal(c.queries, c.documents)  # one role: the model has no prompts
    assert (np.bincount(c.group, minlength=1000) >= 3).all() and np.all(np.diff(c.group) >= 0)
    assert c.categories.shape[0] == 1000 and (c.categories.sum(axis=1) == 1).all()  # the lexname, one-hot
    sample = committed_sample()
    assert list(c.captions) == list(sample.examples["text"])
    assert wordnet_caption_vectors().source == c.source


def test_only_the_pinned_encoder_has_wordnet_vectors():
    with pytest.raises(ValueError, match="embedded by .*wordllama:l2_supercat"):
        driving_vectors("reference-cnn", "wordnet")


def test_every_part_is_committed_with_the_pinned_revision():
    key = committed_sample().key
    for split, kind in PARTS:
        m = artifacts.manifest(part_name(key, split, kind))
        assert m["params"]["revision"] == wl.revision() and m["params"]["package"] == wl.PACKAGE
        assert m["params"]["files"] == wl.FILES and m["files"]["vectors.npy"]["dtype"] == "float32"


def test_embdiag_vectors_writes_the_labelled_sample(tmp_path, capsys):
    assert export_main(["--encoder", wl.NAME, "--dataset", "wordnet", "--out", str(tmp_path)]) == 0
    Z, labels = np.load(tmp_path / "vectors.npy"), pd.read_csv(tmp_path / "labels.csv")
    assert Z.shape == (3000, 256) and Z.dtype == np.float32
    assert list(labels.columns) == ["id", "split", "pos", "lexname"] and labels["id"].is_unique
    assert labels["split"].value_counts().to_dict() == {"train": 2000, "val": 1000}
    back = read_labelled_vectors(tmp_path / "vectors.npy", tmp_path / "labels.csv")  # the chapters' route
    assert back.attributes == ("pos", "lexname") and back.val.shape == (1000, 256)


@installed
def test_exported_rows_are_wordllamas_embedding_of_wordnets_definition(tmp_path):
    from embdiag.data.wordnet import read_wordnet

    export_main(["--encoder", wl.NAME, "--dataset", "wordnet", "--out", str(tmp_path)])
    Z, labels = np.load(tmp_path / "vectors.npy"), pd.read_csv(tmp_path / "labels.csv")
    synsets = {s.id: s for s in read_wordnet()}
    model = wl.load_wordllama().model
    for row in (0, 1, 1234, 1999, 2000, 2999):
        s = synsets[labels["id"][row]]
        assert (labels["pos"][row], labels["lexname"][row]) == (POS_NAMES[s.pos], s.lexname)
        np.testing.assert_allclose(Z[row], model.embed([s.definition], norm=True)[0], rtol=0, atol=1e-7)


def _small_sample(seed: int) -> WordNetSample:
    """A drawn sample of 40 made-up synsets, declared as the book's draw (what committed_sample checks)."""
    synsets = [
        Synset(
            100 + i,
            "n",
            "n",
            "noun.animal" if i % 2 else "noun.plant",
            (f"w{i}",),
            (0,),
            (),
            (),
            f"a definition of thing {i}",
            tuple(f"thing {i} in use {j}" for j in range(i % 5)),
        )
        for i in range(40)
    ]
    s = sample_wordnet(synsets, {"data.noun": "cd" * 32}, seed=seed, n_train=10, n_val=6, n_retrieval=4)
    return WordNetSample(s.items, s.examples, {**s.params, **SAMPLE})


def test_embdiag_embeddings_regenerates_the_wordnet_parts_and_refuses_another_sample(tmp_path, monkeypatch):
    monkeypatch.setattr(wv, "load_wordnet", lambda data_dir=None: _small_sample(0))
    monkeypatch.setattr(vectors_module, "book_embeddings", lambda root=None: iter(()))  # the reference parts: none
    first = vectors_module.regenerate_book_embeddings(root=tmp_path)
    assert [r.rows for r in first] == [10, 6, 4, len(_small_sample(0).examples)] and all(r.written for r in first)
    got = wordnet_vectors(root=tmp_path)
    texts = list(committed_sample(root=tmp_path).part("train")["definition"])
    np.testing.assert_array_equal(got.train, wl.load_wordllama().encode_texts(texts).astype(np.float64))
    monkeypatch.setattr(wv, "load_wordnet", lambda data_dir=None: _small_sample(1))
    with pytest.raises(artifacts.StaleArtifactError, match="draws another sample .* --write replaces it"):
        regenerate_wordnet(root=tmp_path)
    replaced = regenerate_wordnet(write=True, root=tmp_path)
    assert committed_sample(root=tmp_path).key == _small_sample(1).key and all(r.written for r in replaced)


@installed
@pytest.mark.slow
def test_regenerating_reports_the_distance_to_the_committed_vectors(tmp_path):
    first = regenerate_wordnet(root=tmp_path)
    assert [r.rows for r in first] == [2000, 1000, 1000, 3709] and all(r.written for r in first)
    for r in first:
        np.testing.assert_array_equal(
            artifacts.load(r.name, root=tmp_path)["vectors"], artifacts.load(r.name)["vectors"]
        )  # this machine draws the committed ones
    again = regenerate_wordnet(root=tmp_path)
    assert all(r.identical and r.max_abs == 0 and not r.written for r in again)
