"""The executable paper: paired chapter sources, papermill execution, book build.

A chapter is ``notebooks/NN_name.py`` (jupytext percent format, the source of truth)
paired with ``notebooks/NN_name.ipynb`` (same cells, no outputs) and executed by
papermill into ``book/chapters/NN_name.ipynb``, which the book renders without
executing anything. Execution writes to a temporary file first; a chapter that raises
leaves the book's copy untouched.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Mapping

import jupytext
import nbformat

from dataclasses import dataclass

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Layout:
    """Where chapter sources, their pairs and the executed chapters live."""

    notebooks: Path = REPO / "notebooks"
    book: Path = REPO / "book"

    @property
    def chapters(self) -> Path:
        return self.book / "chapters"


DEFAULT = Layout()
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
#: Cell metadata that must agree between the .py and the .ipynb of a pair.
_PAIRED_META = ("tags",)


class ChapterError(RuntimeError):
    """A chapter is unknown, stale, or failed to execute."""


def chapter_names(layout: Layout = DEFAULT) -> list[str]:
    """Names (``NN_name``) of all chapter sources, in order."""
    return sorted(p.stem for p in layout.notebooks.glob("[0-9][0-9]_*.py"))


def _resolve(name: str, layout: Layout) -> str:
    names = chapter_names(layout)
    if name in names:
        return name
    hits = [n for n in names if n.startswith(name) or n.split("_", 1)[1] == name]
    if len(hits) != 1:
        raise ChapterError(f"unknown chapter {name!r}; chapters are: {', '.join(names)}")
    return hits[0]


def cells(nb, *, ignore_tags=("hide-input",)) -> list[tuple]:
    """(type, source, tags) of each cell, without papermill's injected-parameters cell."""
    return [(c.cell_type, c.source.strip(), tuple(t for t in c.metadata.get("tags", ()) if t not in ignore_tags))
            for c in nb.cells if "injected-parameters" not in c.metadata.get("tags", ())]


def difference(a, b, name_a: str, name_b: str) -> str | None:
    """First difference between two notebooks' cells, in words (None if they agree)."""
    a, b = cells(a), cells(b)
    if a == b:
        return None
    if len(a) != len(b):
        return f"{name_a} has {len(a)} cells, {name_b} has {len(b)}"
    first = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    return f"cell {first} differs between {name_a} and {name_b}"


def stale_reason(name: str, layout: Layout = DEFAULT) -> str | None:
    """Why the ``.ipynb`` of chapter ``name`` is out of sync with its ``.py`` (None if in sync)."""
    name = _resolve(name, layout)
    py, ipynb = layout.notebooks / f"{name}.py", layout.notebooks / f"{name}.ipynb"
    if not ipynb.exists():
        return f"{ipynb.name} is missing (run: embdiag sync)"
    diff = difference(jupytext.read(py), nbformat.read(ipynb, as_version=4), py.name, ipynb.name)
    return diff and f"{diff} (run: embdiag sync)"


def sync(name: str, layout: Layout = DEFAULT) -> Path:
    """Write ``notebooks/name.ipynb`` from ``notebooks/name.py`` (outputs cleared)."""
    name = _resolve(name, layout)
    nb = jupytext.read(layout.notebooks / f"{name}.py")
    nb.metadata.setdefault("kernelspec", KERNELSPEC)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    target = layout.notebooks / f"{name}.ipynb"
    _atomic_write(nb, target)
    return target


def _atomic_write(nb, target: Path) -> None:
    fd, tmp = tempfile.mkstemp(suffix=".ipynb", dir=target.parent)
    os.close(fd)
    try:
        nbformat.write(nb, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _finalize(nb) -> None:
    """Hide code in the book and drop volatile metadata (timestamps, durations)."""
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            tags = cell.metadata.setdefault("tags", [])
            if "hide-input" not in tags:
                tags.append("hide-input")


def execute(name: str, parameters: Mapping | None = None, layout: Layout = DEFAULT) -> Path:
    """Execute chapter ``name`` with papermill into ``book/chapters/``; return its path.

    Raises :class:`ChapterError` if the pair is stale or a cell raises; the
    previously executed chapter is then left as it was.
    """
    import papermill

    name = _resolve(name, layout)
    reason = stale_reason(name, layout)
    if reason:
        raise ChapterError(f"chapter {name} is stale: {reason}")
    out = layout.chapters
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name}.ipynb"
    fd, tmp = tempfile.mkstemp(suffix=".ipynb", dir=out)
    os.close(fd)
    try:
        try:
            papermill.execute_notebook(
                str(layout.notebooks / f"{name}.ipynb"), tmp, parameters=dict(parameters or {}),
                cwd=str(out), kernel_name="python3", progress_bar=False, log_output=False)
        except papermill.PapermillExecutionError as e:
            raise ChapterError(f"chapter {name} failed in cell {e.exec_count}: {e.ename}: {e.evalue}") from None
        nb = nbformat.read(tmp, as_version=4)
        _finalize(nb)
        _atomic_write(nb, target)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return target


def build(*, output: Path | None = None, strict: bool = True, layout: Layout = DEFAULT) -> Path:
    """Build the book with Jupyter Book (warnings are errors when ``strict``); return the HTML folder."""
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(layout.book), "--all"]
    if strict:
        cmd += ["-W", "--keep-going"]
    if output is not None:
        cmd += ["--path-output", str(output)]
    subprocess.run(cmd, check=True, cwd=REPO)
    return (Path(output) if output is not None else layout.book) / "_build" / "html"
