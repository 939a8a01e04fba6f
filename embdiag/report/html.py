"""Pages as ONE self-contained HTML file that opens offline: an executed notebook, or display objects.

:func:`render` writes an executed notebook's markdown cells as HTML (``markdown_it``), hides every
code input, and shows each output once, by its richest type: ``text/html`` as is (tables, exhibits, Altair
charts drawn by :mod:`embdiag.view.charts`' renderer), ``text/markdown`` rendered, images as
``data:`` URIs, ``text/plain`` and ``stdout`` in ``<pre>``; ``stderr`` streams (progress bars,
warnings) are dropped. The page carries, inline, the Vega + Vega-Lite + vega-embed bundle that
``vl-convert-python`` ships for the installed Altair (made once per version and kept between runs:
:func:`bundle_cache`) and the book's stylesheet
(``embdiag/static/embdiag.css``, package data that ``book/_static/`` links to: exhibit captions,
extreme marks), so nothing is fetched.
Cells tagged ``remove-cell`` are left out, and the outputs of cells tagged ``remove-output``.
:func:`outputs` shows display objects (what a notebook would display: tables, exhibits, charts,
markdown) the same way from their own representations, without a kernel, and :func:`document`
wraps any body in the page.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import os
import re
from pathlib import Path

#: The book's stylesheet, inlined into every report (package data).
STYLESHEET = Path(__file__).resolve().parents[1] / "static" / "embdiag.css"
#: Output types in order of preference (the first one present is shown).
MIME_ORDER = ("text/html", "text/markdown", "image/svg+xml", "image/png", "image/jpeg", "text/plain")
HIDDEN_CELL, HIDDEN_OUTPUT = "remove-cell", "remove-output"

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

_PAGE_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.5;
       color: #1f2328; background: #fff; margin: 0; }
main.embdiag-report { max-width: 60rem; margin: 0 auto; padding: 1.5rem 1rem 4rem 1rem; }
main.embdiag-report img { max-width: 100%; height: auto; }
main.embdiag-report pre { background: #f6f8fa; padding: 0.5rem 0.75rem; overflow-x: auto; font-size: 0.85rem; }
main.embdiag-report table { border-collapse: collapse; font-size: 0.9rem; }
main.embdiag-report th, main.embdiag-report td { border-bottom: 1px solid #d0d7de; padding: 0.25rem 0.6rem; }
main.embdiag-report .embdiag-error { color: #a40e26; }
"""


def bundle_cache() -> Path:
    """Where the chart bundle is kept between runs: ``$XDG_CACHE_HOME/embdiag`` (default ``~/.cache/embdiag``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "embdiag"


@functools.lru_cache(maxsize=1)
def _bundle() -> str:
    """The Vega + Vega-Lite + vega-embed bundle of the installed ``vl-convert-python`` (seconds to make),
    kept in :func:`bundle_cache` under the version's name beside its SHA-256: a file whose digest
    differs is made again, and a cache that cannot be written is skipped."""
    import vl_convert

    path = bundle_cache() / f"vega-bundle-{vl_convert.__version__}.js"
    digest = path.with_name(path.name + ".sha256")
    try:
        text = path.read_text(encoding="utf-8")
        if hashlib.sha256(text.encode("utf-8")).hexdigest() == digest.read_text(encoding="ascii").strip():
            return text
    except (OSError, UnicodeDecodeError):
        pass
    text = vl_convert.javascript_bundle()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for target, content in ((path, text), (digest, hashlib.sha256(text.encode("utf-8")).hexdigest())):
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            tmp.write_text(content, encoding="utf-8")
            os.replace(tmp, target)
    except OSError:
        pass
    return text


def prepare() -> None:
    """Make (or read) the chart bundle now, e.g. in a thread while a report is measured."""
    _bundle()


def _stylesheet() -> str:
    return STYLESHEET.read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def _markdown():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def markdown(text: str) -> str:
    """Markdown (CommonMark with tables and strikethrough; raw HTML kept) as HTML.

    Example:
        >>> markdown("**bold** and ~~gone~~ <kbd>k</kbd>")
        '<p><strong>bold</strong> and <s>gone</s> <kbd>k</kbd></p>\\n'
    """
    return _markdown().render(text)


def _text(value) -> str:
    return value if isinstance(value, str) else "".join(value)


def _pre(text: str, cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<pre{attr}>{html.escape(_ANSI.sub('', text))}</pre>"


def _image(mime: str, data) -> str:
    data = _text(data)
    if mime == "image/svg+xml":
        data = base64.b64encode(data.encode("utf-8")).decode("ascii")
    return f'<img src="data:{mime};base64,{data.strip()}" alt="figure">'


def _rich(data: dict) -> str:
    mime = next((m for m in MIME_ORDER if m in data), None)
    if mime is None:
        return ""
    value = data[mime]
    if mime == "text/html":
        return _text(value)
    if mime == "text/markdown":
        return markdown(_text(value))
    if mime.startswith("image/"):
        return _image(mime, value)
    return _pre(_text(value))


def _output(out) -> str:
    kind = out.get("output_type")
    if kind == "stream":
        return _pre(_text(out.get("text", ""))) if out.get("name") == "stdout" else ""
    if kind in ("display_data", "execute_result"):
        return _rich(out.get("data", {}))
    if kind == "error":
        return _pre(f"{out.get('ename', 'Error')}: {out.get('evalue', '')}", "embdiag-error")
    return ""


def _shown(outputs) -> str:
    """Each non-empty output's HTML in its own ``cell_output`` block, as a notebook page shows it."""
    return "\n".join(f'<div class="cell_output">\n{s}\n</div>' for s in outputs if s)


def _cell(cell) -> str:
    tags = cell.get("metadata", {}).get("tags", ())
    if HIDDEN_CELL in tags:
        return ""
    if cell.get("cell_type") == "markdown":
        return f'<section class="embdiag-markdown">\n{markdown(_text(cell.get("source", "")))}</section>'
    if cell.get("cell_type") != "code" or HIDDEN_OUTPUT in tags:
        return ""
    return _shown(map(_output, cell.get("outputs", ())))


def bundle(obj) -> dict:
    """The MIME bundle a notebook would show for ``obj``, from its own representations (no IPython):
    ``_repr_mimebundle_`` (Altair charts) first, then ``_repr_html_``, ``_repr_markdown_``,
    ``_repr_svg_`` and ``_repr_png_``; a string is markdown; anything else its ``repr`` as text.

    Example:
        >>> import pandas as pd
        >>> sorted(bundle(pd.DataFrame({"a": [1]})))
        ['text/html']
        >>> bundle("*x*"), bundle(3)
        ({'text/markdown': '*x*'}, {'text/plain': '3'})
    """
    if isinstance(obj, str):
        return {"text/markdown": obj}
    if hasattr(obj, "_repr_mimebundle_"):
        data = obj._repr_mimebundle_(include=None, exclude=None)
        data = data[0] if isinstance(data, tuple) else data
        if data:
            return dict(data)
    for method, mime in (
        ("_repr_html_", "text/html"),
        ("_repr_markdown_", "text/markdown"),
        ("_repr_svg_", "image/svg+xml"),
        ("_repr_png_", "image/png"),
    ):
        value = getattr(obj, method, lambda: None)()
        if value is not None:
            if mime == "image/png" and isinstance(value, bytes):
                value = base64.b64encode(value).decode("ascii")
            return {mime: value}
    return {"text/plain": repr(obj)}


def outputs(objects) -> str:
    """``objects`` shown as a notebook shows displayed outputs, each by its richest type (:func:`bundle`)."""
    return _shown(_rich(bundle(o)) for o in objects)


def _inline(text: str, tag: str) -> str:
    """``text`` safe to place inside ``<tag>...</tag>`` (no early closing tag)."""
    return re.sub(rf"</({tag})", r"<\\/\1", text, flags=re.IGNORECASE)


def render(nb, title: str) -> str:
    """The executed notebook ``nb`` (an nbformat notebook, or the path of one) as one HTML page.

    Code inputs are hidden; see the module docstring for how outputs are shown. The result
    references no external file or URL: scripts and styles are inline, images are ``data:`` URIs.
    """
    if isinstance(nb, (str, Path)):
        import nbformat

        nb = nbformat.read(nb, as_version=4)
    return document("\n".join(s for s in map(_cell, nb.get("cells", ())) if s), title)


def document(body: str, title: str) -> str:
    """``body`` (HTML) as one page titled ``title``, with the stylesheet and the chart bundle inline
    (with the book's re-layout of charts for a narrow window, :data:`embdiag.view.charts.RELAYOUT_JS`)."""
    from ..view.charts import RELAYOUT_JS

    css = _inline(_PAGE_CSS + "\n" + _stylesheet(), "style")
    js = _inline(_bundle() + "\n" + RELAYOUT_JS, "script")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{css}\n</style>\n"
        # the bundle sets window.vegaEmbed; its own top-level names stay inside the function
        f'<script type="text/javascript">\n(function () {{\n{js}\n}})();\n</script>\n'
        '</head>\n<body>\n<main class="embdiag-report">\n'
        f"{body}\n</main>\n</body>\n</html>\n"
    )
