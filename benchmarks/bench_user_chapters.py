"""Benchmark: the study's chapters run on a user's real vectors with ``embdiag chapter ... --out``.

    python benchmarks/bench_user_chapters.py                 # 20,000 rows; 05, 06 and 07 (about 4 minutes)
    python benchmarks/bench_user_chapters.py --every-row     # -p max_rows null: no row sample (about 9 minutes)
    python benchmarks/bench_user_chapters.py --rows 50000 --chapters 06_compression

The vectors: WordLlama l2_supercat embeddings of ``--rows`` WordNet 3.0 definitions (the installed
database, /usr/share/wordnet), drawn with seed 45, 256 float32 dimensions, labelled by part of speech
and lexicographer file (``lexname``, the chapters' attribute), 3 in 4 rows (seeded) for training;
written once to ``data/cache/bench_user_chapters/`` and reused while the row count matches.

Each chapter runs as a subprocess, as a user runs it (the disk memo off), with its wall time, its CPU time (user +
system) and the 1-minute load average before and after (the machine may be shared). The stress and
compression chapters measure at most ``max_rows`` (5,000) rows of each split unless ``--every-row``.

Measured on the shared 2-core machine (load 3-5) on 20,000 rows (14,905 training, 5,095
evaluation), issue #45: stress tests 406.9 s before (every row, no progress), 117.1 s with the
sample; compression 189.4 s before, 100.3 s measuring every row (each representation's probes
fitted once), 67.3 s with the sample; neighbour stability 25.0 s at load 4 (no sample: its protocol queries
every evaluation row against all the others; 19.6 s at load 3). Printed, not asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHAPTERS = ("05_stress_tests", "06_compression", "07_neighbour_stability")
#: Parameters beyond the files, per chapter (07 has no attribute parameter).
EXTRA = {"05_stress_tests": ["-p", "attribute", "lexname"], "06_compression": ["-p", "attribute", "lexname"]}
SAMPLED = ("05_stress_tests", "06_compression")


def vectors(rows: int) -> tuple[Path, Path]:
    """The benchmark's vectors and labels (module docstring), made when missing."""
    import numpy as np
    import pandas as pd

    from embdiag.artifacts import data_dir

    folder = data_dir() / "cache" / "bench_user_chapters"
    npy, csv = folder / f"wordnet{rows}.npy", folder / f"wordnet{rows}.csv"
    if npy.exists() and csv.exists():
        return npy, csv
    from embdiag.data.wordnet import read_wordnet
    from embdiag.encoders.wordllama import load_wordllama

    synsets = read_wordnet()
    rng = np.random.default_rng(45)
    chosen = [synsets[i] for i in np.sort(rng.choice(len(synsets), rows, replace=False))]
    Z = load_wordllama().encode_texts([s.definition for s in chosen]).astype(np.float32)
    split = np.where(rng.random(rows) < 0.75, "train", "val")
    folder.mkdir(parents=True, exist_ok=True)
    np.save(npy, Z)
    labels = {"split": split, "pos": [s.pos for s in chosen], "lexname": [s.lexname for s in chosen]}
    pd.DataFrame(labels).to_csv(csv, index=False)
    return npy, csv


def run(chapter: str, npy: Path, csv: Path, out: Path, every_row: bool) -> dict:
    """One chapter as a subprocess: wall and CPU seconds, load before and after."""
    command = [str(Path(sys.executable).with_name("embdiag")), "chapter", chapter, "-p", "vectors_path", str(npy)]
    command += ["-p", "labels_path", str(csv), *EXTRA.get(chapter, [])]
    if every_row and chapter in SAMPLED:
        command += ["-p", "max_rows", "null"]
    load, cpu, start = os.getloadavg()[0], _children_cpu(), time.perf_counter()
    env = {**os.environ, "EMBDIAG_MEMO": "off"}  # measured afresh, never read from the disk memo
    done = subprocess.run([*command, "--out", str(out / chapter)], capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"{chapter} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return {
        "chapter": chapter,
        "rows": "every row" if every_row or chapter not in SAMPLED else "max_rows 5000",
        "wall s": round(time.perf_counter() - start, 1),
        "cpu s": round(_children_cpu() - cpu, 1),
        "load before": round(load, 2),
        "load after": round(os.getloadavg()[0], 2),
        "progress lines": sum(
            line.startswith(("stress tests: ", "compression: ")) for line in done.stderr.splitlines()
        ),
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv=None) -> None:
    import pandas as pd

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000, help="WordNet definitions embedded (default 20000)")
    parser.add_argument("--chapters", nargs="+", default=list(CHAPTERS), choices=CHAPTERS)
    parser.add_argument("--every-row", action="store_true", help="-p max_rows null: measure every row")
    args = parser.parse_args(argv)
    npy, csv = vectors(args.rows)
    with tempfile.TemporaryDirectory(prefix="bench-user-chapters-") as tmp:
        table = pd.DataFrame([run(c, npy, csv, Path(tmp), args.every_row) for c in args.chapters])
    print(f"{args.rows:,} x 256 WordLlama vectors of WordNet definitions ({npy})")
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
