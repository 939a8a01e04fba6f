"""Projections for the scale page: how long a report and a training sweep take on N machines,
from what one CPU was measured to do (``benchmarks/bench_scale.py``, artifact ``scale/throughput``).

A projection is arithmetic on measured rates under stated assumptions, not a measurement:
work that shards (exact search, the geometry's Gram, the input check, training runs) divides
by the number of workers (one per core); work that does not (the inputs' SHA-256 on the
driver, fixed-size samples) does not. Each function returns seconds per component so that the
page can show which one dominates.
"""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

from .. import artifacts
from ..view import theme

__all__ = ["THROUGHPUT", "FRONTIER", "throughput", "frontier", "report_seconds", "sweep_seconds"]

#: The artifact the benchmark saves.
THROUGHPUT = "scale/throughput"
#: The frontier benchmark's record (``benchmarks/bench_frontier.py``): index curves with speeds.
FRONTIER = "scale/frontier"


def throughput(root=None) -> tuple[dict[str, float], dict, pd.DataFrame]:
    """The measured rates (measure -> value), the machine they were measured on, and the table."""
    a = artifacts.load(THROUGHPUT, root=root)
    table = a["throughput"]
    return (
        dict(zip(table["measure"], table["value"].astype(float))),
        artifacts.manifest(THROUGHPUT, root=root)["params"],
        table,
    )


def frontier(root=None) -> tuple[pd.DataFrame, dict[str, float], dict]:
    """The frontier benchmark's index curves (recall@10, queries per second, build seconds, sizes),
    its run figures (measure -> value: wall seconds, peak memory) and its parameters (machine,
    n, d, conditions)."""
    a = artifacts.load(FRONTIER, root=root)
    run = a["run"]
    return (
        a["curves"],
        dict(zip(run["measure"], run["value"].astype(float))),
        artifacts.manifest(FRONTIER, root=root)["params"],
    )


def _workers(machines: int, cores: int) -> int:
    if machines < 1 or cores < 1:
        raise ValueError(f"machines and cores: expected positive integers, got {machines} and {cores}")
    return machines * cores


def report_seconds(
    rates: dict,
    n_rows: int,
    *,
    machines: int,
    cores: int,
    searches: int = 2,
    files: int = 2,
    queries: int = 10_000,
    shard_rows: int = 1_000_000,
    d: int = 768,
) -> dict[str, float]:
    """Seconds of a full ``embdiag report --cluster`` on ``n_rows`` gallery rows of ``d`` float32.

    ``search``: ``searches`` exact searches (the reference and each condition with vectors) of
    ``queries`` queries over every row; ``geometry``: the float64 pass of the geometry of the
    same representations over every row (a block per shard); ``check``: the input check (NaN,
    inf and zero rows) of ``files`` vector files; ``tasks``: Ray's per-task cost for one task per
    shard of each (the geometry's pass for the largest magnitude included); all four divided
    over ``machines x cores`` single-thread workers. ``hash``: the SHA-256 of each file that the
    report names it by, on the driver, one thread (a hash does not split); it runs beside the
    rest (:func:`embdiag.data.files.file_records_later`), so ``total`` is the longer of the two.
    """
    workers = _workers(machines, cores)
    search = searches * queries * n_rows / rates["search_pairs_per_second"] / workers
    geometry = searches * n_rows / rates["geometry_rows_per_second"] / workers
    check = files * n_rows / rates["scan_rows_per_second"] / workers
    tasks = (3 * searches + files) * math.ceil(n_rows / shard_rows) * rates["task_seconds"] / workers
    hashing = files * n_rows * d * 4 / rates["hash_bytes_per_second"]
    return {
        "search": search,
        "geometry": geometry,
        "check": check,
        "tasks": tasks,
        "hash": hashing,
        "total": max(search + geometry + check + tasks, hashing),
    }


def sweep_seconds(
    rates: dict, *, machines: int, cores: int, profile: str = "study", runs: int = 35, references: int = 5
) -> dict[str, float]:
    """Seconds of a training sweep of ``runs`` runs of ``profile`` (its steps and evaluation
    interval) plus ``references`` untrained references (one evaluation each), each run one
    single-thread task: the runs go in waves of ``machines x cores``. A run is its steps at
    the measured rate of ``profile`` plus one embedding of the labelled images per evaluation
    (the final probes, about 10 s, not counted)."""
    from ..training.config import profile as get_profile

    workers = _workers(machines, cores)
    cfg = get_profile(profile)
    step, evaluation = rates[f"{profile}_seconds_per_step"], rates[f"{profile}_eval_seconds"]
    run = cfg.steps * step + math.ceil(cfg.steps / cfg.eval_every) * evaluation
    waves = math.ceil(runs / workers)
    total = waves * run + math.ceil(references / workers) * evaluation
    return {"run": run, "waves": float(waves), "total": total}


def hours_chart(report: pd.DataFrame, cores: int) -> alt.Chart:
    """Projected hours against machines (log-log) per gallery size (``report``: ``vectors``,
    ``machines``, ``total (h)``, ``hash (h)``): the total solid, the SHA-256 floor it meets dashed."""
    parts = {"total (h)": "total", "hash (h)": "SHA-256 of the inputs (a floor: does not shard)"}
    long = report.melt(id_vars=["vectors", "machines"], value_vars=list(parts), var_name="part", value_name="hours")
    long["part"] = long["part"].map(parts)
    galleries = list(dict.fromkeys(long["vectors"]))
    dash = alt.Scale(domain=list(parts.values()), range=[theme.DASHES["measured"], theme.DASHES["reference"]])
    return (
        alt.Chart(long)
        .mark_line(point=alt.OverlayMarkDef(filled=True, size=40))
        .encode(
            x=alt.X("machines:Q", scale=alt.Scale(type="log"), title=f"machines ({cores} cores each)"),
            y=alt.Y("hours:Q", scale=alt.Scale(type="log"), title="projected hours"),
            color=alt.Color("vectors:N", title="gallery", sort=galleries, scale=theme.scale(galleries)),
            strokeDash=alt.StrokeDash(
                "part:N", title=None, scale=dash, legend=alt.Legend(symbolType="stroke", symbolSize=400, labelLimit=400)
            ),
            tooltip=["vectors", "machines", "part", alt.Tooltip("hours:Q", format=".3g")],
        )
        .properties(width=theme.panel_width(1, gap=200), height=260)
        .configure_legend(orient="bottom", direction="vertical")
    )
