"""Faults that lose nothing (issue #30): ``embdiag report`` and ``embdiag chapter --out`` killed
with SIGKILL at a moment spread over their run leave their output folder holding the previous
output or the whole new one (never part of one, never neither) and the committed book as it was;
what a killed run leaves is at most a hidden temporary beside its folder (.gitignore lists it)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from embdiag.paper import pipeline

pytestmark = pytest.mark.slow

#: When the kill comes, as a share of a whole run's duration.
MOMENTS = (0.05, 0.3, 0.6, 0.85, 0.97)


def _files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _embdiag(*args: str) -> list[str]:
    return [sys.executable, "-m", "embdiag.paper.cli", *args]


def _timed(argv, cwd) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def _killed(argv, cwd, after: float) -> None:
    run = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(after)
    run.send_signal(signal.SIGKILL)
    run.wait()


def _only_hidden_temporaries_beside(folder: Path, before: set[str]) -> None:
    new = {p.name for p in folder.parent.iterdir()} - before
    assert all(n.startswith(f".{folder.name}.") and (".tmp-" in n or ".old-" in n) for n in new), new


@pytest.fixture
def book_state():
    chapters = pipeline.DEFAULT.chapters
    before = _files(chapters)
    yield
    assert _files(chapters) == before, "a killed run changed the committed book"


def test_a_killed_report_leaves_the_previous_report_or_the_whole_new_one(tmp_path, book_state):
    X = np.random.default_rng(0).normal(size=(400, 16)).astype(np.float32)
    np.save(tmp_path / "v.npy", X)
    out = tmp_path / "report"
    duration = _timed(_embdiag("report", "v.npy", "--compress", "fp16", "--out", "report"), tmp_path)
    previous = _files(out)
    again = _embdiag("report", "v.npy", "--compress", "int8", "--out", "report")
    beside = {p.name for p in tmp_path.iterdir()}
    for moment in MOMENTS:
        _killed(again, tmp_path, moment * duration)
        now = _files(out)
        assert now == previous or (set(now) == set(previous) and "int8" in (out / "report.json").read_text()), moment
        _only_hidden_temporaries_beside(out, beside)
        previous = now


def test_a_killed_chapter_leaves_its_page_as_it_was_or_whole(tmp_path, book_state):
    argv = _embdiag("chapter", "rank_diagnostics", "-p", "n", "300", "--out", "pages")
    duration = _timed(argv, tmp_path)
    out = tmp_path / "pages"
    previous = _files(out)
    beside = {p.name for p in tmp_path.iterdir()}
    for moment in MOMENTS:
        seed = ["-p", "seed", str(int(moment * 100))]
        _killed([*argv, *seed], tmp_path, moment * duration)
        now = _files(out)
        assert set(now) == set(previous), moment  # both files, and nothing half-written beside them
        for name in now:
            assert (out / name).read_bytes().rstrip().endswith(b"}" if name.endswith(".ipynb") else b"</html>")
        _only_hidden_temporaries_beside(out, beside)
        previous = now
    assert not any(p.name.startswith(".") for p in out.iterdir()), "a temporary inside the output folder"
    assert os.listdir(out)
