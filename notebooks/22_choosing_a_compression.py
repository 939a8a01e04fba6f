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
# # Choosing a compression: what each byte of a vector buys
#
# A vector store pays for every byte of every vector, so the question after "does a compression
# hurt?" is "which one should I keep?". This page answers it for one set of vectors with the
# same instrument as the report: each storage format, truncation and approximate index is
# measured for what it keeps of neighbour identity (overlap@10 with exact search on the
# reference) and of relevance (P@10 per label column, with paired 95% intervals), against the
# bytes one vector takes. The conditions that no other matches or beats on all of these at once
# form the **Pareto set**; the declared gates name the **smallest condition that passes** them.
# Every number comes from `embdiag report`'s measurement (`embdiag.report.measure`), which the
# same command runs on your files:
#
# ```
# embdiag report vectors.npy --labels labels.csv \
#     --compress fp16,int8,int4,binary-rescore,prefix128 --index "hnsw,ivfpq;faiss:IVF64,SQ8" \
#     --fail-if "overlap@10<0.9" --fail-if "delta_p@10.low<-1" --out report/
# ```
#
# The vectors here are the project's own reference encoder on its procedural driving scenes, not
# BDD100K or COCO; the **Data** line below names them.

# %% tags=["parameters"]
encoder = "reference-cnn"  # the registered encoder whose cached vectors are measured
compress = "fp16,fp8,int8,int8cal,st-int8,mteb-int8,int4,binary,binary-rescore,pca256,pca128,prefix256,prefix128"  # conditions
index = "hnsw,ivfpq;faiss:IVF64,SQ8"  # approximate indexes compared with exact search (';' before a FAISS factory string)
k = 10  # neighbours per query
fail_if = ["overlap@10<0.9", "delta_p@10.low<-1"]  # the gates, each stating its failing side
seed = 0  # seed of every sample, split and bootstrap

# %%
from IPython.display import Markdown, display

from embdiag.paper import scale
from embdiag.report import measure, sections
from embdiag.report.cli import chapter_inputs
from embdiag.view import exhibits

sections.enable()
data, source, files = chapter_inputs(None, encoder=encoder)
report = measure(**data, compress=compress, index=index, k=k, seed=seed, progress=False, fail_if=fail_if)
display(sections.frontier.result(report), sections.overview(report, source))

# %% [markdown]
# ## The frontier
#
# Fewest bytes first. A storage format keeps every dimension with fewer bits (float16; float8
# e4m3 and int8 with a per-row scale; int8 and int4 on per-dimension calibration ranges, decoded
# to their bin centres; the same int8 codes scored raw, as sentence-transformers with usearch
# (`st-int8`, inner product) and mteb (`mteb-int8`, cosine) score them; one sign bit per
# dimension, searched by Hamming distance, alone or with the best 4k candidates rescored by the
# float query). The conditions table of `embdiag report` names the stack each one follows. A truncation keeps fewer
# dimensions as float32 (centred PCA, a Matryoshka prefix); a centred PCA moves neighbours before
# it drops anything, since subtracting the mean changes every cosine (the Compression chapter). An index keeps its own codes and
# links and is searched approximately, here at its default knob (a section below sweeps it).
# Bytes count what one vector takes; a shared calibration table, PCA basis or index codebook is
# not counted, and neither is search speed.

# %%
display(sections.frontier.ranked(report))

# %% [markdown]
# ## Proof beside measurement: which queries cannot change
#
# A measured overlap says what happened on these queries. A certificate says what *cannot*
# happen: a query whose rank-10/rank-11 margin exceeds twice the largest score change a condition
# can cause keeps its exact top-10, whatever the rounding or the search does with ties. For a
# storage format the bound comes from each vector's reconstruction error and the floating-point
# rounding of both scorings; for a truncation, from the angle between each vector and the part
# the truncation keeps (no cosine moves by more than $1 - \cos(\theta_q + \theta_g)$). Sign bits
# and indexes have no such bound.

# %%
display(sections.identity.certificates(report))

# %% [markdown]
# ## Approximate indexes: a curve, not a point
#
# An index is judged at one setting of its knob in the frontier above, but its knob trades recall
# for speed: turn `efSearch` or `nprobe` down and any index looks fast, up and any looks exact.
# Each index is therefore searched at every value of its knob, and its recall@10 is measured
# against exact search on the reference, tie-aware as ann-benchmarks counts it (a returned row
# tied with the tenth exact neighbour counts as found). Here the x axis is the knob's value, not
# speed: this page re-executes byte for byte, and a speed is a timing that changes from run to run.

# %%
display(*sections.indexes.exhibits(report))

# %% [markdown]
# ### Recall against speed, at 100,000 x 768
#
# Speed is measured where it matters, on a large gallery, by the frontier benchmark
# (`python benchmarks/bench_frontier.py`), whose record this page reads: the same measurement on
# 100,000 synthetic clustered vectors of 768 dimensions (not the encoder's, not BDD100K or
# COCO), each index searched at each knob value by 1,000 queries, the fastest of up to five runs.

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
        f"recall@{k} (tie-aware, against exact search) of each index at each knob value against the queries per "
        "second of its search, from the frontier benchmark's record on the machine named above (one run, no "
        "interval; a timing differs from run to run and machine to machine). Filled marks: each index's default."))

# %% [markdown]
# ## What the changes cost, with intervals
#
# Each condition's change of P@10 per label column, its per-query value minus the reference's,
# averaged, with a paired bootstrap interval over the searched queries: the intervals the gates
# and the frontier's lowest bound read.

# %%
display(*sections.relevance.exhibits(report))

# %% [markdown]
# ## Where the damage hides: the anti-hub tail
#
# An average over queries is dominated by the queries near hubs, the rows that are everyone's
# neighbour. The queries whose own row is nobody's neighbour (anti-hubs) are where a compression
# loses neighbours first, and where a gate should look: each condition's overlap@10 on them is shown
# beside its overlap over all queries, with intervals.

# %%
display(*sections.hubness.exhibits(report))

# %% [markdown]
# ## The gates
#
# The rules declared above, each on every row it reads. `delta_p@10.low<-1` reads the lower end of
# each interval: it fails a condition whose change *could* be worse than one percentage point,
# not only one whose measured change is.

# %%
display(*sections.gates.exhibits(report))

# %% [markdown]
# ## Scope
#
# One set of vectors (the reference encoder on generated scenes), one $k$, one seed: the frontier
# is these vectors', and another encoder's can order the conditions differently, which is why the
# report runs on your own. Bytes per vector are not speed: Hamming search and int8 kernels have
# their own throughput, which this page does not measure; index speed is measured once, by the
# frontier benchmark on synthetic vectors, and says what that machine did, not what yours will.
