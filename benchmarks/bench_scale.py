"""What one CPU does per second, measured here: the inputs of the book's scale page.

    python benchmarks/bench_scale.py          # measure and save the artifact scale/throughput
    python benchmarks/bench_scale.py --dry    # measure and print only

Everything runs on one thread, as one Ray task asking for one CPU does:

- ``search``: the exact top-10 of 10,000 unit queries over a 50,000 x 768 float32 shard
  memory-mapped from disk, scanned as a ``sharded_topk`` task scans it (``scan_chunks`` over
  topk's chunk plan): query-row pairs per second; and that task's peak resident memory, in a
  fresh process (the interpreter and its libraries included);
- ``geometry``: rows per second of one block of ``metrics.geometry.summary``'s float64 pass
  (Gram, sums and unit-row sums of 768-d float32 rows memory-mapped from disk), as one
  ``block_mapper`` task computes it;
- ``scan``: rows per second of the input check (NaN, inf and zero rows) of a memory-mapped
  768-d ``.npy`` file (``embdiag.data.files.read_vectors``), and bytes per second of its
  SHA-256 (``file_record``: a report names its files by it);
- ``task``: seconds of an empty Ray task's round trip on a local two-CPU instance;
- ``train``: seconds per training step of the ``study`` and ``cpu`` profiles (EMA reference)
  and seconds to embed the labelled images once at the end of a run.

Saved (unless ``--dry``) as the artifact ``scale/throughput`` under the data root, with the
machine (processor, cores, library versions) as its parameters: the scale chapter projects
from it, and says on which machine it was measured.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_training import eval_seconds, time_condition  # noqa: E402

from embdiag import artifacts  # noqa: E402

QUERIES, SHARD, D, K = 10_000, 50_000, 768, 10
NAME = "scale/throughput"


def _write_shard(path: Path, rows: int, seed: int = 0) -> None:
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, D))
    rng = np.random.default_rng(seed)
    for a in range(0, rows, 10_000):
        X[a : a + 10_000] = rng.standard_normal((min(10_000, rows - a), D), dtype=np.float32)
    X.flush()


def _search_task(path: str, out) -> None:
    """In a fresh process: one shard task's search; sends (seconds, peak RSS bytes)."""
    from threadpoolctl import threadpool_limits

    from embdiag.metrics.retrieval import scan_chunks, search_plan, unit_queries

    with threadpool_limits(1):
        G = np.load(path, mmap_mode="r")
        Q = unit_queries(np.random.default_rng(1).standard_normal((QUERIES, D), dtype=np.float32))
        qb, plan = search_plan(QUERIES, len(G), K)
        chunks = [c for share in plan for c in share]
        t0 = time.perf_counter()
        for q0 in range(0, QUERIES, qb):
            scan_chunks(Q[q0 : q0 + qb], G, K, chunks, q0=q0)
        seconds = time.perf_counter() - t0
    out.send((seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024))


def measure_search(folder: Path) -> list[dict]:
    path = folder / "shard.npy"
    _write_shard(path, SHARD)
    recv, send = multiprocessing.get_context("spawn").Pipe(duplex=False)
    proc = multiprocessing.get_context("spawn").Process(target=_search_task, args=(str(path), send))
    proc.start()
    seconds, peak = recv.recv()
    proc.join()
    return [
        {
            "measure": "search_pairs_per_second",
            "value": QUERIES * SHARD / seconds,
            "unit": "query-row pairs/s",
            "how": f"top-{K} of {QUERIES:,} queries over {SHARD:,} x {D} float32 rows, one thread",
        },
        {
            "measure": "search_task_peak_bytes",
            "value": float(peak),
            "unit": "bytes",
            "how": f"peak resident memory of that task's process ({SHARD:,}-row shard memory-mapped)",
        },
    ]


def measure_scan(folder: Path) -> list[dict]:
    from threadpoolctl import threadpool_limits

    from embdiag.data.files import file_record, read_vectors

    path = folder / "scan.npy"
    _write_shard(path, 4 * SHARD, seed=2)
    with threadpool_limits(1):
        read_vectors(path)  # warm the page cache: a node reads its shard once
        t0 = time.perf_counter()
        read_vectors(path)
        seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    file_record(path)
    hashing = time.perf_counter() - t0
    return [
        {
            "measure": "scan_rows_per_second",
            "value": 4 * SHARD / seconds,
            "unit": "rows/s",
            "how": f"NaN/inf/zero check of {4 * SHARD:,} x {D} float32 rows from the page cache, one thread",
        },
        {
            "measure": "hash_bytes_per_second",
            "value": path.stat().st_size / hashing,
            "unit": "bytes/s",
            "how": "SHA-256 of that file from the page cache (the checksum a report names its inputs by)",
        },
    ]


def measure_geometry(folder: Path) -> list[dict]:
    from embdiag.metrics import geometry

    path = folder / "scan.npy"  # written by measure_scan
    G = np.load(path, mmap_mode="r")
    c = np.asarray(G[:1000], np.float64).mean(axis=0)
    geometry._block_moments(G, 0, SHARD, c, 0, True, workers=1)  # warm up
    t0 = time.perf_counter()
    geometry._block_moments(G, 0, len(G), c, 0, True, workers=1)
    seconds = time.perf_counter() - t0
    return [
        {
            "measure": "geometry_rows_per_second",
            "value": len(G) / seconds,
            "unit": "rows/s",
            "how": f"float64 Gram, sums and unit-row sums of {len(G):,} x {D} float32 rows from the page cache "
            "(one geometry block), one thread",
        }
    ]


def _nothing():
    return None


def measure_task_overhead() -> list[dict]:
    import ray

    from embdiag.cluster import connect

    with connect("local:2"):
        nothing = ray.remote(_nothing)
        ray.get(nothing.remote())
        t0 = time.perf_counter()
        ray.get([nothing.remote() for _ in range(200)])
        seconds = (time.perf_counter() - t0) / 200
    return [
        {
            "measure": "task_seconds",
            "value": seconds,
            "unit": "s",
            "how": "an empty Ray task, 200 in flight on a local 2-CPU instance, per task",
        }
    ]


def measure_training() -> list[dict]:
    import torch

    from embdiag.training.conditions import condition
    from embdiag.training.config import profile

    torch.set_num_threads(1)
    rows = []
    for name, steps in (("study", 3), ("cpu", 10)):
        cfg = profile(name)
        r = time_condition(cfg, condition("EMA reference"), steps, warmup=2)
        rows.append(
            {
                "measure": f"{name}_seconds_per_step",
                "value": r["seconds_per_step"],
                "unit": "s",
                "how": f"{name} profile, EMA reference, batch {cfg.batch_size}, one thread",
            }
        )
        rows.append(
            {
                "measure": f"{name}_eval_seconds",
                "value": eval_seconds(cfg),
                "unit": "s",
                "how": f"{name} profile: embedding the 2,983 labelled images once, one thread",
            }
        )
    return rows


def machine() -> dict:
    import threadpoolctl

    blas = [f"{i['internal_api']} {i['version']}" for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    processor = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            processor = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {
        "processor": processor,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": sorted(set(blas)),
        "queries": QUERIES,
        "shard_rows": SHARD,
        "d": D,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry", action="store_true", help="print, do not save")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(dir=artifacts.data_dir() / "cache") as tmp:
        for step in (
            lambda: measure_search(Path(tmp)),
            lambda: measure_scan(Path(tmp)),
            lambda: measure_geometry(Path(tmp)),
            measure_task_overhead,
            measure_training,
        ):
            new = step()
            rows += new
            for r in new:
                print(f"  {r['measure']:28s} {r['value']:14.4g} {r['unit']}", flush=True)
    table = pd.DataFrame(rows, columns=["measure", "value", "unit", "how"])
    if not args.dry:
        folder = artifacts.save(NAME, {"throughput": table}, machine(), command="python benchmarks/bench_scale.py")
        print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
