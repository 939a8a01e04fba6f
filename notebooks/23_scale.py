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
# # At scale: a projection, not a measurement
#
# The report and the training sweep both take `--cluster` and run on Ray (the README says how);
# the tests run both on a two-CPU Ray cluster and find the local numbers bit for bit. This page
# does not measure a cluster: from what one CPU was measured to do (`python benchmarks/bench_scale.py`),
# it projects what a 100M and a 1B x 768 report and the study's sweep would take on N machines.

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
               collapsed="The measured rates every projection starts from",
               caption=(
    "What one CPU did (benchmarks/bench_scale.py, the machine named above); one run each, no interval."))

# %% [markdown]
# ## A report over 100M and 1B vectors
#
# Exact search, the geometry's Gram and the input check shard over workers; the SHA-256 that
# names each input file is one sequential pass on the driver, the floor no number of machines lowers.

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
    f"Projected hours of a full report ({searches} exact searches of {queries:,} queries, geometry over every row) "
    f"on machines of {cores} cores, by part; the total is the longer of the sharded work and the driver's SHA-256."))

# %%
exhibits.figure(scale.hours_chart(report, cores), name="scale-report-hours", caption=(
    "Projected hours of a full report against machines (log-log): the total (solid) falls until it meets the "
    "driver's SHA-256 (dashed), which does not shard."))

# %% [markdown]
# ## Memory per worker

# %%
peak = rates["search_task_peak_bytes"] / 2**20
query_mib = queries * 768 * 4 / 2**20
display(Markdown(
    f"One shard task measured **{peak:,.0f} MiB** at its peak (interpreter included), searching "
    f"{machine['queries']:,} queries ({query_mib:,.0f} MiB) over a {machine['shard_rows']:,}-row memory-mapped "
    "shard: a worker's memory does not grow with the shard. The driver holds fixed-size samples."))

# %% [markdown]
# ## The study's training sweep
#
# Each run is one task on one core; 35 runs take as many waves as the workers need.

# %%
sweep = pd.DataFrame([{"machines": m, "workers": m * cores, **scale.sweep_seconds(rates, machines=m, cores=cores)}
                      for m in machines])
sweep["run (h)"] = sweep.pop("run") / 3600
sweep["total (h)"] = sweep.pop("total") / 3600
sweep["waves"] = sweep["waves"].astype(int)
exhibits.table(sweep.set_index("machines").style.format({"run (h)": "{:,.3g}", "total (h)": "{:,.3g}"}),
               name="scale-sweep", extremes=False, caption=(
    f"Projected hours of the study sweep (35 runs of 4,000 steps, plus 5 untrained references) on machines of "
    f"{cores} cores, one single-thread run per core. No GPU was measured."))

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
               name="ladder-cost", extremes=False, collapsed="What each rung of the training-length ladder cost",
               caption=(
    f"Per rung of the ladder ({', '.join(ladder.CONDITIONS)}, {len(training_sweep.SEEDS)} seeds each): mean wall "
    f"time per run from the records and hours for {planned} runs on two workers; the last row doubles the longest "
    "rung. Measured on a shared machine: an upper bound."))

# %% [markdown]
# ```{dropdown} The assumptions behind every projection
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
# ```
