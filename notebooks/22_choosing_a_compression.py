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
# # Choosing a compression

# %% tags=["parameters"]
encoder = "reference-cnn"  # the registered encoder whose cached vectors are measured
compress = "fp16,fp8,int8,int8cal,st-int8,mteb-int8,int4,binary,binary-rescore,pca256,pca128,prefix256,prefix128"  # conditions
index = "hnsw,ivfpq;faiss:IVF64,SQ8"  # approximate indexes compared with exact search (';' before a FAISS factory string)
k = 10  # neighbours per query
fail_if = ["overlap@10<0.9", "delta_p@10.low<-1"]  # the gates, each stating its failing side
seed = 0  # seed of every sample, split and bootstrap

# %%
import shlex

from IPython.display import Markdown, display

from embdiag.paper import scale
from embdiag.report import measure, page, sections
from embdiag.report.cli import chapter_inputs
from embdiag.view import exhibits

sections.enable()
data, source, files = chapter_inputs(None, encoder=encoder)
report = measure(**data, compress=compress, index=index, k=k, seed=seed, progress=False, fail_if=fail_if)
command = shlex.join(["embdiag", "vectors", "--encoder", encoder, "--out", "."])  # the cached vectors as files
display(
    sections.frontier.result(report),
    sections.overview(report, source, f"{command}\n{page.command(page.recorded(report))}"),
    sections.sampling(report),
)

# %% [markdown]
# A vector store pays for every byte of every vector: which compression should it keep? Each
# storage format, truncation and index is weighed for what it keeps of neighbour identity and of
# relevance against the bytes one vector takes. The commands above run the same measurement on
# these vectors written as files; the second alone measures your own.

# %% [markdown]
# ## The frontier
#
# Fewest bytes first. Bytes count what one vector takes: not a shared calibration table, PCA basis
# or index codebook, and not search speed. The folded list says what each condition is and which
# stack's codes and scores it follows.

# %%
display(sections.frontier.ranked(report), sections.conditions.described(report))

# %% [markdown]
# ## Proof beside measurement: which queries cannot change
#
# A query whose rank-k/rank-(k+1) margin exceeds twice the largest score change a condition can
# cause keeps its exact top-k. The bound comes from each vector's rounding error (storage) or the
# angle it loses (truncation: no cosine moves by more than $1 - \cos(\theta_q + \theta_g)$); sign
# bits and indexes have none.

# %%
display(sections.identity.certificates(report))

# %% [markdown]
# ## Approximate indexes: a curve, not a point
#
# An index's knob trades recall for speed, so each index is searched at every value of its knob;
# recall is tie-aware, as ann-benchmarks counts it. The x axis is the knob, not speed: a timing
# changes from run to run, and this page re-executes byte for byte.

# %%
display(*sections.indexes.exhibits(report))

# %% [markdown]
# ### Recall against speed on a large gallery
#
# Speed is read from the frontier benchmark's record (`python benchmarks/bench_frontier.py`):
# the same measurement on synthetic clustered vectors, not this page's.

# %%
curves, run, bench = scale.frontier()
display(Markdown(
    f"**Measured on:** {bench['processor']} ({bench['cores']} cores), FAISS on every core; "
    f"{bench['n']:,} x {bench['d']} synthetic vectors (40 clusters), {bench['queries']:,} searched queries. "
    f"The whole frontier of {run['conditions']:.0f} conditions, intervals and certificates included, took "
    f"{run['wall_s']:,.0f} s with a peak of {run['peak_rss_gib']:.1f} GiB "
    f"({'within' if run['wall_s'] < 300 else 'beyond'} the target of 5 minutes on two cores)."))
exhibits.figure(
    sections.indexes.curve_chart(curves, k), name="frontier-index-speed",
    caption=(
        f"recall@{k} of each index at each knob value against its queries per second, on the machine named "
        "above (one run, no interval). Filled marks: each index's default."))

# %% [markdown]
# ## What the changes cost, with intervals
#
# The intervals the gates and the frontier's lowest bound read.

# %%
display(*sections.relevance.exhibits(report))

# %% [markdown]
# ## Where the damage hides: the anti-hub tail
#
# An average over all queries can hide a condition that loses the queries whose own row is nobody's
# neighbour (anti-hubs): each condition is shown on them beside all queries.

# %%
display(*sections.hubness.exhibits(report))

# %% [markdown]
# ## The gates
#
# A rule on an interval's lower end (`.low`) fails a condition whose change *could* pass the
# threshold, not only one whose measured change does.

# %%
display(*sections.gates.exhibits(report))

# %% [markdown]
# ## Scope

# %%
Markdown(
    f"One set of {report.inputs['n']:,} vectors ({encoder}), k = {k}, seed {seed}: another encoder's vectors can "
    "order the conditions differently, which is why the report runs on your own. Bytes are not speed: Hamming "
    "search and int8 kernels have their own throughput, not measured here; index speed comes from the benchmark "
    "machine named above, not yours."
)
