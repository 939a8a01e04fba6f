"""``pip install embdiag`` (the base dependencies) pulls no model library, and ``embdiag report`` and
``embdiag verify`` import none."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tomllib

import numpy as np
import pandas as pd
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from embdiag.paper.pipeline import REPO

#: Distributions of the extras (encoders, train) that the base must not pull, with their top-level modules.
HEAVY = {"torch": "torch", "transformers": "transformers", "wordllama": "wordllama", "pillow": "PIL"}
#: Loaded first by every Python process (the report's kernel too): importing a heavy module fails.
BLOCKER = f"""
import sys
class _Heavy:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {tuple(HEAVY.values())!r}:
            raise ImportError(f"{{name}}: blocked (an extra, not the base install)")
sys.meta_path.insert(0, _Heavy())
"""


def closure(requirements: list[str]) -> set[str]:
    """Canonical names of ``requirements`` and everything they require, read from the installed metadata."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen or (req.marker and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        todo += [Requirement(r) for r in importlib.metadata.requires(name) or []]
    return seen


PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_the_base_install_pulls_no_model_library():
    pulled = closure(PROJECT["dependencies"])
    assert {"numpy", "faiss-cpu", "papermill", "ipython"} <= pulled
    assert not pulled & set(HEAVY), sorted(pulled & set(HEAVY))


def test_the_encoders_extra_pulls_every_model_library():
    """The same walk finds them where they are declared."""
    assert set(HEAVY) <= closure(PROJECT["optional-dependencies"]["encoders"])


@pytest.mark.slow
def test_report_and_verify_import_no_model_library(tmp_path):
    site, work = tmp_path / "site", tmp_path / "work"
    site.mkdir()
    work.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    rng = np.random.default_rng(0)
    np.save(work / "vectors.npy", rng.normal(size=(120, 16)).astype(np.float32))
    pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], 120)}).to_csv(work / "labels.csv", index=False)
    env = {**os.environ, "PYTHONPATH": str(site)}

    def embdiag(*args: str) -> subprocess.CompletedProcess:
        run = [sys.executable, "-m", "embdiag.paper.cli", *args]
        return subprocess.run(run, cwd=work, env=env, capture_output=True, text=True)

    blocked = subprocess.run([sys.executable, "-c", "import torch"], env=env, capture_output=True, text=True)
    assert "blocked (an extra" in blocked.stderr
    done = embdiag("report", "vectors.npy", "--labels", "labels.csv", "--compress", "fp16", "--index", "", "--out", "r")
    assert done.returncode == 0, done.stderr[-3000:]
    checked = embdiag("verify", "r")
    assert checked.returncode == 0, checked.stderr[-3000:]
