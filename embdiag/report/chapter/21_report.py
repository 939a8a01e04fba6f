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
# # Report: can you trust these vectors?
#
# Most people who use embeddings have no JEPA to retrain. They have vectors and a question: did
# my storage format, my compression, my approximate index or my new model keep what my
# application needs? This chapter answers it on any set of vectors, for the four properties of
# the study: the distribution of the vectors (no labels), the labels a linear probe recovers,
# whether each query keeps its exact top-k neighbours, and what a change costs in relevance,
# with paired intervals. It is the chapter that `embdiag report` runs on your files:
#
# ```
# embdiag report vectors.npy --labels labels.csv \
#     --compress fp16,int8,pca256 --index hnsw --out report/
# ```
#
# writes `report/report.html` (this page for your vectors, one file that opens offline),
# `report/report.json` (every number) and one CSV per table. Without a file, as in the book, it
# measures the project's own cached embeddings: the reference encoder on the procedural driving
# scenes, not BDD100K or COCO. The **Data** line below names the vectors that produced every
# number on this page.

# %% tags=["parameters"]
vectors_path = None  # the vectors (.npy, .npz, .parquet, .safetensors; n x d); None: the project's cached vectors
labels_path = None  # CSV or parquet: one row per vector, one column per attribute (optional `id` column)
compare_path = None  # a second representation of the same n items (another model, a quantized copy)
pairs_path = None  # CSV of (query, target) positives for Hit@k and recall@k
qrels_path = None  # CSV of (query, document, grade) judgments for nDCG, MRR, MAP and recall
queries_path = None  # a separate query set searched against the vectors
encoder = "reference-cnn"  # without vectors_path: the registered encoder whose cached vectors are measured
compress = "fp16,int8,pca64,prefix64"  # representations made from the vectors ('' for none)
index = "hnsw,ivfpq"  # approximate nearest-neighbour indexes compared with exact search ('' for none)
k = 10  # neighbours per query
stress = False  # also run the stress grid (needs labels)
quick = False  # subsample for a first look in under a minute (said in the report)
seed = 0  # seed of every sample, split and bootstrap
margin = 1.0  # loss margin of every relevance change, in percentage points: the verdicts' non-inferiority margin
out_dir = None  # where report.json and the CSVs are saved (set by `embdiag report`)
progress = False  # progress bars on stderr for the long steps (set by `embdiag report`)
timings = False  # show this run's index speeds (queries/s, build time), not reproducible (set by `embdiag report`)
cluster: str | None = None  # Ray cluster address (auto, ray://HOST:PORT, local[:N]): exact searches run there, sharded
fail_if = []  # --fail-if rules, e.g. ["overlap@10<0.95"]: checked before measuring, outcomes shown last

# %%
from IPython.display import display

from embdiag.cluster import maybe_connect
from embdiag.view import charts
from embdiag.paper import report_view as view
from embdiag.report import measure
from embdiag.report.cli import chapter_inputs

charts.enable()
with maybe_connect(cluster):  # one connection for the input check and the searches (none without a cluster)
    data, source, files = chapter_inputs(
        vectors_path,
        labels_path=labels_path,
        compare_path=compare_path,
        pairs_path=pairs_path,
        qrels_path=qrels_path,
        queries_path=queries_path,
        encoder=encoder,
        cluster=cluster,
        index=index,
    )
    report = measure(
        **data,
        compress=compress,
        index=index,
        k=k,
        stress=stress,
        quick=quick,
        seed=seed,
        margin=margin,
        progress=progress,
        sources=files,
        cluster=cluster,
        fail_if=fail_if,
    )
saved = report.save(out_dir) if out_dir else []
display(view.result(report), view.overview(report, source))

# %% [markdown]
# ## Summary: what each condition changes
#
# One row per condition, with a verdict in words by the rule stated under the table; the
# sections below give every number behind it.

# %%
display(*view.section(report, "summary"))

# %% [markdown]
# ## Conditions compared
#
# The conditions are what the reference vectors are compared with: a second file, a storage
# format or compression made here, or an approximate index searched instead of exact search.

# %%
display(*view.section(report, "conditions"))

# %% [markdown]
# ## Distribution: geometry without labels
#
# Geometry needs no labels: how spread the vectors are, how much they share one direction, and
# how many directions carry their variance. Each representation is measured twice, in tables
# that are not to be mixed: on its raw rows (as given, or as a storage format or compression makes
# them) and on its unit rows (each divided by its norm, what cosine search compares). A condition
# that changes these numbers changes the shape of the space; one that keeps them may still
# reorder neighbours.

# %%
display(*view.section(report, "geometry"))

# %% [markdown]
# ## Recoverable labels: probes and P@k
#
# A linear probe's balanced accuracy (fitted on part of the labelled rows, evaluated on
# the rest) and P@k (the share of each query's k nearest neighbours with its label), each beside
# its chance floor.

# %%
display(*view.section(report, "labels"))

# %% [markdown]
# ## Neighbour identity: does the exact top-k survive?
#
# The study's finding is that neighbour identity can change while everything above
# stays put. Queries whose k-th and (k+1)-th reference scores lie close together (a small
# boundary margin) are the ones that change; for storage formats a float certificate proves
# which queries cannot.

# %%
display(*view.section(report, "identity"))

# %% [markdown]
# ## Approximate indexes: recall along each knob

# %%
display(*view.section(report, "indexes", timings=timings))

# %% [markdown]
# ## Relevance: what the changes cost
#
# Whether the changed neighbours are worse ones. Each change is the condition's
# per-query value minus the reference's, averaged, with a paired bootstrap interval over the
# searched queries.

# %%
display(*view.section(report, "relevance"))

# %% [markdown]
# ## Stress grid
#
# On request (`--stress`), the reference vectors go through the study's declared interventions
# (contraction, common offset, rank restriction, noise) at each severity, and every metric above
# is measured again: how sensitive each number is, not what the user's pipeline does.

# %%
display(*view.section(report, "stress"))

# %% [markdown]
# ## The frontier: what each condition keeps for its bytes
#
# The Pareto set holds the conditions that no other matches or beats on bytes, identity and
# relevance at once; with `--fail-if` rules, the smallest condition that passes every one is
# named.

# %%
display(*view.section(report, "frontier"))

# %% [markdown]
# ## Gates: the `--fail-if` rules
#
# Each rule given to `embdiag report --fail-if`, checked before anything was measured (its metric,
# conditions and attributes exist for these inputs) and here on every row it selects.

# %%
display(*view.section(report, "gates"))
