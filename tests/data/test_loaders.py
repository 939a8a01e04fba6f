"""BDD100K and COCO loaders on tiny fixtures written in the official formats; error messages."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from embdiag.data import (
    DataError,
    DataFileNotFoundError,
    DataFormatError,
    ImageReadError,
    LazyImages,
    load_bdd100k,
    load_captions,
    load_coco,
    load_dataset,
    load_study,
    read_image,
)
from embdiag.data import jsonio
from embdiag.data.vocab import VOCAB

WEATHERS, SCENES, TIMES = VOCAB["weather"], VOCAB["scene"], VOCAB["timeofday"]


def _jpeg(path, rgb, size=(24, 16)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, tuple(int(c) for c in rgb)).save(path, quality=95)


def _bdd_record(i, split):
    labels = [
        {"category": "car", "id": 1, "box2d": {"x1": 1, "y1": 1, "x2": 5, "y2": 5}},
        {"category": "lane", "id": 2, "poly2d": [{"vertices": [[0, 0], [1, 1]]}]},
        {"category": "drivable area", "id": 3, "poly2d": [{"vertices": [[0, 0], [1, 1]]}]},
    ]
    if i % 3 == 0:
        labels.append({"category": "person", "id": 4, "box2d": {"x1": 1, "y1": 1, "x2": 2, "y2": 2}})
    return {
        "name": f"{split}-{i:04d}.jpg",
        "timestamp": 10000,
        "attributes": {"weather": WEATHERS[i % 7], "scene": SCENES[i % 7], "timeofday": TIMES[i % 4]},
        "labels": labels if i % 5 else [],
    }


@pytest.fixture
def bdd(tmp_path):
    root = tmp_path / "bdd100k"
    files = {}
    for split, n in (("train", 30), ("val", 15)):
        recs = [_bdd_record(i, split) for i in range(n)]
        path = root / "labels" / f"bdd100k_labels_images_{split}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(recs, indent=1))
        files[split] = path
        for i, r in enumerate(recs):
            _jpeg(root / "images" / "100k" / split / r["name"], (8 * i, 100, 200 - 5 * i))
    return {
        "train_labels": files["train"],
        "val_labels": files["val"],
        "images_dir": root / "images" / "100k",
        "root": tmp_path / "cache_root",
    }


def test_bdd100k_round_trip(bdd):
    ds = load_bdd100k(**bdd, n_train=20, n_val=10, n_pool=5, seed=0, image_size=16)
    assert [int((ds.split == s).sum()) for s in ("train", "val", "pool")] == [20, 10, 5]
    recs = {r["name"]: r for s in ("train", "val") for r in json.loads(bdd[f"{s}_labels"].read_text())}
    for i, name in enumerate(ds.ids):
        for a in ("weather", "scene", "timeofday"):
            assert ds.attributes.loc[name, a] == recs[name]["attributes"][a]  # undefined kept as a label
        cats = {c for c, on in zip(ds.category_names, ds.categories[i]) if on}
        assert cats == {lab["category"] for lab in recs[name]["labels"] if "box2d" in lab}
    assert "lane" not in ds.category_names and "drivable area" not in ds.category_names
    assert set(ds.ids[ds.split == "train"]).isdisjoint(ds.ids[ds.split == "pool"])
    assert all(n.startswith("val-") for n in ds.ids[ds.split == "val"])
    img = ds.images[np.flatnonzero(ds.ids == "train-0002.jpg")[0]] if "train-0002.jpg" in ds.ids else ds.images[0]
    assert img.shape == (16, 16, 3) and img.dtype == np.uint8
    arr = np.asarray(ds.images)
    assert arr.shape == (35, 16, 16, 3)
    k = int(ds.ids[0].split("-")[1].split(".")[0])
    assert np.abs(arr[0].reshape(-1, 3).mean(0) - [8 * k, 100, 200 - 5 * k]).max() < 6
    assert "BDD100K" in ds.source and str(bdd["images_dir"]) in ds.source
    again = load_dataset("bdd100k", **bdd, n_train=20, n_val=10, n_pool=5, seed=0, image_size=16)
    assert np.array_equal(again.ids, ds.ids) and again.key == ds.key
    other = load_bdd100k(**bdd, n_train=20, n_val=10, seed=1)
    assert not np.array_equal(other.ids[:20], ds.ids[:20])


def test_bdd100k_subset_and_lazy_images(bdd):
    ds = load_bdd100k(**bdd, n_train=10, n_val=5, image_size=16)
    assert isinstance(ds.images, LazyImages)
    val = ds.subset("val")
    assert isinstance(val.images, LazyImages) and len(val.images) == 5
    assert np.array_equal(np.asarray(val.images), np.asarray(ds.images)[ds.split == "val"])


def test_bdd100k_flat_image_folder_and_label_cache(bdd, tmp_path):
    flat = tmp_path / "flat"
    for s in ("train", "val"):
        for p in (bdd["images_dir"] / s).iterdir():
            flat.mkdir(exist_ok=True)
            p.rename(flat / p.name)
    ds = load_bdd100k(**{**bdd, "images_dir": flat}, n_train=5, n_val=5)
    assert len(ds) == 10
    assert len(list((bdd["root"] / "cache").glob("bdd100k-labels-*"))) == 2  # parsed label tables cached
    ds2 = load_bdd100k(**{**bdd, "images_dir": flat}, n_train=5, n_val=5, cache=False)
    assert np.array_equal(ds.ids, ds2.ids) and np.array_equal(ds.categories, ds2.categories)


def test_bdd100k_missing_files(bdd, tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.json"):
        load_bdd100k(**{**bdd, "train_labels": tmp_path / "nope.json"})
    with pytest.raises(DataFileNotFoundError, match="images folder"):
        load_bdd100k(**{**bdd, "images_dir": tmp_path / "missing"})
    (bdd["images_dir"] / "val" / "val-0003.jpg").unlink()
    with pytest.raises(DataFileNotFoundError, match="val-0003.jpg"):
        load_bdd100k(**bdd, n_train=5, n_val=15)


def test_bdd100k_missing_fields(bdd):
    recs = json.loads(bdd["val_labels"].read_text())
    del recs[4]["attributes"]["timeofday"]
    bdd["val_labels"].write_text(json.dumps(recs))
    with pytest.raises(DataFormatError, match=r"bdd100k_labels_images_val\.json.*record 4.*attributes\.timeofday"):
        load_bdd100k(**bdd, n_train=5, n_val=5)
    del recs[4]["attributes"]
    bdd["val_labels"].write_text(json.dumps(recs))
    with pytest.raises(DataFormatError, match="record 4.*'attributes'"):
        load_bdd100k(**bdd, n_train=5, n_val=5)
    recs[4] = {"attributes": {}}
    bdd["val_labels"].write_text(json.dumps(recs))
    with pytest.raises(DataFormatError, match="record 4 has no field 'name'"):
        load_bdd100k(**bdd, n_train=5, n_val=5)
    recs[4] = _bdd_record(4, "val")
    recs[4]["attributes"]["weather"] = "sunny"
    bdd["val_labels"].write_text(json.dumps(recs))
    with pytest.raises(DataFormatError, match="'sunny' is not a BDD100K value"):
        load_bdd100k(**bdd, n_train=5, n_val=5)
    recs[4] = _bdd_record(4, "val")
    bdd["val_labels"].write_text(json.dumps(recs)[:-10])
    with pytest.raises(DataFormatError, match="not valid JSON"):
        load_bdd100k(**bdd, n_train=5, n_val=5)


def test_bdd100k_unreadable_image_and_too_many(bdd):
    (bdd["images_dir"] / "train" / "train-0007.jpg").write_bytes(b"this is not a jpeg")
    with pytest.raises(ImageReadError, match="train-0007.jpg.*cannot read image"):
        load_bdd100k(**bdd, n_train=30, n_val=5)
    ds = load_bdd100k(**bdd, n_train=30, n_val=5, verify_images=False)  # found on access instead
    with pytest.raises(ImageReadError, match="train-0007.jpg"):
        np.asarray(ds.images)
    with pytest.raises(DataError, match="asked for 40 images but the file has 30"):
        load_bdd100k(**bdd, n_train=35, n_pool=5, n_val=5)


# ----------------------------------------------------------------------------------------- COCO


def _coco(tmp_path, n_images=12):
    imgs, caps, inst = [], [], []
    aid = 100
    for k in range(n_images):
        iid = 1000 + 7 * k
        name = f"{iid:012d}.jpg"
        imgs.append({"id": iid, "file_name": name, "height": 16, "width": 24})
        n_caps = 3 if k % 4 == 3 else 5 + k % 3  # some too few, some more than five
        for c in range(n_caps):
            caps.append({"id": aid, "image_id": iid, "caption": f"  Image {iid} caption {c}.\n"})
            aid += 1
        inst.append({"id": aid, "image_id": iid, "category_id": 18 if k % 2 else 1, "bbox": [0, 0, 2, 2]})
        if k % 3 == 0:
            inst.append({"id": aid + 1, "image_id": iid, "category_id": 3, "bbox": [0, 0, 2, 2]})
        aid += 2
        _jpeg(tmp_path / "val2017" / name, (20 * k, 50, 90))
    cats = [
        {"id": 18, "name": "dog", "supercategory": "animal"},
        {"id": 1, "name": "person", "supercategory": "person"},
        {"id": 3, "name": "car", "supercategory": "vehicle"},
    ]
    (tmp_path / "annotations").mkdir(exist_ok=True)
    cj, ij = tmp_path / "annotations" / "captions_val2017.json", tmp_path / "annotations" / "instances_val2017.json"
    cj.write_text(json.dumps({"info": {}, "images": imgs, "annotations": caps}))
    ij.write_text(json.dumps({"info": {}, "images": imgs, "annotations": inst, "categories": cats}))
    return {"captions_json": cj, "instances_json": ij, "images_dir": tmp_path / "val2017"}


def test_coco_round_trip(tmp_path):
    paths = _coco(tmp_path)
    ds = load_coco(**paths, n=8, seed=0, image_size=16)
    doc = json.loads(paths["captions_json"].read_text())
    by_image = {}
    for an in doc["annotations"]:
        by_image.setdefault(an["image_id"], []).append(" ".join(an["caption"].split()))
    assert len(ds) == 8 and set(ds.split) == {"caption"} and ds.captions.shape == (8, 5)
    assert ds.category_names == ("person", "car", "dog")  # ordered by category id
    for i, name in enumerate(ds.ids):
        iid = int(name.split(".")[0])
        assert len(by_image[iid]) >= 5
        assert set(ds.captions[i]) <= set(by_image[iid]) and len(set(ds.captions[i])) == 5
        k = (iid - 1000) // 7
        want = {"dog" if k % 2 else "person"} | ({"car"} if k % 3 == 0 else set())
        assert {c for c, on in zip(ds.category_names, ds.categories[i]) if on} == want
    assert np.asarray(ds.images).shape == (8, 16, 16, 3)
    assert ds.attributes.shape == (8, 0)
    again = load_captions("coco", **paths, n=8, seed=0, image_size=16)
    assert np.array_equal(again.ids, ds.ids) and np.array_equal(again.captions, ds.captions)
    assert "COCO 2017" in ds.source
    with pytest.raises(ValueError, match="no attribute 'weather'"):
        ds.labels("weather")


def test_coco_without_instances(tmp_path):
    paths = _coco(tmp_path)
    ds = load_coco(paths["captions_json"], None, paths["images_dir"], n=3)
    assert ds.categories.shape == (3, 0) and ds.category_names == ()


def test_coco_errors(tmp_path):
    paths = _coco(tmp_path)
    with pytest.raises(DataError, match="only 9 images have 5 or more captions"):
        load_coco(**paths, n=10)
    with pytest.raises(FileNotFoundError, match="missing_captions.json"):
        load_coco(**{**paths, "captions_json": tmp_path / "missing_captions.json"}, n=2)
    doc = json.loads(paths["captions_json"].read_text())
    del doc["annotations"][3]["caption"]
    paths["captions_json"].write_text(json.dumps(doc))
    with pytest.raises(DataFormatError, match=r"captions_val2017\.json: annotations\[3\] has no field 'caption'"):
        load_coco(**paths, n=2)
    del doc["images"]
    paths["captions_json"].write_text(json.dumps(doc))
    with pytest.raises(DataFormatError, match="top level has no field 'images'"):
        load_coco(**paths, n=2)
    paths = _coco(tmp_path)
    inst = json.loads(paths["instances_json"].read_text())
    del inst["categories"][1]["name"]
    paths["instances_json"].write_text(json.dumps(inst))
    with pytest.raises(DataFormatError, match=r"instances_val2017\.json: categories\[1\] has no field 'name'"):
        load_coco(**paths, n=2)


def test_coco_missing_and_unreadable_images(tmp_path):
    paths = _coco(tmp_path)
    ds = load_coco(**paths, n=9)
    victim = paths["images_dir"] / ds.ids[2]
    victim.write_bytes(b"\x89PNG broken")
    with pytest.raises(ImageReadError, match=ds.ids[2]):
        load_coco(**paths, n=9)
    victim.unlink()
    with pytest.raises(DataFileNotFoundError, match=ds.ids[2]):
        load_coco(**paths, n=9)


def test_load_study_switches_to_real_data_by_parameters_only(bdd, tmp_path):
    coco = _coco(tmp_path / "coco")
    driving, groups = load_study(
        "real",
        n_train=20,
        n_val=10,
        n_pool=5,
        n_caption=5,
        image_size=16,
        bdd_train_labels=bdd["train_labels"],
        bdd_val_labels=bdd["val_labels"],
        bdd_images=bdd["images_dir"],
        coco_captions=coco["captions_json"],
        coco_instances=coco["instances_json"],
        coco_images=coco["images_dir"],
        root=bdd["root"],
    )
    assert driving.splits == ("train", "val", "pool") and groups.splits == ("caption",)
    assert driving.source.startswith("BDD100K") and groups.source.startswith("COCO 2017")
    syn_driving, syn_groups = load_study(
        "procedural", n_train=20, n_val=10, n_pool=5, n_caption=5, image_size=32, root=tmp_path / "syn"
    )
    for real, syn in ((driving, syn_driving), (groups, syn_groups)):  # same interface
        assert real.splits == syn.splits and list(real.class_counts().columns) == list(syn.class_counts().columns)
        assert real.images.shape[1:] == (16, 16, 3) and syn.images.dtype == real.images.dtype == np.uint8
    assert groups.captions.shape == syn_groups.captions.shape == (5, 5)
    with pytest.raises(ValueError, match="needs paths for: bdd_val_labels"):
        load_study("real", bdd_train_labels="a", bdd_images="b", coco_captions="c", coco_images="d")
    with pytest.raises(ValueError, match="source"):
        load_study("bdd")


def test_read_image_crops_and_errors(tmp_path):
    im = np.zeros((20, 40, 3), np.uint8)
    im[:, 10:30] = 255  # the central square is white
    Image.fromarray(im).save(tmp_path / "a.png")
    out = read_image(tmp_path / "a.png", 8)
    assert out.shape == (8, 8, 3) and out.min() > 200
    assert read_image(tmp_path / "a.png", 8, crop="resize")[:, 0].max() < 60
    with pytest.raises(DataFileNotFoundError):
        read_image(tmp_path / "b.png", 8)
    with pytest.raises(ValueError, match="crop"):
        read_image(tmp_path / "a.png", 8, crop="zoom")


# ----------------------------------------------------------------------------------------- JSON streaming

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(records=st.lists(json_values, max_size=6), chunk=st.integers(1, 9), indent=st.sampled_from([None, 1]))
def test_streaming_array_reader_matches_json_load(tmp_path_factory, records, chunk, indent):
    path = tmp_path_factory.mktemp("j") / "a.json"
    path.write_text(json.dumps(records, indent=indent))
    old = jsonio._CHUNK
    jsonio._CHUNK = chunk
    try:
        assert list(jsonio.iter_array(path)) == json.loads(path.read_text())
    finally:
        jsonio._CHUNK = old


def test_streaming_array_reader_errors(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"a": 1}')
    with pytest.raises(DataFormatError, match="x.json: expected a JSON array"):
        list(jsonio.iter_array(p))
    p.write_text('[{"a": 1} {"b": 2}]')
    with pytest.raises(DataFormatError, match="x.json"):
        list(jsonio.iter_array(p))
    p.write_text('[{"a": 1}, ')
    with pytest.raises(DataFormatError, match="x.json"):
        list(jsonio.iter_array(p))
