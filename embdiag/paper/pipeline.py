"""The executable paper: paired chapter sources, papermill execution, book build.

A chapter is ``notebooks/NN_name.py`` (jupytext percent format, the source of truth)
paired with ``notebooks/NN_name.ipynb`` (same cells, no outputs) and executed by
papermill into ``book/chapters/NN_name.ipynb``, which the book renders without
executing anything. Parameters are checked against the chapter's parameters cell before
anything runs; execution writes to a temporary file first, so a chapter that raises
leaves the book's copy untouched; and the executed notebook is normalised (cell ids,
table ids, no timestamps) so that re-executing an unchanged chapter reproduces it byte
for byte. A *variant* re-executes a chapter with other parameters into an output of its
own name (``notebooks/variants.yml``), e.g. a chapter on a second encoder: the book holds none
(its comparison page reads the same measurements), so a variant is executed into a folder of
one's own, beside its offline page (``embdiag chapter VARIANT --out DIR``).
The kernel is told which chapter source it runs, and with which non-default parameters
(:data:`~embdiag.view.exhibits.CHAPTER_ENV`, :data:`~embdiag.view.exhibits.PARAMETERS_ENV`), so
that its exhibits can name their source. A chapter that declares the parameter :data:`PROGRESS`
reports its long steps on stderr when it is true; the kernel's stderr is then streamed to ours
while the chapter runs.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import jupytext
import nbformat

from .._atomic import workspace, write_file, write_files
from ..exits import is_storage_error, kernel_storage_error, storage_error_at
from .kernel import run_notebook
from .._project import project_root

if TYPE_CHECKING:
    import pandas as pd

REPO = project_root()


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


class ChapterError(RuntimeError):
    """A chapter is stale, failed to execute, or was given bad input (:class:`ChapterInputError`)."""


class ChapterInputError(ChapterError):
    """Bad input: an unknown chapter or parameter, a value of the wrong type, a missing file, or a
    cell that refused its input (raised :data:`INPUT_ERRORS`)."""


#: A chapter's parameter that says how it reports while it runs, never what it measures: when true,
#: the kernel's stderr (the chapter's progress lines) is streamed to ours, and the page's provenance
#: does not name it.
PROGRESS = "progress"

#: Exceptions a chapter's cell raises when its input is bad (the library's contract for bad input).
INPUT_ERRORS = ("InputError", "ValueError", "FileNotFoundError", "NotADirectoryError")


def chapter_names(layout: Layout = DEFAULT) -> list[str]:
    """Names (``NN_name``) of all chapter sources, in order."""
    if not layout.notebooks.is_dir():
        raise ChapterError(
            f"no chapter sources: {layout.notebooks} is not a folder "
            "(run from the embdiag checkout, or set EMBDIAG_ROOT to it)"
        )
    return sorted(p.stem for p in layout.notebooks.glob("[0-9][0-9]_*.py"))


def variants(layout: Layout = DEFAULT) -> dict[str, dict]:
    """Declared variants, ``{output name: {"chapter": NN_name, "parameters": {...}}}`` in file order."""
    path = layout.notebooks / "variants.yml"
    if not path.exists():
        return {}
    import yaml

    declared = yaml.safe_load(path.read_text()) or {}
    names = set(chapter_names(layout))
    for out, spec in declared.items():
        if not isinstance(spec, dict) or set(spec) - {"chapter", "parameters"} or "chapter" not in spec:
            raise ChapterError(f"{path.name}: variant {out!r} needs 'chapter' and optional 'parameters', got {spec!r}")
        if out in names:
            raise ChapterError(f"{path.name}: variant {out!r} has the name of a chapter source")
        spec.setdefault("parameters", {})
    return declared


def _resolve(name: str, layout: Layout) -> str:
    names = chapter_names(layout)
    if name in names:
        return name
    hits = [n for n in names if n.startswith(name) or n.split("_", 1)[1] == name]
    if len(hits) != 1:
        raise ChapterInputError(f"unknown chapter {name!r}; chapters are: {', '.join(names)}")
    return hits[0]


def cells(nb, *, ignore_tags=("hide-input", "remove-input")) -> list[tuple]:
    """(type, source, tags) of each cell, without papermill's injected-parameters cell."""
    return [
        (c.cell_type, c.source.strip(), tuple(t for t in c.metadata.get("tags", ()) if t not in ignore_tags))
        for c in nb.cells
        if "injected-parameters" not in c.metadata.get("tags", ())
    ]


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
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    target = layout.notebooks / f"{name}.ipynb"
    _atomic_write(nb, target)
    return target


def _atomic_write(nb, target: Path) -> None:
    write_file(target, lambda tmp: nbformat.write(nb, tmp))


_STYLER_ID = re.compile(r"T_[0-9a-f]{5}(?=[_ \"])")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+>")


def _text(value) -> str:
    return value if isinstance(value, str) else "".join(value)


def _stable_styler_ids(html: str) -> str:
    """Replace pandas Styler's random table id by a digest of the table itself."""
    found = set(_STYLER_ID.findall(html))
    for uuid in sorted(found):
        digest = hashlib.sha1(html.replace(uuid, "T_").encode()).hexdigest()[:5]
        html = html.replace(uuid, f"T_{digest}")
    return html


#: Notebook metadata key of what the pipeline records: ``{"float_path": ...}`` (:mod:`embdiag.floatpath`).
METADATA = "embdiag"


#: The class of a page's result box (:func:`embdiag.view.result.box`): no code toggle comes before it.
RESULT_BOX = 'class="embdiag-result"'


def _result_cell(nb) -> int:
    """Index of the first cell whose output holds the result box (-1 when none does)."""
    for i, cell in enumerate(nb.cells):
        if any(RESULT_BOX in _text(o.get("data", {}).get("text/html", "")) for o in cell.get("outputs", ())):
            return i
    return -1


def _finalize(nb) -> None:
    """Hide code in the book (its input removed up to the cell that shows the result box, so the
    answer comes before any code toggle; folded after it); drop volatile metadata (timestamps,
    durations); give cells and tables deterministic ids, so an unchanged chapter re-executes
    byte for byte; record the float path its kernel ran on (:data:`METADATA`)."""
    from ..floatpath import current

    nb.metadata.pop("papermill", None)
    nb.metadata[METADATA] = {"float_path": current()}
    answer = _result_cell(nb)
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            tags = cell.metadata.setdefault("tags", [])
            hide = "remove-input" if i <= answer else "hide-input"
            if not {"hide-input", "remove-input"} & set(tags):
                tags.append(hide)
            for out in cell.outputs:
                data = out.get("data", {})
                if "text/html" in data:
                    data["text/html"] = _stable_styler_ids(_text(data["text/html"]))
                if "text/plain" in data:  # reprs such as "<Styler at 0x7f...>" carry a memory address
                    data["text/plain"] = _ADDRESS.sub(">", _text(data["text/plain"]))


def _parameter_nodes(source: str):
    """(name, value node, annotation node or None, node) of each assignment in a parameters cell."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            yield node.targets[0].id, node.value, None, node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            yield node.target.id, node.value, node.annotation, node


def _parameters_cell(name: str, layout: Layout):
    nb = jupytext.read(layout.notebooks / f"{name}.py")
    cell = next((c for c in nb.cells if "parameters" in c.metadata.get("tags", ())), None)
    if cell is None:
        raise ChapterError(f"chapter {name} has no cell tagged 'parameters'")
    return cell.source


def parameters(name: str, layout: Layout = DEFAULT) -> dict:
    """The chapter's parameters and their defaults, read from its ``parameters`` cell."""
    source = _parameters_cell(_resolve(name, layout), layout)
    return {key: ast.literal_eval(value) for key, value, _, _ in _parameter_nodes(source)}


_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict, "None": type(None)}


def _annotation_types(node, where: str) -> tuple[type, ...]:
    """The types of an annotation made of builtin names joined by ``|`` (``str | None``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _annotation_types(node.left, where) + _annotation_types(node.right, where)
    key = (
        node.id
        if isinstance(node, ast.Name)
        else "None"
        if isinstance(node, ast.Constant) and node.value is None
        else None
    )
    if key not in _TYPES:
        raise ChapterError(f"{where}: annotation {ast.unparse(node)!r} is not builtin types joined by '|'")
    return (_TYPES[key],)


def parameter_types(name: str, layout: Layout = DEFAULT) -> dict[str, tuple[type, ...]]:
    """The types each parameter accepts: its annotation's (``vectors_path: str | None = None``),
    else its default's type (and ``None`` for a path parameter, named ``*_path`` or ``*_dir``).

    Raises :class:`ChapterError` for a parameter whose default is None and that is neither
    annotated nor a path: its type would be unknown.
    """
    name = _resolve(name, layout)
    out = {}
    for key, value, annotation, _ in _parameter_nodes(_parameters_cell(name, layout)):
        default = ast.literal_eval(value)
        if annotation is not None:
            out[key] = _annotation_types(annotation, f"chapter {name}, parameter {key!r}")
        elif key.endswith(("_path", "_dir")):
            out[key] = (str, type(None))
        elif default is None:
            raise ChapterError(
                f"chapter {name}: parameter {key!r} defaults to None; annotate its type (e.g. {key}: int | None = None)"
            )
        else:
            out[key] = (type(default),)
    return out


def parameter_table(layout: Layout = DEFAULT) -> "pd.DataFrame":
    """Every chapter's parameters: ``chapter``, ``parameter``, ``default`` (its Python literal)
    and ``meaning`` (the comment after it in the parameters cell), in chapter order."""
    import pandas as pd

    rows = []
    for name in chapter_names(layout):
        nb = jupytext.read(layout.notebooks / f"{name}.py")
        cell = next((c for c in nb.cells if "parameters" in c.metadata.get("tags", ())), None)
        if cell is None:
            continue
        lines = cell.source.splitlines()
        for key, value, _, node in _parameter_nodes(cell.source):
            line = lines[node.end_lineno - 1]
            comment = line.split("#", 1)[1].strip() if "#" in line[node.end_col_offset :] else ""
            rows.append(
                {
                    "chapter": name,
                    "parameter": key,
                    "default": ast.get_source_segment(cell.source, value),
                    "meaning": comment,
                }
            )
    return pd.DataFrame(rows, columns=["chapter", "parameter", "default", "meaning"])


_declared_parameters = parameters  # for execute(), whose argument ``parameters`` shadows the function


def _type_name(value) -> str:
    return "None" if value is None else type(value).__name__


def _fits(value, types: tuple[type, ...]) -> bool:
    """Whether ``value`` is of one of ``types``: a bool only where bool is accepted; an int where
    a float is; a tuple where a list is."""
    if isinstance(value, bool):
        return bool in types
    if isinstance(value, int) and float in types:
        return True
    if isinstance(value, tuple) and list in types:
        return True
    return isinstance(value, types)


def _types_name(types: tuple[type, ...]) -> str:
    return " | ".join("None" if t is type(None) else t.__name__ for t in types)


def _is_seed(key: str) -> bool:
    """Whether parameter ``key`` is a random seed (``seed``, ``*_seed``): numpy takes only
    non-negative integers."""
    return key == "seed" or key.endswith("_seed")


def _listing(defaults: Mapping) -> str:
    return "; ".join(f"{k} = {v!r}" for k, v in defaults.items())


def check_parameters(name: str, values: Mapping, layout: Layout = DEFAULT, *, cwd: Path | None = None) -> dict:
    """``values`` checked against the chapter's parameters, with relative paths made absolute.

    Raises :class:`ChapterInputError` naming an unknown parameter (with the chapter's
    parameters and defaults), a value of a type the parameter does not accept
    (:func:`parameter_types`), a negative seed (``seed``, ``*_seed``), a ``*_path`` value that is not
    a file or a ``*_dir`` value that is not a folder.
    Relative paths are resolved against ``cwd`` (default: the working directory), not the
    chapter's folder.
    """
    name = _resolve(name, layout)
    defaults, types = parameters(name, layout), parameter_types(name, layout)
    cwd = Path(cwd) if cwd is not None else Path.cwd()
    unknown = sorted(set(values) - set(defaults))
    if unknown:
        raise ChapterInputError(
            f"chapter {name} has no parameter {', '.join(map(repr, unknown))}; its parameters are: {_listing(defaults)}"
        )
    out = {}
    for key, value in values.items():
        if not _fits(value, types[key]):
            raise ChapterInputError(
                f"chapter {name}: parameter {key!r} expects {_types_name(types[key])} "
                f"(default {defaults[key]!r}), got {_type_name(value)} {value!r}"
            )
        if _is_seed(key) and isinstance(value, int) and value < 0:
            raise ChapterInputError(
                f"chapter {name}: parameter {key!r} (-p {key}): expected a non-negative integer, got {value}"
            )
        if isinstance(value, str) and key.endswith(("_path", "_dir")):
            path = cwd / Path(value).expanduser()
            kind, exists = ("file", path.is_file) if key.endswith("_path") else ("folder", path.is_dir)
            if not exists():
                what = f"not a {kind}" if path.exists() else f"no such {kind}"
                raise ChapterInputError(f"chapter {name}: parameter {key!r}: {what}: {path}")
            value = str(path.resolve())
        out[key] = value
    return out


@contextlib.contextmanager
def _chapter_environment(name: str, changed: Mapping):
    """Set :data:`~embdiag.view.exhibits.CHAPTER_ENV` and :data:`~embdiag.view.exhibits.PARAMETERS_ENV`
    for kernels started inside the block."""
    from ..view.exhibits import CHAPTER_ENV, PARAMETERS_ENV

    saved = {key: os.environ.get(key) for key in (CHAPTER_ENV, PARAMETERS_ENV)}
    os.environ[CHAPTER_ENV] = name
    os.environ[PARAMETERS_ENV] = json.dumps(dict(changed), sort_keys=True)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def changed_parameters(name: str, parameters: Mapping | None = None, layout: Layout = DEFAULT) -> dict:
    """The checked ``parameters`` (:func:`check_parameters`) that differ from the chapter's defaults."""
    values = check_parameters(name, dict(parameters or {}), layout)
    defaults = _declared_parameters(name, layout)
    return {k: v for k, v in values.items() if v != defaults[k]}


def execute(
    name: str,
    parameters: Mapping | None = None,
    layout: Layout = DEFAULT,
    *,
    output: str | None = None,
    out_dir: Path | None = None,
    beside=None,
) -> Path:
    """Execute chapter ``name`` with papermill into ``book/chapters/`` (or ``out_dir``, created
    if missing), as ``output`` (default the chapter's name); return its path. ``beside(nb,
    path)``, given, names more files made from the executed notebook (``{path: write(tmp)}``,
    e.g. its HTML page): they and the notebook are written all or none.

    Raises :class:`ChapterError` if the pair is stale or a cell raises, and
    :class:`ChapterInputError` if a parameter is unknown or of the wrong type (see
    :func:`check_parameters`) or a cell refused its input (:data:`INPUT_ERRORS`); ``OSError``
    naming the output folder when a cell could not write (a full disk, a read-only folder:
    :func:`~embdiag.exits.kernel_storage_error`). The previously executed chapter is then left
    as it was. SIGTERM stops the kernel too (:func:`embdiag.paper.kernel.run_notebook`). With
    :data:`PROGRESS` true, the kernel's stderr is streamed to ours as the chapter runs.
    """
    import papermill

    name = _resolve(name, layout)
    reason = stale_reason(name, layout)
    if reason:
        raise ChapterError(f"chapter {name} is stale: {reason}")
    values = check_parameters(name, dict(parameters or {}), layout)
    changed = changed_parameters(name, values, layout)
    out = layout.chapters if out_dir is None else Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ChapterInputError(f"cannot make the output folder {out}: {e.strerror or e}") from None
    target = out / f"{output or name}.ipynb"
    # executed in a hidden folder beside ``out``: killed at any moment, ``out`` keeps what it held
    work = workspace(out)
    tmp = str(work / target.name)
    try:
        try:
            stderr = sys.stderr if values.get(PROGRESS) is True else None
            with _chapter_environment(name, {key: v for key, v in changed.items() if key != PROGRESS}):
                run_notebook(str(layout.notebooks / f"{name}.ipynb"), tmp, values, out, stderr=stderr)
        except papermill.PapermillExecutionError as e:
            if e.ename in INPUT_ERRORS:  # the message names the parameter and the file
                raise ChapterInputError(f"chapter {name} refused its input (cell {e.exec_count}): {e.evalue}") from None
            full = kernel_storage_error(e.ename, e.evalue)
            if full is not None:
                raise storage_error_at(full, out) from None
            raise ChapterError(f"chapter {name} failed in cell {e.exec_count}: {e.ename}: {e.evalue}") from None
        nb = nbformat.read(tmp, as_version=4)
        _finalize(nb)
        write_files({target: lambda path: nbformat.write(nb, path), **(beside(nb, target) if beside else {})})
    except OSError as e:
        if not is_storage_error(e) or e.filename:
            raise
        raise storage_error_at(e, out) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def float_path(path) -> str | None:
    """The float path an executed chapter ``path`` was run on (None if it does not say)."""
    return nbformat.read(path, as_version=4).metadata.get(METADATA, {}).get("float_path")


def committed_float_paths(layout: Layout = DEFAULT) -> set:
    """The float paths the book's executed chapters were run on (one, when the book is whole)."""
    return {float_path(p) for p in layout.chapters.glob("*.ipynb")}


def executed(layout: Layout = DEFAULT) -> dict[str, tuple[str, dict]]:
    """Every executed chapter the book holds: ``{output name: (chapter source, parameters)}``,
    each chapter with its defaults (a declared variant is no page of the book)."""
    return {name: (name, {}) for name in chapter_names(layout)}


def build(*, output: Path | None = None, strict: bool = True, layout: Layout = DEFAULT) -> Path:
    """Build the book with Jupyter Book (warnings are errors when ``strict``); return the HTML folder.

    Sphinx's log is shown only when the build fails.
    """
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(layout.book), "--all"]
    if strict:
        cmd += ["-W", "--keep-going"]
    if output is not None:
        cmd += ["--path-output", str(output)]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        from embdiag.exits import STORAGE_ERRORS

        for code in sorted(STORAGE_ERRORS):  # the file system's failure (a full disk, a read-only folder)
            if f"[Errno {code}]" in done.stdout + done.stderr:
                raise OSError(code, os.strerror(code), str((Path(output) if output else layout.book) / "_build"))
        raise ChapterError(f"the book build failed:\n{done.stdout[-6000:]}{done.stderr[-6000:]}")
    site = (Path(output) if output is not None else layout.book) / "_build" / "html"
    _complete_redirect(site / "index.html")
    return site


def _complete_redirect(index: Path) -> None:
    """Give Jupyter Book's bare root redirect (one ``<meta http-equiv="Refresh">`` line) a head
    with the site's icon, so that browsers do not ask for ``/favicon.ico`` at the server's root,
    outside the site's sub-path, and a link for readers without meta refresh."""
    text = index.read_text() if index.exists() else ""
    target = re.fullmatch(r'\s*<meta http-equiv="Refresh" content="0; url=([^"]+)" />\s*', text)
    if target:
        url = html.escape(target.group(1))
        index.write_text(
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
            f'<meta http-equiv="Refresh" content="0; url={url}" />\n'
            '<link rel="icon" href="_static/favicon.svg" type="image/svg+xml">\n'
            f'<title>embdiag</title></head>\n<body><a href="{url}">{url}</a></body></html>\n'
        )
