"""Captions that identify their image: true facts, rare duplicates, unchanged images."""

from __future__ import annotations

import hashlib
import random
import re

import numpy as np
import pytest

from embdiag.data import generate_split
from embdiag.data.captions import NOUNS, caption_statistics, describe, names_object
from embdiag.data.procedural import _unpack

#: SHA-256 of every non-caption array of two splits, computed with generator v1 before captions changed.
V1_DIGESTS = {
    ("caption", 1000): "51addd35c560be60114bdf9e99f836b8c848459f5d79c25eaac8d7faeac13d7e",
    ("train", 200): "819f2efe816dd2139077342e75ae5aa4262a2f06af80f8d08358216a45ee0bb8",
}


def _digest(arrays: dict) -> str:
    h = hashlib.sha256()
    for k in sorted(arrays):
        if not k.startswith("captions"):
            h.update(k.encode())
            h.update(np.ascontiguousarray(arrays[k]).tobytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def caption_split():
    return generate_split("caption", 1000, image_size=32, workers=1)


def _captions(a: dict) -> np.ndarray:
    return np.array(_unpack(a["captions_utf8"], a["captions_offsets"])).reshape(-1, 5)


def test_images_and_labels_unchanged_since_v1(caption_split):
    assert _digest(caption_split) == V1_DIGESTS[("caption", 1000)]
    assert _digest(generate_split("train", 200, image_size=32, workers=1)) == V1_DIGESTS[("train", 200)]


def test_captions_identify_their_images(caption_split):
    caps = _captions(caption_split)
    stats = caption_statistics(caps)
    assert stats["n_captions"] == 5000
    assert stats["distinct"] > 0.99  # v1: 0.497
    assert stats["shared_with_other_image"] < 0.01  # v1: 0.60
    empty = np.bincount(caption_split["inst_image"], minlength=len(caps)) == 0
    assert stats["no_object"] == pytest.approx(empty.mean())  # only empty scenes name no object (v1: 0.55)
    assert all(names_object(c) for row in caps[~empty] for c in row)


def test_every_caption_states_its_own_scene():
    objects = [
        ("car", "red", 0.2, 0.9),
        ("car", "white", 0.7, 0.5),
        ("pedestrian", "blue", 0.9, 0.8),
        ("traffic light", "green", 0.8, 0.6),
    ]
    absent = re.compile(
        r"\b("
        + "|".join(w for c in ("truck", "bus", "cyclist", "traffic sign") for pair in NOUNS[c] for w in pair)
        + r")\b"
    )
    for seed in range(20):
        caps = describe("rainy", "highway", "night", objects, random.Random(seed))
        assert len(set(caps)) == 5
        for c in caps:
            low = c.lower()
            assert any(w in low for w in ("highway", "freeway", "motorway")), c
            assert any(w in low for w in ("rain", "night", "after dark")), c
            assert names_object(c) and not absent.search(low), c
            assert "undefined" not in low and c[0].isupper() and c.endswith(".")


def test_empty_and_undefined_scenes_still_get_five_captions():
    caps = describe("undefined", "undefined", "undefined", [], random.Random(0))
    assert len(set(caps)) == 5 and not any(names_object(c) or "undefined" in c for c in caps)


def test_caption_statistics_counts_duplicates_and_checks_shape():
    stats = caption_statistics([["A car.", "A road."], ["A car.", "Rain."]])
    assert stats == {"n_captions": 4, "distinct": 0.75, "shared_with_other_image": 0.5, "no_object": 0.5}
    with pytest.raises(ValueError, match="captions"):
        caption_statistics(["A car."])
