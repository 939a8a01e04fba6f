"""The benchmarks import (their figures are printed by `make bench`, not asserted here)."""

import importlib.util

import pytest

from embdiag.paper.pipeline import REPO

BENCHMARKS = sorted((REPO / "benchmarks").glob("bench_*.py"))


@pytest.mark.parametrize("path", BENCHMARKS, ids=[p.stem for p in BENCHMARKS])
def test_benchmark_imports(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # runs nothing: each benchmark starts under __main__
    assert callable(module.main)
