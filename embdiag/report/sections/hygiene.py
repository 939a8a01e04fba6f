"""Hygiene: what is wrong with the vectors before anything is measured on them.

Measured (:func:`measure`) right after the exact search, shown first."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .measured import Section
from .presentation import section

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..measurement import Plan, Report

NAME = "hygiene"
TITLE = "Hygiene: the vectors before they are measured"
INTRO = ""
#: Why the section can be missing.
MISSING = "not measured"
#: What the section establishes and what not (the report's ``scope``).
SCOPE = "Duplicates, norms and dimensions of the reference rows; it says nothing about any condition."


def available(self_search: bool) -> dict[str, set[str]]:
    """Each metric the section records -> ``{"reference"}`` (what a ``--fail-if`` rule may name)."""
    return {}


def measure(plan: Plan, nearest: np.ndarray, search: Callable) -> Section:
    """The hygiene findings of the reference rows (``nearest``: each searched query's top cosine
    scores against the gallery, sorted descending, its own row left out; ``search``: ``topk``-like)."""
    return Section(False)


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence and the findings."""
    return section(report, NAME, MISSING, lambda report, table, mark: [])
