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
# # Image–caption retrieval: the study's 128-d pattern does not reproduce here
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
dims: list | None = None  # prefix dimensions compared with native; None: the study's 256, 128 of 768, in proportion
n_draws = 5000  # paired bootstrap draws of the image groups
seed = 0  # seed of the bootstrap draws and of the shuffled correspondence
n_permutations = 1000  # further shuffles that show how far one shuffle strays from chance
example: int | None = None  # image of the worked example; None: a typical one (cr.typical_image)

# %%
from IPython.display import Markdown, display

from embdiag.encoders.vectors import caption_vectors
from embdiag.study import caption_retrieval
from embdiag.paper.chapters import caption_retrieval as figures
from embdiag.interventions import caption_retrieval as cr
from embdiag.paper import findings
from embdiag.view import charts, exhibits
from embdiag.paper.real_encoder import variant_note

charts.enable()
vectors = caption_vectors(encoder, dataset, data_dir=data_dir, vectors_path=vectors_path)
measured = caption_retrieval.run(vectors, caption_retrieval.Settings(k=k, dims=dims, n_draws=n_draws, seed=seed,
                                                                     n_permutations=n_permutations))
result, changes, control, dims = measured.result, measured.changes, measured.control, measured.settings.dims
study = caption_retrieval.read_study()
example = cr.typical_image(result) if example is None else example
# What the data calls its images and captions, and the worked example's name.
item, items = vectors.item, figures.plural(vectors.item)
caption, captions = vectors.caption, figures.plural(vectors.caption)
label = figures.item_label(vectors, example)
# What captions say about the study's side and the uncertainty (the data is named once, above).
published = "the study's published values (EmbeddingGemma on COCO 2017 validation, data/study/caption_retrieval.csv)"
exact = "Exact values of one deterministic search (float64 scores), no uncertainty."
boot = (f"95% paired-bootstrap percentile interval over the {result.n_images:,} {item} groups ({n_draws:,} draws, "
        f"seed {seed}), conditional on these {items} and {captions}")
display(Markdown(variant_note(dataset, "caption retrieval") + figures.data_statement(vectors, result)))

# %%
verdicts = caption_retrieval.findings(measured, study)
findings.result(
    verdicts, "{held} of {measured} findings of the study's caption section hold on this data and encoder",
    figure=exhibits.figure(figures.intervals_chart(changes, study), name="changes-with-intervals",
                           caption=f"Compressed minus native (percentage points) per metric, direction and dimension: "
                                   f"this run's change (black diamond; the line is its {boot}); in grey, the changes "
                                   f"in {published}, with its printed intervals for Hit@10 only."))

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
exhibits.figure(figures.example_chart(vectors, example), name="example-image",
                caption=f"{label[0].upper() + label[1:]} of the caption groups, the worked example. An "
                        f"example, not a measurement.")

# %%
exhibits.table(figures.example_captions(result, vectors, example), name="example-captions", collapsed="The example's captions and their ranks", extremes=False,  # ranks: no highest to mark
               caption=f"The {captions} of {label} and, for each used as a text→image query, the rank of its "
                       f"parent {item} among all {result.n_images:,} {items} in each representation (1 = first). "
                       f"{exact}")

# %% [markdown]
# The search of its first caption that finds it in the top ten, best first, one row per
# representation; the parent is outlined in red (hover for scores).

# %%
exhibits.figure(figures.ranking_chart(result, vectors, example), name="ranking",
                data=figures.ranking_frame(result, example),
                caption=f"The top {k} {items} for one {caption} of {label} (its first that finds it in the "
                        f"native top {k}) as a text→image query, one row per representation, best first; the parent "
                        f"{item} is outlined in red and its rank given in the row label. {exact}")

# %% [markdown]
# And the reverse search: the same image's ten best captions in the native space, each with
# the image that owns it. Caption recall@10 counts how many of the five own captions appear.

# %%
exhibits.table(figures.caption_ranking_table(result, vectors, example), name="caption-ranking", collapsed="The example's ranked captions, one by one", extremes=False,  # ranks and scores of one query: no highest to mark
               caption=f"The {k} best {captions} for {label} as an image→text query in the native space: "
                       f"cosine score, {caption}, the {item} that owns it and whether it is one of {label}'s "
                       f"own. {exact}")

# %% [markdown]
# ## What compression costs
#
# The study's table for this run (percent): both directions and the image-only comparator, per
# representation.

# %%
exhibits.table(figures.percent_table(result), name="retrieval", extremes=True,  # every column: higher finds more
               caption=f"Per representation (native, and Matryoshka prefixes of {', '.join(map(str, dims))} "
                       f"dimensions), in percent: text→image Hit@1 and Hit@{k}; image→text Hit@1, Hit@{k} and "
                       f"caption recall@{k}; the image-only category P@{k}. {exact} The changes' intervals "
                       f"follow below.")

# %%
exhibits.figure(figures.metrics_chart(result), name="retrieval-by-dimension",
                caption=f"Hit@1, Hit@{k} and caption recall@{k} per representation on one fixed 0–100% axis, "
                        f"text→image and image→text. {exact} The changes' intervals follow below.")

# %% [markdown]
# Overlap with the native top ten: how many of the same captions or images a compressed search
# returns, whether or not they are relevant. The study's overlaps were measured on COCO with
# its own encoder.

# %%
exhibits.table(figures.overlaps_side_by_side(result, study), name="overlaps",
               caption=f"Overlap@{k} of each compressed top {k} with the native top {k} (percent; identity, not "
                       f"relevance), per representation and direction: this run beside {published}, – where it has "
                       f"none. {exact}")

# %% [markdown]
# ## How sure are the changes?
#
# Each change is compressed minus native over the same queries. The paired bootstrap draws the
# image groups with replacement (`n_draws` times); a drawn image brings all five
# of its captions as text→image queries and itself as an image→text query, and every metric
# uses the same draws. The intervals are conditional on these images and captions (the encoder
# is fixed). The study gave intervals for Hit@10 only (grey); its Hit@1 and caption recall
# changes are points. The result figure at the top of the page draws these changes with their
# intervals; the table gives every value.

# %%
exhibits.table(figures.changes_table(changes), name="changes", collapsed="Every change with its interval", extremes=False,  # rows hold different metrics
               caption=f"Per representation, direction and metric: native and compressed values (percent), their "
                       f"difference (pp) and its {boot}.")

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
exhibits.table(figures.control_table(control), name="shuffled-control", collapsed="The control's values, chance levels and shuffle percentiles", extremes=False,  # rows: different metrics
               caption=f"The shuffled-correspondence control on the native vectors, per direction and metric "
                       f"(percent): the real value, the value after one seeded shuffle of the image–caption "
                       f"correspondence (seed {seed}), its exact chance level, and the 2.5th and 97.5th percentiles "
                       f"of {n_permutations:,} further shuffles.")

# %%
exhibits.figure(figures.control_chart(control), name="shuffled-control-chart",
                data=figures.control_frame(control),
                caption=f"The same control on a log axis: real and shuffled values (dots), the exact chance (black "
                        f"tick) and the central 95% of {n_permutations:,} further shuffles (grey line); a shuffled "
                        f"value of zero cannot be drawn and is left out (the table shows it).")

# %%
display(Markdown(figures.control_statement(control, result, study)))

# %% [markdown]
# ## The study's numbers beside this run's
#
# Percent; the study's are COCO 2017 validation with its encoder, this run's are the data and
# encoder named above, so the levels are not comparable number for number; the pattern is.

# %%
exhibits.table(figures.side_by_side(result, study), name="study-vs-this-run", collapsed="The study's table beside this run's", extremes=False,  # metrics as rows
               caption=f"Every metric of the study's table per representation (percent): {published} beside this "
                       f"run's, – where the study has no such representation. {exact}")

# %% [markdown]
# ## Does each finding hold here?
#
# Each finding of the study's caption section is a claim with a declared margin, in
# `embdiag.study.caption_retrieval.CRITERIA`, decided by 95% intervals, never by a
# point estimate: it holds when every interval lies on the claim's side of its margin, is
# contradicted when one lies wholly on the other side, and is inconclusive when one straddles
# it. This run's intervals are the paired bootstraps over image groups above (the level of
# Hit@10 and each fall against twice the Hit@10 fall from the same draws); the control's is
# the central 95% of the further shuffles. The same rule is applied to the study's published
# numbers (`data/study/caption_retrieval.csv`): its printed Hit@10 intervals, and Wilson
# intervals over its queries for its levels and its shuffle. Where a criterion changed, the
# table keeps the old one and its point-estimate verdict on this run.

# %%
display(Markdown(figures.level_statement(changes)))

# %%
exhibits.table(findings.table(verdicts), name="findings", collapsed="Each finding's criterion and the numbers behind its verdict", extremes=False,
               caption=f"Each finding of the study's caption section: its criterion and margin "
                       f"(embdiag.study.caption_retrieval.CRITERIA), the numbers behind it in {published} and in this run, its "
                       f"verdict in each with the intervals that decided it, and the old criterion with its "
                       f"point-estimate verdict. This run's changes and levels with their {boot}.")

# %% [markdown]
# **Scope.** One encoder on one set of caption groups, both named at the top of the page; by
# default this project's reference encoder, trained with a Matryoshka loss at 768, 512, 256
# and 128 dimensions, on 1,000 procedural caption groups whose template captions state only
# what the renderer drew. Whether a prefix costs fine-grained retrieval depends on how the
# encoder was trained and on what the captions can tell apart; these results say what happens
# to this encoder on this data, not to EmbeddingGemma on COCO.
