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
# # Compression: how far MRL prefixes and PCA move from native, and what centring alone moves
#
# Storing fewer dimensions is the most common change made to cached embeddings. The study
# compared two ways of keeping $k$ of an encoder's 768 dimensions, at $k$ = 512, 256 and 128,
# and measured what each costs in balanced accuracy (a standardized linear probe per attribute)
# and in P@10 (neighbours sharing the query's label):
#
# - **Matryoshka (MRL) prefix**: keep the leading $k$ coordinates and renormalize to unit length.
#   This is meaningful only for an encoder trained so that every prefix is an embedding of its
#   own (Matryoshka representation learning), as the study's encoder and this project's
#   reference encoders are.
# - **PCA**: subtract the training mean, project onto the top $k$ principal directions of the
#   *training* vectors, normalize. The study's PCA centres; this chapter also runs it **without
#   centring** (directions of the uncentred second-moment matrix, nothing subtracted), because a
#   user found that the centring alone moves neighbours.
#
# Its finding: no method leads on every attribute and endpoint. The encoder is fixed; only its
# cached vectors change. Probes and PCA bases are fitted on the training vectors, everything is
# measured on the evaluation vectors, and each evaluation vector queries the others by cosine.

# %% tags=["parameters"]
encoder = "reference-cnn"  # encoder name ("reference-cnn", "reference-vit", "hf:<model>@<revision>")
dataset = "procedural"  # "procedural" (generated scenes) or "bdd100k" (read from data_dir)
data_dir = None  # folder of the real dataset when dataset is not "procedural"
vectors_path = None  # a user's vectors (.npy, n x d) in place of an encoder; with labels_path
labels_path = None  # CSV with a "split" column (train / val) and one column per attribute
k = 10  # neighbours per query for P@k and overlap@k
dims: list | None = None  # dimensions to keep; None: the study's 512, 256, 128 of 768, in proportion to d
attribute: str | None = None  # the attribute in the weather finding's place; None: weather, else the first
seed = 0  # dataset seed (procedural scenes) and seed of the row sample
max_rows: int | None = 5000  # the most rows measured of each split; a larger one is sampled (None: every row)
progress = False  # one line per measured representation on stderr (set by `embdiag chapter --out`)

# %%
from IPython.display import Markdown, display

from embdiag.encoders import driving_vectors
from embdiag.paper.chapters import compression as figures
from embdiag.study import compression
from embdiag.paper import findings
from embdiag.view import charts, exhibits
from embdiag.paper.real_encoder import variant_note

charts.enable()
vectors = driving_vectors(encoder, dataset, data_dir=data_dir, seed=seed, vectors_path=vectors_path,
                          labels_path=labels_path)
measured = compression.run(vectors, compression.Settings(k=k, dims=dims, attribute=attribute, seed=seed,
                                                         max_rows=max_rows), progress=progress)
sampled = measured.rows.note()  # "" when every row is measured
grid, centring, curve = measured.grid, measured.centring, measured.curve  # what the exhibits draw
study = compression.read_study()
trained = figures.trained_prefixes(encoder, vectors_path)  # None: not known (a user's vectors, another encoder)
single = ("One measurement per representation (probes and PCA bases fitted once on the training vectors); the "
          "findings' paired intervals over the evaluation images are in the table at the end of the page."
          + (f" {sampled}" if sampled else ""))
published = "the study's published values (EmbeddingGemma on BDD100K, data/study/compression.csv)"
display(Markdown(variant_note(dataset, "compression") + f"**Data and encoder:** {vectors.source}. The study's numbers beside ours come from the "
                 f"EmbeddingGemma 2 encoder on its BDD100K subset: they are published values, not reproduced "
                 f"here.  \n" + figures.prefix_note(trained, measured.dims) + (f"  \n**{sampled}**" if sampled else "")))

# %%
verdicts = compression.findings(measured, study)
findings.result(
    verdicts, "{held} of the {measured} findings measured here (the study's compression section and this "
              "project's centring finding) hold in this run",
    figure=exhibits.figure(figures.change_chart(grid, k, study), name="change-from-native",
                           caption=f"{figures.change_caption(grid, k)} The study's: EmbeddingGemma on BDD100K "
                                   f"(data/study/compression.csv). {single}"))

# %% [markdown]
# ## Two ways to keep $k$ dimensions
#
# A prefix keeps the encoder's own coordinates and fits nothing: whatever the training put first
# is what survives. PCA fits new axes to the training vectors, ordered by the variance they
# carry, and keeps the $k$ strongest. The centred version draws those axes through the training
# mean; the uncentred one through the origin.

# %%
exhibits.figure(figures.schematic_chart(seed), name="schematic",
                caption="Schematic, not a measurement: a Matryoshka prefix keeps the leading coordinates of each "
                        "vector and drops the rest (left); PCA projects onto directions fitted on training vectors, "
                        f"through their mean or, uncentred, through the origin (right). Toy values (seed {seed}), "
                        "no data of this run.")

# %% [markdown]
# ## Change from native
#
# In the result figure at the top of the page each panel is one attribute and one endpoint, in
# percentage points from the native vectors, on the same fixed axis from −10 to +5 pp (the
# study's), with the study's published values beside this run's. The same numbers in the study's layout (percent), each of this run's rows followed by the
# study's where it has one; the last column is the share of each query's native top-$k$ that
# the representation keeps (overlap@$k$), which the study did not report.

# %%
results = figures.results_table(grid, study, k)
exhibits.table(results, name="results", extremes_rows=results.data.index.get_level_values("source") == "this run",
               extremes=list(results.data.columns),  # accuracies, precisions and overlaps: higher keeps more
               caption=f"Balanced accuracy and P@{k} per attribute (percent) and overlap@{k} with the native top "
                       f"{k} (percent) of each representation: this run's row, then, in grey, {published} where the "
                       f"study has the row (— where it has no value). "
                       f"{single}")

# %% [markdown]
# ## Centring alone moves neighbours
#
# A user noticed that PCA replaces about one neighbour in ten (overlap@10 near 0.89) whatever $k$
# is. The reason is the centring, not the projection. Cosine similarity is measured from the origin;
# subtracting the training mean $\mu$ moves the origin:
#
# $$\cos(x - \mu,\, y - \mu) = \frac{x\cdot y - \mu\cdot x - \mu\cdot y + \lVert\mu\rVert^2}
# {\lVert x - \mu\rVert\,\lVert y - \mu\rVert},$$
#
# and the terms $\mu\cdot y$ and $\lVert y - \mu\rVert$ differ from one candidate $y$ to the
# next, so the order of a query's candidates changes. Projection onto *all* $d$ principal
# directions is a rotation, which keeps every inner product, so centred PCA at $k = d$ ranks
# exactly as cosine on the centred vectors. Uncentred PCA at $k = d$ rotates the raw vectors and
# keeps every neighbour. The table measures all four at the full dimension:

# %%
exhibits.table(figures.centring_table(centring, k), name="centring", extremes=[c for c in centring.columns if c.endswith(f"P@{k}")],
               caption=f"At the full dimension ({vectors.dim}), against the native top {k}: overlap@{k} and the "
                       f"share of queries whose top {k} changed, overlap with the top {k} of cosine on the centred "
                       f"vectors, the largest change of any pairwise cosine, and P@{k} per attribute, for the "
                       f"native vectors, uncentred PCA, centred PCA and the native vectors minus the training mean. "
                       f"Exact values (deterministic), no uncertainty.")

# %%
display(Markdown(figures.centring_text(centring, k)))

# %% [markdown]
# Overlap with the native top-$k$ as fewer dimensions are kept (log axis), from the full
# dimension down by halves (and the chapter's dimensions). Centring costs its share at every
# $k$; the projection costs more only once the dropped directions carry some of the vectors'
# spread. The prefix drops coordinates, not directions of low variance, so it can lose
# neighbours earlier.

# %%
exhibits.figure(figures.overlap_chart(curve, k), name="overlap-by-dimension",
                caption=f"Overlap@{k} of each method's top {k} with the native top {k} against the dimensions "
                        f"kept (log axis), at {', '.join(map(str, sorted(set(curve['dim']), reverse=True)))}. "
                        f"Exact values (deterministic), no uncertainty.")

# %%
display(Markdown(figures.overlap_text(curve, k, trained)))

# %% [markdown]
# What the neighbours' labels make of it: P@$k$ per method, against native.

# %%
display(Markdown(figures.retrieval_text(grid, centring, k)))

# %% [markdown]
# ## Why PCA can lose more when it keeps more
#
# Balanced accuracy comes from a *standardized* probe: every feature is scaled to unit variance
# before fitting (so the probe is blind to scale and offset). After PCA, the trailing directions
# may carry almost no variance; standardizing scales them up to the size of the informative ones.
# The table shows how much of this encoder's training variance the top $k$ principal directions
# leave out and how weak the $k$-th is; the sentence below, what the probe reaches on the largest
# PCA without standardization, for the attribute that PCA loses most (one extra probe fit):

# %%
exhibits.table(figures.spectrum_table(measured.spectrum), name="spectrum", extremes=False,  # decreasing in k by definition
               caption=f"For each number k of principal directions kept: the share of the training vectors' "
                       f"(centred) variance that they leave out, and the variance of direction k relative to the "
                       f"first. Training vectors. Exact eigenvalues, no uncertainty.")

# %%
display(Markdown(figures.standardization_text(grid, measured.spectrum, measured.raw_ba, measured.checked,
                                              measured.checked_attribute)))

# %% [markdown]
# ## Does each finding hold here?
#
# Each finding of the study's compression section is restated as a claim with a margin,
# declared in `embdiag.study.compression.CRITERIA` before this run's numbers were
# computed, and decided by its paired intervals: an equivalence claim holds only when every
# column's interval lies within the margin, so a change whose interval reaches past it is
# inconclusive however small its point estimate. The study published point estimates only, so
# its side is not testable; the old point-estimate criterion and verdict stand beside each new
# one. The centring finding is this project's, exact on the fixed gallery. The intervals resample
# the evaluation images (each image's probe correctness for balanced accuracy, each query's
# precision for P@10); they are conditional on these training vectors, probes and PCA bases, and
# *ahead* means a difference wholly on one side of zero.

# %%
exhibits.table(findings.table(verdicts), name="findings", collapsed="Each finding's criterion, margin and the intervals behind its verdict", extremes=False,
               caption=f"Each finding of the compression section (and this project's centring finding): its kind, "
                       f"criterion, margin and why (embdiag.study.compression.CRITERIA), the point estimates in "
                       f"{published} and in this run, the verdict on each (the study's: not testable, point estimates "
                       f"only) with the paired 95% bootstrap intervals over the {len(measured.items)} evaluation images "
                       f"({measured.n_draws} draws) that decided this run's, and the old point-estimate criterion "
                       f"with its verdict.")

# %% [markdown]
# **Scope.** With the default parameters these are a small reference encoder's vectors of
# synthetic driving scenes, not EmbeddingGemma 2 on BDD100K: absolute values are not comparable
# with the study's, only the direction and size of the changes from native. Probes are refitted
# on every representation, so a change in balanced accuracy mixes what the representation keeps
# with how the probe treats it (the standardization above). Nothing here says how the methods
# behave at other dimensions, on other encoders, or under approximate search.
