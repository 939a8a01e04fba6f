"""Verdicts at a glance: the study's findings counted by section and verdict (the landing page's
scoreboard) and a finding-by-column matrix of verdicts (the across-encoders page).

Both read a stacked verdict table (:func:`embdiag.paper.conclusions.stack`): one row per
declared finding, its section, kind, the study's published numbers, this run's with the
interval that decided it, and the verdict. Only the study's own findings are scored; this
project's additions and the scope statements are shown, never counted.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ..metrics.inference import CONTRADICTED, HOLDS, INCONCLUSIVE, NOT_TESTABLE
from ..study.findings import NOT_MEASURED, STUDY
from ..view import theme
from .findings import in_words

#: Where a matrix's row label breaks into two lines (e.g. section, then finding).
BREAK = " — "
#: Verdicts in the order a reader weighs them: decided, then undecided, then not decidable here.
VERDICTS = (HOLDS, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE, NOT_MEASURED)


def counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The study's findings per section and verdict, long form (``section``, ``verdict``,
    ``findings``), sections in the table's order, verdicts in :data:`VERDICTS` order; verdicts
    no finding has are left out.

    >>> v = pd.DataFrame({"section": ["a", "a", "b"], "kind": ["study"] * 3, "verdict": ["holds", "holds", None]})
    >>> counts(v).to_dict("records")
    [{'section': 'a', 'verdict': 'holds', 'findings': 2}, {'section': 'b', 'verdict': 'not measured', 'findings': 1}]
    """
    study = in_words(verdicts[verdicts["kind"] == STUDY][["section", "verdict"]])
    sections = list(dict.fromkeys(study["section"]))
    out = study.value_counts(["section", "verdict"]).rename("findings").reset_index()
    out["s"] = out["section"].map(sections.index)
    out["v"] = out["verdict"].map(VERDICTS.index)
    return out.sort_values(["s", "v"]).drop(columns=["s", "v"]).reset_index(drop=True)


def chart(verdicts: pd.DataFrame, *, width: int = 420) -> alt.Chart:
    """Horizontal bars, one per section, split by verdict: how many of the study's findings
    hold, are contradicted, inconclusive, not testable or not measured in this run."""
    data = counts(verdicts)
    present = [v for v in VERDICTS if v in set(data["verdict"])]
    order = {v: i for i, v in enumerate(present)}
    data = data.assign(order=data["verdict"].map(order))
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y("section:N", sort=list(dict.fromkeys(data["section"])), title=None),
            x=alt.X("findings:Q", title="the study's findings", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color("verdict:N", scale=theme.scale(present), sort=present, title="verdict"),
            order=alt.Order("order:Q"),
            tooltip=["section:N", "verdict:N", "findings:Q"],
        )
        .properties(width=width)
    )


def table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The study's findings, one row each (index: section, finding): the verdict here, the
    study's published numbers and this run's with the interval against the margin that decided it."""
    study = in_words(verdicts[verdicts["kind"] == STUDY])
    out = study[["section", "finding", "verdict", "study", "this run", "reason"]]
    out = out.rename(columns={"study": "published", "reason": "decided by"})
    return out.set_index(["section", "finding"])


def matrix(frame: pd.DataFrame, *, row: str = "finding", column: str = "encoder", cell: int = 96) -> alt.Chart:
    """A grid of verdicts: one row per ``row`` (in the frame's order), one column of ``cell`` px per
    ``column``, each cell coloured and labelled by its ``verdict``; the ``numbers`` column, if
    present, is the cell's tooltip. Row labels break at :data:`BREAK` (never cut), and a column
    is headed by its name up to ``" / "`` (whole in the tooltip), so the grid stays narrow."""
    rows = list(dict.fromkeys(frame[row]))
    columns = list(dict.fromkeys(frame[column]))
    present = [v for v in VERDICTS if v in set(frame["verdict"])]
    tooltip = [f"{row}:N", f"{column}:N", "verdict:N"] + (["numbers:N"] if "numbers" in frame else [])
    two_lines = any(BREAK in str(r) for r in rows)
    base = alt.Chart(frame).encode(
        y=alt.Y(
            f"{row}:N", sort=rows, title=None, axis=alt.Axis(labelLimit=0, labelExpr=f"split(datum.label, '{BREAK}')")
        ),
        x=alt.X(
            f"{column}:N",
            sort=columns,
            title=None,
            axis=alt.Axis(orient="top", labelAngle=0, labelLimit=0, labelExpr="split(datum.label, ' / ')[0]"),
        ),
    )
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("verdict:N", scale=theme.scale(present), sort=present, legend=None), tooltip=tooltip
    )
    words = base.mark_text(color="white", fontWeight="bold").encode(text="verdict:N", tooltip=tooltip)
    return (cells + words).properties(width=cell * len(columns), height=(34 if two_lines else 22) * len(rows))
