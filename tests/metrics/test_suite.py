"""The metric suite: one row per representation, and the stress grid built from it."""

import numpy as np
import pytest

from embdiag.metrics import suite
from embdiag.interventions import stress_grid
from embdiag.synthetic import labelled_clusters


@pytest.fixture(scope="module")
def data():
    tr, ytr = labelled_clusters(400, d=32, seed=1, strength=(0.6, 0.6, 0.8))
    va, yva = labelled_clusters(300, d=32, seed=2, strength=(0.6, 0.6, 0.8))
    return tr, ytr, va, yva


def test_evaluate_columns_and_ranges(data):
    row = suite.evaluate(*data, k=5)
    for a in ("weather", "scene", "time"):
        for m in ("accuracy", "BA", "P@5"):
            assert 0 <= row[f"{a} {m}"] <= 1
    assert row["time BA"] > 0.5, "separable clusters are recoverable"
    assert {"total_variance", "mean_cosine", "rankme", "participation_ratio"} <= set(row)


def test_scaling_leaves_labels_and_relevance(data):
    tr, ytr, va, yva = data
    a = suite.evaluate(tr, ytr, va, yva, k=5)
    b = suite.evaluate(3.0 * tr, ytr, 3.0 * va, yva, k=5)
    assert b["total_variance"] == pytest.approx(9 * a["total_variance"])
    for key in a:
        if key != "total_variance":
            assert b[key] == pytest.approx(a[key], rel=1e-6, abs=1e-9), key


def test_frozen_classes_apply_to_every_row(data):
    tr, ytr, va, yva = data
    classes = {a: np.array([0, 1]) for a in yva}
    row = suite.evaluate(tr, ytr, va, yva, k=5, classes=classes, probes=True)
    assert 0 <= row["weather BA"] <= 1


def test_stress_grid_rows(data):
    tr, ytr, va, yva = data
    table = stress_grid(tr, ytr, va, yva, names=("contraction", "noise"), severities=(0.0, 0.9), k=5,
                              probes=False)
    assert list(table["intervention"]) == ["contraction", "contraction", "noise", "noise"]
    c0, c9 = table.iloc[0], table.iloc[1]
    assert c9["total_variance"] == pytest.approx(0.01 * c0["total_variance"])
    assert c9["weather P@5"] == c0["weather P@5"]
    assert table.iloc[3]["rankme"] > table.iloc[2]["rankme"], "noise spreads the spectrum"


def test_given_neighbors_are_read_not_searched_again(data, monkeypatch):
    tr, ytr, va, yva = data
    _, nb = suite.topk(va, va, 5, exclude_self=True, dtype=np.float64)
    plain = suite.evaluate(tr, ytr, va, yva, k=5)
    noisy = va + np.random.default_rng(0).standard_normal(va.shape)
    _, other = suite.topk(noisy, noisy, 5, exclude_self=True)  # other neighbours: P@k follows them, nothing else
    monkeypatch.setattr(suite, "topk", lambda *a, **kw: pytest.fail("searched although neighbours were given"))
    assert suite.evaluate(tr, ytr, va, yva, k=5, neighbors=nb) == plain  # the same numbers, exactly
    row = suite.evaluate(tr, ytr, va, yva, k=5, neighbors=other, probes=False)
    for a, y in yva.items():
        assert row[f"{a} P@5"] == suite.precision_at_k(other, y) != plain[f"{a} P@5"]
    assert row["rankme"] == plain["rankme"]
    with pytest.raises(ValueError, match=r"neighbors: expected shape \(300, 5\)"):
        suite.evaluate(tr, ytr, va, yva, k=5, neighbors=nb[:, :4], probes=False)
    with pytest.raises(ValueError, match="neighbors"):
        suite.evaluate(tr, ytr, va, yva, k=5, neighbors=nb[:-1], probes=False)
