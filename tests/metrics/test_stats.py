import warnings

import numpy as np
import pytest
from scipy import stats as st

from embdiag.metrics.stats import paired_bootstrap, paired_t_interval


def test_t_interval_matches_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 1, 12), rng.normal(0.5, 1, 12)
    res = paired_t_interval(a, b, level=0.9)
    d = a - b
    lo, hi = st.t.interval(0.9, len(d) - 1, loc=d.mean(), scale=st.sem(d))
    assert res.mean == pytest.approx(d.mean())
    assert (res.low, res.high) == pytest.approx((lo, hi), rel=1e-12)
    assert res.se == pytest.approx(st.sem(d)) and res.n == 12
    ci = st.ttest_rel(a, b).confidence_interval(0.95)
    assert paired_t_interval(a, b)[1:3] == pytest.approx((ci.low, ci.high), rel=1e-12)


def test_t_interval_five_seeds_uses_t_2776():
    a = np.array([92.0, 91.5, 92.3, 91.9, 92.1])
    b = np.array([91.7, 91.4, 91.8, 91.5, 91.9])
    res = paired_t_interval(a, b)
    sd = np.std(a - b, ddof=1)
    assert res.high - res.mean == pytest.approx(2.776 * sd / np.sqrt(5), rel=1e-3)


def test_bootstrap_without_groups_is_reproducible_and_sane():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.3, 1, 400), rng.normal(0, 1, 400)
    r1 = paired_bootstrap(a, b, seed=3)
    r2 = paired_bootstrap(a, b, seed=3)
    assert r1 == r2
    assert r1.low < r1.mean < r1.high and r1.mean == pytest.approx(np.mean(a - b))
    # the percentile interval agrees with the normal-theory one for a mean of 400 values
    t = paired_t_interval(a, b)
    assert r1.low == pytest.approx(t.low, abs=0.05) and r1.high == pytest.approx(t.high, abs=0.05)
    assert r1.se == pytest.approx(t.se, rel=0.1)
    assert paired_bootstrap(a, b, seed=4) != r1


def test_bootstrap_singleton_groups_equal_no_groups():
    rng = np.random.default_rng(2)
    a, b = rng.random(300), rng.random(300)
    assert paired_bootstrap(a, b, groups=7 * np.arange(300) + 3) == paired_bootstrap(a, b)


def test_bootstrap_resamples_whole_groups():
    # Items of a group share one difference: group resampling sees 50 units, not 250,
    # so its interval is wider than the (wrong) item-level one.
    rng = np.random.default_rng(3)
    per_group = rng.normal(0, 1, 50)
    groups = np.repeat(np.arange(50), 5)
    a, b = per_group[groups], np.zeros(250)
    grouped = paired_bootstrap(a, b, groups=groups)
    items = paired_bootstrap(a, b)
    assert grouped.n_groups == 50 and grouped.n == 250
    assert (grouped.high - grouped.low) > 1.8 * (items.high - items.low)
    # each draw's statistic is a mean of whole-group values: equals the bootstrap of group means
    direct = paired_bootstrap(per_group, np.zeros(50))
    assert (grouped.low, grouped.high) == pytest.approx((direct.low, direct.high), rel=1e-9)


def test_bootstrap_custom_statistic_uses_the_same_draws():
    rng = np.random.default_rng(4)
    a, b = rng.random(60), rng.random(60)
    groups = rng.integers(0, 21, 60)  # 21 groups: an odd count
    fast = paired_bootstrap(a, b, groups=groups, n_draws=500)
    slow = paired_bootstrap(a, b, groups=groups, n_draws=500, statistic=lambda d: float(np.mean(d)))
    assert (slow.low, slow.high, slow.mean) == pytest.approx((fast.low, fast.high, fast.mean), rel=1e-12)
    med = paired_bootstrap(a, b, groups=groups, n_draws=500, statistic=np.median)
    assert med.mean == pytest.approx(np.median(a - b)) and med.low <= med.high


def test_bootstrap_unequal_group_sizes_weight_items():
    a = np.array([1.0, 1.0, 1.0, 0.0])
    groups = np.array([0, 0, 0, 1])
    res = paired_bootstrap(a, np.zeros(4), groups=groups, n_draws=4000)
    # possible draws: {0,0} -> 1, {1,1} -> 0, {0,1} -> 3/4 (item-level mean)
    assert res.low == 0.0 and res.high == 1.0 and res.mean == 0.75


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: paired_t_interval([1.0], [2.0]), "a: needs at least 2"),
        (lambda: paired_t_interval([1.0, 2], [2.0]), "length mismatch"),
        (lambda: paired_t_interval([1.0, np.nan], [2.0, 1]), "a: contains NaN"),
        (lambda: paired_t_interval([1.0, 2], [2.0, np.inf]), "b: contains NaN or infinite"),
        (lambda: paired_t_interval([[1.0, 2]], [[2.0, 1]]), "a: expected a 1-D"),
        (lambda: paired_t_interval([], []), "a"),
        (lambda: paired_t_interval([1.0, 2], [2.0, 1], level=1.0), "level"),
        (lambda: paired_t_interval([1.0, 2], [[2.0, 1]]), "b: expected a 1-D"),
        (
            lambda: paired_bootstrap([1.0, 2], [2.0, 1], groups=[0, 0]),
            "groups: needs at least 2 groups to resample, got 1",
        ),
        (lambda: paired_bootstrap([1.0], [2.0]), "a: needs at least 2 paired values to resample, got 1"),
        (lambda: paired_bootstrap([1.0], [2.0], groups=[0]), "a: needs at least 2"),
        (lambda: paired_bootstrap([1.0, 2], [2.0, 1], groups=[0, 1, 2]), "length mismatch"),
        (lambda: paired_bootstrap([1.0, 2], [2.0, 1], groups=[[0, 1]]), "groups: expected a 1-D"),
        (lambda: paired_bootstrap([1.0, 2], [2.0, 1], n_draws=1), "n_draws"),
        (lambda: paired_bootstrap([1.0, 2], [2.0, 1], level=0), "level"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match="^" + match):
        call()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(seed=-1), "seed"),
        (dict(seed=1.5), "seed"),
        (dict(seed=True), "seed"),
        (dict(seed="0"), "seed"),
        (dict(n_draws=100.0), "n_draws"),
        (dict(groups=[0, None, 1, 1]), "groups"),
        (dict(groups=np.array([0.0, np.nan, 1, 1])), "groups: contains NaN or infinite ids"),
        (dict(statistic="mean"), "statistic"),
        (dict(statistic=lambda d: d), "statistic"),
        (dict(level="high"), "level"),
    ],
)
def test_bootstrap_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match="^" + match):
        paired_bootstrap([1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 1.0, 2.0], **kwargs)


def _recording(statistic):
    """``statistic`` that also records every value it returns (the estimate, then each draw)."""
    seen = []

    def f(d):
        seen.append(float(statistic(d)))
        return seen[-1]

    return f, seen


@pytest.mark.parametrize("level", [0.95, 0.8, 0.5])
def test_bootstrap_interval_is_the_percentile_interval_of_its_draws(level):
    rng = np.random.default_rng(5)
    a, b = rng.normal(0.2, 1, 80), rng.normal(0, 1, 80)
    stat, seen = _recording(np.median)
    res = paired_bootstrap(a, b, n_draws=400, level=level, statistic=stat)
    estimate, draws = seen[0], np.array(seen[1:])
    assert len(draws) == 400 and estimate == np.median(a - b) == res.mean
    alpha = 1 - level  # by hand: the alpha/2 and 1 - alpha/2 quantiles of the draws
    assert (res.low, res.high) == (np.quantile(draws, alpha / 2), np.quantile(draws, 1 - alpha / 2))
    assert res.se == pytest.approx(draws.std(ddof=1), rel=1e-12)


def test_bootstrap_keeps_a_user_statistic_such_as_the_sum():
    rng = np.random.default_rng(6)
    a, b = rng.random(50) + 1, rng.random(50)
    res = paired_bootstrap(a, b, statistic=np.sum, n_draws=300)
    assert res.mean == pytest.approx(np.sum(a - b))
    assert res.low > 10 * np.mean(a - b)  # sums of 50 differences, not means
    stat, seen = _recording(np.sum)
    assert paired_bootstrap(a, b, statistic=stat, n_draws=300) == res


def test_bootstrap_custom_statistic_over_many_chunks_fills_every_draw():
    # 2**18 + 1 groups: only 3 draws fit the 2**20-index chunk, so 7 draws take 3 chunks.
    n = 2**18 + 1
    rng = np.random.default_rng(7)
    a, b = rng.random(n), np.zeros(n)
    stat, seen = _recording(np.mean)
    res = paired_bootstrap(a, b, n_draws=7, statistic=stat)
    draws = np.array(seen[1:])
    assert len(draws) == 7 and len(set(draws)) == 7
    assert res.se == pytest.approx(draws.std(ddof=1), rel=1e-12)
    assert (res.low, res.high) == (np.quantile(draws, 0.025), np.quantile(draws, 0.975))
    fast = paired_bootstrap(a, b, n_draws=7)  # the vectorized mean sees the same draws
    assert (fast.low, fast.high, fast.se) == pytest.approx((res.low, res.high, res.se), rel=1e-12)


def test_t_interval_at_two_pairs_and_the_level_reported():
    res = paired_t_interval([3.0, 5.0], [1.0, 2.0], level=0.9)
    half = st.t.ppf(0.95, 1) * np.std([2.0, 3.0], ddof=1) / np.sqrt(2)
    assert (res.low, res.high) == pytest.approx((2.5 - half, 2.5 + half), rel=1e-12)
    assert (res.n, res.level, res.n_groups) == (2, 0.9, 2)
    boot = paired_bootstrap([3.0, 5.0], [1.0, 2.0], n_draws=2, level=0.8)
    assert (boot.level, boot.n_groups, boot.n) == (0.8, 2, 2)


def test_float32_values_are_differenced_in_float64():
    rng = np.random.default_rng(8)
    a, b = rng.random(30).astype(np.float32), rng.random(30).astype(np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    assert paired_t_interval(a, b) == paired_t_interval(a64, b64)
    assert paired_bootstrap(a, b, n_draws=50) == paired_bootstrap(a64, b64, n_draws=50)


def test_bootstrap_defaults_and_pinned_draws():
    # The defaults (5,000 draws, seed 0) and the draws themselves (int32 group indices from
    # default_rng(seed)) are pinned: values computed before issue 11's changes.
    rng = np.random.default_rng(7)
    a, b = rng.random(200), rng.random(200)
    groups = rng.integers(0, 50, 200)
    assert paired_bootstrap(a, b, groups=groups) == paired_bootstrap(a, b, groups=groups, n_draws=5000, seed=0)
    res = paired_bootstrap(a, b, groups=groups, n_draws=1000, seed=1)
    assert (res.low, res.high, res.se) == pytest.approx(
        (-0.06060560364661667, 0.05693769871455246, 0.031040676868500892), rel=1e-12
    )


def test_bootstrap_string_group_ids_and_item_order_within_groups():
    d = np.arange(40.0)
    groups = np.array([f"image{i % 4}" for i in range(40)])  # items of a group are interleaved
    first, seen = _recording(lambda x: x[0])
    paired_bootstrap(d, np.zeros(40), groups=groups, n_draws=30, statistic=first)
    assert set(seen[1:]) <= {0.0, 1.0, 2.0, 3.0}  # each draw starts with its first group's first item
    ints = paired_bootstrap(d, np.zeros(40), groups=np.arange(40) % 4, n_draws=30)
    assert paired_bootstrap(d, np.zeros(40), groups=groups, n_draws=30) == ints


def test_statistic_may_return_a_one_element_array():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = paired_bootstrap([1.0, 2.0, 4.0], [0.0, 0.0, 0.0], n_draws=20, statistic=lambda x: np.array([x.mean()]))
    assert res.mean == pytest.approx(7 / 3)


@pytest.mark.parametrize("n_groups", [2, 21, 1000])
def test_int32_group_draws_do_not_depend_on_chunking(n_groups):
    # paired_bootstrap draws its indices in chunks of at most 2**20; that is a memory bound
    # only because one generator yields the same int32 draws however they are chunked.
    whole = np.random.default_rng(3).integers(0, n_groups, size=(12, n_groups), dtype=np.int32)
    rng = np.random.default_rng(3)
    parts = [rng.integers(0, n_groups, size=(m, n_groups), dtype=np.int32) for m in (5, 1, 6)]
    assert np.array_equal(np.vstack(parts), whole)


@pytest.mark.parametrize("k, n", [(0, 983), (12, 40), (40, 40), (1, 3), (500, 1000)])
def test_proportion_interval_matches_scipy_wilson(k, n):
    from scipy.stats import binomtest

    from embdiag.metrics.stats import proportion_interval

    ours, ref = proportion_interval(k, n), binomtest(k, n).proportion_ci(method="wilson")
    assert ours.mean == k / n and ours.low == pytest.approx(ref.low, abs=1e-12)
    assert ours.high == pytest.approx(ref.high, abs=1e-12) and 0 <= ours.low <= ours.mean <= ours.high <= 1


@pytest.mark.parametrize("k, n, match", [(5, 4, "successes"), (-1, 4, "successes"), (0, 0, "n"), (1.5, 4, "successes")])
def test_proportion_interval_names_the_bad_argument(k, n, match):
    from embdiag.metrics.stats import proportion_interval

    with pytest.raises(ValueError, match=match):
        proportion_interval(k, n)
