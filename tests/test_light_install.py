"""``pip install embdiag`` (the base dependencies) pulls no model library and no Jupyter (that the report
and verify import none is tests/report/test_wheel.py's check, with every extra blocked)."""

from __future__ import annotations

import importlib.metadata
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from embdiag.paper.pipeline import REPO

#: Distributions of the extras (encoders, train) that the base must not pull, with their top-level modules.
HEAVY = {"torch": "torch", "transformers": "transformers", "wordllama": "wordllama", "pillow": "PIL"}
#: The Jupyter distributions that execute the book's chapters (the book extra), which the base must not pull.
JUPYTER = {"papermill", "ipykernel", "ipython", "nbclient", "nbformat", "jupytext", "jupyter-client"}


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


def test_the_base_install_pulls_no_model_library_and_no_jupyter():
    pulled = closure(PROJECT["dependencies"])
    assert {"numpy", "faiss-cpu", "altair", "markdown-it-py"} <= pulled
    assert not pulled & (set(HEAVY) | JUPYTER), sorted(pulled & (set(HEAVY) | JUPYTER))


def test_the_book_extra_pulls_jupyter():
    assert JUPYTER <= closure(PROJECT["optional-dependencies"]["book"])


def test_the_encoders_extra_pulls_every_model_library():
    """The same walk finds them where they are declared."""
    assert set(HEAVY) <= closure(PROJECT["optional-dependencies"]["encoders"])
