"""html.render: one self-contained page from an executed notebook."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import altair as alt
import nbformat
import pandas as pd
import pytest
import vl_convert
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from embdiag._project import project_root
from embdiag.view import charts
from embdiag.report import html as report_html

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8cfc0f0"
        "1f0005000201a5f3a0c40000000049454e44ae426082"
    )
).decode()
BUNDLE_MARK = "window.vegaEmbed="


class Page(HTMLParser):
    """Every tag with its attributes, the text outside scripts and styles, and the scripts."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.scripts, self.styles, self._in = [], [], [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        {"script": self.scripts, "style": self.styles}.get(self._in, self.text).append(data)


def chart(y: str) -> dict:
    frame = pd.DataFrame({"x": [1, 2, 3], y: [3.0, 1.0, 2.0]})
    return alt.Chart(frame).mark_line().encode(x="x", y=y).to_dict()


def notebook():
    code = new_code_cell("hidden_code_marker = 6 * 7\nhidden_code_marker", metadata={"tags": ["parameters"]})
    code.outputs = [
        new_output("stream", name="stdout", text="printed to stdout\n"),
        new_output("stream", name="stderr", text="progress bar on stderr 50%|#####\n"),
        new_output("execute_result", data={"text/plain": "42 <kept & escaped>"}, execution_count=1),
    ]
    charts_cell = new_code_cell("alt.Chart(...)  # chart cell source")
    charts_cell.outputs = [
        new_output(
            "display_data", data={"text/html": charts.chart_html(chart("first")), "text/plain": "<Altair chart>"}
        ),
        new_output(
            "display_data", data={"text/html": charts.chart_html(chart("second")), "text/plain": "<Altair chart>"}
        ),
    ]
    rich = new_code_cell("display(Markdown(...)); display(Image(...))")
    rich.outputs = [
        new_output("display_data", data={"text/markdown": "Output *markdown* with **bold**", "text/plain": "md"}),
        new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
        new_output("display_data", data={"text/html": "<table><tr><td>cell 1</td></tr></table>", "text/plain": "t"}),
    ]
    removed = new_code_cell("removed_cell_marker", metadata={"tags": ["remove-cell"]})
    removed.outputs = [new_output("stream", name="stdout", text="removed_output_marker\n")]
    quiet = new_code_cell("quiet", metadata={"tags": ["remove-output"]})
    quiet.outputs = [new_output("stream", name="stdout", text="quiet_output_marker\n")]
    failed = new_code_cell("1/0")
    failed.outputs = [
        new_output(
            "error", ename="ZeroDivisionError", evalue="division by zero", traceback=["\x1b[31mTraceback_marker\x1b[0m"]
        )
    ]
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# Report title\n\nSome *emphasis*, a [link](https://example.org/page) and a table:\n\n"
                "| a | b |\n|---|---|\n| 1 | 2 |\n"
            ),
            code,
            charts_cell,
            rich,
            removed,
            quiet,
            failed,
            new_markdown_cell('Closing <span class="raw">raw html</span> ~~struck~~'),
        ]
    )


@pytest.fixture(scope="module")
def page():
    text = report_html.render(notebook(), "My <report>")
    parsed = Page()
    parsed.feed(text)
    return text, parsed


def test_one_document_with_the_title(page):
    text, parsed = page
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert [t for t, _ in parsed.tags if t in ("html", "head", "body", "title")] == ["html", "head", "title", "body"]
    assert "<title>My &lt;report&gt;</title>" in text


def test_the_vega_bundle_is_inline_exactly_once_before_the_charts(page):
    text, parsed = page
    assert text.count(BUNDLE_MARK) == 1
    assert text.index(BUNDLE_MARK) < text.index('class="embdiag-chart"')
    assert any(BUNDLE_MARK in s for s in parsed.scripts)


def test_chart_divs_and_their_specs_are_present(page):
    text, parsed = page
    divs = [a for t, a in parsed.tags if t == "div" and a.get("class") == "embdiag-chart"]
    assert len(divs) == 2 and divs[0]["id"] != divs[1]["id"]
    assert all(f'document.getElementById("{d["id"]}")' in text for d in divs)
    assert '"field":"first"' in text and '"field":"second"' in text


def test_nothing_is_loaded_from_elsewhere(page):
    """No src or stylesheet outside the page; the only http URLs are a link the reader may follow
    and strings inside scripts (the Vega-Lite $schema, which is never fetched)."""
    text, parsed = page
    for tag, attrs in parsed.tags:
        for name in ("src", "href", "data", "srcset", "poster", "action"):
            value = (attrs.get(name) or "").strip().lower()
            if tag == "a" and name == "href":
                continue
            assert not value.startswith(("http:", "https:", "//", "ftp:")), (tag, attrs)
    assert not [a for t, a in parsed.tags if t in ("link", "iframe", "object", "embed", "base")]
    assert all(a.get("src", "").startswith("data:") for t, a in parsed.tags if t in ("img", "script") and "src" in a)
    css = "\n".join(parsed.styles)
    assert "@import" not in css and not re.search(r"url\(\s*['\"]?(https?:)?//", css)
    assert [a["href"] for t, a in parsed.tags if t == "a" and a.get("href", "").startswith("http")] == [
        "https://example.org/page"
    ]


def test_markdown_cells_are_rendered(page):
    text, _ = page
    assert "<h1>Report title</h1>" in text
    assert "<em>emphasis</em>" in text
    assert "<th>a</th>" in text and "<td>2</td>" in text
    assert '<span class="raw">raw html</span>' in text and "<s>struck</s>" in text


def test_code_is_hidden_and_outputs_shown(page):
    text, parsed = page
    assert "hidden_code_marker" not in text and "chart cell source" not in text
    assert "<pre>printed to stdout\n</pre>" in text
    assert "<pre>42 &lt;kept &amp; escaped&gt;</pre>" in text


def test_stderr_is_dropped(page):
    text, _ = page
    assert "progress bar" not in text


def test_rich_outputs_use_the_richest_type(page):
    text, parsed = page
    assert "<p>Output <em>markdown</em> with <strong>bold</strong></p>" in text
    assert f'<img src="data:image/png;base64,{PNG}"' in text
    assert "<td>cell 1</td>" in text
    assert "<Altair chart>" not in text and "<pre>md</pre>" not in text and "&lt;Figure&gt;" not in text


def test_removed_cells_and_outputs_are_left_out(page):
    text, _ = page
    assert "removed_cell_marker" not in text and "removed_output_marker" not in text
    assert "quiet_output_marker" not in text


def test_errors_show_name_and_message_without_traceback_or_ansi(page):
    text, _ = page
    assert '<pre class="embdiag-error">ZeroDivisionError: division by zero</pre>' in text
    assert "Traceback_marker" not in text and "\x1b" not in text


def test_the_book_stylesheet_is_inline(page):
    text, parsed = page
    css = "\n".join(parsed.styles)
    book = (project_root() / report_html.STYLESHEET).read_text()
    assert ".embdiag-exhibit figcaption" in book
    assert css.count(book) == 1


def test_a_path_is_read_as_a_notebook(tmp_path):
    path = tmp_path / "nb.ipynb"
    nbformat.write(new_notebook(cells=[new_markdown_cell("## From a file")]), path)
    assert "<h2>From a file</h2>" in report_html.render(path, "t")
    assert "<h2>From a file</h2>" in report_html.render(str(path), "t")


def test_closing_tags_inside_inline_code_cannot_end_the_script_or_style():
    assert report_html._inline('a="</script>";b="</SCRIPT "', "script") == 'a="<\\/script>";b="<\\/SCRIPT "'
    assert report_html._inline("x</style>", "style") == "x<\\/style>"


def test_svg_becomes_a_data_uri():
    out = report_html._rich({"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'/>"})
    assert out.startswith('<img src="data:image/svg+xml;base64,') and "<svg" not in out


def test_an_output_without_a_known_type_shows_nothing():
    assert report_html._rich({"application/vnd.custom+json": {}}) == ""


@pytest.mark.slow
@pytest.mark.browser
def test_the_page_draws_its_charts_offline_in_chromium(tmp_path):
    """Opened from a file in headless Chromium that can resolve no host: both charts draw."""
    import shutil

    chromium, chromedriver = shutil.which("chromium") or shutil.which("chromium-browser"), shutil.which("chromedriver")
    if not (chromium and chromedriver):
        pytest.fail("Debian's chromium and chromium-driver are required (make test installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    path = tmp_path / "report.html"
    path.write_text(report_html.render(notebook(), "offline"), encoding="utf-8")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(chromedriver), options=opts)
    try:
        driver.get(path.as_uri())
        WebDriverWait(driver, 30).until(
            lambda b: b.execute_script(
                "return [...document.querySelectorAll('.embdiag-chart')]"
                ".every(e => e.dataset.rendered || e.dataset.error)"
            )
        )
        states = driver.execute_script(
            "return [...document.querySelectorAll('.embdiag-chart')].map(e => [e.dataset.rendered || null, "
            "e.dataset.error || null, e.querySelectorAll('svg .mark-line').length])"
        )
        severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    finally:
        driver.quit()
    assert states == [["true", None, 1], ["true", None, 1]]
    assert severe == []


# -- display objects without a kernel, and the chart bundle's cache ------------------------------
class _Markdown:
    def _repr_markdown_(self):
        return "*made here*"


class _Bundled:
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": "<b>chart</b>", "text/plain": "<chart>"}, {}


def test_display_objects_are_shown_by_their_richest_representation():
    shown = report_html.outputs([_Markdown(), _Bundled(), pd.DataFrame({"x": [1]}), "**text**", 7])
    assert shown.count('<div class="cell_output">') == 5
    assert "<em>made here</em>" in shown and "<b>chart</b>" in shown and "<chart>" not in shown
    assert "<table" in shown and "<strong>text</strong>" in shown and "<pre>7</pre>" in shown


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    report_html._bundle.cache_clear()
    calls = []
    monkeypatch.setattr(vl_convert, "javascript_bundle", lambda: calls.append(1) or "var made = 1;")
    yield calls
    report_html._bundle.cache_clear()


def test_the_chart_bundle_is_made_once_and_read_back(cache):
    assert report_html._bundle() == "var made = 1;"
    report_html._bundle.cache_clear()
    assert report_html._bundle() == "var made = 1;" and len(cache) == 1
    assert sorted(p.name for p in report_html.bundle_cache().iterdir()) == [
        f"vega-bundle-{vl_convert.__version__}.js",
        f"vega-bundle-{vl_convert.__version__}.js.sha256",
    ]


def test_a_corrupt_chart_bundle_is_made_again(cache):
    report_html._bundle()
    report_html._bundle.cache_clear()
    (report_html.bundle_cache() / f"vega-bundle-{vl_convert.__version__}.js").write_text("var made = 2;")
    assert report_html._bundle() == "var made = 1;" and len(cache) == 2


def test_a_cache_that_cannot_be_written_is_skipped(cache, tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    assert report_html._bundle() == "var made = 1;"
    assert (tmp_path / "file").read_text() == ""
