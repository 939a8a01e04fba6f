"""Notebook agreement: words exactly, numbers within tolerance or one unit of the last digit shown."""

from __future__ import annotations

import nbformat
import pytest

from embdiag.paper import agreement


def _nb(*outputs) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A chapter"), nbformat.v4.new_code_cell("x", outputs=list(outputs))]
    return nb


def _html(text: str):
    return nbformat.v4.new_output("display_data", data={"text/html": text, "text/plain": "<Exhibit>"})


def test_numbers_are_found_as_written_and_identifiers_are_not():
    skeleton, found = agreement.numbers(
        "RankMe 36.50 → 666.98; P@10 33.12% vs floor 33.42% (−0.30 pp), s0 on "
        "x86-64 rows 2,000 var 6.55e-05 [-0.08, 0.68] rank-10 768-d cell-3 .5 margin 6.765 × 10⁻⁶"
    )
    assert found == [
        "36.50",
        "666.98",
        "10",
        "33.12",
        "33.42",
        "−0.30",
        "2,000",
        "6.55e-05",
        "-0.08",
        "0.68",
        "768",
        ".5",
        "6.765 × 10⁻⁶",
    ]
    assert "s0" in skeleton and "x86-64" in skeleton and "rank-10" in skeleton and "cell-3" in skeleton


@pytest.mark.parametrize(
    "a, b, agree",
    [
        ("33.12%", "33.12%", True),
        ("33.12%", "33.13%", True),  # one unit of the last digit shown: a rounding boundary
        ("33.12%", "33.14%", False),
        ("0.05623413251903491", "0.056234132519034905", True),  # the 17th digit of a float on another path
        ("0.0562341", "0.0562342", True),
        ("0.05623413251903491", "0.0562545", False),
        ("0.00316805", "0.00316811", True),  # a float32 margin: relative 2e-5
        ("5.49e-07", "7.64e-07", True),  # float32 rounding itself: below the absolute 1e-6
        ("5.49e-07", "2.1e-06", False),
        ("983", "984", True),
        ("983", "985", False),
        ("1.5e-03", "1.6e-03", True),
        ("1.5e-03", "1.7e-03", False),
        # a small value as tables show it, one number: float32 rounding of unit-scale scores
        ("6.765 × 10⁻⁶", "6.795 × 10⁻⁶", True),
        ("6.765 × 10⁻⁶", "8.795 × 10⁻⁶", False),
        ("−8.214 × 10⁻⁵", "−8.215 × 10⁻⁵", True),
        ("−8.214 × 10⁻⁵", "−8.414 × 10⁻⁵", False),  # 2e-6 apart, not 0.002
    ],
)
def test_numbers_within_tolerance(a, b, agree):
    got = agreement.compare(_nb(_html(f"<td>{a}</td>")), _nb(_html(f"<td>{b}</td>")))
    assert (not got) is agree, got


def test_words_and_verdicts_must_be_identical():
    got = agreement.compare(_nb(_html("<td>holds</td><td>1.0</td>")), _nb(_html("<td>fails</td><td>1.0</td>")))
    assert len(got) == 1 and got[0].cell == 1 and got[0].output == 0 and "text differs" in got[0].what
    assert "holds" in str(got[0]) and str(got[0]).startswith("cell 1, output 0: text/html")


def test_what_follows_exact_bits_is_masked():
    a = (
        '<div id="vega-0123456789ab"></div><table id="T_abcde_"><td class="embdiag-max">▲ 3.1</td></table>'
        '<span class="embdiag-sha" title="x">0123456789ab</span><a href="data:text/csv,a%2Cb%0A0.5%2C1">'
    )
    b = (
        '<div id="vega-ba9876543210"></div><table id="T_edcba_"><td class="embdiag-min">▼ 3.1</td></table>'
        '<span class="embdiag-sha" title="x">ba9876543210</span><a href="data:text/csv,a%2Cb%0A0.5%2C1">'
    )
    assert agreement.compare(_nb(_html(a)), _nb(_html(b))) == []
    assert agreement.compare(_nb(_html(a)), _nb(_html(b)), exact=True)  # but not exactly the same


def test_structure_differences_are_named():
    one, two = _nb(_html("1")), _nb(_html("1"), _html("2"))
    assert "1 outputs committed, 2 re-executed" in agreement.compare(one, two)[0].what
    longer = _nb(_html("1"))
    longer.cells.append(nbformat.v4.new_markdown_cell("more"))
    assert agreement.compare(one, longer)[0].what == "2 cells committed, 3 re-executed"
    edited = _nb(_html("1"))
    edited.cells[0].source = "# Another title"
    assert agreement.compare(one, edited)[0].what == "the cell's source or type differs"
    stream = nbformat.v4.new_output("stream", name="stdout", text="took 1.0 s\n")
    kinds = agreement.compare(_nb(stream), _nb(_html("took 1.0 s")))
    assert "output kinds differ" in kinds[0].what


def test_compare_files(tmp_path):
    a, b = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    nbformat.write(_nb(_html("<td>0.30</td>")), a)
    nbformat.write(_nb(_html("<td>0.61</td>")), b)
    assert agreement.compare_files(a, a) == []
    [d] = agreement.compare_files(a, b)
    assert "number 0.30 became 0.61" in d.what
