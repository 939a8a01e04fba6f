"""Releasing the resident pages of memory-mapped rows (embdiag._mapped), measured in /proc/self/smaps."""

from __future__ import annotations


import numpy as np
import pytest

from embdiag._mapped import release_rows, take_rows
from embdiag.metrics.retrieval import topk

ROWS, D = 4096, 512  # 8 MiB of float32


@pytest.fixture
def mapped(tmp_path):
    X = np.random.default_rng(0).standard_normal((ROWS, D)).astype(np.float32)
    np.save(tmp_path / "x.npy", X)
    return X, tmp_path / "x.npy"


def test_released_rows_leave_memory_and_read_back_unchanged(mapped, resident_kib):
    X, path = mapped
    M = np.load(path, mmap_mode="r")
    assert float(M.sum(dtype=np.float64)) == pytest.approx(float(X.sum(dtype=np.float64)))
    assert resident_kib(path) >= 8 * 1024 - 64  # every page was read
    assert release_rows(M, 0, ROWS // 2)
    # at least that half is gone (pages backed by a large folio of the page cache may go together)
    assert resident_kib(path) <= 4 * 1024 + 64
    assert release_rows(np.asarray(M)[ROWS // 2 :], 0, ROWS)  # a view of the map (base chain)
    assert resident_kib(path) <= 8
    np.testing.assert_array_equal(M, X)  # the file's data, read again


def test_only_shared_contiguous_maps_are_released(mapped):
    X, path = mapped
    assert not release_rows(X, 0, 10)  # ordinary memory is never given away
    private = np.load(path, mmap_mode="c")
    private[0, 0] = 123.0
    assert not release_rows(private, 0, 10)  # copy-on-write: the change would be lost
    assert private[0, 0] == 123.0
    M = np.load(path, mmap_mode="r")
    assert not release_rows(M[:, :8], 0, 10)  # not contiguous
    assert not release_rows(M, 5, 5)  # empty
    assert not release_rows(M[np.arange(10)], 0, 10)  # a fancy-indexed copy


def test_topk_over_a_mapped_gallery_keeps_few_pages(mapped, resident_kib):
    X, path = mapped
    M = np.load(path, mmap_mode="r")
    S, I = topk(X[:50], M, 5, chunk_size=256)
    assert resident_kib(path) <= 2 * 256 * D * 4 // 1024 + 8  # at most a chunk per worker, not 8 MiB
    S0, I0 = topk(X[:50], X, 5, chunk_size=256)
    np.testing.assert_array_equal(I, I0)
    np.testing.assert_array_equal(S, S0)


def test_take_rows_gathers_like_fancy_indexing_and_releases(mapped, monkeypatch, resident_kib):
    X, path = mapped
    M = np.load(path, mmap_mode="r")
    monkeypatch.setattr("embdiag._mapped.TAKE_ROWS", 100)  # several batches
    rows = np.random.default_rng(1).permutation(ROWS)[:1000]
    for r in (rows, np.sort(rows), -rows - 1, np.array([5]), np.arange(ROWS)):
        got = take_rows(M, r)
        assert type(got) is np.ndarray and got.dtype == np.float32
        np.testing.assert_array_equal(got, X[r])
        assert resident_kib(path) <= 8  # every batch's span released
    mask = np.zeros(ROWS, bool)
    mask[[1, 7]] = True
    np.testing.assert_array_equal(take_rows(M, mask), X[mask])  # not indices: plain indexing
    np.testing.assert_array_equal(take_rows(X, rows), X[rows])  # ordinary arrays: plain indexing
    assert take_rows(M, np.array([], dtype=np.int64)).shape == (0, D)
    with pytest.raises(IndexError):
        take_rows(M, np.array([0, ROWS]))
