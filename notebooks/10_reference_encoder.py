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
# # The reference encoders: what the fixed-encoder chapters measure
#
# The study's second design embeds its data once with a pinned pretrained encoder
# (EmbeddingGemma 2), caches the vectors and then changes the vectors, never the encoder.
# No pretrained encoder can be downloaded on the machines that build this book, so the project
# trains its own: a small image–text **dual encoder** that maps 32 × 32 images and captions into
# one 768-dimensional space of unit vectors, trained with a symmetric contrastive loss applied at
# the nested Matryoshka prefixes 768, 512, 256 and 128, with a query and a document role prompt for
# text as the study's encoder has. It learns from the unlabelled pool of procedural scenes and
# their captions, never from the evaluation images or the caption groups. Two image towers share
# the recipe: a small convolutional network (**reference-cnn**, the reference encoder of the
# following chapters) and a small vision transformer (**reference-vit**, the second encoder of the
# appendix). The committed weights are identified by their SHA-256, which is their pinned
# revision; `python -m embdiag.encoders.train --arch cnn|vit --minutes N` retrains them.
#
# An encoder is a meaningful subject only if its vectors carry more than the pixels do and its
# captions find their images. Both bars were declared before training
# (`embdiag.encoders.quality.BARS`) and are checked below.

# %% tags=["parameters"]
encoders = ["reference-cnn", "reference-vit"]  # encoders to compare (reference encoders have a training card)
seed = 0  # seed of the procedural data

# %%
import pandas as pd
from IPython.display import Markdown, display

from embdiag.data import load_dataset
from embdiag.encoders import REFERENCE_NAMES
from embdiag.encoders import quality
from embdiag.encoders.vectors import caption_vectors, driving_vectors

runs = {name: (driving_vectors(name, seed=seed), caption_vectors(name, seed=seed)) for name in encoders}
driving = load_dataset("procedural", splits=("train", "val"), seed=seed)
pixels = (quality.pooled_pixels(driving.subset("train").images), quality.pooled_pixels(driving.subset("val").images))
first = runs[encoders[0]][0]
probes = quality.probe_table({"pooled pixels": pixels, **{n: (v.train, v.val) for n, (v, _) in runs.items()}},
                             first.train_labels, first.val_labels)
captions = {n: quality.caption_table(c.images, c.queries, c.group) for n, (_, c) in runs.items()}
display(Markdown(f"**Data:** {driving.source}; {len(driving.subset('train')):,} training and "
                 f"{len(driving.subset('val')):,} evaluation images, and {len(runs[encoders[0]][1].images):,} "
                 "caption groups of the same generator. Not BDD100K, not COCO."))

# %% [markdown]
# ## How each encoder was trained
#
# Read from the manifests committed beside the weights (`data/encoders/<name>/manifest.json`);
# training stops at a wall-time cap, so the steps done can fall short of the steps planned.

# %%
pd.DataFrame([quality.card(n) for n in encoders if n in REFERENCE_NAMES]).set_index("encoder")

# %% [markdown]
# ## How many directions the 768 coordinates use
#
# Each image tower ends in one linear layer from its last features to the 768 output
# coordinates, so before normalisation its image vectors lie in an affine subspace no wider than
# those features (256 channels for the CNN, width 128 for the ViT), whatever the output width.
# Counting the eigenvalues of the training vectors' covariance above $10^{-9}$ of the largest:

# %%
pd.DataFrame({n: {"output coordinates": v.dim, "directions used": quality.spanned_directions(v.train)}
              for n, (v, _) in runs.items()}).T.rename_axis("encoder")

# %% [markdown]
# This matters in the chapters that follow: removing directions the vectors do not use costs
# nothing, so PCA to 512 or 256 dimensions is almost lossless here, and rank restriction bites
# only once it keeps fewer directions than these.

# %% [markdown]
# ## Labels: the encoder against its own pixels
#
# Balanced accuracy (%) of the standardized linear probe, fitted on the training images and
# scored on the evaluation images, for each encoder's 768-d vectors and for pooled pixels
# (8 × 8 average-pooled RGB plus per-channel mean and standard deviation, 198 features).
# Procedural time of day is largely brightness, so pixels already read it well; weather and
# scene need more.

# %%
probes.style.format("{:.2f}").highlight_max(axis=0, props="font-weight: bold")

# %% [markdown]
# ## Captions: does a caption find its image?
#
# Each of the 5,000 captions, embedded in the query role, searches the 1,000 caption-group
# images by cosine; Hit@k is the share whose own image is among the first k. Chance is k in
# 1,000. The 128-d row uses the Matryoshka prefix (the first 128 coordinates, re-normalised).

# %%
pd.concat(captions, names=["encoder"]).droplevel(1).style.format(
    {"Hit@1": "{:.2f}", "Hit@10": "{:.2f}", "chance Hit@10": "{:.1f}"})

# %% [markdown]
# ## Are the bars met?

# %%
table = pd.concat({n: quality.verdicts(probes, captions[n], n) for n in encoders}, names=["encoder"]).droplevel(1)
table

# %%
met = {n: bool(table.loc[[n], "met"].all()) for n in encoders}
display(Markdown(" ".join(
    f"**{n}** {'meets both bars' if ok else 'misses at least one bar'}." for n, ok in met.items())
    + f" The chapters that follow measure **{encoders[0]}**; the appendix repeats the stress, compression "
    "and neighbour-stability chapters on the second encoder by changing one parameter."))
