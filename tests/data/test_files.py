"""The readers of a user's files (``embdiag report``, the chapters' ``vectors_path``): every format
round-trips, and every bad input raises an :class:`InputError` whose message starts with the file
and the option and states the problem."""

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import save_file

from embdiag.data import files
from embdiag.data.files import (
    EVAL_NAMES,
    SPLIT_COLUMN,
    InputError,
    check_support,
    parse_split,
    read_labels,
    read_pairs,
    read_vectors,
    split_labels,
)
from embdiag.metrics import hit_at_k

RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 4)).astype(np.float32)


def where(path, name="VECTORS"):
    return re.escape(f"{path} ({name}): ")


def write_parquet(path, columns):
    pq.write_table(pa.table(columns), path)
    return path


# --- vectors: round trips -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_npy_float_is_memory_mapped_without_a_copy(tmp_path, dtype):
    np.save(tmp_path / "x.npy", X.astype(dtype))
    out = read_vectors(tmp_path / "x.npy")
    assert isinstance(out, np.memmap) and out.dtype == dtype and not out.flags.writeable
    np.testing.assert_array_equal(out, X.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.int64, bool])
def test_other_numeric_types_are_upcast_to_float32(tmp_path, dtype):
    data = (np.abs(X) + 1).astype(dtype)
    np.save(tmp_path / "x.npy", data)
    out = read_vectors(tmp_path / "x.npy")
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, data.astype(np.float32))


@pytest.mark.parametrize(
    "arrays, key",
    [
        ({"anything": X}, "anything"),
        ({"vectors": X, "ids": np.arange(6)}, "vectors"),
        ({"embeddings": X, "ids": np.arange(6), "meta": np.zeros(2)}, "embeddings"),
    ],
)
def test_npz_and_safetensors_pick_the_one_array(tmp_path, arrays, key):
    np.savez(tmp_path / "x.npz", **arrays)
    save_file({k: np.ascontiguousarray(v) for k, v in arrays.items()}, str(tmp_path / "x.safetensors"))
    for suffix in ("npz", "safetensors"):
        np.testing.assert_array_equal(read_vectors(tmp_path / f"x.{suffix}"), arrays[key])


@pytest.mark.parametrize(
    "column",
    [
        pa.array(list(X), type=pa.list_(pa.float32())),
        pa.array(list(X), type=pa.list_(pa.float32(), 4)),
        pa.array(list(X.astype(np.float64)), type=pa.large_list(pa.float64())),
    ],
)
def test_parquet_with_one_list_column(tmp_path, column):
    path = write_parquet(tmp_path / "x.parquet", {"id": [f"i{i}" for i in range(6)], "emb": column})
    np.testing.assert_array_equal(read_vectors(path), X)


def test_parquet_with_one_numeric_column_per_dimension(tmp_path):
    path = write_parquet(tmp_path / "x.parquet", {f"d{j}": X[:, j] for j in range(4)} | {"n": np.arange(6)})
    np.testing.assert_array_equal(read_vectors(path), np.column_stack([X, np.arange(6)]))


def _bfloat16_bits(shape, seed=0) -> np.ndarray:
    """Random bfloat16 bit patterns of every sign, exponent (subnormals included) and mantissa, none
    NaN or infinite (exponent bits all ones)."""
    bits = np.random.default_rng(seed).integers(0, 1 << 16, size=shape, dtype=np.uint16)
    return np.where((bits & 0x7F80) == 0x7F80, bits & 0xBFFF, bits).astype(np.uint16)


def _torch_float32(bits: np.ndarray) -> np.ndarray:
    import torch

    return torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16).to(torch.float32).numpy()


def test_bfloat16_safetensors_are_read_as_torch_converts_them_to_float32(tmp_path):
    import torch
    from safetensors.torch import save_file as save_torch

    bits = _bfloat16_bits((50, 8))
    bits[0, :4] = [0x0000, 0x8000, 0x0001, 0x7F7F]  # +0, -0, the smallest subnormal, the largest finite
    tensors = {
        "a_ids": torch.arange(50),  # written first: the vectors' data does not start at offset 0
        "vectors": torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16),
        "z_other": torch.ones(3, 2, dtype=torch.bfloat16),
    }
    save_torch(tensors, str(tmp_path / "x.safetensors"))
    out = read_vectors(tmp_path / "x.safetensors")  # the one named 'vectors', as for every dtype
    assert out.dtype == np.float32 and out.shape == (50, 8)
    np.testing.assert_array_equal(out.view(np.uint32), _torch_float32(bits).view(np.uint32))  # bit for bit
    save_torch({"only": tensors["vectors"]}, str(tmp_path / "one.safetensors"))
    np.testing.assert_array_equal(read_vectors(tmp_path / "one.safetensors"), _torch_float32(bits))


def test_a_hand_written_bfloat16_safetensors_file_is_read_without_torch(tmp_path):
    bits = _bfloat16_bits((6, 4), seed=1)
    header = {
        "__metadata__": {"format": "pt"},
        "embeddings": {"dtype": "BF16", "shape": [6, 4], "data_offsets": [8, 56]},
        "ids": {"dtype": "I64", "shape": [1], "data_offsets": [0, 8]},
    }
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    (tmp_path / "x.safetensors").write_bytes(
        len(text).to_bytes(8, "little") + text + np.int64(7).tobytes() + bits.astype("<u2").tobytes()
    )
    code = (
        "import sys; import numpy as np; from embdiag.data.files import read_vectors; "
        f"X = read_vectors({str(tmp_path / 'x.safetensors')!r}); "
        "assert 'torch' not in sys.modules; np.save(sys.argv[1], X)"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "out.npy")], check=True)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy").view(np.uint32), _torch_float32(bits).view(np.uint32))


def test_the_readers_write_nothing(tmp_path):
    np.save(tmp_path / "x.npy", X)
    np.savez(tmp_path / "x.npz", X)
    save_file({"vectors": X}, str(tmp_path / "x.safetensors"))
    write_parquet(tmp_path / "x.parquet", {"emb": pa.array(list(X))})
    pd.DataFrame({"a": list("xxxyyy")}).to_csv(tmp_path / "l.csv", index=False)
    pd.DataFrame({"query": range(6), "target": range(6)}).to_csv(tmp_path / "p.csv", index=False)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    for suffix in ("npy", "npz", "safetensors", "parquet"):
        read_vectors(tmp_path / f"x.{suffix}")
    read_labels(tmp_path / "l.csv", 6)
    read_pairs(tmp_path / "p.csv", 6, 6)
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()} == before


# --- vectors: errors ------------------------------------------------------------------------------

#: (file, expected problem), one per check of :func:`read_vectors`; the files are made by :func:`make_bad_files`.
BAD_VECTOR_FILES = [
    ("missing.npy", r"no such file$"),
    ("dir.npy", r"not a file$"),
    ("x.txt", r"unsupported file type '\.txt'; supported: \.npy, \.npz, \.parquet, \.safetensors$"),
    ("garbage.npy", r"cannot read as \.npy \(ValueError: .+\)$"),
    ("objects.npy", r"cannot read as \.npy \(ValueError: Array can't be memory-mapped: Python objects in dtype\.\)$"),
    ("one_d.npy", r"expected a 2-D array, got shape \(5,\)$"),
    ("three_d.npy", r"expected a 2-D array, got shape \(2, 2, 2\)$"),
    ("strings.npy", r"expected a numeric array, got dtype <U1$"),
    ("one_row.npy", r"needs at least 2 row\(s\), got 1$"),
    ("two.npz", r"expected one array, or one named 'vectors' or 'embeddings'; found 'a', 'b'$"),
    ("both.npz", r"expected one array, .*; found 'vectors', 'embeddings'$"),
    ("two.safetensors", r"expected one tensor, or one named 'vectors' or 'embeddings'; found 'a', 'b'$"),
    (
        "mixed.parquet",
        r"expected one list column of floats, or only numeric columns \(one per dimension\); "
        r"found 'a' \(double\), 'b' \(string\)$",
    ),
    ("lists.parquet", r"expected one list column .*; found 'a' \(list<element: double>\), 'b' \(list"),
    ("strlist.parquet", r"list column 'a' holds string, not numbers$"),
    ("ragged.parquet", r"list column 'a' has rows of different lengths \(2 at index 0, 1 at index 2\)$"),
    ("null.parquet", r"list column 'a' has 2 empty \(null\) row\(s\) \(first at index 1\)$"),
]


def make_bad_files(tmp_path):
    (tmp_path / "dir.npy").mkdir()
    (tmp_path / "x.txt").write_text("1 2\n")
    (tmp_path / "garbage.npy").write_bytes(b"not an npy file")
    np.save(tmp_path / "one_d.npy", np.ones(5))
    np.save(tmp_path / "three_d.npy", np.ones((2, 2, 2)))
    np.save(tmp_path / "strings.npy", np.array([["a", "b"], ["c", "d"]]))
    np.save(tmp_path / "objects.npy", np.array([[1, None]] * 2, dtype=object), allow_pickle=True)
    np.save(tmp_path / "one_row.npy", np.ones((1, 3)))
    np.savez(tmp_path / "two.npz", a=X, b=X)
    np.savez(tmp_path / "both.npz", vectors=X, embeddings=X)
    save_file({"a": X, "b": X}, str(tmp_path / "two.safetensors"))
    write_parquet(tmp_path / "mixed.parquet", {"a": [1.0, 2.0], "b": ["x", "y"]})
    write_parquet(tmp_path / "lists.parquet", {"a": [[1.0], [2.0]], "b": [[1.0], [2.0]]})
    write_parquet(tmp_path / "strlist.parquet", {"a": [["x"], ["y"]]})
    write_parquet(tmp_path / "ragged.parquet", {"a": [[1.0, 2.0], [1.0, 2.0], [3.0]]})
    write_parquet(tmp_path / "null.parquet", {"a": [[1.0, 2.0], None, [1.0, 2.0], None]})


@pytest.mark.parametrize("file, problem", BAD_VECTOR_FILES)
def test_every_bad_vector_file_is_named_with_its_problem(tmp_path, file, problem):
    make_bad_files(tmp_path)
    path = tmp_path / file
    with pytest.raises(InputError, match="^" + where(path, "--compare") + problem):
        read_vectors(path, "--compare")


def test_an_input_error_is_a_value_error():
    assert issubclass(InputError, ValueError)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 100])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nonfinite_rows_across_chunk_boundaries(tmp_path, monkeypatch, chunk, value):
    monkeypatch.setattr(files, "SCAN_ROWS", chunk)
    data = np.ones((11, 3), np.float32)
    data[[4, 5, 9], [0, 2, 1]] = value
    data[7] = 0  # a zero row too: non-finite rows are reported first
    np.save(tmp_path / "x.npy", data)
    path = tmp_path / "x.npy"
    with pytest.raises(
        InputError,
        match="^" + where(path) + r"contains NaN or infinite values "
        r"\(3 bad row\(s\), first at index 4\)$",
    ):
        read_vectors(path)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 40), chunk=st.integers(1, 12), data=st.data())
def test_the_first_bad_and_zero_row_is_found_whatever_the_chunking(tmp_path_factory, n, chunk, data):
    bad = data.draw(st.sets(st.integers(0, n - 1), max_size=n))
    zero = data.draw(st.sets(st.integers(0, n - 1), max_size=n)) - bad
    Z = np.ones((n, 2))
    Z[sorted(bad), data.draw(st.sampled_from([0, 1]))] = np.nan
    Z[sorted(zero)] = 0
    path = tmp_path_factory.mktemp("scan") / "x.npy"
    np.save(path, Z)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(files, "SCAN_ROWS", chunk)
        if bad:
            message = rf"contains NaN or infinite values \({len(bad)} bad row\(s\), first at index {min(bad)}\)$"
        elif zero:
            message = rf"{len(zero)} zero-norm row\(s\) \(first at index {min(zero)}\); cosine is undefined$"
        else:
            assert isinstance(read_vectors(path), np.memmap)
            return
        with pytest.raises(InputError, match="^" + where(path) + message):
            read_vectors(path)


def test_the_scan_reads_at_most_scan_rows_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "SCAN_ROWS", 4)
    seen, isfinite = [], np.isfinite
    monkeypatch.setattr(np, "isfinite", lambda a: seen.append(a.shape) or isfinite(a))
    np.save(tmp_path / "x.npy", np.ones((10, 3), np.float32))
    assert isinstance(read_vectors(tmp_path / "x.npy"), np.memmap)
    assert seen == [(4, 3), (4, 3), (2, 3)]


def test_nan_values_in_parquet_are_found(tmp_path):
    path = write_parquet(tmp_path / "x.parquet", {"a": [1.0, 2.0, None, 4.0], "b": [1.0, 1.0, 1.0, np.nan]})
    with pytest.raises(InputError, match=r"\(2 bad row\(s\), first at index 2\)$"):
        read_vectors(path)


# --- labels ---------------------------------------------------------------------------------------


def test_labels_csv_with_ids_round_trips_as_strings(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("colour,id,size\nred,a,1\nNA,b,2\nred,c,1\nNA,d,2\n")
    out = read_labels(path, 4)
    assert list(out.columns) == ["colour", "size"] and list(out.index) == ["a", "b", "c", "d"]
    assert out.index.name == "id" and out.loc["b", "colour"] == "NA" and out.loc["d", "size"] == "2"


def test_labels_parquet_without_ids(tmp_path):
    path = write_parquet(tmp_path / "labels.parquet", {"kind": ["x", "y", "x"], "n": [1, 2, 2]})
    out = read_labels(path, 3)
    assert out.to_dict("list") == {"kind": ["x", "y", "x"], "n": ["1", "2", "2"]}
    assert list(out.index) == [0, 1, 2]


@pytest.mark.parametrize(
    "text, n, problem",
    [
        ("a\nx\ny\n", 3, r"has 2 row\(s\), expected 3 \(one per vector\)$"),
        ("a,b\nx,1\ny,\nx,\n", 3, r"column 'b' has 2 missing value\(s\) \(first at row 1\)$"),
        ("a,b\nx,1\ny,1\n", 2, r"column 'b' has a single class \('1'\); nothing to tell apart$"),
        ("id,a\n1,x\n2,y\n1,x\n", 3, r"column 'id' has 1 duplicate\(s\) \(first: '1'\)$"),
        ("id\n1\n2\n", 2, r"no attribute column besides 'id'$"),
        ("", 2, r"cannot read as \.csv \(EmptyDataError: .+\)$"),
    ],
)
def test_bad_labels_are_named_with_their_problem(tmp_path, text, n, problem):
    path = tmp_path / "labels.csv"
    path.write_text(text)
    with pytest.raises(InputError, match="^" + where(path, "--labels") + problem):
        read_labels(path, n)


def test_labels_of_another_type_are_refused(tmp_path):
    (tmp_path / "labels.json").write_text("{}")
    with pytest.raises(InputError, match=r"unsupported file type '\.json'; supported: \.csv, \.parquet$"):
        read_labels(tmp_path / "labels.json", 2)


def test_check_support_returns_the_rare_classes_without_raising():
    labels = pd.DataFrame({"a": list("xxxxyyyz"), "b": list("pppqqqqq")})
    assert check_support(labels, min_per_class=3) == {"a": {"z": 1}}
    assert check_support(labels, min_per_class=4) == {"a": {"y": 3, "z": 1}, "b": {"p": 3}}
    assert check_support(labels, min_per_class=1) == {}
    with pytest.raises(ValueError, match=r"^min_per_class: must be at least 1, got 0$"):
        check_support(labels, min_per_class=0)


# --- pairs ----------------------------------------------------------------------------------------


def test_pairs_by_index_feed_hit_at_k(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("target,query,note\n2,0,x\n1,0,x\n2,0,dup\n0, 1,x\n3,2,x\n")
    positives = read_pairs(path, 3, 4)
    assert [p.tolist() for p in positives] == [[1, 2], [0], [3]]
    assert all(p.dtype == np.int64 for p in positives)
    assert hit_at_k(np.array([[2, 3], [1, 2], [0, 3]]), positives) == pytest.approx(2 / 3)


def test_pairs_by_id_and_missing_queries_when_allowed(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("query,target\nq2,g0\nq0,g1\nq2,g1\n")
    positives, queries = read_pairs(
        path, 3, 2, query_ids=["q0", "q1", "q2"], target_ids=["g0", "g1"], allow_missing=True
    )
    assert queries.tolist() == [0, 2] and [p.tolist() for p in positives] == [[1], [0, 1]]
    with pytest.raises(
        InputError, match="^" + where(path, "--pairs") + r"1 of 3 queries have no positive \(first: query 'q1'\)$"
    ):
        read_pairs(path, 3, 2, query_ids=["q0", "q1", "q2"], target_ids=["g0", "g1"])


@pytest.mark.parametrize(
    "text, kwargs, problem",
    [
        ("q,target\n0,1\n", {}, r"missing column\(s\) 'query'; found 'q', 'target'$"),
        ("query,target\n", {}, r"no pairs$"),
        ("query,target\n0,1\n1,\n", {}, r"column 'target' has 1 missing value\(s\) \(first at row 1\)$"),
        (
            "query,target\n0,1\n1,x\n2,1.0\n",
            {},
            r"column 'target' holds 2 value\(s\) that are not integer row "
            r"indices \(first: 'x' at row 1\)$",
        ),
        ("query,target\n0,1\n3,1\n-1,0\n", {}, r"2 query index\(es\) out of range 0\.\.2 \(first: 3 at row 1\)$"),
        ("query,target\n0,1\n1,0\n", {}, r"1 of 3 queries have no positive \(first: query index 2\)$"),
        (
            "query,target\n0,a\n1,z\n2,y\n",
            {"target_ids": ["a", "b"]},
            r"2 unknown target id\(s\) \(first: 'z' at row 1\)$",
        ),
        ("query,target\n0,a\n", {"target_ids": ["a", "a"]}, r"2 target id\(s\) given \(1 distinct\) for 2 row\(s\)$"),
    ],
)
def test_bad_pairs_are_named_with_their_problem(tmp_path, text, kwargs, problem):
    path = tmp_path / "pairs.csv"
    path.write_text(text)
    with pytest.raises(InputError, match="^" + where(path, "--pairs") + problem):
        read_pairs(path, 3, 2, **kwargs)


def test_file_records_later_is_file_record_and_carries_errors(tmp_path):
    import hashlib

    from embdiag.data.files import file_record, file_records_later

    (tmp_path / "a.bin").write_bytes(b"embdiag" * 100_000)
    later = file_records_later({"VECTORS": tmp_path / "a.bin"})
    assert later.result(timeout=60) == {"VECTORS": file_record(tmp_path / "a.bin")}
    assert later.result()["VECTORS"]["sha256"] == hashlib.sha256(b"embdiag" * 100_000).hexdigest()
    with pytest.raises(FileNotFoundError):
        file_records_later({"VECTORS": tmp_path / "missing.bin"}).result(timeout=60)


# --- missing labels and the split column (issue #25, points 4 and 8) ----------------------------------


def test_missing_labels_are_kept_as_none_when_allowed(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("digit,parity,split\n1,odd,train\n,even,val\n2,,Train\n1,odd,TEST\n")
    out = read_labels(path, 4, allow_missing=True)
    assert out["digit"].tolist() == ["1", None, "2", "1"] and out["parity"].tolist() == ["odd", "even", None, "odd"]
    assert out["split"].tolist() == ["train", "val", "Train", "TEST"]  # returned as read; split_labels parses it
    with pytest.raises(InputError, match=r"column 'digit' has 1 missing value\(s\) \(first at row 1\)$"):
        read_labels(path, 4)  # by default (the chapters' route) a missing value is still refused


@pytest.mark.parametrize(
    "text, problem",
    [
        ("a,b\nx,\ny,\n", r"column 'b' has no value \(all 2 missing\)$"),
        ("a,b\nx,1\ny,\nz,1\n", r"column 'b' has a single class \('1'\); nothing to tell apart$"),
        ("a,split\nx,train\ny,\n", r"column 'split' has 1 missing value\(s\) \(first at row 1\)$"),
    ],
)
def test_missing_labels_that_leave_nothing_to_tell_apart_are_refused(tmp_path, text, problem):
    path = tmp_path / "labels.csv"
    path.write_text(text)
    with pytest.raises(InputError, match="^" + where(path, "--labels") + problem):
        read_labels(path, text.count("\n") - 1, allow_missing=True)


def test_split_labels_parses_and_removes_the_split_column():
    labels = pd.DataFrame({"digit": list("1212"), "split": ["train", " Val", "TEST", "train"]})
    attributes, is_train = split_labels(labels, "l.csv (--labels)")
    assert list(attributes.columns) == ["digit"] and is_train.tolist() == [True, False, False, True]
    assert split_labels(labels[["digit"]], "x")[1] is None
    assert SPLIT_COLUMN == "split" and EVAL_NAMES == ("val", "eval", "evaluation", "test")
    with pytest.raises(InputError, match=r"^l.csv \(--labels\): unknown split names \['holdout'\]; use 'train' or one"):
        split_labels(labels.assign(split=["train", "holdout", "val", "train"]), "l.csv (--labels)")
    with pytest.raises(InputError, match=r"^x: the evaluation split has 1 rows; at least 2 are needed$"):
        parse_split(["train", "train", "val"], "x")
    with pytest.raises(InputError, match=r"^x: no attribute column besides 'split'$"):
        split_labels(labels[["split"]], "x")


# --- qrels (issue #26) ------------------------------------------------------------------------------


def test_qrels_are_read_per_query_with_ids_or_indices(tmp_path):
    from embdiag.data.files import read_qrels

    path = tmp_path / "qrels.csv"
    path.write_text("query,document,grade,note\na,x,2,ok\na,y,0,\nc,x,1,\n")
    assert read_qrels(path, 3, 2, query_ids=["a", "b", "c"], document_ids=["x", "y"]) == [{0: 2, 1: 0}, {}, {0: 1}]
    path.write_text("query,document,grade\n2,0,1\n0,1,3\n")
    assert read_qrels(path, 3, 2) == [{1: 3}, {}, {0: 1}]


@pytest.mark.parametrize(
    "text, message",
    [
        ("query,document\n0,1\n", "missing column\\(s\\) 'grade'"),
        ("query,document,grade\n", "no judgments"),
        ("query,document,grade\n0,1,1.5\n", "column 'grade' holds 1 value\\(s\\) that are not non-negative integers"),
        ("query,document,grade\n0,1,-1\n", "column 'grade' holds 1 value"),
        ("query,document,grade\n0,1,1\n0,1,2\n", "query 0 judges document 1 twice \\(again at row 1\\)"),
        ("query,document,grade\n0,1,0\n", "no relevant judgment \\(every grade is 0\\)"),
        ("query,document,grade\n0,9,1\n", "1 document index\\(es\\) out of range 0..3"),
        ("query,document,grade\n0,,1\n", "missing"),
    ],
)
def test_bad_qrels_are_refused_naming_the_file_and_the_problem(tmp_path, text, message):
    from embdiag.data.files import read_qrels

    path = tmp_path / "q.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as refused:
        read_qrels(path, 2, 4)
    assert "--qrels" in str(refused.value)
