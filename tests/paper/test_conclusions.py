"""The conclusions' scoreboard: the study's findings counted by verdict, the rest apart."""

from __future__ import annotations

import pandas as pd
import pytest

from embdiag.paper import conclusions


def _table(rows) -> pd.DataFrame:
    """A verdict table of ``(finding, kind, verdict)`` rows."""
    return pd.DataFrame(
        [
            {
                "finding": f,
                "kind": kind,
                "criterion": "c",
                "margin": "1 pp",
                "why this margin": "w",
                "study": "s",
                "this run": "t",
                "verdict": verdict,
                "reason": f"interval of {f}",
                "low": 0.0,
                "high": 1.0,
            }
            for f, kind, verdict in rows
        ]
    )


TABLES = {
    "training": _table(
        [("a", "study", "holds"), ("b", "study", "contradicted"), ("beyond", "addition", "contradicted")]
    ),
    "neighbour stability": _table(
        [("c", "study", "inconclusive"), ("d", "study", "not testable"), ("limit", "scope", "contradicted")]
    ),
}


def test_stack_puts_sections_in_the_studys_order_with_their_chapters():
    v = conclusions.stack(TABLES)
    assert v.columns.tolist() == conclusions.COLUMNS
    assert v["section"].tolist() == ["training"] * 3 + ["neighbour stability"] * 3
    assert set(v["chapter"]) == {"03_training", "07_neighbour_stability"}
    with pytest.raises(ValueError, match="unknown sections"):
        conclusions.stack({"appendix": TABLES["training"]})


def test_the_tally_counts_only_the_studys_findings_by_verdict():
    t = conclusions.tally(conclusions.stack(TABLES))
    assert t.loc["training"].to_dict() == {
        "declared": 2, "hold": 1, "contradicted": 1, "inconclusive": 0, "not testable": 0, "not measured": 0,
    }  # fmt: skip
    assert t.loc["neighbour stability", "declared"] == 2 and t.loc["neighbour stability", "not testable"] == 1


def test_additions_and_scope_are_tables_of_their_own():
    v = conclusions.stack(TABLES)
    assert conclusions.of_kind(v, "addition")["finding"].tolist() == ["beyond"]
    assert conclusions.of_kind(v, "scope")["finding"].tolist() == ["limit"]
    with pytest.raises(ValueError, match="kind"):
        conclusions.of_kind(v, "limitation")


def test_the_result_leads_with_the_headline_and_counts_the_study_alone():
    box = conclusions.result(conclusions.stack(TABLES), headline="Training <strong>contradicted</strong>.").html
    assert box.index("Training <strong>contradicted</strong>.") < box.index("Of the study's 4 declared findings")
    assert "1 hold here, 1 is contradicted, 1 is inconclusive and 1 is not testable here" in box
    assert "Contradicted: <em>b</em> (training)." in box and "Inconclusive: <em>c</em> (neighbour stability)." in box
    assert "<em>beyond</em>" not in box and "<em>limit</em>" not in box  # counted apart, not named as the study's
    assert "1 of this project's additions (0 holding) and 1 scope statement." in box


def test_verdict_words_index_by_section_and_finding_without_bare_bounds():
    w = conclusions.verdict_words(conclusions.stack(TABLES))
    assert w.index.names == ["section", "finding"] and "low" not in w.columns and "verdict" in w.columns
