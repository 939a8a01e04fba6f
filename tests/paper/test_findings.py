"""The findings protocol (embdiag/study/findings.py: claims, verdict tables) and how a verdict table
is shown (embdiag/paper/findings.py: words, summary, result box)."""

import pandas as pd
import pytest

from embdiag import artifacts
from embdiag.metrics.inference import at_least, not_testable, within
from embdiag.paper import findings
from embdiag.study import findings as protocol
from embdiag.view import result as view_result

CRITERIA = {
    "a": protocol.Claim("x > 0", "0", "sign"),
    "b": protocol.Claim("y > 0", "0", "sign"),
    "c": protocol.Claim("z within 1", "1 pp", "the study's resolution", kind="addition"),
}
HOLDS, CON, INC = at_least(0.5, 1.5), at_least(-2, -1), within(-1.5, 0.5, 1)


def test_verdicts_follow_the_declared_order_and_columns():
    v = protocol.verdicts(CRITERIA, [("c", "s", "z", INC), ("a", "s", "x = 1", HOLDS), ("b", "s", "y", CON)])
    assert v["finding"].tolist() == ["a", "b", "c"]
    assert v.columns.tolist() == [
        "finding", "kind", "criterion", "margin", "why this margin", "study", "this run", "verdict", "reason", "low",
        "high",
    ]  # fmt: skip
    assert v["verdict"].tolist() == ["holds", "contradicted", "inconclusive"]
    assert v["kind"].tolist() == ["study", "study", "addition"] and v["margin"].tolist() == ["0", "0", "1 pp"]
    assert v.loc[2, "low"] == -1.5 and v.loc[2, "high"] == 0.5 and "crosses ±1" in v.loc[2, "reason"]


def test_verdicts_optional_columns_and_unmeasured():
    v = protocol.verdicts(CRITERIA, [("a", "s", "t", HOLDS, None), ("b", "", "", None), ("c", "", "", CON)])
    assert "holds in the study" in v.columns and v.loc[0, "holds in the study"] == "holds"
    assert v.loc[0, "verdict"] == "not measured" and v.loc[1, "holds in the study"] == "not measured"
    assert pd.isna(v.loc[0, "low"])


def test_a_changed_criterion_keeps_its_old_verdict_beside_the_new():
    criteria = dict(CRITERIA, a=protocol.Claim("x > 0 with its interval", "0", "sign", was="mean x > 0"))
    rows = [("a", "", "", INC), ("b", "", "", HOLDS), ("c", "", "", HOLDS)]
    v = protocol.verdicts(criteria, rows, was={"a": True})
    assert v.loc[0, ["old criterion", "old verdict", "verdict"]].tolist() == ["mean x > 0", "yes", "inconclusive"]
    assert v.loc[1, "old verdict"] == ""
    with pytest.raises(ValueError, match="was"):
        protocol.verdicts(criteria, rows)


@pytest.mark.parametrize(
    "rows, match",
    [
        ([("a", "", "", HOLDS), ("b", "", "", HOLDS)], "declared"),  # c missing
        ([("a", "", "", HOLDS), ("b", "", "", HOLDS), ("c", "", "", HOLDS), ("d", "", "", HOLDS)], "declared"),
        ([("a", "", "", HOLDS), ("a", "", "", HOLDS), ("b", "", "", HOLDS), ("c", "", "", HOLDS)], "declared"),
        ([("a", "", "", True), ("b", "", "", HOLDS), ("c", "", "", HOLDS)], "Decision"),  # a point verdict
    ],
)
def test_verdicts_need_every_declared_finding_once_decided_by_an_interval(rows, match):
    with pytest.raises(ValueError, match=match):
        protocol.verdicts(CRITERIA, rows)


@pytest.mark.parametrize("field, value", [("kind", "limitation"), ("margin", ""), ("why", " ")])
def test_a_claim_needs_a_known_kind_a_margin_and_a_reason(field, value):
    args = {"criterion": "x > 0", "margin": "0", "why": "sign"} | {field: value}
    with pytest.raises(ValueError, match=field):
        protocol.Claim(**args)


def test_in_words_writes_booleans_and_missing_verdicts_only():
    t = findings.in_words(pd.DataFrame({"ok": [True, False], "n": [1, 0], "verdict": [None, "holds"]}))
    assert t["ok"].tolist() == ["yes", "no"] and t["n"].tolist() == [1, 0]
    assert t["verdict"].tolist() == ["not measured", "holds"]


def test_table_is_indexed_by_finding_without_the_bare_bounds():
    t = findings.table(protocol.verdicts(CRITERIA, [("a", "", "", HOLDS), ("b", "", "", CON), ("c", "", "", None)]))
    assert list(t.index) == list(CRITERIA) and t["verdict"].tolist() == ["holds", "contradicted", "not measured"]
    assert "low" not in t.columns


def test_summary_counts_every_verdict():
    nt = not_testable("nothing changed")
    v = protocol.verdicts(CRITERIA, [("a", "", "1", HOLDS), ("b", "", "2", nt), ("c", "", "3", None)])
    text = findings.summary(v, "{held} of {measured} hold, {untestable} not testable, {unmeasured} not measured")
    assert text.startswith("1 of 2 hold, 1 not testable, 1 not measured:\n\n")
    assert "- *b* is not testable here (y > 0; margin 0): 2; nothing changed." in text
    assert "- *c*: not measured in this run." in text
    assert "- *a* holds here: 1; interval [+0.5, +1.5] lies wholly above 0." in findings.summary(v, "", criterion=False)


def test_counts():
    v = protocol.verdicts(CRITERIA, [("a", "", "", HOLDS), ("b", "", "", CON), ("c", "", "", INC)])
    assert findings.counts(v) == {
        "held": 1, "contradicted": 1, "inconclusive": 1, "untestable": 0, "unmeasured": 0, "measured": 3,
    }  # fmt: skip


def test_read_published_records_the_read(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("condition,v\nu,1\n")
    before = len(artifacts.reads())
    t = protocol.read_published("ignored.csv", path, index_col="condition")
    assert t.loc["u", "v"] == 1 and len(artifacts.reads()) == before + 1
    with pytest.raises(FileNotFoundError):
        protocol.read_published("no such table.csv")


def test_docstring_examples():
    import doctest

    results = doctest.testmod(findings, optionflags=doctest.NORMALIZE_WHITESPACE, report=False)
    assert results.attempted > 0 and results.failed == 0


def test_the_result_box_names_each_finding_by_verdict_then_tabulates_what_decided_it():
    v = protocol.verdicts(CRITERIA, [("a", "", "x = 1", HOLDS), ("b", "", "y < 0", CON), ("c", "", "", None)])
    box = findings.result(v, "{held} of {measured} hold", figure=view_result.box("inner")).html
    text = box[: box.index("</p>")]
    assert box.startswith('<div class="embdiag-result">') and "1 of 2 hold: <em>a</em>." in text
    assert "Contradicted: <em>b</em>." in text and "Not measured in this run: <em>c</em>." in text
    assert text.count("<em>a</em>") == text.count("<em>b</em>") == text.count("<em>c</em>") == 1
    assert box.index("inner") < box.index('<table class="embdiag-decisions">'), "the figure comes before the table"
    assert "<td>contradicted</td><td>interval [-2, -1] lies wholly below 0, margin 0</td>" in box
    assert "<td><em>c</em></td><td>not measured</td><td></td></tr>" in box
    v = protocol.verdicts(CRITERIA, [("a", "", "", INC), ("b", "", "", not_testable("x<y")), ("c", "", "", HOLDS)])
    box = findings.result(v, "{held} of {measured}").html
    assert "Inconclusive: <em>a</em>." in box and "<td>interval [-1.5, +0.5] crosses ±1, margin 0</td>" in box
    assert "Not testable here: <em>b</em>." in box and "<td>x&lt;y, margin 0</td>" in box


def test_the_protocols_docstring_examples():
    import doctest

    results = doctest.testmod(protocol, optionflags=doctest.NORMALIZE_WHITESPACE, report=False)
    assert results.attempted > 0 and results.failed == 0
