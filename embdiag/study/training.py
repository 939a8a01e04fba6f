"""The study's training section (design A): seven conditions trained from the same seeds, and
the declared findings decided on their runs.

The runs are made by the sweep (``embdiag train``) and committed as records
(:func:`embdiag.training.sweep.load_records`); :func:`run` reads the records of one profile and
of its training-length ladder (:func:`embdiag.training.ladder.ladder_records`) and measures, once
per length, every number the findings read: the five-seed means and the paired Student-t 95%
intervals over seeds of the declared contrasts (:class:`Length`). Each finding of the published
study is restated as a claim with a margin fixed before this project's runs were made
(:data:`CRITERIA`) and decided on those intervals (:func:`findings`), at the profile's length and
at every length of the ladder (:func:`findings_by_length`); the five declared paired comparisons
are set beside the published ones (:func:`comparisons`). The published values are read from
``data/study/`` (transcribed, never computed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..metrics.inference import Decision, all_of, any_of, at_least, at_most, not_testable, within
from .findings import ADDITION, Claim, read_published, verdicts
from ..training import ladder, sweep
from ..training.conditions import CONDITIONS
from ..training.inputs import ATTRIBUTES
from ..training.ladder import CONTROL, EMA
from ..training.sweep import UNTRAINED

__all__ = [
    "CRITERIA",
    "Length",
    "METRICS",
    "Settings",
    "Training",
    "comparisons",
    "findings",
    "findings_by_length",
    "means",
    "measure",
    "read_study",
    "run",
]

#: Metric columns in the order the chapters show them: (column stem, label, per attribute, percent, log axis).
METRICS = (
    ("total_variance", "total variance", False, False, True),
    ("rankme", "RankMe", False, False, False),
    ("participation_ratio", "participation ratio", False, False, False),
    ("mean_cosine", "mean cosine", False, False, False),
    ("accuracy", "probe accuracy (%)", True, True, False),
    ("BA", "balanced accuracy (%)", True, True, False),
    ("P@10", "P@10 (%)", True, True, False),
)
#: Conditions in the chapters' order: the untrained encoder, then the study's seven.
ORDER = [UNTRAINED] + [c.name for c in CONDITIONS]


@dataclass(frozen=True)
class Settings:
    """The training chapter's parameters: ``profile``, the records folder under
    ``data/training/`` (a profile name, or ``<profile>-steps<N>`` for a length), and
    ``attribute``, the attribute the findings are decided on."""

    profile: str = "cpu-steps6400"
    attribute: str = "timeofday"


def _column(stem: str, attribute: str | None) -> str:
    return f"{attribute} {stem}" if attribute else stem


def means(records: pd.DataFrame, attribute: str = "timeofday") -> pd.DataFrame:
    """Five-seed means per condition (runs with status ``ok``) of every metric for ``attribute``,
    with the number of runs that entered; percentages in points."""
    ok = records[records["status"] == "ok"]
    out = {}
    for stem, label, per_attr, pct, _ in METRICS:
        col = _column(stem, attribute if per_attr else None)
        out[label] = ok.groupby("condition", sort=False)[col].mean() * (100.0 if pct else 1.0)
    table = pd.DataFrame(out)
    table.insert(0, "runs", ok.groupby("condition", sort=False)["seed"].size())
    table = table.reindex([c for c in ORDER if c in table.index])
    table.index.name = "condition"
    return table


#: Margins of the declared findings: the control's spread below 1% of the reference's (a log10
#: ratio below -2), labels within 3 points, neighbours at least 5 points lower, labels above
#: the untrained encoder's by any amount.
SPREAD_LOG10, LABELS_PP, NEIGHBOURS_PP, BEYOND_PP = -2.0, 3.0, 5.0, 0.0
_SEEDS = "paired Student-t 95% interval over seeds"
#: The study's training findings, each a claim decided by a paired Student-t interval over seeds
#: (the study's declared analysis) against its margin, fixed before this project's runs were made.
CRITERIA = {
    "spread collapses": Claim(
        f"log10 of the control's total variance over the EMA reference's, seed by seed, below {SPREAD_LOG10:g} "
        f"(variance under 1% of the reference's); {_SEEDS}",
        f"{SPREAD_LOG10:g} (log10 ratio)",
        "the study reports six orders of magnitude: a hundredfold is far inside its effect",
        was="control variance below 1% of the EMA reference's (five-seed means)",
    ),
    "labels survive": Claim(
        f"control minus EMA reference probe accuracy within ±{LABELS_PP:g} pp; {_SEEDS}",
        f"±{LABELS_PP:g} pp",
        "the study's gap was 1.04 pp and its seed intervals about ±1 pp: 3 pp is 'almost as well'",
        was="control probe accuracy within 3 points of the EMA reference's (five-seed means)",
    ),
    "labels beyond untrained": Claim(
        f"control minus untrained (step 0) encoder probe accuracy above {BEYOND_PP:g} pp; {_SEEDS}",
        f"{BEYOND_PP:g} pp",
        "any gain over the encoder's own initialisation shows training kept labels; none is declared by the study",
        kind=ADDITION,
        was="control probe accuracy above the untrained (step 0) encoder's (five-seed means)",
    ),
    "neighbours degrade": Claim(
        f"control minus EMA reference P@10 below -{NEIGHBOURS_PP:g} pp; {_SEEDS}",
        f"-{NEIGHBOURS_PP:g} pp",
        "the study's fall was 22 pp; 5 pp is a loss a user would notice in a top-10 list",
        was="control P@10 at least 5 points below the EMA reference's (five-seed means)",
    ),
    "geometry is not utility": Claim(
        "the condition with the highest mean variance is beaten, seed by seed, by another condition in probe "
        f"accuracy and by another in P@10 (each difference above 0 pp); {_SEEDS}",
        "0 pp",
        "an ordering: any difference whose interval excludes 0 reverses the geometric ranking",
        was="the condition with the highest variance differs from the one with the highest probe accuracy and "
        "from the one with the highest P@10 (five-seed means)",
    ),
}


def read_study(path=None) -> pd.DataFrame:
    """The study's published five-seed time-of-day means (``data/study/training_means.csv``),
    indexed by condition."""
    return read_published("training_means.csv", path, index_col="condition")


#: A paired contrast: (mean, low, high, seeds), in the contrast's unit.
Contrast = tuple[float, float, float, int]


def _paired(ok: pd.DataFrame, a: str, b: str, column: str, scale: float = 100.0) -> Contrast:
    seeds, _, _, (mean, low, high) = sweep.paired_seeds(ok, a, b, column)
    return scale * mean, scale * low, scale * high, len(seeds)


def words(mean: float, low: float, high: float, n: int, unit: str = " pp") -> str:
    """A paired contrast in words: mean, interval and seeds (no interval below two seeds)."""
    if n < 2:
        return f"{mean:+.2f}{unit} ({n} seed, no interval)"
    return f"{mean:+.2f}{unit} [{low:+.2f}, {high:+.2f}] ({n} seeds)"


@dataclass(frozen=True)
class Length:
    """The findings' numbers at one training length, on ``attribute``: the five-seed ``means``
    (:func:`means`), the condition with the highest mean variance (``top``) and the paired
    contrasts (:data:`Contrast`) of control minus EMA reference in log10 variance (``spread``),
    probe accuracy (``labels``) and P@10 (``neighbours``), of control minus untrained encoder in
    probe accuracy (``beyond``), and of every other trained condition minus ``top`` in probe
    accuracy and in P@10 (``rivals``: ``{metric: {condition: contrast}}``)."""

    attribute: str
    seeds: int
    means: pd.DataFrame
    top: str
    spread: Contrast
    labels: Contrast
    beyond: Contrast
    neighbours: Contrast
    rivals: dict


def measure(records: pd.DataFrame, attribute: str = "timeofday") -> Length:
    """:class:`Length` of the runs in ``records`` (status ``ok`` only enter). Raises
    ``ValueError`` when the EMA reference, the control or the untrained encoder has no
    successful run."""
    m = means(records, attribute)
    missing = {EMA, CONTROL, UNTRAINED} - set(m.index)
    if missing:
        raise ValueError(f"records: no successful runs of {sorted(missing)}")
    ok = records[records["status"] == "ok"].assign(log10_variance=lambda r: np.log10(r["total_variance"]))
    acc, p10 = f"{attribute} accuracy", f"{attribute} P@10"
    top = str(m.drop(index=UNTRAINED)["total variance"].idxmax())
    others = [c for c in ok["condition"].unique() if c not in (top, UNTRAINED)]
    return Length(
        attribute=attribute,
        seeds=int((records["condition"] == CONTROL).sum()),
        means=m,
        top=top,
        spread=_paired(ok, CONTROL, EMA, "log10_variance", 1.0),
        labels=_paired(ok, CONTROL, EMA, acc),
        beyond=_paired(ok, CONTROL, UNTRAINED, acc),
        neighbours=_paired(ok, CONTROL, EMA, p10),
        rivals={column: {c: _paired(ok, c, top, column) for c in others} for column in (acc, p10)},
    )


@dataclass(frozen=True)
class Training:
    """The training section measured: the ``settings``, the profile's runs (``records``) and
    their :class:`Length` (``at_profile``), the ladder's runs at every length (``ladder``), the
    :class:`Length` of each length where the EMA reference, the control and the untrained encoder
    have runs (``by_length``, among the ladder's conditions only) and the ladder's contrasts at
    every length (``gaps``, :func:`embdiag.training.ladder.gaps`)."""

    settings: Settings
    records: pd.DataFrame
    at_profile: Length
    ladder: pd.DataFrame
    by_length: dict
    gaps: pd.DataFrame


def measure_ladder(ladder_runs: pd.DataFrame, attribute: str = "timeofday") -> dict:
    """``{steps: Length}`` for every length of ``ladder_runs`` (with a ``steps`` column) where the
    EMA reference, the control and the untrained encoder have runs."""
    out = {}
    for steps in sorted(ladder_runs["steps"].unique()):
        at = ladder.at_length(ladder_runs, steps)
        if {EMA, CONTROL, UNTRAINED} <= set(at["condition"]):
            out[int(steps)] = measure(at, attribute)
    return out


def of_runs(records: pd.DataFrame, ladder_runs: pd.DataFrame, settings: Settings = Settings()) -> Training:
    """:class:`Training` of given runs: ``records`` (one length, every condition) and
    ``ladder_runs`` (the ladder's conditions at every length, with ``steps``)."""
    return Training(
        settings=settings,
        records=records,
        at_profile=measure(records, settings.attribute),
        ladder=ladder_runs,
        by_length=measure_ladder(ladder_runs, settings.attribute),
        gaps=ladder.gaps(ladder_runs, settings.attribute),
    )


def run(settings: Settings = Settings()) -> Training:
    """The training section measured on the committed records of ``settings.profile`` and of its
    ladder. Raises ``ValueError`` naming ``attribute`` or ``profile`` when the attribute is not
    one of the scenes' or the profile has no records."""
    if settings.attribute not in ATTRIBUTES:
        raise ValueError(f"attribute: expected one of {list(ATTRIBUTES)}, got {settings.attribute!r}")
    records = sweep.load_records(settings.profile)
    if records.empty:
        raise ValueError(
            f"profile: no training records for {settings.profile!r} (run: embdiag train --profile {settings.profile})"
        )
    base = sweep.Task(settings.profile, UNTRAINED, 0).config().profile
    return of_runs(records, ladder.ladder_records(base), settings)


def _beaten(length: Length, column: str) -> tuple[Decision, str]:
    """Whether some condition beats ``length.top`` in ``column`` seed by seed (any interval above 0)."""
    parts = length.rivals[column]
    if not parts:
        return not_testable("no other condition was trained"), "no rival"
    decision = any_of(*(at_least(lo, hi, 0.0) for _, lo, hi, _ in parts.values()))
    best = max(parts, key=lambda c: parts[c][1] if not np.isnan(parts[c][1]) else -np.inf)
    return decision, f"{best} {words(*parts[best])}"


def _argmax(table: pd.DataFrame, column: str) -> str:
    return str(table.drop(index=UNTRAINED, errors="ignore")[column].idxmax())


def _old_verdicts(m: pd.DataFrame) -> dict:
    """The point-estimate verdicts of the criteria these claims replace (five-seed means)."""
    var, acc, p10 = "total variance", "probe accuracy (%)", "P@10 (%)"
    e, c, u = m.loc[EMA], m.loc[CONTROL], m.loc[UNTRAINED]
    top = {k: _argmax(m, k) for k in (var, acc, p10)}
    return {
        "spread collapses": bool(c[var] < 0.01 * e[var]),
        "labels survive": bool(abs(c[acc] - e[acc]) <= 3),
        "labels beyond untrained": bool(c[acc] > u[acc]),
        "neighbours degrade": bool(c[p10] <= e[p10] - 5),
        "geometry is not utility": top[var] != top[acc] and top[var] != top[p10],
    }


def findings(measured: Training | Length, study: pd.DataFrame | None = None) -> pd.DataFrame:
    """The verdict table of :data:`CRITERIA` (:func:`embdiag.study.findings.verdicts`) at one
    length (a :class:`Training`: its profile's): each claim decided by a paired Student-t 95%
    interval over the seeds both conditions finished, beside the study's published time-of-day
    means (``study``, default :func:`read_study`: point estimates, so no study verdict). With the
    old point-estimate verdicts of the criteria they replace."""
    length = measured.at_profile if isinstance(measured, Training) else measured
    if study is None:
        study = read_study()
    acc, p10 = f"{length.attribute} accuracy", f"{length.attribute} P@10"
    se, sc = study.loc[EMA], study.loc[CONTROL]
    s_var, s_acc, s_p10 = "total_variance", "probe_accuracy_pct", "p_at_10_pct"
    study_top = {k: str(study[k].idxmax()) for k in (s_var, s_acc, s_p10)}
    spread, labels, beyond, neighbours = length.spread, length.labels, length.beyond, length.neighbours
    by_acc, acc_words = _beaten(length, acc)
    by_p10, p10_words = _beaten(length, p10)
    rows = [
        (
            "spread collapses",
            f"{sc[s_var]:.3g} vs {se[s_var]:.3g} (log10 ratio {np.log10(sc[s_var] / se[s_var]):+.2f})",
            f"log10 ratio {words(*spread, unit='')}",
            at_most(spread[1], spread[2], SPREAD_LOG10),
        ),
        (
            "labels survive",
            f"{sc[s_acc]:.2f}% vs {se[s_acc]:.2f}% ({sc[s_acc] - se[s_acc]:+.2f} pp)",
            words(*labels),
            within(labels[1], labels[2], LABELS_PP),
        ),
        ("labels beyond untrained", "not measured", words(*beyond), at_least(beyond[1], beyond[2], BEYOND_PP)),
        (
            "neighbours degrade",
            f"{sc[s_p10]:.2f}% vs {se[s_p10]:.2f}% ({sc[s_p10] - se[s_p10]:+.2f} pp)",
            words(*neighbours),
            at_most(neighbours[1], neighbours[2], -NEIGHBOURS_PP),
        ),
        (
            "geometry is not utility",
            f"highest variance: {study_top[s_var]}; accuracy: {study_top[s_acc]}; P@10: {study_top[s_p10]}",
            f"highest variance: {length.top}; beaten in accuracy by {acc_words}; in P@10 by {p10_words}",
            all_of(by_acc, by_p10),
        ),
    ]
    return verdicts(CRITERIA, rows, was=_old_verdicts(length.means))


def findings_by_length(measured: Training | dict, study=None) -> pd.DataFrame:
    """Every finding of :func:`findings` at every length of the ladder (``measured.by_length``,
    or a ``{steps: Length}`` of :func:`measure_ladder`), among the ladder's conditions only: one
    row per finding and length, ``finding``, ``steps``, ``seeds`` (control runs that entered),
    ``this run``, ``verdict`` and ``reason``."""
    by_length = measured.by_length if isinstance(measured, Training) else measured
    rows = []
    for steps, length in by_length.items():
        v = findings(length, study)
        rows += [
            {
                "finding": r["finding"],
                "steps": int(steps),
                "seeds": length.seeds,
                "this run": r["this run"],
                "verdict": r["verdict"],
                "reason": r["reason"],
            }
            for _, r in v.iterrows()
        ]
    return pd.DataFrame(rows, columns=["finding", "steps", "seeds", "this run", "verdict", "reason"])


def comparisons(records: pd.DataFrame, attribute: str = "timeofday", study: pd.DataFrame | None = None) -> pd.DataFrame:
    """The five declared comparisons for probe accuracy and P@10 (percentage points): the study's
    mean and interval beside this run's, whether the signs agree and whether each interval
    excludes zero. ``study`` defaults to ``data/study/training_comparisons.csv``."""
    if study is None:
        study = read_published("training_comparisons.csv")
    rows = []
    for metric, stem in (("probe accuracy", "accuracy"), ("P@10", "P@10")):
        ours = sweep.paired_differences(records, stem, attribute).drop_duplicates("comparison").set_index("comparison")
        for _, s in study[study["metric"] == metric].iterrows():
            o = ours.loc[s["comparison"]] if s["comparison"] in ours.index else None
            mean, low, high = (
                (100 * o["mean"], 100 * o["low"], 100 * o["high"]) if o is not None else (float("nan"),) * 3
            )
            rows.append(
                {
                    "comparison": s["comparison"],
                    "metric": metric,
                    "study": f"{s['mean_pp']:+.2f} [{s['low_pp']:+.2f}, {s['high_pp']:+.2f}]",
                    "this run": f"{mean:+.2f} [{low:+.2f}, {high:+.2f}]",
                    "same sign": bool((mean > 0) == (s["mean_pp"] > 0)),
                    "study excludes 0": bool(s["low_pp"] > 0 or s["high_pp"] < 0),
                    "this run excludes 0": bool(low > 0 or high < 0),
                }
            )
    return pd.DataFrame(rows)
