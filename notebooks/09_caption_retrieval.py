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
# # Image–caption retrieval: one caption's image, one image's captions
#
# The study's last fixed-encoder experiment asks whether the Matryoshka prefixes that cost
# the driving probes little also keep **cross-modal search** intact. Its encoder put COCO
# images and their human captions into one space; 1,000 images with five captions each were
# searched in both directions at 768, 256 and 128 dimensions. Its finding: at 256 dimensions
# the change is small, but at 128 dimensions Hit@10 stays high while Hit@1 and the share of
# an image's captions recovered fall several times more, so a single "did it find something"
# number hides the loss. This chapter repeats the experiment on this project's data and
# encoder: both searches, per-query results, paired bootstrap intervals over image groups,
# a shuffled-correspondence control, and the study's numbers beside this run's.
#
# By default the data are **procedural caption groups**: synthetic driving scenes rendered
# by `embdiag.data`, each with five template captions stating the scene's own facts. They
# are **not COCO**, and no number below is a COCO result; `dataset = "coco"` with `data_dir`
# runs the same chapter on COCO 2017 validation.

# %% tags=["parameters"]
encoder = "reference-cnn"  # registry name of the encoder (reference-cnn, reference-vit, ...)
dataset = "procedural"  # "procedural" caption groups (generated) or "coco" (COCO 2017 val under data_dir)
data_dir = None  # folder of the real dataset (COCO 2017 with annotations/ and val2017/)
vectors_path = None  # a user's own vectors (.npz: images, queries, optional documents, group) instead
k = 10  # cut-off of Hit@k, caption recall@k, overlap@k and category P@k
dims = [256, 128]  # Matryoshka prefix dimensions compared with the native vectors
n_draws = 5000  # paired bootstrap draws of the image groups
seed = 0  # seed of the bootstrap draws and of the shuffled correspondence
n_permutations = 1000  # further shuffles that show how far one shuffle strays from chance
example = None  # image of the worked example; None: a typical one (cr.typical_image)

# %%
from IPython.display import Markdown, display

from embdiag.encoders.vectors import caption_vectors
from embdiag.interventions import caption_figures as figures
from embdiag.interventions import caption_retrieval as cr
from embdiag.paper import charts

charts.enable()
vectors = caption_vectors(encoder, dataset, data_dir=data_dir, vectors_path=vectors_path)
result = cr.evaluate(vectors.images, vectors.queries, vectors.documents, vectors.group, vectors.categories,
                     dims=dims, k=k)
changes = cr.bootstrap_changes(result, n_draws=n_draws, seed=seed)
control = cr.shuffled_control(result, seed=seed, n_permutations=n_permutations)
study = figures.published()
example = cr.typical_image(result) if example is None else example
display(Markdown(figures.data_statement(vectors, result)))

# %% [markdown]
# ## Two searches in one space
#
# **Text→image:** every caption, embedded with the encoder's *query* prompt, ranks the
# images by cosine; its one positive is its parent image. **Image→text:** every image ranks
# the captions embedded with the *document* prompt; its positives are its own captions.
# Per query:
#
# * **Hit@1**: the first result is a positive; **Hit@k**: a positive is among the first $k$;
# * **caption recall@k** (image→text): the share of the image's captions among its first $k$
#   results; finding *one* caption and finding *all* of them are different tasks;
# * **overlap@k**: the share of the native top-$k$ identities that a compressed search keeps
#   (identity, not relevance);
# * **category P@k**, an image-only comparator: each image queries the *other* images; for an
#   eligible object category $c$, P@k($c$) is the mean, over the images containing $c$, of the
#   share of their $k$ neighbours that also contain $c$; category P@k averages P@k($c$) over
#   the eligible categories, each counting once. A category is **eligible** when at least ten
#   images contain it and at least ten lack it (the balanced-accuracy support floor, applied to
#   both sides).
#
# Compression is the Matryoshka prefix: the leading coordinates of every vector (images and
# captions alike), renormalized to unit length. The search is exact (float64 scores).

# %%
display(Markdown(figures.categories_statement(vectors, result)))

# %% [markdown]
# ## A worked example
#
# A typical image (unless the `example` parameter names one): the first image whose share of
# captions that find it in the top ten matches the overall text→image Hit@10, rounded to
# fifths. Its five captions, and for each caption used as a text→image query the rank of its
# parent among all images in every representation: Hit@1 counts a rank of 1, Hit@10 any rank
# up to 10.

# %%
figures.example_chart(vectors.image_pixels, example)

# %%
figures.example_captions(result, vectors.captions, example)

# %% [markdown]
# The search of its first caption that finds it in the top ten, best first, one row per
# representation; the parent is outlined in red (hover for scores).

# %%
figures.ranking_chart(result, vectors.image_pixels, example)

# %% [markdown]
# And the reverse search: the same image's ten best captions in the native space, each with
# the image that owns it. Caption recall@10 counts how many of the five own captions appear.

# %%
figures.caption_ranking_table(result, vectors.captions, example)

# %% [markdown]
# ## What compression costs
#
# The study's table for this run (percent): both directions and the image-only comparator, per
# representation.

# %%
figures.percent_table(result)

# %%
figures.metrics_chart(result)

# %% [markdown]
# Overlap with the native top ten: how many of the same captions or images a compressed search
# returns, whether or not they are relevant. The study's overlaps were measured on COCO with
# its own encoder.

# %%
figures.overlaps_side_by_side(result, study)

# %% [markdown]
# ## How sure are the changes?
#
# Each change is compressed minus native over the same queries. The paired bootstrap draws the
# image groups with replacement (`n_draws` times); a drawn image brings all five
# of its captions as text→image queries and itself as an image→text query, and every metric
# uses the same draws. The intervals are conditional on these images and captions (the encoder
# is fixed). The study gave intervals for Hit@10 only (grey); its Hit@1 and caption recall
# changes are points.

# %%
figures.intervals_chart(changes, study)

# %%
figures.changes_table(changes)

# %%
display(Markdown(figures.changes_statement(changes, result, study)))

# %% [markdown]
# ## The shuffled-correspondence control
#
# The rankings stay exactly as they are; only the answer key changes: a seeded permutation
# of the images hands each image the five captions of another. A metric that still scored
# well would be measuring something other than correspondence. Its chance level is exact:
# text→image Hit@k is $k/n$ (a caption's new parent is uniform over the $n$ images);
# image→text Hit@k is $\bar m / n$, where $m_i$ is the number of distinct images that own
# image $i$'s top $k$ captions (between 2 and $k$ for groups of five), because the image
# receives one whole random group. In the chart (log axis) the black tick is the exact
# chance, the grey line the central 95% of `n_permutations` further shuffles, and a shuffled value of
# zero is left out (the table shows it).

# %%
figures.control_table(control)

# %%
figures.control_chart(control)

# %%
display(Markdown(figures.control_statement(control, result, study)))

# %% [markdown]
# ## The study's numbers beside this run's
#
# Percent; the study's are COCO 2017 validation with its encoder, this run's are the data and
# encoder named above, so the levels are not comparable number for number; the pattern is.

# %%
figures.side_by_side(result, study)

# %% [markdown]
# ## Does each finding hold here?
#
# Each finding of the study's caption section is restated as a criterion, declared in
# `embdiag.interventions.caption_figures.CRITERIA`, and applied to the study's published
# numbers (`data/study/caption_retrieval.csv`) and to this run's.

# %%
verdicts = figures.findings(changes, control, study)
figures.findings_table(verdicts)

# %%
display(Markdown(figures.summary(verdicts)))

# %% [markdown]
# **Scope.** One encoder, trained by this project with a Matryoshka loss at 768, 512, 256 and
# 128 dimensions, measured on 1,000 procedural caption groups whose template captions state
# only what the renderer drew. Whether a prefix costs fine-grained retrieval depends on how the
# encoder was trained and on what the captions can tell apart; these results say what happens
# to this encoder on this data, not to EmbeddingGemma on COCO.
