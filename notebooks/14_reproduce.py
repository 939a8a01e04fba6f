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
# # Reproduce
#
# Everything on this site is computed by the `embdiag` library from committed artifacts or from
# caches that the commands below regenerate. This page says how to rebuild the site, re-run one
# chapter with other parameters, point the chapters at the real datasets and an encoder of your
# choice, and what each committed artifact is.
#
# ## Rebuild everything
#
# Two commands do all set-up on a fresh machine (Python 3.11; they create `.venv` and install
# the project from its own files):
#
# ```bash
# make book   # execute every chapter with papermill, then build this site -> book/_build/html/
# make test   # unit, property and cross-check tests, nbval on the executed chapters, the browser check
# ```
#
# `make publish` then puts the last build onto the `gh-pages` branch (see the README).
#
# ## Re-run one chapter with other parameters
#
# Each chapter is a notebook, `notebooks/NN_name.py`, with one cell of parameters. One command
# executes it with papermill into `book/chapters/NN_name.ipynb`, checking every parameter against
# that cell first; a chapter that fails leaves the site's copy untouched:
#
# ```bash
# .venv/bin/embdiag chapter stress_tests -p severities '[0, 0.5, 0.9, 0.99]' -p k 20
# .venv/bin/embdiag chapter compression -p encoder reference-vit -p dims '[384, 192]'
# .venv/bin/embdiag book --no-execute   # rebuild the site from the executed chapters
# ```
#
# Every chapter's parameters, with their defaults, read from the chapters themselves:

# %% tags=["parameters"]
profile = "cpu"  # training records folder whose regeneration command is shown

# %%
from IPython.display import Markdown, display

from embdiag import artifacts
from embdiag.paper import exhibits, pipeline

exhibits.table(pipeline.parameter_table().set_index(["chapter", "parameter"]), name="chapter-parameters",
               extremes=False, reads=[],
               caption="Parameters of every chapter: the default each chapter runs with in this book and "
                       "what it means (from the parameters cell of notebooks/NN_name.py).")

# %% [markdown]
# Pages of the appendix that repeat a chapter with other parameters are *variants*, declared in
# `notebooks/variants.yml` and executed by `embdiag book` after the chapters (for example
# `embdiag chapter 06_stress_tests_vit`).
#
# ## Real data and a pretrained encoder
#
# The machines that build this site cannot download BDD100K, COCO or a pretrained model, so the
# site runs on procedural scenes and the project's own encoders. On a machine that has them, the
# same chapters read the real data as distributed and any Hugging Face encoder pinned to a
# revision:
#
# ```bash
# # BDD100K: labels/bdd100k_labels_images_{train,val}.json and images/100k/{train,val}/
# .venv/bin/embdiag chapter stress_tests -p dataset bdd100k -p data_dir /data/bdd100k \
#     -p encoder hf:google/embeddinggemma-300m@<revision>
# # COCO 2017: annotations/captions_val2017.json, annotations/instances_val2017.json, val2017/
# .venv/bin/embdiag chapter caption_retrieval -p dataset coco -p data_dir /data/coco \
#     -p encoder hf:<model id>@<revision>
# # the data chapter on both real datasets at once
# .venv/bin/embdiag chapter data -p source real \
#     -p bdd_train_labels /data/bdd100k/labels/bdd100k_labels_images_train.json \
#     -p bdd_val_labels /data/bdd100k/labels/bdd100k_labels_images_val.json -p bdd_images /data/bdd100k/images/100k \
#     -p coco_captions /data/coco/annotations/captions_val2017.json \
#     -p coco_instances /data/coco/annotations/instances_val2017.json -p coco_images /data/coco/val2017
# ```
#
# The loaders are tested on small fixtures in the official file formats, and the Hugging Face
# adapter on tiny models built from configs; neither has been run here on the full datasets or a
# downloaded encoder. Embeddings are cached under `data/cache/embeddings/`, keyed by the encoder's
# revision, the dataset, split, role and dimension.
#
# ## Your own vectors
#
# Every fixed-encoder chapter also reads vectors you bring: an `.npy` file of $n \times d$ rows and
# a CSV with one row per vector, a `split` column (`train` or `val`) and one column per attribute;
# for caption retrieval an `.npz` with `images`, `queries` and `group` (optional `documents`,
# `categories`):
#
# ```bash
# .venv/bin/embdiag chapter stress_tests -p vectors_path my_vectors.npy -p labels_path my_labels.csv
# .venv/bin/embdiag chapter neighbour_stability -p vectors_path my_vectors.npy -p labels_path my_labels.csv
# .venv/bin/embdiag chapter caption_retrieval -p vectors_path my_captions.npz
# .venv/bin/embdiag chapter rank_diagnostics -p vectors_path my_vectors.npy
# ```
#
# ## Regenerate the committed artifacts
#
# Two kinds of expensive result are committed so the site builds in minutes: the training records
# (design A) and the reference encoders' weights (design B). Each manifest records the command that
# made it; the long jobs run in the background, resume from checkpoints and skip finished runs:

# %%
inventory = artifacts.inventory()
commands = inventory.loc[inventory["command"] != "", "command"]
training = commands[commands.str.contains("embdiag.training.sweep")]
display(Markdown(
    f"```bash\n.venv/bin/embdiag train --profile {profile} --workers 2   # {len(training)} runs: every "
    f"condition and seed, plus the untrained references\n"
    + "\n".join(f"nohup .venv/bin/{c} &" for c in commands[~commands.str.contains("embdiag.training.sweep")])
    + "\n```"))

# %% [markdown]
# ## Artifacts
#
# Every committed input the chapters read, with the SHA-256 that the provenance line under each
# figure and table shows (for an artifact folder, the checksum of its `manifest.json`, which holds
# the checksum of each of its files and the parameters that made it). Loading an artifact checks
# every file against its manifest and the parameters against the request: a corrupt or stale
# artifact raises an error instead of being used. Transcribed values of the published study are
# plain files under `data/study/` (no command: they are copied from the study's tables, see
# `data/study/README.md`). Regenerable caches (rendered scenes, embeddings) live under
# `data/cache/`, are not committed, and are rebuilt on first use; provenance lines name them with
# the checksum of the manifest on the machine that built the page.

# %%
exhibits.table(inventory.assign(sha256=inventory["sha256"].str[:12]).set_index("path"), name="artifacts",
               extremes=False, reads=[],
               caption="Committed artifacts under data/: checksum (first 12 hex digits of the SHA-256), number "
                       "of files, size in bytes, and the command that regenerates each.")
