"""Benchmark: procedural driving-scene generation time, class shares per split, probe sanity.

    python benchmarks/bench_data.py                 # timings (3,000 and 20,000 images) + shares
    python benchmarks/bench_data.py --probe         # also the linear-probe sanity check

Timings generate without the disk cache (rendering, captions and instance tables; not
saving), on two threads. Target on the 2-core CPU: 3,000 images at 64 x 64 px in under
10 s wall time. The CPU-time column is less sensitive to other processes on the machine. The probe
check fits the project's standardized :class:`~embdiag.metrics.probe.LinearProbe` on simple pooled
pixel features (:func:`~embdiag.encoders.quality.pooled_pixels`: 8 x 8 average-pooled RGB plus
per-channel mean and standard deviation) of the default 2,000 training images and scores the 983
validation images: the default difficulty should land well above the majority floor and clearly below 100%.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from embdiag.data import ATTRIBUTES, VOCAB, generate_split, load_procedural
from embdiag.encoders.quality import pooled_pixels


def timing(sizes, image_size: int, repeats: int) -> pd.DataFrame:
    rows = []
    for n in sizes:
        for r in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            generate_split("pool", n, image_size=image_size)
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            rows.append(
                {
                    "images": n,
                    "px": image_size,
                    "repeat": r,
                    "wall s": round(dt, 2),
                    "cpu s (all threads)": round(cpu, 2),
                    "wall ms per image": round(1000 * dt / n, 3),
                }
            )
    return pd.DataFrame(rows)


def shares(ds) -> pd.DataFrame:
    cc = ds.class_counts()
    wide = cc.set_index(["attribute", "value", "split"])["share"].unstack("split")[list(ds.splits)]
    rows = [(a, v) for a in ATTRIBUTES for v in VOCAB[a]]
    return (100 * wide.reindex(pd.MultiIndex.from_tuples(rows, names=["attribute", "value"]))).round(2)


def probe_check(ds) -> pd.DataFrame:
    from embdiag.metrics.labels import balanced_accuracy, eligible_classes
    from embdiag.metrics.probe import LinearProbe, majority_floor

    tr, va = ds.subset("train"), ds.subset("val")
    Xtr, Xva = pooled_pixels(tr.images), pooled_pixels(va.images)
    rows = []
    for a in ATTRIBUTES:
        ytr, yva = tr.labels(a), va.labels(a)
        probe = LinearProbe(Cs=10.0 ** np.arange(-3, 2)).fit(Xtr, ytr)
        pred = probe.predict(Xva)
        rows.append(
            {
                "attribute": a,
                "accuracy %": 100 * np.mean(pred == yva),
                "balanced accuracy %": 100 * balanced_accuracy(yva, pred, eligible_classes(yva, 10)),
                "majority floor %": 100 * majority_floor(yva),
                "C": probe.C_,
            }
        )
    return pd.DataFrame(rows).round(2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[3000, 20000])
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--difficulty", type=float, default=0.5)
    ap.add_argument("--probe", action="store_true", help="run the linear-probe sanity check")
    args = ap.parse_args()
    pd.set_option("display.width", 160)

    print("Generation time (no cache):")
    print(timing(args.sizes, args.image_size, args.repeats).to_string(index=False))

    ds = load_procedural(image_size=args.image_size, difficulty=args.difficulty)  # default sizes, cached
    print(f"\nClass shares per split, % ({ds.source}):")
    print(shares(ds).to_string())
    if args.probe:
        print("\nLinear probe on pooled pixel features (train 2,000 -> val 983):")
        print(probe_check(ds).to_string(index=False))


if __name__ == "__main__":
    main()
