"""What the pinned float path costs: the book's heaviest computations, pinned against native.

    python benchmarks/bench_floatpath.py             # 3 repeats of each workload on each path
    python benchmarks/bench_floatpath.py --chapter   # also one chapter executed on each path

Each workload runs in a fresh interpreter (the libraries read the variables when they load),
alternately on the pinned path (:data:`embdiag.floatpath.PINNED`: AVX2 kernels, two threads)
and on the native one (``EMBDIAG_FLOAT_PATH=native`` with the pinned variables removed: each
library's own kernels and thread count), on the reference encoder's committed vectors:
exact float64 top-10 of the 983 evaluation vectors, the linear probe with C selection on the
2,000 training vectors, the four geometry metrics, and the reference CNN embedding 512 scenes.
Prints the best of ``--repeat`` runs per workload and path, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from embdiag import floatpath

WORKLOAD = r"""
import json, sys, time
import numpy as np
from embdiag.encoders.vectors import driving_vectors
from embdiag.metrics import LinearProbe, summary, topk
v = driving_vectors()
X, y = v.train, v.train_labels["weather"]
what = sys.argv[1]
t = time.perf_counter()
if what == "top-10 (983 x 983, float64)":
    for _ in range(5):
        topk(v.val, v.val, 10, exclude_self=True, dtype=np.float64)
elif what == "probe with C selection (2,000 x 768)":
    LinearProbe().fit(X, y)
elif what == "geometry summary (2,000 x 768)":
    for _ in range(5):
        summary(X)
elif what == "encoder: 512 scenes (reference-cnn)":
    from embdiag.data import load_dataset
    from embdiag.encoders import load_encoder
    images = np.asarray(load_dataset("procedural", splits=("train", "val"), seed=0).subset("train").images)[:512]
    t = time.perf_counter()
    load_encoder("reference-cnn").encode_images(images)
print(json.dumps(time.perf_counter() - t))
"""
WORKLOADS = (
    "top-10 (983 x 983, float64)",
    "probe with C selection (2,000 x 768)",
    "geometry summary (2,000 x 768)",
    "encoder: 512 scenes (reference-cnn)",
)


def _env(path: str) -> dict:
    base = {k: v for k, v in os.environ.items() if k not in floatpath.PINNED}
    if path == "native":
        return {**base, floatpath.SWITCH: "native"}
    return floatpath.environment({**base, floatpath.SWITCH: "pinned"})


def _time(args: list[str], env: dict) -> float:
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def _chapter_seconds(env: dict) -> float:
    code = (
        "import sys, time, tempfile, pathlib; from embdiag.paper import pipeline; t = time.perf_counter(); "
        "d = tempfile.mkdtemp(); "
        "pipeline.execute('07_neighbour_stability', layout=pipeline.Layout(book=pathlib.Path(d))); "
        "print(time.perf_counter() - t)"
    )
    return _time([sys.executable, "-c", code], env)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chapter", action="store_true", help="also execute 07_neighbour_stability on each path")
    args = parser.parse_args(argv)
    if not floatpath.supported():
        print("this machine has no pinned level (not x86-64 with AVX2): nothing to compare")
        return 0
    print(f"pinned: {floatpath.current(_env('pinned'))}; native: every library's own choice on this CPU")
    print(f"{'workload':<40} {'pinned (s)':>11} {'native (s)':>11} {'pinned/native':>14}")
    results = {}
    for name in WORKLOADS:
        best = {"pinned": float("inf"), "native": float("inf")}
        for _ in range(args.repeat):
            for path in best:  # interleaved, so that load from other processes hits both alike
                best[path] = min(best[path], _time([sys.executable, "-c", WORKLOAD, name], _env(path)))
        results[name] = best
        print(f"{name:<40} {best['pinned']:>11.3f} {best['native']:>11.3f} {best['pinned'] / best['native']:>14.2f}")
    if args.chapter:
        t = {path: _chapter_seconds(_env(path)) for path in ("pinned", "native")}
        results["chapter 07_neighbour_stability"] = t
        print(
            f"{'chapter 07_neighbour_stability':<40} {t['pinned']:>11.1f} {t['native']:>11.1f} "
            f"{t['pinned'] / t['native']:>14.2f}"
        )
    print(json.dumps({k: {p: round(v, 4) for p, v in d.items()} for k, d in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
