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
# | property | question | instrument |
# |---|---|---|
# | Distribution | how do the vectors spread? | total variance, mean cosine, RankMe, participation ratio (no labels) |
# | Labels | what can a fitted classifier recover? | probe accuracy, balanced accuracy |
# | Identity | which exact neighbours stay nearby? | overlap@10, changed queries (a reference ranking) |
# | Relevance | how much of the target set is found? | P@10, Hit@k, caption recall@10 |

# %% tags=["parameters"]
profile = "cpu-steps6400"  # training records folder under data/training/ (the conclusions' training length)
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

from embdiag.paper import conclusions, scoreboard
from embdiag.view import charts, exhibits
from embdiag.view.result import box

charts.enable()
measured = conclusions.run(profile=profile, attribute=attribute, encoder=encoder, driving_dataset=driving_dataset,
                           driving_dir=driving_dir, caption_dataset=caption_dataset, caption_dir=caption_dir, k=k,
                           seed=seed)
verdicts, trained, vectors, captions = measured.verdicts, measured.trained, measured.vectors, measured.captions
tally = conclusions.tally(verdicts).sum()
box(f"Of the study's {tally['declared']} findings, {tally['hold']} hold on this run's data, "
    f"{tally['contradicted']} are contradicted and {tally['inconclusive'] + tally['not testable']} cannot be "
    f"decided here (inconclusive or not testable); each verdict is an interval against a margin declared before "
    f"the numbers were seen. An alarm on one property says little about the others: measure the one your "
    f"application needs.",
    figure=exhibits.figure(scoreboard.chart(verdicts), name="scoreboard",
                           caption="The study's findings per section, by their verdict on this run's data."))

# %%
procedural = driving_dataset == caption_dataset == "procedural"
display(Markdown(
    f"**Data.** Design B: {vectors.source}{'' if procedural else f'; captions: {captions.source}'}. Design A: "
    f"JEPA runs of profile `{profile}` on procedural scenes. "
    + ("Not BDD100K, COCO or EmbeddingGemma: this machine downloads nothing ([why](02_data.html)); "
       "[Across encoders](10_across_encoders.html) adds a real pretrained encoder, WordLlama on WordNet 3.0."
       if procedural else "")))

# %%
exhibits.table(scoreboard.table(verdicts), name="scoreboard-findings", extremes=False,  # verdicts in words
               collapsed="Each finding: the study's published numbers beside this run's, and the interval that "
                         "decided it",
               caption="The study's findings: the verdict here, the published numbers and this run's, and the interval "
                       "against the declared margin that decided it.")

# %% [markdown]
# ## How to read this site
#
# The study runs in the published order: [approach](01_approach), [training](03_training), then a
# fixed encoder's [stress tests](05_stress_tests), [compression](06_compression),
# [neighbour stability](07_neighbour_stability) and [image–caption retrieval](08_caption_retrieval),
# then [conclusions](09_conclusions) and the same findings [across encoders](10_across_encoders).
# **Your embeddings** points the instruments at your own vectors: [the report](21_report) and
# [choosing a compression](22_choosing_a_compression). Under every exhibit a line names the source
# that made it and the artifacts it read; a link downloads its data.

# %%
from embdiag.paper import citation

display(Markdown(f"<details><summary>Cite this</summary>\n\n```bibtex\n{citation.bibtex()}\n```\n\n</details>"))
