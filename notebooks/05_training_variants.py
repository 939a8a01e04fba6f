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
# The full record of the training sweep behind [Training evidence](04_training): every
# condition, every seed, every metric, the declared paired comparisons and how each run got
# there. The seven conditions switch four mechanisms:
#
# | condition | stop-gradient | EMA target | SIGReg | projector |
# |---|---|---|---|---|
# | EMA reference | yes | yes | no | no |
# | Stop-gradient only | yes | no | no | no |
# | SIGReg + stop-gradient | yes | no | yes | no |
# | SIGReg | no | no | yes | no |
# | Projector + SIGReg + stop-gradient | yes | no | yes | yes |
# | Projector + SIGReg | no | no | yes | yes |
# | Contracted control | no | no | no | no |
#
# The table is `embdiag.training.CONDITIONS`, the data the one training loop reads.

# %% tags=["parameters"]
profile = "cpu"  # records folder under data/training/

# %%
from IPython.display import Markdown, display

from embdiag.paper import charts
from embdiag.training import figures, sweep
from embdiag.training.inputs import ATTRIBUTES

charts.enable()
records = sweep.load_records(profile)
if records.empty:
    raise RuntimeError(f"no training records for {profile!r}: run `embdiag train --profile {profile}` first")
cfg = sweep.Task(profile, sweep.UNTRAINED, 0).config()
failed = records[records["status"] != "ok"]
display(Markdown(
    f"**Data and model:** {figures.profile_statement(cfg)}.  \n**Failed runs:** "
    + ("none." if failed.empty else "; ".join(f"{r.condition} seed {r.seed} ({r.reason})"
                                              for r in failed.itertuples()) + ". They are shown nowhere as "
       "values and enter no mean.")))

# %% [markdown]
# ## Every seed, every metric
#
# Each seed is a dot and the five-seed mean a black tick. The geometry panels (total variance
# on a log axis, RankMe, participation ratio, mean cosine) need no labels; the probe and P@10
# panels follow the attribute selector under the figure.

# %%
n_seeds = records.loc[records["condition"] != sweep.UNTRAINED, "seed"].nunique()
figures.variants_chart(records)

# %%
display(Markdown(figures.caption(
    cfg, "Final-step metrics of every run and of each seed's untrained encoder: geometry of the validation "
    "embeddings, and probe accuracy, balanced accuracy and P@10 of the selected attribute.", n_seeds)))

# %% [markdown]
# ## Five-seed means
#
# Per attribute, the mean of the finished seeds; the highest value of each column is green,
# the lowest red. Accuracy, balanced accuracy and P@10 are in percent.

# %%
for a in ATTRIBUTES:
    display(Markdown(f"**{figures.ATTRIBUTE_NAMES[a]}**"))
    display(figures.mark_extremes(figures.means(records, a)))

# %% [markdown]
# ## Paired differences
#
# The five declared comparisons, condition A minus condition B on the same seed. Dots are
# seeds, the diamond is the mean, the line its paired Student-t 95% interval; each metric keeps
# one axis for every comparison and attribute, so panels can be compared by eye.
# {download}`Download every per-seed difference and interval (CSV) <training_paired_differences.csv>`

# %%
paired = figures.paired_percent(sweep.paired_table(records))
paired.to_csv("training_paired_differences.csv", index=False, float_format="%.10g")
figures.differences_chart(paired)

# %%
display(Markdown(figures.caption(
    cfg, "Paired differences A − B per seed (dots), their mean (diamond) and paired Student-t 95% interval "
    "(line), for probe accuracy and P@10 (percentage points, selected attribute) and RankMe.", n_seeds)))

# %% [markdown]
# ## Training trajectories
#
# Beyond the study: every run evaluated during training, starting from its seed's untrained
# encoder at step 0. Probes are fitted only at the final step, so the trajectories show the
# prediction loss, the geometry and P@10 (time of day). Click a legend entry to isolate a
# condition.

# %%
figures.trajectories_chart(sweep.load_trajectories(profile))

# %%
display(Markdown(figures.caption(
    cfg, "Mean prediction loss since the previous evaluation, total variance (log axis), RankMe and time-of-day "
    "P@10 of the validation embeddings during training; one line per run.", n_seeds)))
