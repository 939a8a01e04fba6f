# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # At scale: the report and the sweep on a Ray cluster
#
# Two jobs outgrow one machine: a report over hundreds of millions of vectors, and a training
# sweep with the study's 35 runs of 4,000 steps. Both commands take `--cluster` and run on Ray
# (`embdiag report ... --cluster auto`, `embdiag train ... --cluster auto`; the README says how):
# the report sends every exact search as tasks over shards of the gallery and merges them
# exactly, computes the geometry's Gram and sums as one task per block of rows and adds them in
# block order, and runs each bootstrap interval as a task; the sweep sends every run as a task that resumes from its checkpoint if its worker
# dies. The tests run both on a two-CPU Ray cluster on one machine and find the local numbers
# bit for bit.
#
# This page does not measure a cluster. It **projects**: from what one CPU of this project's
# machine was measured to do (`python benchmarks/bench_scale.py`, the table below), it states
# what a 100M x 768 and a 1B x 768 report and the study's sweep would take on N machines, and
# what each worker holds in memory, with the assumptions written out at the end.

# %% tags=["parameters"]
cores = 16  # CPU cores per machine; each runs one single-thread worker
machines = [1, 8, 64, 512]  # cluster sizes projected
sizes = [100_000_000, 1_000_000_000]  # gallery rows of the projected reports (d = 768, float32)
searches = 2  # exact searches per report: the reference and one second representation (--compare)
queries = 10_000  # searched queries (what a full report samples)

# %%
import pandas as pd
from IPython.display import Markdown, display

from embdiag.paper import scale
from embdiag.view import charts, exhibits

charts.enable()
rates, machine, measured = scale.throughput()
display(Markdown(
    f"**Measured on:** {machine['processor']} ({machine['cores']} cores), one thread per measure; "
    f"BLAS {', '.join(machine['blas'])}, numpy {machine['numpy']}."))
exhibits.table(measured.set_index("measure").style.format({"value": "{:,.4g}"}), name="scale-rates", extremes=False,
               caption=(
    "What one CPU did, measured by benchmarks/bench_scale.py on the machine named above: exact search "
    "throughput and the peak memory of one shard task, the input check's read rate and the inputs' SHA-256, "
    "the geometry's float64 pass, an empty Ray task's cost, and training step and evaluation times. One run "
    "each, no interval."))

# %% [markdown]
# ## A report over 100M and 1B vectors
#
# The exact searches shard: each worker scans its share of the gallery for all searched
# queries, so their time divides by the number of workers; so do the geometry's float64 Gram
# of every row (one task per block, the blocks' sums added in order on the driver) and the
# input check (NaN, inf and zero rows), one task per shard. What does not shard is the
# SHA-256 by which the report names each input file: a hash is one sequential pass. The driver
# computes it in a thread beside the cluster's work, so it costs nothing while the cluster is
# slower; once the cluster is faster, it is the floor that no number of machines lowers.

# %%
rows = []
for n in sizes:
    for m in machines:
        t = scale.report_seconds(rates, n, machines=m, cores=cores, searches=searches, queries=queries)
        size = f"{n / 1e9:g}B" if n >= 1e9 else f"{n / 1e6:g}M"
        rows.append({"vectors": f"{size} x 768", "machines": m, "workers": m * cores,
                     **{f"{k} (h)": v / 3600 for k, v in t.items()}})
report = pd.DataFrame(rows)
hours = {c: "{:,.3g}" for c in report.columns if c.endswith("(h)")}
exhibits.table(report.set_index(["vectors", "machines"]).style.format(hours), name="scale-report", extremes=False,
               caption=(
    f"Projected hours of a full report ({searches} exact searches of {queries:,} queries over every row, and "
    f"the geometry of both representations over every row) on machines of {cores} cores: search, geometry, "
    "input check and Ray task overhead (divided over the workers), the SHA-256 of both files on the driver "
    "(one thread, beside the rest) and the total (the longer of the two). Arithmetic on the measured rates "
    "above, not a measurement."))

# %%
exhibits.figure(scale.hours_chart(report, cores), name="scale-report-hours", caption=(
    "Projected hours of a full report against the number of machines (log-log), for each gallery size: the "
    "total (solid) falls with the machines until it meets the inputs' SHA-256 on the driver (dashed), which "
    "runs beside the cluster's work and does not shard. Arithmetic on the measured rates, not a measurement."))

# %% [markdown]
# ## Memory per worker
#
# A shard task holds the searched queries, its score buffers and one gallery chunk; the shard
# itself stays on disk, memory-mapped, and its pages are released once scanned. A geometry task
# holds one float64 chunk (16 MB) and its d x d sums (three 768 x 768 float64 matrices, 14 MB).
# So a worker's memory does not grow with the shard:

# %%
peak = rates["search_task_peak_bytes"] / 2**20
query_mib = queries * 768 * 4 / 2**20
display(Markdown(
    f"One shard task measured **{peak:,.0f} MiB** at its peak (the Python interpreter and its libraries "
    f"included), searching {machine['queries']:,} queries over a {machine['shard_rows']:,}-row shard; "
    f"the queries themselves are {query_mib:,.0f} MiB of it. The driver holds the samples of fixed size "
    "(at most 20,000 rows for the probes, the searched queries and their neighbours), whatever the "
    "gallery's size (`benchmarks/bench_report.py` prints its peak for a whole 1M x 768 report). A gallery "
    "that is not a `.npy` file on shared storage (a compressed or quantized condition made by the report) "
    "goes through Ray's object store instead, which needs its size in memory across the cluster."))

# %% [markdown]
# ## The study's training sweep
#
# Each run is one task on one core; runs do not split, so the sweep takes as many *waves* of
# runs as 35 runs need on the available workers, each wave as long as one run.

# %%
sweep = pd.DataFrame([{"machines": m, "workers": m * cores, **scale.sweep_seconds(rates, machines=m, cores=cores)}
                      for m in machines])
sweep["run (h)"] = sweep.pop("run") / 3600
sweep["total (h)"] = sweep.pop("total") / 3600
sweep["waves"] = sweep["waves"].astype(int)
exhibits.table(sweep.set_index("machines").style.format({"run (h)": "{:,.3g}", "total (h)": "{:,.3g}"}),
               name="scale-sweep", extremes=False, caption=(
    f"Projected hours of the study sweep (35 runs of the study profile, 4,000 steps each, plus 5 untrained "
    f"references) on machines of {cores} CPU cores, one single-thread run per core: hours per run, waves and "
    "total. From the measured one-thread step and evaluation times; on GPUs (--device cuda, a quarter GPU "
    "per run) steps are far faster, but no GPU was measured here."))

# %% [markdown]
# ## What the training-length ladder costs
#
# The training chapter's ladder trains three conditions for longer (each length its own run).
# Its runs record their own wall time, so each rung's cost is measured, not projected; the
# next rung, twice as long, is projected from the longest one (step time and evaluations both
# grow with the steps). All on one core of this 2-core machine, one single-thread run per core.

# %%
from embdiag.training import ladder, sweep as training_sweep

ladder_runs = ladder.ladder_records("cpu")
trained = ladder_runs[ladder_runs["condition"] != training_sweep.UNTRAINED]
rungs = trained.groupby("steps").agg(runs=("seed", "size"), run_s=("wall_seconds", "mean"))
planned = len(ladder.CONDITIONS) * len(training_sweep.SEEDS)
rungs["runs"] = rungs["runs"].astype(int)
rungs["minutes per run"] = rungs.pop("run_s") / 60
rungs[f"hours for {planned} runs, 2 workers"] = rungs["minutes per run"] * planned / 2 / 60
longest = int(rungs.index.max())
rungs.loc[2 * longest] = [0, 2 * rungs.loc[longest, "minutes per run"], 2 * rungs.loc[longest, rungs.columns[2]]]
rungs["runs"] = rungs["runs"].astype(int)
rungs.index = [f"{n:,} steps" + (" (projected)" if n == 2 * longest else "") for n in rungs.index]
exhibits.table(rungs.rename_axis("rung").style.format({"minutes per run": "{:.1f}", rungs.columns[2]: "{:.2f}"}),
               name="ladder-cost", extremes=False, caption=(
    f"Per rung of the training-length ladder ({', '.join(ladder.CONDITIONS)}, {len(training_sweep.SEEDS)} seeds "
    "each, cpu profile): runs recorded so far, mean wall time per run from the records (training and "
    f"evaluations), and the hours {planned} runs take on two single-thread workers; the last row doubles the "
    "longest rung's time per run. Measured while other jobs shared the machine: an upper bound for a quiet one."))

# %% [markdown]
# ## Assumptions
#
# - Workers are cores like the measured one, each running one single-thread task; search time
#   divides evenly over them (shards are equal, and a shard's time is proportional to its rows).
# - The gallery sits on storage every node reads at least as fast as the measured page-cache
#   read; from a network file system the search is bound by its bandwidth instead.
# - The report's other sections work on fixed-size samples (the probes on at most 20,000 rows,
#   the bootstrap over at most 10,000 queries, one task per interval) and take minutes whatever
#   the size; approximate-index conditions (HNSW, IVF-PQ) are built on the driver and are not
#   projected.
# - The sweep's runs are independent and do not share a core; the final probes of each run
#   (about 10 s) and the transfer of records are left out.
# - Ray's scheduling is taken at the measured cost of an empty task, spread over the workers.
# - The driver reads each input file once more for its SHA-256, at the measured rate of one
#   thread reading from the page cache, while the cluster works (the driver itself only waits
#   for tasks then).
# - Labels and pairs (one row per vector) are read whole by the driver and are not projected: at
#   a billion rows the driver needs the memory for them.
