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
target_recall = 0.95  # the recall@k an index setting must reach: the cheapest swept setting that does is named
out_dir = None  # where report.json and the CSVs are saved (set by `embdiag report`)
progress = False  # progress bars on stderr for the long steps (set by `embdiag report`)
timings = False  # show this run's index speeds (queries/s, build time), not reproducible (set by `embdiag report`)
cluster: str | None = None  # Ray cluster address (auto, ray://HOST:PORT, local[:N]): exact searches run there, sharded
fail_if = ["delta_p@10.low<-1"]  # --fail-if rules at this k ([] for none), checked before measuring

# %%
import shlex

from IPython.display import display

from embdiag.cluster import maybe_connect
from embdiag.report import measure, page, sections
from embdiag.report.cli import chapter_inputs

sections.enable()
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
        target_recall=target_recall,
        progress=progress,
        sources=files,
        cluster=cluster,
        fail_if=fail_if,
    )
saved = report.save(out_dir) if out_dir else []
command = page.command(page.recorded(report))
if vectors_path is None:  # the cached vectors, written as the files the command reads
    command = shlex.join(["embdiag", "vectors", "--encoder", encoder, "--out", "."]) + "\n" + command
display(*sections.head(report, source, command))

# %% [markdown]
# The command above measures the same on your own files: it writes this page's sections to
# `report/report.html` (one file that opens offline), every number to `report/report.json` and one
# CSV per table. Add `--fail-if` rules (e.g. `overlap@10<0.9`) to gate a pipeline: the result box
# then names the smallest condition passing every rule.

# %% [markdown]
# ## Hygiene: the vectors before they are measured

# %%
display(*sections.show(report, "hygiene"))

# %% [markdown]
# ## Summary: what each condition changes

# %%
display(*sections.show(report, "summary"))

# %% [markdown]
# ## Conditions compared

# %%
display(*sections.show(report, "conditions"))

# %% [markdown]
# ## Distribution: geometry without labels

# %%
display(*sections.show(report, "geometry"))

# %% [markdown]
# ## Recoverable labels: probes and P@k

# %%
display(*sections.show(report, "labels"))

# %% [markdown]
# ## Neighbour identity: does the exact top-k survive?

# %%
display(*sections.show(report, "identity"))

# %% [markdown]
# ## Hubness: where the damage hides

# %%
display(*sections.show(report, "hubness"))

# %% [markdown]
# ## Approximate indexes: recall along each knob

# %%
display(*sections.show(report, "indexes", timings=timings))

# %% [markdown]
# ## Relevance: what the changes cost

# %%
display(*sections.show(report, "relevance"))

# %% [markdown]
# ## Stress grid

# %%
display(*sections.show(report, "stress"))

# %% [markdown]
# ## The frontier: what each condition keeps for its bytes

# %%
display(*sections.show(report, "frontier"))

# %% [markdown]
# ## Gates: the `--fail-if` rules

# %%
display(*sections.show(report, "gates"))
