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
# # Technical note: rank diagnostics
#
# Two numbers in this study summarise how many directions a set of embeddings uses:
# the **participation ratio** and **RankMe**. They look alike and are often quoted
# side by side, but they read different matrices, and so they respond differently to the
# simplest changes one can make to a set of vectors. This note states both definitions,
# computes the worked example live with `embdiag`, and shows the invariances numerically.
# Re-run the note on your own vectors with
# `embdiag chapter rank_diagnostics -p vectors_path /path/to/vectors.npy --out my_pages`.

# %% tags=["parameters"]
n = 983  # rows of the synthetic matrix (the study's validation size)
d = 64  # columns
decay = 1.0  # covariance eigenvalues fall as i**-decay
mean_norm = 3.0  # norm of the common mean of the synthetic vectors
scale = 0.01  # positive scaling factor c
offset_norm = 30.0  # norm of the common offset added to every row
seed = 0
vectors_path = None  # optional file of row vectors (n x d: .npy, .npz, .parquet, .safetensors) replacing the synthetic matrix

# %%
from pathlib import Path

import numpy as np
from IPython.display import Markdown, display

from embdiag import synthetic
from embdiag.data.files import read_vectors
from embdiag.view import charts, exhibits
from embdiag.paper.chapters import rank_diagnostics

charts.enable()

# %% [markdown]
# ## Definitions
#
# Let $Z$ be an $n \times d$ matrix whose rows are embeddings.
#
# **Total variance** is the trace of the centred covariance, the sum of the per-dimension
# variances: $\operatorname{tr} C$ with $C = X^\top X/(n-1)$ and $X = Z - \mathbf{1}\bar z^\top$.
#
# **Participation ratio** uses the eigenvalues $\lambda_i$ of the centred covariance $C$:
#
# $$\mathrm{PR}(Z) = \frac{\left(\sum_i \lambda_i\right)^2}{\sum_i \lambda_i^2}.$$
#
# **RankMe** uses the singular values $\sigma_i$ of the raw, *uncentred* $Z$:
#
# $$p_i = \frac{\sigma_i}{\sum_j \sigma_j} + \varepsilon,\qquad
# \mathrm{RankMe}(Z) = \exp\Big(-\sum_i p_i \ln p_i\Big),\qquad \varepsilon = 10^{-7}.$$
#
# Both equal $r$ for an isotropic matrix of rank $r$ and 1 when one direction carries
# everything; an exactly zero spectrum is assigned 1 by convention. PR weights directions by
# variance (squared singular values), RankMe by singular values through an entropy, so RankMe
# counts weak directions more generously. And because RankMe does not centre, it sees the
# mean of the vectors as one more direction.

# %% [markdown]
# ## Worked example
#
# A centred matrix with singular values $(3, 1, 0, 0)$ has covariance eigenvalues proportional
# to $(9, 1, 0, 0)$, so $\mathrm{PR} = 10^2/(81 + 1) = 1/(0.9^2 + 0.1^2) \approx 1.22$, while its
# singular-value shares are $(0.75, 0.25, 0, 0)$ and
# $\mathrm{RankMe} = \exp(-(0.75\ln 0.75 + 0.25\ln 0.25)) \approx 1.75$.
# The table computes both from an actual $8 \times 4$ matrix built with exactly these
# singular values.

# %%
exhibits.table(
    rank_diagnostics.worked_example(seed).style.format(
        {"closed form": "{:.4f}", "embdiag": "{:.4f}", "difference": "{:.1e}"}),
    name="worked-example", extremes=False,  # each column holds two different measures: no highest to mark
    caption=f"Participation ratio and RankMe of the worked example: the closed form beside embdiag.metrics on an "
            f"8 × 4 matrix with singular values (3, 1, 0, 0) built by embdiag.synthetic (seed {seed}), and their "
            "difference rounded to 1e-12. Exact computations; no uncertainty applies.")

# %% [markdown]
# The two measures disagree on the *same* matrix: PR says barely more than one direction,
# RankMe says almost two. Neither is wrong; they weight the second direction differently.
# (RankMe's small difference from the closed form is the $\varepsilon = 10^{-7}$ added to every
# share, including the two zero ones, as the definition prescribes.)
#
# ## Invariances, shown numerically
#
# Take a matrix of vectors (below: synthetic anisotropic Gaussian vectors with a non-zero
# mean, or your own through `vectors_path`) and apply three changes that leave every
# vector's *relative* arrangement alone:
#
# * **positive scaling** by $c$ multiplies every vector by the same $c > 0$;
# * **common offset** adds one fixed vector to every row;
# * **centring** subtracts the mean row.

# %%
if vectors_path:
    Z = np.asarray(read_vectors(vectors_path, "vectors_path"), dtype=np.float64)
    source = (f"your vectors, {Z.shape[0]:,} rows × {Z.shape[1]} dimensions, loaded from "
              f"{Path(vectors_path).name}")
else:
    Z = synthetic.anisotropic_gaussian(n, d, decay=decay, mean_norm=mean_norm, seed=seed)
    source = (f"synthetic anisotropic Gaussian vectors from embdiag.synthetic (n = {n}, d = {d}, eigenvalue "
              f"decay i^-{decay}, mean norm {mean_norm}, seed {seed}); no image and no encoder is involved")
variants = rank_diagnostics.variants(Z, scale, offset_norm, seed=seed)
display(Markdown(f"**Data used here:** {source}." + (" The worked example above still uses its synthetic 8 × 4 "
                                                      "matrix; everything below uses your vectors." if vectors_path
                                                      else "")))

# %%
exhibits.table(
    rank_diagnostics.summary_table(variants).style.format(
        {"total variance": "{:.4g}", "mean cosine": "{:.4f}", "RankMe": "{:.2f}", "participation ratio": "{:.2f}"}),
    name="invariances", extremes=False,  # which change moves which measure, not a ranking of the rows
    caption=f"Total variance, mean cosine, RankMe and participation ratio of the original matrix, the matrix scaled "
            f"by c = {scale:g}, moved by a common offset of norm {offset_norm:g}, and centred. "
            "Exact computations on one matrix; no uncertainty applies.")

# %% [markdown]
# Read the table column by column:
#
# * scaling multiplies total variance by $c^2$ and leaves mean cosine, RankMe and PR exactly
#   where they were: shrinking all vectors by the same factor changes no direction;
# * a common offset leaves total variance and PR unchanged (they centre first) but drags the
#   mean cosine towards 1 and lowers RankMe, because the offset becomes the dominant raw
#   direction;
# * centring removes the mean: PR and variance are unchanged again, while RankMe rises, since
#   the mean direction no longer dominates the raw spectrum.
#
# The figure shows why: the normalised singular-value shares $\sigma_i/\sum_j\sigma_j$ that
# RankMe reads (circles) against the covariance eigenvalue shares $\lambda_i/\sum_j\lambda_j$ that
# PR reads (squares). The original and the scaled matrix draw the same lines: scaling changes
# no share. Click a legend entry to isolate a matrix; hover for values.

# %%
exhibits.figure(rank_diagnostics.spectra_chart(variants), name="spectra",
                caption=f"Shares of the spectrum, largest first, on log-log axes: the raw singular values that RankMe "
                        f"reads (circles) and the centred covariance eigenvalues that PR reads (squares), for each of the "
                        f"four matrices of the table above (shares at or below 1e-12 left out). Exact "
                        "computations; no uncertainty applies.")

# %% [markdown]
# ## How large must an offset be?
#
# RankMe's sensitivity to the mean is gradual. Sweeping the offset norm relative to the
# root-mean-square norm of the centred vectors shows RankMe falling towards 1 once the offset
# is comparable to the spread, while PR stays flat.

# %%
exhibits.figure(rank_diagnostics.offset_sweep_chart(Z, seed=seed), name="offset-sweep",
                caption=f"RankMe and participation ratio of the matrix moved by a common offset (one fixed direction, "
                        f"seed {seed + 1}) whose norm is 0.01 to 100 times the root-mean-square norm of the centred "
                        f"rows (log axis). Exact computations; no uncertainty applies.")

# %% [markdown]
# **Takeaway.** RankMe and PR answer "how many directions?" about different matrices. Report
# which one you use, and do not read a RankMe drop as a loss of spread without checking whether
# the vectors merely moved together: a common offset is enough.
