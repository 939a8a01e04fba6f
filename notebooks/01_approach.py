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
# # Motivation and approach
#
# ## Why ask
#
# Search with embeddings works when a query's nearest neighbours are useful: images of the same
# kind of scene, captions that describe the image. Whether they are is expensive to check, since
# it needs labels or relevance judgements. Label-free measurements of the vectors are cheap:
# how far they spread (total variance), how aligned they are (mean cosine), how many directions
# they use (RankMe {cite}`garrido2023rankme`, participation ratio). Self-supervised training
# watches such numbers to detect collapse, and practitioners read them as health checks of an
# encoder. The question of this study: **when a label-free measurement moves, does it tell you
# which task has stopped working?**
#
# The study answers by refusing to call anything "embedding quality". It separates four
# properties of one set of vectors (the [cover](00_cover) draws them): their **distribution**,
# the **labels** a fitted linear classifier recovers from them, the **identity** of each
# query's exact nearest neighbours, and the **relevance** of what a search returns. Each has its
# own instrument, and the experiments below move one property at a time to see which
# instruments follow.
#
# ## Two designs
#
# **A. Controlled training.** A Joint-Embedding Predictive Architecture (JEPA,
# {cite}`assran2023ijepa`) learns from unlabelled driving scenes: a context encoder sees a masked
# image, a predictor predicts the representations of the hidden regions, and a target branch
# encodes the full image to supply the target latents. Collapse (every image mapped to nearly the
# same vector) is what such training must prevent, and four mechanisms are switched on or off
# per condition: **stop-gradient** on the target latents; an **EMA target** (a separate encoder,
# an exponential moving average of the context encoder); **SIGReg**, LeJEPA's sketched isotropic
# Gaussian regularizer {cite}`balestriero2025lejepa`, pushing the pooled embeddings toward an
# isotropic Gaussian through random one-dimensional projections; and a **projector** between
# the encoder and SIGReg that evaluation never reads. One training loop runs all seven
# conditions, five seeds each; evaluation always reads the context encoder's pooled output.

# %% tags=["parameters"]
conditions: list | None = None  # names of the training conditions in the matrix and the diagram (None: all seven)

# %%
from embdiag.paper import diagrams
from embdiag.view import charts, exhibits
from embdiag.training import CONDITIONS, condition
from embdiag.paper.chapters import training as training_figures

charts.enable()
shown = CONDITIONS if conditions is None else tuple(condition(name) for name in conditions)
exhibits.table(training_figures.condition_matrix(shown), name="condition-matrix", extremes=False,
               caption="The seven training conditions and the mechanisms each switches on (the study's "
                       "condition matrix, declared as data in embdiag.training.conditions).")

# %% [markdown]
# Pick a condition below the diagram to see which computations run in one of its training steps.
# Without an EMA target, the target branch is the context encoder itself applied to the full
# image; without stop-gradient, gradients flow through that branch too. The contracted control
# has none of the four protections.

# %%
exhibits.figure(diagrams.jepa_step(shown), name="jepa-step",
                caption="One JEPA training step per condition: which computations run (solid) and which do "
                        "not (faded). A diagram of the computation in embdiag.training.loop, checked "
                        "against the loop by the project's tests; not a measurement.")

# %% [markdown]
# **B. A fixed encoder, changed after the fact.** One pinned image–text encoder embeds the data
# once; the cached vectors are then changed without retraining, so the responses are
# mathematical, not what training would do. The published study used EmbeddingGemma
# {cite}`vera2025embeddinggemma`, which maps images and text into one 768-dimensional space with
# Matryoshka prefixes {cite}`kusupati2022matryoshka`. Four kinds of change:
#
# - [**stress tests**](05_stress_tests): contraction, a common offset, rank restriction and noise,
#   each over a fixed severity grid;
# - [**compression**](06_compression): keep 512, 256 or 128 dimensions, as a Matryoshka prefix or
#   by PCA;
# - [**storage and scoring precision**](07_neighbour_stability): FP16 and INT8 storage and FP32
#   arithmetic, with the exact top-10 search repeated;
# - [**image–caption retrieval**](08_caption_retrieval): text-to-image and image-to-text search
#   at full and reduced dimension, with paired bootstrap intervals and a shuffled control.
#
# ## The data
#
# The published study used a BDD100K-derived subset {cite}`yu2020bdd100k` (2,000 training and
# 983 validation images labelled with weather, scene and time of day) and 1,000 COCO 2017
# validation images {cite}`lin2014coco` with five recorded captions each
# {cite}`chen2015cococaptions`. This book cannot download either; it runs on **procedurally
# generated driving scenes** with the same attributes, split sizes and caption structure (the
# [data chapter](02_data) shows how they are made and how they differ), and on encoders the
# project trains itself: the JEPA runs of design A, and two small image–text dual encoders
# trained contrastively, in the manner of CLIP {cite}`radford2021clip`, with Matryoshka prefixes,
# in place of EmbeddingGemma ([the reference encoder](04_reference_encoder)). The real loaders
# (BDD100K label JSON, COCO captions and instances JSON, any Hugging Face encoder at a pinned
# revision) are in the library and are one parameter away; see [Reproduce](24_reproduce).
#
# ## The instruments
#
# Let $Z$ be an $n \times d$ matrix whose rows are embeddings. Each definition names the
# function of `embdiag.metrics` that computes it.
#
# **Distribution** (no labels).
# - Total variance: $\operatorname{tr}\,C$, the trace of the centred covariance
#   $C = \tfrac{1}{n-1}(Z - \bar z)^\top (Z - \bar z)$ (`total_variance`).
# - Mean cosine: the mean of $\cos(z_i, z_j)$ over pairs of distinct rows (`mean_cosine`).
# - Participation ratio: $\mathrm{PR} = (\sum_i \lambda_i)^2 / \sum_i \lambda_i^2$ over the
#   eigenvalues $\lambda$ of $C$ (`participation_ratio`).
# - RankMe: with $\sigma$ the singular values of the raw, *uncentred* $Z$ and
#   $p_i = \sigma_i / \sum_j \sigma_j + 10^{-7}$, $\mathrm{RankMe} = \exp(-\sum_i p_i \ln p_i)$
#   (`rankme`). An exactly zero spectrum gives 1 for both counts. The
#   [technical note](20_rank_diagnostics) computes the worked example (singular values
#   $(3, 1, 0, 0)$: PR ≈ 1.22, RankMe ≈ 1.75) live.
#
# **Labels.** Accuracy of a linear probe (multinomial logistic regression on standardized
# features, its regularization strength chosen on held-out training rows), and balanced accuracy:
# the mean per-class recall over the *eligible* classes, those with at least 10 evaluation
# samples, frozen once before any comparison (`LinearProbe`, `balanced_accuracy`). Floor: the
# majority-class share.
#
# **Identity** (a reference ranking, no labels). Overlap@10: the share of a query's reference
# top-10 still in its top-10 after a change; changed queries: those whose top-10 set changed;
# the boundary margin: the reference score gap between ranks 10 and 11 (`overlap_at_k`,
# `boundary_margin`).
#
# **Relevance** (labels or relevance judgements). P@10: the share of a query's ten nearest
# neighbours by cosine (itself excluded) that share its attribute label, averaged over queries,
# against the random-neighbour floor $\sum_c (n_c/n)^2$ (`precision_at_k`, `random_floor`).
# Hit@$k$: at least one positive in the top $k$; caption recall@10: the share of an image's five
# captions in its top ten (`hit_at_k`, `recall_at_k`).
#
# **Uncertainty.** Training comparisons are paired differences over five seeds with Student-$t$
# 95% intervals, mean $\pm\, t_{0.975,4}\, s / \sqrt{5}$; retrieval changes get paired bootstrap
# intervals over image groups, captions carried with their image (`paired_t_interval`,
# `paired_bootstrap`). No multiplicity correction; five comparisons were declared before the runs.
