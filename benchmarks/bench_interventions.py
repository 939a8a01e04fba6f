"""Benchmark: stress-test grid with the full metric suite, storage conditions with
certificates, and certificate coverage on random unit vectors.

    python benchmarks/bench_interventions.py

Synthetic clustered unit vectors at the study's scale (2,000 training + 983 evaluation
rows, d = 768, three label columns) stand in for the cached encoder outputs. Targets on
the 2-core CPU: the 24-row grid under 10 s, all storage conditions under 2 s.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from embdiag.interventions import SEVERITIES, STUDY_CONDITIONS, CommonOffset, compare_conditions, stress_grid
from embdiag.metrics import random_floor
from embdiag.synthetic import labelled_clusters

N_TRAIN, N_EVAL, D, K = 2000, 983, 768, 10


def print_grid(rows):
    cols = ["total_variance", "mean_cosine", "rankme", "participation_ratio"]
    extra = [c for c in rows[0] if c.endswith(("BA", f"P@{K}"))]
    print(
        f"{'intervention':17s} {'s':>5s} {'variance':>10s} {'mean cos':>9s} {'RankMe':>8s} {'PR':>7s} "
        + " ".join(f"{c:>12s}" for c in extra)
    )
    for r in rows:
        print(
            f"{r['intervention']:17s} {r['severity']:5.2f} {r[cols[0]]:10.4g} {r[cols[1]]:9.6f} "
            f"{r[cols[2]]:8.2f} {r[cols[3]]:7.2f} " + " ".join(f"{100 * r[c]:12.2f}" for c in extra)
        )


def print_storage(results, labels, prefix=""):
    print(
        f"{'condition':34s} {'max err':>9s} {'changed':>8s} {'overlap':>8s} "
        f"{'certified':>9s} {'viol.':>5s} " + " ".join(f"{'d' + a + ' pp':>10s}" for a in labels)
    )
    for r in results:
        s = r.summary()
        print(
            f"{prefix + s['condition']:34s} {s['max_score_error']:9.3g} {s['changed_queries']:8d} "
            f"{s['overlap@10']:8.5f} {s['certified']:9d} {s['violations']:5d} "
            + " ".join(f"{r.precision_change(y):10.3f}" for y in labels.values())
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-probes", action="store_true", help="skip the 72 probe fits of the grid (time everything else)"
    )
    args = parser.parse_args()
    train, ytr = labelled_clusters(N_TRAIN, d=D, seed=1)
    val, yva = labelled_clusters(N_EVAL, d=D, seed=2)
    print(f"data: {N_TRAIN} training + {N_EVAL} evaluation unit vectors, d = {D}; severities {SEVERITIES}")
    print("random-neighbour floors (P@10 %): " + ", ".join(f"{a} {100 * random_floor(y):.2f}" for a, y in yva.items()))

    t0 = time.perf_counter()
    rows = stress_grid(train, ytr, val, yva, k=K, probes=not args.no_probes).to_dict("records")
    wall = time.perf_counter() - t0
    print(f"\n== stress-test grid: 4 interventions x {len(SEVERITIES)} severities, full metric suite ==")
    print_grid(rows)
    print(f"grid wall time {wall:.2f} s (target < 10 s)")

    print(f"\n== storage and scoring conditions, {N_EVAL} queries x {N_EVAL} vectors, top-{K} ==")
    t0 = time.perf_counter()
    native = compare_conditions(val, STUDY_CONDITIONS, k=K)
    moved = CommonOffset(0.99).fit(train).transform(val)
    offset = compare_conditions(moved, STUDY_CONDITIONS[:2], k=K)
    wall = time.perf_counter() - t0
    print_storage(native, yva)
    print_storage(offset, yva, prefix="offset .99: ")
    print(f"storage wall time {wall:.2f} s for {len(native) + len(offset)} conditions (target < 2 s)")
    fp16 = native[1]
    if fp16.n_changed:
        print(
            f"FP16 gallery changed-query margins: {np.array2string(fp16.changed_margins, precision=2)}; "
            f"median margin of all queries {np.median(fp16.margins):.2e}"
        )

    print(f"\n== certificate coverage, random {N_EVAL} x {D} unit vectors ==")
    rng = np.random.default_rng(0)
    U = rng.standard_normal((N_EVAL, D))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    t0 = time.perf_counter()
    for r in compare_conditions(U, STUDY_CONDITIONS, k=K):
        print(
            f"{r.condition.name:24s} coverage {100 * r.coverage:6.2f} % "
            f"({int(r.certified.sum())}/{r.changed.size}), changed {r.n_changed}, "
            f"violations {r.violations}, max score error {r.max_score_error:.2e}, "
            f"median bound {np.median(r.bound):.2e}, median margin {np.median(r.margins):.2e}"
        )
    print(f"({time.perf_counter() - t0:.2f} s)")


if __name__ == "__main__":
    main()
