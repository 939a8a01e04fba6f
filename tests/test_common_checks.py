"""Common checks (issue #30), in the manner of scikit-learn's ``parametrize_with_checks``: every
public function of ``embdiag.metrics`` and ``embdiag.interventions`` that takes a matrix is
registered here with how to call it, and each bad matrix (NaN, +-inf, 1-D, 3-D, no rows, object,
complex and string arrays) is refused with a ``ValueError`` that names the argument. Every public
name is registered or exempt with its reason, so a new function fails the suite until it is."""

from __future__ import annotations

import numpy as np
import pytest

import embdiag.interventions as I
import embdiag.metrics as M

_rng = np.random.default_rng(0)
GOOD = _rng.normal(size=(30, 6))
Y = np.tile(["a", "b"], 15)

#: Public functions that take a matrix: (the argument checked, how to call it with that argument).
MATRIX = {
    "mean_cosine": ("Z", lambda A: M.mean_cosine(A)),
    "participation_ratio": ("Z", lambda A: M.participation_ratio(A)),
    "rankme": ("Z", lambda A: M.rankme(A)),
    "total_variance": ("Z", lambda A: M.total_variance(A)),
    "summary": ("Z", lambda A: M.summary(A)),
    "topk": ("queries", lambda A: M.topk(A, GOOD, 3)),
    "topk (gallery)": ("gallery", lambda A: M.topk(GOOD, A, 3)),
    "fit_probes": ("X", lambda A: M.fit_probes(A, {"a": Y})),
    "evaluate": ("train", lambda A: M.evaluate(A, {"a": Y}, GOOD, {"a": Y}, k=3)),
    "evaluate (val)": ("val", lambda A: M.evaluate(GOOD, {"a": Y}, A, {"a": Y}, k=3)),
    "boundary_margin": ("scores", lambda A: M.boundary_margin(-np.sort(-A, axis=-1) if A.dtype == float else A, 3)),
    "store": ("X", lambda A: I.store(A)),
    "compare_conditions": ("queries", lambda A: I.compare_conditions(A, k=3)),
    "compare_storage": ("queries", lambda A: I.compare_storage(A, I.StorageCondition("fp16", gallery="float16"), k=3)),
    "measure_grid": ("train", lambda A: list(I.measure_grid(A, {"a": Y}, GOOD, {"a": Y}, k=3))),  # a generator
    "stress_grid": ("train", lambda A: I.stress_grid(A, {"a": Y}, GOOD, {"a": Y}, k=3)),
}
#: Public names that take no matrix, each with where its inputs are checked instead.
EXEMPT = {
    "balanced_accuracy": "labels, checked in tests/metrics/test_probe.py",
    "eligible_classes": "labels, checked in tests/metrics/test_probe.py",
    "majority_floor": "labels, checked in tests/metrics/test_probe.py",
    "random_floor": "labels, checked in tests/metrics/test_retrieval.py",
    "frozen_classes": "a mapping of labels, checked in tests/metrics/test_suite.py",
    "hit_at_k": "neighbour indices, checked in tests/metrics/test_retrieval.py",
    "recall_at_k": "neighbour indices, checked in tests/metrics/test_retrieval.py",
    "overlap_at_k": "neighbour indices, checked in tests/metrics/test_retrieval.py",
    "precision_at_k": "neighbour indices, checked in tests/metrics/test_retrieval.py",
    "paired_bootstrap": "per-query values, checked in tests/metrics/test_stats.py",
    "paired_t_interval": "per-seed values, checked in tests/metrics/test_stats.py",
    "grid": "names and severities, checked in tests/interventions/test_stress.py",
    "make_intervention": "a name and a severity, checked in tests/interventions/test_stress.py",
    "LinearProbe": "an estimator: scikit-learn's own common checks, tests/metrics/test_probe.py",
    "CommonOffset": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "Contraction": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "MatryoshkaPrefix": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "Noise": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "PCACompression": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "RankRestriction": "an estimator: scikit-learn's common checks, tests/interventions/test_compression.py",
    "StorageCondition": "a declared condition (a dataclass), checked in tests/interventions/test_precision.py",
    "INTERVENTIONS": "a constant",
    "SEVERITIES": "a constant",
    "STUDY_CONDITIONS": "a constant",
}


def _bad() -> dict[str, np.ndarray]:
    nan, inf = GOOD.copy(), GOOD.copy()
    nan[3, 2] = np.nan
    inf[4, 1] = np.inf
    return {
        "NaN": nan,
        "inf": inf,
        "-inf": -inf,
        "1-D": GOOD[:, 0].copy(),
        "3-D": GOOD.reshape(30, 2, 3),
        "no rows": GOOD[:0],
        "object": GOOD.astype(object),
        "complex": GOOD + 1j,
        "strings": np.full((30, 6), "x"),
    }


def test_every_public_name_is_registered_or_exempt_with_its_reason():
    public = set(M.__all__) | set(I.__all__)
    registered = {name.split(" ")[0] for name in MATRIX} | set(EXEMPT)
    assert public - registered == set(), "register these with the common checks (or exempt them, with a reason)"
    assert registered - public == set(), "registered names that are no longer public"
    assert all(reason.strip() for reason in EXEMPT.values())


def test_the_good_matrix_is_accepted_by_every_registered_function():
    for name, (_, call) in MATRIX.items():
        call(GOOD)  # the checks below test the refusal, not a function that refuses everything


@pytest.mark.parametrize("bad", sorted(_bad()))
@pytest.mark.parametrize("name", sorted(MATRIX))
def test_a_bad_matrix_is_refused_naming_the_argument(name, bad):
    argument, call = MATRIX[name]
    with pytest.raises(ValueError) as refused:
        call(_bad()[bad])
    assert str(refused.value).startswith(f"{argument}:"), f"{name} on a {bad} matrix: {refused.value}"
