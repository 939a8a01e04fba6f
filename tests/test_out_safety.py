"""Nothing lost (issue #42): an output folder (``--out``) never holds an input nor the book's own
folders, one run at a time writes it, a full disk is exit 2 naming it with no new folder or
temporary left, and SIGTERM stops a run (its chapter kernel too) leaving what was there before.

Most cases are refused before any kernel starts (the chapter runs are replaced by functions that
fail the test); the SIGTERM tests start one kernel each, on a stand-in chapter that waits.
"""

from __future__ import annotations

import errno
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jupytext
import numpy as np
import papermill
import pytest

from embdiag import exits
from embdiag.paper import cli as paper_cli
from embdiag.paper import pipeline
from embdiag.report import cli

X = np.random.default_rng(0).normal(size=(60, 8)).astype(np.float32)
LABELS = "id,colour\n" + "".join(f"{i},{'red' if i % 2 else 'blue'}\n" for i in range(60))


def _tree(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``, hidden ones and links included: a file's digest, else its kind."""

    def kind(p: Path) -> str:
        if p.is_symlink():
            return f"link to {os.readlink(p)}"
        return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "folder"

    return {p.relative_to(folder).as_posix(): kind(p) for p in sorted(folder.rglob("*"))}


def _must_not_run(*args, **kwargs):
    raise AssertionError("refused before anything runs: nothing may execute")


@pytest.fixture
def no_kernel(monkeypatch):
    monkeypatch.setattr(cli, "write_report", _must_not_run)
    monkeypatch.setattr(pipeline, "execute", _must_not_run)


def _fake_report(options, folder, *, progress=True):
    """A stand-in for the report's measurement: what it saves."""
    Path(folder, "report.json").write_text('{"metrics": []}')


@pytest.fixture
def rep(tmp_path) -> Path:
    """An earlier report folder in which the user also keeps their vectors and labels."""
    folder = tmp_path / "rep"
    folder.mkdir()
    (folder / "report.json").write_text('{"metrics": []}')
    np.save(folder / "vectors.npy", X)
    (folder / "labels.csv").write_text(LABELS)
    np.save(tmp_path / "good.npy", X)
    (tmp_path / "labels.csv").write_text(LABELS)
    return folder


# -- an output folder never holds an input ------------------------------------------------------
def test_a_report_into_the_folder_holding_its_vectors_keeps_them(tmp_path, rep, no_kernel, capsys):
    before = _tree(tmp_path)
    argv = [str(rep / "vectors.npy"), "--labels", str(tmp_path / "labels.csv"), "--out", str(rep)]
    assert cli.main(argv) == exits.BAD_INPUT
    err = capsys.readouterr().err
    assert f"{rep / 'vectors.npy'} (VECTORS): lies inside {rep} (--out), the output folder" in err
    assert _tree(tmp_path) == before


def test_a_report_into_the_folder_holding_its_labels_keeps_them(tmp_path, rep, no_kernel, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = _tree(tmp_path)
    assert cli.main(["good.npy", "--labels", "rep/labels.csv", "--out", "rep"]) == exits.BAD_INPUT
    assert f"rep/labels.csv (--labels): lies inside {rep} (--out)" in capsys.readouterr().err
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("option", ["--compare", "--pairs", "--qrels", "--queries", "--index"])
def test_every_input_option_inside_out_is_refused_naming_it(tmp_path, rep, no_kernel, capsys, option):
    inside = rep / "input.file"
    inside.write_text("the user's\n")
    before = _tree(tmp_path)
    value = f"hnsw;file:{inside}" if option == "--index" else str(inside)
    assert cli.main([str(tmp_path / "good.npy"), option, value, "--out", str(rep)]) == exits.BAD_INPUT
    err = capsys.readouterr().err
    assert f"{inside} ({option}" in err and f"lies inside {rep} (--out)" in err
    assert _tree(tmp_path) == before


def test_links_do_not_hide_an_input_inside_out(tmp_path, rep, no_kernel, capsys):
    (tmp_path / "elsewhere").mkdir()
    np.save(tmp_path / "elsewhere" / "v.npy", X)
    (rep / "linked.npy").symlink_to(tmp_path / "elsewhere" / "v.npy")  # the link is inside --out
    (tmp_path / "alias.npy").symlink_to(rep / "vectors.npy")  # the file it points to is
    (tmp_path / "rep-link").symlink_to(rep)  # --out through a link
    before = _tree(tmp_path)
    for vectors, out in [
        (rep / "linked.npy", rep),
        (tmp_path / "alias.npy", rep),
        (rep / "vectors.npy", tmp_path / "rep-link"),
    ]:
        assert cli.main([str(vectors), "--out", str(out)]) == exits.BAD_INPUT
        assert f"{vectors} (VECTORS): lies inside {rep} (--out)" in capsys.readouterr().err
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("parameter, chapter", [("vectors_path", "rank_diagnostics"), ("data_dir", "stress_tests")])
def test_a_chapter_input_inside_out_is_refused(tmp_path, no_kernel, capsys, monkeypatch, parameter, chapter):
    monkeypatch.chdir(tmp_path)
    pages = tmp_path / "pages"
    pages.mkdir()
    np.save(pages / "v.npy", X)
    value = "pages/v.npy" if parameter == "vectors_path" else "pages"
    before = _tree(tmp_path)
    assert paper_cli.main(["chapter", chapter, "-p", parameter, value, "--no-build", "--out", "pages"]) == 2
    assert f"{value} (-p {parameter}): lies inside {pages} (--out)" in capsys.readouterr().err
    assert _tree(tmp_path) == before


# -- nor the book's own folders -------------------------------------------------------------------
@pytest.mark.parametrize(
    "where, relation",
    [
        ("book/chapters", "lies inside"),
        ("book", "is"),
        ("book/chapters/mine", "lies inside"),
        ("notebooks", "is"),
        ("data/x", "lies inside"),
        (".", "holds"),
    ],
)
def test_every_command_refuses_an_out_in_or_holding_the_books_folders(where, relation, tmp_path, no_kernel, capsys):
    np.save(tmp_path / "v.npy", X)
    out = (pipeline.REPO / where).resolve()
    watched = [pipeline.DEFAULT.chapters, pipeline.REPO / "notebooks", pipeline.REPO, out.parent]
    before = [sorted(os.listdir(f)) for f in watched]
    chapters = {p.name: p.stat().st_mtime_ns for p in pipeline.DEFAULT.chapters.iterdir()}
    for argv in (
        ["report", str(tmp_path / "v.npy"), "--out", str(out)],
        ["chapter", "rank_diagnostics", "-p", "n", "500", "--no-build", "--out", str(out)],
        ["vectors", "--out", str(out)],
    ):
        assert paper_cli.main(argv) == exits.BAD_INPUT, argv
        err = capsys.readouterr().err
        assert f"{out} (--out): {relation} " in err and "a folder of the book and its pipeline" in err, err
    assert [sorted(os.listdir(f)) for f in watched] == before
    assert {p.name: p.stat().st_mtime_ns for p in pipeline.DEFAULT.chapters.iterdir()} == chapters
    assert not (pipeline.REPO / "book" / "chapters" / "mine").exists() and not (pipeline.REPO / "data" / "x").exists()


# -- one writer at a time ---------------------------------------------------------------------
def _holding(out: Path) -> subprocess.Popen:
    """Another process writing ``out``: it holds the folder's lock until killed."""
    code = (
        "import time\nfrom pathlib import Path\nfrom embdiag._atomic import claimed\n"
        f"with claimed(Path({str(out)!r})):\n    print('held', flush=True)\n    time.sleep(300)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_writer_of_one_out_is_refused_naming_the_first(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "write_report", _fake_report)
    monkeypatch.setattr(pipeline, "execute", _must_not_run)
    np.save(tmp_path / "v.npy", X)
    out = tmp_path / "rep"
    holder = _holding(out)
    try:
        before = _tree(tmp_path)
        for argv in (
            ["report", str(tmp_path / "v.npy"), "--out", str(out)],
            ["chapter", "rank_diagnostics", "-p", "n", "300", "--no-build", "--out", str(out)],
            ["vectors", "--out", str(out)],
        ):
            assert paper_cli.main(argv) == exits.BAD_INPUT, argv
            err = capsys.readouterr().err
            assert f"{out} (--out): another embdiag run (pid {holder.pid}) is writing this folder" in err, err
        assert _tree(tmp_path) == before
    finally:
        holder.kill()
        holder.wait()
    # a killed holder leaves its lock file, which stops no one and goes with the next run
    assert any(".tmp-lock" in name for name in os.listdir(tmp_path))
    assert cli.main([str(tmp_path / "v.npy"), "--out", str(out)]) == exits.OK
    assert sorted(os.listdir(tmp_path)) == ["rep", "v.npy"]


def test_vectors_into_a_folder_whose_parent_cannot_be_written_locks_inside_it(tmp_path, monkeypatch, capsys):
    out = tmp_path / "files"
    out.mkdir()
    beside = str(tmp_path / ".files.tmp-lock")
    opened = os.open

    def parent_read_only(path, *args, **kwargs):
        if str(path) == beside:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return opened(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", parent_read_only)
    assert paper_cli.main(["vectors", "--out", str(out)]) == exits.OK, capsys.readouterr().err
    assert sorted(os.listdir(out)) == ["labels.csv", "vectors.npy"] and os.listdir(tmp_path) == ["files"]


# -- a full disk --------------------------------------------------------------------------------
def _full_in_the_kernel(*args, **kwargs):
    """papermill's report of a chapter cell that found the disk full."""
    raise papermill.PapermillExecutionError(2, 3, "", "OSError", "[Errno 28] No space left on device", [])


def test_a_full_disk_while_the_report_is_saved_is_bad_input_naming_out(tmp_path, monkeypatch, capsys):
    from embdiag.report.measurement import Report

    def no_room(self, folder):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Report, "save", no_room)
    np.save(tmp_path / "v.npy", X)
    out = tmp_path / "previous"
    out.mkdir()
    (out / "report.json").write_text("the previous report")
    before = _tree(tmp_path)
    for target in (out, tmp_path / "new" / "rep"):
        assert cli.main([str(tmp_path / "v.npy"), "--out", str(target)]) == exits.BAD_INPUT
        err = capsys.readouterr().err
        assert f"{target} (--out): cannot write: No space left on device" in err and "Traceback" not in err, err
        assert _tree(tmp_path) == before, "a folder or a temporary is left"


def test_a_full_disk_when_the_page_is_written_names_out(tmp_path, monkeypatch, capsys):
    def no_room(options, folder, *, progress=True):  # report.json is written; the page finds no room
        _fake_report(options, folder)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # (a failed write names no file)

    monkeypatch.setattr(cli, "write_report", no_room)
    np.save(tmp_path / "v.npy", X)
    before = _tree(tmp_path)
    assert cli.main([str(tmp_path / "v.npy"), "--out", str(tmp_path / "a" / "rep")]) == exits.BAD_INPUT
    assert f"{tmp_path / 'a' / 'rep'} (--out): cannot write: No space left on device" in capsys.readouterr().err
    assert _tree(tmp_path) == before


def test_a_full_disk_in_a_chapter_kernel_is_bad_input_leaving_no_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(papermill, "execute_notebook", _full_in_the_kernel)
    out = tmp_path / "new" / "pages"
    assert paper_cli.main(["chapter", "rank_diagnostics", "-p", "n", "300", "--no-build", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"cannot write {out}: No space left on device" in err and "Traceback" not in err, err
    assert os.listdir(tmp_path) == []


def test_a_full_disk_in_vectors_leaves_no_folder(tmp_path, monkeypatch, capsys):
    def no_room(writes):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(next(iter(writes))))

    monkeypatch.setattr("embdiag.data.files.write_files", no_room)
    out = tmp_path / "new" / "files"
    assert paper_cli.main(["vectors", "--out", str(out)]) == exits.BAD_INPUT
    assert f"{out} (--out): cannot write (No space left on device)" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


def test_the_kernels_storage_errors_are_read_back():
    assert exits.kernel_storage_error("OSError", "[Errno 28] No space left on device").errno == errno.ENOSPC
    assert exits.kernel_storage_error("PermissionError", "[Errno 13] Permission denied: '/r/a.csv'").filename == (
        "/r/a.csv"
    )
    assert exits.kernel_storage_error("OSError", "100 requested and 40 written") is not None  # numpy's short write
    assert exits.kernel_storage_error("OSError", "[Errno 2] No such file or directory: 'x'") is None
    assert exits.kernel_storage_error("ZeroDivisionError", "division by zero") is None


# -- SIGTERM --------------------------------------------------------------------------------------
def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _terminated_while_it_runs(argv, cwd: Path, env=None, wait_for=lambda: True, kernel: bool = True) -> None:
    """Run ``argv`` in ``cwd``; once its kernel has started (``kernel``) and ``wait_for()`` holds,
    send SIGTERM: exit 143 within seconds, ``cwd`` as it was, the kernel gone."""
    before = _tree(cwd)
    run = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while not ((_children(run.pid) or not kernel) and wait_for()):
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.2)
        kernels = _children(run.pid)
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=90)
    finally:
        run.kill()
    assert run.returncode == exits.TERMINATED, err
    assert "Traceback" not in err, err
    assert _tree(cwd) == before, "a temporary or a new folder is left"
    assert not any(Path("/proc", str(pid)).exists() for pid in kernels), "the chapter kernel still runs"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_during_a_report_leaves_what_was_there(tmp_path):
    np.save(tmp_path / "v.npy", X)
    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "report.json").write_text("the previous report")
    code = (
        "import sys, time\nfrom pathlib import Path\n"
        "from embdiag.report import cli\nfrom embdiag.paper.cli import main\n"
        "def waiting(options, folder, progress=True):\n"
        "    Path(folder, 'report.json').write_text('half')\n    time.sleep(300)\n"
        "cli.write_report = waiting\nsys.exit(main(['report', 'v.npy', '--out', 'rep']))\n"
    )
    half = lambda: any((p / "report.json").exists() for p in tmp_path.glob(".rep.tmp-*"))  # noqa: E731
    _terminated_while_it_runs([sys.executable, "-c", code], tmp_path, wait_for=half, kernel=False)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_during_a_chapter_leaves_what_was_there(tmp_path):
    project = tmp_path / "project"  # a checkout of one chapter that waits
    (project / "notebooks").mkdir(parents=True)
    (project / "_toc.yml").write_text("root: x\n")
    text = '# %% tags=["parameters"]\nseconds = 300\n\n# %%\nimport time\n\ntime.sleep(seconds)\n'
    (project / "notebooks" / "01_wait.py").write_text(
        jupytext.writes(jupytext.reads(text, fmt="py:percent"), "py:percent")
    )
    pipeline.sync("wait", pipeline.Layout(notebooks=project / "notebooks", book=project / "book"))
    work = tmp_path / "work"
    work.mkdir()
    argv = [sys.executable, "-m", "embdiag.paper.cli", "chapter", "wait", "-p", "seconds", "200", "--no-build"]
    env = {**os.environ, "EMBDIAG_ROOT": str(project)}
    _terminated_while_it_runs([*argv, "--out", "pages"], work, env=env)
