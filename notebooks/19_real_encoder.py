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
# # Do the findings hold on a real encoder?

# %% tags=["parameters"]
k = 10  # neighbours per query and cut-off of Hit@k, as in the four chapters
seed = 0  # seed of the random interventions, bootstrap draws and shuffles
n_draws = 5000  # paired bootstrap draws of the caption chapter's intervals

# %%
from IPython.display import Markdown, display

from embdiag.paper import exhibits, real_encoder

verdicts = real_encoder.encoder_findings(k=k, seed=seed, n_draws=n_draws)
table = real_encoder.comparison(verdicts)
display(Markdown(real_encoder.comparison_summary(table)))

# %% [markdown]
# Every design-B finding of the study (the declared `CRITERIA` of the stress-test, compression,
# neighbour-stability and caption-retrieval chapters), checked by the chapters' own code on three
# encoders: the project's two reference encoders on procedural driving scenes and caption groups,
# and a real pretrained *text* encoder, WordLlama `l2_supercat`, on a real lexical database, a
# committed sample of WordNet 3.0 (glosses labelled by part of speech and lexicographer category;
# a gloss's example sentences as its "captions"; not images, not BDD100K or COCO). WordLlama's
# settings are those of its pages 20-23: headline attribute `lexname`, prefixes 128 and 64.

# %%
exhibits.table(table, name="findings-by-encoder", extremes=False,  # verdicts and numbers in words
               caption=f"Per design-B finding (rows: section and finding, with its declared criterion) and per "
                       f"encoder: whether it holds and the numbers that decide it. reference-cnn and reference-vit: "
                       f"the reference encoders on procedural driving scenes and caption groups, at the chapters' "
                       f"defaults; {real_encoder.WORDNET}: WordLlama l2_supercat on the committed WordNet 3.0 "
                       f"sample (lexname headline, prefixes 128 and 64). k = {k}, seed {seed}; caption changes "
                       f"with 95% paired-bootstrap intervals ({n_draws:,} draws), every other criterion on single "
                       f"deterministic or seeded measurements.")

# %% [markdown]
# **Scope.** A finding that holds on WordLlama says the instrument responds on a real encoder's
# vectors of real text as on the study's; one that does not, or is not measured (a dimension or
# attribute the study named does not exist here), says nothing about images or about the study's
# encoder. Each finding in full, with its figures, is on the pages that follow.
