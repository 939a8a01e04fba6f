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
# # Image–caption retrieval

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
verdicts = caption_retrieval.findings(measured, study)
example = cr.typical_image(result) if example is None else example
# What the data calls its images and captions, and the worked example's name.
item, items = vectors.item, figures.plural(vectors.item)
caption, captions = vectors.caption, figures.plural(vectors.caption)
label = figures.item_label(vectors, example)
# What captions say about the study's side and the uncertainty (the data is named once, below the result).
published = "the study's published values"
exact = "Exact values of one deterministic search: no uncertainty."
boot = (f"95% paired-bootstrap percentile interval over the {result.n_images:,} {item} groups ({n_draws:,} draws, "
        f"seed {seed}), conditional on these {items} and {captions}")

# %%
findings.result(
    verdicts, "{held} of {measured} findings of the study's caption section hold on this data and encoder",
    figure=exhibits.figure(figures.intervals_chart(changes, study), name="changes-with-intervals",
                           caption=f"Compressed minus native (percentage points) per metric, direction and "
                                   f"dimension: this run (black diamond and its 95% paired-bootstrap interval over "
                                   f"the {result.n_images:,} {item} groups) and {published} (grey; intervals for "
                                   f"Hit@{k} only)."))

# %%
display(Markdown(variant_note(dataset, "caption retrieval") + figures.data_statement(vectors, result)
                 + " The study's values: EmbeddingGemma on COCO 2017 validation (data/study/caption_retrieval.csv)."))

# %% [markdown]
# **The study's question and answer.** Its encoder put 1,000 COCO validation images and their
# five human captions each into one space, searched in both directions at 768, 256 and 128
# dimensions. It found the 256-d change small; at 128-d Hit@10 stayed high while Hit@1 and the
# share of an image's captions recovered fell several times more. This page repeats the
# experiment on the data and encoder named above, with paired bootstrap intervals over image
# groups and a shuffled-correspondence control.
#
# ## Two searches in one space
#
# **Text→image:** each caption ranks the images by cosine; its one positive is its parent.
# **Image→text:** each image ranks the captions; its positives are its own captions. Per query,
# **Hit@1** and **Hit@k** ask whether a positive is first or among the first $k$; **caption
# recall@k** is the share of the image's captions among its first $k$; **overlap@k** the share
# of the native top-$k$ identities a compressed search keeps. **Category P@k**, an image-only
# comparator, averages over eligible object categories (at least ten images with and ten
# without) the share of an image's $k$ nearest images that share the category. Compression is
# the Matryoshka prefix: the leading coordinates, renormalized; the search is exact.

# %%
display(Markdown(figures.categories_statement(vectors, result)))

# %% [markdown]
# ## A worked example
#
# A typical image (unless the `example` parameter names one): the first whose share of
# captions finding it in the top k matches the overall text→image Hit@k.

# %%
display(exhibits.figure(figures.example_chart(vectors, example), name="example-image",
                        caption=f"{label[0].upper() + label[1:]}, the worked example."))
display(exhibits.table(figures.example_captions(result, vectors, example), name="example-captions",
                       collapsed="The example's captions and their ranks", extremes=False,  # ranks: no highest
                       caption=f"The {captions} of {label} and, for each used as a text→image query, the rank of "
                               f"its parent {item} among all {result.n_images:,} {items} in each representation "
                               f"(1 = first). {exact}"))
display(exhibits.figure(figures.ranking_chart(result, vectors, example), name="ranking",
                        data=figures.ranking_frame(result, example),
                        caption=f"The top {k} {items} for {label}'s first {caption} that finds it in the native top "
                                f"{k}, one row per representation, best first; the parent is outlined in "
                                f"{figures.colour_name(figures.PARENT)}, its rank in the row label. {exact}"))
exhibits.table(figures.caption_ranking_table(result, vectors, example), name="caption-ranking",
               collapsed="The example's ranked captions, one by one", extremes=False,  # one query's ranks
               caption=f"The {k} best {captions} for {label} as an image→text query in the native space: "
                       f"cosine score, {caption}, the {item} that owns it and whether it is one of {label}'s "
                       f"own. {exact}")

# %% [markdown]
# ## What compression costs

# %%
display(exhibits.table(figures.percent_table(result), name="retrieval", extremes=True,  # higher finds more
                       caption=f"Per representation (native, and prefixes of {', '.join(map(str, dims))} "
                               f"dimensions), in percent: Hit@1 and Hit@{k} in both directions, image→text caption "
                               f"recall@{k}, and category P@{k}. {exact}"))
display(exhibits.figure(figures.metrics_chart(result), name="retrieval-by-dimension",
                        caption=f"Hit@1, Hit@{k} and caption recall@{k} per representation on one 0–100% axis, "
                                f"both directions. {exact}"))
display(exhibits.table(figures.overlaps_side_by_side(result, study), name="overlaps",
                       collapsed="Overlap with the native top k, beside the study's",
                       caption=f"Overlap@{k} of each compressed top {k} with the native top {k} (percent; identity, "
                               f"not relevance), per representation and direction: this run beside {published}, – "
                               f"where it has none. {exact}"))
exhibits.table(figures.changes_table(changes), name="changes", collapsed="Every change with its interval",
               extremes=False,  # rows hold different metrics
               caption=f"Per representation, direction and metric: native and compressed values (percent), their "
                       f"difference (pp) and its {boot}.")

# %%
display(Markdown(figures.changes_statement(changes, result, study)))

# %% [markdown]
# ## The shuffled-correspondence control
#
# The rankings stay as they are; a seeded permutation of the images hands each image the
# captions of another. Its chance level is exact: text→image Hit@k is $k/n$ over $n$ images;
# image→text Hit@k is $\bar m / n$, where $m_i$ is the number of distinct images owning image
# $i$'s top $k$ captions.

# %%
display(exhibits.figure(figures.control_chart(control), name="shuffled-control-chart",
                        data=figures.control_frame(control),
                        caption=f"Real and shuffled values (dots, log axis), the exact chance (black tick) and the "
                                f"central 95% of {n_permutations:,} further shuffles (grey line); a shuffled value "
                                f"of zero is left out."))
display(exhibits.table(figures.control_table(control), name="shuffled-control",
                       collapsed="The control's values, chance levels and shuffle percentiles",
                       extremes=False,  # rows: different metrics
                       caption=f"The control on the native vectors, per direction and metric (percent): the real "
                               f"value, one seeded shuffle (seed {seed}), its exact chance level, and the 2.5th and "
                               f"97.5th percentiles of {n_permutations:,} further shuffles."))
display(Markdown(figures.control_statement(control, result, study)))

# %% [markdown]
# ## Does each finding hold here?
#
# Each finding is a claim with a margin declared in
# `embdiag.study.caption_retrieval.CRITERIA`, decided by 95% intervals: this run's paired
# bootstraps over image groups and the central 95% of the further shuffles; for the study, its
# printed Hit@10 intervals and Wilson intervals over its queries.

# %%
display(Markdown(figures.level_statement(changes)))
display(exhibits.table(figures.side_by_side(result, study), name="study-vs-this-run",
                       collapsed="The study's table beside this run's", extremes=False,  # metrics as rows
                       caption=f"Every metric of the study's table per representation (percent): {published} beside "
                               f"this run's, – where the study has no such representation. {exact}"))
exhibits.table(findings.table(verdicts), name="findings",
               collapsed="Each finding's criterion and the numbers behind its verdict", extremes=False,
               caption=f"Each finding of the study's caption section: its criterion and margin, the numbers behind "
                       f"it in {published} and in this run, its verdict in each with the intervals that decided "
                       f"it, and the old criterion with its point-estimate verdict. This run's changes and levels "
                       f"with their {boot}.")

# %% [markdown]
# **Scope.** One encoder on one set of caption groups, both named under the result. Whether a
# prefix costs fine-grained retrieval depends on how the encoder was trained and on what the
# captions can tell apart: these results describe that encoder on that data.
