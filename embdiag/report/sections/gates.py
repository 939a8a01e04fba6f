"""The gates: each ``--fail-if`` rule's outcome on every row it checks (measured by
:func:`~embdiag.report.fail_if.outcomes`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ...view import exhibits as exhibit
from .presentation import LONG_TABLE, section

if TYPE_CHECKING:
    from ..measurement import Report

NAME = "gates"
TITLE = "Gates: the `--fail-if` rules"
INTRO = "Each `--fail-if` rule, checked before measuring and here on every row it selects."
#: Why the section can be missing.
MISSING = "no --fail-if rule was given"


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The table of rule outcomes, or why there is none."""
    return section(report, NAME, MISSING, _draw)


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    shown = table.assign(
        outcome=[
            ("pass" if ok else "FAIL") if measured else "FAIL (not measured)"
            for ok, measured in zip(table["passed"], table["measured"])
        ]
    )
    shown = shown[["rule", "condition", "attribute", "value", "threshold", "outcome"]].set_index("rule")
    failed = int((shown["outcome"] != "pass").sum())
    return [
        exhibit.table(
            shown,
            name="report-gates",
            **mark,
            collapsed=f"Every rule on every row it reads: {failed} of {len(shown)} fail"
            if len(shown) > LONG_TABLE
            else None,
            extremes=False,
            caption=(
                "Each --fail-if rule on each row it checks: condition, attribute: the row's; value: the measured "
                "number; threshold: the rule's number; outcome: FAIL when the rule's comparison holds (or "
                "the value is undefined or was not measured), which makes embdiag report exit with status 1."
            ),
        )
    ]
