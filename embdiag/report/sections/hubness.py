"""Hubness: how unevenly the rows are anyone's neighbour, and what each condition does to the anti-hubs.

Measured (:func:`measure`) after every condition is searched."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .measured import Section
from .presentation import section

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..measurement import Plan, Report

NAME = "hubness"
TITLE = "Hubness: where the damage hides"
INTRO = ""
#: Why the section can be missing.
MISSING = "not measured"
#: What the section establishes and what not (the report's ``scope``).
SCOPE = "The k-occurrence of the reference rows and each condition's change on the anti-hub queries."


def available(conditions, attributes=(), *, k: int = 10, pairs: bool = False, self_search: bool = True) -> dict:
    """Each metric the section records -> the conditions and attributes of its rows."""
    return {}


def measure(
    plan: Plan, neighbours: dict[str, np.ndarray], sample: tuple, intervals: Callable, search: Callable
) -> Section:
    """The reference's k-occurrence and each condition's overlap and relevance on the anti-hub queries."""
    return Section(False)


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence, the anti-hub table and the k-occurrence chart."""
    return section(report, NAME, MISSING, lambda report, table, mark: [])
