"""Sphinx extension: serve the Vega libraries and the chapter sources from the book itself.

Writes the vl-convert JavaScript bundle (matched to the installed Altair, see
:func:`embdiag.view.charts.bundle_js`) to ``_static/embdiag-vega.js`` of the build and
loads it on every page, so charts render with no network. The bundle is wrapped in a
function scope so its top-level names cannot clash with the theme's scripts. Copies each
chapter source ``notebooks/NN_name.py`` to ``_sources_py/NN_name.py.txt`` of the build, the
target of the provenance links under every exhibit (:mod:`embdiag.view.exhibits`).
"""

from __future__ import annotations

from pathlib import Path

BUNDLE = "embdiag-vega.js"


def _write_bundle(app, exc) -> None:
    if exc is not None or app.builder.format != "html":
        return
    from embdiag.view.charts import bundle_js

    out = Path(app.outdir) / "_static" / BUNDLE
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("(function () {\n" + bundle_js() + "\n})();\n", encoding="utf-8")


def _chapter_sources(srcdir: Path) -> Path:
    """``notebooks/`` beside the book's source folder, else that of the project root."""
    beside = Path(srcdir).resolve().parent / "notebooks"
    if beside.is_dir():
        return beside
    from embdiag._project import project_root

    return project_root() / "notebooks"


def _copy_sources(app, exc) -> None:
    if exc is not None or app.builder.format != "html":
        return
    from embdiag.view.exhibits import SOURCES, source_file

    out = Path(app.outdir) / SOURCES
    out.mkdir(parents=True, exist_ok=True)
    for py in sorted(_chapter_sources(app.srcdir).glob("[0-9][0-9]_*.py")):
        (out / source_file(py.stem)).write_bytes(py.read_bytes())


def _dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    """Drop repeated inline scripts (Jupyter Book 1 injects sphinx-thebe's config twice,
    a redeclared ``const`` that raises a SyntaxError in the browser)."""
    scripts, seen = [], set()
    for js in context.get("script_files", []):
        key = (getattr(js, "filename", None) or "", tuple(sorted(getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            scripts.append(js)
    context["script_files"] = scripts


def setup(app):
    app.add_js_file(BUNDLE, priority=100)
    app.connect("build-finished", _write_bundle)
    app.connect("build-finished", _copy_sources)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
