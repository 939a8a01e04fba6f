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
# # All seven training variants

# %% tags=["parameters"]
profile = "cpu-steps6400"  # records folder under data/training/ (a profile name, or <profile>-steps<N>)

# %%
from IPython.display import Markdown, display

from embdiag.view import charts, exhibits
from embdiag.paper.chapters import training as chapter
from embdiag.training import sweep
from embdiag.training.inputs import ATTRIBUTES

charts.enable()
records = sweep.load_records(profile)
if records.empty:
    raise RuntimeError(f"no training records for {profile!r}: run `embdiag train` for that profile and length first")
cfg = sweep.Task(profile, sweep.UNTRAINED, 0).config()
paired = chapter.paired_percent(sweep.paired_table(records))
chapter.variants_result(records, paired, cfg.steps)

# %%
n_seeds = records.loc[records["condition"] != sweep.UNTRAINED, "seed"].nunique()
failed = records[records["status"] != "ok"]
display(Markdown(
    f"**Data and model:** {chapter.profile_statement(cfg)}.  \n**Failed runs:** "
    + ("none." if failed.empty else "; ".join(f"{r.condition} seed {r.seed} ({r.reason})"
                                              for r in failed.itertuples()) + ". They enter no value or mean.")
    + " The full record behind [Training evidence](03_training.html)."))

# %% [markdown]
# ## Every seed, every metric
#
# Geometry panels need no labels; the probe and P@10 panels follow the attribute selector.

# %%
exhibits.figure(chapter.variants_chart(records), name="variants", data=chapter.variants_frame(records),
                caption=chapter.caption(
                    "Final-step metrics of every run and of each seed's untrained encoder: label-free geometry, "
                    "and probe accuracy, balanced accuracy and P@10 (0–100%) of the selected attribute.", n_seeds,
                    "Each seed is a dot, the mean a black tick; no interval is drawn."))

# %%
display(exhibits.table(chapter.condition_matrix(), name="condition-matrix", extremes=False,  # yes/no only
                       collapsed="The mechanisms each condition switches on",
                       caption="The seven training conditions and their four switches, read from "
                               "embdiag.training.CONDITIONS, which the training loop reads. A design, not a "
                               "measurement."))
for a in ATTRIBUTES:
    table = chapter.means_table(records, a)
    display(exhibits.table(
        table, name=f"means-{a}", extremes_rows=table.data.index != sweep.UNTRAINED,  # the seven conditions
        extremes=[c for c in table.data.columns if c != "runs"],
        collapsed=f"Means per condition, {chapter.ATTRIBUTE_NAMES[a]}",
        caption=chapter.caption(
            f"Mean over finished seeds of every final-step metric ({chapter.ATTRIBUTE_NAMES[a]} for the "
            "per-attribute ones, percent), per condition, with the untrained encoders for reference (not marked).",
            n_seeds, "Means only.")))

# %% [markdown]
# ## Paired differences
#
# The five declared comparisons, condition A minus B on the same seed; each metric keeps one
# axis for every comparison and attribute.

# %%
exhibits.figure(chapter.differences_chart(paired), name="paired-differences", data=paired,
                caption=chapter.caption(
                    "Paired differences A − B per seed for probe accuracy and P@10 (percentage points, selected "
                    "attribute) and RankMe.", n_seeds,
                    f"Seeds are dots, the mean a diamond, the line its paired Student-t 95% interval over "
                    f"{n_seeds} seeds (no multiplicity correction)."))

# %% [markdown]
# ## Training trajectories
#
# Beyond the study: every run evaluated during training from its seed's untrained encoder.
# Probes are fitted only at the final step. Click a legend entry to isolate a condition.

# %%
trajectories = sweep.load_trajectories(profile)
exhibits.figure(chapter.trajectories_chart(trajectories), name="trajectories",
                data=chapter.trajectories_frame(trajectories),
                caption=chapter.caption(
                    "Prediction loss since the previous evaluation, total variance (log axis), RankMe and "
                    "time-of-day P@10 (0–100%) during training.", n_seeds, "One line per run; no interval."))
