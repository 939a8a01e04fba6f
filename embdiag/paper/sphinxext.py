"""Sphinx extension: serve the Vega libraries and the chapter sources from the book itself.

Writes the vl-convert JavaScript bundle (matched to the installed Altair, see
:func:`embdiag.view.charts.bundle_js`) to ``_static/embdiag-vega.js`` of the build and
loads it on every page, so charts render with no network. The bundle is wrapped in a
function scope so its top-level names cannot clash with the theme's scripts. Copies each
chapter source ``notebooks/NN_name.py`` to ``_sources_py/NN_name.py.txt`` of the build, the
target of the provenance links under every exhibit (:mod:`embdiag.view.exhibits`). Writes a
redirect page for each page name the book no longer has (:data:`MOVED`), so a link from
outside the site still lands where that content now lives.
"""

from __future__ import annotations

from pathlib import Path

BUNDLE = "embdiag-vega.js"

#: Page names the book had, ``{old: where its content is now}`` (document names, no suffix).
MOVED = {
    "chapters/04_reference_encoder": "chapters/02_data",
    "chapters/10_real_encoder": "chapters/10_across_encoders",
    "chapters/11_stress_tests_wordnet": "chapters/10_across_encoders",
    "chapters/12_compression_wordnet": "chapters/10_across_encoders",
    "chapters/13_neighbour_stability_wordnet": "chapters/10_across_encoders",
    "chapters/14_caption_retrieval_wordnet": "chapters/10_across_encoders",
    "chapters/16_stress_tests_vit": "chapters/10_across_encoders",
    "chapters/17_compression_vit": "chapters/10_across_encoders",
    "chapters/18_neighbour_stability_vit": "chapters/10_across_encoders",
    "chapters/19_exact_responses": "chapters/05_stress_tests",
}


def redirect_page(old: str, new: str) -> str:
    """The HTML of a moved page ``old``: an immediate redirect to ``new`` and a link for readers
    without meta refresh (both relative, so the site works under any sub-path)."""
    import html
    import posixpath

    url = html.escape(posixpath.relpath(new, posixpath.dirname(old)) + ".html")
    icon = html.escape(posixpath.relpath("_static/favicon.svg", posixpath.dirname(old)))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Refresh" content="0; url={url}" />\n'
        f'<link rel="icon" href="{icon}" type="image/svg+xml">\n'
        f'<title>Moved</title></head>\n<body><p>This page has moved: <a href="{url}">{url}</a></p></body></html>\n'
    )


def _write_redirects(app, exc) -> None:
    if exc is not None or app.builder.format != "html":
        return
    for old, new in MOVED.items():
        page = Path(app.outdir) / f"{old}.html"
        if not page.exists():
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(redirect_page(old, new), encoding="utf-8")


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
    app.connect("build-finished", _write_redirects)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
