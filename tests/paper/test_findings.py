"""The findings protocol (embdiag/paper/findings.py): verdict tables, their words and summary."""

import pandas as pd
import pytest

from embdiag import artifacts
from embdiag.paper import findings

CRITERIA = {"a": "x > 0", "b": "y > 0", "c": "z > 0"}


def test_verdicts_follow_the_declared_order_and_columns():
    v = findings.verdicts(CRITERIA, [("c", "s", "z = 1", 1), ("a", "s", "x = 1", True), ("b", "s", "y = 0", False)])
    assert v["finding"].tolist() == ["a", "b", "c"]
    assert v.columns.tolist() == ["finding", "criterion", "study", "this run", "reproduces"]
    assert v["reproduces"].tolist() == [True, False, True] and v["reproduces"].dtype == bool
    assert v["criterion"].tolist() == list(CRITERIA.values())


def test_verdicts_optional_columns_and_unmeasured():
    v = findings.verdicts({"a": "x"}, [("a", "s", "t", True, None)], origin={"a": "a user"})
    assert v.columns.tolist() == [
        "finding",
        "from",
        "criterion",
        "study",
        "this run",
        "holds in the study",
        "reproduces",
    ]
    assert v.loc[0, "from"] == "a user" and v.loc[0, "holds in the study"] and v.loc[0, "reproduces"] is None


@pytest.mark.parametrize(
    "rows",
    [
        [("a", "", "", True), ("b", "", "", True)],  # c missing
        [("a", "", "", True), ("b", "", "", True), ("c", "", "", True), ("d", "", "", True)],  # d undeclared
        [("a", "", "", True), ("a", "", "", True), ("b", "", "", True), ("c", "", "", True)],  # a twice
    ],
)
def test_verdicts_need_every_declared_finding_once(rows):
    with pytest.raises(ValueError, match="declared"):
        findings.verdicts(CRITERIA, rows)


def test_in_words_writes_booleans_and_verdicts_only():
    t = findings.in_words(
        pd.DataFrame({"ok": [True, False], "n": [1, 0], "text": ["True", "x"], "reproduces": [None, False]})
    )
    assert t["ok"].tolist() == ["yes", "no"] and t["n"].tolist() == [1, 0] and t["text"].tolist() == ["True", "x"]
    assert t["reproduces"].tolist() == ["not measured", "no"]


def test_table_is_indexed_by_finding():
    v = findings.verdicts(CRITERIA, [("a", "", "", True), ("b", "", "", False), ("c", "", "", None)])
    t = findings.table(v)
    assert list(t.index) == list(CRITERIA) and t["reproduces"].tolist() == ["yes", "no", "not measured"]


def test_summary_counts_measured_findings():
    v = findings.verdicts(CRITERIA, [("a", "", "1", True), ("b", "", "2", False), ("c", "", "3", None)])
    text = findings.summary(v, "{held} of {measured} measured findings hold")
    assert text.startswith("1 of 2 measured findings hold:\n\n")
    assert "- *b* does **not** hold here (y > 0): 2." in text and "- *c*: not measured in this run." in text
    assert "- *a* holds here: 1." in findings.summary(v, "{held}", criterion=False)


def test_read_published_records_the_read(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("condition,v\nu,1\n")
    before = len(artifacts.reads())
    t = findings.read_published("ignored.csv", path, index_col="condition")
    assert t.loc["u", "v"] == 1 and len(artifacts.reads()) == before + 1
    with pytest.raises(FileNotFoundError):
        findings.read_published("no such table.csv")


def test_docstring_examples():
    import doctest

    results = doctest.testmod(findings, optionflags=doctest.NORMALIZE_WHITESPACE, report=False)
    assert results.attempted > 0 and results.failed == 0


def test_the_result_box_names_every_finding_once_with_the_numbers_of_those_that_fail():
    v = findings.verdicts(CRITERIA, [("a", "", "x = 1", True), ("b", "", "y = -1 < 0", False), ("c", "", "", None)])
    box = findings.result(v, "{held} of {measured} hold", figure=findings.box("inner")).html
    assert box.startswith('<div class="embdiag-result">') and "1 of 2 hold: <em>a</em>." in box
    assert "Not holding: <em>b</em> (y = -1 &lt; 0)." in box and "Not measured in this run: <em>c</em>." in box
    assert box.count("<em>a</em>") == box.count("<em>b</em>") == box.count("<em>c</em>") == 1
    assert box.endswith("inner</p></div></div>")
