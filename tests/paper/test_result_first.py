"""Results first, no leaks (issue #24), read from the executed chapters: every chapter with
results opens with its result box before any other exhibit; no page shows a raw repr or a
``nan`` cell, or names its data in more than one caption; each exhibit's CSV links and
provenance share one line."""

from __future__ import annotations

import re

import nbformat
import pytest

from embdiag.paper import pipeline

#: The pages that measure something: each opens with its result box before any other exhibit.
WITH_RESULTS = (
    "00_cover",
    "02_data",
    "03_training",
    "05_stress_tests",
    "06_compression",
    "07_neighbour_stability",
    "08_caption_retrieval",
    "09_conclusions",
    "10_across_encoders",
    "15_training_variants",
    "20_rank_diagnostics",
    "21_report",
    "22_choosing_a_compression",
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


#: What a data sentence contains: an encoder's pinned revision or the scene generator's version.
_DATA_SENTENCE = re.compile(r"\(revision [0-9a-f]{12}|embdiag generator v\d|profile `?\w+`?: ViT width")


def _captions(path) -> list[str]:
    return [c for o in _outputs(path) for c in re.findall(r"<figcaption>(.*?)</figcaption>", _html(o), re.S)]


@pytest.mark.parametrize("path", _pages(), ids=lambda p: p.stem)
def test_the_data_is_named_once_per_page_not_in_every_caption(path):
    named = [c for c in _captions(path) if _DATA_SENTENCE.search(c)]
    assert len(named) <= 1, f"{path.stem}: {len(named)} captions repeat the data sentence: {named[0][:120]}"


@pytest.mark.parametrize("path", _pages(), ids=lambda p: p.stem)
def test_each_exhibit_has_one_provenance_line_holding_its_csv_links(path):
    for output in _outputs(path):
        for figure in re.findall(r'<figure class="embdiag-exhibit.*?</figure>', _html(output), re.S):
            assert figure.count('class="embdiag-provenance"') == 1, f"{path.stem}: not one provenance block"
            line = re.search(
                r'<div class="embdiag-provenance">(?:<p>|<details><summary>)(.*?)(?:</p>|</summary>)', figure
            )
            assert line, f"{path.stem}: an exhibit without its provenance line"
            assert figure.count('class="embdiag-csv"') == line.group(1).count('class="embdiag-csv"'), (
                f"{path.stem}: a CSV link outside the provenance line"
            )
