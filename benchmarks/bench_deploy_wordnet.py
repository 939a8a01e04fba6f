"""Benchmark: what people deploy, on real vectors: each storage convention's damage beside the
stack it reproduces, and the cost of the report's hygiene, hubness and index-setting sections
beside vecscope's audit and sweep of the same file.

    python benchmarks/bench_deploy_wordnet.py             # every step (about 10 minutes)
    python benchmarks/bench_deploy_wordnet.py --small     # the 3,000-row set only (about 1 minute)

The vectors: WordLlama ``l2_supercat`` (256-d) of WordNet 3.0 glosses, the project's committed
cache: the "3k set" is the train (2,000) then val (1,000) glosses (vecscope's k-occurrence skewness
on it is 1.8079, as issue #46 records), and all 117,659 definitions
(``benchmarks/bench_report_wordnet.py`` writes them once to ``data/cache/bench_report_wordnet``).

Steps, each with its wall time and the 1-minute load average before and after (the machine may be
shared):

1. conventions (3k set, k = 10, queries are the rows, their own row left out): for each storage
   condition, the share of queries whose top 10 changes (Wilson 95% interval), overlap@10 over all
   queries and over the anti-hub queries (bootstrap 95% interval), from
   :func:`embdiag.report.measure`; then ``st-int8`` beside sentence-transformers'
   ``semantic_search_usearch`` (``exact=True``) on the same codes: how many queries get the same
   ranked top 10, and whether every other one differs only inside a run of tied integer scores;
2. the sections (3k set, then 117k): a report with no condition (hygiene, geometry, hubness) and
   the index section with its sweep (``--index hnsw,ivfpq``), each timed, beside ``vecscope.audit``
   and ``vecscope.sweep`` of the same rows.

Printed, not asserted.

Measured on the shared 2-core machine (1-minute load 1-4): on the 3k set, ``st-int8`` changes the
top 10 of 87.6% [86.4, 88.7] of queries, ``mteb-int8`` 79.2% [77.7, 80.6], ``int8cal`` 6.7% [5.9, 7.7]
and ``int8floor`` 8.9% [7.9, 10.0]; sign bits keep 50.4% of the top 10 over all queries and 26.5%
[20.4, 33.0] on the 23 anti-hub queries. ``st-int8`` ranks 2,997 of 3,000 queries exactly as
sentence-transformers does, the other 3 differing only among tied integer scores. The report
without conditions took 0.3 s on the 3k set (vecscope's audit 3.5 s) and 117 s on the 117k set, 104 s
of it the exact kNN graph of every row (vecscope's audit of a 100,000-row sample: 260 s; skewness
3.9050 on every row, 3.9372 on its sample). With ``--index hnsw,ivfpq`` the report took 28 s on
the 3k set and 486 s on the 117k set (vecscope's sweep: 6 s and 149 s, three HNSW builds, no
interval); at k = 10 both name HNSW: the report M=8, efConstruction=200, efSearch=32 (recall 0.966
[0.952, 0.975], fewest operations), vecscope M=32, efSearch=16 (0.978, fastest this run).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from embdiag.artifacts import data_dir

#: The storage conditions compared on the 3k set (``--compress``), by the stack each follows.
CONVENTIONS = "int8cal,int8floor,st-int8,st-int8-rescore2,st-uint8,mteb-int8,mteb-int4,mteb-fp8,mteb-binary,binary,fp16"
K = 10
GLOSSES = "embeddings/wordllama-l2_supercat/wordnet-721d2f37d9ccac73-{}-glosses/vectors.npy"


def small_set() -> np.ndarray:
    """The 3k set: train then val glosses (3,000 x 256 float32)."""
    root = data_dir()
    return np.concatenate([np.load(root / GLOSSES.format(part)) for part in ("train", "val")])


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _timed(what: str, fn):
    before, start = _load(), time.perf_counter()
    value = fn()
    print(f"  {what}: {time.perf_counter() - start:.1f} s (load {before} -> {_load()})")
    return value


def conventions(X: np.ndarray) -> None:
    """Step 1: each convention's changed share and overlap, and st-int8 beside sentence-transformers."""
    from embdiag.metrics.stats import proportion_interval
    from embdiag.report import measure

    print(f"1. conventions on the 3k set ({len(X):,} x {X.shape[1]}, k = {K})")
    report = _timed("embdiag report, every convention", lambda: measure(X, compress=CONVENTIONS, k=K, progress=False))
    table = report.tables["identity"].set_index("condition")
    conventions = report.tables["conditions"].set_index("name")["convention"]
    tail = report.tables["hubness_tail"].set_index("condition")
    tail = tail[tail["measure"] == f"overlap@{K}"]
    print(
        f"  {'condition':<18} {'changed queries (95% Wilson)':<34} {'overlap@10':>10}  "
        f"{'on anti-hubs, %':<22} convention"
    )
    for name, row in table.iterrows():
        n = int(row["n_queries"])
        changed = round(row["changed_queries"] * n)
        iv = proportion_interval(changed, n)
        share = f"{changed:,}/{n:,} = {100 * changed / n:.1f}% [{100 * iv.low:.1f}, {100 * iv.high:.1f}]"
        t = tail.loc[name]
        anti = f"{t['antihub']:.1f} [{t['antihub_low']:.1f}, {t['antihub_high']:.1f}] of {int(t['antihub_queries'])}"
        print(f"  {name:<18} {share:<34} {row[f'overlap@{K}']:>10.3f}  {anti:<22} {conventions[name]}")
    agreement(X)


def agreement(X: np.ndarray) -> None:
    """st-int8's ranking beside sentence-transformers' own on the same codes, every row a query."""
    from sentence_transformers import quantization

    from embdiag.interventions.codes import calibration_ranges
    from embdiag.interventions.conventions import st_quantize, st_topk

    R = calibration_ranges(X)
    ours_s, ours = _timed("embdiag st_topk (raw int8 codes)", lambda: st_topk(X, X, K, R))
    codes = st_quantize(X, R)
    results, _ = _timed(
        "sentence-transformers semantic_search_usearch (exact)",
        lambda: quantization.semantic_search_usearch(
            codes, corpus_embeddings=codes, corpus_precision="int8", top_k=K, rescore=False, exact=True
        ),
    )
    theirs = np.array([[r["corpus_id"] for r in row] for row in results])
    same = (ours == theirs).all(axis=1)
    dots = np.einsum("ij,ikj->ik", codes.astype(np.int64), codes[theirs].astype(np.int64))
    tied_only = all(
        sorted(ours_s[q].tolist()) == sorted(dots[q].tolist()) for q in np.flatnonzero(~same)
    )  # the same scores: the rankings differ only in the order of tied codes
    print(
        f"  same ranked top {K}: {int(same.sum()):,} of {len(X):,} queries; the other {int((~same).sum()):,} "
        f"{'differ only among tied integer scores' if tied_only else 'DIFFER IN SCORES'}"
    )


def large_set() -> np.ndarray:
    """All 117,659 definitions (memory-mapped), made by bench_report_wordnet once."""
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_report_wordnet import vectors

    return np.load(vectors(data_dir() / "cache" / "bench_report_wordnet"), mmap_mode="r")


def sections(X: np.ndarray, what: str) -> None:
    """Step 2: the report without conditions (hygiene, geometry, hubness) and with the index sweep,
    beside vecscope's audit and sweep of the same rows."""
    import vecscope
    from vecscope.sweep import sweep

    from embdiag.report import measure

    print(f"2. sections on {what} ({len(X):,} x {X.shape[1]}, k = {K})")
    report = _timed("embdiag report, no condition", lambda: measure(X, k=K, progress=False))
    t = report.timings
    graph = t.get("hubness_graph_s", 0.0)  # none when every gallery row was searched as a query
    print(f"    of which hygiene {t['hygiene_s']:.1f} s, hubness's kNN graph {graph:.1f} s")
    metrics = report.metrics.set_index("metric")
    for name in ("exact_duplicates", "near_duplicate_share", "k_skewness", "hub_share", "antihub_share"):
        row = metrics.loc[name]
        interval = f" [{row['low']:.4f}, {row['high']:.4f}]" if np.isfinite(row["low"]) else ""
        print(f"    {name} = {row['value']:.4f}{interval}")
    audit = _timed("vecscope audit (its default: a sample of at most 100,000 rows)", lambda: vecscope.audit(X, k=K))
    found = {f.name: f.value for f in audit.findings}
    print(f"    vecscope hubness skewness = {found.get('hubness', float('nan')):.4f}")
    indexed = _timed("embdiag report --index hnsw,ivfpq", lambda: measure(X, index="hnsw,ivfpq", k=K, progress=False))
    if "index_setting" in indexed.tables:
        print(indexed.tables["index_setting"].to_string(index=False))
    swept = _timed("vecscope sweep (HNSW M 8-32 x efSearch, IVF nprobe)", lambda: sweep(np.asarray(X), k=K))
    print(f"    vecscope recommends {swept.recommendation}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="the 3,000-row set only")
    args = parser.parse_args(argv)
    X = small_set()
    conventions(X)
    sections(X, "the 3k set")
    if not args.small:
        sections(large_set(), "all WordNet definitions")


if __name__ == "__main__":
    main()
