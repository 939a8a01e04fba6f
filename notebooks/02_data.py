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
# # The data
#
# The study needs two kinds of data. Its driving experiments use images labelled with three
# attributes, **weather**, **scene** and **time of day**, split into 2,000 training and 983
# validation images, plus unlabelled images for self-supervised training. Its caption experiment
# uses 1,000 image groups with five captions each. The study drew these from BDD100K and COCO 2017.
# Neither can be downloaded by this book, so by default every chapter runs on a **procedurally
# generated** driving-scene dataset that `embdiag` renders on the spot, with the same attributes,
# split sizes, class imbalance and caption structure. With `source = "real"` and the paths below,
# this chapter (and every chapter built on `embdiag.data`) reads BDD100K and COCO instead.

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

# %%
import pandas as pd
from IPython.display import Markdown, display

from embdiag.data import ATTRIBUTES, load_study
from embdiag.paper.chapters import data as figures
from embdiag.data.captions import caption_statistics
from embdiag.view import charts, exhibits

charts.enable()
driving, caption_groups = load_study(
    source, seed=seed, image_size=image_size, difficulty=difficulty, n_train=n_train, n_val=n_val,
    n_pool=n_pool, n_caption=n_caption, bdd_train_labels=bdd_train_labels, bdd_val_labels=bdd_val_labels,
    bdd_images=bdd_images, coco_captions=coco_captions, coco_instances=coco_instances, coco_images=coco_images)
# Where every number of the page comes from, said once.
on_driving = driving.source + (", the book's default data, not BDD100K" if source == "procedural" else "")
on_captions = caption_groups.source + (", the book's default data, not COCO" if source == "procedural" else "")
display(Markdown(f"**Driving data in this run:** {on_driving}, {len(driving):,} images "
                 f"({', '.join(f'{s} {int((driving.split == s).sum()):,}' for s in driving.splits)}).  \n"
                 f"**Caption groups in this run:** {on_captions}, {len(caption_groups):,} images "
                 f"with {caption_groups.captions.shape[1]} captions each."))

# %% [markdown]
# ## How a procedural scene is made
#
# Each image is rendered with array operations from a list of facts decided first: its three
# attribute values, a camera (horizon height, vanishing point, lateral offset), the light, the
# weather, the road layout and up to twelve objects. Every attribute value has a visible cause:
#
# * **time of day**: overall light level and tint; at night street lamps, lit windows,
#   tail lights and the headlight pool on the road; at dawn/dusk a warm, low sky;
# * **weather**: a flat grey sky (overcast), scattered clouds on blue (partly cloudy), streaks
#   and a darker, wet road (rainy), flakes and white verges (snowy), haze that grows with
#   distance (foggy);
# * **scene**: the road and what lines it: tall buildings and a sidewalk (city street), a wide
#   multi-lane road with guard rail and hills (highway), houses with roofs and trees
#   (residential), stall stripes and rows of parked cars (parking lot), a canopy on pillars over
#   pumps (gas stations), walls, ceiling and ceiling lights around a bright exit (tunnel).
#
# "Undefined" is rendered as an ambiguous mixture (for weather, two effects at half strength;
# for scene, a layout that matches no class; for time of day, an in-between light). Each image
# also has a cue strength per attribute, lowered by `difficulty`, which pulls the rendering
# towards another class, so that some images are genuinely hard to label, and nuisance variation
# that carries no label: camera pitch and offset, auto-exposure, colour gains and contrast,
# roadside clutter and sensor noise. Cars, trucks, buses, pedestrians, cyclists, traffic lights
# and road signs are placed with counts, colours and positions that are recorded per instance.
# The same seed always gives the same bytes; each split has its own random stream, and generated
# splits are cached on disk with a manifest of checksums and parameters.
#
# ## Examples per attribute value
#
# Six training images per class (fewer where the class is rarer); each row label gives the
# number of training images in the class.

# %%
for attribute in ATTRIBUTES:
    display(exhibits.figure(
        figures.sample_grid_chart(driving, attribute, per_class=6, split="train", seed=seed),
        name=f"examples-{attribute}",
        caption=f"Example training images for each {attribute} class (drawn at random with seed {seed}); the row "
                f"label gives the class's number of training images. Examples, not a "
                "measurement; the CSV lists the images shown."))

# %% [markdown]
# ## Class counts per split
#
# The classes are as unbalanced as in BDD100K: clear weather, city streets and daytime dominate,
# and several classes are rare. The pool is meant for training without labels; its labels are
# shown only to describe it.

# %%
counts = driving.class_counts()
exhibits.table(figures.count_table(counts), name="class-counts", extremes=False,  # counts of classes: no highest to mark
               caption=f"Number of images per class (rows) in each split (columns). Exact "
                       "counts of this dataset, so no uncertainty applies.")

# %%
for attribute in ATTRIBUTES:
    display(exhibits.figure(
        figures.class_count_chart(counts, attribute), name=f"class-shares-{attribute}",
        caption=f"Share of each {attribute} class within each split (bars; the tooltip gives the count). "
                f"Exact shares of this dataset, no uncertainty."))

# %% [markdown]
# Balanced accuracy in this book averages per-class recall only over classes with at least ten
# evaluation samples, fixed once before any comparison. In the validation split the following
# classes fall below that floor. Foggy, gas stations and tunnel are absent altogether, as they
# were from the study's validation subset, so no result in this book says anything about them.

# %%
exhibits.table(figures.support_table(counts, split="val", floor=10), name="below-support-floor", extremes=False,  # counts of classes: no highest to mark
               caption=f"Validation classes with fewer than 10 images, which balanced accuracy leaves out. Exact "
                       "counts.")

# %% [markdown]
# ## Object categories
#
# Each image also carries the set of object categories it contains (a multi-label target used by
# category P@10). Share of images containing each category:

# %%
exhibits.table(figures.category_table(driving).style.format("{:.1%}"), name="category-shares", extremes=False,  # shares describe the data: no highest to mark
               caption=f"Share of the images of each split (columns) that contain each object category (rows). "
                       f" Exact shares of this dataset, no uncertainty.")

# %% [markdown]
# ## Captions
#
# Every caption group has five captions, five *views* of the same scene: an inventory of counts,
# the colours, the layout from left to right, the nearest object, and traffic control or
# totals, each with its own templates and synonyms. Every caption of a scene with objects names
# objects and the road with the weather or the light, so that one caption narrows its image
# down among many; none states an attribute that is undefined. Finding *one* caption of an
# image and recovering *all five* are still different tasks, as with COCO's human captions.
# Three groups:

# %%
examples = [0, 1, 2]
display(exhibits.figure(figures.image_strip_chart(caption_groups, examples, size=128), name="caption-images",
                        caption=f"The first three images of the caption groups, labelled by id."))
exhibits.table(figures.caption_table(caption_groups, examples).style.hide(axis="index"), name="caption-examples",
               extremes=False,  # text, and a caption number: nothing to rank
               caption=f"The five captions of each image above, one view each.")

# %% [markdown]
# Exact duplicates would cap text→image Hit@1 (a caption shared by two images cannot rank its
# own image first reliably), and a caption naming no object leaves only place, weather and light
# to go on. Measured on this run's caption groups (`embdiag.data.captions.caption_statistics`):

# %%
stats = caption_statistics(caption_groups.captions)
exhibits.table(
    pd.DataFrame({"value": [f"{stats['n_captions']:,}", f"{stats['distinct']:.2%}",
                            f"{stats['shared_with_other_image']:.2%}", f"{stats['no_object']:.2%}"]},
                 index=pd.Index(["captions", "distinct", "exactly matching a caption of another image",
                                 "naming no object"], name="caption groups")),
    name="caption-statistics",
    caption=f"Duplicates and object-free captions among all captions of the caption groups. "
            "Exact shares of this dataset, no uncertainty.")

# %% [markdown]
# ## What this data is, and what it is not
#
# **Mirrors BDD100K in:** attribute names and values (including "undefined" as a class of its
# own), the class imbalance, the 2,000 / 983 training and validation sizes, the absence of foggy,
# gas-station and tunnel images from validation, and the presence of classes below the support
# floor. **Mirrors COCO in:** 1,000 image groups with five captions each that overlap only
# partly in what they state, and a multi-label set of object categories per image.
#
# **Differs in:** the images are small, simple renderings, not photographs; every label has a
# known, programmed cause, and label ambiguity comes from the generator (weak cues and the
# undefined classes) rather than from annotators; captions come from templates with a small
# vocabulary and state only facts the renderer drew; there are seven object categories instead of COCO's eighty. With
# `source = "procedural"`, every number in this book is a measurement on this synthetic data,
# **not a BDD100K or COCO result**, and is not comparable number for number with the study's
# tables. What carries over is the method: which instrument reads which property of a set of
# vectors, and how each responds to the changes the study makes.
