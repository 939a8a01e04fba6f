"""The training-length ladder: the same conditions trained for more steps, each length its own run.

A *rung* is the records folder of one training length: ``<profile>`` (the profile's own steps)
and ``<profile>-steps<N>`` (``embdiag train --profile cpu --steps N``), each run with its own
warmup and cosine schedule over its N steps, not a snapshot of a longer run. :func:`rungs`
finds them, :func:`ladder_records` stacks their finished runs of the ladder's conditions
(:data:`CONDITIONS`) with a ``steps`` column, and :func:`gaps` gives the contracted control's
paired differences from the EMA reference and from the untrained encoder, seed by seed, with
paired Student-t 95% intervals; :func:`trend` says how a gap moves with length. The findings
at every length are the study's (:mod:`embdiag.study.training`), the figure the training
chapter's (:mod:`embdiag.paper.chapters.training`).

:data:`SUBSTRATE` declares the length at which the seven conditions are compared: the shortest
rung where the EMA reference has learned beyond its initialisation (:func:`substrate`,
:func:`substrate_length`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from typing import NamedTuple

from .. import artifacts
from .config import PROFILES
from .sweep import UNTRAINED, load_records, paired_seeds

__all__ = [
    "EMA",
    "CONTROL",
    "CONDITIONS",
    "CONTRASTS",
    "rungs",
    "ladder_records",
    "at_length",
    "gaps",
    "measured",
    "trend",
    "Substrate",
    "SUBSTRATE",
    "substrate",
    "substrate_length",
]

EMA, CONTROL = "EMA reference", "Contracted control"
#: The ladder's conditions: the two of the headline and the condition with the widest spread.
CONDITIONS = (EMA, CONTROL, "SIGReg + stop-gradient")
#: The contrasts :func:`gaps` measures: (name, condition A, condition B, metric stem).
CONTRASTS = (
    ("control − EMA, probe accuracy", CONTROL, EMA, "accuracy"),
    ("control − untrained, probe accuracy", CONTROL, UNTRAINED, "accuracy"),
    ("control − EMA, P@10", CONTROL, EMA, "P@10"),
)


def rungs(profile: str = "cpu", root=None) -> dict[int, str]:
    """``{steps: records label}`` of every length of ``profile`` with records, shortest first."""
    if profile not in PROFILES:
        raise ValueError(f"profile: expected one of {tuple(PROFILES)}, got {profile!r}")
    folder = Path(root if root is not None else artifacts.data_dir()) / "training"
    found = {PROFILES[profile].steps: profile} if (folder / profile).is_dir() else {}
    for path in folder.glob(f"{profile}-steps*"):
        m = re.fullmatch(rf"{re.escape(profile)}-steps(\d+)", path.name)
        if m and path.is_dir():
            found[int(m.group(1))] = path.name
    return dict(sorted(found.items()))


def ladder_records(profile: str = "cpu", conditions=CONDITIONS, root=None) -> pd.DataFrame:
    """The finished, current runs of ``conditions`` and the untrained encoders at every rung where
    each of ``conditions`` has at least one finished run (a sweep in progress adds its length
    once its first seed is done), one row per run with ``steps`` (the rung's length; the
    untrained encoder is the same at every rung and appears at each)."""
    parts = []
    for steps, label in rungs(profile, root).items():
        r = load_records(label, root=root, conditions=[UNTRAINED, *conditions])
        if r.empty:
            continue
        keep = r["condition"].isin([UNTRAINED, *conditions]) & (r["status"] == "ok") & ~r["stale"].astype(bool)
        if set(conditions) <= set(r[keep]["condition"]):  # a rung begun is a length once each condition has a run
            parts.append(r[keep].assign(steps=steps))
    if not parts:
        raise ValueError(f"profile: no training records for {profile!r} (run: embdiag train --profile {profile})")
    return pd.concat(parts, ignore_index=True)


def at_length(records: pd.DataFrame, steps: int) -> pd.DataFrame:
    """The rows of :func:`ladder_records` at one length, without the ``steps`` column."""
    return records[records["steps"] == steps].drop(columns="steps")


def gaps(records: pd.DataFrame, attribute: str = "timeofday") -> pd.DataFrame:
    """:data:`CONTRASTS` at every length: A minus B seed by seed on ``attribute`` (percentage
    points), with the paired Student-t 95% interval over the seeds both have (NaN below two).
    Columns ``contrast``, ``steps``, ``n``, ``mean``, ``low``, ``high``."""
    rows = []
    for steps in sorted(records["steps"].unique()):
        at = at_length(records, steps)
        for name, a, b, stem in CONTRASTS:
            seeds, _, _, (mean, low, high) = paired_seeds(at, a, b, f"{attribute} {stem}")
            if seeds:
                rows.append(
                    {
                        "contrast": name,
                        "steps": int(steps),
                        "n": len(seeds),
                        "mean": 100 * mean,
                        "low": 100 * low,
                        "high": 100 * high,
                    }
                )
    return pd.DataFrame(rows, columns=["contrast", "steps", "n", "mean", "low", "high"])


def measured(table: pd.DataFrame, contrast: str) -> list[int]:
    """The lengths at which ``contrast`` of :func:`gaps` has an interval (two seeds or more),
    shortest first: a rung still training its second seed is not among them."""
    rows = table[(table["contrast"] == contrast) & (table["n"] >= 2)]
    return sorted(int(n) for n in rows["steps"])


def trend(table: pd.DataFrame, contrast: str) -> str:
    """How ``contrast`` of :func:`gaps` moves from the shortest to the longest of the
    :func:`measured` lengths, in words: it *widens* (moves away from zero) or *narrows* when the
    longest one's interval excludes the shortest one's mean, else it *holds*; with fewer than two
    measured lengths it is *not yet measured at two lengths*."""
    lengths = measured(table, contrast)
    if len(lengths) < 2:
        return "not yet measured at two lengths"
    rows = table[table["contrast"] == contrast].set_index("steps")
    first, last = rows.loc[lengths[0]], rows.loc[lengths[-1]]
    if last["low"] <= first["mean"] <= last["high"]:
        return "holds"
    return "widens" if abs(last["mean"]) > abs(first["mean"]) else "narrows"


class Substrate(NamedTuple):
    """The criterion a length must meet before the seven conditions are compared there.

    At that length the EMA reference minus the untrained encoder, seed by seed with a paired
    Student-t 95% interval, is wholly above zero on every one of ``metrics`` (record columns,
    fractions), and its lower bound is at least ``margin`` percentage points on the ``probe``
    metric of at least ``attributes`` attributes.
    """

    metrics: tuple[str, ...]
    probe: dict
    margin: float
    attributes: int


#: The declared criterion: time of day by probe accuracy (the study's headline metric for it),
#: weather and scene by balanced accuracy, every attribute by P@10; a 5 pp margin on two attributes.
SUBSTRATE = Substrate(
    metrics=(
        "timeofday accuracy",
        "weather BA",
        "scene BA",
        "timeofday P@10",
        "weather P@10",
        "scene P@10",
    ),
    probe={"timeofday": "timeofday accuracy", "weather": "weather BA", "scene": "scene BA"},
    margin=5.0,
    attributes=2,
)


def substrate(records: pd.DataFrame, criterion: Substrate = SUBSTRATE) -> pd.DataFrame:
    """EMA reference minus untrained encoder on each of ``criterion.metrics`` at every length of
    :func:`ladder_records` ``records``: columns ``steps``, ``metric``, ``n`` (paired seeds),
    ``mean``, ``low``, ``high`` (percentage points), ``above_zero`` (``low > 0``) and
    ``above_margin`` (``low >= criterion.margin``)."""
    rows = []
    for steps in sorted(records["steps"].unique()):
        at = at_length(records, steps)
        for metric in criterion.metrics:
            seeds, _, _, (mean, low, high) = paired_seeds(at, EMA, UNTRAINED, metric)
            rows.append(
                {
                    "steps": int(steps),
                    "metric": metric,
                    "n": len(seeds),
                    "mean": 100 * mean,
                    "low": 100 * low,
                    "high": 100 * high,
                }
            )
    table = pd.DataFrame(rows, columns=["steps", "metric", "n", "mean", "low", "high"])
    table["above_zero"] = table["low"] > 0
    table["above_margin"] = table["low"] >= criterion.margin
    return table


def substrate_length(table: pd.DataFrame, criterion: Substrate = SUBSTRATE) -> int | None:
    """The shortest length of :func:`substrate` ``table`` that meets ``criterion`` (every metric's
    interval above zero from two seeds or more; the margin on ``criterion.attributes`` probe
    metrics), or None when no measured length does."""
    for steps, at in table.groupby("steps", sort=True):
        at = at.set_index("metric")
        if set(criterion.metrics) - set(at.index) or (at["n"] < 2).any() or not at["above_zero"].all():
            continue
        if sum(bool(at.loc[m, "above_margin"]) for m in criterion.probe.values()) >= criterion.attributes:
            return int(steps)
    return None
