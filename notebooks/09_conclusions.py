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
# # Conclusions

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

from embdiag.paper import conclusions
from embdiag.view import exhibits
from embdiag.paper.chapters.training import headline_text, profile_statement
from embdiag.training import sweep

measured = conclusions.run(profile=profile, attribute=attribute, encoder=encoder, driving_dataset=driving_dataset,
                           driving_dir=driving_dir, caption_dataset=caption_dataset, caption_dir=caption_dir, k=k,
                           seed=seed)
verdicts, trained, vectors, captions = measured.verdicts, measured.trained, measured.vectors, measured.captions
conclusions.result(verdicts, headline=headline_text(trained))

# %%
cfg = sweep.Task(profile, sweep.UNTRAINED, 0).config()
display(Markdown(
    f"**Data and encoders in this run.** Design A: JEPA runs of {profile_statement(cfg)}. Design B: "
    f"{vectors.source}; captions: {captions.source}. The published values come from the study's JEPA runs "
    f"and EmbeddingGemma vectors of BDD100K and COCO images."))

# %% [markdown]
# ## The study's lesson, and where this run stands
#
# The study concluded that distribution, recoverable labels, neighbour identity and relevance are
# different properties: a change to the vectors moves some and leaves others exactly where they
# were, so only the property an application relies on tells whether it still works. A cache of
# precomputed results or a regression test needs identity; a search box needs relevance. Below,
# each of its findings is decided on this run's data (holds, contradicted, inconclusive, not
# testable, as defined in [the approach](01_approach)); only the study's own findings are counted,
# and the levels are not comparable number for number (other data, other encoders).

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

# %%
exhibits.table(conclusions.verdict_words(verdicts[verdicts["kind"] != "study"]), name="additions-and-scope",
               extremes=False,  # verdicts in words
               collapsed="This project's additions and the scope statements (not counted above)",
               caption="This project's additions (kind addition) and scope statements (kind scope): claim, margin, "
                       "this run's values, the verdict and the interval that decided it.")

# %% [markdown]
# ## What these results do not establish
#
# **Data.** The published numbers come from a BDD100K-derived subset and 1,000 COCO 2017 images,
# with no foggy, gas-station or tunnel validation images, so nothing is said about those classes.
# The book's default data are procedural scenes with BDD100K's vocabulary but not its photographs;
# some attributes are easier to read there (time of day is largely brightness) and the captions are
# more regular than COCO's ([data and encoders](02_data)).
#
# **Encoders.** The study fixed one encoder, EmbeddingGemma. Here the fixed encoders are small dual
# encoders the project trained itself, and WordLlama on WordNet glosses
# ([across encoders](10_across_encoders)). Responses to contraction, offset, storage precision and
# centring are properties of the arithmetic and hold for any vectors; the sizes of task effects
# belong to these encoders. The JEPA runs are far smaller than the study's.
#
# **Claims.** An instrument comparison with explicit scope, not a quality score: no label-free
# number predicts task utility here, and none is proposed. The SIGReg conditions follow LeJEPA's
# loss inside this study's setup; they do not reproduce LeJEPA. The chapters use exact search;
# approximate indexes are measured only by [the report](21_report). The storage certificate proves
# which queries keep their top ten for exact search of the stored vectors only. Intervals carry no
# multiplicity correction.
