# Two entry points, both self-installing on a fresh machine (see README.md):
#   make book   execute every chapter with papermill and build the Jupyter Book (the main job)
#   make test   run the whole test suite, nbval on the executed chapters and the browser check included
# and one for the website: make publish (below).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.embdiag-installed

.PHONY: book test chromium wordnet bench publish

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]' -c constraints.txt
	touch $@

book: $(STAMP)
	$(VENV)/bin/embdiag book

chromium:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null)

# Debian's WordNet 3.0 database (/usr/share/wordnet): the WordNet reader's tests on the real files, and
# `embdiag embeddings`, which redraws the committed WordNet sample (make book needs neither).
wordnet:
	@test -f /usr/share/wordnet/data.noun || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	  wordnet-base >/dev/null)

# The tests run on the pinned float path (embdiag/floatpath.py), as `embdiag book` does; on a
# machine without it (ARM, no AVX2) nbval is skipped and the chapters are compared within tolerance.
test: $(STAMP) chromium wordnet
	$(PY) -m embdiag.floatpath $(PY) -m pytest -n 2 --dist loadfile --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg tests book/chapters

# Publish the last build (make book; this target builds nothing) onto the gh-pages branch of
# $(REMOTE) with ghp-import, the way Jupyter Book sites are published: -n writes .nojekyll so
# GitHub Pages serves the _static/ and _sources/ folders, -p pushes, -f replaces the branch.
# Every link and asset of the build is relative, so the site works under a sub-path
# (https://OWNER.github.io/REPO/). .github/workflows/pages.yml is the CI route instead.
HTML := book/_build/html
REMOTE ?= origin
GHP_IMPORT ?= $(VENV)/bin/ghp-import

publish: $(HTML)/index.html $(STAMP)
	$(GHP_IMPORT) -n -p -f -r $(REMOTE) -b gh-pages \
	  -m "Publish the book built from $$(git rev-parse --short HEAD)" $(HTML)

$(HTML)/index.html:
	@echo "make publish: no built book at $(HTML)/ (run 'make book' first; publish sends the last build)" >&2
	@exit 1

bench: $(STAMP)
	$(PY) benchmarks/bench_metrics.py
	$(PY) benchmarks/bench_interventions.py
	$(PY) benchmarks/bench_data.py
	$(PY) benchmarks/bench_encoders.py
	$(PY) benchmarks/bench_wordnet.py
	$(PY) benchmarks/bench_import.py
	$(PY) benchmarks/bench_report_wordnet.py
	$(PY) benchmarks/bench_user_chapters.py
	$(PY) benchmarks/bench_deploy_wordnet.py

# Mutation testing with mutmut ([tool.mutmut] in pyproject.toml): each module's mutants run
# against that module's own test file; prints per module the kill rate, the equivalent mutants
# its test module documents, and every other survivor. Not part of CI: metrics/stats (240
# mutants) takes about 5 minutes, all ten modules about two hours on the 2-core machine.
# One module: make mutate MODULES=metrics/stats
MODULES ?=
.PHONY: mutate
mutate: $(STAMP)
	$(PY) tools/mutate.py $(MODULES)
