"""The study's neighbour-stability section: the eight storage conditions measured once, and its findings.

:func:`run` ranks the evaluation vectors under the study's eight conditions
(:func:`~embdiag.interventions.precision.compare_study_conditions`: FP16 and INT8 storage, FP32
arithmetic and a common offset, each against its own float64 reference ranking) and measures
everything the findings and the chapter read: the study's storage table of this run
(:func:`storage_table`), the paired bootstrap intervals over the queries of the differences in
changed queries and of the change of P@k under offset + FP16, the certificate's exceptions, and
the top-k boundary of one query per condition on the vectors as embedded. :func:`findings`
decides :data:`CRITERIA` on that measurement and on the study's published table
(``data/study/storage.csv``, :func:`read_study`). Percentages are percentage points; margins
are the reference rank-k minus rank-(k+1) scores; "changed" means the top-k identity set changed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._memo import memo
from .._validate import check_int, check_mapping
from ..interventions.precision import (
    STUDY_CONDITIONS,
    StorageResult,
    compare_study_conditions,
    query_scores,
)
from ..interventions.stress import check_severity
from ..metrics.inference import all_of, at_least, at_most, not_testable, within
from ..metrics.retrieval import precision_at_k
from ..metrics.stats import Interval, paired_bootstrap, proportion_interval
from .findings import SCOPE, Claim, read_published, verdicts

__all__ = [
    "CRITERIA",
    "MARGIN_EDGES",
    "Settings",
    "StorageMeasurement",
    "run",
    "measurement",
    "storage_table",
    "attribute_name",
    "result_named",
    "example_query",
    "boundary_data",
    "read_study",
    "share",
    "bounded_difference",
    "change_difference",
    "precision_changes",
    "precision_change_interval",
    "exceptions",
    "old_verdicts",
    "findings",
]

#: Margin bins (score units) of the changed-query table, declared before measuring: decades, the
#: smallest bin being every margin below 1e-5.
MARGIN_EDGES = (0.0, 1e-5, 1e-4, 1e-3, 1e-2, math.inf)
ATTRIBUTE_NAMES = {"weather": "weather", "scene": "scene", "timeofday": "time of day"}
NATIVE, OFFSET = "native reference", "common-offset reference"
OFFSET_FP16 = "offset + FP16 gallery"
FP16 = ("FP16 gallery", "FP16 queries + gallery")
INT8 = ("INT8 gallery", "INT8 queries + gallery")
FP32 = "FP32 arithmetic"

#: Declared margins, fixed before this run's numbers were looked at; shares are percent of the
#: queries (or of the changed queries), P@k changes percentage points.
FEW, NONE, SMALLEST, BARELY_PP, MOST_KEPT, MANY_CERTIFIED = 1.0, 0.5, 50.0, 0.5, 50.0, 50.0
#: Conditions that store or compute differently (every condition but the two references).
PERTURBING = FP16 + INT8 + (FP32, OFFSET_FP16)
#: The differences of changed shares the findings decide: (condition, minus condition).
DIFFERENCES = tuple(zip(INT8, FP16)) + tuple((OFFSET_FP16, c) for c in FP16 + INT8)
_PAIRED = "paired bootstrap over the queries of the changed indicators (conditional on the fixed gallery)"
#: The study's findings, each restated as a claim with a declared margin, fixed before looking at this run's numbers.
CRITERIA = {
    "FP16 changes few queries": Claim(
        f"in each FP16 condition the share of queries whose top k changes is below {FEW:g}% (Wilson 95% interval)",
        f"{FEW:g}% of the queries",
        "twice the study's FP16 rate (5 of 983, 0.5%), which it reports as a handful of changes",
        was="each FP16 condition changes at most 1% of the queries, every change in the smallest margin bin",
    ),
    "FP16 changes sit at the smallest margins": Claim(
        f"in each FP16 condition that changes any query, more than {SMALLEST:g}% of its changed queries have a "
        f"reference margin in the smallest bin (below {MARGIN_EDGES[1]:g}; Wilson 95% interval over the changed "
        "queries); not testable where no FP16 query changes",
        f"{SMALLEST:g}% of the changed queries",
        "'all changes in the smallest bin' read as a majority, the most a handful of changes can show",
        was="each FP16 condition changes at most 1% of the queries, every change in the smallest margin bin",
    ),
    "INT8 changes more": Claim(
        "each INT8 condition changes a larger share of the queries than the FP16 condition storing the same "
        f"sides: the difference (pp), by {_PAIRED}, above 0",
        "0 pp",
        "an ordering: any difference in the stated direction",
        was="each INT8 condition changes more queries than the FP16 condition storing the same sides",
    ),
    "FP32 arithmetic changes none": Claim(
        f"FP32 arithmetic's share of changed queries is below {NONE:g}% (Wilson 95% interval)",
        f"{NONE:g}% of the queries",
        "0 of n can only be bounded: at about 1,000 queries the Wilson interval of 0 reaches 0.39%, so 0.5% is "
        "the tightest round margin such a run can meet",
        was="FP32 arithmetic changes no query",
    ),
    "offset + FP16 changes many": Claim(
        f"offset + FP16 changes more than {FEW:g}% of the queries (Wilson 95% interval) and a larger share than "
        f"every native-scale FP16 and INT8 condition (the difference, pp, by {_PAIRED}, above 0)",
        f"{FEW:g}% of the queries; 0 pp",
        "'many' is more than 'few' (FP16's margin) and more than every native-scale storage",
        was="offset + FP16 changes more queries than every native-scale FP16 and INT8 condition",
    ),
    "agreement hides turnover": Claim(
        f"under offset + FP16 the change of P@k lies within ±{BARELY_PP:g} pp on every attribute (paired "
        "bootstrap over the queries of each query's P@k change, conditional on the fixed gallery) and more than "
        f"{MOST_KEPT:g}% of its changed queries keep their own P@k on every attribute (Wilson 95% interval)",
        f"±{BARELY_PP:g} pp; {MOST_KEPT:g}% of the changed queries",
        "half a point of P@10 is one neighbour swapped in every twentieth query; 'hides' means most keep theirs",
        was="offset + FP16 changes at least one query, moves P@k by at most 0.5 points on every attribute, and at "
        "least 50% of its changed queries keep their P@k on every attribute",
    ),
    "certificate covers many FP16 queries": Claim(
        f"more than {MANY_CERTIFIED:g}% of the FP16-gallery queries are certified (Wilson 95% interval)",
        f"{MANY_CERTIFIED:g}% of the queries",
        "'many' read as most; the study certifies 576 of 983 (59%)",
        was="at least 50% of the FP16-gallery queries are certified",
    ),
    "certificate covers no INT8 or offset query": Claim(
        f"in each INT8 condition and in offset + FP16 the certified share is below {NONE:g}% (Wilson 95% "
        "interval): a limit of the study's certificate, which a tighter certificate need not share",
        f"{NONE:g}% of the queries",
        "as for 'none' above: the tightest round margin 0 of about 1,000 can meet",
        kind=SCOPE,
        was="no query of either INT8 condition or of offset + FP16 is certified",
    ),
    "no exception": Claim(
        "among the queries certified under at least one condition that stores or computes differently, the share "
        f"that changed under a condition certifying it is below {NONE:g}% (Wilson 95% interval)",
        f"{NONE:g}% of the certified queries",
        "as for 'none' above: the tightest round margin 0 of about 1,000 can meet",
        was="no certified query changes, in any of the eight conditions",
    ),
}


@dataclass(frozen=True)
class Settings:
    """The section's parameters, named and defaulted as the chapter's parameters cell: ``k``
    neighbours per query; the common offset's ``offset_severity`` and ``offset_seed``; the paired
    bootstrap's ``n_draws`` and ``seed`` (the chapter's ``seed`` seeds its procedural dataset too)."""

    k: int = 10
    offset_severity: float = 0.99
    offset_seed: int = 0
    n_draws: int = 5000
    seed: int = 0


@dataclass(frozen=True, eq=False)
class StorageMeasurement:
    """One run of the section (:func:`run`).

    ``results``: one :class:`~embdiag.interventions.precision.StorageResult` per condition, in
    the study's order; ``labels``: the evaluation labels (attribute -> array); ``table``: this run
    in the study's columns (:func:`storage_table`); ``settings``: the checked settings;
    ``differences``: ``{(a, b): share of queries changed under a minus under b}`` (pp, paired
    bootstrap) for :data:`DIFFERENCES`; ``precision_changes``: per attribute, the mean change of
    P@k under offset + FP16 (pp, paired bootstrap); ``exceptions``: ``(exceptions, certified)``
    of :func:`exceptions`; ``boundaries``: the :func:`boundary_data` of each condition on the
    vectors as embedded.
    """

    results: tuple[StorageResult, ...]
    labels: dict
    table: pd.DataFrame
    settings: Settings
    differences: dict
    precision_changes: dict
    exceptions: tuple[int, int]
    boundaries: dict

    @property
    def k(self) -> int:
        return self.settings.k

    def boundary(self, condition: str) -> pd.DataFrame:
        """The top-k boundary of ``condition``'s example query (:func:`boundary_data`)."""
        if condition not in self.boundaries:
            raise ValueError(
                f"condition: {condition!r} is not a condition on the vectors as embedded (have {list(self.boundaries)})"
            )
        return self.boundaries[condition]


def _checked(settings: Settings) -> Settings:
    """``settings`` with every value checked (``ValueError`` naming the field) and normalized."""
    if not isinstance(settings, Settings):
        raise ValueError(f"settings: expected a neighbour_stability.Settings, got {type(settings).__name__}")
    return Settings(
        k=check_int(settings.k, "k", minimum=1),
        offset_severity=check_severity(settings.offset_severity, "offset_severity"),
        offset_seed=check_int(settings.offset_seed, "offset_seed", minimum=0),
        n_draws=check_int(settings.n_draws, "n_draws", minimum=2),
        seed=check_int(settings.seed, "seed", minimum=0),
    )


def run(vectors, settings: Settings = Settings()) -> StorageMeasurement:
    """The section measured on ``vectors`` (a :class:`~embdiag.encoders.vectors.LabelledVectors`):
    each evaluation vector queries the others under the study's eight conditions, the offset
    fitted on the training vectors. ``ValueError`` names a bad setting. The result is kept on disk
    (:mod:`embdiag._memo`) under the inputs' content and the checked settings."""
    settings = _checked(settings)
    labels = check_mapping(vectors.val_labels, "val_labels")
    s = settings
    return _measured(
        vectors.train, vectors.val, tuple(labels.items()), s.k, s.offset_severity, s.offset_seed, s.n_draws, s.seed
    )


@memo
def _measured(train, val, labels, k, offset_severity, offset_seed, n_draws, seed) -> StorageMeasurement:
    """:func:`run` on arrays, ``(attribute, labels)`` pairs and checked settings."""
    settings = Settings(k, offset_severity, offset_seed, n_draws, seed)
    results = compare_study_conditions(train, val, k=k, offset_severity=offset_severity, offset_seed=offset_seed)
    return measurement(results, dict(labels), val, settings)


def measurement(results, labels: dict, val, settings: Settings = Settings()) -> StorageMeasurement:
    """The measurement of ``results`` (the eight conditions ranked on the evaluation vectors
    ``val``; ``settings`` already checked): what :func:`run` returns after ranking."""
    by = _by_name(results)
    need = [c.name for c in STUDY_CONDITIONS] + [OFFSET, OFFSET_FP16]
    missing = [n for n in need if n not in by]
    if missing:
        raise ValueError(f"results: missing the conditions {missing}")
    boot = {"n_draws": settings.n_draws, "seed": settings.seed}
    native = {c.name for c in STUDY_CONDITIONS}
    return StorageMeasurement(
        results=tuple(results),
        labels=dict(labels),
        table=storage_table(results, labels),
        settings=settings,
        differences={(a, b): change_difference(by[a], by[b], **boot) for a, b in DIFFERENCES},
        precision_changes={a: precision_change_interval(by[OFFSET_FP16], y, **boot) for a, y in labels.items()},
        exceptions=exceptions(results),
        boundaries={r.condition.name: boundary_data(val, r) for r in results if r.condition.name in native},
    )


def attribute_name(attribute: str) -> str:
    """How the page names ``attribute`` (``timeofday``: time of day)."""
    return ATTRIBUTE_NAMES.get(attribute, attribute)


def _by_name(results) -> dict[str, StorageResult]:
    return {r.condition.name: r for r in results}


def result_named(results, name: str) -> StorageResult:
    """The result of the condition called ``name``."""
    by = _by_name(results)
    if name not in by:
        raise ValueError(f"results: no condition named {name!r} (have {list(by)})")
    return by[name]


def read_study(path=None) -> pd.DataFrame:
    """The study's storage table, one row per condition (index): ``data/study/storage.csv`` of the
    checkout (published values travel with the code, not with ``$EMBDIAG_DATA``)."""
    return read_published("storage.csv", path, index_col="condition")


def storage_table(results, labels: dict) -> pd.DataFrame:
    """This run in the study's columns: max score error, changed queries, queries, overlap@k,
    ΔP@k per attribute (points), certified queries, and per attribute the changed queries
    whose own P@k is unchanged (``<attribute>_p10_kept``; column stems as in the study's CSV)."""
    rows = []
    for r in results:
        row = {
            "condition": r.condition.name,
            "max_score_error": r.max_score_error,
            "changed_queries": r.n_changed,
            "n_queries": int(r.changed.size),
            "overlap_at_10": r.mean_overlap,
        }
        row.update({f"delta_{a}_p10_pp": r.precision_change(y) for a, y in labels.items()})
        row["certified"] = int(r.certified.sum())
        row["violations"] = r.violations
        row.update({f"{a}_p10_kept": r.agreement_kept(y) for a, y in labels.items()})
        rows.append(row)
    return pd.DataFrame(rows).set_index("condition")


# ------------------------------------------------------------------ boundary illustration


def example_query(result: StorageResult) -> int:
    """The query the boundary figure shows: the changed query with the largest margin (the most
    visible flip), or the query with the smallest margin when none changed."""
    if result.n_changed:
        idx = np.flatnonzero(result.changed)
        return int(idx[np.argmax(result.margins[idx])])
    return int(np.argmin(result.margins))


def boundary_data(
    vectors, result: StorageResult, query: int | None = None, *, before: int = 4, after: int = 5
) -> pd.DataFrame:
    """One query's ranked reference scores around rank k, with the condition's score of the same
    items: one row per item and side (``rank`` in the reference order, ``side``, ``score``,
    ``status``: stays in, leaves, enters or stays out of the top k). ``vectors`` are the
    vectors ``result`` ranked (queries = gallery). Ranks ``k - before`` to ``k + after``, widened
    to include every item of the condition's top k."""
    k = result.k
    q = example_query(result) if query is None else int(query)
    ref, out = query_scores(vectors, result.condition, q)
    order = np.lexsort((np.arange(ref.size), -ref))[:-1]  # drop the query itself (-inf, last)
    if set(order[:k]) != set(result.reference_neighbors[q]) and result.margins[q] > 1e-12:
        raise ValueError("vectors: not the vectors this result ranked (the reference top-k differs)")
    rank = np.empty(ref.size, dtype=int)
    rank[order] = np.arange(1, order.size + 1)
    new = set(result.neighbors[q].tolist())
    old = set(order[:k].tolist())
    last = max([k + after] + [int(rank[j]) for j in new])
    items = order[max(0, k - 1 - before) : last]
    status = {True: {True: "stays in top k", False: "leaves top k"}, False: {True: "enters top k", False: "stays out"}}
    rows = []
    for j in items:
        st = status[j in old][j in new]
        rows.append({"rank": int(rank[j]), "item": int(j), "side": "reference", "score": float(ref[j]), "status": st})
        rows.append(
            {"rank": int(rank[j]), "item": int(j), "side": result.condition.name, "score": float(out[j]), "status": st}
        )
    table = pd.DataFrame(rows)
    table.attrs["query"] = q
    return table


# ----------------------------------------------------------------------------- intervals


def share(successes, n) -> Interval:
    """The share ``successes / n`` in percent with its Wilson 95% interval."""
    i = proportion_interval(int(successes), int(n))
    return i._replace(mean=100 * i.mean, low=100 * i.low, high=100 * i.high, se=100 * i.se)


def bounded_difference(a: int, b: int, n: int) -> tuple[float, float, float]:
    """``(a - b) / n`` in percentage points with an interval that holds whatever the pairing of
    two counts of the same ``n`` queries: the far ends of their two Wilson 97.5% intervals
    (Bonferroni), for published counts whose per-query pairing is not known."""
    ia, ib = proportion_interval(int(a), int(n), 0.975), proportion_interval(int(b), int(n), 0.975)
    return 100 * (a - b) / n, 100 * (ia.low - ib.high), 100 * (ia.high - ib.low)


def change_difference(a: StorageResult, b: StorageResult, *, n_draws: int = 5000, seed: int = 0) -> Interval:
    """Share of queries changed under ``a`` minus under ``b`` (pp), by a paired bootstrap over the
    queries of the two changed indicators; conditional on the fixed gallery."""
    if a.changed.shape != b.changed.shape:
        raise ValueError(f"results: {a.condition.name} and {b.condition.name} rank different queries")
    return paired_bootstrap(100.0 * a.changed, 100.0 * b.changed, n_draws=n_draws, seed=seed)


def precision_changes(result: StorageResult, labels) -> np.ndarray:
    """Each query's P@k under the condition minus under its reference (pp; NaN where either is
    undefined for missing labels); their mean is :meth:`StorageResult.precision_change`."""
    before = precision_at_k(result.reference_neighbors, labels, per_query=True)
    after = precision_at_k(result.neighbors, labels, per_query=True)
    return np.round(100.0 * (after - before), 9)  # exact multiples of 100 / k where every label is known


def precision_change_interval(result: StorageResult, labels, *, n_draws: int = 5000, seed: int = 0) -> Interval:
    """Mean change of P@k (pp) with a paired bootstrap interval over the queries where it is defined."""
    d = precision_changes(result, labels)
    d = d[~np.isnan(d)]
    return paired_bootstrap(d, np.zeros_like(d), n_draws=n_draws, seed=seed)


def exceptions(results) -> tuple[int, int]:
    """``(exceptions, certified)``: queries that changed under a condition certifying them, and
    queries certified under at least one condition of :data:`PERTURBING` in ``results``."""
    rs = [r for r in results if r.condition.name in PERTURBING]
    certified = np.any([r.certified for r in rs], axis=0)
    broken = np.any([r.certified & r.changed for r in rs], axis=0)
    return int(broken.sum()), int(certified.sum())


# ------------------------------------------------------------------------------ findings


def _about(decision, what: str):
    return decision._replace(reason=f"{what}: {decision.reason}")


def _pct(i) -> str:
    mean, low, high = i[:3]
    return f"{mean:.2f}% [{low:.2f}, {high:.2f}]"


def _pp(i) -> str:
    mean, low, high = i[:3]
    return f"{mean:+.2f} pp [{low:+.2f}, {high:+.2f}]"


def _counted(c: int, n: int) -> str:
    return f"{c} of {n} ({_pct(share(c, n))})"


def old_verdicts(results, labels: dict) -> dict:
    """Each finding's verdict under its old point-estimate criterion (:attr:`Claim.was`)."""
    by = _by_name(results)
    n = {c: by[c].n_changed for c in by}
    size = by[FP16[0]].changed.size
    fp16 = all(n[f] <= FEW / 100 * size and bool((by[f].changed_margins < MARGIN_EDGES[1]).all()) for f in FP16)
    o = by[OFFSET_FP16]
    agreement = (
        n[OFFSET_FP16] > 0
        and all(abs(o.precision_change(y)) <= BARELY_PP for y in labels.values())
        and all(o.agreement_kept(y) >= MOST_KEPT / 100 * n[OFFSET_FP16] for y in labels.values())
    )
    return {
        "FP16 changes few queries": fp16,
        "FP16 changes sit at the smallest margins": fp16,
        "INT8 changes more": n[INT8[0]] > n[FP16[0]] and n[INT8[1]] > n[FP16[1]],
        "FP32 arithmetic changes none": n[FP32] == 0,
        "offset + FP16 changes many": all(n[OFFSET_FP16] > n[c] for c in FP16 + INT8),
        "agreement hides turnover": agreement,
        "certificate covers many FP16 queries": by[FP16[0]].certified.sum() >= MANY_CERTIFIED / 100 * size,
        "certificate covers no INT8 or offset query": all(by[c].certified.sum() == 0 for c in INT8 + (OFFSET_FP16,)),
        "no exception": sum(r.violations for r in results) == 0,
    }


def _study_rows(study: pd.DataFrame) -> dict:
    """``{finding: (words, decision)}`` on the study's published counts, on its own attributes
    (Wilson intervals; a Bonferroni bound for differences of counts whose pairing is not published)."""
    attrs = [c[len("delta_") : -len("_p10_pp")] for c in study.columns if c.startswith("delta_")]
    size = int(study.loc[FP16[0], "n_queries"])

    def n(c):
        return int(study.loc[c, "changed_queries"])

    def diff(a, b):
        return bounded_difference(n(a), n(b), size)

    so = study.loc[OFFSET_FP16]
    kept = {a: int(so[f"{a}_p10_kept"]) for a in attrs if pd.notna(so.get(f"{a}_p10_kept"))}
    cert = {c: int(study.loc[c, "certified"]) for c in (FP16[0],) + INT8 + (OFFSET_FP16,)}
    return {
        "FP16 changes few queries": (
            "; ".join(f"{f}: {_counted(n(f), size)}" for f in FP16),
            all_of(*(_about(at_most(*share(n(f), size)[1:3], FEW), f"{f}, % changed") for f in FP16)),
        ),
        "FP16 changes sit at the smallest margins": (
            "all " + " and ".join(str(n(f)) for f in FP16) + " changes in the study's smallest bin (bins unpublished)",
            all_of(
                *(
                    _about(at_least(*share(n(f), n(f))[1:3], SMALLEST), f"{f}, % of changes in the smallest bin")
                    for f in FP16
                )
            ),
        ),
        "INT8 changes more": (
            "; ".join(f"{i} minus {f}: {_pp(diff(i, f))}" for i, f in zip(INT8, FP16)),
            all_of(*(_about(at_least(*diff(i, f)[1:], 0), f"{i} minus {f} (pp)") for i, f in zip(INT8, FP16))),
        ),
        "FP32 arithmetic changes none": (
            _counted(n(FP32), size),
            _about(at_most(*share(n(FP32), size)[1:3], NONE), "% changed"),
        ),
        "offset + FP16 changes many": (
            f"{_counted(n(OFFSET_FP16), size)}; at most {max(n(c) for c in FP16 + INT8)} under the others",
            all_of(
                _about(at_least(*share(n(OFFSET_FP16), size)[1:3], FEW), "% changed"),
                *(_about(at_least(*diff(OFFSET_FP16, c)[1:], 0), f"minus {c} (pp)") for c in FP16 + INT8),
            ),
        ),
        "agreement hides turnover": (
            "ΔP@10 "
            + ", ".join(f"{attribute_name(a)} {so[f'delta_{a}_p10_pp']:+.3f}" for a in attrs)
            + f" pp; kept {', '.join(f'{attribute_name(a)} {v}' for a, v in kept.items())} of {n(OFFSET_FP16)}",
            all_of(
                not_testable("the study published ΔP@10 as a point estimate without an interval"),
                *(
                    _about(
                        at_least(*share(v, n(OFFSET_FP16))[1:3], MOST_KEPT), f"{attribute_name(a)} kept, % of changed"
                    )
                    for a, v in kept.items()
                ),
            ),
        ),
        "certificate covers many FP16 queries": (
            _counted(cert[FP16[0]], size),
            _about(at_least(*share(cert[FP16[0]], size)[1:3], MANY_CERTIFIED), "% certified"),
        ),
        "certificate covers no INT8 or offset query": (
            "; ".join(f"{c}: {cert[c]} of {size}" for c in INT8 + (OFFSET_FP16,)),
            all_of(
                *(_about(at_most(*share(cert[c], size)[1:3], NONE), f"{c}, % certified") for c in INT8 + (OFFSET_FP16,))
            ),
        ),
        "no exception": (
            f"0 of the {cert[FP16[0]]} FP16-gallery queries it certifies changed",
            _about(at_most(*share(0, cert[FP16[0]])[1:3], NONE), "% of certified changed"),
        ),
    }


def findings(measured: StorageMeasurement, study: pd.DataFrame | None = None) -> pd.DataFrame:
    """The verdict table (:func:`~embdiag.study.findings.verdicts`) of :data:`CRITERIA`: each
    finding decided on ``measured`` by Wilson intervals of shares of queries and its paired
    bootstrap intervals over the queries (conditional on the fixed gallery, whose vectors are also
    the queries), and on the study's published counts (``study``, default :func:`read_study`)
    where they allow it (``holds in the study``); the old point-estimate verdicts in ``old verdict``."""
    study = read_study() if study is None else study
    results, labels = measured.results, measured.labels
    by = _by_name(results)
    size = by[FP16[0]].changed.size
    n = {c: by[c].n_changed for c in by}
    ours = {}

    ours["FP16 changes few queries"] = (
        "; ".join(f"{f}: {_counted(n[f], size)}" for f in FP16),
        all_of(*(_about(at_most(*share(n[f], size)[1:3], FEW), f"{f}, % changed") for f in FP16)),
    )
    small = {f: int((by[f].changed_margins < MARGIN_EDGES[1]).sum()) for f in FP16}
    judged = [f for f in FP16 if n[f]]
    ours["FP16 changes sit at the smallest margins"] = (
        "; ".join(f"{f}: {small[f]} of {n[f]} changes in the smallest bin" for f in FP16),
        all_of(
            *(
                _about(at_least(*share(small[f], n[f])[1:3], SMALLEST), f"{f}, % of changes in the smallest bin")
                for f in judged
            )
        )
        if judged
        else not_testable("no FP16 query changed its top k, so where the changes fall cannot be judged"),
    )
    more = {(i, f): measured.differences[(i, f)] for i, f in zip(INT8, FP16)}
    ours["INT8 changes more"] = (
        "; ".join(f"{i} minus {f}: {_pp(d)}" for (i, f), d in more.items()),
        all_of(*(_about(at_least(d.low, d.high, 0), f"{i} minus {f} (pp)") for (i, f), d in more.items())),
    )
    ours["FP32 arithmetic changes none"] = (
        f"{_counted(n[FP32], size)} (max score error {by[FP32].max_score_error:.2g})",
        _about(at_most(*share(n[FP32], size)[1:3], NONE), "% changed"),
    )
    over = {c: measured.differences[(OFFSET_FP16, c)] for c in FP16 + INT8}
    ours["offset + FP16 changes many"] = (
        f"{_counted(n[OFFSET_FP16], size)}; minus " + ", ".join(f"{c} {_pp(d)}" for c, d in over.items()),
        all_of(
            _about(at_least(*share(n[OFFSET_FP16], size)[1:3], FEW), "% changed"),
            *(_about(at_least(d.low, d.high, 0), f"minus {c} (pp)") for c, d in over.items()),
        ),
    )
    o = by[OFFSET_FP16]
    delta = measured.precision_changes
    kept = {a: o.agreement_kept(y) for a, y in labels.items()}
    parts = [_about(within(d.low, d.high, BARELY_PP), f"Δ {attribute_name(a)} P@k (pp)") for a, d in delta.items()]
    if n[OFFSET_FP16]:
        parts += [
            _about(at_least(*share(v, n[OFFSET_FP16])[1:3], MOST_KEPT), f"{attribute_name(a)} kept, % of changed")
            for a, v in kept.items()
        ]
    else:
        parts.append(not_testable("offset + FP16 changed no query, so no turnover can be hidden"))
    ours["agreement hides turnover"] = (
        "ΔP@k "
        + ", ".join(f"{attribute_name(a)} {_pp(d)}" for a, d in delta.items())
        + f"; kept {', '.join(f'{attribute_name(a)} {v}' for a, v in kept.items())} of {n[OFFSET_FP16]}",
        all_of(*parts),
    )
    cert = {c: int(by[c].certified.sum()) for c in by}
    ours["certificate covers many FP16 queries"] = (
        _counted(cert[FP16[0]], size),
        _about(at_least(*share(cert[FP16[0]], size)[1:3], MANY_CERTIFIED), "% certified"),
    )
    ours["certificate covers no INT8 or offset query"] = (
        "; ".join(f"{c}: {_counted(cert[c], size)}" for c in INT8 + (OFFSET_FP16,)),
        all_of(
            *(_about(at_most(*share(cert[c], size)[1:3], NONE), f"{c}, % certified") for c in INT8 + (OFFSET_FP16,))
        ),
    )
    broken, certified = measured.exceptions
    ours["no exception"] = (
        f"{broken} of the {certified} queries certified under some condition changed under one certifying it",
        _about(at_most(*share(broken, certified)[1:3], NONE), "% of certified changed")
        if certified
        else not_testable("no query is certified under any condition"),
    )
    theirs = _study_rows(study)
    rows = [(f, theirs[f][0], ours[f][0], theirs[f][1], ours[f][1]) for f in CRITERIA]
    return verdicts(CRITERIA, rows, was=old_verdicts(results, labels))
