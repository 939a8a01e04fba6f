"""How a verdict table (:func:`embdiag.study.findings.verdicts`) is shown: in words
(:func:`in_words`, :func:`table`), counted (:func:`counts`), summed up in a sentence
(:func:`summary`) and as a page's result box (:func:`result`, an :mod:`embdiag.view.result` box); the conclusions
stack the sections' tables.
"""

from __future__ import annotations

import html
import math

import pandas as pd

from ..metrics.inference import CONTRADICTED, HOLDS, INCONCLUSIVE, NOT_TESTABLE
from ..study.findings import NOT_MEASURED, VERDICT_COLUMNS, WORDS
from ..view.markdown import Html
from ..view.result import Result, box

__all__ = ["in_words", "table", "counts", "summary", "result"]


def in_words(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its boolean columns in words (yes, no) and missing verdicts as not measured.

    >>> in_words(pd.DataFrame({"verdict": ["holds", None], "ok": [True, False]})).to_dict("list")
    {'verdict': ['holds', 'not measured'], 'ok': ['yes', 'no']}
    """

    def words(column: pd.Series) -> pd.Series:
        if pd.api.types.is_bool_dtype(column):
            return column.map(WORDS)
        if column.name in VERDICT_COLUMNS:
            return column.map(lambda v: NOT_MEASURED if v is None or (isinstance(v, float) and math.isnan(v)) else v)
        return column

    return table.apply(words)


def table(verdict_table: pd.DataFrame) -> pd.DataFrame:
    """A verdict table for display: indexed by ``finding``; the interval is in ``reason``."""
    return in_words(verdict_table.drop(columns=["low", "high"], errors="ignore")).set_index("finding")


def counts(verdict_table: pd.DataFrame) -> dict:
    """How many findings have each verdict: ``held``, ``contradicted``, ``inconclusive``,
    ``untestable``, ``unmeasured``, and ``measured`` (all but the unmeasured)."""
    v = verdict_table["verdict"]
    out = {
        "held": int((v == HOLDS).sum()),
        "contradicted": int((v == CONTRADICTED).sum()),
        "inconclusive": int((v == INCONCLUSIVE).sum()),
        "untestable": int((v == NOT_TESTABLE).sum()),
        "unmeasured": int((v == NOT_MEASURED).sum()),
    }
    return out | {"measured": len(v) - out["unmeasured"]}


_SAY = {
    HOLDS: "holds",
    CONTRADICTED: "is **contradicted**",
    INCONCLUSIVE: "is *inconclusive*",
    NOT_TESTABLE: "is not testable",
}


def _line(row, criterion: bool) -> str:
    if row["verdict"] == NOT_MEASURED:
        return f"- *{row['finding']}*: not measured in this run."
    why = f" ({row['criterion']}; margin {row['margin']})" if criterion else ""
    return f"- *{row['finding']}* {_SAY[row['verdict']]} here{why}: {row['this run']}; {row['reason']}."


def summary(verdict_table: pd.DataFrame, claim: str, *, criterion: bool = True) -> str:
    """The verdicts as a Markdown sentence and list: ``claim`` formatted with :func:`counts`,
    then one line per finding with its interval and margin, and its criterion unless
    ``criterion`` is False.

    >>> from embdiag.metrics.inference import at_least
    >>> from embdiag.study.findings import Claim, verdicts
    >>> c = {"a": Claim("x > 0", "0", "sign"), "b": Claim("y > 0", "0", "sign")}
    >>> v = verdicts(c, [("a", "", "x = 1", at_least(0.5, 1.5)), ("b", "", "y = 0", at_least(-1, 1))])
    >>> print(summary(v, "{held} of {measured} findings hold"))
    1 of 2 findings hold:
    <BLANKLINE>
    - *a* holds here (x > 0; margin 0): x = 1; interval [+0.5, +1.5] lies wholly above 0.
    - *b* is *inconclusive* here (y > 0; margin 0): y = 0; interval [-1, +1] straddles 0.
    """
    lines = [_line(r, criterion) for _, r in verdict_table.iterrows()]
    return claim.format(**counts(verdict_table)) + ":\n\n" + "\n".join(lines)


def _names(rows) -> str:
    return "; ".join(f"<em>{html.escape(r['finding'])}</em>" for _, r in rows.iterrows())


#: The most characters of a finding's reason its result-box row shows (whole clauses; the rest is elided).
BRIEF = 160


def brief(reason: str, limit: int = BRIEF) -> str:
    """``reason`` cut after its last whole clause (``"; "``-separated) within ``limit`` characters,
    with `` …`` where clauses were left out (the first clause is always kept whole).

    >>> brief("interval [1, 2] lies above 0; another clause", limit=30)
    'interval [1, 2] lies above 0 …'
    >>> brief("short")
    'short'
    """
    clauses = reason.split("; ")
    kept = clauses[:1]
    for clause in clauses[1:]:
        if len("; ".join([*kept, clause])) > limit:
            break
        kept.append(clause)
    return "; ".join(kept) + (" …" if len(kept) < len(clauses) else "")


def _decisions(verdict_table: pd.DataFrame) -> str:
    """The findings as a compact HTML table: each finding, its verdict and the interval against the
    margin that decided it (:func:`brief`; not measured: none); the whole reason and this run's
    numbers are in the chapter's findings table."""
    rows = []
    for _, r in in_words(verdict_table).iterrows():
        measured = r["verdict"] != NOT_MEASURED
        cells = (
            f"<em>{html.escape(str(r['finding']), quote=False)}</em>",
            html.escape(str(r["verdict"]), quote=False),
            html.escape(f"{brief(str(r['reason']))}, margin {r['margin']}", quote=False) if measured else "",
        )
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("finding", "verdict", "decided by"))
    return (
        '<div class="embdiag-scroll"><table class="embdiag-decisions"><thead><tr>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def result(verdict_table: pd.DataFrame, claim: str, *, figure=None) -> Result:
    """The result box that opens a chapter: ``claim`` formatted with :func:`counts`, the
    findings by verdict (those that hold, are contradicted, inconclusive, not testable, not
    measured), then ``figure`` (an exhibit or anything with ``_repr_html_``), the one decisive
    figure, if given, then the interval and margin that decided each finding.

    >>> from embdiag.metrics.inference import at_least
    >>> from embdiag.study.findings import Claim, verdicts
    >>> c = {"a": Claim("x > 0", "0", "sign"), "b": Claim("y > 0", "0", "sign")}
    >>> v = verdicts(c, [("a", "", "x = 1", at_least(0.5, 1.5)), ("b", "", "y = -1", at_least(-2, -0.5))])
    >>> box = result(v, "{held} of {measured} findings hold here").html
    >>> print(box[: box.index("</p>")])  # doctest: +NORMALIZE_WHITESPACE
    <div class="embdiag-result"><p><strong>Result.</strong> 1 of 2 findings hold here: <em>a</em>.
    Contradicted: <em>b</em>.
    >>> "<td>interval [-2, -0.5] lies wholly below 0, margin 0</td>" in box
    True
    """
    v = verdict_table["verdict"]
    held = verdict_table[v == HOLDS]
    text = html.escape(claim.format(**counts(verdict_table)), quote=False)
    text += f": {_names(held)}." if len(held) else "."
    for verdict, words in (
        (CONTRADICTED, "Contradicted"),
        (INCONCLUSIVE, "Inconclusive"),
        (NOT_TESTABLE, "Not testable here"),
        (NOT_MEASURED, "Not measured in this run"),
    ):
        rows = verdict_table[v == verdict]
        if len(rows):
            text += f" {words}: {_names(rows)}."
    decided = _decisions(verdict_table)
    if figure is None:
        return box(text, figure=Html(decided))
    return box(text, figure=Html(figure._repr_html_() + decided))
