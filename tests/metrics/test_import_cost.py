"""Importing :mod:`embdiag.metrics` loads no model library: torch and scikit-learn (and pandas,
scipy.stats) load only where a model runs or a probe is fitted. A fact about ``sys.modules`` in a
fresh interpreter; the seconds are printed by ``benchmarks/bench_import.py``."""

import json
import subprocess
import sys

import pytest

HEAVY = ("torch", "sklearn", "pandas", "scipy.stats")

LOADED = """
import json, sys
{code}
print(json.dumps([m for m in {heavy!r} if m in sys.modules]))
"""


def loaded_by(code: str) -> list[str]:
    """The libraries of :data:`HEAVY` in ``sys.modules`` after a fresh interpreter runs ``code``."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED.format(code=code, heavy=HEAVY)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_metrics_loads_no_model_library():
    assert loaded_by("import embdiag.metrics") == []


@pytest.mark.parametrize("name", ["paired_t_interval", "topk", "precision_at_k", "summary"])
def test_its_light_names_load_none_either(name):
    assert loaded_by(f"from embdiag.metrics import {name}") == []


def test_a_probe_loads_scikit_learn_on_first_use():
    # the check can fail: the names loaded on first use do load it
    assert "sklearn" in loaded_by("import embdiag.metrics as m; m.LinearProbe")
    assert "sklearn" in loaded_by("from embdiag.metrics import fit_probes")


def test_labels_and_the_suite_load_scikit_learn_only_when_a_probe_is_fitted():
    assert loaded_by("from embdiag.metrics import balanced_accuracy, eligible_classes, evaluate") == ["pandas"]
    fitted = (
        "import numpy as np; from embdiag.metrics import evaluate; X = np.random.default_rng(0).normal(size=(40, 4)); "
    )
    fitted += "y = {'a': np.arange(40) % 2}; evaluate(X[:20], {'a': y['a'][:20]}, X[20:], {'a': y['a'][20:]}, k=3)"
    assert "sklearn" in loaded_by(fitted)
