"""The Dataset interface, entry points and chapter figures."""

from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from embdiag.data import Dataset, attribute_frame, concat, load_captions, load_dataset, load_procedural
from embdiag.paper.chapters import data as figures
from embdiag.data.vocab import VOCAB


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    return load_procedural(
        n_train=40, n_val=30, n_pool=10, n_caption=12, image_size=32, root=tmp_path_factory.mktemp("data")
    )


def test_subset_by_name_mask_and_indices(ds):
    val = ds.subset("val")
    assert len(val) == 30 and set(val.split) == {"val"}
    both = ds.subset(["train", "val"])
    assert len(both) == 70
    mask = ds.split == "pool"
    assert np.array_equal(ds.subset(mask).ids, ds.ids[mask])
    idx = np.array([5, 3, 60])
    sub = ds.subset(idx)
    assert np.array_equal(sub.images, ds.images[idx]) and np.array_equal(sub.captions, ds.captions[idx])
    assert list(sub.attributes.index) == list(ds.ids[idx])
    # Instances follow their images.
    for new, old in enumerate(idx):
        a = sub.instances[sub.instances["image"] == new].drop(columns="image").reset_index(drop=True)
        b = ds.instances[ds.instances["image"] == old].drop(columns="image").reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError, match="unknown split"):
        ds.subset("test")


def test_concat_undoes_subset(ds):
    parts = [ds.subset(s) for s in ds.splits]
    back = concat(parts)
    assert np.array_equal(back.images, ds.images) and np.array_equal(back.ids, ds.ids)
    pd.testing.assert_frame_equal(back.instances, ds.instances)
    pd.testing.assert_frame_equal(back.attributes, ds.attributes)
    with pytest.raises(ValueError):
        concat([])


def test_labels_codes_and_class_counts(ds):
    codes, vocab = ds.codes("scene")
    assert vocab == VOCAB["scene"]
    assert np.array_equal(np.asarray(vocab)[codes], ds.labels("scene"))
    cc = ds.class_counts()
    assert set(cc["split"]) == {"train", "val", "pool", "caption"}
    totals = cc.groupby(["attribute", "split"])["count"].sum()
    assert (totals.xs("val", level="split") == 30).all()
    assert np.allclose(cc.groupby(["attribute", "split"])["share"].sum(), 1.0)
    assert len(cc[(cc.attribute == "weather") & (cc.split == "val")]) == len(VOCAB["weather"])  # zeros kept


def test_key_is_stable_and_specific(ds, tmp_path):
    same = load_procedural(n_train=40, n_val=30, n_pool=10, n_caption=12, image_size=32, root=tmp_path)
    assert same.key == ds.key
    assert ds.subset("val").key != ds.key
    other = load_procedural(n_train=40, n_val=30, n_pool=10, n_caption=12, image_size=32, seed=1, root=tmp_path)
    assert other.key != ds.key


def test_dataset_validation():
    ids = np.array(["a", "b"])
    attrs = attribute_frame({"weather": ["clear", "rainy"]}, ids)
    ok = dict(
        ids=ids,
        images=np.zeros((2, 4, 4, 3), np.uint8),
        attributes=attrs,
        split=np.array(["train", "val"]),
        categories=np.zeros((2, 1), bool),
        category_names=("car",),
        source="test",
    )
    Dataset(**ok)
    with pytest.raises(ValueError, match="images has 3 rows"):
        Dataset(**{**ok, "images": np.zeros((3, 4, 4, 3), np.uint8)})
    with pytest.raises(ValueError, match="unknown split"):
        Dataset(**{**ok, "split": np.array(["train", "test"])})
    with pytest.raises(ValueError, match="category names"):
        Dataset(**{**ok, "category_names": ("car", "bus")})
    with pytest.raises(ValueError, match="outside the BDD100K vocabulary"):
        attribute_frame({"weather": ["clear", "sunny"]}, ids)


def test_entry_point_errors():
    with pytest.raises(ValueError, match="source"):
        load_dataset("imagenet")
    with pytest.raises(ValueError, match="captions"):
        load_captions("bdd100k")
    with pytest.raises(TypeError):
        load_dataset("bdd100k")  # paths are required


def test_data_url_round_trip(ds):
    url = figures.to_data_url(ds.images[0])
    assert url.startswith("data:image/png;base64,")
    back = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))
    assert np.array_equal(back, ds.images[0])
    assert figures.to_data_url(ds.images[0], "jpeg").startswith("data:image/jpeg;base64,")
    with pytest.raises(ValueError):
        figures.to_data_url(ds.images[0], "gif")


def test_chapter_figures(ds):
    chart = figures.sample_grid_chart(ds, "weather", per_class=3)
    spec = chart.to_dict()
    assert spec["mark"]["type"] == "image"
    values = next(iter(spec["datasets"].values()))
    assert all(v["url"].startswith("data:image/") for v in values)
    assert all(v["value"] in VOCAB["weather"] for v in values)
    counts = ds.class_counts()
    assert figures.class_count_chart(counts, "scene").to_dict()["mark"]["type"] == "bar"
    wide = figures.count_table(counts)
    assert list(wide.columns) == ["train", "val", "pool", "caption"]
    assert wide.index[0] == ("weather", "clear") and wide.loc[("scene", "tunnel"), "val"] == 0
    caps = figures.caption_table(ds, [0, 1])
    assert len(caps) == 10 and list(caps.columns) == ["id", "caption #", "caption"]
