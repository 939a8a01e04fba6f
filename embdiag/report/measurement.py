"""Every number of an ``embdiag report``: :func:`measure` returns a :class:`Report`.

:func:`measure` checks its arguments and draws every sample once (the :class:`Plan`), runs the
exact searches and each condition's steps, on this machine or over a Ray cluster (the
backends), and has each section of :mod:`embdiag.report.sections` measure from the plan, in
this order, each only when its inputs exist (its ``measure``, recorded in the metrics table in
this order): ``geometry``, ``identity`` (with the certificates), ``indexes``, ``labels``,
``relevance``, ``stress``.

Then :func:`~embdiag.report.sections.summary.summarize` puts identity, relevance and the probe change of
each condition side by side with a verdict in words (:func:`~embdiag.report.sections.summary.verdict`),
:func:`~embdiag.report.sections.frontier.frontier_table` weighs each condition against its bytes, and
the ``--fail-if`` rules, checked against :func:`available_metrics` before anything is
measured, are recorded with their outcomes (:func:`~embdiag.report.fail_if.outcomes`).

Identity, labels and relevance read the same neighbour lists: each searched query's top k
under the reference and under every condition. The searched queries are a seeded sample, which
identity, labels, index curves and certificates read, and with pairs or qrels every query with a
positive or a relevant judgment, which relevance scores. Exact search is
:func:`~embdiag.metrics.retrieval.topk` in float32. When the queries are VECTORS rows, a query
is never its own neighbour (it is removed from its result), so a pair or judgment of a query
with its own row is excluded (counted in ``inputs["self_matches"]``, with a note).

Each condition's search and geometry, its probes and its certificate, and each index's build
read only the checked inputs: they run as tasks (:func:`~embdiag.report.tasks.run_tasks`), two
at a time and each single-threaded on a machine of two cores or more while two float32 copies
of the gallery fit in 2 x :data:`PARALLEL_BYTES`, else one after another. Either way a task
computes the same numbers.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from .._mapped import take_rows
from .._validate import SQUARABLE, as_float, check_int, check_number
from ..cluster import connect
from ..data.files import InputError, split_labels
from ..metrics.geometry import summary
from ..metrics.labels import eligible_classes, labelled
from ..metrics.retrieval import (
    boundary_margin,
    topk,
)
from ..metrics.stats import paired_bootstrap
from . import fail_if as rules_of
from . import sections
from . import streams
from .conditions import (
    FIT_ROWS,
    ReportCondition,
    _chunks,
    _sample_rows,
    parse_conditions,
)
from .options import MARGIN_PP, TARGET_RECALL, recorded
from .sections.frontier import frontier_table
from .sections.summary import CANNOT_REPRESENT, summarize, summary_table, with_unrepresented
from .sections.measured import Section, drop_self, label_arrays
from .sharded import SHARD_ROWS, block_mapper, check_address, sharded_topk
from .tasks import outcome, run_tasks

__all__ = [
    "SCHEMA",
    "Report",
    "measure",
    "available_metrics",
    "METRIC_COLUMNS",
    "QUERY_ROWS",
    "QUICK_QUERY_ROWS",
    "QUICK_GALLERY_ROWS",
    "QUICK_GEOMETRY_ROWS",
    "PROBE_ROWS",
    "QUICK_PROBE_ROWS",
    "QRELS_DEPTH",
    "qrels_depth",
    "check_k",
    "check_quick_index",
    "check_margin",
    "check_target_recall",
    "check_judgments",
]

METRIC_COLUMNS = ["section", "metric", "condition", "attribute", "value", "low", "high"]
#: The name and version of report.json's layout (embdiag/report/report.schema.json, a JSON Schema).
SCHEMA = "embdiag-report/2"
QUERY_ROWS, QUICK_QUERY_ROWS = 10_000, 1_000
QUICK_GALLERY_ROWS = 100_000
QUICK_GEOMETRY_ROWS = 5_000
PROBE_ROWS, QUICK_PROBE_ROWS = 20_000, 5_000
#: Steps run two at a time (each single-threaded) only while two float32 copies of the gallery,
#: one per step, stay within twice this many bytes.
PARALLEL_BYTES = 2**30
#: How deep each query is searched when there are graded judgments: MAP and recall read this many
#: neighbours (fewer when the gallery is smaller); identity, labels and pairs read the first k.
QRELS_DEPTH = 100
N_DRAWS, QUICK_DRAWS = 5_000, 1_000
#: The sections with a scope sentence (report.json's ``scope``, in this order).
_SCOPED = (
    "hygiene",
    "summary",
    "geometry",
    "labels",
    "identity",
    "hubness",
    "relevance",
    "stress",
    "indexes",
    "frontier",
)


# ----------------------------------------------------------------------------- Report


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if np.isfinite(x) else None
    return x


_TABLE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


@dataclass
class Report:
    """The measured report.

    ``inputs``: JSON-able description of the inputs and sampling; ``scope``: section -> one
    sentence (what it establishes and what not); ``tables``: name -> table (saved as
    ``<name>.csv``); ``metrics``: long format, columns :data:`METRIC_COLUMNS` (``condition`` is
    ``"reference"`` or a condition's name; ``low``/``high`` NaN without an interval);
    ``summary``: one entry per condition (:func:`summarize`); ``gates``: each ``--fail-if``
    rule's outcome on each row it checks (:func:`~embdiag.report.fail_if.outcomes`);
    ``timings``: what this run measured of speed (index build seconds, queries per second),
    which differs from run to run and which ``embdiag verify`` does not compare.

    Example:
        >>> report = Report({"n": 3}, {"geometry": "Shape."}, {"t": pd.DataFrame({"v": [1.0, np.nan]})})
        >>> report.to_json()  # doctest: +NORMALIZE_WHITESPACE
        {'schema': 'embdiag-report/2', 'inputs': {'n': 3}, 'scope': {'geometry': 'Shape.'}, 'summary': [],
         'gates': [], 'metrics': [], 'tables': {'t': [{'v': 1.0}, {'v': None}]}, 'timings': {}}
    """

    inputs: dict
    scope: dict[str, str]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    metrics: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=METRIC_COLUMNS))
    summary: list[dict] = field(default_factory=list)
    gates: list[dict] = field(default_factory=list)
    timings: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """Every number: the schema's name (:data:`SCHEMA`), inputs, scope, summary, gates, metrics
        records and tables as records (NaN as null), and the run's ``timings`` (not verified)."""
        return _jsonable(
            {
                "schema": SCHEMA,
                "inputs": self.inputs,
                "scope": self.scope,
                "summary": self.summary,
                "gates": self.gates,
                "metrics": self.metrics.to_dict(orient="records"),
                "tables": {n: t.to_dict(orient="records") for n, t in self.tables.items()},
                "timings": self.timings,
            }
        )

    def save(self, out_dir) -> list[Path]:
        """Write ``report.json`` and ``<table>.csv`` per table into ``out_dir`` (created if needed).

        Files are written into a temporary folder inside ``out_dir`` and then renamed into
        place; if writing fails, nothing new is left in ``out_dir``. Returns the paths written.
        """
        out_dir = Path(out_dir)
        bad = [n for n in self.tables if not _TABLE_NAME.fullmatch(n) or n == "report"]
        if bad:
            raise ValueError(f"tables: names must be plain file names other than 'report', got {bad}")
        out_dir.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".report-", dir=out_dir))
        done: list[Path] = []
        try:
            files = {"report.json": lambda p: p.write_text(json.dumps(self.to_json(), indent=1, allow_nan=False))}
            for name, table in self.tables.items():
                files[f"{name}.csv"] = lambda p, t=table: t.to_csv(p, index=False)
            for fname, write in files.items():
                write(tmp / fname)
            for fname in files:
                os.replace(tmp / fname, out_dir / fname)
                done.append(out_dir / fname)
        except BaseException:
            for p in done:
                p.unlink(missing_ok=True)
            raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return done


# ----------------------------------------------------------------------------- helpers


def _array(x, option: str, d: int | None = None) -> np.ndarray:
    try:
        a = as_float(x, option, ndim=2, min_rows=2, finite=False)  # no copy of float32/float64 (memmaps stay)
    except ValueError as e:
        raise InputError(str(e)) from None
    if d is not None and a.shape[1] != d:
        raise InputError(f"{option}: has {a.shape[1]} columns, VECTORS has {d}")
    _check_magnitude(a, option)
    return a


#: Magnitudes whose squares, summed over many rows, stay normal float64 numbers: geometry's
#: variances and PCA's covariances are sums of squares (float32 rows always lie inside); the
#: bound principal_axes applies.
MAGNITUDES = SQUARABLE


def _check_magnitude(a: np.ndarray, option: str) -> None:
    """Refuse float64 rows whose largest magnitude lies outside :data:`MAGNITUDES`, by name."""
    if a.dtype != np.float64:
        return
    top = max((float(np.nanmax(np.abs(a[i:j]), initial=0.0)) for i, j in _chunks(len(a))), default=0.0)
    if top and not MAGNITUDES[0] <= top <= MAGNITUDES[1]:
        raise InputError(
            f"{option}: largest magnitude {top:.3g} lies outside [2^-500, 2^500], where sums of squares "
            "(variances, covariances) are representable in float64; rescale the vectors (a common factor "
            "changes no cosine and no ranking)"
        )


def _exact(Q, G, keep: int, self_pos, search=topk):
    """Exact float32 top-``keep`` (self removed when the queries are gallery rows) by ``search``."""
    S, I = search(Q, G, keep + (self_pos is not None))
    return drop_self(S, I, self_pos, keep)


def _versions() -> dict:
    out = {}
    for pkg in ("embdiag", "numpy", "faiss-cpu", "scipy", "torch"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def _positives(pairs, n_pool: int, n: int) -> list[np.ndarray]:
    """Positives per query of the pool (empty where a query has none), as int64 arrays."""
    if isinstance(pairs, tuple) and len(pairs) == 2 and not np.isscalar(pairs[1]):
        pos, which = pairs
        full = [np.empty(0, np.int64) for _ in range(n_pool)]
        for i, p in zip(np.asarray(which), pos):
            if not 0 <= i < n_pool:
                raise InputError(f"--pairs: query index {i} out of range 0..{n_pool - 1}")
            full[int(i)] = np.asarray(p, dtype=np.int64)
        pos = full
    else:
        pos = [np.atleast_1d(np.asarray(p, dtype=np.int64)) for p in pairs]
    if len(pos) != n_pool:
        raise InputError(f"--pairs: positives for {len(pos)} queries, expected {n_pool} (one entry per query)")
    for i, p in enumerate(pos):
        if p.size and (p.min() < 0 or p.max() >= n):
            raise InputError(f"--pairs: query {i} has a target outside 0..{n - 1}")
    return pos


def _judgments(qrels, n_pool: int, n: int) -> list[dict]:
    """Graded judgments per query of the pool (``{VECTORS row: grade}``; empty where a query has none)."""
    if not isinstance(qrels, (list, tuple)) or len(qrels) != n_pool:
        got = len(qrels) if isinstance(qrels, (list, tuple)) else type(qrels).__name__
        raise InputError(f"--qrels: judgments for {got} queries, expected {n_pool} (one mapping per query)")
    out = []
    for i, judged in enumerate(qrels):
        if not isinstance(judged, dict):
            raise InputError(f"--qrels: query {i}: expected a mapping of VECTORS row to grade, got {judged!r}")
        for doc, grade in judged.items():
            if not (isinstance(doc, (int, np.integer)) and 0 <= doc < n):
                raise InputError(f"--qrels: query {i} judges {doc!r}, not a row of VECTORS (0..{n - 1})")
            if isinstance(grade, bool) or not isinstance(grade, (int, np.integer)) or grade < 0:
                raise InputError(f"--qrels: query {i} grades row {doc} {grade!r}; grades are non-negative integers")
        out.append({int(d): int(g) for d, g in judged.items()})
    if not any(g >= 1 for judged in out for g in judged.values()):
        raise InputError("--qrels: no relevant judgment (every grade is 0)")
    return out


def _without_self_pairs(positives: list[np.ndarray], self_search: bool) -> tuple[list[np.ndarray], dict | None]:
    """``positives`` with each query's own row taken out when the queries are VECTORS rows (a query
    is never its own neighbour, so such a positive can never be found), and what that left out:
    ``{"excluded": self-pairs, "queries_unscored": queries left with no positive}`` (None with
    ``--queries``, where query i and row i are different items)."""
    if not self_search:
        return positives, None
    kept = [p[p != i] for i, p in enumerate(positives)]
    excluded = sum(len(p) - len(q) for p, q in zip(positives, kept))
    unscored = sum(bool(p.size) and not q.size for p, q in zip(positives, kept))
    if excluded and not any(q.size for q in kept):
        raise InputError(
            f"--pairs: every pair is a self-pair ({excluded:,} of them: a query paired with its own row); without "
            "--queries the queries are VECTORS' rows and a query is never its own neighbour, so no positive can be "
            "found (give the queries as --queries if they are other items)"
        )
    return kept, {"excluded": int(excluded), "queries_unscored": int(unscored)}


def _without_self_judgments(qrels: list[dict], self_search: bool) -> tuple[list[dict], dict | None]:
    """``qrels`` with each query's judgment of its own row taken out when the queries are VECTORS
    rows (it can never be retrieved), and what that left out: ``{"excluded": self-judgments,
    "queries_unscored": queries left with no relevant judgment}`` (None with ``--queries``)."""
    if not self_search:
        return qrels, None
    kept = [{d: g for d, g in judged.items() if d != i} for i, judged in enumerate(qrels)]
    excluded = sum(len(j) - len(q) for j, q in zip(qrels, kept))

    def relevant(judged):
        return any(g >= 1 for g in judged.values())

    unscored = sum(relevant(j) and not relevant(q) for j, q in zip(qrels, kept))
    if not any(relevant(q) for q in kept):
        raise InputError(
            f"--qrels: every relevant judgment is a query judging its own row ({excluded:,} self-judgments); without "
            "--queries the queries are VECTORS' rows and a query is never its own neighbour, so no relevant row can "
            "be retrieved (give the queries as --queries if they are other items)"
        )
    return kept, {"excluded": int(excluded), "queries_unscored": int(unscored)}


def check_judgments(pairs, qrels, n_pool: int, n: int, self_search: bool) -> None:
    """Refuse ``pairs`` or ``qrels`` (as :func:`~embdiag.report.cli.read_inputs` returns them) that
    leave nothing to score once self-matches are excluded: the check :func:`measure` makes, run
    before it (``n_pool`` queries, ``n`` rows of VECTORS)."""
    if pairs is not None:
        _without_self_pairs(_positives(pairs, n_pool, n), self_search)
    if qrels is not None:
        _without_self_judgments(_judgments(qrels, n_pool, n), self_search)


# ----------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class _Backend:
    """Where the heavy steps run: ``search`` (exact top-k, ``topk``'s signature), ``geometry`` (``summary``
    of an array) and ``intervals`` (a list of ``paired_bootstrap`` argument tuples -> their intervals),
    and what the report's inputs add to the exact search, geometry and bootstrap statements;
    ``workers``: how many single-threaded steps may run at once here (:func:`~embdiag.report.tasks.run_tasks`)."""

    search: Callable
    geometry: Callable
    intervals: Callable
    search_note: str = ""
    geometry_note: str = ""
    bootstrap_note: str = ""
    workers: int = 1


def _local(shard_rows: int) -> _Backend:
    """Everything on this machine, single-threaded steps two at a time on two cores or more; the
    geometry's sums in blocks of ``shard_rows`` rows."""
    return _Backend(
        topk,
        functools.partial(summary, block_rows=shard_rows),
        lambda calls: [paired_bootstrap(*c) for c in calls],
        workers=min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1),
    )


def _on_cluster(shard_rows: int) -> _Backend:
    """Searches over gallery shards, geometry blocks and intervals as Ray tasks on the connected cluster."""
    from ..cluster import run_tasks

    def geometry(X):
        return summary(X, block_rows=shard_rows, map_blocks=block_mapper(X))

    return _Backend(
        functools.partial(sharded_topk, shard_rows=shard_rows),
        geometry,
        lambda calls: run_tasks(paired_bootstrap, calls),
        f", sharded over a Ray cluster ({shard_rows:,} gallery rows per task)",
        f", one Ray task per block of {shard_rows:,} rows",
        ", one Ray task per interval",
    )


@dataclass(frozen=True)
class Plan:
    """A report's checked inputs and samples, which every section reads.

    ``V``: the reference rows (n x d); ``n_pool``: rows of the query pool (``V``, or the
    ``--queries``); ``q_sel``: the searched queries (sorted indices into the pool): the seeded
    query sample (its positions in ``q_sel``: ``sample``), which identity, labels, index curves and
    certificates read, and the queries relevance scores (positions: ``scored``, None without pairs
    or qrels: every query with a positive or a relevant judgment, a quick run's a seeded sample of
    them); ``n_scorable``: how many queries have one (the scored ones in a full run);
    ``self_matches``: the pairs or judgments of a query with its own row left out
    (:func:`_without_self_pairs`; None with ``--queries`` or without pairs and qrels); ``g_idx``: the
    gallery (sorted indices into ``V``) and ``G`` its rows; ``Q``: the searched query rows;
    ``self_pos``: each query's position in ``G`` when the queries are ``V``'s rows, else None;
    ``fit``: the rows fitted conditions (PCA, calibration ranges) are fitted on (None without
    one); ``geo_idx``: the rows geometry is measured on; ``positives``: per query of the pool,
    its targets (None without pairs);
    ``qrels``: per query of the pool, its graded judgments ``{VECTORS row: grade}`` (None without);
    ``depth``: how many neighbours each search keeps (``k``, or :data:`QRELS_DEPTH` with qrels);
    ``labels``: the attribute columns (the ``split`` column taken out), ``is_train``: that
    column parsed (None without one); ``rules``: the ``--fail-if`` rules, checked;
    ``target_recall``: the recall@k an index setting must reach; ``timed``: index
    searches are timed (a short one repeated for its fastest run), else each runs once.
    """

    V: np.ndarray
    labels: pd.DataFrame | None
    is_train: np.ndarray | None
    rules: tuple
    conds: list[ReportCondition]
    positives: list[np.ndarray] | None
    qrels: list[dict] | None
    n_pool: int
    q_sel: np.ndarray
    sample: np.ndarray
    scored: np.ndarray | None
    n_scorable: int | None
    self_matches: dict | None
    g_idx: np.ndarray
    G: np.ndarray
    Q: np.ndarray
    self_pos: np.ndarray | None
    fit: np.ndarray | None
    geo_idx: np.ndarray
    k: int
    depth: int
    seed: int
    quick: bool
    min_support: int
    stress: bool
    margin: float
    target_recall: float = TARGET_RECALL
    timed: bool = True

    @property
    def self_search(self) -> bool:
        """Whether the queries are VECTORS rows (never their own neighbour)."""
        return self.self_pos is not None

    def on_sample(self) -> Plan:
        """This plan with only the seeded query sample searched (itself when every searched query is in it)."""
        if len(self.sample) == len(self.q_sel):
            return self
        s = self.sample
        return replace(
            self,
            q_sel=self.q_sel[s],
            sample=np.arange(len(s)),
            scored=None,
            Q=take_rows(self.Q, s),
            self_pos=None if self.self_pos is None else self.self_pos[s],
        )

    @property
    def probe_rows(self) -> int:
        return QUICK_PROBE_ROWS if self.quick else PROBE_ROWS

    @property
    def n_draws(self) -> int:
        return QUICK_DRAWS if self.quick else N_DRAWS

    @property
    def geometry_on_gallery(self) -> bool:
        """Whether geometry's rows are the gallery's (a full run): each condition's vectors are then made once."""
        return len(self.geo_idx) == len(self.g_idx) and bool((self.geo_idx == self.g_idx).all())


def _check_labels(labels, n: int, min_support: int) -> None:
    """Raise unless ``labels`` is None or a table of ``n`` rows with a column of two supported classes."""
    if labels is None:
        return
    if not isinstance(labels, pd.DataFrame):
        raise InputError(f"--labels: expected a DataFrame (one column per attribute), got {type(labels).__name__}")
    if len(labels) != n:
        raise InputError(f"--labels: has {len(labels)} row(s), expected {n} (one per vector)")
    if labels.columns.empty:
        raise InputError("--labels: no attribute column")
    empty = [str(c) for c in labels.columns if not labelled(labels[c].to_numpy()).any()]
    if empty:
        raise InputError(f"--labels: column {empty[0]!r} has no value (all {n} missing)")
    ys = label_arrays(labels)
    if not any(len(eligible_classes(y, min_support)) >= 2 for y in ys.values()):
        raise InputError(
            f"--labels: too little support: no column has two classes with at least {min_support} "
            f"items each (columns: {', '.join(map(str, labels.columns))})"
        )


def _gallery_sample(n: int, q_sel, positives, self_search: bool, seed: int) -> np.ndarray:
    """A quick run's gallery: every searched query (when queries are rows) and its positives,
    filled up to :data:`QUICK_GALLERY_ROWS` rows with a seeded sample; sorted row indices."""
    need = [q_sel] if self_search else []
    if positives is not None:
        need += [positives[i] for i in q_sel]
    need = np.unique(np.concatenate(need)) if need else np.empty(0, np.int64)
    rest = np.setdiff1d(np.arange(n), need)
    extra = max(0, QUICK_GALLERY_ROWS - len(need))
    fill = np.random.default_rng([seed, streams.GALLERY]).choice(len(rest), extra, replace=False)
    return np.sort(np.concatenate([need, rest[fill]]))


def available_metrics(
    conditions,
    attributes=(),
    *,
    k: int = 10,
    pairs: bool = False,
    self_search: bool = True,
    stress: bool = False,
    qrels_depth: int | None = None,
    n_gallery: int | None = None,
) -> dict[str, set[str]]:
    """Each metric a report of these inputs records -> the conditions and attributes of its rows
    (what a ``--fail-if`` qualifier may name), known before anything is measured.

    ``conditions``: the parsed conditions; ``attributes``: the label columns (not ``split``);
    ``pairs``: whether there are retrieval pairs; ``self_search``: whether the queries are the
    vectors' rows (no ``--queries``); ``stress``: whether the stress grid is measured;
    ``qrels_depth``: with graded judgments, the depth MAP and recall read (None without);
    ``n_gallery``: the gallery's rows, which bound the k an index setting is found for
    (:func:`~embdiag.report.sections.indexes.tuning_ks`; None: the report's k only).

    Example:
        >>> conds = parse_conditions("int8", "", n=100, d=8)
        >>> m = available_metrics(conds, ["digit"], k=10)
        >>> sorted(m["delta_p@10"]), sorted(m["mean_cosine"]), "hit@10" in m
        (['digit', 'int8'], ['int8', 'raw', 'reference', 'unit'], False)
    """
    names = [c.name for c in conditions]
    vec = ["reference"] + [c.name for c in conditions if c.has_vectors]
    out: dict[str, set[str]] = {}

    def add(metrics, rows, attrs=()):
        if rows:
            for m in metrics:
                out.setdefault(m, set()).update(rows, attrs)

    add(sections.geometry.GEOMETRY_KEYS, vec, sections.geometry.SPACES)
    add((f"overlap@{k}", "changed_queries", "median_margin_changed", "median_margin_unchanged"), names)
    add(("cert_coverage", "cert_violations"), [c.name for c in conditions if c.certified])
    add(("bytes_per_vector",), names)
    for c in conditions:
        if c.kind == "index":
            add((f"recall@{k}",), [c.name], c.settings())
            add(("index_bytes",), [c.name])
            ks = sections.indexes.tuning_ks(k, n_gallery, self_search) if n_gallery else [k]
            add([m for j in ks for m in sections.indexes.tuning_metrics(j)], [c.name])
    if attributes:
        add(("rare_classes", "missing_labels"), ["reference"], attributes)
        add(("probe_ba",), vec, attributes)
        if self_search:
            add((f"p@{k}",), ["reference"] + names, attributes)
            add((f"delta_p@{k}",), names, attributes)
    if pairs:
        add((f"hit@{k}", f"recall@{k}"), ["reference"] + names)
        add((f"delta_hit@{k}", f"delta_recall@{k}"), names)
    if qrels_depth:
        graded = sections.relevance.graded_names(k, qrels_depth)
        add(graded, ["reference"] + names)
        add([f"delta_{m}" for m in graded], names)
    for part in (
        sections.hygiene.available(self_search),
        sections.hubness.available(conditions, attributes, k=k, pairs=pairs, self_search=self_search),
    ):
        for metric, rows in part.items():
            out.setdefault(metric, set()).update(rows)
    if stress and attributes:
        from ..interventions.stress import INTERVENTIONS, SEVERITIES  # imports scikit-learn

        grid = [f"{name}@{s:g}" for name in INTERVENTIONS for s in SEVERITIES]
        add(sections.geometry.GEOMETRY_KEYS + (f"overlap@{k}",), grid)
        add(("probe_ba", "probe_accuracy", f"p@{k}"), grid, attributes)
    return out


def _scorable(positives, judged) -> np.ndarray | None:
    """The queries (pool indices) with a positive, or with a relevant judgment (grade >= 1); None
    without pairs or qrels."""
    if judged is not None:
        return np.flatnonzero([any(g >= 1 for g in j.values()) for j in judged])
    return None if positives is None else np.flatnonzero([p.size > 0 for p in positives])


def check_k(k: int, n: int, *, self_search: bool, quick: bool = False, name: str = "VECTORS") -> int:
    """``k`` if a report on ``n`` rows (``name``) can search it, else :class:`InputError` naming ``--k``.

    The rule: each query is searched for its k + 1 nearest rows (the boundary margin compares rank
    k with rank k + 1), and when the queries are VECTORS rows (``self_search``) for its own row
    too, which is dropped; exact search (:func:`~embdiag.metrics.retrieval.topk`) returns at most
    n - 1 of its n rows. So k <= n - 3, or with ``--queries`` k <= n - 2. The gallery is the ``n``
    rows (a quick run's: at least :data:`QUICK_GALLERY_ROWS` of them).

    Example:
        >>> check_k(2, 5, self_search=True), check_k(3, 5, self_search=False)
        (2, 3)
        >>> check_k(3, 5, self_search=True)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        embdiag.data.files.InputError: --k 3: must be at most 2: VECTORS has 5 rows; without --queries ...
    """
    rows = min(n, QUICK_GALLERY_ROWS) if quick else n
    limit = rows - 2 - self_search
    if k <= limit:
        return k
    allowed = f"must be at most {limit}" if limit >= 1 else "no k fits"
    has = f"a quick run's gallery holds {rows:,} rows of {name}" if rows < n else f"{name} has {rows:,} rows"
    if self_search:
        searched = "without --queries each query is searched for its own row (then dropped) and k + 1 others"
        need = "k + 3"
    else:
        searched = "each --queries row is searched for its k + 1 nearest rows"
        need = "k + 2"
    raise InputError(
        f"--k {k}: {allowed}: {has}; {searched} (the boundary margin compares rank k with rank k + 1), and "
        f"exact search returns at most n - 1 of its n rows, so n must be at least {need}"
    )


def check_margin(margin) -> float:
    """``margin`` (``--margin``: the loss margin of a relevance change, in percentage points) as a
    float, refused unless a finite number above 0 and below 100."""
    try:
        value = check_number(margin, "margin")
    except ValueError:
        raise InputError(f"--margin {margin!r}: expected a number of percentage points") from None
    if not 0 < value < 100:
        raise InputError(f"--margin {margin!r}: must lie between 0 and 100 percentage points (exclusive)")
    return value


def check_target_recall(target) -> float:
    """``target`` (``--target-recall``: the recall@k an index setting must reach) as a float in (0, 1]."""
    try:
        value = check_number(target, "target_recall")
    except ValueError:
        raise InputError(f"--target-recall {target!r}: expected a recall between 0 and 1") from None
    if not 0 < value <= 1:
        raise InputError(f"--target-recall {target!r}: must lie in (0, 1] (a share of the exact top-k)")
    return value


def check_quick_index(conds, n: int, quick: bool) -> None:
    """Refuse a prebuilt index file (``--index file:``) in a quick run whose gallery is a sample
    (more than :data:`QUICK_GALLERY_ROWS` rows): the file holds every row and cannot be searched
    on the sample."""
    prebuilt = [c.name for c in conds if getattr(c, "path", None) is not None]
    if quick and n > QUICK_GALLERY_ROWS and prebuilt:
        raise InputError(
            f"--quick: a quick run searches a sample of {QUICK_GALLERY_ROWS:,} of the {n:,} rows, but the prebuilt "
            f"index {prebuilt[0]} (--index file:) holds all of them and cannot be searched on the sample; "
            "drop --quick or the file index"
        )


def _plan(
    vectors,
    *,
    labels,
    compare,
    pairs,
    qrels,
    queries,
    compress,
    index,
    k,
    stress,
    quick,
    seed,
    min_support,
    fail_if,
    margin,
    target_recall,
) -> Plan:
    """:func:`measure`'s arguments checked (the ``--fail-if`` rules against :func:`available_metrics`,
    before any measurement), its conditions parsed and its samples drawn."""
    k = check_int(k, "k", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    min_support = check_int(min_support, "min_support", minimum=1)
    margin = check_margin(margin)
    target_recall = check_target_recall(target_recall)
    V = _array(vectors, "VECTORS")
    n, d = V.shape
    self_search = queries is None
    pool = V if self_search else _array(queries, "--queries", d)
    is_train = None
    if isinstance(labels, pd.DataFrame):
        labels, is_train = split_labels(labels, "--labels")
    _check_labels(labels, n, min_support)
    if stress and labels is None:
        raise InputError("--stress: needs --labels (the stress grid measures probes and P@k)")
    if compare is not None and not self_search:
        raise InputError(
            "--compare: cannot be combined with --queries (the second representation of the queries is not given)"
        )
    if pairs is not None and qrels is not None:
        raise InputError("--qrels: give --pairs or --qrels, not both (each judges what is relevant)")
    conds = parse_conditions(compress, index, n=n, d=d, compare=compare, seed=seed, vectors=V)
    attributes = [] if labels is None else [str(c) for c in labels.columns]
    positives, judged, self_matches = None, None, None
    if pairs is not None:
        positives, self_matches = _without_self_pairs(_positives(pairs, len(pool), n), self_search)
    if qrels is not None:
        judged, self_matches = _without_self_judgments(_judgments(qrels, len(pool), n), self_search)
    check_k(k, n, self_search=self_search, quick=quick)
    sample = _sample_rows(len(pool), QUICK_QUERY_ROWS if quick else QUERY_ROWS, seed, streams.QUERIES)
    # relevance scores every query with a positive or a relevant judgment, whatever the query
    # sample (a quick run: a seeded sample of at most QUICK_QUERY_ROWS of them)
    scorable = _scorable(positives, judged)
    scored = scorable
    if quick and scorable is not None:
        scored = scorable[_sample_rows(len(scorable), QUICK_QUERY_ROWS, seed, streams.SCORED)]
    q_sel = sample if scored is None else np.union1d(sample, scored)
    sampled = quick and n > QUICK_GALLERY_ROWS
    check_quick_index(conds, n, quick)
    keep = positives if judged is None else [np.array(sorted(j), dtype=np.int64) for j in judged]
    g_idx = _gallery_sample(n, q_sel, keep, self_search, seed) if sampled else np.arange(n)
    G = take_rows(V, g_idx) if sampled else V
    depth = k if judged is None else qrels_depth(k, len(G), self_search)
    rules = rules_of.check(
        fail_if,
        available_metrics(
            conds,
            attributes,
            k=k,
            pairs=pairs is not None,
            self_search=self_search,
            stress=stress,
            qrels_depth=None if judged is None else depth,
            n_gallery=len(G),
        ),
    )
    self_pos = np.searchsorted(g_idx, q_sel) if self_search else None
    fit = take_rows(V, _sample_rows(n, FIT_ROWS, seed, streams.FIT)) if any(c.fitted for c in conds) else None
    return Plan(
        V=V,
        labels=labels,
        is_train=is_train,
        rules=tuple(rules),
        conds=conds,
        positives=positives,
        qrels=judged,
        n_pool=len(pool),
        q_sel=q_sel,
        sample=np.searchsorted(q_sel, sample),
        scored=None if scored is None else np.searchsorted(q_sel, scored),
        n_scorable=None if scorable is None else len(scorable),
        self_matches=self_matches,
        g_idx=g_idx,
        G=G,
        Q=take_rows(G, self_pos) if self_search else take_rows(pool, q_sel),
        self_pos=self_pos,
        fit=fit,
        geo_idx=_sample_rows(n, QUICK_GEOMETRY_ROWS, seed, streams.GEOMETRY) if quick else np.arange(n),
        k=k,
        depth=depth,
        seed=seed,
        quick=bool(quick),
        min_support=min_support,
        stress=bool(stress),
        margin=margin,
        target_recall=target_recall,
    )


# ----------------------------------------------------------------------------- sections


class CannotRepresent(Exception):
    """A condition cannot represent the (valid) reference rows: a result of the report (the
    condition is not measured, and the page and ``report.json`` say why), not a failure."""


def _represented(c: ReportCondition, rows: np.ndarray, which: str) -> None:
    """Raise :class:`CannotRepresent` naming how many of ``c``'s ``rows`` (its version of the
    ``which`` rows) are zero or hold a non-finite value: cosine is undefined on them."""
    finite = zero = 0
    for a, b in _chunks(len(rows)):
        part = np.asarray(rows[a:b])
        finite += int((~np.isfinite(part).all(axis=1)).sum())
        zero += int((~(part != 0).any(axis=1)).sum())
    problems = [
        f"{m:,} of {len(rows):,} {which} rows become {what}"
        for m, what in ((zero, "zero vectors"), (finite, "non-finite"))
        if m
    ]
    if problems:
        raise CannotRepresent(f"{' and '.join(problems)} (cosine is undefined on them)")


def _condition(plan: Plan, c: ReportCondition, backend: _Backend, Xg) -> tuple[np.ndarray, dict | None]:
    """Each searched query's top gallery positions (``plan.depth`` of them) under ``c`` (a query is never its own
    neighbour) and, for a condition with vectors, its geometry in both spaces of the geometry rows
    ``Xg``. In a full run (geometry on the gallery's rows) the condition's vectors are made once:
    searched raw, then normalized in place for the unit geometry."""
    if not c.has_vectors:
        S, I = c.search(plan.Q, plan.G, plan.depth + plan.self_search)
        return drop_self(S, I, plan.self_pos, plan.depth)[1], None
    for rows in (plan.G,) if plan.self_search else (plan.G, plan.Q):
        why = c.cannot_store(rows)
        if why:
            raise CannotRepresent(why)
    Gc = c.vectors(plan.G, plan.fit, rows=plan.g_idx)
    _represented(c, Gc, "gallery")
    if c.cosine_search:
        Qc = Gc[plan.self_pos] if plan.self_search else c.vectors(plan.Q, plan.fit)
        if not plan.self_search:
            _represented(c, Qc, "query")
        neighbours = _exact(Qc, Gc, plan.depth, plan.self_pos, backend.search)[1]
        del Qc
    else:  # its own search (sign bits, deployed codes), on this machine, calibrated on the fit rows
        S, I = c.search(plan.Q, plan.G, plan.depth + plan.self_search, fit=plan.fit)
        neighbours = drop_self(S, I, plan.self_pos, plan.depth)[1]
    if plan.geometry_on_gallery:
        return neighbours, sections.geometry.both_spaces(Gc, backend.geometry, own=Gc is not getattr(c, "array", None))
    del Gc
    Xc = c.vectors(Xg, plan.fit, rows=plan.geo_idx)
    return neighbours, sections.geometry.both_spaces(Xc, backend.geometry, own=Xc is not getattr(c, "array", None))


def qrels_depth(k: int, gallery_rows: int, self_search: bool) -> int:
    """How many neighbours a report with graded judgments keeps per query: :data:`QRELS_DEPTH`, or
    ``k`` if larger, but no more than the gallery offers (a query is never its own neighbour)."""
    return max(k, min(QRELS_DEPTH, gallery_rows - 1 - self_search))


# ----------------------------------------------------------------------------- the report


def _scored_statement(plan: Plan) -> dict[str, str]:
    """``{"scored": which queries relevance scores, with its metrics}`` (empty without pairs or qrels)."""
    if plan.scored is None:
        return {}
    k, depth = plan.k, plan.depth
    if plan.positives is not None:
        metrics, what = f"Hit@{k} and recall@{k}", "a positive"
    else:
        metrics, what = f"nDCG@{k}, MRR@{k}, MAP@{depth} and recall@{depth}", "a relevant judgment"
    m, scored = plan.n_scorable, len(plan.scored)
    which = f"every one of the {m:,}" if scored == m else f"a seeded sample of {scored:,} of the {m:,}"
    besides = len(plan.q_sel) - len(plan.sample)
    outside = f" ({besides:,} of them outside the query sample, searched besides)" if besides else ""
    return {"scored": f"{metrics} over {which} queries with {what}{outside}"}


def _sampling(plan: Plan, backend: _Backend) -> dict[str, str]:
    """One statement per sample: queries, gallery, geometry rows, probes, bootstrap, PCA fit, and with
    pairs or qrels the queries relevance scores (``scored``)."""
    n, N, pool = len(plan.V), len(plan.G), plan.n_pool
    what = "rows" if plan.self_search else "queries"
    geometry = f"a seeded sample of {len(plan.geo_idx):,} of {n:,} rows" if len(plan.geo_idx) < n else f"all {n:,} rows"
    return {
        "queries": (
            f"all {pool:,} {what}"
            if len(plan.sample) == pool
            else f"a seeded sample of {len(plan.sample):,} of {pool:,} {what}"
        ),
        "gallery": (
            f"all {n:,} rows"
            if N == n
            else f"a seeded sample of {N:,} of {n:,} rows (containing every searched query and its positives)"
        ),
        "geometry": geometry + backend.geometry_note,
        "probes": sections.labels.probe_statement(plan),
        "bootstrap": (
            f"{plan.n_draws:,} paired bootstrap draws over queries (seed {plan.seed})" + backend.bootstrap_note
        ),
        "pca_fit": f"a seeded sample of at most {FIT_ROWS:,} rows",
    } | _scored_statement(plan)


def _inputs(plan: Plan, backend: _Backend, parts: list[Section], sources) -> dict:
    """The report's description of its inputs, samples, conditions and notes; ``sources`` (the
    files read, or a future of them) is awaited here, after every section."""
    inputs = {
        "files": {},
        "n": len(plan.V),
        "d": plan.V.shape[1],
        **recorded("inputs", vars(plan)),
        "queries_are_vectors": plan.self_search,
        "n_query_pool": plan.n_pool,
        "n_queries": len(plan.sample),
        "n_queries_searched": len(plan.q_sel),
        "n_gallery": len(plan.G),
        "sampling": _sampling(plan, backend),
        "label_columns": [] if plan.labels is None else [str(c) for c in plan.labels.columns],
        "missing_labels": {}
        if plan.labels is None
        else {col: int((~labelled(y)).sum()) for col, y in label_arrays(plan.labels).items()},
        "split_column": plan.is_train is not None,
        "conditions": [
            {"name": c.name, "kind": c.kind, "convention": c.convention, "description": c.description}
            for c in plan.conds
        ],
        "exact_search": "embdiag.metrics.retrieval.topk, cosine in float32" + backend.search_note,
        "versions": _versions(),
        "notes": [note for s in parts for note in s.notes],
    }
    if plan.quick:
        inputs["quick_statement"] = (
            f"Quick run: the numbers come from subsamples (at most {QUICK_QUERY_ROWS:,} queries, a gallery of at most "
            f"{QUICK_GALLERY_ROWS:,} rows, {QUICK_GEOMETRY_ROWS:,} rows for geometry, {QUICK_PROBE_ROWS:,} for "
            f"probes, {QUICK_DRAWS:,} bootstrap draws); rerun without --quick for the full measurement."
        )
    for s in parts:
        inputs.update(s.inputs)
    inputs["files"] = dict((sources.result() if isinstance(sources, Future) else sources) or {})
    return inputs


def _workers(plan: Plan, backend: _Backend) -> int:
    """How many of the report's steps run at once: the backend's workers, when that many float32
    copies of the gallery fit in :data:`PARALLEL_BYTES` each (a condition's step holds one)."""
    copy = 4 * plan.G.shape[0] * plan.G.shape[1]
    return backend.workers if copy <= PARALLEL_BYTES else 1


def _measured(results: dict, cannot: dict[str, str]):
    """Each task's result; the first exception of a task whose condition can represent the rows is
    raised (the tasks of a condition that cannot are not read)."""
    for (kind, name), value in results.items():
        if isinstance(value, BaseException) and name not in cannot:
            raise value
    return results


def _sections(plan: Plan, backend: _Backend, progress: bool) -> tuple[dict[str, Section], dict[str, str]]:
    """Every section, in order, and the conditions that cannot represent the rows (name -> why;
    the sections measure the others); the searches between geometry and identity find the
    neighbour lists that identity, labels and relevance read. Progress: one step per search and
    section."""
    from tqdm import tqdm

    steps = 2 + len(plan.conds) + any(c.kind == "index" for c in plan.conds) + (plan.labels is not None) + plan.stress
    bar = tqdm(total=steps, desc="report", file=sys.stderr, disable=not progress, leave=False)

    def step(desc):
        bar.set_postfix_str(f"{desc} done")  # names the step just finished
        bar.update(1)

    Xg = sections.geometry.rows(plan)
    geo = {"reference": sections.geometry.both_spaces(Xg, backend.geometry, own=False)}
    step("geometry")
    ref_S, ref_I = _exact(plan.Q, plan.G, max(plan.k + 1, plan.depth), plan.self_pos, backend.search)
    deep = {"reference": ref_I[:, : plan.depth]}
    step("exact search")
    hygiene = sections.hygiene.measure(plan, ref_S, backend.search)
    # every condition's steps, which read only the plan: index builds first (the longest)
    probes = sections.labels.Probes.of(plan)
    sample = plan.on_sample()  # identity, labels, index curves and certificates read the query sample
    cert = sections.identity.cert_sample(sample) if any(c.certified for c in plan.conds) else None
    tasks = {("build", c.name): functools.partial(c.ann, plan.G) for c in plan.conds if not c.has_vectors}
    tasks |= {("condition", c.name): functools.partial(_condition, plan, c, backend, Xg) for c in plan.conds}
    if probes is not None:
        tasks |= {("probe", "reference"): functools.partial(probes.accuracy, plan, None)}
        tasks |= {("probe", c.name): functools.partial(probes.accuracy, plan, c) for c in plan.conds if c.has_vectors}
    tasks |= {
        ("cert", c.name): functools.partial(sections.identity.certificate, cert, c, plan.fit)
        for c in plan.conds
        if c.certified
    }
    pending = {("build", c.name): ("condition", c.name) for c in plan.conds if not c.has_vectors}
    results = run_tasks(
        {key: task for key, task in tasks.items() if key not in pending.values()},
        _workers(plan, backend),
        lambda key: key[0] == "condition" and step(key[1]),
    )
    for build, key in pending.items():  # an index is searched (multi-threaded) once built
        if not isinstance(results[build], BaseException):
            results[key] = outcome(tasks[key])
        step(key[1])
    cannot = {
        name: str(value)
        for (kind, name), value in results.items()
        if kind == "condition" and isinstance(value, CannotRepresent)
    }
    results = _measured(results, cannot)
    plan = replace(plan, conds=[c for c in plan.conds if c.name not in cannot])
    for c in plan.conds:
        deep[c.name], by_space = results[("condition", c.name)]
        if c.has_vectors:
            geo[c.name] = by_space
    ba = {name: value for (kind, name), value in results.items() if kind == "probe" and name not in cannot}
    certs = {name: value for (kind, name), value in results.items() if kind == "cert" and name not in cannot}
    neighbours = {name: nb[:, : plan.k] for name, nb in deep.items()}
    sample = replace(sample, conds=plan.conds)
    on_sample = neighbours if sample is plan else {name: nb[plan.sample] for name, nb in neighbours.items()}
    out = {"hygiene": hygiene, "geometry": sections.geometry.measure(plan, geo)}
    out["identity"] = sections.identity.measure(sample, on_sample, boundary_margin(ref_S[plan.sample], plan.k), certs)
    out["hubness"] = sections.hubness.measure(plan, neighbours, (sample, on_sample), backend.intervals, backend.search)
    out["indexes"] = sections.indexes.measure(sample, on_sample)
    if out["indexes"].measured:
        step("index curves")
    out["labels"] = sections.labels.measure(sample, on_sample, probes, ba)
    if out["labels"].measured:
        step("labels")
    out["relevance"] = sections.relevance.measure(plan, neighbours, deep, backend.intervals, (sample, on_sample))
    out["stress"] = sections.stress.measure(plan)
    if out["stress"].measured:
        step("stress")
    bar.close()
    return out, cannot


def _report(plan: Plan, backend: _Backend, progress: bool, sources) -> Report:
    """The sections measured and put together: tables and metric records in section order, the
    scope sentences of the sections measured."""
    parts, cannot = _sections(plan, backend, progress)
    inputs = _inputs(plan, backend, list(parts.values()), sources)
    inputs["notes"] += [f"{name} {CANNOT_REPRESENT}: {why}; not measured." for name, why in cannot.items()]
    tables = {"conditions": pd.DataFrame(inputs["conditions"], columns=["name", "kind", "convention", "description"])}
    for s in parts.values():
        tables.update(s.tables)
    metrics = pd.DataFrame([r for s in parts.values() for r in s.rows], columns=METRIC_COLUMNS)
    suffix = " Quick run: from subsamples." if plan.quick else ""
    measured_conds = [c for c in plan.conds if c.name not in cannot]
    summary = summarize(
        measured_conds, tables.get("identity"), tables.get("relevance"), tables.get("labels"), plan.k, plan.margin
    )
    summary = with_unrepresented(summary, plan.conds, cannot, plan.k)
    measured = {name: s.measured for name, s in parts.items()} | {"summary": bool(summary)}
    scope = {name: getattr(sections, name).SCOPE + suffix for name in _SCOPED if measured.get(name)}
    gates = rules_of.outcomes(plan.rules, metrics, strict=False)
    if summary:
        tables["summary"] = summary_table(summary, plan.k)
        reference_bytes = 4.0 * plan.V.shape[1]
        inputs["bytes_per_vector"] = reference_bytes  # the reference as float32 rows, what exact search compares
    if measured_conds:  # a condition that cannot represent the rows has no bytes, identity or relevance to weigh
        tables["frontier"] = frontier_table(summary, tables["identity"], gates, reference_bytes, plan.k)
        scope["frontier"] = sections.frontier.SCOPE + suffix
    if gates:
        tables["gates"] = pd.DataFrame(gates)
    timings = {key: value for s in parts.values() for key, value in s.timings.items()}
    return Report(inputs, scope, tables, metrics, summary, gates, timings)


def measure(
    vectors,
    *,
    labels: pd.DataFrame | None = None,
    compare=None,
    pairs=None,
    qrels=None,
    queries=None,
    compress=(),
    index=(),
    k: int = 10,
    stress: bool = False,
    quick: bool = False,
    seed: int = 0,
    min_support: int = 10,
    progress: bool = True,
    sources: dict | None = None,
    cluster: str | None = None,
    shard_rows: int = SHARD_ROWS,
    fail_if=(),
    margin: float = MARGIN_PP,
    target_recall: float = TARGET_RECALL,
    timed: bool = True,
) -> Report:
    """Measure a report on ``vectors`` (n x d; a memmap stays a memmap).

    Args:
        labels: one row per vector, one column per attribute (values compared as strings; a
            missing value leaves the row out for that attribute only); a ``split`` column
            (:func:`~embdiag.data.files.parse_split`) is the probes' split, not an attribute.
        compare: a second representation of the same n items (array, path or
            :class:`~embdiag.report.conditions.CompareFile`).
        pairs: positives per query: a list with one array of VECTORS row indices per query
            (an empty array: no positive), or ``(positives, query_indices)`` as
            :func:`~embdiag.data.files.read_pairs` returns with ``allow_missing=True``.
        qrels: graded judgments per query: a list with one mapping ``{VECTORS row: grade}`` per
            query (grades non-negative integers, TREC's convention), as
            :func:`~embdiag.data.files.read_qrels` returns it; not with ``pairs``.
        queries: a separate query set (nq x d) searched against ``vectors`` (then P@k is not
            measured: labels describe ``vectors`` only, and ``compare`` is not allowed).
        compress, index: spec strings (``"fp16,int8,pca256"``, ``"hnsw,ivfpq"``; blank: none) or
            condition lists, parsed by :func:`~embdiag.report.conditions.parse_conditions`.
        quick: at most 1,000 queries, a gallery of at most 100,000 rows, 5,000 rows for geometry
            and for probes, 1,000 bootstrap draws.
        cluster: a Ray cluster address (:func:`embdiag.cluster.parse_address`): every exact search
            then runs as one task per ``shard_rows`` gallery rows, merged exactly
            (:func:`~embdiag.report.sharded.sharded_topk`), and every geometry as one task per
            block of ``shard_rows`` rows (:func:`~embdiag.report.sharded.block_mapper`); every
            number equals the local run's with the same ``shard_rows``.
        shard_rows: rows per search task on a cluster, and with or without one the rows per
            block of the geometry's sums (:func:`~embdiag.metrics.geometry.summary`), which are
            added over the blocks in order.
        fail_if: ``--fail-if`` rules (strings or :class:`~embdiag.report.fail_if.Rule`), checked
            against :func:`available_metrics` before anything is measured and recorded with their
            outcomes (:attr:`Report.gates`).
        margin: the loss margin of every relevance change, in percentage points (> 0), against
            which each condition's verdict is decided (:func:`~embdiag.report.sections.summary.verdict`).
        target_recall: the recall@k an index setting must reach, in (0, 1]: the indexes section
            names the cheapest swept setting of each index whose recall interval reaches it.
        timed: time each index search for the report's speeds (a search shorter than
            :data:`~embdiag.report.sections.indexes.TIMING_S` is repeated for its fastest run);
            False: each search runs once (``embdiag verify``, which compares no speed).
        sources: the files read, recorded as ``inputs["files"]`` (option -> name, size and
            SHA-256), or a future of them (:func:`~embdiag.data.files.file_records_later`, as
            :func:`~embdiag.report.cli.chapter_inputs` gives them), awaited once all else is measured.

    Sampling: queries are all rows when there are at most 10,000, else a seeded sample of
    10,000; with pairs or qrels every query with a positive or a relevant judgment is searched
    besides, and relevance scores those (quick: a seeded sample of at most 1,000 of them); every
    sample is drawn from its own seeded stream (``[seed, stream]``).

    Raises:
        InputError: naming the option and the problem (wrong lengths or dimensions, bad specs,
            ``k`` too large, stress without labels, ...).

    Example:
        >>> X = np.random.default_rng(0).standard_normal((300, 8)).astype(np.float32)
        >>> report = measure(X, compress="fp16,prefix4", k=5, progress=False)
        >>> list(report.scope)
        ['hygiene', 'summary', 'geometry', 'identity', 'hubness', 'frontier']
        >>> list(report.tables)
        ['conditions', 'hygiene', 'geometry', 'identity', 'hubness', 'hubness_tail', 'summary', 'frontier']
        >>> report.tables["identity"].set_index("condition")["overlap@5"].round(2).to_dict()
        {'fp16': 1.0, 'prefix4': 0.21}
        >>> [(e["condition"], e["verdict"]) for e in report.summary]
        [('fp16', 'relevance not measured'), ('prefix4', 'relevance not measured')]
    """
    shard_rows = check_int(shard_rows, "shard_rows", minimum=1)

    def run(backend: _Backend) -> Report:
        plan = _plan(
            vectors,
            labels=labels,
            compare=compare,
            pairs=pairs,
            qrels=qrels,
            queries=queries,
            compress=compress,
            index=index,
            k=k,
            stress=stress,
            quick=quick,
            seed=seed,
            min_support=min_support,
            fail_if=fail_if,
            margin=margin,
            target_recall=target_recall,
        )
        report = _report(replace(plan, timed=bool(timed)), backend, progress, sources)
        report.inputs["options"] = recorded(
            "options", {"compress": compress, "index": index, "stress": stress, "fail_if": fail_if}
        )
        return report

    if cluster is None:
        return run(_local(shard_rows))
    check_address(cluster)
    with connect(cluster):
        return run(_on_cluster(shard_rows))
