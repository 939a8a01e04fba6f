"""The built book draws every chart in headless Chromium with no network."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest

from embdiag.paper import pipeline

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Build the book into a temporary folder and serve it on 127.0.0.1."""
    html = pipeline.build(output=tmp_path_factory.mktemp("book"))
    handler = functools.partial(_QuietHandler, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield html, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.fail("Debian's chromium and chromium-driver are required (make test installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,1000",
                 # Every host but the loopback server fails to resolve: a CDN dependency cannot hide.
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    yield driver
    driver.quit()


def _pages_with_charts(html: Path) -> list[Path]:
    return sorted(p for p in html.rglob("*.html") if "embdiag-chart" in p.read_text(encoding="utf-8"))


def test_book_has_chart_pages(site):
    html, _ = site
    assert (html / "_static" / "embdiag-vega.js").stat().st_size > 100_000
    assert _pages_with_charts(html), "no page of the built book contains a chart"


def test_every_chart_draws_offline(site, browser):
    from selenium.webdriver.support.ui import WebDriverWait

    html, url = site
    for page in _pages_with_charts(html):
        browser.get(f"{url}/{page.relative_to(html).as_posix()}")
        n = browser.execute_script("return document.querySelectorAll('.embdiag-chart').length")
        assert n > 0
        WebDriverWait(browser, 30).until(lambda b: b.execute_script(
            "return [...document.querySelectorAll('.embdiag-chart')]"
            ".every(e => e.dataset.rendered || e.dataset.error)"))
        states = browser.execute_script(
            "return [...document.querySelectorAll('.embdiag-chart')].map(e => "
            "({id: e.id, error: e.dataset.error || null, marks: e.querySelectorAll('svg .mark-line, "
            "svg .mark-symbol, svg .mark-rect, svg .mark-image, svg .mark-text, svg .mark-rule, svg .mark-area').length}))")
        for s in states:
            assert s["error"] is None, f"{page.name}: chart {s['id']} failed: {s['error']}"
            assert s["marks"] > 0, f"{page.name}: chart {s['id']} drew no marks"
        errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, f"{page.name}: script errors: {errors}"


def test_tooltips_and_legend_selection_survive(site, browser):
    from selenium.webdriver.common.action_chains import ActionChains

    html, url = site
    browser.get(f"{url}/chapters/01_rank_diagnostics.html")
    browser.implicitly_wait(0)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 30).until(lambda b: b.execute_script(
        "return [...document.querySelectorAll('.embdiag-chart')].every(e => e.dataset.rendered)"))
    chart = browser.find_elements("css selector", ".embdiag-chart")[0]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", chart)
    point = chart.find_elements("css selector", "svg .mark-symbol path")[0]
    ActionChains(browser).move_to_element(point).perform()
    WebDriverWait(browser, 10).until(lambda b: b.execute_script(
        "const t = document.getElementById('vg-tooltip-element');"
        "return t && t.classList.contains('visible') && t.textContent.length > 0"))
    tip = browser.execute_script("return document.getElementById('vg-tooltip-element').textContent")
    assert "matrix" in tip and "share" in tip

    legend = chart.find_elements("css selector", "svg .role-legend-symbol path")[0]
    ActionChains(browser).move_to_element(legend).click().perform()
    stored = browser.execute_script(
        "const v = arguments[0].vegaView; const names = Object.keys(v.getState({data: n => n.endsWith('_store')}).data || {});"
        "return names.map(n => v.data(n).length)", chart)
    assert stored and max(stored) == 1, f"legend click selected nothing: {stored}"


def test_attribute_selector_refilters_the_training_variants(site, browser):
    from selenium.webdriver.support.ui import Select, WebDriverWait

    html, url = site
    browser.get(f"{url}/chapters/05_training_variants.html")
    WebDriverWait(browser, 30).until(lambda b: b.execute_script(
        "return [...document.querySelectorAll('.embdiag-chart')].every(e => e.dataset.rendered)"))
    chart = browser.find_elements("css selector", ".embdiag-chart")[0]
    before = browser.execute_script("return arguments[0].vegaView.signal('attribute')", chart)
    Select(chart.find_element("css selector", "select")).select_by_visible_text("weather")
    WebDriverWait(browser, 10).until(lambda b: b.execute_script(
        "return arguments[0].vegaView.signal('attribute') === 'weather'", chart))
    assert before == "time of day"
    marks = browser.execute_script("return arguments[0].querySelectorAll('svg .mark-symbol path').length", chart)
    assert marks > 0, "no seed marks after switching the attribute"


def test_wide_tables_scroll_inside_their_own_box(site, browser):
    """No table of a chapter's output is cut off at the page edge: each either fits the
    content column or scrolls horizontally inside its own box."""
    html, url = site
    pages = sorted((html / "chapters").glob("*.html"))
    assert pages
    for width, page in [(w, p) for w in (1400, 390) for p in pages]:  # desktop, then phone width
        browser.set_window_size(width, 1000)
        browser.get(f"{url}/chapters/{page.name}")
        clipped = browser.execute_script("""
            const main = document.querySelector('main') || document.body;
            const right = main.getBoundingClientRect().right;
            return [...document.querySelectorAll('.cell_output table')].filter(t => {
                const box = t.getBoundingClientRect();
                const scrolls = ['auto', 'scroll'].includes(getComputedStyle(t).overflowX);
                return box.right > right + 1 || (t.scrollWidth > t.clientWidth + 1 && !scrolls);
            }).map(t => t.innerText.slice(0, 60));""")
        assert not clipped, f"{page.name} at {width} px: tables cut off at the page edge: {clipped}"
    browser.set_window_size(1400, 1000)
