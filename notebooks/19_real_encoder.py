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
exhibits.table(real_encoder.verdict_table(table), name="findings-by-encoder", extremes=False,  # verdicts in words
               caption=f"Per design-B finding (rows: section and finding; its declared criterion is in its "
                       f"chapter's findings table): whether it holds on each encoder. reference-cnn and reference-vit: the reference encoders on procedural "
                       f"driving scenes and caption groups, at the chapters' defaults; {real_encoder.WORDNET}: "
                       f"WordLlama l2_supercat on the committed WordNet 3.0 sample (lexname headline, prefixes 128 "
                       f"and 64). k = {k}, seed {seed}; the numbers that decide each verdict follow below.")

# %% [markdown]
# The numbers that decide each verdict, per finding and encoder:

# %%
exhibits.table(real_encoder.numbers_table(table), name="numbers-by-encoder", extremes=False,  # numbers in words
               caption=f"Per design-B finding and encoder: its verdict and the numbers its criterion is decided on, "
                       f"as the finding's chapter prints them. Caption changes with 95% paired-bootstrap intervals "
                       f"({n_draws:,} draws, seed {seed}); every other criterion on single deterministic or seeded "
                       f"measurements.")

# %% [markdown]
# **Scope.** A finding that holds on WordLlama says the instrument responds on a real encoder's
# vectors of real text as on the study's; one that does not, or is not measured (a dimension or
# attribute the study named does not exist here), says nothing about images or about the study's
# encoder. Each finding in full, with its figures, is on the pages that follow.
