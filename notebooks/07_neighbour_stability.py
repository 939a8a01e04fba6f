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
# # Neighbour stability

# %% tags=["parameters"]
encoder = "reference-cnn"  # registered encoder whose cached vectors are measured (e.g. reference-vit)
dataset = "procedural"  # driving scenes: "procedural" (generated) or "bdd100k" (read from data_dir)
data_dir = None  # folder of the BDD100K download (for dataset bdd100k)
vectors_path = None  # a user's own vectors (.npy, n x d) instead of an encoder's; needs labels_path
labels_path = None  # CSV with a `split` column (train / val) and one column per attribute
k = 10  # neighbours per query (the study: exact top-10)
seed = 0  # seed of the procedural dataset and of the bootstrap draws
offset_severity = 0.99  # common offset of the two offset rows: norm s / (1 - s) x training RMS norm
offset_seed = 0  # seed of the offset's random direction
n_draws = 5000  # paired bootstrap draws of the findings' intervals (over the queries)
example_condition = "INT8 gallery"  # condition of the boundary illustration (a row on the vectors as embedded)

# %%
from IPython.display import Markdown, display

from embdiag.encoders.vectors import driving_vectors
from embdiag.study import neighbour_stability
from embdiag.paper.chapters import neighbour_stability as figures
from embdiag.paper import findings
from embdiag.view import charts, exhibits
from embdiag.paper.real_encoder import variant_note

charts.enable()
vectors = driving_vectors(encoder, dataset, data_dir=data_dir, seed=seed, vectors_path=vectors_path,
                          labels_path=labels_path)
measured = neighbour_stability.run(vectors, neighbour_stability.Settings(
    k=k, offset_severity=offset_severity, offset_seed=offset_seed, n_draws=n_draws, seed=seed))
results, ours, study = measured.results, measured.table, neighbour_stability.read_study()
verdicts = neighbour_stability.findings(measured, study)
# What captions say about the study's side and the uncertainty (the data is named once, below the result).
published = "the study's published values"
exact = "Exact values of one deterministic run: no run-to-run noise."

# %%
findings.result(
    verdicts[verdicts["kind"] != "scope"],
    "{held} of {measured} findings of the study's storage section hold on this run",
    figure=exhibits.figure(
        figures.overview_chart(ours, study, k), name="overview", data=figures.overview_frame(ours, study),
        caption=f"Per condition: the largest change of any score (log axis; exact 0 at the left edge), how "
                f"many of the {len(vectors.val):,} queries changed their top {k}, and the mean overlap@{k} with "
                f"the reference top {k}. Filled circles: this run; open grey diamonds: {published}. {exact}"))

# %%
display(Markdown(variant_note(dataset, "neighbour stability") + figures.data_statement(vectors, k) + "\n\n"
                 + figures.scope_note(verdicts)))

# %% [markdown]
# A search index may store vectors in half precision (FP16) or eight-bit integers (INT8) and
# score in single precision. The encoder is untouched, yet every score moves a little, and a
# query whose tenth and eleventh neighbours are closer than that movement gets a different top
# ten. Each evaluation vector queries all others by exact cosine search under eight conditions,
# each compared with its own unperturbed reference. Verdicts compare a 95% interval with a
# margin declared in advance (Wilson for shares of queries, paired bootstrap over the queries
# for differences), conditional on this fixed gallery.
#
# ## The eight conditions
#
# Two conditions first move every vector by one common offset, as the stress tests do.

# %%
exhibits.table(figures.conditions_table(results), name="conditions", collapsed="The eight conditions defined",
               extremes=False,
               caption=f"Which vectors each condition ranks, how it stores the gallery and the queries, and the "
                       f"arithmetic it normalizes and scores in (embdiag.interventions.precision.STUDY_CONDITIONS). "
                       f"Stored vectors are reconstructed and scored in FP64; INT8 keeps integer codes in −127…127 "
                       f"times one scale per vector. The common offset has severity {offset_severity:g} (seed "
                       f"{offset_seed}), fitted on the training vectors. A definition, not a measurement.")

# %% [markdown]
# ## The top-ten boundary
#
# A query's **margin** is its reference score at rank k minus its score at rank k + 1. If
# every score moves by less than half the margin, no item crosses the cut and the top k stays
# the same set.

# %%
example = neighbour_stability.result_named(results, example_condition)
boundary = measured.boundary(example_condition)
exhibits.figure(figures.boundary_chart(boundary, k), name="boundary", data=boundary,
                caption=f"{figures.boundary_caption(boundary, example)} Left: the ranks around {k}; right: the "
                        f"items that cross the cut.")

# %% [markdown]
# ## Which queries change
#
# A query can change only if its margin lies left of the black tick, twice the condition's
# largest score change.

# %%
display(exhibits.figure(figures.margin_chart(results), name="margins",
                        caption=f"Reference margin (rank {k} minus rank {k + 1}, log axis) of every query: all "
                                f"queries as a grey density strip, those whose top {k} changed as red dots, and "
                                f"twice the largest score change as a black tick. {exact}"))
display(Markdown(figures.margin_statement(results)))
exhibits.table(figures.margin_table(results), name="margin-bins", collapsed="Changed queries per margin bin",
               extremes=False,  # counts per bin: no highest to mark
               caption=f"Per condition and reference-margin bin (declared decades, neighbour_stability.MARGIN_EDGES): "
                       f"the queries whose top {k} changed and all queries in the bin. {exact}")

# %% [markdown]
# ## Turnover and relevance
#
# A changed neighbour set need not change how many neighbours share the query's label: a query
# may swap neighbours for others with the same share of matching labels.

# %%
display(exhibits.figure(figures.precision_change_chart(ours, study, k), name="precision-change",
                        data=figures.precision_change_frame(ours, study),
                        caption=f"Change of P@{k} per attribute (perturbed minus reference, percentage points; "
                                f"dashed: none). Filled circles: this run; open grey diamonds: {published}. {exact}"))
agreement = figures.agreement_table(ours, study, k)
display(exhibits.table(agreement, name="agreement", collapsed="Changed queries that kept their P@k, per condition",
                       extremes_rows=figures.this_run(agreement),
                       extremes=[c for c in agreement.data.columns if c == "changed queries" or c.endswith("(%)")],
                       caption=f"For each condition that changed any query: the changed queries and, per attribute, "
                               f"how many kept exactly the same P@{k} (count and percent of the changed); the study's "
                               f"row above this run's where it reports one. {exact}"))
side = figures.side_by_side(ours, study, k)
exhibits.table(side, name="storage-table", collapsed="The study's storage table beside this run's",
               extremes_rows=figures.this_run(side),
               extremes=[c for c in side.data.columns if c != "queries"],  # not the number of queries
               caption=f"Per condition, the study's row above this run's: the largest score error, changed queries "
                       f"and all queries, mean overlap@{k} and the change of P@{k} per attribute (pp; blank where "
                       f"the study gives none). {exact}")

# %% [markdown]
# ## What can be proved in advance: the certificate
#
# A query is **certified** when a bound on how far any of its scores can move (from the
# reconstruction errors of the query and of every gallery vector, plus rounding) is below half
# its margin; a certified query that changed (an **exception**) would mean a wrong bound. The
# study's version was an empirical check; this one is a rigorous bound
# (`embdiag.interventions.precision.certificate_bound`).

# %%
display(exhibits.figure(figures.certificate_chart(results), name="certificate-distributions",
                        caption=f"Share of queries at or below each value (log axis) of half the margin, of the "
                                f"certificate's bound and of the actual largest score change. A query is certified "
                                f"where its half margin exceeds its bound. {exact}"))
display(Markdown(figures.certificate_explanation(results, vectors.dim)))
exhibits.table(figures.certificate_table(results, study), name="certificate",
               collapsed="Certified queries and exceptions per condition",
               extremes=["coverage (%)"],  # the one column where higher is better
               caption=f"Per condition: changed and certified queries (this run; the study's where it states them), "
                       f"coverage, exceptions, the medians over queries of the bound, of the actual largest score "
                       f"change and of half the margin, and the share of queries whose actual change stays below "
                       f"half their margin. {exact}")

# %% [markdown]
# ## Does each finding hold here?
#
# Each finding's criterion, margin and one-line reason are fixed in
# `embdiag.study.neighbour_stability.CRITERIA`. The same rule decides the study's published
# counts: Wilson intervals from its 983 queries, an interval valid under any pairing for a
# difference of two counts; its ΔP@10 has no interval.

# %%
exhibits.table(findings.table(verdicts), name="findings", collapsed="Each finding's criterion, interval and verdict",
               extremes=False,
               caption=f"Each finding of the study's storage section: its kind, criterion and declared margin, the "
                       f"study's numbers and this run's with their 95% intervals, the verdict on each, and the old "
                       f"point-estimate criterion with its verdict. Shares: Wilson intervals; differences and changes "
                       f"of P@{k}: paired bootstrap over the {len(vectors.val):,} queries, conditional on the fixed "
                       f"gallery.")

# %% [markdown]
# **Scope.** These conditions change stored vectors and scoring arithmetic, never the encoder,
# and use exact search: they say nothing about approximate indexes or throughput. The counts
# belong to the vectors named under the result; what carries over from the study is the
# mechanism: margins against score error, worst-case bounds against actual errors, identity
# against relevance.
