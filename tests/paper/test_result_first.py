"""Results first, no leaks (issue #24), read from the executed chapters: every chapter with
results opens with its result box before any other exhibit, and no page shows a raw repr or a
``nan`` cell."""

from __future__ import annotations

import re

import nbformat
import pytest

from embdiag.paper import pipeline

#: The study's chapters with results, and the report: their result box opens the page.
STUDY = (
    "03_training",
    "04_reference_encoder",
    "05_stress_tests",
    "06_compression",
    "07_neighbour_stability",
    "08_caption_retrieval",
    "09_conclusions",
    "21_report",
)
#: The chapters that measure something: each opens with its result box (study, variants, report).
WITH_RESULTS = STUDY + (
    "10_real_encoder",
    "11_stress_tests_wordnet",
    "12_compression_wordnet",
    "13_neighbour_stability_wordnet",
    "14_caption_retrieval_wordnet",
    "16_stress_tests_vit",
    "17_compression_vit",
    "18_neighbour_stability_vit",
)
_EXHIBIT = re.compile(r'class="embdiag-(result|exhibit)')


def _pages():
    return sorted(pipeline.DEFAULT.chapters.glob("*.ipynb"))


def _outputs(path):
    for cell in nbformat.read(path, as_version=4).cells:
        yield from cell.get("outputs", [])


def _html(output) -> str:
    return "".join(output.get("data", {}).get("text/html", ""))


@pytest.mark.parametrize("page", WITH_RESULTS)
def test_the_result_box_comes_before_every_other_exhibit(page):
    path = pipeline.DEFAULT.chapters / f"{page}.ipynb"
    first = next((m.group(1) for o in _outputs(path) for m in [_EXHIBIT.search(_html(o))] if m), None)
    assert first == "result", f"{page}: the first exhibit is not the result box ({first})"
    boxes = sum(_html(o).count('class="embdiag-result"') for o in _outputs(path))
    assert boxes == 1, f"{page}: {boxes} result boxes"


@pytest.mark.parametrize("path", _pages(), ids=lambda p: p.stem)
def test_no_page_shows_a_raw_repr_or_a_nan_cell(path):
    for output in _outputs(path):
        data = output.get("data", {})
        shown = {kind for kind, text in data.items() if kind != "text/plain" and "".join(text).strip()}
        if output.get("output_type") in ("display_data", "execute_result") and not shown:
            text = "".join(data.get("text/plain", ""))
            assert not re.match(r"<[\w.]+ object", text), f"{path.stem}: a raw repr is shown: {text[:80]}"
        for text in (_html(output), "".join(data.get("text/markdown", ""))):
            cells = re.findall(r"<td[^>]*>\s*(nan|NaN)\s*</td>", text)
            assert not cells, f"{path.stem}: {len(cells)} table cells show {cells[0]!r}"
