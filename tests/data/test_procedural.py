"""Procedural driving scenes: determinism, vocabulary, splits, class absences, captions, caching."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from embdiag import artifacts
from embdiag.data import (
    ATTRIBUTES,
    DEFAULT_VAL_ABSENT,
    OBJECT_CATEGORIES,
    VOCAB,
    generate_split,
    load_captions,
    load_dataset,
    load_procedural,
)
from embdiag.data.layout import draw_attributes, draw_facts, quota_counts, stream
from embdiag.data.procedural import artifact_name, split_params
from embdiag.data.vocab import DEFAULT_SHARES

SMALL = dict(n_train=60, n_val=40, n_pool=30, n_caption=20, image_size=32)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return load_procedural(**SMALL, root=tmp_path_factory.mktemp("data"))


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_same_seed_gives_identical_bytes():
    a = generate_split("train", 40, image_size=32, seed=3)
    b = generate_split("train", 40, image_size=32, seed=3)
    assert _same(a, b)
    assert a["images"].tobytes() == b["images"].tobytes()


def test_different_seed_differs():
    a = generate_split("train", 40, image_size=32, seed=0)
    b = generate_split("train", 40, image_size=32, seed=1)
    assert not np.array_equal(a["images"], b["images"])
    assert not np.array_equal(a["attributes"], b["attributes"])
    assert not np.array_equal(a["captions_utf8"], b["captions_utf8"])


def test_thread_count_does_not_change_images():
    a = generate_split("pool", 300, image_size=32, workers=1)  # two random blocks
    b = generate_split("pool", 300, image_size=32, workers=2)
    assert _same(a, b)


def test_facts_do_not_depend_on_image_size():
    a = generate_split("val", 30, image_size=32)
    b = generate_split("val", 30, image_size=48)
    assert a["images"].shape == (30, 32, 32, 3) and b["images"].shape == (30, 48, 48, 3)
    for k in ("attributes", "categories", "inst_category", "inst_x", "captions_utf8"):
        assert np.array_equal(a[k], b[k]), k


def test_images_are_uint8_rgb_and_varied(small):
    assert small.images.dtype == np.uint8 and small.images.shape == (150, 32, 32, 3)
    digests = {hashlib.sha256(im.tobytes()).hexdigest() for im in small.images}
    assert len(digests) == len(small)  # no duplicate image anywhere


def test_vocabulary_is_bdd100k_only(small):
    for a in ATTRIBUTES:
        assert set(small.labels(a)) <= set(VOCAB[a])
        assert list(small.attributes[a].cat.categories) == list(VOCAB[a])
    assert small.category_names == OBJECT_CATEGORIES


def test_split_sizes_and_disjointness(small):
    sizes = {s: int((small.split == s).sum()) for s in small.splits}
    assert sizes == {"train": 60, "val": 40, "pool": 30, "caption": 20}
    assert len(set(small.ids)) == len(small)
    for s in small.splits:
        assert all(i.startswith(s + "-") for i in small.ids[small.split == s])


def test_a_split_does_not_depend_on_other_split_sizes(tmp_path):
    a = load_procedural(**{**SMALL, "n_pool": 30}, splits=["train", "pool"], root=tmp_path)
    b = load_procedural(**{**SMALL, "n_pool": 50}, splits=["train", "pool"], root=tmp_path)
    assert np.array_equal(a.subset("train").images, b.subset("train").images)


def test_quota_counts_are_exact():
    counts = quota_counts(DEFAULT_SHARES["weather"], VOCAB["weather"], 983)
    assert counts.sum() == 983
    p = np.array([DEFAULT_SHARES["weather"][c] for c in VOCAB["weather"]])
    assert np.all(np.abs(counts - p / p.sum() * 983) < 1)


def test_default_val_split_lacks_foggy_gas_stations_tunnel():
    val = draw_attributes(stream(0, "val", 0), 983, DEFAULT_SHARES, DEFAULT_VAL_ABSENT)
    train = draw_attributes(stream(0, "train", 0), 2000, DEFAULT_SHARES)
    for j, a in enumerate(ATTRIBUTES):
        names_val = {VOCAB[a][k] for k in val[:, j]}
        names_train = {VOCAB[a][k] for k in train[:, j]}
        assert names_train == set(VOCAB[a])  # every class appears in training
        assert not names_val & set(DEFAULT_VAL_ABSENT)
    # The support floor (>= 10 evaluation samples) matters: some val classes are present but rarer.
    counts = {a: np.bincount(val[:, j], minlength=len(VOCAB[a])) for j, a in enumerate(ATTRIBUTES)}
    thin = [(a, VOCAB[a][k]) for a in ATTRIBUTES for k in range(len(VOCAB[a])) if 0 < counts[a][k] < 10]
    assert ("scene", "parking lot") in thin and ("timeofday", "undefined") in thin
    # Imbalance: clear, city street and daytime dominate.
    for a, top in (("weather", "clear"), ("scene", "city street"), ("timeofday", "daytime")):
        assert VOCAB[a][int(np.argmax(counts[a]))] == top


def test_val_absent_is_a_parameter(tmp_path):
    p = split_params("val", 983, val_absent=())
    assert p["absent"] == []
    assert split_params("train", 10)["absent"] == []  # only the val split drops classes


def test_captions_five_distinct_deterministic(small):
    caps = small.captions
    assert caps.shape == (len(small), 5)
    assert all(len(set(row)) == 5 for row in caps)
    assert all(c.strip() and c[0].isupper() and c.endswith(".") for c in caps.ravel())
    assert not any("undefined" in c for c in caps.ravel())
    again = generate_split("caption", 20, image_size=32)
    from embdiag.data.procedural import _unpack

    assert np.array_equal(
        np.array(_unpack(again["captions_utf8"], again["captions_offsets"])).reshape(20, 5),
        small.subset("caption").captions,
    )


def test_captions_state_only_true_facts(small):
    """Words for a weather or an hour appear only in captions of images that have it."""
    words = {
        "weather": {"rain": "rainy", "snow": "snowy", "fog": "foggy", "overcast": "overcast"},
        "timeofday": {"night": "night", "dark": "night", "dusk": "dawn/dusk", "daylight": "daytime"},
    }
    for a, table in words.items():
        for row, label in zip(small.captions, small.labels(a)):
            text = " ".join(row).lower()
            for word, cls in table.items():
                if word in text:
                    assert label == cls, (word, label, text)


def test_categories_match_instance_table(small):
    inst = small.instances
    assert list(inst.columns) == ["image", "category", "colour", "x", "y", "size", "depth"]
    rebuilt = np.zeros_like(small.categories)
    rebuilt[inst["image"].to_numpy(), inst["category"].cat.codes.to_numpy()] = True
    assert np.array_equal(rebuilt, small.categories)
    assert small.categories[:, OBJECT_CATEGORIES.index("car")].mean() > 0.5
    assert (inst["size"] > 0).all() and inst["y"].between(0.2, 1.05).all()


def test_visible_causes():
    f = generate_split("train", 400, image_size=32, seed=5)
    img = f["images"].astype(np.float32)
    lab = {a: np.asarray(VOCAB[a])[f["attributes"][:, j]] for j, a in enumerate(ATTRIBUTES)}
    bright = img.mean(axis=(1, 2, 3))
    assert bright[lab["timeofday"] == "night"].mean() < 0.75 * bright[lab["timeofday"] == "daytime"].mean()
    top = img[:, :8].mean(axis=(1, 2))  # upper rows: sky
    blue = top[:, 2] - top[:, 0]
    day_clear = (lab["timeofday"] == "daytime") & (lab["weather"] == "clear")
    day_over = (lab["timeofday"] == "daytime") & (lab["weather"] == "overcast")
    assert blue[day_clear].mean() > blue[day_over].mean() + 10  # grey sky when overcast


def test_parameter_validation():
    with pytest.raises(ValueError, match="image_size"):
        generate_split("train", 5, image_size=31)
    with pytest.raises(ValueError, match="image_size"):
        generate_split("train", 5, image_size=225)
    with pytest.raises(ValueError, match="difficulty"):
        generate_split("train", 5, difficulty=1.5)
    with pytest.raises(ValueError, match="n_train"):
        generate_split("train", 0)
    with pytest.raises(ValueError, match="split"):
        generate_split("test", 5)
    with pytest.raises(ValueError, match="seed"):
        generate_split("train", 5, seed=-1)
    with pytest.raises(ValueError, match="splits"):
        load_procedural(splits=["test"])
    with pytest.raises(ValueError, match="vocabulary"):
        split_params("train", 5, shares={**DEFAULT_SHARES, "weather": {"sunny": 1.0}})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"image_size": "big"}, "image_size: expected an integer, got 'big'"),
        ({"image_size": 64.5}, "image_size: expected an integer, got 64.5"),
        ({"image_size": True}, "image_size: expected an integer, got True"),
        ({"difficulty": "hard"}, "difficulty: expected a number, got 'hard'"),
        ({"difficulty": float("nan")}, "difficulty: expected a value in [0, 1], got nan"),
    ],
)
def test_a_parameter_of_the_wrong_type_is_refused_naming_it(kwargs, message):
    with pytest.raises(ValueError) as refused:
        generate_split("train", 5, **kwargs)
    assert str(refused.value) == message


def test_difficulty_changes_pixels_not_labels():
    a = draw_facts(0, "train", 50, difficulty=0.2, shares=DEFAULT_SHARES)
    b = draw_facts(0, "train", 50, difficulty=0.8, shares=DEFAULT_SHARES)
    assert np.array_equal(a["codes"], b["codes"])
    assert not np.allclose(a["brightness"], b["brightness"])


def test_cache_roundtrip_stale_and_corrupt(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EMBDIAG_DATA", str(tmp_path))
    a = load_procedural(**SMALL, splits=["val"])
    p = split_params("val", 40, image_size=32)
    name = artifact_name(p)
    assert (tmp_path / name / "manifest.json").exists() and name.startswith("cache/scenes-val-")
    b = load_procedural(**SMALL, splits=["val"])  # from the cache
    assert np.array_equal(a.images, b.images) and np.array_equal(a.captions, b.captions)
    params = artifacts.manifest(name)["params"]
    assert params["image_size"] == 32 and len(params["code"]) == 16  # generator source digest in the key
    c = load_procedural(**{**SMALL, "difficulty": 0.7}, splits=["val"])  # other parameters, other artifact
    assert not np.array_equal(a.images, c.images)
    (tmp_path / name / "images.npy").write_bytes(b"corrupt")  # a regenerable entry is rebuilt
    d = load_procedural(**SMALL, splits=["val"])
    assert np.array_equal(a.images, d.images)
    assert "rebuilding a corrupt cache entry" in capsys.readouterr().err
    artifacts.load(name, p)  # and is valid again


def test_source_names_the_generator(small):
    assert "procedural" in small.source and "synthetic" in small.source and "seed 0" in small.source


def test_load_entry_points_agree(tmp_path):
    a = load_dataset("procedural", **SMALL, splits=["caption"], root=tmp_path)
    b = load_captions("procedural", n=20, image_size=32, root=tmp_path)
    assert np.array_equal(a.images, b.images) and np.array_equal(a.captions, b.captions)
    assert set(b.split) == {"caption"}


@pytest.mark.slow
def test_default_sizes_full_pipeline(tmp_path):
    ds = load_dataset(splits=["train", "val"], root=tmp_path)
    assert ds.images.shape == (2983, 64, 64, 3)
    assert (ds.split == "train").sum() == 2000 and (ds.split == "val").sum() == 983
    val = ds.subset("val")
    for a in ATTRIBUTES:
        assert not set(val.labels(a)) & set(DEFAULT_VAL_ABSENT)
    assert {"foggy", "gas stations", "tunnel"} <= set(ds.subset("train").labels("weather")) | set(
        ds.subset("train").labels("scene")
    )
