"""Verdicts from an interval and a declared margin: the one rule every finding, summary and gate uses.

A *claim* is about one quantity (a paired difference, a gain over a floor) and has a declared
margin ``m``, fixed before the numbers are looked at. Given the quantity's interval
``[low, high]`` (a paired Student-t or bootstrap 95% interval), a claim's verdict is one of:

- :data:`HOLDS`: the whole interval lies on the claim's side of the margin;
- :data:`CONTRADICTED`: the whole interval lies on the other side;
- :data:`INCONCLUSIVE`: the interval straddles the margin (touching it counts as straddling);
- :data:`NOT_TESTABLE`: no interval (fewer than two seeds or queries), or the situation the
  claim is about did not arise (:func:`not_testable`, with the reason).

The claims:

- :func:`at_least`: the quantity exceeds ``m`` (``low > m`` holds; ``high < m`` contradicts);
- :func:`at_most`: the quantity is below ``m`` (``high < m`` holds; ``low > m`` contradicts);
- :func:`within`: the quantity lies within ``±m`` (equivalence: ``-m < low`` and ``high < m``
  holds; an interval wholly outside ``[-m, m]`` contradicts).

A point estimate alone never decides: an interval that straddles the margin is inconclusive
however close its mean is. :func:`non_inferiority` names the same rule for a change that
must not cost more than ``m`` (*within margin*, *costs*, *inconclusive*, *gains*), and
:func:`queries_needed` says how many more samples an inconclusive one would need at the
observed spread. :func:`all_of` and :func:`any_of` decide a claim made of several (every
column, at least one column) from their parts.
"""

from __future__ import annotations

import math
from typing import NamedTuple

__all__ = [
    "HOLDS",
    "CONTRADICTED",
    "INCONCLUSIVE",
    "NOT_TESTABLE",
    "VERDICTS",
    "Decision",
    "at_least",
    "at_most",
    "within",
    "not_testable",
    "non_inferiority",
    "NON_INFERIORITY",
    "queries_needed",
    "all_of",
    "any_of",
    "at_least_of",
]

HOLDS, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE = "holds", "contradicted", "inconclusive", "not testable"
#: The four verdicts, in the order a table lists them.
VERDICTS = (HOLDS, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE)


class Decision(NamedTuple):
    """A verdict and what decided it: the claim (``at least``, ``at most``, ``within``), the
    margin, the interval, and a reason in words."""

    verdict: str
    claim: str
    margin: float
    low: float
    high: float
    reason: str


def _bounds(low, high, margin) -> tuple[float, float, float]:
    try:
        low, high, margin = float(low), float(high), float(margin)
    except (TypeError, ValueError):
        raise ValueError(f"low, high, margin: expected numbers, got {low!r}, {high!r}, {margin!r}") from None
    if math.isnan(margin) or math.isinf(margin):
        raise ValueError(f"margin: expected a finite number, got {margin!r}")
    if not (math.isnan(low) or math.isnan(high)) and low > high:
        raise ValueError(f"low, high: the interval's low end {low!r} is above its high end {high!r}")
    return low, high, margin


def _interval(low: float, high: float) -> str:
    return f"[{low:+.4g}, {high:+.4g}]"


def _untestable(claim: str, low: float, high: float, margin: float) -> Decision | None:
    if math.isnan(low) or math.isnan(high):
        return Decision(NOT_TESTABLE, claim, margin, low, high, "no interval (fewer than two samples)")
    return None


def at_least(low, high, margin: float = 0.0) -> Decision:
    """The claim that the quantity exceeds ``margin``.

    >>> at_least(2.75, 5.02, 0).verdict, at_least(-0.24, 8.19, 0).verdict, at_least(-2.79, -0.49, 0).verdict
    ('holds', 'inconclusive', 'contradicted')
    >>> at_least(12.1, 20.9, 5).reason
    'interval [+12.1, +20.9] lies wholly above 5'
    """
    low, high, margin = _bounds(low, high, margin)
    return _untestable("at least", low, high, margin) or _side(
        "at least", low, high, margin, low > margin, high < margin
    )


def at_most(low, high, margin: float = 0.0) -> Decision:
    """The claim that the quantity is below ``margin``.

    >>> at_most(-29.3, -26.0, 0).verdict, at_most(-1.0, 1.0, 0).verdict, at_most(0.5, 1.0, 0).verdict
    ('holds', 'inconclusive', 'contradicted')
    """
    low, high, margin = _bounds(low, high, margin)
    return _untestable("at most", low, high, margin) or _side("at most", low, high, margin, high < margin, low > margin)


def _side(claim: str, low: float, high: float, margin: float, holds: bool, contradicted: bool) -> Decision:
    where = _interval(low, high)
    if holds:
        side = "above" if claim == "at least" else "below"
        return Decision(HOLDS, claim, margin, low, high, f"interval {where} lies wholly {side} {margin:g}")
    if contradicted:
        side = "below" if claim == "at least" else "above"
        return Decision(CONTRADICTED, claim, margin, low, high, f"interval {where} lies wholly {side} {margin:g}")
    return Decision(INCONCLUSIVE, claim, margin, low, high, f"interval {where} straddles {margin:g}")


def within(low, high, margin: float) -> Decision:
    """The claim that the quantity lies within ``±margin`` (equivalence, ``margin > 0``): it holds
    when the whole interval does, is contradicted when the whole interval lies outside, and is
    inconclusive otherwise; an interval spanning zero is not enough.

    >>> within(-0.54, 0.14, 1).verdict, within(-1.75, 0.63, 1).verdict, within(-4.06, -2.62, 1).verdict
    ('holds', 'inconclusive', 'contradicted')
    """
    low, high, margin = _bounds(low, high, margin)
    if margin <= 0:
        raise ValueError(f"margin: an equivalence margin must be positive, got {margin!r}")
    untestable = _untestable("within", low, high, margin)
    if untestable:
        return untestable
    where = _interval(low, high)
    if -margin < low and high < margin:
        return Decision(HOLDS, "within", margin, low, high, f"interval {where} lies within ±{margin:g}")
    if high < -margin or low > margin:
        return Decision(CONTRADICTED, "within", margin, low, high, f"interval {where} lies outside ±{margin:g}")
    return Decision(INCONCLUSIVE, "within", margin, low, high, f"interval {where} crosses ±{margin:g}")


def not_testable(reason: str, claim: str = "", margin: float = math.nan) -> Decision:
    """The verdict of a claim whose situation did not arise here (``reason`` says why).

    >>> not_testable("no query changed its top-10").verdict
    'not testable'
    """
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(f"reason: expected a non-empty string, got {reason!r}")
    return Decision(NOT_TESTABLE, claim, float(margin), math.nan, math.nan, reason)


#: :func:`non_inferiority`'s words for a change, by the verdict of ``at_least(low, high, -margin)``.
NON_INFERIORITY = {HOLDS: "within margin", CONTRADICTED: "costs", INCONCLUSIVE: "inconclusive"}


def non_inferiority(low, high, margin: float) -> str:
    """A change's verdict against a loss margin ``margin > 0`` (same units as the interval):
    *gains* when the whole interval is above 0, *within margin* when it is above ``-margin``,
    *costs* when it is below ``-margin``, *inconclusive* when it straddles ``-margin``, and
    *not testable* without an interval. "No evidence of harm" (an interval spanning 0 that
    reaches below ``-margin``) is inconclusive, never within margin.

    >>> [non_inferiority(*i, 1.0) for i in [(0.1, 0.4), (-0.5, 0.2), (-1.75, 0.63), (-3.0, -1.2)]]
    ['gains', 'within margin', 'inconclusive', 'costs']
    """
    low, high, margin = _bounds(low, high, margin)
    if margin <= 0:
        raise ValueError(f"margin: a non-inferiority margin must be positive, got {margin!r}")
    decision = at_least(low, high, -margin)
    if decision.verdict == NOT_TESTABLE:
        return NOT_TESTABLE
    if low > 0:
        return "gains"
    return NON_INFERIORITY[decision.verdict]


def queries_needed(low, high, n: int, margin: float) -> float:
    """How many samples an inconclusive non-inferiority verdict would need for its interval to
    clear ``-margin`` at the observed mean and spread (the half-width shrinks as ``1/sqrt(n)``):
    ``n * (half-width / (mean + margin))**2``, rounded up; ``inf`` when the mean itself is at or
    below ``-margin`` (more samples would not help), and ``n`` when the interval already clears it.

    >>> queries_needed(-1.75, 0.63, 160, 1.0)
    1171
    >>> queries_needed(-3.0, -0.5, 100, 1.0)
    inf
    """
    low, high, margin = _bounds(low, high, margin)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n: expected a positive integer, got {n!r}")
    mean, half = (low + high) / 2, (high - low) / 2
    if low > -margin:
        return n
    if mean <= -margin:
        return math.inf
    return math.ceil(n * (half / (mean + margin)) ** 2)


def _joined(kind: str, parts: list[Decision], deciding: list[Decision]) -> Decision:
    worst = deciding[0]
    reason = "; ".join(p.reason for p in deciding)
    return Decision(worst.verdict, kind, worst.margin, worst.low, worst.high, reason)


def all_of(*parts: Decision) -> Decision:
    """The claim that every part holds: contradicted when any part is, else not testable when
    any part is, else inconclusive when any part is, else holds. Its interval and margin are
    the first deciding part's; its reason joins the deciding parts' reasons.

    >>> all_of(at_least(1, 2), at_least(-1, 1)).verdict, all_of(at_least(1, 2), at_most(1, 2)).verdict
    ('inconclusive', 'contradicted')
    """
    if not parts:
        raise ValueError("parts: expected at least one Decision")
    for verdict in (CONTRADICTED, NOT_TESTABLE, INCONCLUSIVE, HOLDS):
        deciding = [p for p in parts if p.verdict == verdict]
        if deciding:
            return _joined("all of", list(parts), deciding if verdict != HOLDS else list(parts))
    raise ValueError(f"parts: unknown verdicts {[p.verdict for p in parts]}")


def _reach(part: Decision) -> float:
    """How far a part's interval reaches towards holding (larger is closer)."""
    if part.claim == "at least":
        return part.low - part.margin
    if part.claim == "at most":
        return part.margin - part.high
    if part.claim == "within":
        return part.margin - max(abs(part.low), abs(part.high))
    return -math.inf


def any_of(*parts: Decision) -> Decision:
    """The claim that at least one part holds: holds when any part does, else inconclusive
    when any part is, else not testable when any part is, else contradicted (every part is).
    Its interval, margin and reason are those of the deciding part that reaches furthest
    towards holding, with how many of the parts share its verdict.

    >>> any_of(at_least(-2, -1), at_least(1, 2)).verdict, any_of(at_least(-2, -1), at_least(-2, 1)).verdict
    ('holds', 'inconclusive')
    >>> any_of(at_least(0.5, 2), at_least(1, 2), at_least(-2, -1)).reason
    '2 of 3 hold; furthest: interval [+1, +2] lies wholly above 0'
    """
    if not parts:
        raise ValueError("parts: expected at least one Decision")
    for verdict in (HOLDS, INCONCLUSIVE, NOT_TESTABLE, CONTRADICTED):
        deciding = [p for p in parts if p.verdict == verdict]
        if deciding:
            best = max(deciding, key=_reach)
            one = len(deciding) == 1
            words = {HOLDS: "holds" if one else "hold", CONTRADICTED: "contradicted"}.get(
                verdict, f"{'is' if one else 'are'} {verdict}"
            )
            if len(parts) == 1:
                return best._replace(claim="any of")
            reason = f"{len(deciding)} of {len(parts)} {words}; furthest: {best.reason}"
            return Decision(best.verdict, "any of", best.margin, best.low, best.high, reason)
    raise ValueError(f"parts: unknown verdicts {[p.verdict for p in parts]}")


def at_least_of(m: int, parts) -> Decision:
    """The claim that at least ``m`` of ``parts`` (each an :func:`at_least` claim against one
    margin) hold, decided by the ``m``-th largest of their intervals: it holds when the ``m``-th
    largest low end clears the margin (``m`` parts hold), is contradicted when the ``m``-th
    largest high end is below it (fewer than ``m`` can), and is inconclusive otherwise.

    >>> parts = [at_least(1, 2), at_least(0.5, 3), at_least(-2, -1)]
    >>> two = at_least_of(2, parts)
    >>> two.verdict, (two.low, two.high), two.claim, at_least_of(3, parts).verdict
    ('holds', (0.5, 2.0), 'at least 2 of 3', 'contradicted')
    """
    parts = list(parts)
    if not parts or any(p.claim != "at least" for p in parts) or len({p.margin for p in parts}) != 1:
        raise ValueError("parts: expected at_least claims against one margin")
    if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= len(parts):
        raise ValueError(f"m: expected an integer from 1 to {len(parts)}, got {m!r}")
    low = sorted((p.low for p in parts), reverse=True)[m - 1]
    high = sorted((p.high for p in parts), reverse=True)[m - 1]
    decided = at_least(low, high, parts[0].margin)
    return decided._replace(claim=f"at least {m} of {len(parts)}")
