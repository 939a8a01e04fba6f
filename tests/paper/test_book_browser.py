"""The built book, served under a sub-path on 127.0.0.1 with no network, in headless Chromium.

The book is built once per module and served at ``http://127.0.0.1:PORT/embdiag/``, the way
GitHub Pages serves a project site: a request outside that prefix is answered 404 and recorded,
so every asset and link that loads is proved relative. Every page is visited once at desktop
(1400 px) and phone (390 px) width (:func:`visits`); the tests below read what each visit saw:
console errors, charts drawn, CSV downloads, internal links, content cut off at the column or
page edge, the issue #47 rules (visible prose words per page and over the site, sentences shared
between pages, the result box first, chart text and table rows on a phone) and a full-page
screenshot of each (``$EMBDIAG_SCREENSHOTS``, default
``book/_build/screenshots/``). The last test opens a report written by ``embdiag report`` (one
file, from disk) and checks it the same way.
"""

from __future__ import annotations

import csv
import http.server
import io
import itertools
import os
import re
import shutil
import threading
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml

from embdiag.paper import pipeline

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

PREFIX = "/embdiag/"
WIDTHS = (1400, 390)  # desktop, phone
HEIGHT = 1000  # window height while a page is checked (the screenshot then takes the page's own height)
MAX_SHOT = 32000  # tallest screenshot, px (the longest chapter is about 22,000 px at phone width)
SEARCH_QUERY = "embedding"

MARKS = (
    "svg .mark-line, svg .mark-symbol, svg .mark-rect, svg .mark-image, svg .mark-text, svg .mark-rule, svg .mark-area"
)


class Site(NamedTuple):
    html: Path  # the build folder
    url: str  # where it is served: http://127.0.0.1:PORT/embdiag (no trailing slash)
    outside: list  # every request path that fell outside the sub-path, in order


class _SubPathHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the build folder under :data:`PREFIX` only; anything else is 404 and recorded."""

    def send_head(self):
        if not self.path.startswith(PREFIX):
            self.server.outside.append(self.path)
            self.send_error(404, f"outside the site's sub-path {PREFIX}")
            return None
        return super().send_head()

    def translate_path(self, path):
        return super().translate_path(path[len(PREFIX) - 1 :])

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Build the book into a temporary folder and serve it on 127.0.0.1 under :data:`PREFIX`
    (``$EMBDIAG_BUILT_BOOK``, if set, names an HTML folder already built, served instead)."""
    built = os.environ.get("EMBDIAG_BUILT_BOOK")
    html = Path(built) if built else pipeline.build(output=tmp_path_factory.mktemp("book"))

    def handler(*args, **kwargs):
        return _SubPathHandler(*args, directory=str(html), **kwargs)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.outside = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield Site(html, f"http://127.0.0.1:{server.server_address[1]}{PREFIX.rstrip('/')}", server.outside)
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.fail("Debian's chromium and chromium-driver are required (make test installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--window-size={WIDTHS[0]},{HEIGHT}",
        # Every host but the loopback server fails to resolve: a CDN dependency cannot hide.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_script_timeout(60)
    yield driver
    driver.quit()


def pages(html: Path) -> list[str]:
    """Every page of the built book a reader can reach, as paths relative to the build.

    All ``*.html`` except: the folders whose names start with ``_`` (Sphinx's and the theme's
    assets: ``_static/`` holds the theme's Jinja template fragments, not pages); an
    ``index.html`` that only redirects to the landing page (Jupyter Book writes one when the
    root page has another name; :func:`test_site_root_serves_the_landing_page`) and the pages
    that moved, which only redirect (:func:`test_moved_pages_land_where_their_content_lives`); and
    ``genindex.html``, Sphinx's general index, empty because the book declares no index entries
    and reached by no visible link. ``search.html`` is kept (every page's search box leads to
    it) and is visited with a query, so the search index is proved to load offline too.
    """

    def redirect(page: Path) -> bool:
        text = page.read_text(encoding="utf-8")
        return 'http-equiv="Refresh"' in text and "<article" not in text and len(text) < 2000

    found = sorted(p for p in html.rglob("*.html") if not redirect(p))
    names = [p.relative_to(html).as_posix() for p in found]
    return [p for p in names if not p.startswith("_") and p != "genindex.html"]


def _pages_with_charts(html: Path) -> list[Path]:
    return sorted(p for p in html.rglob("*.html") if "embdiag-chart" in p.read_text(encoding="utf-8"))


def _wait_for_charts(driver, timeout: float = 30) -> None:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        WebDriverWait(driver, timeout).until(
            lambda b: b.execute_script(
                "return [...document.querySelectorAll('.embdiag-chart')]"
                ".every(e => e.dataset.rendered || e.dataset.error)"
            )
        )
    except TimeoutException:
        pass  # the unfinished charts are reported by their state


_CHART_STATES = f"""
return [...document.querySelectorAll('.embdiag-chart')].map(e => ({{
    id: e.id, rendered: !!e.dataset.rendered, error: e.dataset.error || null,
    marks: e.querySelectorAll({MARKS!r}).length}}));"""

# Every CSV download of the page, fetched as the reader's click would.
_CSV_LINKS = """
const done = arguments[arguments.length - 1];
Promise.all([...document.querySelectorAll('a.embdiag-csv')].map(a => {
    const row = {href: (a.getAttribute('href') || '').slice(0, 60), download: a.getAttribute('download')};
    return fetch(a.href).then(r => r.text().then(text => Object.assign(row, {status: r.status, text: text})))
                        .catch(err => Object.assign(row, {status: null, error: String(err)}));
})).then(done);"""

# Every link of the main content, except fragment-only, mailto:, javascript: and data: (the CSV
# check's) links, fetched from the page; a link to another origin is reported, not fetched (no
# network). A fragment must name an element of the target page.
_MAIN_LINKS = """
const done = arguments[arguments.length - 1];
const root = document.querySelector('main') || document.body;
const hrefs = [...new Set([...root.querySelectorAll('a[href]')].map(a => a.getAttribute('href')))]
    .filter(h => h && !h.startsWith('#') && !/^(mailto|javascript|data):/i.test(h));
const pages = {};
function load(url) {
    return pages[url] = pages[url] || fetch(url).then(r => r.text().then(text => ({status: r.status, text: text,
        type: r.headers.get('content-type') || ''}))).catch(err => ({status: null, error: String(err)}));
}
Promise.all(hrefs.map(h => {
    const url = new URL(h, location.href);
    if (url.origin !== location.origin) return Promise.resolve({href: h, external: true});
    const fragment = decodeURIComponent(url.hash.slice(1));
    url.hash = '';
    return load(url.href).then(r => {
        const row = {href: h, url: url.href, status: r.status, error: r.error || null, path: url.pathname,
                     fragment: null};
        if (fragment && r.status === 200 && r.type.startsWith('text/html')) {
            const doc = new DOMParser().parseFromString(r.text, 'text/html');
            row.fragment = doc.getElementById(fragment) ? null : fragment;
        }
        return row;
    });
})).then(done);"""

# What of the main content runs past the content column or hides part of itself. A table or
# chart must fit the column, or sit in a box (itself or an ancestor inside the column) that
# scrolls horizontally and itself fits the column; an exhibit's caption and provenance line are
# text, to be read without scrolling: each must fit the column itself.
_CLIPPED = """
const column = document.querySelector('article') || document.querySelector('main') || document.body;
const col = column.getBoundingClientRect();
const root = document.querySelector('main') || document.body;
const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
const text = '.embdiag-exhibit figcaption, .embdiag-provenance';
return [...root.querySelectorAll('table, .embdiag-chart, ' + text)].filter(e => {
    let scroller = null;
    if (!e.matches(text)) {
        for (let n = e; n && n !== column; n = n.parentElement) if (scrolls(n)) { scroller = n; break; }
    }
    const box = (scroller || e).getBoundingClientRect();
    if (box.width === 0 && box.height === 0) return false;  // not displayed (a collapsed output)
    const fits = box.left >= col.left - 1 && box.right <= col.right + 1;
    return !(fits && (scroller || e.scrollWidth <= e.clientWidth + 1));
}).map(e => (e.tagName === 'TABLE' ? 'table' : e.classList.contains('embdiag-chart') ? 'chart ' + e.id : e.className
             || e.tagName.toLowerCase()) + ' ' + JSON.stringify(e.innerText.slice(0, 50)));"""


# Where the result box sits: its top (page coordinates), whether it comes before every other
# exhibit of the page and before every code toggle shown (myst-nb's hide-input ``details``,
# :data:`TOGGLES`); null where the page has none.
#: Code toggles a reader sees (myst-nb's "Show code cell source/outputs", sphinx-togglebutton's).
TOGGLES = "details.above-input, details.below-input, details.hide, .toggle-details, button.toggle-button"
_RESULT_BOX = f"""
const box = document.querySelector('.embdiag-result');
if (!box) return null;
const after = e => !!(box.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING);
const others = [...document.querySelectorAll('.embdiag-exhibit')].filter(e => !box.contains(e));
const toggles = [...document.querySelectorAll({TOGGLES!r})].filter(e => !box.contains(e) && e.checkVisibility());
return {{top: box.getBoundingClientRect().top + window.scrollY, first: others.every(after),
        toggles_before: toggles.filter(e => !after(e)).length}};"""

# The smallest text of every drawn chart a reader sees as drawn on the page: its font size times the
# chart's scale (a chart scaled to its column draws its text smaller); charts in collapsed blocks skipped.
_CHART_TEXT = """
return [...document.querySelectorAll('.embdiag-chart svg.marks')].filter(svg => svg.checkVisibility()).map(svg => {
    const scale = svg.getBoundingClientRect().width / (svg.width.baseVal.value || 1);
    const sizes = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
        .map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
    return {id: svg.closest('.embdiag-chart').id, smallest: sizes.length ? Math.min(...sizes) : null};
});"""

# The tallest row a reader sees of each table (rows of collapsed blocks are not rendered).
_ROWS = """
return [...document.querySelectorAll('article table, main table')].map(t => {
    const rows = [...t.querySelectorAll('tr')].filter(r => r.checkVisibility());
    const tallest = rows.reduce((a, r) => r.getBoundingClientRect().height > a.h
        ? {h: r.getBoundingClientRect().height, text: r.innerText.slice(0, 40)} : a, {h: 0, text: ''});
    return {height: tallest.h, row: tallest.text, caption: (t.closest('figure')?.id || t.id || '')};
}).filter(t => t.height > 0);"""

# The prose a reader sees: the article's rendered text (collapsed blocks and hidden code are not
# rendered, so not included) less the charts' and tables' own text.
_PROSE = """
const root = document.querySelector('article') || document.querySelector('main') || document.body;
const hidden = [...root.querySelectorAll('.embdiag-chart, table')];
const before = hidden.map(e => e.style.display);
hidden.forEach(e => { e.style.display = 'none'; });
const text = root.innerText;
hidden.forEach((e, i) => { e.style.display = before[i]; });
return text;"""

#: Issue #47: the most prose words a page may show, and all pages together (search page excluded).
MAX_WORDS, MAX_SITE_WORDS = 2000, 15000
#: Issue #47: the largest share of sentences two pages may have in common (:func:`overlap`).
MAX_OVERLAP = 0.30
#: A sentence counts for :func:`sentences` from this many words.
SENTENCE_WORDS = 5
#: Issue #47: at desktop width the result box starts within this many px of the page's top.
FIRST_SCREEN = 900
#: Issue #47, at phone width: chart text at least this many px; no table row taller.
PHONE_TEXT, PHONE_ROW = 11, 120
#: Pages whose prose is not the book's (the search results page).
NOT_PROSE = ("search.html",)


def words(text: str) -> int:
    """Whitespace-separated words of ``text``."""
    return len(text.split())


def sentences(text: str) -> set[str]:
    """The sentences of ``text`` with at least :data:`SENTENCE_WORDS` words, lowercased and with
    whitespace collapsed. A sentence ends at ``.``, ``!`` or ``?`` before whitespace, or at a line
    break (headings, list items and table-free blocks end a sentence)."""
    found = set()
    for line in text.splitlines():
        for part in re.split(r"(?<=[.!?])\s+", line):
            norm = " ".join(part.lower().split())
            if len(norm.split()) >= SENTENCE_WORDS:
                found.add(norm)
    return found


def overlap(a: set[str], b: set[str]) -> float:
    """Share of sentences two pages have in common: ``|a ∩ b| / min(|a|, |b|)`` (0 if either has none)."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _screenshot_folder() -> Path:
    folder = Path(os.environ.get("EMBDIAG_SCREENSHOTS") or pipeline.REPO / "book" / "_build" / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _screenshots() -> Path:
    folder = _screenshot_folder()
    for old in folder.glob("*.png"):  # this test's earlier shots only: a page that is gone leaves none
        if re.fullmatch(r".+-(%s)\.png" % "|".join(map(str, WIDTHS)), old.name):
            old.unlink()
    return folder


def _shot_name(page: str, width: int) -> str:
    return f"{page.removesuffix('.html').replace('/', '_')}-{width}.png"


@pytest.fixture(scope="module")
def visits(site, browser) -> dict[tuple[str, int], dict]:
    """Visit every page at every width once; return what each visit saw, keyed by (page, width)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    folder = _screenshots()
    seen = {}
    for width in WIDTHS:
        for page in pages(site.html):
            browser.set_window_size(width, HEIGHT)
            browser.get_log("browser")  # drop what earlier pages logged
            del site.outside[:]
            query = f"?q={SEARCH_QUERY}" if page == "search.html" else ""
            browser.get(f"{site.url}/{page}{query}")
            _wait_for_charts(browser)
            visit = {"search_results": None}
            if query:
                try:
                    WebDriverWait(browser, 30).until(
                        lambda b: b.execute_script(
                            "const s = document.querySelector('#search-results .search-summary');"
                            "return s && s.textContent.trim().length > 0"
                        )
                    )
                except TimeoutException:
                    pass
                visit["search_results"] = browser.execute_script(
                    "return document.querySelectorAll('#search-results ul.search li').length"
                )
            visit["charts"] = browser.execute_script(_CHART_STATES)
            visit["errors"] = _severe(browser)
            visit["csv"] = browser.execute_async_script(_CSV_LINKS)
            visit["links"] = browser.execute_async_script(_MAIN_LINKS)
            visit["clipped"] = browser.execute_script(_CLIPPED)
            visit["result_box"] = browser.execute_script(_RESULT_BOX)
            visit["chart_text"] = browser.execute_script(_CHART_TEXT)
            visit["prose"] = browser.execute_script(_PROSE)
            visit["words"] = words(visit["prose"])
            visit["rows"] = browser.execute_script(_ROWS)
            visit["scroll_width"], visit["inner_width"] = browser.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth]"
            )
            visit["outside"] = list(site.outside)
            # Full page: the viewport grows to the page's height (the window's frame is added back).
            chrome, height = browser.execute_script(
                "return [window.outerHeight - window.innerHeight, document.documentElement.scrollHeight]"
            )
            visit["page_height"] = height
            browser.set_window_size(width, min(height, MAX_SHOT) + chrome)
            visit["screenshot"] = folder / _shot_name(page, width)
            browser.save_screenshot(str(visit["screenshot"]))
            # Later entries, less the failed fetches of the link checks (reported by those tests).
            fetched = {r["url"] for r in visit["links"] if "url" in r}
            visit["errors"] += [m for m in _severe(browser) if m.split(" ")[0] not in fetched]
            seen[page, width] = visit
    browser.set_window_size(WIDTHS[0], HEIGHT)
    return seen


def _severe(driver) -> list[str]:
    """The browser console's SEVERE entries since the last call (script errors, failed loads)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _failures(visits, check) -> list[str]:
    return [f"{page} at {width} px: {problem}" for (page, width), visit in visits.items() for problem in check(visit)]


def test_book_has_chart_pages(site):
    assert (site.html / "_static" / "embdiag-vega.js").stat().st_size > 100_000
    assert _pages_with_charts(site.html), "no page of the built book contains a chart"


def test_every_page_is_visited(site, visits):
    names = pages(site.html)
    root = yaml.safe_load((pipeline.REPO / "_toc.yml").read_text())["root"]
    assert {f"{root}.html", "search.html"} <= set(names)
    assert sum(p.startswith("chapters/") for p in names) >= 10
    for page in _pages_with_charts(site.html):
        if not page.relative_to(site.html).as_posix().startswith("_"):
            assert (page.relative_to(site.html).as_posix(), WIDTHS[0]) in visits
    assert set(visits) == {(p, w) for p in names for w in WIDTHS}


def test_site_root_serves_the_landing_page(site, browser):
    """The sub-path itself (what a reader types) shows the book's root page, through
    Jupyter Book's relative redirect where the root page is not ``index``."""
    from selenium.webdriver.support.ui import WebDriverWait

    root = yaml.safe_load((pipeline.REPO / "_toc.yml").read_text())["root"]
    del site.outside[:]
    browser.get(f"{site.url}/")
    WebDriverWait(browser, 10).until(
        lambda b: (
            b.current_url in (f"{site.url}/", f"{site.url}/{root}.html")
            and b.execute_script("return !!document.querySelector('article h1')")
        )
    )
    assert not site.outside


def test_moved_pages_land_where_their_content_lives(site, browser):
    from selenium.webdriver.support.ui import WebDriverWait

    from embdiag.paper.sphinxext import MOVED

    for old, new in MOVED.items():
        browser.get(f"{site.url}/{old}.html")
        WebDriverWait(browser, 10).until(lambda b: b.current_url.endswith(f"/{new}.html"))
        assert browser.execute_script("return document.querySelector('article') !== null"), old


def test_handler_serves_only_the_sub_path(site):
    """The server the other tests rely on: the prefix is required, and stripped once."""
    import urllib.error
    import urllib.request

    origin = site.url.removesuffix(PREFIX.rstrip("/"))
    with urllib.request.urlopen(f"{site.url}/chapters/00_cover.html") as r:
        assert r.status == 200 and b"<html" in r.read()
    del site.outside[:]
    for path in (
        "/chapters/00_cover.html",
        "/_static/embdiag.css",
        f"{PREFIX.rstrip('/')}{PREFIX}chapters/00_cover.html",
    ):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(origin + path)
        assert err.value.code == 404, path
    assert site.outside == ["/chapters/00_cover.html", "/_static/embdiag.css"]
    del site.outside[:]


def test_every_page_loads_without_errors_or_requests_outside_the_sub_path(visits):
    """No SEVERE console entry (a script error, a failed load such as an asset's 404) and no
    request that an absolute URL would send past the sub-path."""

    def check(visit):
        yield from (f"console: {m}" for m in visit["errors"])
        yield from (f"requested outside {PREFIX}: {p}" for p in visit["outside"])

    assert not (failed := _failures(visits, check)), "\n".join(failed)


def test_every_chart_draws_offline(visits):
    def check(visit):
        for s in visit["charts"]:
            if s["error"] or not s["rendered"]:
                yield f"chart {s['id']} failed: {s['error'] or 'never finished drawing'}"
            elif s["marks"] == 0:
                yield f"chart {s['id']} drew no marks"

    assert any(v["charts"] for v in visits.values()), "no chart on any page"
    assert not (failed := _failures(visits, check)), "\n".join(failed)


def _csv_problems(link) -> list[str]:
    name = f"CSV link {link['href']!r}"
    if not (link["download"] or "").endswith(".csv"):
        return [f"{name}: download attribute {link['download']!r}, not a NAME.csv"]
    if link["status"] != 200:
        return [f"{name}: status {link['status']} {link.get('error') or ''}"]
    rows = list(csv.reader(io.StringIO(link["text"])))
    if len(rows) < 2:
        return [f"{name}: {len(rows)} lines, no data row under a header"]
    header = rows[0]
    problems = []
    if not all(h.strip() for h in header) or len(set(header)) != len(header):
        problems.append(f"{name}: first line {header!r} is not a header (empty or repeated names)")
    if ragged := [i for i, r in enumerate(rows[1:], 2) if len(r) != len(header)]:
        problems.append(f"{name}: lines {ragged[:5]} do not have the header's {len(header)} fields")
    return problems


def test_csv_problems_catch_bad_downloads():
    """The CSV check itself fails a broken download (it passes vacuously on pages with none)."""
    good = {"href": "data:", "download": "x.csv", "status": 200, "text": "a,b\n1,2\n"}
    assert _csv_problems(good) == []
    for bad in (
        {"download": None},
        {"download": "x.txt"},
        {"status": 404},
        {"text": ""},
        {"text": "a,b\n"},
        {"text": "a,\n1,2\n"},
        {"text": "a,a\n1,2\n"},
        {"text": "a,b\n1,2,3\n"},
    ):
        assert _csv_problems({**good, **bad}), bad


def test_every_csv_link_resolves_to_a_csv(visits):
    """Each ``a.embdiag-csv`` has a ``download`` name and its href yields a header and rows."""

    def check(visit):
        for link in visit["csv"]:
            yield from _csv_problems(link)

    assert not (failed := _failures(visits, check)), "\n".join(failed)


def test_every_internal_link_resolves(visits):
    """Every same-origin link of the main content answers 200 within the sub-path, and a
    fragment names an element of its target page."""

    def check(visit):
        for link in visit["links"]:
            if link.get("external"):
                continue
            if link["status"] != 200:
                yield f"link {link['href']!r} -> {link['path']}: status {link['status']} {link['error'] or ''}"
            elif link["fragment"]:
                yield f"link {link['href']!r}: no element #{link['fragment']} on {link['path']}"

    assert sum(len(v["links"]) for v in visits.values()) > len(visits), "too few links found to check"
    assert not (failed := _failures(visits, check)), "\n".join(failed)


def test_wide_tables_and_charts_scroll_inside_their_own_box(visits):
    """No table or chart is cut off at the page edge: each either fits the content column or
    scrolls horizontally inside its own box; captions fit the column (desktop and phone width)."""

    def check(visit):
        return (f"cut off at the column edge: {what}" for what in visit["clipped"])

    assert not (failed := _failures(visits, check)), "\n".join(failed)


def test_every_chapter_with_results_opens_with_its_result_box_on_the_first_screen(visits):
    """Issue #47, the answer first: the chapters that measure something (tests/paper/test_result_first.py)
    have a result box; on every page that has one, it comes before any other exhibit and before any
    code toggle shown, and at desktop width it starts within :data:`FIRST_SCREEN` px of the top."""
    from test_result_first import WITH_RESULTS

    def check(page, visit):
        box = visit["result_box"]
        if box is None:
            if page in chapters:
                yield "no result box"
            return
        if not box["first"]:
            yield "an exhibit comes before the result box"
        if box["toggles_before"]:
            yield f"{box['toggles_before']} code toggle(s) come before the result box"
        if visit["inner_width"] == WIDTHS[0] and box["top"] > FIRST_SCREEN:
            yield f"the result box starts {box['top']:.0f} px down (at most {FIRST_SCREEN} px)"

    chapters = {f"chapters/{page}.html" for page in WITH_RESULTS}
    assert chapters <= {page for page, _ in visits}, "a chapter with results is not part of the site"
    failed = [
        f"{page} at {width} px: {problem}" for (page, width), visit in visits.items() for problem in check(page, visit)
    ]
    assert not failed, "\n".join(failed)


def _desktop(visits) -> dict[str, dict]:
    """The desktop visit of every page of the book's prose (not :data:`NOT_PROSE`)."""
    return {page: v for (page, width), v in visits.items() if width == WIDTHS[0] and page not in NOT_PROSE}


def test_no_page_shows_more_than_2000_prose_words(visits):
    """Issue #47: visible prose (tables' and charts' text excluded, collapsed blocks not rendered)."""
    failed = [
        f"{page}: {v['words']:,} prose words (at most {MAX_WORDS:,})"
        for page, v in _desktop(visits).items()
        if v["words"] > MAX_WORDS
    ]
    assert not failed, "\n".join(failed)


def test_the_site_shows_at_most_15000_prose_words(visits):
    pages = _desktop(visits)
    total = sum(v["words"] for v in pages.values())
    listing = "\n".join(
        f"  {v['words']:6,}  {page}" for page, v in sorted(pages.items(), key=lambda kv: -kv[1]["words"])
    )
    assert total <= MAX_SITE_WORDS, (
        f"{total:,} prose words over {len(pages)} pages (at most {MAX_SITE_WORDS:,}):\n{listing}"
    )


def test_no_two_pages_share_more_than_30_percent_of_their_sentences(visits):
    """Issue #47: a page does not repeat another's sentences (:func:`sentences`, :func:`overlap`)."""
    said = {page: sentences(v["prose"]) for page, v in _desktop(visits).items()}
    failed = []
    for (a, sa), (b, sb) in itertools.combinations(sorted(said.items()), 2):
        if (share := overlap(sa, sb)) > MAX_OVERLAP:
            common = sorted(sa & sb)
            failed.append(
                f"{a} and {b} share {len(common)} sentences, {share:.0%} of the shorter page's "
                f"{min(len(sa), len(sb))} (at most {MAX_OVERLAP:.0%}), e.g. {common[0][:80]!r}"
            )
    assert not failed, "\n".join(failed)


def test_chart_text_is_at_least_12_px_at_desktop_and_11_px_at_phone_width(visits):
    def check(visit):
        least = 11.5 if visit["inner_width"] == WIDTHS[0] else PHONE_TEXT
        for chart in visit["chart_text"]:
            if chart["smallest"] is not None and chart["smallest"] < least:
                yield f"chart {chart['id']} draws text at {chart['smallest']:.1f} px (at least {least} px)"

    assert not (failed := _failures(visits, check)), "\n".join(failed)


def test_table_rows_are_at_most_120_px_tall_at_phone_width(visits):
    def check(visit):
        if visit["inner_width"] == WIDTHS[-1]:
            for table in visit["rows"]:
                if table["height"] > PHONE_ROW + 0.5:
                    yield (
                        f"table {table['caption'] or '(no id)'}: a row {table['height']:.0f} px tall "
                        f"(at most {PHONE_ROW} px): {table['row']!r}"
                    )

    assert not (failed := _failures(visits, check)), "\n".join(failed)


def test_page_measures_are_listed(visits, capsys):
    """Not a rule: prints, per page, the numbers the rules above read (for the issue's report)."""
    lines = [f"{'page':40} {'words':>6} {'box top':>8} {'chart px @390':>14} {'row px @390':>12}"]
    for page, v in sorted(_desktop(visits).items()):
        phone = visits[page, WIDTHS[-1]]
        texts = [c["smallest"] for c in phone["chart_text"] if c["smallest"] is not None]
        box = v["result_box"]
        lines.append(
            f"{page:40} {v['words']:6,} {box['top'] if box else float('nan'):8.0f} "
            f"{min(texts) if texts else float('nan'):14.1f} {max([t['height'] for t in phone['rows']] or [0]):12.0f}"
        )
    with capsys.disabled():
        print("\n" + "\n".join(lines))


def test_no_page_scrolls_sideways(visits):
    def check(visit):
        if visit["scroll_width"] > visit["inner_width"] + 1:
            yield f"the page is {visit['scroll_width']} px wide in a {visit['inner_width']} px window"

    assert {v["inner_width"] for v in visits.values()} == set(WIDTHS)
    assert not (failed := _failures(visits, check)), "\n".join(failed)


def test_search_finds_pages_offline(visits):
    for width in WIDTHS:
        assert visits["search.html", width]["search_results"], f"searching {SEARCH_QUERY!r} found nothing"


def test_every_page_has_a_full_page_screenshot(visits, capsys):
    from PIL import Image

    for (page, width), visit in visits.items():
        with Image.open(visit["screenshot"]) as img:
            assert img.format == "PNG" and img.width == width, (page, width, img.size)
            assert img.height >= min(visit["page_height"], MAX_SHOT), f"{page} at {width} px: not the full page"
    folder = next(iter(visits.values()))["screenshot"].parent
    with capsys.disabled():
        print(f"\nscreenshots of {len(visits)} page views: {folder}")


@pytest.mark.parametrize("width", WIDTHS)
def test_tooltips_and_legend_selection_survive(site, browser, width):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support.ui import WebDriverWait

    browser.set_window_size(width, HEIGHT)
    browser.get(f"{site.url}/chapters/20_rank_diagnostics.html")
    browser.implicitly_wait(0)
    WebDriverWait(browser, 30).until(
        lambda b: b.execute_script(
            "return [...document.querySelectorAll('.embdiag-chart')].every(e => e.dataset.rendered)"
        )
    )
    chart = browser.find_elements("css selector", ".embdiag-chart")[0]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", chart)
    point = chart.find_elements("css selector", "svg .mark-symbol path")[0]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", point)
    ActionChains(browser).move_to_element(point).perform()
    WebDriverWait(browser, 10).until(
        lambda b: b.execute_script(
            "const t = document.getElementById('vg-tooltip-element');"
            "return t && t.classList.contains('visible') && t.textContent.length > 0"
        )
    )
    tip = browser.execute_script("return document.getElementById('vg-tooltip-element').textContent")
    assert "matrix" in tip and "share" in tip

    legend = chart.find_elements("css selector", "svg .role-legend-symbol path")[0]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", legend)
    ActionChains(browser).move_to_element(legend).click().perform()
    stored = browser.execute_script(
        "const v = arguments[0].vegaView; "
        "const names = Object.keys(v.getState({data: n => n.endsWith('_store')}).data || {});"
        "return names.map(n => v.data(n).length)",
        chart,
    )
    assert stored and max(stored) == 1, f"legend click selected nothing: {stored}"
    browser.set_window_size(WIDTHS[0], HEIGHT)


@pytest.mark.parametrize("width", WIDTHS)
def test_chart_export_menu_opens_unclipped(site, browser, width):
    """A chart scrolls inside its own box at phone width: its export menu must still show whole."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.set_window_size(width, HEIGHT)
    browser.get(f"{site.url}/chapters/06_compression.html")
    _wait_for_charts(browser)
    chart = browser.find_elements("css selector", ".embdiag-chart")[0]
    summary = chart.find_element("css selector", "details > summary")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'center'})", summary)
    summary.click()
    WebDriverWait(browser, 5).until(
        lambda b: b.execute_script("return arguments[0].open", summary.find_element("xpath", ".."))
    )
    hidden = browser.execute_script(
        """
        return [...arguments[0].querySelectorAll('.vega-actions a')].filter(a => {
            const r = a.getBoundingClientRect();
            return !a.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
        }).map(a => a.textContent);""",
        chart,
    )
    names = browser.execute_script(
        "return [...arguments[0].querySelectorAll('.vega-actions a')].map(a => a.textContent)", chart
    )
    assert any("SVG" in n for n in names), names
    assert not hidden, f"at {width} px the export menu hides {hidden}"
    browser.set_window_size(WIDTHS[0], HEIGHT)


def test_attribute_selector_refilters_the_training_variants(site, browser):
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(f"{site.url}/chapters/15_training_variants.html")
    WebDriverWait(browser, 30).until(
        lambda b: b.execute_script(
            "return [...document.querySelectorAll('.embdiag-chart')].every(e => e.dataset.rendered)"
        )
    )
    chart = browser.find_elements("css selector", ".embdiag-chart")[0]
    before = browser.execute_script("return arguments[0].vegaView.signal('attribute')", chart)
    Select(chart.find_element("css selector", "select")).select_by_visible_text("weather")
    WebDriverWait(browser, 10).until(
        lambda b: b.execute_script("return arguments[0].vegaView.signal('attribute') === 'weather'", chart)
    )
    assert before == "time of day"
    marks = browser.execute_script("return arguments[0].querySelectorAll('svg .mark-symbol path').length", chart)
    assert marks > 0, "no seed marks after switching the attribute"


# -- a report written by `embdiag report`, opened as a file ---------------------------------------
@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    """``embdiag report`` on a user's files (three labelled clusters, pairs, an fp16 and a PCA copy,
    an HNSW index): the report.html it writes."""
    import numpy as np
    import pandas as pd

    from embdiag.report import cli

    folder = tmp_path_factory.mktemp("report")
    rng = np.random.default_rng(5)
    y = np.repeat(["a", "b", "c"], 150)
    X = rng.normal(size=(3, 16))[np.searchsorted(["a", "b", "c"], y)] + 0.9 * rng.normal(size=(450, 16))
    np.save(folder / "emb.npy", X.astype(np.float32))
    pd.DataFrame({"kind": y, "half": np.tile(["x", "y"], 225)}).to_csv(folder / "labels.csv", index=False)
    pd.DataFrame({"query": np.arange(0, 450, 3), "target": np.arange(1, 450, 3)}).to_csv(
        folder / "pairs.csv", index=False
    )
    out = folder / "out"
    code = cli.main(
        [
            str(folder / "emb.npy"),
            "--labels",
            str(folder / "labels.csv"),
            "--pairs",
            str(folder / "pairs.csv"),
            "--compress",
            "fp16,pca4",
            "--index",
            "hnsw",
            "--out",
            str(out),
        ],
        progress=False,
    )
    assert code == cli.OK
    return out / "report.html"


def test_a_report_opens_offline_and_draws_every_chart(report_page, browser):
    """The one file, opened from disk with every host unreachable: no console error, every chart
    drawn with marks, every CSV download a CSV, nothing past the column's edge; screenshots at
    both widths are saved beside the book's (``report-WIDTH.png``)."""
    folder = _screenshot_folder()
    for width in WIDTHS:
        browser.set_window_size(width, HEIGHT)
        browser.get_log("browser")
        browser.get(report_page.as_uri())
        _wait_for_charts(browser)
        charts = browser.execute_script(_CHART_STATES)
        assert len(charts) == 7, charts  # labels, identity, hubness, index sweep and curves, relevance, frontier
        assert all(c["rendered"] and not c["error"] and c["marks"] > 0 for c in charts), charts
        links = browser.execute_async_script(_CSV_LINKS)
        assert len(links) >= 8 and not [p for link in links for p in _csv_problems(link)]
        assert browser.execute_script(_CLIPPED) == []
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        assert _severe(browser) == []
        chrome, height = browser.execute_script(
            "return [window.outerHeight - window.innerHeight, document.documentElement.scrollHeight]"
        )
        browser.set_window_size(width, min(height, MAX_SHOT) + chrome)
        browser.save_screenshot(str(folder / f"report-{width}.png"))
    browser.set_window_size(WIDTHS[0], HEIGHT)
