"""The conditions compared: each second representation with every parameter stated (a
definition, not a measurement; the report's ``conditions`` table)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ...view import exhibits as exhibit
from .presentation import NO_CONDITION, Folded, section

if TYPE_CHECKING:
    from ..measurement import Report

NAME = "conditions"
TITLE = "Conditions compared"
INTRO = (
    "The conditions are what the reference vectors are compared with: a second file, a storage "
    "format or compression made here, or an approximate index searched instead of exact search."
)
#: Why the section can be missing.
MISSING = NO_CONDITION


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The table of conditions, or why there is none (the report has no scope sentence for it)."""
    return section(report, NAME, MISSING, _draw)


#: What the ``convention`` column says, where the table has one.
CONVENTION = (
    " convention: the stack whose codes and scores the condition reproduces (sentence-transformers/usearch, mteb, "
    "FAISS, ...; embdiag: this library's own decoding)."
)


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    caption = (
        "Each condition compared with the reference VECTORS, with every parameter stated (a definition, "
        "not a measurement). kind: file (--compare), storage (a number format), compression (fewer "
        "dimensions) or index (an approximate search over the reference vectors)."
    )
    if "convention" in table.columns:
        caption += CONVENTION
        table = table[
            ["name", "kind", "convention"] + [c for c in table.columns if c not in ("name", "kind", "convention")]
        ]
    return [
        exhibit.table(
            table.set_index("name"),
            name="report-conditions",
            **mark,
            extremes=False,
            caption=caption,
            collapsed="Every condition in full",
        )
    ]


def described(report: Report, title: str = "What each condition is") -> Folded:
    """Each condition in one line, folded under ``title``: its name, kind, the convention it follows
    (where the table has one) and its description; a list, which a phone reads without scrolling."""
    table = report.tables.get(NAME)
    rows = [] if table is None else table.to_dict("records")
    lines = [
        f"- **{r['name']}** ({r['kind']}{', ' + r['convention'] if r.get('convention') else ''}): {r['description']}"
        for r in rows
    ]
    return Folded(title, "\n".join(lines) or f"No condition: {NO_CONDITION}.")
