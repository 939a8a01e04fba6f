"""Scale of ``embdiag report``: wall time and peak memory, and what the memory is.

    python benchmarks/bench_report.py                    # 200,000 x 768, full and --quick
    python benchmarks/bench_report.py --n 1000000        # a million rows (about 6 GB of inputs)
    python benchmarks/bench_report.py --quick-only --folder /tmp/bench

Writes (once, into ``data/cache/bench_report/<n>x<d>/`` or ``--folder``, reused while the size
matches) n x d float32
vectors drawn around 40 cluster centres, two label columns (the cluster's weather-like class
of 8 and scene-like class of 5, each with 10% of labels reassigned at random) and a second
representation of the same items (the vectors rotated by a random orthogonal matrix plus 5%
noise: another "model"). Then runs the real command, ``embdiag report VECTORS --labels
LABELS --compare SECOND --out DIR`` (and with ``--quick``), as a subprocess, and prints its
wall time and its memory:

- ``peak RSS``: the largest resident set of the command or any process it waited for (the
  ``embdiag`` command re-executes itself on the pinned float path), from ``wait4``: every
  resident page, including the pages of the
  memory-mapped input files while they are mapped (file-backed: the operating system can drop
  them without writing anything; the library releases them once read). The inputs are written
  by a process of their own: Linux carries the peak of the process that starts the command
  into the command's figure (``subprocess`` starts it by ``vfork``, and ``exec`` keeps the
  larger peak), so writing 6 GB of inputs here once made every run read 6.33 GiB;
- ``anon`` and ``file``: the largest ``RssAnon`` (memory of the process's own: arrays, copies)
  and ``RssFile`` (mapped file pages) of any one process of the command, sampled every
  :data:`SAMPLE_S` seconds from ``/proc/PID/status`` (a peak shorter than that can be missed).

Targets (issue 13): under 10 minutes and 8 GiB at 1M x 768; ``--quick`` under 1 minute. Printed,
not asserted.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

from embdiag.artifacts import data_dir

CHUNK = 50_000
#: Seconds between two samples of the command's processes' RssAnon and RssFile.
SAMPLE_S = 0.05


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (from each task's ``children`` list)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    return out


def _rss_kib(pid: int) -> tuple[int, int]:
    """``(RssAnon, RssFile)`` of ``pid`` in KiB (zeros once it has gone)."""
    try:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    except OSError:
        return 0, 0
    return tuple(int(fields.get(key, "0 kB").split()[0]) for key in ("RssAnon", "RssFile"))


class PeakSampler(threading.Thread):
    """The largest RssAnon and RssFile (KiB) of any one process of ``pid``'s tree, until stopped."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.anon, self.file, self.done = pid, 0, 0, threading.Event()

    def run(self):
        while not self.done.wait(SAMPLE_S):
            for p in _descendants(self.pid):
                anon, file = _rss_kib(p)
                self.anon, self.file = max(self.anon, anon), max(self.file, file)


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
    pd.DataFrame(
        {"weather": np.char.add("w", weather.astype(str)), "scene": np.char.add("s", scene.astype(str))}
    ).to_csv(paths["labels"], index=False)
    meta.write_text(json.dumps({"n": n, "d": d, "seed": seed}))
    return paths


def run_report(paths: dict[str, Path], quick: bool) -> tuple[float, dict[str, float], int]:
    """Wall seconds, memory in GiB (``rss``: the peak RSS of the command's largest process;
    ``anon`` / ``file``: the sampled peak RssAnon / RssFile of any one process), and the exit status."""
    out = Path(tempfile.mkdtemp(prefix="bench_report_")) / "report"
    argv = [
        sys.executable,
        "-m",
        "embdiag.paper.cli",
        "report",
        str(paths["vectors"]),
        "--labels",
        str(paths["labels"]),
        "--compare",
        str(paths["second"]),
        "--out",
        str(out),
    ] + (["--quick"] if quick else [])
    start = time.perf_counter()
    child = subprocess.Popen(argv)
    sampler = PeakSampler(child.pid)
    sampler.start()
    # this run's own figure: wait4 reports the largest RSS of the child and of the processes it
    # waited for, in KiB on Linux
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    child.returncode = os.waitstatus_to_exitcode(status)
    shutil.rmtree(out.parent, ignore_errors=True)
    memory = {"rss": usage.ru_maxrss / 2**20, "anon": sampler.anon / 2**20, "file": sampler.file / 2**20}
    return seconds, memory, child.returncode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--d", type=int, default=768)
    parser.add_argument("--quick-only", action="store_true")
    parser.add_argument(
        "--folder", type=Path, help="where the inputs are written (default: data/cache/bench_report/NxD)"
    )
    args = parser.parse_args(argv)
    folder = args.folder or data_dir() / "cache" / "bench_report" / f"{args.n}x{args.d}"
    start = time.perf_counter()
    writer = multiprocessing.get_context("spawn").Process(target=make_inputs, args=(folder, args.n, args.d))
    writer.start()  # in a process of its own: its peak memory never reaches this one's, nor the command's
    writer.join()
    paths = make_inputs(folder, args.n, args.d)  # written: only the paths
    print(
        f"inputs: {args.n:,} x {args.d} float32 + a second representation + 2 label columns in {folder} "
        f"({time.perf_counter() - start:.0f} s)",
        flush=True,
    )
    modes = [True] if args.quick_only else [True, False]
    for quick in modes:
        seconds, mem, code = run_report(paths, quick)
        target = "60 s" if quick else "600 s"
        print(
            f"  embdiag report{' --quick' if quick else '':8s} {seconds:8.1f} s   peak RSS {mem['rss']:5.2f} GiB "
            f"(largest process; sampled peaks: anon {mem['anon']:5.2f} GiB, file-backed {mem['file']:5.2f} GiB)   "
            f"exit {code}   (target at 1M x 768: under {target}, 8 GiB)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
