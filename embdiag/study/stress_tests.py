"""The stress-test section: its grid measured once, its declared findings and their verdicts.

:func:`run` applies every intervention of :mod:`embdiag.interventions.stress` at every
severity of a grid to one set of training and evaluation vectors (each fitted on the
training vectors only; the grid is :func:`~embdiag.interventions.stress.measure_grid`'s) and
measures the whole suite (:func:`embdiag.metrics.evaluate`: total variance, mean cosine, RankMe,
PR, standardized-probe accuracy and balanced accuracy, P@k per attribute) plus overlap@k with the
unchanged top-k (neighbour identity), and the intervals that decide two findings: P@k minus its
floor under severe noise (bootstrap over queries) and the balanced-accuracy drop under rank
restriction (:func:`balanced_accuracy_drop`). :func:`findings` decides each claim of
:data:`CRITERIA` on that :class:`StressResults` by an interval against its declared margin
(exact identities with a degenerate interval) and, by the same rule, on the study's values as
printed (:func:`read_study`, ``data/study/stress_severe.csv``, transcribed, never computed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd

from .._memo import memo
from .._progress import Steps
from .._validate import as_matrix, check_int
from ..interventions.stress import INTERVENTIONS, SEVERITIES, check_severity, measure_grid, n_kept
from ..metrics import paired_bootstrap, precision_at_k, random_floor
from ..metrics.inference import Decision, all_of, at_least, at_most, not_testable, within
from ..metrics.probe import fit_probes, labelled_values
from ..metrics.stats import Interval
from ..metrics.suite import frozen_classes
from .findings import Claim, read_published, verdicts
from .sampling import RowSample, sample_rows
from . import check_attribute

__all__ = [
    "CRITERIA",
    "N_DRAWS",
    "STUDY_NAMES",
    "Settings",
    "StressResults",
    "balanced_accuracy_drop",
    "exact",
    "findings",
    "probe_correctness",
    "read_study",
    "run",
    "severity_label",
]

#: The study's row names of its severe table, per intervention.
STUDY_NAMES = {
    "unchanged": "unchanged",
    "contraction": "shrink (.99)",
    "rank_restriction": "eight directions (.99)",
    "common_offset": "common offset (.99)",
    "noise": "severe noise (.99)",
}

#: Margins, declared before this run's numbers were looked at (the claims' ``why`` says why each).
FLOOR_PP = 2.0  # noise: P@k minus the random floor within ±2 points
RANKME_RISE = 0.01  # noise: RankMe above the unchanged by more than the study's printed resolution
TOL_EXACT = 1e-9  # contraction: relative error of an exact identity (variance, cosine, RankMe, PR)
TOL_VALUES = 1e-12  # contraction: absolute change of a share (overlap@k, accuracy, BA, P@k)
TOL_CENTRED = 1e-6  # common offset: relative change of centred variance and PR
COLLAPSED = 3.0  # common offset: raw RankMe below this is a collapse
BA_COST_PP = 5.0  # rank restriction: the balanced-accuracy drop, in points
#: On the study's printed values an exact identity holds when it is off by less than one unit of
#: the last printed digit.
PRINTED_UNITS = 1.0

#: Declared findings of the study's stress section (``s*`` is the grid's top severity, .99 by
#: default; "unchanged" is severity 0). The study side is decided by the same rule on the
#: published weather values (``data/study/stress_severe.csv``, point values without intervals).
CRITERIA = {
    "noise: RankMe up, retrieval to chance": Claim(
        f"at s*, noise raises RankMe above the unchanged value by more than {RANKME_RISE:g} (computed exactly "
        "on the fixed gallery for the one seeded noise draw; no sampling), and P@k of the attribute is back "
        f"at chance: the whole 95% bootstrap interval over queries (which are also the gallery) of P@k minus "
        f"the random floor lies within ±{FLOOR_PP:g} points",
        f"RankMe: +{RANKME_RISE:g}; P@k minus floor: ±{FLOOR_PP:g} pp",
        "0.01 is the precision the study prints RankMe at; 2 pp is a ninth of the study's unchanged lift "
        "of P@10 over its floor (57.86% vs 39.87%), so a P@k within it has lost nearly all of the lift",
    ),
    "contraction: only variance moves": Claim(
        "at every severity s of the grid, computed exactly on the fixed gallery (no sampling): total "
        "variance is (1 - s)² times the unchanged; mean cosine, RankMe and PR are unchanged; overlap@k is 1; "
        "P@k, accuracy and balanced accuracy of every attribute are unchanged; the largest error over the "
        "grid decides (a degenerate interval)",
        f"relative {TOL_EXACT:.0e} (variance, mean cosine, RankMe, PR), absolute {TOL_VALUES:.0e} (shares); "
        "on the study's printed values, one unit of the last printed digit",
        "float64 rounding of these sums stays orders of magnitude below 1e-9; the study's values are "
        "rounded to its printed digits",
    ),
    "common offset: centred spread kept, raw RankMe collapses": Claim(
        "at s*, computed exactly on the fixed gallery (no sampling): the common offset leaves total "
        f"variance and PR unchanged, while raw RankMe falls below {COLLAPSED:g}",
        f"relative {TOL_CENTRED:.0e} (variance, PR; on the study's printed values, one unit of the last "
        f"printed digit); RankMe {COLLAPSED:g}",
        "centring cancels an offset 99 vector lengths long, magnifying float64 rounding about 1e4-fold, "
        "still far below 1e-6; fewer than three effective directions of hundreds is a collapse",
    ),
    "rank restriction costs labels": Claim(
        f"at s*, rank restriction lowers balanced accuracy of the attribute by more than {BA_COST_PP:g} "
        "points: the whole 95% bootstrap interval of the drop (each evaluation item's probe correctness "
        "before and after, paired, resampled within its class) lies above the margin; conditional on the "
        "fitted probes and the fixed evaluation set",
        f"{BA_COST_PP:g} pp",
        "a loss a reader of the study's table sees at a glance: a sixth of the study's own 32-point drop",
        was=f"at s*, rank restriction lowers balanced accuracy of the attribute by at least {BA_COST_PP:g} points "
        "(point estimate)",
    ),
}
#: Bootstrap draws of the intervals that decide the noise and rank-restriction findings.
N_DRAWS = 5000


@dataclass(frozen=True)
class Settings:
    """The stress chapter's measurement parameters: ``severities``, the declared grid (severity 0,
    the unchanged vectors, is always measured; the most severe is the headline); ``k``, neighbours
    per query for P@k and overlap@k; ``attribute``, the headline attribute of the findings (None:
    see :func:`~embdiag.study.check_attribute`); ``seed``, of the random interventions (offset
    direction, noise draws), of the findings' bootstrap intervals and of the row sample;
    ``max_rows``, the most rows measured of each split (a larger split is measured on a seeded
    sample of this many, :mod:`embdiag.study.sampling`; None: every row)."""

    severities: tuple = SEVERITIES
    k: int = 10
    attribute: str | None = None
    seed: int = 0
    max_rows: int | None = 5000


@dataclass(frozen=True)
class StressResults:
    """The measured grid and what the findings and the figures read from it.

    ``grid``: one row per intervention and severity (severity 0, the unchanged vectors, is
    measured once and repeated for each intervention), the columns of
    :func:`~embdiag.metrics.evaluate` (shares in [0, 1]) plus ``"overlap@{k}"``;
    ``sizes``: what each severity means for these vectors (``intervention``, ``severity``,
    ``quantity``, ``value``); ``floors``: random-neighbour floor of P@k per attribute;
    ``attribute``: the headline attribute; ``d``: the vectors' dimension; ``noise_gaps``: per
    attribute, the 95% bootstrap interval (over queries, :data:`N_DRAWS` draws) of P@k minus
    the random floor at the grid's top noise severity (shares), which decides the noise finding;
    ``ba_drops``: per attribute, :func:`balanced_accuracy_drop` of rank restriction at the top
    severity (shares; empty without probes), which decides the rank-restriction finding;
    ``rows``: which rows were measured (:class:`~embdiag.study.sampling.RowSample`).
    """

    grid: pd.DataFrame
    sizes: pd.DataFrame
    floors: dict
    k: int
    attribute: str
    seed: int
    d: int
    noise_gaps: dict
    ba_drops: dict = field(default_factory=dict)
    rows: RowSample | None = None

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(self.floors)

    @property
    def top(self) -> float:
        """The grid's most severe setting (the study's headline: .99)."""
        return float(self.grid["severity"].max())

    def row(self, intervention: str, severity: float) -> pd.Series:
        """The grid row of ``intervention`` at ``severity``."""
        g = self.grid
        hit = g[(g["intervention"] == intervention) & np.isclose(g["severity"], severity)]
        if hit.empty:
            raise ValueError(f"severity: {severity!r} of {intervention!r} is not in the measured grid")
        return hit.iloc[0]

    @property
    def unchanged(self) -> pd.Series:
        return self.row(next(iter(INTERVENTIONS)), 0.0)


def _check_severities(severities) -> list[float]:
    if isinstance(severities, (str, bytes)) or not hasattr(severities, "__iter__"):
        raise ValueError(f"severities: expected a list of numbers in [0, 1), got {severities!r}")
    values = sorted({check_severity(s, "severities") for s in severities} | {0.0})
    if len(values) < 2:
        raise ValueError("severities: needs at least one severity above 0")
    return values


def _size(change) -> tuple[str, float]:
    """The one number that says how large a fitted change is."""
    if hasattr(change, "scale_"):
        return "scale factor", float(change.scale_)
    if hasattr(change, "offset_"):
        return "offset norm", float(np.linalg.norm(change.offset_))
    if hasattr(change, "n_components_"):
        return "directions kept", float(change.n_components_)
    return "noise total variance", float(change.noise_variance_)


def run(vectors, settings: Settings = Settings(), *, probes: bool = True, progress: bool = False) -> StressResults:
    """Every intervention x severity of ``settings``' grid on ``vectors.val``, each fitted on
    ``vectors.train`` only (``vectors``: a :class:`~embdiag.encoders.vectors.LabelledVectors`),
    each split cut to ``settings.max_rows`` rows (:func:`~embdiag.study.sampling.sample_rows`).

    Severity 0 (the identity for every intervention) is always included and measured once.
    Balanced accuracy uses the eligible classes of ``val_labels``, frozen once; ``probes=False``
    measures no probe (no accuracy, no balanced accuracy). Raises ``ValueError`` naming the
    setting for an ``attribute`` not in ``val_labels`` (before any measurement), a severity
    outside [0, 1) or a bad ``k``, ``seed`` or ``max_rows``. The result is kept on disk
    (:mod:`embdiag._memo`) under the checked settings (the attribute resolved, the severities
    sorted), so every reader of the section reads one grid. ``progress``: one line per grid
    point on stderr (:class:`~embdiag._progress.Steps`).
    """
    attribute = check_attribute(settings.attribute, vectors.val_labels)
    values = tuple(_check_severities(settings.severities))
    k, seed = check_int(settings.k, "k", minimum=1), check_int(settings.seed, "seed", minimum=0)
    vectors, sample = sample_rows(vectors, settings.max_rows, seed)
    steps = Steps("stress tests", len(INTERVENTIONS) * len(values) + bool(probes), enabled=progress)
    steps.say(f"{len(INTERVENTIONS)} interventions x {len(values)} severities; {sample.describe()}")
    return _measured(
        vectors.train,
        vectors.train_labels,
        vectors.val,
        vectors.val_labels,
        values,
        k,
        attribute,
        seed,
        bool(probes),
        sample,
        progress=steps,
    )


@memo
def _measured(
    train, train_labels, val, val_labels, values, k, attribute, seed, probes, sample, progress=None
) -> StressResults:
    """:func:`run` of checked arguments (``values``: the sorted severities, 0 included; ``sample``:
    the rows measured; ``progress``: a :class:`~embdiag._progress.Steps`, or None)."""
    steps = progress or Steps("stress tests", 0, enabled=False)
    rows, sizes, gaps, drops = [], [], {}, {}
    floors = {a: random_floor(y) for a, y in val_labels.items()}
    classes = frozen_classes(val_labels)
    for name, s, change, row, neighbors in measure_grid(
        train,
        train_labels,
        val,
        val_labels,
        names=tuple(INTERVENTIONS),
        severities=values,
        k=k,
        seed=seed,
        probes=probes,
    ):
        sizes.append((name, s, *_size(change)))
        rows.append({"intervention": name, "severity": s, **row})
        steps.done(f"{name} s={s:g}")
        if name == "noise" and s == values[-1]:
            for a, y in val_labels.items():
                per_query = precision_at_k(neighbors, y, per_query=True)
                per_query = per_query[~np.isnan(per_query)]  # queries without a label for a
                gaps[a] = paired_bootstrap(per_query, np.full(len(per_query), floors[a]), n_draws=N_DRAWS, seed=seed)
        if probes and name == "rank_restriction" and s == values[-1]:
            before = probe_correctness(train, train_labels, val, val_labels)
            moved = change.transform(as_matrix(val, "val", dtype=np.float64))  # as measure_grid moves it
            after = probe_correctness(change.transform(train), train_labels, moved, val_labels)
            for a, (y, right) in before.items():
                drops[a] = balanced_accuracy_drop(y, right, after[a][1], classes[a], n_draws=N_DRAWS, seed=seed)
            steps.done(f"balanced-accuracy drop of rank restriction s={s:g}")
    return StressResults(
        pd.DataFrame(rows),
        pd.DataFrame(sizes, columns=["intervention", "severity", "quantity", "value"]),
        floors,
        k,
        attribute,
        seed,
        int(np.shape(val)[1]),
        gaps,
        drops,
        sample,
    )


def probe_correctness(train, train_labels, val, val_labels) -> dict:
    """Per attribute ``a``: ``(y, correct)``, the labelled evaluation rows' labels and whether the
    standardized probe fitted on ``train`` (as :func:`~embdiag.metrics.evaluate` fits it) predicts
    each one right; ``balanced_accuracy(y, ...)`` of these is the grid's ``"{a} BA"``."""
    val = as_matrix(val, "val", dtype=np.float64)
    fitted = fit_probes(train, {a: train_labels[a] for a in val_labels}, standardize=True)
    out = {}
    for a, y in val_labels.items():
        y, keep = labelled_values(y, f"val_labels[{a!r}]")
        out[a] = y, fitted[a].predict(val)[keep] == y
    return out


def balanced_accuracy_drop(y, before, after, classes, *, n_draws: int = N_DRAWS, seed: int = 0, level: float = 0.95):
    """Balanced accuracy over ``classes`` of ``before`` minus that of ``after`` (per-item
    correctness of two probes on the same items, true labels ``y``; items of other classes are
    ignored, as balanced accuracy ignores them) with a stratified paired percentile bootstrap
    interval: each draw resamples the items of every class with replacement, as many as the class
    has, an item carrying both its correctness values, so every class keeps its size and its
    recall stays defined. A class's resampled mean difference is drawn from the multinomial of its
    items' differences (-1, 0, 1), the same distribution as resampling the items. The interval is
    conditional on the fitted probes and the evaluation items. Returns an
    :class:`~embdiag.metrics.stats.Interval` (``n``: items counted, ``n_groups``: classes).

    >>> y = np.repeat([0, 1], 50)
    >>> before, after = np.ones(100, bool), np.r_[np.ones(40, bool), np.zeros(10, bool), np.ones(50, bool)]
    >>> i = balanced_accuracy_drop(y, before, after, [0, 1], n_draws=2000)
    >>> round(i.mean, 4), round(i.low, 2), round(i.high, 2), i.n, i.n_groups  # class 0 loses 10 of 50: 0.2 / 2
    (0.1, 0.04, 0.16, 100, 2)
    """
    y = np.asarray(y)
    before, after = np.asarray(before, dtype=bool), np.asarray(after, dtype=bool)
    if not (len(y) == len(before) == len(after)):
        raise ValueError(
            f"y, before, after: expected one value per item, got lengths {len(y)}, {len(before)}, {len(after)}"
        )
    classes = np.unique(np.asarray(classes))
    if len(classes) < 2:
        raise ValueError(f"classes: needs at least 2 classes, got {len(classes)}")
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    n_draws = check_int(n_draws, "n_draws", minimum=2)
    means, draws, n = [], np.zeros(n_draws), 0
    for c in classes:
        d = before[y == c].astype(int) - after[y == c].astype(int)
        if not len(d):
            raise ValueError(f"classes: class {c.item()!r} has no items; its recall is undefined")
        counts = np.array([(d == -1).sum(), (d == 0).sum(), (d == 1).sum()])
        drawn = rng.multinomial(len(d), counts / len(d), size=n_draws)
        draws += (drawn[:, 2] - drawn[:, 0]) / len(d)
        means.append(d.mean())
        n += len(d)
    draws /= len(classes)
    alpha = 1 - level
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return Interval(float(np.mean(means)), float(low), float(high), n, float(draws.std(ddof=1)), level, len(classes))


def severity_label(s: float) -> str:
    """A severity as the study prints it: ``.99``, ``.5``, ``0``."""
    return f"{s:g}".lstrip("0") if s else "0"


def read_study(path=None) -> pd.DataFrame:
    """The study's severe table (``data/study/stress_severe.csv``), values exactly as printed
    (strings), indexed by ``condition``; the random-neighbour floor of weather P@10 is the row
    ``random-neighbour floor``."""
    return read_published("stress_severe.csv", path, dtype=str, keep_default_na=False).set_index("condition")


def _relative(a: float, b: float) -> float:
    """``|a - b|`` relative to the larger of the two (0 when both are 0)."""
    return abs(a - b) / max(abs(a), abs(b), np.finfo(float).tiny)


#: A relative change below this is float rounding: stated as a bound, not as its last bits.
ROUNDING = 1e-12


def _rounding(change: float) -> str:
    """A relative change in words: below :data:`ROUNDING` it is rounding, whose size depends on
    the float path, so the bound is printed instead of the value."""
    return f"below {ROUNDING:.0e} (rounding)" if change < ROUNDING else f"{change:.1e}"


def exact(value: float, margin: float, what: str, side=at_most) -> Decision:
    """A quantity computed exactly on a fixed gallery (no sampling) against ``margin``: ``side``
    (:func:`~embdiag.metrics.inference.at_most` or ``at_least``) of the degenerate interval
    ``[value, value]``, its reason naming ``what`` and saying so.

    >>> exact(0.0, 1e-9, "variance").verdict, exact(2e-9, 1e-9, "variance").verdict
    ('holds', 'contradicted')
    >>> exact(396.5, 0.01, "RankMe rise", at_least).reason
    'RankMe rise computed exactly on the fixed gallery (no sampling): interval [+396.5, +396.5] lies wholly above 0.01'
    """
    d = side(value, value, margin)
    return d._replace(reason=f"{what} computed exactly on the fixed gallery (no sampling): {d.reason}")


def _unit(printed: str) -> Decimal:
    """One unit of the last digit of a number as printed (``"2.5703e-05"``: 1E-9)."""
    return Decimal(1).scaleb(Decimal(printed).as_tuple().exponent)


def _printed_error(printed: str, expected: Decimal) -> float:
    """How far a printed value lies from ``expected``, in units of its last printed digit
    (decimal arithmetic, so a value one unit off is exactly 1)."""
    return float(abs(Decimal(printed) - expected) / _unit(printed))


def _noise(results: StressResults, attribute: str, study: pd.DataFrame) -> tuple:
    s, u, k = results.top, results.unchanged, results.k
    n, gap, p = results.row("noise", s), results.noise_gaps[attribute], f"{attribute} P@{k}"
    floor = 100 * results.floors[attribute]
    su, sn = study.loc["unchanged"], study.loc[STUDY_NAMES["noise"]]
    sfloor = float(study.loc["random-neighbour floor", "weather_p_at_10_pct"])
    rise, study_rise = n["rankme"] - u["rankme"], float(sn["rankme"]) - float(su["rankme"])
    mine = all_of(
        exact(rise, RANKME_RISE, "RankMe rise (one seeded noise draw)", at_least),
        within(100 * gap.low, 100 * gap.high, FLOOR_PP),
    )
    theirs = all_of(
        exact(study_rise, RANKME_RISE, "RankMe rise", at_least),
        not_testable("the study published P@10 and its floor as point estimates without an interval"),
    )
    return (
        f"RankMe {su['rankme']} → {sn['rankme']}; weather P@10 {sn['weather_p_at_10_pct']}% vs floor {sfloor:.2f}% "
        f"({float(sn['weather_p_at_10_pct']) - sfloor:+.2f} pp, no interval)",
        f"RankMe {u['rankme']:.2f} → {n['rankme']:.2f} ({rise:+.2f}, one seeded noise draw); {p} "
        f"{100 * n[p]:.2f}% vs floor {floor:.2f}% ({100 * gap.mean:+.2f} pp, 95% interval "
        f"[{100 * gap.low:+.2f}, {100 * gap.high:+.2f}] over {gap.n} queries)",
        theirs,
        mine,
    )


#: The study's columns that contraction leaves unchanged.
_KEPT = ("mean_cosine", "rankme", "participation_ratio", "weather_ba_pct", "weather_p_at_10_pct")


def _contraction(results: StressResults, attribute: str, study: pd.DataFrame) -> tuple:
    k, s, g, u = results.k, results.top, results.grid, results.unchanged
    rows = g[(g["intervention"] == "contraction") & (g["severity"] > 0)]
    shares = [c for c in g.columns[2:] if c.endswith((" BA", f" P@{k}", " accuracy"))]
    variance = max(
        _relative(r["total_variance"], (1 - r["severity"]) ** 2 * u["total_variance"]) for _, r in rows.iterrows()
    )
    spectrum = max(
        _relative(r[c], u[c]) for _, r in rows.iterrows() for c in ("mean_cosine", "rankme", "participation_ratio")
    )
    overlap = float(1 - rows[f"overlap@{k}"].min())
    moved = max([abs(r[c] - u[c]) for _, r in rows.iterrows() for c in shares], default=0.0)
    mine = all_of(
        exact(variance, TOL_EXACT, "largest relative error of total variance against (1 - s)² times the unchanged"),
        exact(spectrum, TOL_EXACT, "largest relative change of mean cosine, RankMe and PR"),
        exact(overlap, TOL_VALUES, f"largest loss of overlap@{k}"),
        exact(moved, TOL_VALUES, "largest change of accuracy, BA and P@k"),
    )
    su, sc = study.loc["unchanged"], study.loc[STUDY_NAMES["contraction"]]
    scale = (1 - Decimal(sc["severity"])) ** 2
    printed = [_printed_error(sc["total_variance"], scale * Decimal(su["total_variance"]))]
    printed += [_printed_error(sc[col], Decimal(su[col])) for col in _KEPT]
    theirs = exact(
        max(printed), PRINTED_UNITS, "largest error of the printed values, in units of the last printed digit"
    )
    c = results.row("contraction", s)
    return (
        f"variance {su['total_variance']} → {sc['total_variance']}; mean cosine, RankMe, PR, BA and P@10 "
        f"{'unchanged as printed' if all(sc[col] == su[col] for col in _KEPT) else 'changed'}",
        f"variance {u['total_variance']:.5g} → {c['total_variance']:.5g} at s = {severity_label(s)} (ratio "
        f"{c['total_variance'] / u['total_variance']:.6g}); largest relative change of mean cosine, RankMe, PR "
        f"over {len(rows)} severities {_rounding(spectrum)}; min overlap@{k} {1 - overlap:.4g}",
        theirs,
        mine,
    )


def _common_offset(results: StressResults, attribute: str, study: pd.DataFrame) -> tuple:
    u, o = results.unchanged, results.row("common_offset", results.top)
    mine = all_of(
        exact(_relative(o["total_variance"], u["total_variance"]), TOL_CENTRED, "relative change of total variance"),
        exact(_relative(o["participation_ratio"], u["participation_ratio"]), TOL_CENTRED, "relative change of PR"),
        exact(o["rankme"], COLLAPSED, "raw RankMe"),
    )
    su, so = study.loc["unchanged"], study.loc[STUDY_NAMES["common_offset"]]
    kept = max(_printed_error(so[c], Decimal(su[c])) for c in ("total_variance", "participation_ratio"))
    theirs = all_of(
        exact(kept, PRINTED_UNITS, "largest change of printed variance and PR, in units of the last printed digit"),
        exact(float(so["rankme"]), COLLAPSED, "raw RankMe"),
    )
    return (
        f"variance {su['total_variance']} → {so['total_variance']}, PR {su['participation_ratio']} → "
        f"{so['participation_ratio']}, RankMe {su['rankme']} → {so['rankme']}",
        f"variance {u['total_variance']:.6g} → {o['total_variance']:.6g}, PR {u['participation_ratio']:.4f} → "
        f"{o['participation_ratio']:.4f}, RankMe {u['rankme']:.2f} → {o['rankme']:.2f}",
        theirs,
        mine,
    )


def _rank_restriction(results: StressResults, attribute: str, study: pd.DataFrame) -> tuple:
    ba, s = f"{attribute} BA", results.top
    su, sr = study.loc["unchanged"], study.loc[STUDY_NAMES["rank_restriction"]]
    theirs = not_testable("the study published balanced accuracy as point estimates, without an interval or counts")
    words = (
        f"weather BA {su['weather_ba_pct']}% → {sr['weather_ba_pct']}% "
        f"({float(sr['weather_ba_pct']) - float(su['weather_ba_pct']):+.2f} pp, no interval), 8 of 768 directions"
    )
    if attribute not in results.ba_drops:
        return words, "not measured (probes off)", theirs, None
    u, r, drop = results.unchanged, results.row("rank_restriction", s), results.ba_drops[attribute]
    mine = at_least(100 * drop.low, 100 * drop.high, BA_COST_PP)
    return (
        words,
        f"{ba} {100 * u[ba]:.2f}% → {100 * r[ba]:.2f}% (drop {100 * drop.mean:+.2f} pp, 95% interval "
        f"[{100 * drop.low:+.2f}, {100 * drop.high:+.2f}] over {drop.n} items in {drop.n_groups} classes), "
        f"{n_kept(results.d, s)} of {results.d} directions",
        theirs,
        mine,
    )


def findings(measured: StressResults, study: pd.DataFrame | None = None) -> pd.DataFrame:
    """The verdict table (:func:`embdiag.study.findings.verdicts`) of the study's stress section
    for the measurement's headline attribute: each claim of :data:`CRITERIA` decided on its grid
    and, by the same rule, on the study's printed weather values (``study``, default
    :func:`read_study`; column ``holds in the study``); the rank-restriction claim also shows its
    old point-estimate verdict."""
    attribute = measured.attribute
    study = read_study() if study is None else study
    parts = (_noise, _contraction, _common_offset, _rank_restriction)
    rows = [(f, *part(measured, attribute, study)) for f, part in zip(CRITERIA, parts)]
    ba = f"{attribute} BA"
    old = None
    if ba in measured.grid:
        old = bool(100 * (measured.unchanged[ba] - measured.row("rank_restriction", measured.top)[ba]) >= BA_COST_PP)
    return verdicts(CRITERIA, rows, was={"rank restriction costs labels": old})
