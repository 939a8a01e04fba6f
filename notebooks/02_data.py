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
# # Data and reference encoders

# %% tags=["parameters"]
source = "procedural"  # "procedural" (generated here) or "real" (BDD100K + COCO 2017 from the paths below)
seed = 0
image_size = 64  # pixels per side (32..224 for procedural scenes)
difficulty = 0.5  # procedural only: 0 = every cue textbook-clear, 1 = many ambiguous images
n_train = 2000
n_val = 983
n_pool = 20000  # unlabelled pool for self-supervised training
n_caption = 1000  # image-caption groups
bdd_train_labels: str | None = None  # e.g. .../bdd100k/labels/bdd100k_labels_images_train.json
bdd_val_labels: str | None = None  # e.g. .../bdd100k/labels/bdd100k_labels_images_val.json
bdd_images: str | None = None  # e.g. .../bdd100k/images/100k (holding train/ and val/)
coco_captions: str | None = None  # e.g. .../coco/annotations/captions_val2017.json
coco_instances: str | None = None  # e.g. .../coco/annotations/instances_val2017.json
coco_images: str | None = None  # e.g. .../coco/val2017
encoders = ["reference-cnn", "reference-vit"]  # encoders to check (reference encoders have a training card)

# %%
import pandas as pd
from IPython.display import Markdown, display

from embdiag.data import ATTRIBUTES, load_dataset, load_study
from embdiag.data.captions import caption_statistics
from embdiag.encoders import REFERENCE_NAMES, quality
from embdiag.encoders.vectors import caption_vectors, driving_vectors
from embdiag.interventions import caption_retrieval
from embdiag.paper.chapters import data as figures
from embdiag.paper.chapters import reference_encoder as bars
from embdiag.view import charts, exhibits

charts.enable()
runs = {name: (driving_vectors(name, seed=seed), caption_vectors(name, seed=seed)) for name in encoders}
scenes = load_dataset("procedural", splits=("train", "val"), seed=seed)  # the images the encoders embedded
pixels = (quality.pooled_pixels(scenes.subset("train").images), quality.pooled_pixels(scenes.subset("val").images))
first = runs[encoders[0]][0]
items = quality.probe_items({"pooled pixels": pixels, **{n: (v.train, v.val) for n, (v, _) in runs.items()}},
                            first.train_labels, first.val_labels)  # per evaluation image: is each probe right?
retrieval = {n: caption_retrieval.evaluate(c.images, c.queries, c.documents, c.group, dims=(128,))
             for n, (_, c) in runs.items()}
table = pd.concat({n: bars.verdicts(items, retrieval[n], n, seed=seed) for n in encoders},
                  names=["encoder"]).droplevel(1)
bars.result(table)

# %%
driving, caption_groups = load_study(
    source, seed=seed, image_size=image_size, difficulty=difficulty, n_train=n_train, n_val=n_val,
    n_pool=n_pool, n_caption=n_caption, bdd_train_labels=bdd_train_labels, bdd_val_labels=bdd_val_labels,
    bdd_images=bdd_images, coco_captions=coco_captions, coco_instances=coco_instances, coco_images=coco_images)
first_captions = runs[encoders[0]][1]
same = caption_groups.source == driving.source
display(Markdown(
    f"**Data in this run:** {driving.source}"
    + (", the book's default data, not BDD100K or COCO" if source == "procedural" else "")
    + f": {len(driving):,} driving images ({', '.join(f'{s} {int((driving.split == s).sum()):,}' for s in driving.splits)})"
    + f"; {len(caption_groups):,} caption groups of {caption_groups.captions.shape[1]} captions"
    + ("" if same else f" ({caption_groups.source})") + ".  \n"
    f"**Encoder bars measured on:** "
    + ("the same scenes" if scenes.source == driving.source else scenes.source)
    + f", {len(scenes.subset('train')):,} training and {len(scenes.subset('val')):,} evaluation images and "
    f"{len(first_captions.images):,} caption groups."))

# %% [markdown]
# The study drew its data from BDD100K (driving images labelled with **weather**, **scene** and
# **time of day**) and COCO 2017 (image groups with five captions each), and embedded them with a
# pinned pretrained encoder. None of these can be downloaded by this book, so by default it
# generates driving scenes with the same attributes, split sizes and caption structure, and trains
# its own reference encoders. With `source = "real"` and the paths above, this page (and every
# page built on `embdiag.data`) reads BDD100K and COCO instead.
#
# ## The driving scenes
#
# Each procedural image is rendered from facts decided first: its three attribute values, a
# camera, the light, the weather, the road layout and up to twelve objects. Every attribute value
# has a visible cause (light level and tint, sky, streaks, flakes and haze, the road and what lines
# it); `difficulty` weakens the cues, "undefined" is an ambiguous mixture, and nuisance variation
# (exposure, colour, clutter, noise) carries no label. The same seed gives the same bytes.

# %%
for attribute in ATTRIBUTES:
    display(exhibits.figure(
        figures.sample_grid_chart(driving, attribute, per_class=6, split="train", seed=seed),
        name=f"examples-{attribute}",
        caption=f"Training images per {attribute} class (drawn with seed {seed}); the row label gives the "
                "class's count. Examples, not a measurement."))

# %%
counts = driving.class_counts()
display(Markdown(figures.balance_sentence(counts)))
exhibits.table(figures.count_table(counts), name="class-counts", extremes=False,  # counts of classes: no highest to mark
               collapsed="Images per class and split",
               caption="Number of images per class (rows) in each split (columns). Exact counts.")

# %%
for attribute in ATTRIBUTES:
    display(exhibits.figure(
        figures.class_count_chart(counts, attribute), name=f"class-shares-{attribute}",
        caption=f"Share of each {attribute} class within each split; the tooltip gives the count. Exact."))

# %%
display(exhibits.table(figures.support_table(counts, split="val", floor=10), name="below-support-floor",
                       extremes=False,  # counts of classes: no highest to mark
                       collapsed="Validation classes below the support floor",
                       caption="Validation classes with fewer than 10 images, which balanced accuracy leaves out. "
                               "Exact counts."))
exhibits.table(figures.category_table(driving).style.format("{:.1%}"), name="category-shares", extremes=False,  # shares describe the data: no highest to mark
               collapsed="Object categories per split (the targets of category P@10)",
               caption="Share of the images of each split (columns) that contain each object category (rows). "
                       "Exact shares.")

# %% [markdown]
# ## Captions
#
# Each group has five captions, five views of one scene: counts, colours, layout, the nearest
# object, and traffic control or totals. Finding *one* caption's image and recovering *all five*
# are different tasks, as with COCO's human captions.

# %%
examples = [0, 1, 2]
display(exhibits.figure(figures.image_strip_chart(caption_groups, examples, size=128), name="caption-images",
                        caption="The first three images of the caption groups, labelled by id."))
display(exhibits.table(figures.caption_table(caption_groups, examples).style.hide(axis="index"),
                       name="caption-examples", extremes=False,  # text, and a caption number: nothing to rank
                       collapsed="The five captions of each image above",
                       caption="The five captions of each image above, one view each."))
stats = caption_statistics(caption_groups.captions)
exhibits.table(
    pd.DataFrame({"value": [f"{stats['n_captions']:,}", f"{stats['distinct']:.2%}",
                            f"{stats['shared_with_other_image']:.2%}", f"{stats['no_object']:.2%}"]},
                 index=pd.Index(["captions", "distinct", "exactly matching a caption of another image",
                                 "naming no object"], name="caption groups")),
    name="caption-statistics",
    caption="Duplicates (which cap text→image Hit@1) and captions naming no object, among all captions. "
            "Exact shares.")

# %%
display(Markdown(
    ("**What this data is not.** Small, simple renderings with programmed labels and template captions "
     "of a small vocabulary: every number in this book is a measurement on this synthetic data, **not a "
     "BDD100K or COCO result**, and is not comparable number for number with the study's tables. What "
     "carries over is the method." if source == "procedural" else
     "**Real data.** The driving attributes and captions above are read from BDD100K and COCO.")))

# %% [markdown]
# ## The reference encoders
#
# Each is a small image–text dual encoder trained here, with a symmetric contrastive loss at
# nested Matryoshka prefixes and query and document role prompts for text, on the unlabelled pool
# and its captions, never on the evaluation images or the caption groups. Two image towers share
# the recipe: a convolutional network and a vision transformer. An encoder is a meaningful subject
# only if its vectors beat its own pixels on labels and its captions find their images; both bars
# were declared before training (`embdiag.paper.chapters.reference_encoder.BARS`) and are decided
# by a 95% bootstrap interval against their margins.

# %%
cards = [n for n in encoders if n in REFERENCE_NAMES]
card_table = pd.DataFrame([quality.card(n) for n in cards]).set_index("encoder")
exhibits.table(card_table.style.format({"final loss": "{:.3f}"}), name="training-cards", extremes=False,  # settings and a loss: no highest to mark
               reads=[f"data/encoders/{n}" for n in cards],  # the manifests only
               caption="How each reference encoder was trained, read from its committed manifest: image tower, "
                       "pinned revision (first 12 hex digits of the weights' SHA-256), steps done of those "
                       "planned (training stops at a wall-time cap), batch size, Matryoshka prefixes, final loss "
                       "and the command that retrains it. One run each.")

# %%
exhibits.table(
    pd.DataFrame({n: {"output coordinates": v.dim, "directions used": quality.spanned_directions(v.train)}
                  for n, (v, _) in runs.items()}).T.rename_axis("encoder"),
    name="directions", extremes=False,  # counts: no highest to mark
    caption="Output coordinates of each encoder and the directions its training image vectors use "
            "(centred-covariance eigenvalues above 1e-9 of the largest): a tower ending in one linear layer "
            "uses no more directions than its last features, and removing unused directions costs nothing. "
            "Exact counts.")

# %%
probes = quality.probe_table(items)
exhibits.table(probes.style.format("{:.2f}"), name="probes", extremes=list(probes.columns),  # balanced accuracies
               caption="Balanced accuracy (%) per attribute of a standardized linear probe fitted on the training "
                       "images and scored on the evaluation images, for pooled pixels (8 × 8 RGB plus channel "
                       "statistics) and each encoder's vectors. One fit; no interval.")

# %%
exhibits.table(
    pd.concat({n: bars.caption_table(r) for n, r in retrieval.items()}, names=["encoder"]).style.format(
        {"Hit@1": "{:.2f}", "Hit@10": "{:.2f}", "chance Hit@10": "{:.1f}"}),
    name="caption-hits", extremes=["Hit@1", "Hit@10"],  # not the chance level
    caption="Text→image Hit@1 and Hit@10 (%) of every caption (query role) searching the caption-group images "
            "by cosine, at full width and at the 128-d Matryoshka prefix, with chance Hit@10. Exact search; "
            "no interval.")

# %%
exhibits.table(table.set_index("finding", append=True).drop(columns=["low", "high"]), name="bars",
               extremes=False,  # verdicts in words
               collapsed="Each bar's claim, margin, interval and verdict",
               caption="Each declared bar: claim, margin and why, this encoder's numbers, the verdict with the "
                       "interval that decided it, and the old point-estimate criterion. Balanced accuracy: paired "
                       "bootstrap over evaluation images (5,000 draws, probes as fitted); Hit@10: bootstrap over "
                       "caption groups.")

# %%
display(Markdown(f"The pages that follow measure **{encoders[0]}**; "
                 + "[Across encoders](10_across_encoders.html) repeats them on others."))
