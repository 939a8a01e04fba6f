"""report.json is the same file on every run of the same inputs on one machine and float path,
byte for byte, except ``timings``; moved inputs change only the absolute paths it records."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

N, D = 700, 16  # ivfpq needs 624 rows at d = 16

#: The report chapter's measuring cell (embdiag/report/chapter/21_report.py) without its kernel:
#: the inputs as the chapter reads them, measured and saved.
BUILD = """
from embdiag.report import measure
from embdiag.report.cli import chapter_inputs


def build(folder, out):
    index = "hnsw,ivfpq"
    data, _, files = chapter_inputs(
        f"{folder}/vectors.npy",
        labels_path=f"{folder}/labels.csv",
        compare_path=f"{folder}/other.npy",
        pairs_path=f"{folder}/pairs.csv",
        index=index,
    )
    measure(**data, compress="fp16,int8,pca8", index=index, k=5, progress=False, sources=files).save(out)
"""


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, write_user_files):
    return write_user_files(tmp_path_factory.mktemp("inputs"), N, D)


def _run(folder, out, *, in_process: bool = False) -> str:
    """report.json of a run: in a process of its own (its own string hashes, caches and
    generators), or in this one."""
    if in_process:
        scope = {}
        exec(BUILD, scope)
        scope["build"](folder, out)
    else:
        code = BUILD + "\nimport sys\nbuild(*sys.argv[1:])\n"
        subprocess.run([sys.executable, "-c", code, str(folder), str(out)], check=True)
    return (out / "report.json").read_text(encoding="utf-8")


def _untimed(text: str) -> str:
    """The file up to its last member, ``timings``."""
    head, sep, _ = text.rpartition('\n "timings": ')
    assert sep and list(json.loads(text))[-1] == "timings"
    return head


def test_two_runs_write_the_same_report_json_but_for_timings(inputs, tmp_path):
    first, second = _run(inputs, tmp_path / "a"), _run(inputs, tmp_path / "b")
    assert _untimed(first) == _untimed(second)  # byte for byte
    timings = json.loads(first)["timings"]
    assert {"faiss_threads", "index_builds", "index_searches"} <= set(timings)
    tables = sorted(p.name for p in (tmp_path / "a").glob("*.csv"))
    assert {"identity.csv", "index_curves.csv", "summary.csv"} <= set(tables)
    assert tables == sorted(p.name for p in (tmp_path / "b").glob("*.csv"))
    for name in tables:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name

    moved = tmp_path / "moved"
    shutil.copytree(inputs, moved)
    third = json.loads(_run(moved, tmp_path / "c", in_process=True))
    reference = json.loads(first)
    for option, record in third["inputs"]["files"].items():
        assert record["path"] == str(moved / record["file"])
        record["path"] = reference["inputs"]["files"][option]["path"]
    assert json.dumps({**third, "timings": None}) == json.dumps({**reference, "timings": None})
