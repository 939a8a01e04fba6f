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
# # Conclusions and scope
#
# The study set out to ask whether a label-free measurement of embedding vectors says which task
# has stopped working. Its answer is a separation: distribution, recoverable labels, neighbour
# identity and relevance are different properties, each change to the vectors moves some of them
# and leaves others exactly where they were, and only the property an application relies on can
# tell whether that application still works. This page collects every finding the study declared,
# as this project restated and decided them (each by an interval against a margin declared
# before the numbers were looked at), with the published values beside this run's, and then says
# what none of it establishes.

# %% tags=["parameters"]
profile = "cpu-steps6400"  # training records folder under data/training/ (design A; <profile>-steps<N> for a length)
attribute = "timeofday"  # attribute of the training findings: timeofday, weather or scene
encoder = "reference-cnn"  # fixed encoder of design B (reference-cnn, reference-vit, hf:<model>@<revision>)
driving_dataset = "procedural"  # driving scenes of design B: "procedural" or "bdd100k" (from driving_dir)
driving_dir = None  # folder of the BDD100K download (for driving_dataset bdd100k)
caption_dataset = "procedural"  # caption groups: "procedural" or "coco" (from caption_dir)
caption_dir = None  # folder of COCO 2017 (for caption_dataset coco)
k = 10  # neighbours per query
seed = 0  # seed of the procedural data, the stress interventions and the bootstrap

# %%
from IPython.display import Markdown, display

from embdiag.encoders.vectors import caption_vectors, driving_vectors
from embdiag.paper import conclusions
from embdiag.view import exhibits
from embdiag.paper.chapters.training import headline_text, profile_statement
from embdiag.study import training
from embdiag.training import sweep

vectors = driving_vectors(encoder, driving_dataset, data_dir=driving_dir, seed=seed)
captions = caption_vectors(encoder, caption_dataset, data_dir=caption_dir, seed=seed)
trained = training.run(training.Settings(profile=profile, attribute=attribute))
tables = {"training": training.findings(trained), **conclusions.fixed_encoder_findings(vectors, captions, k=k, seed=seed)}
verdicts = conclusions.stack(tables)
cfg = sweep.Task(profile, sweep.UNTRAINED, 0).config()
display(Markdown(
    f"**Data and encoders in this run.** Design A: JEPA runs of {profile_statement(cfg)}. Design B: "
    f"{vectors.source}; captions: {captions.source}. The published values come from the study's JEPA runs "
    f"and EmbeddingGemma vectors of BDD100K and COCO images."))

# %%
conclusions.result(verdicts, headline=headline_text(trained))

# %% [markdown]
# ## What the four properties showed
#
# **Distribution is not utility.** Label-free geometry responded to changes that no task noticed,
# and the reverse. Shrinking every vector moved total variance by the square of the factor and
# nothing else; a common offset collapsed raw RankMe while the standardized probes did not move;
# noise *raised* RankMe while retrieval fell toward chance. In training, the control without
# collapse protection lost several orders of magnitude of spread; how much of its label
# information survived is where this run and the study part ways (below).
#
# **Labels and relevance are different tasks.** A probe fits a new linear read-out to the
# vectors; P@10 uses them as they are. Standardized probes are blind to scale and offset, and
# compressions that cost balanced accuracy could leave neighbour agreement nearly intact, and the
# other way round: no compression led on every attribute and endpoint.
#
# **Identity is stricter than relevance.** Exact top-10 sets changed under storage precision and
# centring while the attribute agreement of the neighbours barely moved; at reduced dimension,
# Hit@10 could stay high while the top result and caption recall lost more. Whether a changed
# neighbour list matters depends on the application: a cache of precomputed results, a
# regression test or a legal audit needs identity, a search box needs relevance.
#
# ## Published study vs this run
#
# Every finding as declared before this run's numbers were looked at (the claims and their margins
# live in the library beside each section's figures, each margin justified in one line), the
# study's published values (from `data/study/`) beside this run's, and the verdict: **holds** when
# the whole interval lies on the claim's side of its margin, **contradicted** when it lies wholly on
# the other side, **inconclusive** when it straddles the margin, and **not testable** when the
# situation the claim is about did not arise here. Only the study's own findings are counted;
# this project's additions and its scope statements follow in tables of their own. Each section's
# chapter shows the full measurements; the levels are not comparable number for number (other
# data, other encoders), the patterns are what should carry over.

# %%
exhibits.table(conclusions.tally(verdicts), name="findings-tally", extremes=False,  # counts of findings: no highest to mark
               caption="The study's declared findings per section and their verdicts here (counts); this "
                       "project's additions and scope statements are not counted.")

# %%
exhibits.table(conclusions.verdict_words(conclusions.of_kind(verdicts, "study")).drop(columns="kind"),
               name="findings", collapsed="Every finding of the study: its claim, margin, the study's numbers and "
               "this run's, and its verdict", extremes=False,  # verdicts in words
               caption="Every declared finding of the study: its claim and margin, the study's published values, "
                       "this run's values (the data and encoders named at the top of the page), the verdict and the "
                       "interval that decided it. Intervals are those of each section: paired Student-t over seeds "
                       "for training; for the fixed encoder, paired bootstrap over queries or image groups and "
                       "Wilson intervals for shares of queries, conditional on the fixed gallery; exact identities "
                       "of arithmetic are computed exactly.")

# %% [markdown]
# ### This project's additions and the scope statements
#
# Checks this project added to the study's (not counted above), and statements of what a
# measurement covers, which describe its limits rather than a finding:

# %%
exhibits.table(conclusions.verdict_words(verdicts[verdicts["kind"] != "study"]), name="additions-and-scope",
               extremes=False,  # verdicts in words
               caption="This project's additions (kind addition) and scope statements (kind scope): claim, margin, "
                       "this run's values, the verdict and the interval that decided it.")

# %% [markdown]
# ## What these results do not establish
#
# **Dataset scope.** The published numbers come from a BDD100K-derived subset (2,000 training and
# 983 validation images) and 1,000 COCO 2017 validation images; that subset has no foggy,
# gas-station or tunnel validation images, so nothing is said about those classes (the
# procedural data leaves the same three out of its evaluation split). This site's numbers come
# from procedurally generated driving scenes whose attributes are rendered cues (the sky's
# colour and light for time of day; cloud, rain streaks and snow cover for weather; the layout of
# road, buildings and ground for scene) and whose five captions per image are written from the
# scene's own parameters. They have BDD100K's attribute vocabulary, split sizes and class
# imbalance, but not its photographs: some attributes are easier to read here than in real
# images (time of day is largely brightness, which even pooled pixels read), the captions are
# more regular than COCO's human ones, and the category comparator uses the generator's seven
# object categories instead of COCO's eighty. The [data chapter](02_data) shows how the scenes
# are made and where they differ from BDD100K and COCO.
#
# **Encoder scope.** The study fixed one encoder, EmbeddingGemma; its replication with a second
# encoder failed its precision checks and is not reported. Here the fixed encoder is one of two
# small dual encoders the project trained on the procedural scenes
# ([reference encoder](04_reference_encoder)); the appendix repeats the fixed-encoder chapters with
# the second, and [On a real encoder](10_real_encoder) with a pretrained text encoder, WordLlama,
# on WordNet glosses. Neither reference encoder is a pretrained foundation model; the responses to contraction, offset,
# storage precision and centring are properties of the arithmetic and hold for any vectors, but
# the sizes of the task effects belong to these encoders. The JEPA runs are far smaller than the
# study's (the profile above against the study's depth 6, 64 tokens, batch 128 and 4,000 steps).
#
# **Claim scope.** The study offers an instrument comparison with explicit scope, not a universal
# quality score: no single label-free number predicts task utility here, and none is proposed.
# Its SIGReg conditions follow LeJEPA's published loss inside this study's own training setup;
# they are not a reproduction of LeJEPA. The study's chapters use exact search; approximate
# indexes (HNSW, IVF-PQ) are measured only by the [report](21_report) on the vectors it is given,
# and nothing here measures deployment throughput or latency. The study's storage certificate was
# an empirical sufficient-condition check; this project's is a floating-point bound on every score
# ([neighbour stability](07_neighbour_stability)), so it proves which queries keep their top ten,
# but only for exact search of the stored vectors. Comparisons carry their own intervals with no
# correction for multiplicity.
