"""Scale of ``embdiag report``: wall time and peak memory on a million vectors.

    python benchmarks/bench_report.py                    # 1,000,000 x 768, full and --quick
    python benchmarks/bench_report.py --n 100000         # a smaller check
    python benchmarks/bench_report.py --quick-only

Writes (once, into ``data/cache/bench_report/``, reused while the size matches) n x d float32
vectors drawn around 40 cluster centres, two label columns (the cluster's weather-like class
of 8 and scene-like class of 5, each with 10% of labels reassigned at random) and a second
representation of the same items (the vectors rotated by a random orthogonal matrix plus 5%
noise: another "model"). Then runs the real command, ``embdiag report VECTORS --labels
LABELS --compare SECOND --out DIR`` (and with ``--quick``), as a subprocess, and prints its
wall time and the peak resident memory of its largest process (the chapter's kernel; pages of
the memory-mapped inputs count while mapped, and the library releases them once read). Targets (issue 13): under 10 minutes and 8 GiB
at 1M x 768; ``--quick`` under 1 minute. Printed, not asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from embdiag.artifacts import data_dir

CHUNK = 50_000


def make_inputs(folder: Path, n: int, d: int, seed: int = 0) -> dict[str, Path]:
    """The benchmark's files in ``folder`` (kept and reused when their size matches)."""
    paths = {"vectors": folder / "vectors.npy", "second": folder / "second.npy", "labels": folder / "labels.csv"}
    meta = folder / "meta.json"
    if meta.exists() and json.loads(meta.read_text()) == {"n": n, "d": d, "seed": seed}:
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, d)).astype(np.float32)
    cluster = rng.integers(0, 40, n)
    rotation = np.linalg.qr(rng.standard_normal((d, d)))[0].astype(np.float32)
    X = np.lib.format.open_memmap(paths["vectors"], mode="w+", dtype=np.float32, shape=(n, d))
    Y = np.lib.format.open_memmap(paths["second"], mode="w+", dtype=np.float32, shape=(n, d))
    for a in range(0, n, CHUNK):
        b = min(n, a + CHUNK)
        x = centres[cluster[a:b]] + 1.5 * rng.standard_normal((b - a, d), dtype=np.float32)
        X[a:b] = x
        Y[a:b] = x @ rotation + 0.05 * rng.standard_normal((b - a, d), dtype=np.float32)
    X.flush(), Y.flush()
    del X, Y
    weather, scene = cluster % 8, cluster % 5
    for labels, size in ((weather, 8), (scene, 5)):
        flip = rng.random(n) < 0.1
        labels[flip] = rng.integers(0, size, int(flip.sum()))
    pd.DataFrame({"weather": np.char.add("w", weather.astype(str)),
                  "scene": np.char.add("s", scene.astype(str))}).to_csv(paths["labels"], index=False)
    meta.write_text(json.dumps({"n": n, "d": d, "seed": seed}))
    return paths


def run_report(paths: dict[str, Path], quick: bool) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (GiB) of the command's largest process, and the exit status."""
    out = Path(tempfile.mkdtemp(prefix="bench_report_")) / "report"
    argv = [sys.executable, "-m", "embdiag.paper.cli", "report", str(paths["vectors"]), "--labels",
            str(paths["labels"]), "--compare", str(paths["second"]), "--out", str(out)] + (["--quick"] if quick else [])
    start = time.perf_counter()
    child = subprocess.Popen(argv)
    # this run's own figure: wait4 reports the largest RSS of the child and of the processes it
    # waited for (the chapter's kernel), in KiB on Linux
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    shutil.rmtree(out.parent, ignore_errors=True)
    return seconds, usage.ru_maxrss / 2**20, child.returncode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=768)
    parser.add_argument("--quick-only", action="store_true")
    args = parser.parse_args(argv)
    folder = data_dir() / "cache" / "bench_report"
    start = time.perf_counter()
    paths = make_inputs(folder, args.n, args.d)
    print(f"inputs: {args.n:,} x {args.d} float32 + a second representation + 2 label columns in {folder} "
          f"({time.perf_counter() - start:.0f} s)", flush=True)
    modes = [True] if args.quick_only else [True, False]
    for quick in modes:
        seconds, peak, code = run_report(paths, quick)
        target = "60 s" if quick else "600 s"
        print(f"  embdiag report{' --quick' if quick else '':8s} {seconds:8.1f} s   peak RSS {peak:5.2f} GiB   "
              f"exit {code}   (target: under {target}, 8 GiB)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
