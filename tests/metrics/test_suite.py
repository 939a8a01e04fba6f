"""The metric suite: one row per representation, and the stress grid built from it.

Equivalent mutants
------------------
Mutants of ``tools/mutate.py`` (mutmut names ``embdiag.metrics.suite.x_<function>__mutmut_<k>``)
that survive because they change no result; each has a comment next to the code.

None survive: the one listed before (``dtype=None`` in ``topk``) is refused by ``topk`` since
issue #30, and so killed.
"""

import numpy as np
import pytest

from embdiag.metrics import suite
from embdiag.metrics.probe import fit_probes
from embdiag.interventions import stress_grid
from embdiag.synthetic import labelled_clusters
from embdiag.synthetic import float32_near_tie


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
    table = stress_grid(tr, ytr, va, yva, names=("contraction", "noise"), severities=(0.0, 0.9), k=5, probes=False)
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


def test_accuracy_and_ba_are_those_of_the_fitted_probes(data):
    """Accuracy is the share of probe predictions equal to the label and BA the balanced accuracy
    over the frozen classes, for the probes fitted with the ``standardize`` asked for (columns
    on scales 1 to 1000, where standardizing changes the probes)."""
    tr, ytr, va, yva = data
    w = np.logspace(0, 3, tr.shape[1])
    tr, va = tr * w, va * w
    frozen = suite.frozen_classes(yva)
    rows = {}
    for std in (True, False):
        row = suite.evaluate(tr, ytr, va, yva, k=5, standardize=std)
        fitted = fit_probes(tr, ytr, standardize=std)
        for a, y in yva.items():
            pred = fitted[a].predict(va)
            assert row[f"{a} accuracy"] == np.count_nonzero(pred == y) / len(y), (std, a)
            assert row[f"{a} BA"] == suite.balanced_accuracy(y, pred, frozen[a]), (std, a)
        rows[std] = row
    differs = any(rows[True][f"{a} accuracy"] != rows[False][f"{a} accuracy"] for a in yva)
    assert differs, "standardizing must matter on these columns, else the check above is blind to it"
    assert rows[True]["time accuracy"] > 0.5


def test_given_classes_replace_the_frozen_ones(data):
    """``classes`` given: BA is over those classes (here 0 and 1 only), not over the eligible ones."""
    tr, ytr, va, yva = data
    classes = {a: np.array([0, 1]) for a in yva}
    row = suite.evaluate(tr, ytr, va, yva, k=5, classes=classes)
    default = suite.evaluate(tr, ytr, va, yva, k=5)
    fitted = fit_probes(tr, ytr)
    for a, y in yva.items():
        pred = fitted[a].predict(va)
        assert row[f"{a} BA"] == suite.balanced_accuracy(y, pred, [0, 1]), a
    assert row["weather BA"] != default["weather BA"]


def test_default_k_is_10(data):
    tr, ytr, va, yva = data
    row = suite.evaluate(tr, ytr, va, yva, probes=False)
    _, nb = suite.topk(va, va, 10, exclude_self=True, dtype=np.float64)
    assert [key for key in row if "P@" in key] == ["weather P@10", "scene P@10", "time P@10"]
    for a, y in yva.items():
        assert row[f"{a} P@10"] == suite.precision_at_k(nb, y)


def test_neighbours_are_searched_in_float64():
    """A near-tie 1e-9 apart, below float32 resolution: float32 scoring would rank row 1 (same
    label as row 0) first, float64 ranks row 2 (other label) first, so P@1 of query 0 is 0."""
    va = float32_near_tie()
    y = np.array([0, 0, 1, 1, 1])
    assert suite.topk(va, va, 1, exclude_self=True)[1][0, 0] == 1  # float32: the tie goes to the lower index
    _, nb = suite.topk(va, va, 1, exclude_self=True, dtype=np.float64)
    assert nb[0, 0] == 2
    row = suite.evaluate(va, {"a": y}, va, {"a": y}, k=1, probes=False)
    assert row["a P@1"] == suite.precision_at_k(nb, y)


def test_wrong_neighbour_shape_message_names_both_shapes(data):
    tr, ytr, va, yva = data
    _, nb = suite.topk(va, va, 5, exclude_self=True, dtype=np.float64)
    msg = r"^neighbors: expected shape \(300, 5\) \(one row of k indices per evaluation vector\), got \(300, 4\)$"
    with pytest.raises(ValueError, match=msg):
        suite.evaluate(tr, ytr, va, yva, k=5, neighbors=nb[:, :4], probes=False)


def test_frozen_classes_support_threshold():
    """Default min_support 10: a class seen 10 times is kept, 9 times dropped; a given
    min_support is passed on."""
    y = np.repeat([0, 1, 2], [10, 9, 3])
    got = suite.frozen_classes({"a": y, "b": y[::-1]})
    assert list(got) == ["a", "b"]
    assert got["a"].tolist() == [0] and got["b"].tolist() == [0]
    assert suite.frozen_classes({"a": y}, min_support=3)["a"].tolist() == [0, 1, 2]
    assert suite.frozen_classes({"a": y}, min_support=9)["a"].tolist() == [0, 1]
