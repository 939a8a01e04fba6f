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
# # Rank diagnostics

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
if vectors_path:
    Z = np.asarray(read_vectors(vectors_path, "vectors_path"), dtype=np.float64)
    source = (f"your vectors, {Z.shape[0]:,} rows × {Z.shape[1]} dimensions, loaded from "
              f"{Path(vectors_path).name}")
else:
    Z = synthetic.anisotropic_gaussian(n, d, decay=decay, mean_norm=mean_norm, seed=seed)
    source = (f"synthetic anisotropic Gaussian vectors from embdiag.synthetic (n = {n}, d = {d}, eigenvalue "
              f"decay i^-{decay}, mean norm {mean_norm}, seed {seed})")
variants = rank_diagnostics.variants(Z, scale, offset_norm, seed=seed)
invariances = rank_diagnostics.summary_table(variants)
rank_diagnostics.result(invariances, "your vectors" if vectors_path else "the synthetic matrix")

# %%
display(Markdown(f"**Data used here:** {source}." + (" The worked example below still uses its synthetic 8 × 4 "
                                                      "matrix." if vectors_path else "")))

# %% [markdown]
# Two numbers summarise how many directions a set of embeddings uses, and they read different
# matrices. For an $n \times d$ matrix $Z$ of embeddings, with $C$ its centred covariance:
#
# * **total variance** is $\operatorname{tr} C$;
# * the **participation ratio** reads the eigenvalues $\lambda_i$ of $C$:
#   $\mathrm{PR} = (\sum_i \lambda_i)^2 / \sum_i \lambda_i^2$;
# * **RankMe** reads the singular values $\sigma_i$ of the raw, *uncentred* $Z$:
#   $\mathrm{RankMe} = \exp(-\sum_i p_i \ln p_i)$ with $p_i = \sigma_i/\sum_j \sigma_j + 10^{-7}$.
#
# Both are $r$ for an isotropic rank-$r$ matrix. PR weights directions by variance, RankMe by
# singular value, and RankMe counts the mean as one more direction. On your vectors:
# `embdiag chapter rank_diagnostics -p vectors_path /path/to/vectors.npy --out my_pages`.
#
# ## Worked example
#
# A centred matrix with singular values $(3, 1, 0, 0)$ has
# $\mathrm{PR} = 1/(0.9^2 + 0.1^2) \approx 1.22$ and
# $\mathrm{RankMe} = \exp(-(0.75\ln 0.75 + 0.25\ln 0.25)) \approx 1.75$: on one matrix, PR sees
# barely more than one direction and RankMe almost two.

# %%
exhibits.table(
    rank_diagnostics.worked_example(seed).style.format(
        {"closed form": "{:.4f}", "embdiag": "{:.4f}", "difference": "{:.1e}"}),
    name="worked-example", extremes=False,  # each column holds two different measures: no highest to mark
    caption=f"Closed forms beside embdiag.metrics on an 8 × 4 matrix with these singular values (seed {seed}); "
            "RankMe differs by the 1e-7 added to each share. Exact.")

# %% [markdown]
# ## Three changes that keep the arrangement
#
# **Scaling** multiplies every vector by $c > 0$, a **common offset** adds one fixed vector to
# every row, **centring** subtracts the mean row. The figure shows the spectra each measure reads.

# %%
exhibits.figure(rank_diagnostics.spectra_chart(variants), name="spectra",
                caption="Spectrum shares, largest first (log-log): raw singular values (RankMe, circles) and "
                        "centred covariance eigenvalues (PR, squares) of the four matrices below. Exact.")

# %%
exhibits.table(
    invariances.style.format(
        {"total variance": "{:.4g}", "mean cosine": "{:.4f}", "RankMe": "{:.2f}", "participation ratio": "{:.2f}"}),
    name="invariances", extremes=False,  # which change moves which measure, not a ranking of the rows
    caption=f"Each measure of the original matrix, scaled by c = {scale:g}, moved by a common offset of norm "
            f"{offset_norm:g}, and centred. Exact.")

# %%
exhibits.figure(rank_diagnostics.offset_sweep_chart(Z, seed=seed), name="offset-sweep",
                caption=f"How large must an offset be? RankMe and PR under a common offset (seed {seed + 1}) "
                        "of 0.01 to 100 times the centred rows' root-mean-square norm. Exact.")

# %% [markdown]
# **Takeaway.** Name the measure you report; before reading a RankMe drop as lost spread, check
# whether the vectors merely moved together.
