"""Every number of an ``embdiag report``: :func:`measure` returns a :class:`Report`.

Sections (each only when its inputs exist):

1. ``geometry``: :func:`embdiag.metrics.geometry.summary` of the reference and of every
   condition with vectors, over every row (quick: a seeded sample of
   :data:`QUICK_GEOMETRY_ROWS` rows).
2. ``labels``: per label column, probe balanced accuracy (:func:`~embdiag.metrics.probe.fit_probes`
   on a seeded 70/30 split of at most :data:`PROBE_ROWS` rows) and P@k of the searched queries,
   with floors; classes frozen once by :func:`~embdiag.metrics.suite.frozen_classes`.
3. ``identity``: per condition, overlap@k with the exact reference top-k, the share of changed
   queries, reference boundary margins, and for storage conditions the float certificate of
   :func:`~embdiag.interventions.precision.compare_conditions`.
4. ``relevance``: per condition, ΔP@k per label column and, with pairs, ΔHit@k / Δrecall@k, in
   percentage points with paired bootstrap intervals over queries.
5. ``stress``: :func:`~embdiag.interventions.stress.measure_grid` on (part of) the probe split.

Exact search is :func:`~embdiag.metrics.retrieval.topk` in float32. When the queries are
VECTORS rows, a query is never its own neighbour (it is removed from its result).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sys
import tempfile
from concurrent.futures import Future
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from .._mapped import take_rows
from .._validate import as_float, check_int
from ..cluster import connect
from ..data.files import InputError
from ..interventions.precision import StorageCondition, compare_conditions
from ..interventions.stress import measure_grid
from ..metrics.geometry import summary
from ..metrics.probe import balanced_accuracy, eligible_classes, fit_probes
from ..metrics.retrieval import (boundary_margin, hit_at_k, overlap_at_k, precision_at_k, random_floor,
                                 recall_at_k, topk)
from ..metrics.stats import paired_bootstrap
from ..metrics.suite import frozen_classes
from .conditions import FIT_ROWS, Condition, _sample_rows, file_condition, parse_compress, parse_index
from .sharded import SHARD_ROWS, block_mapper, check_address, sharded_topk

__all__ = ["Report", "measure", "METRIC_COLUMNS", "QUERY_ROWS", "QUICK_QUERY_ROWS", "QUICK_GALLERY_ROWS",
           "QUICK_GEOMETRY_ROWS", "PROBE_ROWS", "QUICK_PROBE_ROWS", "STRESS_ROWS", "CERT_QUERIES", "CERT_GALLERY"]

METRIC_COLUMNS = ["section", "metric", "condition", "attribute", "value", "low", "high"]
QUERY_ROWS, QUICK_QUERY_ROWS = 10_000, 1_000
QUICK_GALLERY_ROWS = 100_000
QUICK_GEOMETRY_ROWS = 5_000
PROBE_ROWS, QUICK_PROBE_ROWS = 20_000, 5_000
STRESS_ROWS = 5_000
N_DRAWS, QUICK_DRAWS = 5_000, 1_000
#: Certificate: at most this many of the searched queries, against the searched gallery when it has
#: at most CERT_GALLERY rows, else against a seeded sample of that many rows (quick: a fifth of each).
CERT_QUERIES, CERT_GALLERY = 1_000, 100_000
# Random streams (np.random.default_rng([seed, stream])): one per sample, so none shifts another.
_QUERIES, _GALLERY, _GEOMETRY, _PROBE, _FIT, _CERT, _SPLIT = 1, 2, 3, 4, 5, 6, 7

SCOPE = {
    "geometry": "Label-free shape of each representation (spread, mean direction, effective rank) on a sample; "
                "it says nothing about whether neighbours or labels are kept.",
    "labels": "What a linear probe recovers and how often neighbours share a query's label, against chance "
              "floors; it does not establish that the labels are the ones the application needs.",
    "identity": "Whether each condition returns the same top-k neighbours as exact search on the reference "
                "vectors (and, for storage, which queries provably cannot change); a change of identity is "
                "not by itself a loss of relevance.",
    "relevance": "The change of label agreement (and of retrieval of the given pairs) of each condition's "
                 "top-k, with intervals over the searched queries only (not over re-encodings or other data).",
    "stress": "How the metrics move under declared synthetic changes of the vectors; it probes sensitivity, "
              "not the changes the user's pipeline makes.",
}


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
    ``"reference"`` or a condition's name; ``low``/``high`` NaN without an interval).
    """

    inputs: dict
    scope: dict[str, str]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    metrics: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=METRIC_COLUMNS))

    def to_json(self) -> dict:
        """Every number: inputs, scope, metrics records and tables as records (NaN as null)."""
        return _jsonable({"inputs": self.inputs, "scope": self.scope,
                          "metrics": self.metrics.to_dict(orient="records"),
                          "tables": {n: t.to_dict(orient="records") for n, t in self.tables.items()}})

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
    return a


def _drop_self(S, I, self_pos, keep: int):
    """The first ``keep`` results of each row other than the query's own gallery row."""
    if self_pos is None:
        return S[:, :keep], I[:, :keep]
    order = np.argsort(I == np.asarray(self_pos)[:, None], axis=1, kind="stable")[:, :keep]
    return np.take_along_axis(S, order, axis=1), np.take_along_axis(I, order, axis=1)


def _exact(Q, G, keep: int, self_pos, search=topk):
    """Exact float32 top-``keep`` (self removed when the queries are gallery rows) by ``search``."""
    S, I = search(Q, G, keep + (self_pos is not None))
    return _drop_self(S, I, self_pos, keep)


def _versions() -> dict:
    out = {}
    for pkg in ("embdiag", "numpy", "faiss-cpu", "scipy", "torch"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def _median(x) -> float:
    return float(np.median(x)) if len(x) else float("nan")


def _conditions(compare, compress, index, n, d, seed) -> list[Condition]:
    conds = []
    if compare is not None:
        c = compare if isinstance(compare, Condition) else file_condition(compare)
        m = len(c.params["array"])
        if m != n:
            raise InputError(f"--compare: has {m} row(s), expected {n} (one per vector)")
        conds.append(c)
    # an empty spec string means none (what the command passes when the option is absent)
    conds += (parse_compress(compress, d, seed=seed) if compress.strip() else []) if isinstance(compress, str) \
        else list(compress)
    conds += (parse_index(index, n, d, seed=seed) if index.strip() else []) if isinstance(index, str) \
        else list(index)
    names = [c.name for c in conds]
    dup = sorted({x for x in names if names.count(x) > 1} | ({"reference"} & set(names)))
    if dup:
        raise InputError(f"conditions: names must be unique and not 'reference'; repeated or reserved: {dup}")
    return conds


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


# ----------------------------------------------------------------------------- measure

def measure(vectors, *, labels: pd.DataFrame | None = None, compare=None, pairs=None, queries=None,
            compress=(), index=(), k: int = 10, stress: bool = False, quick: bool = False, seed: int = 0,
            min_support: int = 10, progress: bool = True, sources: dict | None = None, cluster: str | None = None,
            shard_rows: int = SHARD_ROWS) -> Report:
    """Measure a report on ``vectors`` (n x d; a memmap stays a memmap).

    Args:
        labels: one row per vector, one column per attribute (values compared as strings).
        compare: a second representation of the same n items (array, path or file Condition).
        pairs: positives per query: a list with one array of VECTORS row indices per query
            (an empty array: no positive), or ``(positives, query_indices)`` as
            :func:`~embdiag.data.files.read_pairs` returns with ``allow_missing=True``.
        queries: a separate query set (nq x d) searched against ``vectors`` (then P@k is not
            measured: labels describe ``vectors`` only, and ``compare`` is not allowed).
        compress, index: spec strings (``"fp16,int8,pca256"``, ``"hnsw,ivfpq"``) or Condition lists.
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
        sources: the files read, recorded as ``inputs["files"]`` (option -> name, size and
            SHA-256), or a future of them (:func:`~embdiag.data.files.file_records_later`, as
            :func:`~embdiag.report.cli.chapter_inputs` gives them), awaited once all else is measured.

    Sampling: queries are all rows when there are at most 10,000, else a seeded sample of
    10,000; every sample is drawn from its own seeded stream (``[seed, stream]``).

    Raises:
        InputError: naming the option and the problem (wrong lengths or dimensions, bad specs,
            ``k`` too large, stress without labels, ...).
    """
    args = dict(labels=labels, compare=compare, pairs=pairs, queries=queries, compress=compress, index=index, k=k,
                stress=stress, quick=quick, seed=seed, min_support=min_support, progress=progress, sources=sources)
    shard_rows = check_int(shard_rows, "shard_rows", minimum=1)
    if cluster is None:
        return _measure(vectors, search=topk, geometry=functools.partial(summary, block_rows=shard_rows),
                        intervals=lambda calls: [paired_bootstrap(*c) for c in calls], **args)
    check_address(cluster)
    from ..cluster import run_tasks

    def geometry(X):
        return summary(X, block_rows=shard_rows, map_blocks=block_mapper(X))
    with connect(cluster):
        report = _measure(vectors, search=functools.partial(sharded_topk, shard_rows=shard_rows), geometry=geometry,
                          intervals=lambda calls: run_tasks(paired_bootstrap, calls), **args)
    report.inputs["exact_search"] += f", sharded over a Ray cluster ({shard_rows:,} gallery rows per task)"
    report.inputs["sampling"]["geometry"] += f", one Ray task per block of {shard_rows:,} rows"
    report.inputs["sampling"]["bootstrap"] += ", one Ray task per interval"
    return report


def _measure(vectors, *, labels, compare, pairs, queries, compress, index, k, stress, quick, seed, min_support,
             progress, sources, search, geometry, intervals) -> Report:
    """:func:`measure` with exact searches done by ``search`` (``topk`` or a sharded equivalent),
    geometry by ``geometry`` (``summary`` of an array, here or by blocks on a cluster) and the
    bootstrap by ``intervals`` (``[paired_bootstrap(*c) for c in calls]``, here or as tasks)."""
    k = check_int(k, "k", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    min_support = check_int(min_support, "min_support", minimum=1)
    V = _array(vectors, "VECTORS")
    n, d = V.shape
    self_search = queries is None
    Qpool = V if self_search else _array(queries, "--queries", d)
    if labels is not None:
        if not isinstance(labels, pd.DataFrame):
            raise InputError(f"--labels: expected a DataFrame (one column per attribute), got {type(labels).__name__}")
        if len(labels) != n:
            raise InputError(f"--labels: has {len(labels)} row(s), expected {n} (one per vector)")
        if labels.columns.empty:
            raise InputError("--labels: no attribute column")
        usable = [c for c in labels.columns
                  if len(eligible_classes(labels[c].astype(str).to_numpy(), min_support)) >= 2]
        if not usable:
            raise InputError(f"--labels: too little support: no column has two classes with at least {min_support} "
                             f"items each (columns: {', '.join(map(str, labels.columns))})")
    if stress and labels is None:
        raise InputError("--stress: needs --labels (the stress grid measures probes and P@k)")
    if compare is not None and not self_search:
        raise InputError("--compare: cannot be combined with --queries (the second representation of the "
                         "queries is not given)")
    conds = _conditions(compare, compress, index, n, d, seed)
    positives = None if pairs is None else _positives(pairs, len(Qpool), n)
    n_draws = QUICK_DRAWS if quick else N_DRAWS
    probe_rows = QUICK_PROBE_ROWS if quick else PROBE_ROWS
    notes: list[str] = []

    # -- samples
    q_sel = _sample_rows(len(Qpool), QUICK_QUERY_ROWS if quick else QUERY_ROWS, seed, _QUERIES)
    if quick and n > QUICK_GALLERY_ROWS:
        need = [q_sel] if self_search else []
        if positives is not None:
            need += [positives[i] for i in q_sel]
        need = np.unique(np.concatenate(need)) if need else np.empty(0, np.int64)
        rest = np.setdiff1d(np.arange(n), need)
        extra = max(0, QUICK_GALLERY_ROWS - len(need))
        fill = np.random.default_rng([seed, _GALLERY]).choice(len(rest), extra, replace=False)
        g_idx = np.sort(np.concatenate([need, rest[fill]]))
        G = take_rows(V, g_idx)
    else:
        g_idx, G = np.arange(n), V
    N = len(G)
    limit = N - 2 if self_search else N - 1
    if k > limit:
        raise InputError(f"--k: must be at most {limit} (gallery of {N} rows"
                         f"{', a query never its own neighbour' if self_search else ''}), got {k}")
    self_pos = np.searchsorted(g_idx, q_sel) if self_search else None
    Q = take_rows(G, self_pos) if self_search else take_rows(Qpool, q_sel)
    fit = take_rows(V, _sample_rows(n, FIT_ROWS, seed, _FIT)) if any(
        c.kind == "compression" for c in conds) else None

    geo_idx = _sample_rows(n, QUICK_GEOMETRY_ROWS, seed, _GEOMETRY) if quick else np.arange(n)
    sampling = {
        "queries": (f"all {len(Qpool):,} {'rows' if self_search else 'queries'}" if len(q_sel) == len(Qpool) else
                    f"a seeded sample of {len(q_sel):,} of {len(Qpool):,} {'rows' if self_search else 'queries'}"),
        "gallery": (f"all {n:,} rows" if N == n else f"a seeded sample of {N:,} of {n:,} rows (containing every "
                    "searched query and its positives)"),
        "geometry": f"a seeded sample of {len(geo_idx):,} of {n:,} rows" if len(geo_idx) < n else f"all {n:,} rows",
        "probes": f"a seeded 70/30 split of at most {probe_rows:,} labelled rows",
        "bootstrap": f"{n_draws:,} paired bootstrap draws over queries (seed {seed})",
        "pca_fit": f"a seeded sample of at most {FIT_ROWS:,} rows",
    }
    inputs = {
        "files": {}, "n": n, "d": d, "k": k, "seed": seed, "quick": bool(quick),
        "min_support": min_support, "queries_are_vectors": self_search, "n_query_pool": len(Qpool),
        "n_queries": len(q_sel), "n_gallery": N, "sampling": sampling,
        "label_columns": [] if labels is None else [str(c) for c in labels.columns],
        "conditions": [{"name": c.name, "kind": c.kind, "description": c.description} for c in conds],
        "exact_search": "embdiag.metrics.retrieval.topk, cosine in float32",
        "versions": _versions(), "notes": notes,
    }
    if quick:
        inputs["quick_statement"] = (
            f"Quick run: the numbers come from subsamples (at most {QUICK_QUERY_ROWS:,} queries, a gallery of at most "
            f"{QUICK_GALLERY_ROWS:,} rows, {QUICK_GEOMETRY_ROWS:,} rows for geometry, {QUICK_PROBE_ROWS:,} for "
            f"probes, {QUICK_DRAWS:,} bootstrap draws); rerun without --quick for the full measurement.")
    rows: list[dict] = []

    def metric(section, name, condition, value, attribute="", low=np.nan, high=np.nan):
        rows.append({"section": section, "metric": name, "condition": condition, "attribute": attribute,
                     "value": float(value), "low": float(low), "high": float(high)})

    from tqdm import tqdm
    steps = 2 + len(conds) + (labels is not None) + bool(stress)
    bar = tqdm(total=steps, desc="report", file=sys.stderr, disable=not progress, leave=False)

    def step(desc):
        bar.set_postfix_str(f"{desc} done")  # names the step just finished
        bar.update(1)

    tables: dict[str, pd.DataFrame] = {}
    tables["conditions"] = pd.DataFrame(inputs["conditions"], columns=["name", "kind", "description"])

    # -- 1. geometry of every row, a condition's from its vectors of the whole gallery when they
    #    are made for its search below (quick: of a seeded sample, here)
    whole = len(geo_idx) == n and N == n
    geo = {"reference": geometry(V if whole else take_rows(V, geo_idx))}
    if not whole:
        Vgeo = take_rows(V, geo_idx)
        geo.update({c.name: geometry(c.vectors(Vgeo, fit, rows=geo_idx)) for c in conds if c.has_vectors})
        del Vgeo
    tables["geometry"] = None  # (filled after the searches, in this place)
    step("geometry")

    # -- exact reference search (k + 1 columns for the boundary margin)
    ref_S, ref_I = _exact(Q, G, k + 1, self_pos, search)
    ref_nb = ref_I[:, :k]
    margins = boundary_margin(ref_S, k)
    step("exact search")

    # -- 3. identity (and the neighbours every later section reads)
    neighbors = {"reference": ref_nb}
    ident = []
    for c in conds:
        if c.has_vectors:
            Gc = c.vectors(G, fit, rows=g_idx)
            if whole:
                geo[c.name] = geometry(Gc)
            Qc = Gc[self_pos] if self_search else c.vectors(Q, fit)
            _, nb = _exact(Qc, Gc, k, self_pos, search)
        else:
            S, I = c.search(Q, G, k + self_search)
            _, nb = _drop_self(S, I, self_pos, k)
            Gc = Qc = None
        neighbors[c.name] = nb
        ov = overlap_at_k(ref_nb, nb, per_query=True)
        changed = ov < 1
        row = {"condition": c.name, "kind": c.kind, f"overlap@{k}": float(ov.mean()),
               "changed_queries": float(changed.mean()), "n_queries": len(ov),
               "median_margin_changed": _median(margins[changed]),
               "median_margin_unchanged": _median(margins[~changed])}
        metric("identity", f"overlap@{k}", c.name, row[f"overlap@{k}"])
        metric("identity", "changed_queries", c.name, row["changed_queries"])
        metric("identity", "median_margin_changed", c.name, row["median_margin_changed"])
        metric("identity", "median_margin_unchanged", c.name, row["median_margin_unchanged"])
        if c.kind == "storage":
            row.update(_certificate(c, Q, G, Gc, Qc, self_pos, k, quick, seed))
            metric("identity", "cert_coverage", c.name, row["cert_coverage"])
            metric("identity", "cert_violations", c.name, row["cert_violations"])
        ident.append(row)
        del Gc, Qc
        step(c.name)
    if conds:
        tables["identity"] = pd.DataFrame(ident)
    for name, r in geo.items():
        for key in ("total_variance", "mean_cosine", "rankme", "participation_ratio"):
            metric("geometry", key, name, r[key])
    rows.sort(key=lambda r: r["section"] != "geometry")  # the first section (a stable sort)
    tables["geometry"] = pd.DataFrame([{"representation": name, **r, "n_rows": len(geo_idx)}
                                       for name, r in geo.items()])

    # -- 2. labels and 4. relevance
    boot = []  # (row, a, b): the relevance intervals, computed together below
    if labels is not None:
        lab_rows, support_rows = _labels_section(V, labels, conds, fit, neighbors, g_idx, q_sel, self_search, k,
                                                 seed, min_support, metric, notes, probe_rows)
        tables["support"] = pd.DataFrame(support_rows, columns=["attribute", "class", "count", "eligible"])
        tables["labels"] = pd.DataFrame(lab_rows)
        if self_search:
            for col in labels.columns:
                y = labels[col].astype(str).to_numpy()
                pq = {name: 100.0 * precision_at_k(nb, y[g_idx], y[q_sel], per_query=True)
                      for name, nb in neighbors.items()}
                boot += [({"condition": c.name, "attribute": str(col), "metric": f"delta_p@{k}"},
                          pq[c.name], pq["reference"]) for c in conds]
        step("labels")
    if positives is not None:
        has = np.flatnonzero([positives[i].size > 0 for i in q_sel])
        if has.size < 2:
            notes.append(f"--pairs: only {has.size} searched query(ies) have positives; Hit@k and recall@k skipped")
        else:
            pos = [np.searchsorted(g_idx, positives[q_sel[i]]) for i in has]
            vals = {}
            for name, nb in neighbors.items():
                vals[name] = {"hit": 100.0 * hit_at_k(nb[has], pos, per_query=True),
                              "recall": 100.0 * recall_at_k(nb[has], pos, per_query=True)}
                for what in ("hit", "recall"):
                    metric("relevance", f"{what}@{k}", name, vals[name][what].mean() / 100.0)
            boot += [({"condition": c.name, "attribute": "", "metric": f"delta_{what}@{k}"},
                      vals[c.name][what], vals["reference"][what]) for c in conds for what in ("hit", "recall")]
            inputs["n_queries_with_positives"] = int(has.size)
    ivs = intervals([(a, b, None, n_draws, 0.95, seed) for _, a, b in boot])
    rel = [{**row, "value": iv.mean, "low": iv.low, "high": iv.high, "n_queries": iv.n}
           for (row, _, _), iv in zip(boot, ivs)]
    for r in rel:
        metric("relevance", r["metric"], r["condition"], r["value"], r["attribute"], r["low"], r["high"])
    if rel:
        tables["relevance"] = pd.DataFrame(rel)

    # -- 5. stress
    if stress:
        tables["stress"] = _stress_section(V, labels, k, seed, metric, notes, probe_rows)
        step("stress")
    bar.close()

    inputs["files"] = dict((sources.result() if isinstance(sources, Future) else sources) or {})
    present = ["geometry"] + (["labels"] if labels is not None else []) + (["identity"] if conds else []) \
        + (["relevance"] if rel else []) + (["stress"] if stress else [])
    scope = {s: SCOPE[s] for s in present}
    if quick:
        scope = {s: t + " Quick run: from subsamples." for s, t in scope.items()}
    return Report(inputs, scope, tables, pd.DataFrame(rows, columns=METRIC_COLUMNS))


def _certificate(c: Condition, Q, G, Gc, Qc, self_pos, k, quick, seed) -> dict:
    """Float certificate of a storage condition (queries and gallery stored) on at most CERT_QUERIES
    searched queries; see :func:`~embdiag.interventions.precision.compare_conditions`. When the
    queries are gallery rows they stay in the search, so the certified set is the top-(k + 1)
    including the query itself (its k nearest other rows)."""
    div = 5 if quick else 1
    cq = _sample_rows(len(Q), CERT_QUERIES // div, seed, _CERT)
    if len(G) <= CERT_GALLERY // div:
        cg = np.arange(len(G))
    else:
        need = self_pos[cq] if self_pos is not None else np.empty(0, np.int64)
        rest = np.setdiff1d(np.arange(len(G)), need)
        pick = np.random.default_rng([seed, _CERT + 100]).choice(len(rest), CERT_GALLERY // div - len(need),
                                                                  replace=False)
        cg = np.sort(np.concatenate([need, rest[pick]]))
    fmt = c.params["format"]
    res = compare_conditions(np.asarray(Q[cq]), [StorageCondition(c.name, gallery=fmt, queries=fmt)],
                             gallery=take_rows(G, cg), k=k + (self_pos is not None))[0]
    return {"cert_coverage": res.coverage, "cert_violations": res.violations, "cert_queries": len(cq),
            "cert_gallery": len(cg)}


def _probe_split(n: int, probe_rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The probes' seeded 70/30 split of a seeded sample of at most ``probe_rows`` rows, each part
    in its random order (the stress grid takes the first rows of each)."""
    rows = _sample_rows(n, probe_rows, seed, _PROBE)
    perm = np.random.default_rng([seed, _SPLIT]).permutation(len(rows))
    n_tr = int(round(0.7 * len(rows)))
    return rows[perm[:n_tr]], rows[perm[n_tr:]]


def _labels_section(V, labels, conds, fit, neighbors, g_idx, q_sel, self_search, k, seed, min_support,
                    metric, notes, probe_rows=PROBE_ROWS):
    n = len(V)
    ys = {str(col): labels[col].astype(str).to_numpy() for col in labels.columns}
    classes = frozen_classes(ys, min_support)
    support = []
    for col, y in ys.items():
        values, counts = np.unique(y, return_counts=True)
        support += [{"attribute": col, "class": v, "count": int(c), "eligible": bool(c >= min_support)}
                    for v, c in zip(values, counts)]
        metric("labels", "rare_classes", "reference", int((counts < min_support).sum()), col)
    tr, va = (np.sort(rows) for rows in _probe_split(n, probe_rows, seed))
    ba_classes = {}
    for col, y in ys.items():
        present = np.intersect1d(classes[col], np.unique(y[va]))
        if len(present) < 2:
            notes.append(f"--labels: column {col!r} has fewer than 2 classes with at least {min_support} items "
                         "present in the probe's evaluation split; no probe accuracy")
        else:
            ba_classes[col] = present
    reps = [("reference", None)] + [(c.name, c) for c in conds]
    out = []
    for name, c in reps:
        ba = {}
        if ba_classes and (c is None or c.has_vectors):
            Xtr = take_rows(V, tr) if c is None else c.vectors(take_rows(V, tr), fit, rows=tr)
            Xva = take_rows(V, va) if c is None else c.vectors(take_rows(V, va), fit, rows=va)
            probes = fit_probes(Xtr, {col: ys[col][tr] for col in ba_classes}, random_state=seed)
            ba = {col: balanced_accuracy(ys[col][va], p.predict(Xva), ba_classes[col]) for col, p in probes.items()}
        for col, y in ys.items():
            row = {"representation": name, "attribute": col, "eligible_classes": len(classes[col])}
            if col in ba:
                row.update(probe_ba=ba[col], ba_floor=1.0 / len(ba_classes[col]))
                metric("labels", "probe_ba", name, ba[col], col)
            if self_search:
                p = precision_at_k(neighbors[name], y[g_idx], y[q_sel])
                row.update({f"p@{k}": p, "p_floor": random_floor(y[g_idx])})
                metric("labels", f"p@{k}", name, p, col)
            out.append(row)
    if not self_search:
        notes.append("--labels with --queries: labels describe VECTORS only, so P@k of the queries is not measured")
    return out, support


def _stress_section(V, labels, k, seed, metric, notes, probe_rows=PROBE_ROWS) -> pd.DataFrame:
    n = len(V)
    tr, va = _probe_split(n, probe_rows, seed)
    tr, va = np.sort(tr[: int(0.7 * STRESS_ROWS)]), np.sort(va[: STRESS_ROWS - int(0.7 * STRESS_ROWS)])
    ys = {str(col): labels[col].astype(str).to_numpy() for col in labels.columns}
    cols = [c for c, y in ys.items() if len(eligible_classes(y[va], 10)) >= 2]
    if len(cols) < len(ys):
        notes.append(f"--stress: columns without 2 classes of at least 10 items in the stress evaluation rows "
                     f"left out: {[c for c in ys if c not in cols]}")
    if not cols:
        notes.append("--stress: no label column usable; stress grid skipped")
        return pd.DataFrame()
    Xtr, Xva = take_rows(V, tr).astype(np.float64), take_rows(V, va).astype(np.float64)
    out = []
    for name, s, _, row, _ in measure_grid(Xtr, {c: ys[c][tr] for c in cols}, Xva, {c: ys[c][va] for c in cols},
                                        k=k, seed=seed):
        cond = f"{name}@{s:g}"
        for key, value in row.items():
            m = re.fullmatch(r"(.*) (BA|accuracy|P@\d+)", key)
            if m:
                metric("stress", {"BA": "probe_ba", "accuracy": "probe_accuracy"}.get(m.group(2), m.group(2).lower()),
                       cond, value, m.group(1))
            else:
                metric("stress", key, cond, value)
        out.append({"intervention": name, "severity": s, **row})
    return pd.DataFrame(out)
