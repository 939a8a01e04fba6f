"""``embdiag report`` from the built wheel, outside any checkout: the report chapter and the
stylesheet travel as package data, and nothing is read from the source tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from embdiag.paper.pipeline import REPO

#: Top-level modules of the optional extras (encoders, train, book, cluster, test): a plain install
#: has none of them.
EXTRAS = (
    "torch",
    "transformers",
    "wordllama",
    "PIL",
    "IPython",
    "ipykernel",
    "jupyter_client",
    "papermill",
    "nbclient",
    "nbformat",
    "jupytext",
    "jupyter_book",
    "sphinx",
    "myst_nb",
    "sphinx_mathjax_offline",
    "ghp_import",
    "ray",
    "pytest",
    "nbval",
    "hypothesis",
    "selenium",
    "mutmut",
)
#: Loaded first by every Python process: importing an extra fails.
BLOCKER = f"""
import sys
class _Extras:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {EXTRAS!r}:
            raise ImportError(f"{{name}}: not installed by a plain pip install of the wheel")
sys.meta_path.insert(0, _Extras())
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from a copy of the sources (the checkout gets no build folders)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    shutil.copytree(REPO / "embdiag", src / "embdiag", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(out),
            str(src),
        ],
        check=True,
        cwd=src,
    )
    return next(out.glob("embdiag-*.whl"))


def test_the_wheel_carries_the_report_chapter_and_the_stylesheet(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "embdiag/report/chapter/21_report.py",
        "embdiag/report/report.schema.json",
        "embdiag/static/embdiag.css",
    } <= names
    assert not any(n.startswith(("notebooks/", "book/", "data/", "tests/")) for n in names)


@pytest.mark.slow
def test_report_runs_from_the_wheel_outside_a_checkout(wheel, tmp_path):
    """With the base dependencies only: every module of an optional extra (the model libraries and
    Jupyter included) refuses to import; the report is measured and written in the command's own
    process; verify runs too."""
    site, work = tmp_path / "site", tmp_path / "work"
    zipfile.ZipFile(wheel).extractall(site)
    (site / "sitecustomize.py").write_text(BLOCKER)
    work.mkdir()
    rng = np.random.default_rng(0)
    np.save(work / "vectors.npy", rng.normal(size=(120, 16)).astype(np.float32))
    pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], 120)}).to_csv(work / "labels.csv", index=False)
    env = {k: v for k, v in os.environ.items() if k not in ("EMBDIAG_ROOT", "EMBDIAG_DATA")}
    env["PYTHONPATH"] = str(site)
    where = subprocess.run(
        [sys.executable, "-c", "import embdiag; print(embdiag.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(site)  # the wheel's package, not the checkout's
    blocked = subprocess.run([sys.executable, "-c", "import ray"], cwd=work, env=env, capture_output=True, text=True)
    assert "not installed by a plain pip install" in blocked.stderr
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "embdiag.paper.cli",
            "report",
            "vectors.npy",
            "--labels",
            "labels.csv",
            "--compress",
            "fp16",
            "--index",
            "",
            "--out",
            "report",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    page = (work / "report" / "report.html").read_text(encoding="utf-8")
    assert "<title>embdiag report: vectors.npy</title>" in page and ".embdiag-max" in page  # the page, styled
    assert "Distribution: geometry without labels" in page
    assert (work / "report" / "report.json").is_file()
    assert sorted(p.name for p in work.iterdir()) == ["labels.csv", "report", "vectors.npy"]
    checked = subprocess.run(
        [sys.executable, "-m", "embdiag.paper.cli", "verify", "report"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr[-3000:]
