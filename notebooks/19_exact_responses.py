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
# # Note: why the stress tests' responses are exact
#
# The stress-test chapter changes cached vectors without retraining anything, and several of
# its results look too clean to be measurements: contraction divides total variance by
# $10^4$ at severity .99 and leaves every other number unchanged to the last digit; a common
# offset leaves PR exactly where it was. They are clean because they are algebra, not
# experiments. Write the evaluation vectors as rows $x_i$, their mean $\bar x$ and their centred
# covariance $C = \frac{1}{n-1}\sum_i (x_i - \bar x)(x_i - \bar x)^\top$.
#
# - **Contraction** $x \mapsto c\,x$ with $c = 1 - s > 0$ maps $C$ to $c^2 C$: total variance
#   $\operatorname{tr} C$ scales by $c^2$, while cosines $\frac{x^\top y}{\lVert x\rVert\lVert y\rVert}$, hence
#   the cosine top-$k$, are unchanged. RankMe normalises the singular values to sum to one and
#   PR is a ratio of eigenvalue sums of the same degree, so both are unchanged; a standardized
#   probe rescales each feature back, so it is unchanged too.
# - **Common offset** $x \mapsto x + v$ leaves every $x_i - \bar x$, hence $C$, total variance
#   and PR, unchanged; it changes the raw (uncentred) singular values, so RankMe moves.
# - **Rank restriction** $x \mapsto m + P(x - m)$, with $P$ the projector on the top $r$
#   principal directions of the training rows, leaves the training rows exactly the top $r$
#   eigenvalues: their sum is the new total variance and their participation ratio the new PR.
# - **Noise** adds an independent draw: total variance grows by the noise variance only *on
#   average*, so its row below agrees to sampling error, not to rounding.
#
# The table computes every identity on the vectors below: the predicted value from the
# formula, the value measured by `embdiag.metrics`, and their relative difference.

# %% tags=["parameters"]
encoder = "reference-cnn"  # encoder name: reference-cnn, reference-vit or hf:<model id>@<revision>
dataset = "procedural"  # driving data: procedural, or bdd100k (with data_dir)
data_dir = None  # folder of the real dataset (BDD100K layout) when dataset is not procedural
vectors_path = None  # a user's vectors (.npy, n x d) instead of an encoder's ...
labels_path = None  # ... with their labels (CSV with a split column: train / val)
severities = [0.5, 0.9, 0.99]  # severities at which each identity is checked
k = 10  # neighbours compared for the cosine top-k identity
seed = 0  # seed of the offset direction, the noise draw and the procedural data

# %%
from IPython.display import Markdown, display

from embdiag.encoders.vectors import driving_vectors
from embdiag.interventions.identities import exact_responses
from embdiag.view import exhibits

vectors = driving_vectors(encoder, dataset, data_dir=data_dir, seed=seed, vectors_path=vectors_path,
                          labels_path=labels_path)
table = exact_responses(vectors.train, vectors.val, severities, k=k, seed=seed)
display(Markdown(f"**Data:** {vectors.source}."))

# %%
formats = {"severity": "{:g}", "predicted": "{:.6g}", "measured": "{:.6g}", "relative error": "{:.1e}"}
exhibits.table(
    table.style.format(formats).hide(axis="index"),
    name="identities", extremes=False,  # each row is a different quantity: a column's highest value means nothing
    caption=f"Each identity of the stress tests at severities {', '.join(f'{s:g}' for s in severities)}: the value "
            f"predicted by its formula, the value measured by embdiag.metrics (top-{k} neighbours for the cosine "
            f"order) and their relative difference. The exact rows differ only by float64 "
            f"rounding; the noise rows are one draw (seed {seed}) and hold only in expectation, so they differ by "
            "sampling error.")

# %%
exact = table[table["kind"] == "exact"]
noisy = table[table["kind"] != "exact"]
display(Markdown(
    f"Across the {len(exact)} exact identities the largest relative difference is "
    f"{exact['relative error'].max():.1e}, the size of floating-point rounding in float64; the "
    f"{len(noisy)} noise rows, which hold only in expectation, differ by up to "
    f"{noisy['relative error'].max():.1e}. Nothing here depends on the encoder: the same identities "
    "hold for any vectors, which is why the stress-test chapter reads its contraction and offset rows "
    "as checks of the code rather than as findings about the encoder."))
