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
# # Approach
#
# Label-free measurements of embedding vectors are cheap: how far they spread (total variance),
# how aligned they are (mean cosine), how many directions they use (RankMe
# {cite}`garrido2023rankme`, participation ratio). Self-supervised training watches them to detect
# collapse. The study asks: **when such a number moves, does it say which task has stopped
# working?** It answers by separating four properties of one set of vectors (distribution,
# recoverable labels, neighbour identity, relevance), each with its own instrument, and by moving
# one property at a time.
#
# **Design A: controlled training.** A JEPA {cite}`assran2023ijepa` learns from unlabelled
# driving scenes: a predictor predicts the target branch's representations of masked regions.
# Four protections against collapse are switched on or off per condition: **stop-gradient** on
# the targets, an **EMA target** encoder, **SIGReg** {cite}`balestriero2025lejepa` (pushing pooled
# embeddings toward an isotropic Gaussian) and a **projector** that evaluation never reads. Seven
# conditions, five seeds each; evaluation reads the context encoder's pooled output.

# %% tags=["parameters"]
conditions: list | None = None  # names of the training conditions in the matrix and the diagram (None: all seven)

# %%
from embdiag.paper import diagrams
from embdiag.view import charts, exhibits
from embdiag.training import CONDITIONS, condition
from embdiag.paper.chapters import training as training_figures

charts.enable()
exhibits.figure(diagrams.four_properties(), name="four-properties", data=diagrams.schematic_points(), reads=[],
                caption="The four properties drawn on made-up points (an illustration, not data): spread, a linear "
                        "class boundary, a query's exact top 3 before and after a small change, and which of its "
                        "top 3 share its label.")

# %%
shown = CONDITIONS if conditions is None else tuple(condition(name) for name in conditions)
exhibits.table(training_figures.condition_matrix(shown), name="condition-matrix", extremes=False,
               caption="The seven training conditions and the mechanisms each switches on (the study's "
                       "condition matrix, declared as data in embdiag.training.conditions).")

# %%
exhibits.figure(diagrams.jepa_step(shown), name="jepa-step",
                caption="One JEPA training step per condition: which computations run (solid) and which do "
                        "not (faded). A diagram of the computation in embdiag.training.loop, checked "
                        "against the loop by the project's tests; not a measurement.")

# %% [markdown]
# **Design B: a fixed encoder, changed after the fact.** One pinned image–text encoder embeds the
# data once (the study's: EmbeddingGemma {cite}`vera2025embeddinggemma`, with Matryoshka prefixes
# {cite}`kusupati2022matryoshka`); the cached vectors are then changed without retraining, so the
# responses are arithmetic, not training: [stress tests](05_stress_tests) (contraction, offset,
# rank restriction, noise), [compression](06_compression) (Matryoshka prefix or PCA),
# [storage precision](07_neighbour_stability) (FP16, INT8, FP32 arithmetic) and
# [image–caption retrieval](08_caption_retrieval) at full and reduced dimension. The data and
# encoders that stand in for BDD100K {cite}`yu2020bdd100k`, COCO {cite}`lin2014coco`
# {cite}`chen2015cococaptions` and EmbeddingGemma are in the [appendix](02_data).
#
# ## The instruments
#
# $Z$ is an $n \times d$ matrix of embeddings; each definition names its function in `embdiag.metrics`.
#
# | property | definition |
# |---|---|
# | total variance | $\operatorname{tr}\,C$, $C = \tfrac{1}{n-1}(Z - \bar z)^\top (Z - \bar z)$ (`total_variance`) |
# | mean cosine | mean of $\cos(z_i, z_j)$ over pairs of distinct rows (`mean_cosine`) |
# | participation ratio | $(\sum_i \lambda_i)^2 / \sum_i \lambda_i^2$ over the eigenvalues of $C$ (`participation_ratio`) |
# | RankMe | $\exp(-\sum_i p_i \ln p_i)$, $p_i = \sigma_i / \sum_j \sigma_j + 10^{-7}$, $\sigma$ the singular values of the *uncentred* $Z$ (`rankme`; [worked example](20_rank_diagnostics)) |
# | probe accuracy, balanced accuracy | multinomial logistic regression on standardized features; balanced accuracy is the mean recall over classes with at least 10 evaluation rows (`LinearProbe`, `balanced_accuracy`) |
# | overlap@10, changed queries | share of a query's reference top 10 still in its top 10; queries whose top-10 set changed (`overlap_at_k`) |
# | P@10 | share of a query's ten cosine neighbours (itself excluded) sharing its label, against the floor $\sum_c (n_c/n)^2$ (`precision_at_k`, `random_floor`) |
# | Hit@k, caption recall@10 | a positive in the top $k$; share of an image's captions in its top ten (`hit_at_k`, `recall_at_k`) |
#
# **Uncertainty.** Training comparisons are paired differences over five seeds with Student-$t$
# 95% intervals; retrieval changes get paired bootstrap intervals over queries or image groups;
# shares of queries get Wilson intervals. A verdict is an interval against a margin declared before
# the numbers were seen: **holds** when the interval lies on the claim's side, **contradicted** when
# wholly on the other, **inconclusive** when it straddles the margin, **not testable** when the
# situation did not arise.
