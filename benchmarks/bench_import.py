"""What importing embdiag costs: seconds to ``import`` each part, beside peers' imports.

    python benchmarks/bench_import.py              # median of 7 fresh interpreters per module
    python benchmarks/bench_import.py --repeat 15

Each import runs in a fresh interpreter (nothing cached in the process; the files are in the
page cache after the first round), the modules taking turns so that load from other processes
hits them alike. Prints per module the median seconds of the ``import`` statement itself and of
the whole process (interpreter start to exit), and which heavy libraries the import loaded.
Peers: ``numpy`` (the floor: every part imports it), ``sklearn.metrics``, ``faiss`` and
``torch``.

Target (issue 45): ``import embdiag.metrics`` within 0.5 s, loading no model library (torch,
scikit-learn): those load where a model runs or a probe is fitted. Printed, not asserted
(``tests/metrics/test_import_cost.py`` checks which libraries it loads).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

MODULES = ("embdiag.metrics", "embdiag.interventions", "embdiag.report")
PEERS = ("numpy", "sklearn.metrics", "faiss", "torch")
HEAVY = ("torch", "sklearn", "pandas", "scipy.stats", "scipy.linalg", "faiss")
TARGET_S = 0.5

IMPORT = r"""
import json, sys, time
t = time.perf_counter()
__import__(sys.argv[1])
seconds = time.perf_counter() - t
print(json.dumps([seconds, [m for m in sys.argv[2:] if m in sys.modules]]))
"""


def _run(module: str) -> tuple[float, float, list[str]]:
    """``(import seconds, process seconds, heavy libraries loaded)`` of one fresh interpreter."""
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", IMPORT, module, *HEAVY], capture_output=True, text=True, check=True)
    process = time.perf_counter() - t
    seconds, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    return seconds, process, loaded


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    names = MODULES + PEERS
    runs = {m: [] for m in names}
    for _ in range(args.repeat):
        for m in names:  # interleaved
            runs[m].append(_run(m))
    print(f"{'import':<24} {'import (s)':>11} {'process (s)':>12}  heavy libraries loaded")
    results = {}
    for m in names:
        imp = statistics.median(r[0] for r in runs[m])
        proc = statistics.median(r[1] for r in runs[m])
        loaded = runs[m][-1][2]
        results[m] = {"import_s": round(imp, 4), "process_s": round(proc, 4), "loaded": loaded}
        print(f"{m:<24} {imp:>11.3f} {proc:>12.3f}  {', '.join(loaded) or '-'}")
    met = results["embdiag.metrics"]["import_s"] <= TARGET_S
    print(f"target: import embdiag.metrics <= {TARGET_S} s: {'met' if met else 'NOT met'}")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
