"""The declared WordNet sample: seeded, disjoint splits, retrieval synsets rich in examples, params recorded."""

import pytest

from embdiag import artifacts
from embdiag.data.errors import DataError
from embdiag.data.wordnet import DEFAULT_DIR, Synset
from embdiag.data.wordnet_sample import (
    COMMITTED,
    SAMPLE,
    WordNetSample,
    committed_sample,
    load_wordnet,
    sample_wordnet,
    save_sample,
)

DIGESTS = {"data.noun": "ab" * 32}


def _synsets(n=60):
    """Synsets with 0-5 examples, every part of speech and a few lexnames."""
    pos = "nvar"
    return [
        Synset(
            1000 + i,
            pos[i % 4],
            pos[i % 4],
            f"{['noun', 'verb', 'adj', 'adv'][i % 4]}.x{i % 3}",
            (f"w{i}",),
            (0,),
            (),
            (),
            f"definition {i}",
            tuple(f"example {i}.{j}" for j in range(i % 6)),
        )
        for i in range(n)
    ]


def _draw(seed=0, **sizes):
    return sample_wordnet(
        _synsets(), DIGESTS, seed=seed, **{"n_train": 20, "n_val": 10, "n_retrieval": 8, "min_examples": 3, **sizes}
    )


def test_the_sample_is_deterministic_and_seeded():
    a, b, c = _draw(), _draw(), _draw(seed=1)
    assert a.items.equals(b.items) and a.examples.equals(b.examples) and a.key == b.key
    assert not a.items["id"].equals(c.items["id"]) and a.key != c.key


def test_splits_are_disjoint_and_retrieval_synsets_have_their_examples():
    s = _draw()
    assert s.items["split"].value_counts().to_dict() == {"train": 20, "val": 10, "retrieval": 8}
    assert s.items["id"].is_unique
    retrieval = s.part("retrieval")
    counts = s.examples.groupby("id").size()
    assert list(counts.index) == sorted(retrieval["id"]) and (counts >= 3).all()
    assert list(s.examples["id"].drop_duplicates()) == list(retrieval["id"])  # examples in items' order
    for split in ("train", "val", "retrieval"):
        ids = list(s.part(split)["id"])
        assert ids == sorted(ids)  # file order within a split
    row = s.items.iloc[0]
    assert row["pos"] in ("noun", "verb", "adj", "adv") and row["definition"].startswith("definition ")
    assert s.params == {
        "seed": 0,
        "n_train": 20,
        "n_val": 10,
        "n_retrieval": 8,
        "min_examples": 3,
        "database": "WordNet 3.0",
        "sha256": DIGESTS,
    }


def test_a_draw_too_large_is_refused():
    with pytest.raises(DataError, match="cannot give 31 with 3\\+ examples"):  # 30 of the 60 have 3 or more
        _draw(n_retrieval=31)
    with pytest.raises(ValueError, match="n_train"):
        _draw(n_train=-1)


def test_the_sample_round_trips_through_its_artifact(tmp_path):
    drawn = _draw()
    params = {**drawn.params, **SAMPLE}  # the committed sample must carry the declared draw
    s = WordNetSample(drawn.items, drawn.examples, params)
    save_sample(s, root=tmp_path)
    back = committed_sample(root=tmp_path)
    assert back.items.equals(s.items) and back.examples.equals(s.examples) and back.key == s.key
    other = WordNetSample(s.items, s.examples, {**params, "seed": 5})
    save_sample(other, root=tmp_path)
    with pytest.raises(artifacts.StaleArtifactError, match="embdiag embeddings --write"):
        committed_sample(root=tmp_path)


def test_the_committed_sample_is_the_declared_draw():
    s = committed_sample()
    assert {k: s.params[k] for k in SAMPLE} == SAMPLE
    assert s.items["split"].value_counts().to_dict() == {"train": 2000, "val": 1000, "retrieval": 1000}
    assert (s.examples.groupby("id").size() >= 3).all() and len(s.examples) == 3709
    assert set(s.items["pos"]) == {"noun", "verb", "adj", "adv"} and s.items.notna().all().all()
    assert sorted(s.params["sha256"]) == ["data.adj", "data.adv", "data.noun", "data.verb"]
    assert artifacts.manifest(COMMITTED)["command"] == "embdiag embeddings --write"


@pytest.mark.skipif(not (DEFAULT_DIR / "data.noun").is_file(), reason="Debian's wordnet-base is not installed")
def test_the_installed_database_draws_the_committed_sample():
    drawn, committed = load_wordnet(), committed_sample()
    assert drawn.key == committed.key and drawn.params == committed.params
    assert drawn.items.equals(committed.items) and drawn.examples.equals(committed.examples)
