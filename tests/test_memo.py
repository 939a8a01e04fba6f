"""The book's disk memo (``embdiag._memo``): a hit only for the same arguments, code, float path and
packages; a corrupt file is measured again; a memo that cannot be written costs time, not a result."""

from __future__ import annotations

import numpy as np
import pytest

from embdiag import _memo

CALLS = []


@_memo.memo
def heavy(x, *, scale: float = 2.0):
    CALLS.append(1)
    return {"sum": float(np.sum(x)) * scale}


@pytest.fixture(autouse=True)
def memo_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBDIAG_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("EMBDIAG_MEMO", raising=False)
    CALLS.clear()
    return tmp_path / "data" / "cache" / "memo"


def test_same_arguments_hit_other_arguments_miss():
    x = np.arange(5.0)
    assert heavy(x) == heavy(x.copy()) == heavy(x, scale=2.0) == {"sum": 20.0}  # defaults bound: one key
    assert len(CALLS) == 1
    assert heavy(x + 1) == {"sum": 30.0} and heavy(x, scale=3.0) == {"sum": 30.0}
    assert len(CALLS) == 3


def test_a_new_state_is_a_new_key(monkeypatch):
    x = np.arange(3.0)
    heavy(x)
    monkeypatch.setattr(_memo, "state", lambda: "another version of the code")
    heavy(x)
    assert len(CALLS) == 2


def test_the_state_names_code_float_path_and_packages(monkeypatch):
    before = _memo.state()
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", "SSE41 SSE42 AVX AVX2 FMA3")
    assert _memo.state() != before
    assert "numpy=" in before and "torch=" in before and len(before.split("|")[0]) == 64


def test_a_corrupt_file_is_measured_again(memo_folder):
    x = np.arange(4.0)
    heavy(x)
    (kept,) = memo_folder.rglob("*.pkl")
    kept.write_bytes(kept.read_bytes()[:-3] + b"xyz")
    assert heavy(x) == {"sum": 12.0} and len(CALLS) == 2
    assert heavy(x) == {"sum": 12.0} and len(CALLS) == 2  # written again, whole


def test_an_unwritable_memo_returns_the_result(memo_folder):
    memo_folder.parent.mkdir(parents=True)
    memo_folder.write_text("a file where the memo folder would be")
    assert heavy(np.ones(2)) == heavy(np.ones(2)) == {"sum": 4.0}
    assert len(CALLS) == 2


def test_off_turns_it_off(monkeypatch, memo_folder):
    monkeypatch.setenv("EMBDIAG_MEMO", "off")
    heavy(np.ones(2))
    heavy(np.ones(2))
    assert len(CALLS) == 2 and not memo_folder.exists()
