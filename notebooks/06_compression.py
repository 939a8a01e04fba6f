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
# # Compression

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
once = "One measurement per representation; the findings' paired intervals are in the last table."
verdicts = compression.findings(measured, study)

# %%
findings.result(
    verdicts, "{held} of the {measured} compression findings measured here hold in this run",
    figure=exhibits.figure(figures.change_chart(grid, k, study), name="change-from-native",
                           caption=f"{figures.change_caption(grid, k, study)} {once}"))

# %%
display(Markdown(
    variant_note(dataset, "compression") + f"**Vectors:** {vectors.source}. This run keeps "
    f"{', '.join(map(str, measured.dims))} of {vectors.dim} dimensions (the study: 512, 256 and 128 of 768). "
    + figures.prefix_note(trained, measured.dims) + (f"  \n**{sampled}**" if sampled else "")))

# %% [markdown]
# ## Two ways to keep fewer dimensions
#
# A **Matryoshka (MRL) prefix** keeps the leading $k$ coordinates and fits nothing; it means
# something only for an encoder trained so that every prefix is an embedding. **PCA** projects
# onto the top $k$ principal directions of the training vectors, through their mean (the
# study's) or, **uncentred**, through the origin. Everything is measured on the evaluation
# vectors, each querying the others by cosine.

# %%
exhibits.figure(figures.schematic_chart(seed), name="schematic",
                caption=f"Schematic with toy values (seed {seed}), not a measurement: a prefix keeps the leading "
                        "coordinates (left); PCA projects onto fitted directions through the training mean, or "
                        "uncentred through the origin (right).")

# %%
results = figures.results_table(grid, study, k)
beside = (", each followed in grey by the study's published row (EmbeddingGemma on BDD100K) where it has one"
          if "study" in results.data.index.get_level_values("source") else "")
exhibits.table(results, name="results", extremes_rows=results.data.index.get_level_values("source") == "this run",
               extremes=list(results.data.columns),  # accuracies, precisions and overlaps: higher keeps more
               collapsed="The numbers behind the figure, with overlap with the native neighbours",
               caption=f"Balanced accuracy and P@{k} per attribute and overlap@{k} with the native top {k} (all "
                       f"percent) of each of this run's representations{beside}. {once}")

# %% [markdown]
# ## What centring alone does
#
# A user reported that PCA replaced about one neighbour in ten whatever $k$ was. Cosine is
# measured from the origin; subtracting the training mean $\mu$ moves it:
#
# $$\cos(x - \mu,\, y - \mu) = \frac{x\cdot y - \mu\cdot x - \mu\cdot y + \lVert\mu\rVert^2}
# {\lVert x - \mu\rVert\,\lVert y - \mu\rVert},$$
#
# which can reorder a query's candidates $y$. Projecting onto *all* $d$ directions is a rotation:
# at $k = d$ centred PCA ranks as cosine on the centred vectors, uncentred PCA as the native ones.

# %%
display(exhibits.table(
    figures.centring_table(centring, k), name="centring", extremes=[c for c in centring.columns if c.endswith(f"P@{k}")],
    caption=f"Each representation at the full dimension ({vectors.dim}) against the native top {k}. Exact values."))
display(Markdown(figures.centring_text(centring, k)))

# %%
display(exhibits.figure(figures.overlap_chart(curve, k), name="overlap-by-dimension",
                caption=f"Overlap@{k} of each method's top {k} with the native top {k} against the dimensions "
                        f"kept (log axis). Exact values."))
display(Markdown(figures.overlap_text(curve, k, trained) + "\n\n" + figures.retrieval_text(grid, centring, k)))

# %% [markdown]
# ## Standardized probes and weak directions
#
# The probes are *standardized*: every feature is scaled to unit variance, so PCA's trailing
# directions, which may carry almost no variance, are scaled up like the informative ones. One
# probe fitted without standardization on the largest PCA tells whether that matters:

# %%
display(exhibits.table(
    figures.spectrum_table(measured.spectrum), name="spectrum", extremes=False,  # decreasing in k by definition
    collapsed="How much training variance the kept directions leave out",
    caption="For each number k of principal directions kept: the share of the training vectors' (centred) variance "
            "they leave out, and the variance of direction k relative to the first. Exact eigenvalues."))
display(Markdown(figures.standardization_text(grid, measured.spectrum, measured.raw_ba, measured.checked,
                                              measured.checked_attribute)))

# %% [markdown]
# ## Does each finding hold here?
#
# Each finding is a claim with a margin, declared in `embdiag.study.compression.CRITERIA` before
# this run, and decided by paired bootstrap intervals over the evaluation items: "near" holds
# only when every column's interval lies within the margin, "ahead" when an interval lies wholly
# above zero. The study published point estimates only, so its side is not testable.

# %%
exhibits.table(findings.table(verdicts), name="findings", collapsed="Each finding's criterion, margin and the intervals behind its verdict", extremes=False,
               caption=f"Each finding of the compression section (and this project's centring finding): kind, "
                       f"criterion, margin and why, the point estimates in the study's published values "
                       f"(EmbeddingGemma on BDD100K, data/study/compression.csv) and in this run, the verdict on each "
                       f"with the paired 95% bootstrap intervals over the {len(measured.items)} evaluation items "
                       f"({measured.n_draws} draws) that decided this run's, and the old point-estimate verdict.")

# %% [markdown]
# **Scope.** Probes are refitted on every representation, so a change in balanced accuracy mixes
# what the representation keeps with how the probe treats it. Nothing here covers dimensions,
# encoders or data other than this run's, or approximate search.
