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
# .venv/bin/embdiag chapter stress_tests -p severities '[0, 0.5, 0.9, 0.99]' -p k 20 --out my_pages
# .venv/bin/embdiag chapter compression -p encoder reference-vit -p dims '[384, 192]' --out my_pages
# .venv/bin/embdiag book --no-execute   # rebuild the site from the executed chapters
# ```
#
# Every chapter's parameters, with their defaults, read from the chapters themselves:

# %% tags=["parameters"]
profile = "cpu"  # training profile whose sweeps (every length) are listed with their regeneration commands

# %%
import pandas as pd
from IPython.display import Markdown, display

from embdiag import artifacts, exits
from embdiag.paper import pipeline
from embdiag.view import exhibits
from embdiag.training import config as training_profiles

exhibits.table(pipeline.parameter_table().set_index(["chapter", "parameter"]), name="chapter-parameters", collapsed="Every chapter's parameters",
               extremes=False, reads=[],
               caption="Parameters of every chapter: the default each chapter runs with in this book and "
                       "what it means (from the parameters cell of notebooks/NN_name.py).")

# %% [markdown]
# ## The same pages on every machine
#
# Re-executing an unchanged chapter reproduces its page byte for byte on any x86-64 machine with
# AVX2, because two things are fixed. The inputs: the embeddings the fixed-encoder chapters read
# are committed (`data/embeddings/`, listed below), so no chapter runs an encoder, whose
# convolution kernels differ between CPUs; `embdiag embeddings` recomputes them and prints how far
# this machine's vectors are from the committed ones, keeping the committed ones. The float path:
# numpy, PyTorch, oneDNN, MKL, OpenBLAS and FAISS each pick kernels for the CPU they find, and wider
# kernels round sums differently, so every chapter, report and training sweep runs on one declared
# level, with these variables (`embdiag` sets them for itself and everything it starts;
# `EMBDIAG_FLOAT_PATH=native` turns them off):

# %%
from embdiag import floatpath
from embdiag.paper import agreement

exhibits.table(pd.DataFrame({"variable": list(floatpath.PINNED), "value": list(floatpath.PINNED.values())}
                            ).set_index("variable"), name="float-path", extremes=False, reads=[],
               caption=f"The pinned float path, level {floatpath.LEVEL}: kernels capped at AVX2 in every library "
                       f"and {floatpath.THREADS} threads in every pool (embdiag.floatpath.PINNED).")

# %%
display(Markdown(
    "On a machine without that level (ARM, x86-64 without AVX2) or with the pin turned off, the pages keep "
    "every word and verdict, and each number agrees with the committed one within a relative "
    f"{agreement.TOLERANCE:g}, an absolute {agreement.ABSOLUTE:g} (the float32 rounding of a unit-scale score) "
    "or one unit of the last digit it is shown with. The test suite checks this on every machine: it executes "
    "two fixed-encoder chapters and the report on an older float path (SSE4 kernels) and compares them with "
    "these pages (`tests/paper/test_chapters_agree.py`); on a machine whose own path differs it compares "
    "every chapter so, instead of nbval's exact comparison. Two things make the other chapters agree too. The "
    "procedural scenes render a handful of pixel values one level apart on other float paths, so the sweep notes "
    "which generator, parameters and float path the training records' scenes came from "
    "(`data/training/renderings.json`) and accepts records whose scenes differ only so; and PCA sets the "
    "coordinates beyond the training vectors' numerical rank to zero, since they hold rounding alone, which the "
    "standardized probe would scale up (the [compression chapter](06_compression.html))."))

# %% [markdown]
# Pages of the appendix that repeat a chapter with other parameters are *variants*, declared in
# `notebooks/variants.yml` and executed by `embdiag book` after the chapters (for example
# `embdiag chapter 16_stress_tests_vit`).
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
#     -p encoder hf:google/embeddinggemma-300m@<revision> --out my_pages
# # COCO 2017: annotations/captions_val2017.json, annotations/instances_val2017.json, val2017/
# .venv/bin/embdiag chapter caption_retrieval -p dataset coco -p data_dir /data/coco \
#     -p encoder hf:<model id>@<revision> --out my_pages
# # the data chapter on both real datasets at once
# .venv/bin/embdiag chapter data -p source real \
#     -p bdd_train_labels /data/bdd100k/labels/bdd100k_labels_images_train.json \
#     -p bdd_val_labels /data/bdd100k/labels/bdd100k_labels_images_val.json -p bdd_images /data/bdd100k/images/100k \
#     -p coco_captions /data/coco/annotations/captions_val2017.json \
#     -p coco_instances /data/coco/annotations/instances_val2017.json -p coco_images /data/coco/val2017 --out my_pages
# ```
#
# The loaders are tested on small fixtures in the official file formats, and the Hugging Face
# adapter on tiny models built from configs; neither has been run here on the full datasets or a
# downloaded encoder. Their embeddings are cached under `data/cache/embeddings/`, keyed by the
# encoder's revision, the dataset, split and role (the book's own are committed, see above).
#
# ## Your own vectors
#
# Every fixed-encoder chapter also reads vectors you bring: an `.npy` file of $n \times d$ rows and
# a CSV with one row per vector, a `split` column (`train` or `val`) and one column per attribute;
# for caption retrieval an `.npz` with `images`, `queries` and `group` (optional `documents`,
# `categories`):
#
# ```bash
# .venv/bin/embdiag chapter stress_tests -p vectors_path my_vectors.npy -p labels_path my_labels.csv --out my_pages
# .venv/bin/embdiag chapter neighbour_stability -p vectors_path my_vectors.npy -p labels_path my_labels.csv --out my_pages
# .venv/bin/embdiag chapter caption_retrieval -p vectors_path my_captions.npz --out my_pages
# .venv/bin/embdiag chapter rank_diagnostics -p vectors_path my_vectors.npy --out my_pages
# ```
#
# ## What an exit status means
#
# Every `embdiag` command keeps one contract, so a CI job can read the status alone
# (`embdiag.exits`; the README prints the same table):

# %%
display(Markdown(exits.contract_table()))

# %% [markdown]
# ## Regenerate the committed artifacts
#
# Three kinds of expensive result are committed so the site builds in minutes and reads the same
# inputs everywhere: the training records (design A), the reference encoders' weights and their
# embeddings of the book's data (design B). Each manifest records the command that made it; the
# long jobs run in the background, resume from checkpoints and skip finished runs:

# %%
inventory = artifacts.inventory()
commands = inventory.loc[inventory["command"] != "", "command"]
runs = commands.str.extract(r"embdiag\.training\.sweep --profile (\S+) --steps (\d+) --conditions '([^']+)'").dropna()
sweeps = []
for (prof, steps), group in sorted(runs[runs[0] == profile].groupby([0, 1]), key=lambda g: int(g[0][1])):
    named = sorted(set(group[2]) - {"Untrained (step 0)"})
    options = "" if int(steps) == training_profiles.PROFILES[prof].steps else f" --steps {steps} --conditions " + \
        " ".join(f"'{c}'" for c in named)
    sweeps.append(f".venv/bin/embdiag train --profile {prof}{options} --workers 2   # {len(group)} runs: "
                  f"{len(named)} conditions x their seeds, plus the untrained references")
others = dict.fromkeys(commands[~commands.str.contains("embdiag.training.sweep")])
display(Markdown("```bash\n" + "\n".join(sweeps + [f"nohup .venv/bin/{c} &" for c in others]) + "\n```"))

# %% [markdown]
# ## Artifacts
#
# Every committed input the chapters read, with the SHA-256 that the provenance line under each
# figure and table shows (for an artifact folder, the checksum of its `manifest.json`, which holds
# the checksum of each of its files and the parameters that made it). Loading an artifact checks
# every file against its manifest and the parameters against the request: a corrupt or stale
# artifact raises an error instead of being used. Transcribed values of the published study are
# plain files under `data/study/` (no command: they are copied from the study's tables, see
# `data/study/README.md`). Regenerable caches (rendered scenes, embeddings of other data) live
# under `data/cache/`, are not committed, and are rebuilt on first use; provenance lines name them
# with the checksum of the manifest on the machine that built the page.

# %%
exhibits.table(inventory.assign(sha256=inventory["sha256"].str[:12]).set_index("path"), name="artifacts", collapsed="The artifacts: every committed input with its checksum",
               extremes=False, reads=[],
               caption="Committed artifacts under data/: checksum (first 12 hex digits of the SHA-256), number "
                       "of files, size in bytes, and the command that regenerates each.")
