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
from embdiag.paper import real_encoder
from embdiag.view import exhibits

verdicts = real_encoder.encoder_findings(k=k, seed=seed, n_draws=n_draws)
table = real_encoder.comparison(verdicts)
real_encoder.result(table)

# %% [markdown]
# Every design-B finding of the study (the declared `CRITERIA` of the stress-test, compression,
# neighbour-stability and caption-retrieval sections), measured and decided by the same code as each
# section's own page (`embdiag.study`), with the settings that page ran with, so the numbers here are
# the pages' own, on three
# encoders: the project's two reference encoders on procedural driving scenes and caption groups,
# and a real pretrained *text* encoder, WordLlama `l2_supercat`, on a real lexical database, a
# committed sample of WordNet 3.0 (glosses labelled by part of speech and lexicographer category;
# a gloss's example sentences as its "captions"; not images, not BDD100K or COCO). WordLlama's
# settings are those of its pages 11-14 (`notebooks/variants.yml`): headline attribute `lexname`,
# prefixes 128 and 64.

# %%
exhibits.table(real_encoder.verdict_table(table), name="findings-by-encoder", extremes=False,  # verdicts in words
               caption=f"Per design-B finding of the study (rows: section and finding; its declared claim and margin "
                       f"are in its chapter's findings table): its kind and its verdict on each encoder; only the study's are "
                       f"counted above. reference-cnn and reference-vit: the reference encoders on procedural "
                       f"driving scenes and caption groups, at the chapters' defaults; {real_encoder.WORDNET}: "
                       f"WordLlama l2_supercat on the committed WordNet 3.0 sample (lexname headline, prefixes 128 "
                       f"and 64). k = {k}, seed {seed}; the numbers that decide each verdict follow below.")

# %% [markdown]
# The numbers that decide each verdict, per finding and encoder, with the interval and the
# margin that decided it:

# %%
exhibits.table(real_encoder.numbers_table(table), name="numbers-by-encoder", extremes=False,  # numbers in words
               collapsed="Each finding's numbers, interval and margin on every encoder",
               caption=f"Per design-B finding and encoder: its verdict, the numbers its claim is decided on and the "
                       f"interval against the margin that decided it, as the finding's chapter prints them. Paired "
                       f"bootstrap intervals over queries or caption groups ({n_draws:,} draws, seed {seed}), Wilson "
                       f"intervals for shares of queries; exact identities computed exactly on the fixed gallery.")

# %% [markdown]
# **Not measured, and why.** The criteria are applied as declared, at the dimensions they name:
# WordLlama is 256-dimensional and was trained with prefixes 128 and 64, so the findings at 512 or
# 256 dimensions have nothing to be checked on, and those at 128 are checked at half the native
# width where the study's were at a sixth. Re-declaring them in proportion to the width (171, 85
# and 43 of 256) was considered and not done: those are not prefixes WordLlama was trained with,
# so a Matryoshka finding would be tested where the method is not meant to work, and a criterion
# changed after seeing this encoder's numbers would no longer be declared in advance. Where a
# criterion names the study's six columns it reads WordNet's four (BA and P@10 of `pos` and
# `lexname`), and `lexname` takes weather's place.
#
# **Scope.** A finding that holds on WordLlama says the instrument responds on a real encoder's
# vectors of real text as on the study's; one that does not, or is not measured, says nothing
# about images or about the study's encoder. Each finding in full, with its figures, is on the
# pages that follow.
