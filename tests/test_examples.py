"""The docstring examples of the metrics, interventions and report modules run and state true results (doctest)."""

import doctest
import importlib

import numpy
import pytest

MODULES = [
    "embdiag.metrics.geometry",
    "embdiag.metrics.retrieval",
    "embdiag.metrics.probe",
    "embdiag.metrics.labels",
    "embdiag.metrics.stats",
    "embdiag.metrics.inference",
    "embdiag.metrics.suite",
    "embdiag.interventions.stress",
    "embdiag.interventions.compression",
    "embdiag.interventions.precision",
    "embdiag.interventions.identities",
    "embdiag.interventions.caption_retrieval",
    "embdiag.report.fail_if",
    "embdiag.report.conditions",
    "embdiag.report.measurement",
    "embdiag.report.sections.summary",
    "embdiag.report.sections.frontier",
    "embdiag.report.tasks",
    "embdiag.report.sharded",
    "embdiag.report.html",
    "embdiag.report.cli",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    results = doctest.testmod(
        module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, extraglobs={"np": numpy}, report=False
    )
    assert results.attempted > 0, f"{name} has no docstring examples"
    assert results.failed == 0, f"{results.failed} of {results.attempted} examples of {name} failed (see stdout)"
