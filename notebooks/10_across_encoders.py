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
# # Across encoders

# %% tags=["parameters"]
k = 10  # neighbours per query and cut-off of Hit@k, as in the four chapters
seed = 0  # seed of the random interventions, bootstrap draws and shuffles
n_draws = 5000  # paired bootstrap draws of the caption chapter's intervals

# %%
from IPython.display import Markdown, display

from embdiag.paper import real_encoder, scoreboard
from embdiag.view import charts, exhibits

charts.enable()
verdicts = real_encoder.encoder_findings(k=k, seed=seed, n_draws=n_draws)
table = real_encoder.comparison(verdicts)
labels = list(real_encoder.ENCODERS)
real_encoder.result(table, figure=exhibits.figure(
    scoreboard.matrix(real_encoder.matrix_frame(table)), name="verdicts-by-encoder",
    caption=f"Each of the study's design-B findings (rows) and its verdict on each encoder (columns); hover a cell for "
            f"the numbers and the interval that decided it. k = {k}, seed {seed}."))

# %%
wordnet = real_encoder.load_vectors(*real_encoder.ENCODERS[real_encoder.WORDNET])[0]
given = real_encoder.section_parameters(*real_encoder.ENCODERS[real_encoder.WORDNET])
missing = real_encoder.not_measured(table, real_encoder.WORDNET)
display(Markdown(
    f"**Encoders and data.** {labels[0]} and {labels[1]}: the project's two reference encoders on procedural "
    f"driving scenes and caption groups, at the chapters' defaults. {real_encoder.WORDNET}: {wordnet.source}; "
    f"{wordnet.dim}-dimensional, attributes {', '.join(wordnet.attributes)}, prefixes "
    f"{' and '.join(map(str, given['compression']['dims']))}, headline attribute {given['stress tests']['attribute']}."
    + (f" **Not measured on it** ({len(missing)}): {'; '.join(missing)}: each criterion names a dimension this "
       f"encoder does not have." if missing else "")))

# %% [markdown]
# Each verdict is computed by the same code, with the same settings, as the finding's own chapter; the
# variants that run a chapter on another encoder are declared in `notebooks/variants.yml` and execute
# with `embdiag chapter`, e.g. `embdiag chapter 12_compression_wordnet --out DIR`. The criteria are applied as declared: they were not rescaled to
# WordLlama's width, because a criterion changed after seeing an encoder's numbers would no longer be
# declared in advance. A finding that holds on WordLlama says the instrument responds on a real
# encoder's vectors of real text as on the study's; it says nothing about images.

# %%
exhibits.table(real_encoder.verdict_table(table), name="findings-by-encoder", extremes=False,  # verdicts in words
               collapsed="Every finding's verdict on each encoder, this project's additions and scope included",
               caption="Per finding (the study's, this project's additions and scope statements): its kind and its "
                       "verdict on each encoder.")

# %%
numbers = real_encoder.numbers_table(table)
for label in labels:
    display(exhibits.table(numbers.xs(label, level="encoder"), name=f"numbers-{label.split()[0].lower()}", extremes=False,
                   collapsed=f"{label}: the numbers, interval and margin behind each verdict",
                   caption=f"{label}: per finding, its verdict and the numbers and interval that decided it "
                           f"(paired bootstrap over queries or caption groups, {n_draws:,} draws; Wilson intervals "
                           f"for shares of queries; exact identities computed exactly)."))
