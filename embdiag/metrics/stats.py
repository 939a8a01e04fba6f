"""Uncertainty for a difference between two conditions measured on the same units, and for a share.

:func:`paired_t_interval` and :func:`paired_bootstrap` take per-unit values ``a`` and ``b``
(e.g. per-seed accuracies, or per-query Hit@10 with and without compression) and describe
``a - b``; :func:`proportion_interval` describes a share of units (e.g. of queries changed).
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from .._validate import as_float, check_int, same_length

__all__ = [
    "Interval",
    "paired_t_interval",
    "paired_bootstrap",
    "proportion_interval",
    "ItemIntervals",
    "balanced_accuracy_draws",
]


class Interval(NamedTuple):
    """A point estimate of ``a - b`` with a two-sided interval.

    ``n`` is the number of paired units (items); ``se`` the standard error (for the
    bootstrap: the standard deviation of the resampled statistic); ``n_groups`` the number
    of resampled groups (equal to ``n`` without groups; ``n`` for the t interval).

    Examples
    --------
    >>> interval = paired_t_interval([3.0, 5.0, 4.0, 6.0, 7.0], [1.0, 2.0, 2.0, 3.0, 2.0])
    >>> interval.mean, interval.n, interval.level, interval.n_groups, interval._fields[:3]
    (3.0, 5, 0.95, 5, ('mean', 'low', 'high'))
    """

    mean: float
    low: float
    high: float
    n: int
    se: float
    level: float
    n_groups: int


def _level(level) -> float:
    if isinstance(level, bool) or not isinstance(level, numbers.Real):
        raise ValueError(f"level: expected a number in (0, 1), got {level!r}")
    level = float(level)
    if not 0 < level < 1:
        raise ValueError(f"level: must lie strictly between 0 and 1, got {level}")
    return level


def _pair(a, b):
    # Either conversion alone already makes a - b exact float64, so a mutant dropping one
    # is equivalent (the test of float32 input kills dropping both).
    a = as_float(a, "a", ndim=1, dtype=np.float64)  # pragma: no mutate
    b = as_float(b, "b", ndim=1, dtype=np.float64)  # pragma: no mutate
    same_length(a=a, b=b)
    return a, b


def paired_t_interval(a, b, level: float = 0.95) -> Interval:
    """Mean of ``a - b`` with a Student-t interval on ``n - 1`` degrees of freedom:
    ``mean ± t((1 + level) / 2, n - 1) * sd / sqrt(n)`` (sd with ddof=1). Needs n >= 2.

    Assumes the paired differences are independent draws from one distribution; with
    five seeds it is an honest but wide interval, not a multiplicity-corrected test.

    Examples
    --------
    >>> interval = paired_t_interval([3.0, 5.0, 4.0, 6.0, 7.0], [1.0, 2.0, 2.0, 3.0, 2.0])
    >>> f"{interval.mean:.4f} [{interval.low:.4f}, {interval.high:.4f}], se {interval.se:.4f}"
    '3.0000 [1.4793, 4.5207], se 0.5477'
    """
    from scipy import stats  # (imported here: scipy.stats takes a second to import)

    level = _level(level)
    a, b = _pair(a, b)
    n = len(a)
    if n < 2:
        raise ValueError(f"a: needs at least 2 paired values for an interval, got {n}")
    d = a - b
    mean = float(d.mean())
    se = float(d.std(ddof=1) / np.sqrt(n))
    half = float(stats.t.ppf((1 + level) / 2, n - 1)) * se
    return Interval(mean, mean - half, mean + half, n, se, level, n)


def _group_index(groups, n: int) -> np.ndarray:
    """Group number (0, 1, ...) of each item; ids must be numbers, strings or bytes of one kind."""
    g = np.asarray(groups)
    if g.ndim != 1:
        raise ValueError(f"groups: expected a 1-D array of group ids, got shape {g.shape}")
    if len(g) != n:
        raise ValueError(f"length mismatch: a has {n}, groups has {len(g)}")
    if g.dtype.kind not in "biufUS":  # pragma: no mutate (a kind is one letter: padding it changes nothing)
        raise ValueError(
            f"groups: expected integer, float or string ids of one kind, got dtype {g.dtype} (e.g. None or mixed types)"
        )
    if g.dtype.kind == "f" and not np.isfinite(g).all():
        raise ValueError("groups: contains NaN or infinite ids")
    return np.unique(g, return_inverse=True)[1]


def _scalar(value) -> float:
    """A statistic's value as a float; raises unless it is a single number."""
    a = np.asarray(value)
    if a.size != 1 or a.dtype.kind not in "biuf":  # pragma: no mutate (as above)
        raise ValueError(f"statistic: must return a single number, got {value!r:.80}")
    return float(a.reshape(()))


def paired_bootstrap(
    a, b, groups=None, n_draws: int = 5000, level: float = 0.95, seed: int = 0, statistic=None
) -> Interval:
    """Percentile bootstrap interval for a statistic of the paired differences ``a - b``.

    Whole groups are resampled with replacement (``groups`` gives a group id per item,
    e.g. the parent image of each caption, so an image travels with its captions);
    without ``groups`` every item is its own group. Each draw picks as many groups as
    there are. ``statistic`` maps the resampled 1-D differences to a number; the default
    (``None`` or ``np.mean``) is the item-level mean, computed vectorized from group sums
    with int32 indices in chunks; any other callable is applied draw by draw, to the items
    of the drawn groups in draw order (a group's items in their original order). ``seed``
    makes the draws reproducible. The interval is conditional on the evaluated items (no
    model retraining). Needs at least 2 paired values in at least 2 groups.

    Examples
    --------
    >>> a, b = [3.0, 5.0, 4.0, 6.0, 7.0], [1.0, 2.0, 2.0, 3.0, 2.0]
    >>> interval = paired_bootstrap(a, b, n_draws=1000, seed=0)
    >>> round(interval.mean, 4), round(interval.low, 4), round(interval.high, 4), interval.n_groups
    (3.0, 2.2, 4.0, 5)
    >>> paired_bootstrap(a, b, groups=[0, 0, 1, 1, 2], n_draws=1000).n_groups  # items 0-1 and 2-3 travel together
    3
    """
    level = _level(level)
    a, b = _pair(a, b)
    d = a - b
    n = len(d)
    n_draws = check_int(n_draws, "n_draws", minimum=2)
    seed = check_int(seed, "seed", minimum=0)
    if statistic is not None and not callable(statistic):
        raise ValueError(f"statistic: expected a callable or None, got {statistic!r}")
    if n < 2:
        raise ValueError(f"a: needs at least 2 paired values to resample, got {n}")
    inverse = np.arange(n) if groups is None else _group_index(groups, n)
    n_groups = int(inverse.max()) + 1
    if n_groups < 2:
        raise ValueError(f"groups: needs at least 2 groups to resample, got {n_groups}")
    rng = np.random.default_rng(seed)
    fast = statistic is None or statistic is np.mean
    stat = np.mean if fast else statistic
    estimate = _scalar(stat(d))
    draws = np.empty(n_draws)
    if fast:
        sums = np.bincount(inverse, weights=d)  # every group id 0..n_groups-1 occurs
        counts = np.bincount(inverse)
    else:
        # kind="stable" keeps a group's items in order (the sort kind is case-insensitive)
        order = np.argsort(inverse, kind="stable")  # pragma: no mutate
        bounds = np.concatenate([[0], np.cumsum(np.bincount(inverse))])
        members = [order[bounds[i] : bounds[i + 1]] for i in range(n_groups)]
    # Chunks of at most 2**20 indices bound memory only: the int32 draws of one generator
    # are the same however they are chunked (tests/metrics/test_stats.py), and
    # integers(0, n) is integers(n); so these two lines admit no behavioural mutant.
    step = max(1, (1 << 20) // n_groups)  # pragma: no mutate
    for s in range(0, n_draws, step):
        m = min(step, n_draws - s)
        idx = rng.integers(0, n_groups, size=(m, n_groups), dtype=np.int32)  # pragma: no mutate
        if fast:
            draws[s : s + m] = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
        else:
            for j, row in enumerate(idx):
                draws[s + j] = _scalar(stat(d[np.concatenate([members[i] for i in row])]))
    alpha = 1 - level
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return Interval(estimate, float(low), float(high), n, float(draws.std(ddof=1)), level, n_groups)


def proportion_interval(successes: int, n: int, level: float = 0.95) -> Interval:
    """The share ``successes / n`` with its Wilson score interval (which, unlike the Wald
    interval, stays inside [0, 1] and is not degenerate at 0 or n successes). ``se`` is the
    Wald standard error ``sqrt(p (1 - p) / n)``. Needs ``0 <= successes <= n`` and ``n >= 1``.

    Examples
    --------
    >>> i = proportion_interval(0, 983)
    >>> f"{i.mean:.4f} [{i.low:.4f}, {i.high:.4f}]"
    '0.0000 [0.0000, 0.0039]'
    >>> i = proportion_interval(12, 40)
    >>> f"{i.low:.4f} {i.high:.4f}"
    '0.1807 0.4543'
    """
    from scipy import stats  # (imported here: scipy.stats takes a second to import)

    level = _level(level)
    n = check_int(n, "n", minimum=1)
    successes = check_int(successes, "successes", minimum=0)
    if successes > n:
        raise ValueError(f"successes: {successes} exceeds n = {n}")
    p = successes / n
    z = float(stats.norm.ppf((1 + level) / 2))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low, high = (0.0 if successes == 0 else centre - half), (1.0 if successes == n else centre + half)
    return Interval(p, float(low), float(high), n, float(np.sqrt(p * (1 - p) / n)), level, n)


class ItemIntervals:
    """Paired bootstrap intervals (percentage points) of sums of ``sign * value`` terms, each a
    representation's balanced accuracy or mean per-item score on resampled evaluation items.

    ``items`` has one row per evaluation item and columns ``(representation, column)``:
    ``("class", a)``, the item's class index for attribute ``a`` (NaN: not counted), and
    ``(rep, "{a} BA")``, 1.0 where the representation's probe is right on the item (its value
    is the mean over classes of each class's share right), or any other column of per-item
    scores (its value is the mean over the items with a score, e.g. P@k), as
    :func:`embdiag.interventions.compression.compression_items` and
    :func:`embdiag.encoders.quality.probe_items` give them. The draws are those of
    :func:`paired_bootstrap` over the items with the same ``n_draws`` and ``seed`` (every
    interval resamples the same items, the fitted probes held fixed); the 95% percentile
    interval of every term is computed at once, vectorised."""

    def __init__(self, items, n_draws: int = 5000, seed: int = 0):
        self.items = items
        n = len(items)
        self.rows = np.random.default_rng(seed).integers(0, n, size=(n_draws, n), dtype=np.int32)
        self._values: dict = {}

    def _draws(self, rep: str, column: str) -> np.ndarray:
        """The value on all images, then on each draw's images."""
        if (rep, column) not in self._values:
            v = self.items[(rep, column)].to_numpy(dtype=np.float64)
            rows = np.vstack([np.arange(len(v)), self.rows])
            if column.endswith(" BA"):
                codes = self.items[("class", column[: -len(" BA")])].to_numpy(dtype=np.float64)
                self._values[(rep, column)] = balanced_accuracy_draws(np.nan_to_num(v)[rows], codes, rows)
            else:
                counted = ~np.isnan(v)
                self._values[(rep, column)] = np.nan_to_num(v)[rows].sum(axis=1) / counted[rows].sum(axis=1)
        return self._values[(rep, column)]

    def __call__(self, *terms: tuple[int, str, str]) -> tuple[float, float, float]:
        """(estimate, low, high) in pp of ``sum(sign * value(representation, column))``."""
        draws = 100 * sum(sign * self._draws(rep, col) for sign, rep, col in terms)
        low, high = np.quantile(draws[1:], [0.025, 0.975])
        return float(draws[0]), float(low), float(high)


def balanced_accuracy_draws(hit: np.ndarray, codes: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Balanced accuracy of each row of ``rows`` (image indices): the mean over the classes
    drawn of each class's share of ``hit``; ``codes`` gives each image's class (NaN: not counted)."""
    n_classes = int(np.nanmax(codes)) + 1
    c = np.where(np.isnan(codes), n_classes, codes).astype(np.intp)[rows]  # uncounted: an extra bin, dropped
    c += (n_classes + 1) * np.arange(len(rows))[:, None]
    size = len(rows) * (n_classes + 1)
    n = np.bincount(c.ravel(), minlength=size).reshape(len(rows), -1)[:, :n_classes]
    right = np.bincount(c.ravel(), weights=hit.ravel(), minlength=size).reshape(len(rows), -1)[:, :n_classes]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nanmean(np.where(n > 0, right / n, np.nan), axis=1)
