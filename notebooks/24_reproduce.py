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
# caches that the commands below regenerate.
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
# Each chapter is a notebook, `notebooks/NN_name.py`, with one cell of parameters; one command
# executes it with papermill, checking every parameter first. The book's pages keep their
# parameters, so other values go to a folder of your own, with an offline page; so do the
# *variants* declared in `notebooks/variants.yml` (each chapter on the second reference encoder
# or on WordLlama/WordNet, compared on [Across encoders](10_across_encoders)):
#
# ```bash
# .venv/bin/embdiag chapter stress_tests -p severities '[0, 0.5, 0.9, 0.99]' -p k 20 --out my_pages
# .venv/bin/embdiag chapter 12_compression_wordnet --out my_pages
# .venv/bin/embdiag book --no-execute   # rebuild the site from the executed chapters
# ```

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
# AVX2: the embeddings the chapters read are committed (`embdiag embeddings` recomputes them and
# says how far this machine's are), and every chapter, report and sweep runs on one declared float
# path (`EMBDIAG_FLOAT_PATH=native` turns it off):

# %%
from embdiag import floatpath
from embdiag.paper import agreement

exhibits.table(pd.DataFrame({"variable": list(floatpath.PINNED), "value": list(floatpath.PINNED.values())}
                            ).set_index("variable"), name="float-path", extremes=False, reads=[],
               caption=f"The pinned float path, level {floatpath.LEVEL}: kernels capped at AVX2 in every library "
                       f"and {floatpath.THREADS} threads in every pool (embdiag.floatpath.PINNED).")

# %%
display(Markdown(
    "On another float path (ARM, x86-64 without AVX2, or the pin off) the pages keep every word and verdict, and "
    f"each number agrees within a relative {agreement.TOLERANCE:g}, an absolute {agreement.ABSOLUTE:g} or one unit "
    "of its last shown digit; `tests/paper/test_chapters_agree.py` checks this on an older (SSE4) path."))

# %% [markdown]
# ## Real data and a pretrained encoder
#
# On a machine that has them, the same chapters read BDD100K and COCO as distributed and any
# Hugging Face encoder pinned to a revision. The loaders are tested on small fixtures in the
# official formats, the encoder adapter on tiny models; neither has run here on the full data.
#
# ```bash
# # BDD100K: labels/bdd100k_labels_images_{train,val}.json and images/100k/{train,val}/
# .venv/bin/embdiag chapter stress_tests -p dataset bdd100k -p data_dir /data/bdd100k \
#     -p encoder hf:google/embeddinggemma-300m@<revision> --out my_pages
# # COCO 2017: annotations/captions_val2017.json, annotations/instances_val2017.json, val2017/
# .venv/bin/embdiag chapter caption_retrieval -p dataset coco -p data_dir /data/coco \
#     -p encoder hf:<model id>@<revision> --out my_pages
# ```
#
# ## Your own vectors
#
# Every fixed-encoder chapter reads an `.npy` of $n \times d$ rows and a CSV with a `split` column
# (`train` or `val`) and one column per attribute; caption retrieval an `.npz` with `images`,
# `queries` and `group`:
#
# ```bash
# .venv/bin/embdiag chapter stress_tests -p vectors_path my_vectors.npy -p labels_path my_labels.csv --out my_pages
# .venv/bin/embdiag chapter neighbour_stability -p vectors_path my_vectors.npy -p labels_path my_labels.csv --out my_pages
# .venv/bin/embdiag chapter caption_retrieval -p vectors_path my_captions.npz --out my_pages
# .venv/bin/embdiag chapter rank_diagnostics -p vectors_path my_vectors.npy --out my_pages
# ```
#
# ## What an exit status means

# %%
display(Markdown(exits.contract_table()))

# %% [markdown]
# ## Regenerate the committed artifacts
#
# The training records, the reference encoders' weights and their embeddings of the book's data
# are committed; each manifest records the command that made it (long jobs resume and skip
# finished runs):

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
# Loading an artifact checks every file against its manifest and the parameters against the
# request: a corrupt or stale artifact raises an error instead of being used. Caches under
# `data/cache/` are not committed and are rebuilt on first use.

# %%
exhibits.table(inventory.assign(sha256=inventory["sha256"].str[:12]).set_index("path"), name="artifacts", collapsed="The artifacts: every committed input with its checksum",
               extremes=False, reads=[],
               caption="Committed artifacts under data/: checksum (first 12 hex digits of the SHA-256), number "
                       "of files, size in bytes, and the command that regenerates each.")
