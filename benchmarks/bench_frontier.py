"""The compression frontier at scale: one ``embdiag.report.measure`` with every storage format,
two truncations at three sizes and two indexes swept over their knobs, intervals included.

    python benchmarks/bench_frontier.py                  # 100,000 x 768 (issue 26's size); saves the record
    python benchmarks/bench_frontier.py --n 20000 --dry  # a first look, nothing saved

The vectors and labels are bench_report.py's (``make_inputs``: 40 clusters, two label columns,
kept in ``data/cache/bench_report/<n>x<d>/``): synthetic, not the project's encoder. Prints the
wall time of the whole measurement and of each step (from the report's progress), the peak
resident memory, the frontier table and each index's curve (recall@10 against queries per
second). Target (issue 26): under 5 minutes at 100,000 x 768 on the 2-core machine. Printed,
not asserted. Without ``--dry`` the curves and the run's figures are saved as the artifact
``scale/frontier`` (the page "Choosing a compression" draws the curves from it).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import pandas as pd

from embdiag import artifacts
from embdiag.artifacts import data_dir

NAME = "scale/frontier"

COMPRESS = "fp16,fp8,int8,int8cal,int4,binary,binary-rescore,pca512,pca256,pca128,prefix512,prefix256,prefix128"
INDEX = "hnsw,ivfpq"


def main(argv=None) -> int:
    from bench_report import make_inputs

    from embdiag.data.files import read_labels, read_vectors
    from embdiag.report import measure

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=768)
    parser.add_argument("--compress", default=COMPRESS)
    parser.add_argument("--index", default=INDEX)
    parser.add_argument("--dry", action="store_true", help="print, do not save")
    args = parser.parse_args(argv)
    paths = make_inputs(data_dir() / "cache" / "bench_report" / f"{args.n}x{args.d}", args.n, args.d)
    X = read_vectors(paths["vectors"], "VECTORS")
    labels = read_labels(paths["labels"], len(X))
    start = time.perf_counter()
    report = measure(
        X,
        labels=labels,
        compress=args.compress,
        index=args.index,
        k=10,
        progress=True,
        fail_if=["overlap@10<0.9", "delta_p@10.low<-1"],
    )
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    conditions = len(report.inputs["conditions"])
    print(f"frontier of {conditions} conditions on {args.n:,} x {args.d}: {wall:.1f} s, peak RSS {peak:.2f} GiB")
    certified = report.tables["identity"].cert_queries.max()
    print(f"  searched: {report.inputs['sampling']['queries']}; certificates on {certified:.0f} queries")
    table = report.tables["frontier"]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.drop(columns=["lowest_value", "lowest_high"]).to_string(index=False))
    curves = curve_table(report)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(curves.to_string(index=False))
    print(f"target: under 300 s at 100,000 x 768; {'met' if wall < 300 else 'not met'} ({wall:.0f} s)")
    if not args.dry:
        from bench_scale import machine

        run = pd.DataFrame(
            [
                {"measure": "wall_s", "value": wall},
                {"measure": "peak_rss_gib", "value": peak},
                {"measure": "conditions", "value": conditions},
                {"measure": "searched_queries", "value": report.inputs["n_queries"]},
            ]
        )
        params = machine() | {"n": args.n, "d": args.d, "compress": args.compress, "index": args.index}
        params.pop("shard_rows", None)
        params["queries"] = report.inputs["n_queries"]
        command = "python benchmarks/bench_frontier.py"
        folder = artifacts.save(NAME, {"curves": curves, "run": run}, params, command=command)
        print(folder)
    return 0


def curve_table(report) -> pd.DataFrame:
    """Each index's curve with this run's queries per second and build seconds beside it."""
    curves = report.tables["index_curves"].merge(
        pd.DataFrame(report.timings["index_searches"])[["condition", "value", "queries_per_s"]],
        on=["condition", "value"],
    )
    builds = pd.DataFrame(report.timings["index_builds"])
    sizes = report.tables["indexes"][["condition", "factory", "index_bytes", "bytes_per_vector"]]
    return curves.merge(builds, on="condition").merge(sizes, on="condition")


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    sys.exit(main())
