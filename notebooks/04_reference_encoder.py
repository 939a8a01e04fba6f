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
# # The reference encoders: one meets both bars, the other misses the caption bar
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
# (`embdiag.paper.chapters.reference_encoder.BARS`), each with a margin, and each is decided below
# by a 95% bootstrap interval against it.

# %% tags=["parameters"]
encoders = ["reference-cnn", "reference-vit"]  # encoders to compare (reference encoders have a training card)
seed = 0  # seed of the procedural data

# %%
import pandas as pd
from IPython.display import Markdown, display

from embdiag.data import load_dataset
from embdiag.encoders import REFERENCE_NAMES
from embdiag.encoders import quality
from embdiag.paper.chapters import reference_encoder as chapter
from embdiag.encoders.vectors import caption_vectors, driving_vectors
from embdiag.interventions import caption_retrieval
from embdiag.view import exhibits

runs = {name: (driving_vectors(name, seed=seed), caption_vectors(name, seed=seed)) for name in encoders}
driving = load_dataset("procedural", splits=("train", "val"), seed=seed)
pixels = (quality.pooled_pixels(driving.subset("train").images), quality.pooled_pixels(driving.subset("val").images))
first = runs[encoders[0]][0]
items = quality.probe_items({"pooled pixels": pixels, **{n: (v.train, v.val) for n, (v, _) in runs.items()}},
                            first.train_labels, first.val_labels)  # per evaluation image: is each probe right?
probes = quality.probe_table(items)
retrieval = {n: caption_retrieval.evaluate(c.images, c.queries, c.documents, c.group, dims=(128,))
             for n, (_, c) in runs.items()}
captions = {n: chapter.caption_table(r) for n, r in retrieval.items()}
on_driving = (f"{driving.source}; {len(driving.subset('train')):,} training and {len(driving.subset('val')):,} "
              "evaluation images (not BDD100K)")
first_captions = runs[encoders[0]][1]
on_captions = (f"{len(first_captions.images):,} caption groups of procedural scenes (seed {seed}), "
               f"{len(first_captions.group) // len(first_captions.images)} captions each (not COCO)")
display(Markdown(f"**Data:** {on_driving}; {on_captions}."))

# %%
table = pd.concat({n: chapter.verdicts(items, retrieval[n], n, seed=seed) for n in encoders},
                  names=["encoder"]).droplevel(1)
chapter.result(table)

# %% [markdown]
# ## How each encoder was trained
#
# Read from the manifests committed beside the weights (`data/encoders/<name>/manifest.json`);
# training stops at a wall-time cap, so the steps done can fall short of the steps planned.

# %%
cards = [n for n in encoders if n in REFERENCE_NAMES]
card_table = pd.DataFrame([quality.card(n) for n in cards]).set_index("encoder")
exhibits.table(card_table.style.format({"final loss": "{:.3f}"}), name="training-cards", extremes=False,  # settings and a loss: no highest to mark
               reads=[f"data/encoders/{n}" for n in cards],  # the manifests only
               caption="How each reference encoder was trained, read from its committed manifest (data/encoders/"
                       "<name>/manifest.json): image tower, pinned revision (first 12 hex digits of the weights' "
                       "SHA-256), steps done of those planned, batch size, Matryoshka prefix widths, final training "
                       "loss and the command that retrains it. A record of one training run each; no uncertainty.")

# %% [markdown]
# ## How many directions the 768 coordinates use
#
# Each image tower ends in one linear layer from its last features to the 768 output
# coordinates, so before normalisation its image vectors lie in an affine subspace no wider than
# those features (256 channels for the CNN, width 128 for the ViT), whatever the output width;
# normalising each vector to unit length bends that subspace and can add one direction more.
# Counting the eigenvalues of the training vectors' covariance above $10^{-9}$ of the largest:

# %%
exhibits.table(
    pd.DataFrame({n: {"output coordinates": v.dim, "directions used": quality.spanned_directions(v.train)}
                  for n, (v, _) in runs.items()}).T.rename_axis("encoder"),
    name="directions", extremes=False,  # counts: no highest to mark
    caption=f"Output coordinates of each encoder and the number of directions its training image vectors use "
            f"(centred-covariance eigenvalues above 1e-9 of the largest). On the training images. "
            "Exact counts; no uncertainty.")

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
exhibits.table(probes.style.format("{:.2f}"), name="probes", extremes=list(probes.columns),  # balanced accuracies
               caption=f"Balanced accuracy (%) per attribute of a standardized linear probe fitted on the training "
                       f"images and scored on the evaluation images, for pooled pixels and each encoder's vectors. "
                       "One fit and one evaluation split; no interval.")

# %% [markdown]
# ## Captions: does a caption find its image?
#
# Each of the 5,000 captions, embedded in the query role, searches the 1,000 caption-group
# images by cosine; Hit@k is the share whose own image is among the first k. Chance is k in
# 1,000. The 128-d row uses the Matryoshka prefix (the first 128 coordinates, re-normalised).

# %%
exhibits.table(
    pd.concat(captions, names=["encoder"]).style.format(
        {"Hit@1": "{:.2f}", "Hit@10": "{:.2f}", "chance Hit@10": "{:.1f}"}),
    name="caption-hits", extremes=["Hit@1", "Hit@10"],  # not the chance level
    caption=f"Text→image Hit@1 and Hit@10 (%) of every caption, embedded in the query role, searching the "
            f"caption-group images by cosine, at full width and at the 128-d Matryoshka prefix, with chance Hit@10 "
            f"(computed by embdiag.interventions.caption_retrieval). Exact search over one set "
            "of captions; no interval.")

# %% [markdown]
# ## Are the bars met?

# %%
exhibits.table(table.set_index("finding", append=True).drop(columns=["low", "high"]), name="bars",
               extremes=False,  # verdicts in words
               caption="Each declared bar (embdiag.paper.chapters.reference_encoder.BARS): its claim, margin and why, "
                       "this encoder's numbers, the verdict and the interval that decided it, and the old point-estimate "
                       "criterion with its verdict. Balanced accuracy: paired bootstrap over the evaluation images "
                       "(5,000 draws, probes held as fitted); Hit@10: bootstrap over caption groups.")

# %%
display(Markdown(f"The chapters that follow measure **{encoders[0]}**; the appendix repeats the stress, compression "
                 "and neighbour-stability chapters on the second encoder by changing one parameter."))
