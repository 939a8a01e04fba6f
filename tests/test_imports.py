"""The package's dependency direction: each part imports only the parts below it."""

from __future__ import annotations

import ast
from pathlib import Path

import embdiag

PACKAGE = Path(embdiag.__file__).parent
SHARED = "shared"
#: What each part may import (besides itself and the shared helpers), as stated in its docstring.
ALLOWED = {
    SHARED: set(),
    "metrics": set(),
    "data": set(),
    "interventions": {"metrics"},
    "training": {"data", "metrics"},
    "encoders": {"data", "metrics"},
    "study": {"metrics", "data", "interventions", "training", "encoders"},
    "view": set(),
    "report": {"metrics", "data", "interventions", "training", "encoders", "view"},
    "paper": {"metrics", "data", "interventions", "training", "encoders", "study", "view", "report"},
}


def part_of(module: str) -> str:
    """``embdiag.metrics.probe`` -> ``metrics``; top-level modules are shared helpers."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED else SHARED


def imported_modules(path: Path, module: str) -> set[str]:
    """Absolute names of the ``embdiag`` modules that ``path`` imports (relative imports resolved)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found |= {f"{base}.{a.name}" for a in node.names} | {base}
    return {m for m in found if m == "embdiag" or m.startswith("embdiag.")}


def violations(root: Path) -> list[str]:
    """Every import in the package at ``root`` that goes against :data:`ALLOWED`, in every module
    and in every chapter shipped as package data (``report/chapter/21_report.py``, a notebook of
    the part it lies in)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        mine = part_of(module)
        for target in sorted(imported_modules(path, module)):
            theirs = part_of(target)
            if target != "embdiag" and theirs not in ALLOWED[mine] | {mine, SHARED}:
                out.append(f"{module} imports {target} ({mine} may not import {theirs})")
    return out


def test_imports_follow_the_stated_direction():
    assert violations(PACKAGE) == []


def test_every_part_exists_with_a_docstring():
    for part in set(ALLOWED) - {SHARED}:
        init = PACKAGE / part / "__init__.py"
        assert init.exists(), part
        assert ast.get_docstring(ast.parse(init.read_text())), f"{part}/__init__.py has no docstring"


def test_the_check_catches_a_wrong_import(tmp_path):
    pkg = tmp_path / "embdiag"
    (pkg / "metrics").mkdir(parents=True)
    (pkg / "paper").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "paper" / "__init__.py").write_text("")
    (pkg / "metrics" / "__init__.py").write_text("from .geometry import rankme\n")
    (pkg / "metrics" / "geometry.py").write_text("def f():\n    from ..paper import charts\n")
    (pkg / "artifacts.py").write_text("import embdiag.metrics.geometry\n")
    (pkg / "metrics" / "chapter").mkdir()
    (pkg / "metrics" / "chapter" / "01_page.py").write_text("# %%\nfrom embdiag.paper import exhibits\n")
    assert violations(pkg) == [
        "embdiag.artifacts imports embdiag.metrics.geometry (shared may not import metrics)",
        "embdiag.metrics.chapter.01_page imports embdiag.paper (metrics may not import paper)",
        "embdiag.metrics.chapter.01_page imports embdiag.paper.exhibits (metrics may not import paper)",
        "embdiag.metrics.geometry imports embdiag.paper (metrics may not import paper)",
        "embdiag.metrics.geometry imports embdiag.paper.charts (metrics may not import paper)",
    ]


def test_test_module_names_are_unique():
    """pytest imports test modules by basename (no packages under tests/): two files with one
    name in different folders stop the whole collection."""
    names = [p.name for p in (PACKAGE.parent / "tests").rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []
