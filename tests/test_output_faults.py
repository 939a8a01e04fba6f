"""Output folders that cannot be written (issue #30): a read-only folder (simulated by
tests/faults/sitecustomize.py, an audit hook that fails every write under it with EROFS, as root
would not be stopped by permissions) and a full disk (a real one: ``RLIMIT_FSIZE``, so a write
past 20 kB fails with EFBIG or a short write; past 4 kB, inside the report chapter's kernel).
Every command that writes gives exit 2 with one line naming the problem and the folder and no
traceback, keeps what the folder held, and leaves no temporary and no folder it made."""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from embdiag import exits
from embdiag.paper import pipeline

FAULTS = Path(__file__).parent / "faults"
FULL_BYTES = 20_000
#: Room for a small report's tables but not its report.json (about 9 kB), which the kernel writes.
KERNEL_FULL_BYTES = 4_000


def _run(argv: list[str], fault: str, folder: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(FAULTS)}
    if fault == "read-only":
        env["EMBDIAG_READONLY"] = str(folder)

    def limit():
        if fault.startswith("full"):
            room = KERNEL_FULL_BYTES if fault == "full in the kernel" else FULL_BYTES
            resource.setrlimit(resource.RLIMIT_FSIZE, (room, room))

    return subprocess.run(
        [sys.executable, "-m", "embdiag.paper.cli", *argv],
        env=env,
        preexec_fn=limit,
        capture_output=True,
        text=True,
        cwd=pipeline.REPO,
        timeout=900,
    )


def _state(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with its digest, and every hidden temporary (an empty folder
    made on the way, e.g. train's ``cache``, is no half-written output)."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(folder.rglob("*"))
        if p.is_file() or ".tmp-" in p.name or ".old-" in p.name
    }


def _refused_keeping(folder: Path, argv: list[str], fault: str) -> str:
    before = _state(folder)
    done = _run(argv, fault, folder)
    assert done.returncode == exits.BAD_INPUT, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert _state(folder) == before, "a refused write changed the folder (or left a temporary in it)"
    return done.stderr


@pytest.fixture
def vectors(tmp_path) -> Path:
    path = tmp_path / "v.npy"
    np.save(path, np.random.default_rng(0).normal(size=(300, 16)).astype(np.float32))
    return path


def _previous(folder: Path, *names: str) -> None:
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_text(f"the previous {name}\n")


@pytest.mark.parametrize("fault", ["read-only", "full", "full in the kernel"])
def test_report(tmp_path, vectors, fault):
    where = tmp_path / "reports"
    _previous(where / "out", "report.html", "report.json")
    said = _refused_keeping(
        where,
        ["report", str(vectors), "--quick", "--compress", "fp16", "--index", "", "--out", str(where / "out")],
        fault,
    )
    assert f"{where / 'out'} (--out): cannot write" in said, said
    assert "Read-only file system" in said or "File too large" in said, said


@pytest.mark.parametrize("fault", ["read-only", "full"])
@pytest.mark.parametrize("new", [False, True], ids=["existing", "new"])
def test_vectors(tmp_path, fault, new):
    where = tmp_path / "files"
    _previous(where, "vectors.npy", "labels.csv")
    out = where / "new" / "files" if new else where
    said = _refused_keeping(where, ["vectors", "--out", str(out)], fault)
    assert f"{out} (--out): cannot write" in said and "what was there is unchanged" in said, said
    assert not (where / "new").exists(), "a folder made for the files is left"


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["read-only", "full"])
def test_chapter(tmp_path, fault):
    where = tmp_path / "pages"
    _previous(where / "out", "20_rank_diagnostics.ipynb")
    said = _refused_keeping(where, ["chapter", "rank_diagnostics", "--no-build", "--out", str(where / "out")], fault)
    assert f"cannot write {where / 'out'}: " in said, said


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["read-only", "full"])
def test_train(tmp_path, fault):
    where = tmp_path / "runs"
    _previous(where, "previous.json")
    said = _refused_keeping(
        where,
        [
            "train",
            "--profile",
            "tiny",
            "--conditions",
            "EMA reference",
            "--seeds",
            "0",
            "--steps",
            "2",
            "--workers",
            "1",
            "--root",
            str(where),
        ],
        fault,
    )
    assert "cannot write" in said, said


@pytest.mark.slow
def test_book_build_folder_read_only():
    build = pipeline.DEFAULT.book / "_build"
    build.mkdir(exist_ok=True)
    said = _refused_keeping(build, ["book", "--no-execute"], "read-only")
    assert f"cannot write {build}: Read-only file system" in said, said


def test_the_simulated_read_only_folder_refuses_every_kind_of_write(tmp_path):
    """The simulation itself: each way of writing under the folder fails with EROFS, reading does not."""
    (tmp_path / "kept").write_text("x")
    probe = (
        "import os, shutil, pathlib, numpy as np, errno\n"
        f"d = pathlib.Path({str(tmp_path)!r})\n"
        "assert (d / 'kept').read_text() == 'x'\n"
        "for write in (lambda: open(d / 'a', 'w'), lambda: os.open(d / 'b', os.O_WRONLY | os.O_CREAT),"
        " lambda: os.mkdir(d / 'c'), lambda: os.replace(d / 'kept', d / 'moved'), lambda: os.remove(d / 'kept'),"
        " lambda: np.save(d / 'e.npy', np.zeros(3)), lambda: shutil.rmtree(d)):\n"
        "    try:\n        write()\n    except OSError as e:\n        assert e.errno == errno.EROFS, e\n"
        "    else:\n        raise SystemExit('written')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(FAULTS), "EMBDIAG_READONLY": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]
