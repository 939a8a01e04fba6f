"""The training-length ladder: the same conditions trained for more steps, each length its own run.

A *rung* is the records folder of one training length: ``<profile>`` (the profile's own steps)
and ``<profile>-steps<N>`` (``embdiag train --profile cpu --steps N``), each run with its own
warmup and cosine schedule over its N steps, not a snapshot of a longer run. :func:`rungs`
finds them, :func:`ladder_records` stacks their finished runs of the ladder's conditions
(:data:`CONDITIONS`) with a ``steps`` column, :func:`findings_by_length` applies the training
chapter's declared criteria (:data:`embdiag.training.findings.CRITERIA`, no new thresholds) at
every length, and :func:`gaps` gives the contracted control's paired differences from the EMA
reference and from the untrained encoder, seed by seed, with paired Student-t 95% intervals.
The figure (:func:`length_chart`) computes nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import altair as alt
import pandas as pd

from .. import artifacts
from .config import PROFILES
from .findings import CONTROL, EMA, findings
from .sweep import UNTRAINED, load_records, paired_seeds

__all__ = ["CONDITIONS", "rungs", "ladder_records", "findings_by_length", "gaps", "measured", "trend", "length_frame",
           "length_chart"]

#: The ladder's conditions: the two of the headline and the condition with the widest spread.
CONDITIONS = (EMA, CONTROL, "SIGReg + stop-gradient")
#: The contrasts :func:`gaps` measures: (name, condition A, condition B, metric stem).
CONTRASTS = (("control − EMA, probe accuracy", CONTROL, EMA, "accuracy"),
             ("control − untrained, probe accuracy", CONTROL, UNTRAINED, "accuracy"),
             ("control − EMA, P@10", CONTROL, EMA, "P@10"))


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
        r = load_records(label, root=root)
        if r.empty:
            continue
        keep = r["condition"].isin([UNTRAINED, *conditions]) & (r["status"] == "ok") & ~r["stale"].astype(bool)
        if set(conditions) <= set(r[keep]["condition"]):  # a rung begun is a length once each condition has a run
            parts.append(r[keep].assign(steps=steps))
    if not parts:
        raise ValueError(f"profile: no training records for {profile!r} (run: embdiag train --profile {profile})")
    return pd.concat(parts, ignore_index=True)


def _at(records: pd.DataFrame, steps: int) -> pd.DataFrame:
    return records[records["steps"] == steps].drop(columns="steps")


def findings_by_length(records: pd.DataFrame, attribute: str = "timeofday", study=None) -> pd.DataFrame:
    """Every finding of :func:`embdiag.training.findings.findings` at every length of ``records``
    (those with the EMA reference, the control and the untrained encoder), among the ladder's
    conditions only: one row per finding and length, ``finding``, ``steps``, ``seeds`` (control
    runs that entered), ``this run`` and ``reproduces``."""
    rows = []
    for steps in sorted(records["steps"].unique()):
        at = _at(records, steps)
        if not {EMA, CONTROL, UNTRAINED} <= set(at["condition"]):
            continue
        v = findings(at, attribute, study)
        seeds = int((at["condition"] == CONTROL).sum())
        rows += [{"finding": r["finding"], "steps": int(steps), "seeds": seeds, "this run": r["this run"],
                  "reproduces": bool(r["reproduces"])} for _, r in v.iterrows()]
    return pd.DataFrame(rows, columns=["finding", "steps", "seeds", "this run", "reproduces"])


def gaps(records: pd.DataFrame, attribute: str = "timeofday") -> pd.DataFrame:
    """:data:`CONTRASTS` at every length: A minus B seed by seed on ``attribute`` (percentage
    points), with the paired Student-t 95% interval over the seeds both have (NaN below two).
    Columns ``contrast``, ``steps``, ``n``, ``mean``, ``low``, ``high``."""
    rows = []
    for steps in sorted(records["steps"].unique()):
        at = _at(records, steps)
        for name, a, b, stem in CONTRASTS:
            seeds, _, _, (mean, low, high) = paired_seeds(at, a, b, f"{attribute} {stem}")
            if seeds:
                rows.append({"contrast": name, "steps": int(steps), "n": len(seeds), "mean": 100 * mean,
                             "low": 100 * low, "high": 100 * high})
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


def length_frame(records: pd.DataFrame, attribute: str = "timeofday") -> pd.DataFrame:
    """What :func:`length_chart` plots: one row per run and metric (total variance, probe
    accuracy and P@10 on ``attribute``, percent), with ``steps``, ``condition`` and ``seed``."""
    metrics = (("total_variance", "total variance", 1.0), (f"{attribute} accuracy", "probe accuracy (%)", 100.0),
               (f"{attribute} P@10", "P@10 (%)", 100.0))
    rows = [{"steps": int(r["steps"]), "condition": r["condition"], "seed": int(r["seed"]), "metric": label,
             "value": scale * float(r[column])}
            for _, r in records.iterrows() for column, label, scale in metrics]
    return pd.DataFrame(rows)


def length_chart(frame: pd.DataFrame, study: pd.DataFrame | None = None, study_steps: int = 4000,
                 attribute: str = "timeofday") -> alt.HConcatChart:
    """Each metric of :func:`length_frame` against training steps (log axis): seeds as dots, the
    mean over seeds as a line per condition, the untrained encoder as a dashed rule, and the
    study's published time-of-day means (``study``, e.g. ``findings.read_means()``) as diamonds
    at its own ``study_steps`` (drawn only for ``attribute`` time of day)."""
    conditions = [c for c in CONDITIONS if c in set(frame["condition"])]
    colour = alt.Color("condition:N", scale=alt.Scale(domain=conditions), legend=alt.Legend(orient="bottom"))
    steps = sorted(set(frame["steps"]))
    ends = [min(steps[0], study_steps) * 0.8, max(steps[-1], study_steps) * 1.25]
    x = alt.X("steps:Q", scale=alt.Scale(type="log", domain=ends),   # ticks at the rungs; the study's own step
              axis=alt.Axis(values=steps, format=",d"), title="training steps (log)")  # count is in the caption
    study_cols = {"total variance": "total_variance", "probe accuracy (%)": "probe_accuracy_pct",
                  "P@10 (%)": "p_at_10_pct"}
    panels = []
    for metric in ("total variance", "probe accuracy (%)", "P@10 (%)"):
        data = frame[frame["metric"] == metric]
        trained = data[data["condition"] != UNTRAINED]
        y = alt.Y("value:Q", title=metric if metric != "total variance" else "total variance (log)",
                  scale=alt.Scale(type="log" if metric == "total variance" else "linear", zero=False))
        base = alt.Chart(trained)
        layers = [base.mark_circle(size=30, opacity=0.6).encode(x=x, y=y, color=colour,
                                                                 tooltip=["condition", "seed", "steps", "value"]),
                  base.mark_line(point=False).encode(x=x, y=alt.Y("mean(value):Q"), color=colour)]
        untrained = data[data["condition"] == UNTRAINED]
        if len(untrained):
            layers.append(alt.Chart(pd.DataFrame({"value": [untrained["value"].mean()]})).mark_rule(
                strokeDash=[4, 3], color="#555").encode(y="value:Q"))
        if study is not None and attribute == "timeofday":  # the study published time-of-day means only
            s = pd.DataFrame([{"steps": study_steps, "condition": c, "value": float(study.loc[c, study_cols[metric]])}
                              for c in conditions if c in study.index])
            layers.append(alt.Chart(s).mark_point(shape="diamond", size=90, filled=True).encode(
                x=x, y="value:Q", color=colour, tooltip=["condition", alt.Tooltip("value:Q", title="study")]))
        panels.append(alt.layer(*layers).properties(width=190, height=200, title=metric))
    return alt.hconcat(*panels).resolve_scale(y="independent")
