"""The findings protocol every section of the study declares and decides its findings by.

A section (:mod:`embdiag.study`) declares its findings before this project's numbers are looked
at, as ``CRITERIA``: ``{finding: Claim}``. A :class:`Claim` states the criterion in words, its
margin, why that margin, and its kind: one of the study's findings, this project's addition, or
a scope statement (a limitation, never counted as a verdict). The section's ``findings``
function decides each claim on this run's numbers, and where it can on the study's published
ones (``data/study/``, read by :func:`read_published`), by :mod:`embdiag.metrics.inference`: an
interval against the declared margin, never a point estimate alone. It returns a *verdict
table* (:func:`verdicts`): one row per declared finding, in the declared order, with
``finding``, ``kind``, ``criterion``, ``margin``, ``why this margin``, ``study`` and ``this run``
(the numbers in words), ``verdict`` (holds, contradicted, inconclusive, not testable, or not
measured), ``reason`` (the interval and the margin that decided it) and ``low``/``high`` (the
interval). A section may add ``holds in the study`` (the same rule on the published numbers)
and, where a criterion changed meaning, the old criterion and its old point-estimate verdict
(``old criterion``, ``old verdict``). :mod:`embdiag.paper.findings` presents verdict tables.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .. import artifacts
from .._project import published_dir
from ..metrics.inference import Decision

__all__ = [
    "STUDY",
    "ADDITION",
    "SCOPE",
    "KINDS",
    "NOT_MEASURED",
    "Claim",
    "VERDICT_COLUMNS",
    "read_published",
    "verdicts",
]

#: A claim's kind: one of the study's findings, this project's addition, or a scope statement.
STUDY, ADDITION, SCOPE = "study", "addition", "scope"
KINDS = (STUDY, ADDITION, SCOPE)
#: The verdict of a finding this run did not measure.
NOT_MEASURED = "not measured"
#: Columns that hold a verdict.
VERDICT_COLUMNS = ("holds in the study", "verdict")
#: How a yes/no verdict reads.
WORDS = {True: "yes", False: "no"}


@dataclass(frozen=True)
class Claim:
    """A declared finding: the ``criterion`` in words, its ``margin`` in words (with units), why
    that margin (``why``, one line: the study's own resolution where it states one), its
    ``kind`` (:data:`KINDS`) and, where the criterion changed meaning, the old one (``was``)."""

    criterion: str
    margin: str
    why: str
    kind: str = STUDY
    was: str | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind: expected one of {KINDS}, got {self.kind!r}")
        for name in ("criterion", "margin", "why"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"{name}: expected a non-empty string, got {getattr(self, name)!r}")


def read_published(name: str, path=None, **read_csv) -> pd.DataFrame:
    """The study's published table ``data/study/<name>`` (or ``path``), read by
    :func:`pandas.read_csv` with ``read_csv`` and recorded in the chapter's read log."""
    path = Path(path) if path is not None else published_dir() / name
    out = pd.read_csv(path, **read_csv)
    artifacts.record_read(path)
    return out


def _decision(value, finding: str) -> Decision | None:
    if value is None:
        return None
    if not isinstance(value, Decision):
        raise ValueError(
            f"rows: finding {finding!r} is decided by {value!r}; expected a Decision of embdiag.metrics.inference "
            "(an interval against a margin) or None (not measured)"
        )
    return value


def verdicts(
    criteria: Mapping[str, Claim], rows: Iterable, *, was: Mapping[str, bool | None] | None = None
) -> pd.DataFrame:
    """The verdict table of ``rows``: ``(finding, study, this run, decision)`` or
    ``(finding, study, this run, study decision, decision)``, one per finding of ``criteria``,
    put in its order; a decision is a :class:`~embdiag.metrics.inference.Decision` or None (not
    measured). ``was`` (``{finding: old verdict}``) gives the old point-estimate verdict of each
    finding whose :attr:`Claim.was` names an old criterion; every such finding needs one.

    Raises:
        ValueError: a row names an undeclared finding, a declared finding has no row, a
            decision is not a Decision, or ``was`` and the claims' old criteria disagree.

    >>> from embdiag.metrics.inference import at_most
    >>> c = {"spread collapses": Claim("variance ratio below 1%", "1 pp", "the study's resolution")}
    >>> v = verdicts(c, [("spread collapses", "0.4%", "0.3% [0.2, 0.5]", at_most(0.2, 0.5, 1))])
    >>> v[["finding", "margin", "verdict"]].to_dict("records")
    [{'finding': 'spread collapses', 'margin': '1 pp', 'verdict': 'holds'}]
    """
    rows = [tuple(r) for r in rows]
    found = [r[0] for r in rows]
    if sorted(found) != sorted(criteria) or len(set(found)) != len(found):
        raise ValueError(f"rows: findings {found} do not match the declared {list(criteria)} one to one")
    changed = {f for f, c in criteria.items() if c.was is not None}
    was = dict(was or {})
    if set(was) != changed:
        raise ValueError(
            f"was: expected old verdicts of {sorted(changed)} (claims with an old criterion), got {sorted(was)}"
        )
    with_study = any(len(r) == 5 for r in rows)
    out = []
    for finding, study, this_run, *decided in sorted(rows, key=lambda r: list(criteria).index(r[0])):
        claim = criteria[finding]
        d = _decision(decided[-1], finding)
        row = {
            "finding": finding,
            "kind": claim.kind,
            "criterion": claim.criterion,
            "margin": claim.margin,
            "why this margin": claim.why,
            "study": study,
            "this run": this_run,
        }
        if with_study:
            s = _decision(decided[0], finding) if len(decided) == 2 else None
            row["holds in the study"] = NOT_MEASURED if s is None else s.verdict
        row |= {
            "verdict": NOT_MEASURED if d is None else d.verdict,
            "reason": "not measured in this run" if d is None else d.reason,
            "low": math.nan if d is None else d.low,
            "high": math.nan if d is None else d.high,
        }
        if changed:
            row["old criterion"] = claim.was or ""
            row["old verdict"] = (
                "" if claim.was is None else (NOT_MEASURED if was[finding] is None else WORDS[bool(was[finding])])
            )
        out.append(row)
    return pd.DataFrame(out)
