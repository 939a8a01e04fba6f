"""The chapters' inputs: a user's vectors and labels, or an encoder's cached embeddings."""

import numpy as np
import pandas as pd
import pytest

from embdiag.data.files import InputError
from embdiag.encoders.vectors import caption_vectors, driving_vectors, read_labelled_vectors


def _write(tmp_path, Z, frame):
    v, l = tmp_path / "vectors.npy", tmp_path / "labels.csv"
    np.save(v, Z)
    frame.to_csv(l, index=False)
    return v, l


def _frame(n_train=6, n_val=4):
    return pd.DataFrame(
        {"split": ["train"] * n_train + ["val"] * n_val, "weather": (["clear", "rainy"] * 10)[: n_train + n_val]}
    )


def test_user_files_are_split_by_the_split_column(tmp_path):
    Z = np.arange(40, dtype=float).reshape(10, 4)
    v, l = _write(tmp_path, Z, _frame())
    got = read_labelled_vectors(v, l)
    np.testing.assert_array_equal(got.train, Z[:6])
    np.testing.assert_array_equal(got.val, Z[6:])
    assert got.attributes == ("weather",)
    assert list(got.val_labels["weather"]) == ["clear", "rainy"] * 2
    assert "vectors.npy" in got.source and "6 training and 4 evaluation rows" in got.source
    assert driving_vectors(vectors_path=v, labels_path=l).source == got.source


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda Z, f: (Z[:-1], f), "labels.csv (labels_path): has 10 row(s), expected 9 (one per vector)"),
        (lambda Z, f: (Z, f.rename(columns={"split": "part"})), "labels.csv (labels_path): no 'split' column"),
        (lambda Z, f: (Z, f.assign(split=["train"] * 6 + ["holdout"] * 4)), "unknown split names ['holdout']"),
        (lambda Z, f: (Z, f[["split"]]), "no attribute column besides 'split'"),
        (
            lambda Z, f: (Z, f.assign(split=[""] + list(f.split[1:]))),  # a missing label is allowed, not a split
            "labels.csv (labels_path): column 'split' has 1 missing value(s) (first at row 0)",
        ),
        (lambda Z, f: (Z, f.assign(split=["train"] * 9 + ["val"])), "the evaluation split has 1 rows"),
        (
            lambda Z, f: (np.where(np.arange(40).reshape(10, 4) == 5, np.nan, Z), f),
            "vectors.npy (vectors_path): contains NaN or infinite values (1 bad row(s), first at index 1)",
        ),
        (
            lambda Z, f: ((Z + 1) * 1e200, f),  # finite float64, whose squares overflow
            "vectors.npy (vectors_path): largest magnitude 4e+201 is outside [2^-500, 2^500]",
        ),
        (lambda Z, f: ((Z + 1) * 1e-200, f), "vectors.npy (vectors_path): largest magnitude 4e-199 is outside"),
    ],
)
def test_bad_user_files_are_named(tmp_path, change, message):
    Z, f = change(np.arange(40, dtype=float).reshape(10, 4), _frame())
    v, l = _write(tmp_path, Z, f)
    with pytest.raises(InputError) as e:  # a ValueError
        read_labelled_vectors(v, l)
    assert message in str(e.value)


def test_user_files_in_other_formats(tmp_path):
    Z = np.arange(40, dtype=np.float32).reshape(10, 4) + 1
    np.savez(tmp_path / "v.npz", embeddings=Z)
    _frame().to_parquet(tmp_path / "l.parquet")
    got = read_labelled_vectors(tmp_path / "v.npz", tmp_path / "l.parquet")
    np.testing.assert_array_equal(got.train, Z[:6].astype(np.float64))
    assert got.train.dtype == np.float64 and list(got.train_labels["weather"]) == ["clear", "rainy"] * 3


def test_vectors_and_labels_come_together(tmp_path):
    with pytest.raises(ValueError, match="give both"):
        driving_vectors(vectors_path=tmp_path / "v.npy")


def test_unknown_datasets_are_named():
    with pytest.raises(ValueError, match="dataset: expected one of"):
        driving_vectors(dataset="imagenet")
    with pytest.raises(ValueError, match="dataset: expected one of"):
        caption_vectors(dataset="bdd100k")
    with pytest.raises(ValueError, match="needs the folder"):
        driving_vectors(dataset="bdd100k")


@pytest.mark.slow
def test_reference_encoder_vectors_are_unit_rows_with_study_labels():
    v = driving_vectors("reference-cnn")
    assert v.train.shape == (2000, 768) and v.val.shape == (983, 768)
    np.testing.assert_allclose(np.linalg.norm(v.val, axis=1), 1, atol=1e-5)
    assert v.attributes == ("weather", "scene", "timeofday")
    c = caption_vectors("reference-cnn")
    assert c.images.shape == (1000, 768) and c.queries.shape == c.documents.shape == (5000, 768)
    np.testing.assert_array_equal(c.group[:6], [0, 0, 0, 0, 0, 1])
    assert not np.allclose(c.queries, c.documents)  # the role prompts change the text vectors
    assert "reference-cnn" in c.source and "procedural" in c.source


def _npz(tmp_path, **arrays):
    path = tmp_path / "captions.npz"
    np.savez(path, **arrays)
    return path


def test_user_caption_vectors_default_documents_to_queries(tmp_path):
    rng = np.random.default_rng(0)
    images, queries = rng.standard_normal((3, 4)), rng.standard_normal((6, 4))
    got = caption_vectors(vectors_path=_npz(tmp_path, images=images, queries=queries, group=np.repeat(np.arange(3), 2)))
    np.testing.assert_array_equal(got.documents, queries)
    assert got.categories.shape == (3, 0) and "3 images and 6 captions" in got.source


@pytest.mark.parametrize(
    "arrays, message",
    [
        (dict(images=np.ones((2, 4)), group=np.array([0, 1])), "no array 'queries'"),
        (dict(images=np.ones((2, 4)), queries=np.ones((2, 3)), group=np.array([0, 1])), "queries: 3 columns"),
        (dict(images=np.ones((2, 4)), queries=np.ones((2, 4)), group=np.array([0, 2])), "must lie in 0..1"),
        (dict(images=np.ones((3, 4)), queries=np.ones((2, 4)), group=np.array([0, 1])), "1 images have no caption"),
        (
            dict(images=np.ones((2, 4)), queries=np.ones((2, 4)), group=np.array([0.0, 1.0])),
            "group: expected 2 integers",
        ),
        (
            dict(images=np.ones((2, 4)), queries=np.ones((2, 4)), documents=np.ones((3, 4)), group=np.array([0, 1])),
            "documents: 3 rows",
        ),
    ],
)
def test_bad_user_caption_vectors_are_named(tmp_path, arrays, message):
    with pytest.raises(ValueError) as e:
        caption_vectors(vectors_path=_npz(tmp_path, **arrays))
    assert message in str(e.value)


def test_a_users_missing_labels_leave_the_row_out_for_that_attribute_only(tmp_path):
    from embdiag.encoders.vectors import read_labelled_vectors

    Z = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
    np.save(tmp_path / "v.npy", Z)
    (tmp_path / "l.csv").write_text(
        "split,digit,parity\n"
        + "".join(f"{'train' if i < 5 else 'test'},{'' if i == 2 else i % 3},{i % 2}\n" for i in range(8))
    )
    v = read_labelled_vectors(tmp_path / "v.npy", tmp_path / "l.csv")
    assert v.train_labels["digit"][2] is None and list(v.train_labels["parity"]) == ["0", "1", "0", "1", "0"]
    assert "digit missing on 1 rows, left out for digit" in v.source
    (tmp_path / "l.csv").write_text("split,digit\n" + "train,\n" * 4 + "test,\n" * 4)
    with pytest.raises(ValueError, match="digit"):
        read_labelled_vectors(tmp_path / "v.npy", tmp_path / "l.csv")
