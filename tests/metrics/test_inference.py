"""Verdicts from an interval and a declared margin: the rules on constructed cases and their
mathematical properties (mirror symmetry, monotonicity, equivalence implying both one-sided claims)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from embdiag.metrics import inference as I
from embdiag.metrics.stats import paired_bootstrap

finite = st.floats(-1e6, 1e6, allow_nan=False)
positive = st.floats(1e-3, 1e3, allow_nan=False)


def _interval(a: float, b: float) -> tuple[float, float]:
    return (min(a, b), max(a, b))


def test_a_null_effect_on_few_queries_is_inconclusive_never_within_margin():
    rng = np.random.default_rng(0)
    per_query = rng.normal(0.0, 8.0, size=40)  # pp per query, true change 0, 40 queries
    iv = paired_bootstrap(per_query, np.zeros_like(per_query), seed=0)
    assert iv.low < -1 < 0 < iv.high  # spans zero: "no evidence of harm" ...
    assert I.non_inferiority(iv.low, iv.high, 1.0) == "inconclusive"  # ... is not "within margin"
    assert I.within(iv.low, iv.high, 1.0).verdict == I.INCONCLUSIVE


def test_a_small_true_loss_is_within_a_wide_margin_and_costs_against_a_narrow_one():
    rng = np.random.default_rng(1)
    per_query = -0.3 + rng.normal(0.0, 1.0, size=20_000)  # true change -0.3 pp, tight interval
    iv = paired_bootstrap(per_query, np.zeros_like(per_query), seed=0)
    assert -0.4 < iv.low < iv.high < -0.2
    assert I.non_inferiority(iv.low, iv.high, 1.0) == "within margin"
    assert I.non_inferiority(iv.low, iv.high, 0.1) == "costs"


def test_a_vacuous_claim_is_not_testable():
    d = I.not_testable("no query changed its top-10, so 'at the smallest margins' cannot be judged")
    assert d.verdict == I.NOT_TESTABLE and math.isnan(d.low) and "no query changed" in d.reason
    assert I.at_least(math.nan, math.nan, 0).verdict == I.NOT_TESTABLE  # one seed: no interval
    assert I.non_inferiority(math.nan, math.nan, 1.0) == I.NOT_TESTABLE


@pytest.mark.parametrize(
    ("low", "high", "margin", "verdict"),
    [
        (0.01, 2.72, 0.0, I.HOLDS),
        (0.0, 2.72, 0.0, I.INCONCLUSIVE),  # touching the margin is not clearing it
        (-0.24, 8.19, 0.0, I.INCONCLUSIVE),
        (-2.79, -0.49, 0.0, I.CONTRADICTED),
        (12.12, 20.87, 5.0, I.HOLDS),
        (3.82, 13.95, 5.0, I.INCONCLUSIVE),
    ],
)
def test_at_least_on_the_ladder_intervals(low, high, margin, verdict):
    decision = I.at_least(low, high, margin)
    assert decision.verdict == verdict and decision.margin == margin and (decision.low, decision.high) == (low, high)


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match=r"^low, high: the interval's low end"):
        I.at_least(2.0, 1.0)
    with pytest.raises(ValueError, match=r"^margin: an equivalence margin must be positive"):
        I.within(-1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match=r"^margin: a non-inferiority margin must be positive"):
        I.non_inferiority(-1.0, 1.0, -1.0)
    with pytest.raises(ValueError, match=r"^margin: expected a finite number"):
        I.at_most(-1.0, 1.0, math.inf)
    with pytest.raises(ValueError, match=r"^low, high, margin: expected numbers"):
        I.at_least("a", 1.0)
    with pytest.raises(ValueError, match=r"^reason: expected a non-empty string"):
        I.not_testable("")
    with pytest.raises(ValueError, match=r"^n: expected a positive integer"):
        I.queries_needed(-2.0, 1.0, 0, 1.0)


@given(finite, finite, finite)
def test_at_most_is_at_least_mirrored(a, b, m):
    low, high = _interval(a, b)
    assert I.at_most(low, high, m).verdict == I.at_least(-high, -low, -m).verdict


@given(finite, finite, positive)
def test_equivalence_holds_only_where_both_one_sided_claims_hold(a, b, m):
    low, high = _interval(a, b)
    both = I.at_least(low, high, -m).verdict == I.HOLDS and I.at_most(low, high, m).verdict == I.HOLDS
    assert (I.within(low, high, m).verdict == I.HOLDS) == both


@given(finite, finite, finite, st.floats(0, 1), st.floats(0, 1))
def test_a_narrower_interval_never_loses_a_decided_verdict(a, b, m, s, t):
    low, high = _interval(a, b)
    inner_low, inner_high = _interval(low + s * (high - low), low + t * (high - low))
    inner_low, inner_high = max(inner_low, low), min(inner_high, high)
    outer = I.at_least(low, high, m).verdict
    if outer in (I.HOLDS, I.CONTRADICTED):
        assert I.at_least(inner_low, inner_high, m).verdict == outer


@given(finite, finite, positive)
def test_non_inferiority_never_calls_an_interval_below_the_margin_within(a, b, m):
    low, high = _interval(a, b)
    word = I.non_inferiority(low, high, m)
    assert word in {"gains", "within margin", "costs", "inconclusive"}
    assert (word in {"gains", "within margin"}) == (low > -m)
    assert (word == "costs") == (high < -m)


def test_queries_needed_scales_with_the_square_of_the_half_width():
    # mean -0.5, half-width 1.0 at n = 100: the interval clears -1 once the half-width is below 0.5
    assert I.queries_needed(-1.5, 0.5, 100, 1.0) == 400
    assert I.queries_needed(-0.5, 0.5, 100, 1.0) == 100  # already clears it
    assert I.queries_needed(-3.0, -0.5, 100, 1.0) == math.inf  # the mean itself costs more than the margin


def test_all_of_is_decided_by_its_worst_part():
    all_of, at_least, not_testable = I.all_of, I.at_least, I.not_testable

    hold, inc, con, nt = at_least(1, 2), at_least(-1, 1), at_least(-2, -1), not_testable("nothing changed")
    assert all_of(hold, hold).verdict == "holds"
    assert all_of(hold, inc).verdict == "inconclusive" and all_of(hold, inc).low == -1
    assert all_of(inc, nt).verdict == "not testable" and all_of(inc, nt, con).verdict == "contradicted"
    assert all_of(hold, con).reason == con.reason


def test_any_of_holds_when_one_part_holds():
    any_of, at_least = I.any_of, I.at_least

    hold, inc, con = at_least(1, 2), at_least(-1, 1), at_least(-2, -1)
    assert any_of(con, hold).verdict == "holds" and any_of(con, inc).verdict == "inconclusive"
    assert any_of(con, con).verdict == "contradicted"
    with pytest.raises(ValueError, match="parts"):
        any_of()


def test_any_of_reports_the_part_that_reaches_furthest():
    parts = (I.at_least(-3, -1), I.at_least(-2, 1), I.at_least(-1, 2))
    d = I.any_of(*parts)
    assert d.verdict == "inconclusive" and (d.low, d.high) == (-1, 2)
    assert d.reason.startswith("2 of 3 are inconclusive; furthest: interval [-1, +2]")


def test_at_least_of_counts_parts_by_their_mth_interval():
    hold, straddle, against = I.at_least(1, 2), I.at_least(-1, 1), I.at_least(-2, -1)
    assert I.at_least_of(1, [against, straddle]).verdict == "inconclusive"
    assert I.at_least_of(2, [hold, straddle, against]).verdict == "inconclusive"
    assert I.at_least_of(2, [hold, hold, against]).verdict == "holds"
    assert I.at_least_of(2, [hold, against, against]).verdict == "contradicted"
    assert I.at_least_of(3, [hold, hold, hold]).verdict == I.all_of(hold, hold, hold).verdict == "holds"
    with pytest.raises(ValueError, match="m"):
        I.at_least_of(4, [hold, hold, hold])
    with pytest.raises(ValueError, match="parts"):
        I.at_least_of(1, [I.at_most(1, 2)])
