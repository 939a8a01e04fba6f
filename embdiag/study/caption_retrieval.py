"""The caption-retrieval section, measured once: image–caption retrieval at the native dimension
and at Matryoshka prefixes, its declared findings and their verdicts.

:class:`Settings` are the chapter's measurement parameters; :func:`run` measures a
:class:`~embdiag.encoders.vectors.CaptionVectors` once (both searches and category P@k per
representation, the paired-bootstrap changes and contrasts, the shuffled-correspondence control:
:mod:`embdiag.interventions.caption_retrieval`), kept on disk by :mod:`embdiag._memo`;
:data:`CRITERIA` restates each finding of the study's section as a test with a declared margin,
which :func:`findings` applies to a measurement and to the study's published values
(:func:`read_study`, ``data/study/caption_retrieval.csv``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._memo import memo
from .._validate import as_matrix, check_int
from ..interventions import caption_retrieval as cr
from ..interventions.caption_retrieval import I2T, METRICS, T2I, CaptionRetrieval
from ..interventions.compression import study_dims
from ..metrics.inference import Decision, all_of, at_least, at_most, not_testable, within
from ..metrics.stats import proportion_interval
from .findings import Claim, read_published, verdicts

STUDY_FILE = "caption_retrieval.csv"
#: The study's prefixes as shares of the native dimension: 256 and 128 of 768.
SHARES = (1 / 3, 1 / 6)


@dataclass(frozen=True)
class Settings:
    """The caption chapter's measurement parameters: ``k``, the cut-off of Hit@k, caption recall@k,
    overlap@k and category P@k; ``dims``, the prefix dimensions compared with native (None: the
    study's 256 and 128 of 768, in proportion to the encoder's dimension, :data:`SHARES`);
    ``n_draws`` paired bootstrap draws of the image groups; ``seed`` of the draws and of the
    shuffled correspondence; ``n_permutations`` further shuffles of the control."""

    k: int = 10
    dims: tuple[int, ...] | None = None
    n_draws: int = 5000
    seed: int = 0
    n_permutations: int = 1000


@dataclass(frozen=True)
class Measurement:
    """One run of the section: the retrieval ``result``
    (:func:`~embdiag.interventions.caption_retrieval.evaluate`), the compressed-minus-native
    ``changes`` (:func:`~embdiag.interventions.caption_retrieval.bootstrap_changes`), the shuffled
    ``control`` (:func:`~embdiag.interventions.caption_retrieval.shuffled_control`), the paired
    ``contrasts`` against :data:`FAR_MORE` times the Hit@k change
    (:func:`~embdiag.interventions.caption_retrieval.bootstrap_contrasts`; None: the third finding's
    paired part is not testable) and the resolved ``settings`` they were measured with."""

    result: CaptionRetrieval
    changes: pd.DataFrame
    control: pd.DataFrame
    contrasts: pd.DataFrame | None
    settings: Settings


def _dims(dims, d: int) -> tuple[int, ...]:
    """``dims`` checked against the native dimension ``d`` (None: the study's, :data:`SHARES`)."""
    if dims is None:
        return tuple(study_dims(d, shares=SHARES))
    if isinstance(dims, (str, bytes)) or not isinstance(dims, Iterable):
        raise ValueError(f"dims: expected a list of prefix dimensions, got {dims!r}")
    dims = tuple(check_int(m, "dims", minimum=1) for m in dims)
    if not dims or any(m >= d for m in dims):
        raise ValueError(f"dims: expected one or more prefix dimensions below the native d = {d}, got {list(dims)}")
    return dims


def run(captions, settings: Settings = Settings()) -> Measurement:
    """The section's measurement of ``captions`` (a :class:`~embdiag.encoders.vectors.CaptionVectors`)
    under ``settings``: every number the findings and the chapter's exhibits read. Raises
    ``ValueError`` naming the parameter for a bad setting. The result is kept on disk
    (:mod:`embdiag._memo`) under the inputs' content and the resolved settings."""
    d = as_matrix(captions.images, "images").shape[1]
    return _measured(
        captions.images,
        captions.queries,
        captions.documents,
        captions.group,
        captions.categories,
        k=check_int(settings.k, "k", minimum=1),
        dims=_dims(settings.dims, d),
        n_draws=check_int(settings.n_draws, "n_draws", minimum=2),
        seed=check_int(settings.seed, "seed", minimum=0),
        n_permutations=check_int(settings.n_permutations, "n_permutations", minimum=1),
    )


@memo
def _measured(images, queries, documents, group, categories, k, dims, n_draws, seed, n_permutations) -> Measurement:
    """:func:`run` of checked settings (``dims`` resolved)."""
    result = cr.evaluate(images, queries, documents, group, categories, dims=dims, k=k)
    return Measurement(
        result=result,
        changes=cr.bootstrap_changes(result, n_draws=n_draws, seed=seed),
        control=cr.shuffled_control(result, seed=seed, n_permutations=n_permutations),
        contrasts=cr.bootstrap_contrasts(result, FAR_MORE, n_draws=n_draws, seed=seed),
        settings=Settings(k, dims, n_draws, seed, n_permutations),
    )


def read_study(path=None) -> pd.DataFrame:
    """The study's caption-retrieval values as printed (``data/study/caption_retrieval.csv``;
    percent, or pp for changes): columns ``metric``, ``direction``, ``representation``,
    ``value``, ``low``, ``high``, ``unit``."""
    return read_published(STUDY_FILE, path)


def study_value(study: pd.DataFrame, metric: str, direction: str, representation: str, column: str = "value"):
    """The study's ``column`` of one metric, direction and representation (NaN where it printed none)."""
    row = study[
        (study["metric"] == metric) & (study["direction"] == direction) & (study["representation"] == representation)
    ]
    return float(row[column].iloc[0]) if len(row) else float("nan")


def study_changes(study: pd.DataFrame) -> pd.DataFrame:
    """The study's changes from native (pp): differences of its table, with its printed intervals
    where it gave them (``low``, ``high``; NaN elsewhere)."""
    rows = []
    for rep in ("MRL 256", "MRL 128"):
        for direction, metric, _ in METRICS:
            name = metric.replace("@k", "@10")
            change = study_value(study, name, direction, rep) - study_value(study, name, direction, "native 768")
            low, high = (study_value(study, f"{name} change", direction, rep, c) for c in ("low", "high"))
            rows.append(
                {
                    "representation": rep,
                    "direction": direction,
                    "metric": name,
                    "change": round(change, 2),
                    "low": low,
                    "high": high,
                }
            )
    return pd.DataFrame(rows)


#: The margins of the findings, declared before this run's numbers: a cost smaller than ``SMALL`` pp
#: is little, and a fall larger than ``SMALL`` pp is a cost; Hit@10 is high at ``HIGH`` % or more and
#: kept when it falls less than ``KEEPS`` pp; "far more" is more than ``FAR_MORE`` times the Hit@10
#: fall; a shuffled Hit@10 within ``NEAR_CHANCE`` pp of its exact chance level is at chance.
SMALL, HIGH, KEEPS, FAR_MORE, NEAR_CHANCE = 1.0, 90.0, 5.0, 2.0, 1.0
#: The study's design: queries per direction (1,000 images with five captions each) and its cut-off.
STUDY_QUERIES, STUDY_IMAGES, STUDY_K = {T2I: 5000, I2T: 1000}, 1000, 10
#: The lowest and highest image→text chance a shuffle of five-caption groups allows (top ten captions
#: owned by 2 to 10 of the 1,000 images), percent: the study printed no chance level for it.
STUDY_I2T_CHANCE = (100 * 2 / STUDY_IMAGES, 100 * 10 / STUDY_IMAGES)

#: The findings of the study's caption section, each a claim with its declared margin.
CRITERIA = {
    "256-d costs little": Claim(
        f"in both directions the 95% interval of the 256-d Hit@10 change lies within ±{SMALL:g} pp",
        f"±{SMALL:g} pp",
        "1 pp of Hit@10 is one query in 100; the study calls its 256-d changes (-0.20, -0.30 pp) little and its "
        "128-d ones (-2.50, -3.34 pp) a cost",
        was="in both directions the 256-d Hit@10 change's 95% interval includes 0 or lies within ±1 pp",
    ),
    "128-d keeps Hit@10 high": Claim(
        f"in both directions the 95% interval of the 128-d Hit@10 lies above {HIGH:g}% and that of its change "
        f"above -{KEEPS:g} pp",
        f"{HIGH:g}% (level); -{KEEPS:g} pp (change)",
        "the study calls its 128-d Hit@10 of 93.82% and 95.90% high, after falls of 3.34 and 2.50 pp; 90% and 5 pp "
        "are the round bounds beyond them",
        was="in both directions the 128-d Hit@10 falls by less than 5 pp",
    ),
    "128-d costs Hit@1 and caption recall far more": Claim(
        f"at 128-d the 95% intervals of the T→I Hit@1, I→T Hit@1 and I→T caption recall@10 changes each lie below "
        f"-{SMALL:g} pp, and of each change minus {FAR_MORE:g} times its direction's Hit@10 change (paired, over "
        f"image groups) below 0",
        f"-{SMALL:g} pp (change); factor {FAR_MORE:g} (far more)",
        "1 pp is the cost margin above; the study's falls are 3.4 to 4.5 times its Hit@10 falls, so twice is a "
        "lower bound of its far more",
        was="at 128-d, T→I Hit@1, I→T Hit@1 and I→T caption recall@10 each fall by at least 1 pp and by at least "
        "twice the Hit@10 fall of their direction",
    ),
    "shuffled control falls to chance": Claim(
        f"in both directions the 95% interval of the shuffled Hit@10 minus its exact chance level lies within "
        f"±{NEAR_CHANCE:g} pp (this run: the central 95% of further seeded shuffles; the study: a Wilson interval over "
        f"its queries, against the range of chance its shuffle allows)",
        f"±{NEAR_CHANCE:g} pp",
        "1 pp is the study's text→image chance level (10 of 1,000 images) and under 1/90 of its real Hit@10",
        was="in both directions the shuffled Hit@10 lies within 1 pp of its exact chance level",
    ),
}


#: The columns of this run's tables that hold fractions: percent, or pp for changes, in the study's units.
_SHARES = (
    "native", "compressed", "change", "low", "high", "compressed low", "compressed high", "contrast",
    "real", "shuffled", "chance", "permutation low", "permutation high",
)  # fmt: skip


def in_pp(table: pd.DataFrame) -> pd.DataFrame:
    """This run's ``table`` (fractions) in the units of the study's: percent, and pp for changes."""
    return table.assign(**{c: 100 * table[c] for c in _SHARES if c in table.columns})


def pick(pp: pd.DataFrame, representation: str, direction: str, metric: str) -> pd.Series | None:
    """The row of ``pp`` for one representation, direction and metric (None where it has none)."""
    row = pp[(pp["representation"] == representation) & (pp["direction"] == direction) & (pp["metric"] == metric)]
    return row.iloc[0] if len(row) else None


def change_text(mean, low=None, high=None) -> str:
    """A signed value with its interval where it has one: ``-0.20 [-0.54, +0.14]``."""
    return f"{mean:+.2f}" + ("" if low is None or np.isnan(low) else f" [{low:+.2f}, {high:+.2f}]")


def _labelled(label: str, d: Decision) -> Decision:
    return d._replace(reason=f"{label} {d.reason}")


#: The two search directions and their short names.
DIRECTIONS = ((T2I, "T→I"), (I2T, "I→T"))
_LOSSES = (
    ("T→I Hit@1", T2I, "Hit@1"),
    ("I→T Hit@1", I2T, "Hit@1"),
    ("I→T caption recall@10", I2T, "caption recall@10"),
)
_NOT_MEASURED = "not measured ({} not among dims, or k is not 10)"


def _little(pp: pd.DataFrame) -> tuple[str, Decision | None]:
    """256-d costs little: each direction's Hit@10 change within ±SMALL pp."""
    rows = [(a, pick(pp, "MRL 256", d, "Hit@10")) for d, a in DIRECTIONS]
    if any(o is None for _, o in rows):
        return _NOT_MEASURED.format(256), None
    words = "; ".join(f"{a} {change_text(o['change'], o['low'], o['high'])}" for a, o in rows)
    return words, all_of(*(_labelled(a, within(o["low"], o["high"], SMALL)) for a, o in rows))


def _level(o: pd.Series) -> tuple[float, float]:
    return (o["compressed low"], o["compressed high"]) if "compressed low" in o else (np.nan, np.nan)


def _high(pp: pd.DataFrame, levels=None) -> tuple[str, Decision | None]:
    """128-d keeps Hit@10 high: each direction's Hit@10 above HIGH % and its change above -KEEPS pp;
    ``levels`` gives each direction's level interval where ``pp`` has none (the study's)."""
    rows = [(d, a, pick(pp, "MRL 128", d, "Hit@10")) for d, a in DIRECTIONS]
    if any(o is None for *_, o in rows):
        return _NOT_MEASURED.format(128), None
    parts, words = [], []
    for d, a, o in rows:
        low, high = _level(o) if levels is None else levels[d]
        level = f"{o['compressed']:.2f}%" + ("" if np.isnan(low) else f" [{low:.2f}, {high:.2f}]")
        words.append(f"{a} Hit@10 {level}, change {change_text(o['change'], o['low'], o['high'])}")
        parts += [
            _labelled(f"{a} Hit@10:", at_least(low, high, HIGH)),
            _labelled(f"{a} change:", at_least(o["low"], o["high"], -KEEPS)),
        ]
    return "; ".join(words), all_of(*parts)


def _far_more(pp: pd.DataFrame, contrasts: pd.DataFrame | None) -> tuple[str, Decision | None]:
    """128-d costs Hit@1 and caption recall far more: each change below -SMALL pp and below FAR_MORE
    times its direction's Hit@10 change (``contrasts``: :func:`bootstrap_contrasts`, in pp)."""
    rows = [(n, pick(pp, "MRL 128", d, m), pick(pp, "MRL 128", d, "Hit@10")) for n, d, m in _LOSSES]
    if any(o is None or h is None for _, o, h in rows):
        return _NOT_MEASURED.format(128), None
    parts, words = [], []
    for (name, direction, metric), (_, o, h) in zip(_LOSSES, rows):
        c = None if contrasts is None else pick(contrasts, "MRL 128", direction, metric)
        parts.append(_labelled(f"{name}:", at_most(o["low"], o["high"], -SMALL)))
        fall, hit10 = (change_text(r["change"], r["low"], r["high"]) for r in (o, h))
        text = f"{name} {fall} vs Hit@10 {hit10}"
        if c is None:
            parts.append(not_testable(f"{name}: no paired interval of the change against {FAR_MORE:g} times Hit@10's"))
        else:
            parts.append(_labelled(f"{name} minus {FAR_MORE:g}× Hit@10:", at_most(c["low"], c["high"], 0)))
            text += f", contrast {change_text(c['contrast'], c['low'], c['high'])}"
        words.append(text)
    return "; ".join(words), all_of(*parts)


def _near_chance(rows) -> tuple[str, Decision]:
    """(direction label, shuffled %, interval low %, interval high %, chance low %, chance high %) per
    direction: the interval minus chance within ±NEAR_CHANCE pp (the chance a range where unknown)."""
    words, parts = [], []
    for a, s, low, high, c_low, c_high in rows:
        chance = f"{c_low:.2f}%" if c_low == c_high else f"{c_low:.2f}–{c_high:.2f}%"
        words.append(f"{a} {s:.2f}% [{low:.2f}, {high:.2f}] (chance {chance})")
        parts.append(_labelled(f"{a} minus chance:", within(low - c_high, high - c_low, NEAR_CHANCE)))
    return "; ".join(words), all_of(*parts)


def _study_levels(study: pd.DataFrame) -> dict:
    """The study's 128-d Hit@10 per direction with its Wilson interval over its queries (percent)."""
    out = {}
    for d, _ in DIRECTIONS:
        n = STUDY_QUERIES[d]
        iv = proportion_interval(round(study_value(study, "Hit@10", d, "MRL 128") * n / 100), n)
        out[d] = (100 * iv.low, 100 * iv.high)
    return out


def _study_control(study: pd.DataFrame) -> list[tuple]:
    rows = []
    for d, a in DIRECTIONS:
        n, s = STUDY_QUERIES[d], study_value(study, "shuffled Hit@10", d, "native 768")
        iv = proportion_interval(round(s * n / 100), n)
        chance = (100 * STUDY_K / STUDY_IMAGES,) * 2 if d == T2I else STUDY_I2T_CHANCE
        rows.append((a, s, 100 * iv.low, 100 * iv.high, *chance))
    return rows


def _old_verdicts(pp: pd.DataFrame, control_rows) -> dict:
    """The point-estimate verdicts of the old criteria (:attr:`Claim.was`) on this run's numbers."""
    h256 = [pick(pp, "MRL 256", d, "Hit@10") for d, _ in DIRECTIONS]
    h128 = {d: pick(pp, "MRL 128", d, "Hit@10") for d, _ in DIRECTIONS}
    losses = [(pick(pp, "MRL 128", d, m), h128[d]) for _, d, m in _LOSSES]
    measured128 = all(h is not None for h in h128.values())
    return {
        "256-d costs little": None
        if any(o is None for o in h256)
        else all((o["low"] <= 0 <= o["high"]) or max(abs(o["low"]), abs(o["high"])) <= 1 for o in h256),
        "128-d keeps Hit@10 high": all(o["change"] > -5 for o in h128.values()) if measured128 else None,
        "128-d costs Hit@1 and caption recall far more": all(
            p["change"] <= -1 and p["change"] <= 2 * min(h["change"], 0) for p, h in losses
        )
        if measured128
        else None,
        "shuffled control falls to chance": None
        if control_rows is None
        else all(abs(s - c) <= 1 for _, s, _, _, c, _ in control_rows),
    }


def findings(measured: Measurement, study: pd.DataFrame | None = None) -> pd.DataFrame:
    """The verdict table (:func:`~embdiag.study.findings.verdicts`) of :data:`CRITERIA`, each
    decided by 95% intervals against its declared margin, on this run's numbers and on the
    study's (``holds in the study``), with the old point-estimate verdicts beside.

    ``measured`` is :func:`run`'s :class:`Measurement` (its ``changes``, ``control`` and
    ``contrasts``; without contrasts the paired part of the third finding is not testable);
    ``study`` defaults to :func:`read_study`. The findings speak of Hit@10 at 256
    and 128 dimensions: a run without ``k = 10`` or those dims does not measure them. This
    run's intervals are paired bootstraps over image groups, conditional on these images and
    captions (fixed encoder); its control's interval is the central 95% of further seeded
    shuffles with the rankings fixed. The study's: its printed Hit@10 change intervals; Wilson
    intervals over its 5,000 caption and 1,000 image queries for its levels and its shuffle
    (treating an image's captions as independent); its Hit@1 and caption-recall changes were
    printed without intervals, so that finding is not testable on them. The study printed no
    image→text chance level: a group shuffle's lies between 2 and 10 owners of the top ten
    captions out of 1,000 (:data:`STUDY_I2T_CHANCE`)."""
    study = read_study() if study is None else study
    changes, control, contrasts = measured.changes, measured.control, measured.contrasts
    ours, theirs = in_pp(changes), study_changes(study)
    theirs["compressed"] = [
        study_value(study, m, d, r) for m, d, r in zip(theirs["metric"], theirs["direction"], theirs["representation"])
    ]
    c10 = in_pp(control[control["metric"] == "Hit@10"]).set_index("direction")
    control_rows = (
        [
            (a, c10.loc[d, "shuffled"], c10.loc[d, "permutation low"], c10.loc[d, "permutation high"])
            + (c10.loc[d, "chance"],) * 2
            for d, a in DIRECTIONS
        ]
        if len(c10) == 2
        else None
    )
    paired = not_testable("the study printed its Hit@1 and caption-recall changes without intervals")
    study_rows = [
        _little(theirs),
        _high(theirs, _study_levels(study)),
        (_far_more(theirs, None)[0], paired),
        _near_chance(_study_control(study)),
    ]
    our_rows = [
        _little(ours),
        _high(ours),
        _far_more(ours, None if contrasts is None else in_pp(contrasts)),
        ("not measured (k is not 10)", None) if control_rows is None else _near_chance(control_rows),
    ]
    rows = [(f, s[0], o[0], s[1], o[1]) for f, s, o in zip(CRITERIA, study_rows, our_rows)]
    return verdicts(CRITERIA, rows, was=_old_verdicts(ours, control_rows))
