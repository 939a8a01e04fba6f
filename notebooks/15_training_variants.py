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
#
# The full record of the training sweep behind [Training evidence](03_training): every
# condition, every seed, every metric, the declared paired comparisons and how each run got
# there. The seven conditions switch four mechanisms, as the first table below shows.

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
n_seeds = records.loc[records["condition"] != sweep.UNTRAINED, "seed"].nunique()
failed = records[records["status"] != "ok"]
display(Markdown(
    f"**Data and model:** {chapter.profile_statement(cfg)}.  \n**Failed runs:** "
    + ("none." if failed.empty else "; ".join(f"{r.condition} seed {r.seed} ({r.reason})"
                                              for r in failed.itertuples()) + ". They are shown nowhere as "
       "values and enter no mean.")))
exhibits.table(chapter.condition_matrix(), name="condition-matrix", extremes=False,  # yes/no only
               caption="The seven training conditions and the mechanisms each switches on, read from "
                       "embdiag.training.CONDITIONS, the data the one training loop reads. A design, not a "
                       "measurement.")

# %% [markdown]
# ## Every seed, every metric
#
# The geometry panels (total variance on a log axis, RankMe, participation ratio, mean cosine)
# need no labels; the probe and P@10 panels follow the attribute selector under the figure.

# %%
exhibits.figure(chapter.variants_chart(records), name="variants", data=chapter.variants_frame(records),
                caption=chapter.caption(
                    "Final-step metrics of every run of the seven training conditions and of each seed's "
                    "untrained encoder: geometry of the validation embeddings (no labels), and probe accuracy, "
                    "balanced accuracy and P@10 (percent) of the attribute chosen under the figure.", n_seeds,
                    "Each seed is a dot and the mean over seeds a black tick; no interval is drawn. The CSV lists "
                    "every run, metric and attribute."))

# %% [markdown]
# ## Five-seed means
#
# Per attribute, the mean of the finished seeds of every condition, and of the untrained
# encoders for reference. Accuracy, balanced accuracy and P@10 are in percent.

# %%
for a in ATTRIBUTES:
    table = chapter.means_table(records, a)
    display(exhibits.table(
        table, name=f"means-{a}", extremes_rows=table.data.index != sweep.UNTRAINED,  # the seven conditions
        extremes=[c for c in table.data.columns if c != "runs"],
        caption=chapter.caption(
            f"Mean over finished seeds of every final-step metric, {chapter.ATTRIBUTE_NAMES[a]} for the "
            "per-attribute ones (percent), per training condition, with the untrained encoders for reference "
            "(not compared in the marks); runs: the number of seeds that entered.", n_seeds,
            "Means only; the figure above shows every seed, the paired intervals are below.")))

# %% [markdown]
# ## Paired differences
#
# The five declared comparisons, condition A minus condition B on the same seed. Dots are
# seeds, the diamond is the mean, the line its paired Student-t 95% interval; each metric keeps
# one axis for every comparison and attribute, so panels can be compared by eye. The CSV under
# the figure holds every per-seed difference and interval, for every metric and attribute.

# %%
paired = chapter.paired_percent(sweep.paired_table(records))
exhibits.figure(chapter.differences_chart(paired), name="paired-differences", data=paired,
                caption=chapter.caption(
                    "Paired differences A − B of the five declared comparisons, per seed, for probe accuracy "
                    "and P@10 (percentage points, attribute chosen under the figure) and RankMe.", n_seeds,
                    f"Each seed is a dot, the mean difference a diamond and the line its paired Student-t 95% "
                    f"interval over the {n_seeds} seeds (no multiplicity correction). The CSV holds every metric "
                    "and attribute: both runs' values, the difference, the interval and the number of seeds."))

# %% [markdown]
# ## Training trajectories
#
# Beyond the study: every run evaluated during training, starting from its seed's untrained
# encoder at step 0. Probes are fitted only at the final step, so the trajectories show the
# prediction loss, the geometry and P@10 (time of day). Click a legend entry to isolate a
# condition.

# %%
trajectories = sweep.load_trajectories(profile)
exhibits.figure(chapter.trajectories_chart(trajectories), name="trajectories",
                data=chapter.trajectories_frame(trajectories),
                caption=chapter.caption(
                    "Mean prediction loss since the previous evaluation, total variance (log axis), RankMe "
                    "and time-of-day P@10 of the validation embeddings during training; one line per run.", n_seeds,
                    "One line per run and no interval; each run starts from its seed's untrained encoder."))
