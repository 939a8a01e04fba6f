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
# # Can you trust an embedding?
#
# *An executable case study: four properties of one set of vectors, each measured with its own
# instrument.*
#
# The study's headline comes from training; this project's own training runs put it to the test
# at several training lengths (the chapter [Training evidence](03_training) decides each finding):

# %% tags=["parameters"]
profile = "cpu"  # training profile whose lengths (data/training/<profile>, <profile>-steps<N>) give the headline
attribute = "timeofday"  # attribute of the headline numbers: timeofday, weather or scene

# %%
from IPython.display import Markdown, display

from embdiag.paper import diagrams
from embdiag.view import charts, exhibits
from embdiag.paper.chapters import training as chapter
from embdiag.study import training

charts.enable()
chapter.headline_result(training.run(training.Settings(profile=profile, attribute=attribute)))

# %% [markdown]
# **Problem.** Embedding vectors drive classification and search, and label-free geometry
# (spread, direction, spectral breadth) is cheap to measure. When such a measurement raises an
# alarm, does it say which task has stopped working?
#
# **Approach.** We separate four properties of one set of vectors and give each its own
# instrument:
#
# | property | question | instrument | needs labels |
# |---|---|---|---|
# | Distribution | how do the vectors spread? | total variance, mean cosine, RankMe, participation ratio | no |
# | Labels | what can a fitted classifier recover? | linear-probe accuracy, balanced accuracy | yes |
# | Identity | which exact neighbours stay nearby? | top-10 overlap, changed queries, rank-10/11 margin | no (a reference ranking) |
# | Relevance | how much of the target set is found? | P@10 attribute agreement, Hit@k, caption recall@10 | yes |
#
# Two designs exercise them: small JEPA encoders trained under seven conditions that switch
# collapse protections on and off, and a fixed encoder whose cached vectors are changed after
# the fact (stress tests, compression, storage precision) and used for image–caption search.
#
# **Finding.** These are different properties, and an alarm on one says little about the
# others: evaluate the one your application needs.

# %% [markdown]
# ## Four properties, four instruments
#
# The schematic below is a drawing, not data: forty made-up points in a plane, to fix what each
# instrument looks at. **Distribution** asks how the cloud spreads (its principal axes), with no
# labels. **Labels** asks whether a fitted linear boundary can separate the classes. **Identity**
# asks whether a query's exact nearest neighbours are still the same after a change to the
# vectors. **Relevance** asks whether the neighbours found are the ones wanted (here: share the
# query's label). A change can move one of these and leave the others where they were.

# %%
exhibits.figure(diagrams.four_properties(), name="four-properties", reads=[],
                caption="Schematic of the four properties (an illustration, not data): forty made-up points "
                        "in a plane, their spread, a linear class boundary, a query's exact top-3 before and "
                        "after a change, and which of its top-3 share its label.")

# %% [markdown]
# ## Which data produced the numbers
#
# The machines that build this book cannot download BDD100K, COCO or a pretrained encoder. The
# book therefore runs on the project's **embedded default**: procedurally generated driving scenes
# with BDD100K's attribute vocabulary and five captions per image that describe each scene; small
# JEPA encoders the project trains itself on those scenes (the training chapters, from committed
# records that `embdiag train` regenerates); and two small image–text dual encoders the project
# trains itself in place of the study's pretrained encoder (the fixed-encoder chapters, from
# committed weights that `python -m embdiag.encoders.train` regenerates). Each chapter states at
# its top which data and encoder produced its numbers. **None of them are BDD100K or COCO
# results**; where the published study's numbers appear beside ours, they are labelled as such.
#
# The real loaders and Hugging Face encoders are one parameter away (`dataset`, `data_dir`,
# `encoder`), and every fixed-encoder chapter also reads your own vectors (see
# [Reproduce](24_reproduce)):
#
# ```bash
# embdiag chapter stress_tests -p vectors_path my_vectors.npy -p labels_path my_labels.csv --out my_pages
# ```
#
# ## How to read this site
#
# The **study** runs in the order of the published one: the motivation and approach, the data,
# the training evidence, the fixed encoder, its stress tests, compression, neighbour stability
# under storage precision, and image–caption retrieval, then the conclusions with the published
# values beside this run's. **On a real encoder** runs the four fixed-encoder chapters again on a
# real pretrained text encoder (WordLlama) over a real lexical database (WordNet 3.0) and sets
# every fixed-encoder finding's verdict on the three encoders side by side. The **appendix** holds
# every training variant, the second encoder's replication, the exact responses of the metrics and
# the technical note on rank diagnostics.
# Under every figure and table a line names the chapter source that made it and the artifacts
# it read, with their checksums, and a link downloads its data as CSV.
#
# ```{tableofcontents}
# ```

# %% [markdown]
# ## Cite this
#
# The project's `CITATION.cff`, as BibTeX:

# %%
from embdiag.paper import citation

display(Markdown(f"```bibtex\n{citation.bibtex()}\n```"))
