"""Missing labels (None, NaN, pandas NA) in the metrics: a row without a label is left out of
that attribute's numbers only (issue #25, point 8)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from embdiag.metrics import balanced_accuracy, eligible_classes, evaluate, fit_probes, precision_at_k, random_floor
from embdiag.metrics.labels import labelled
from embdiag.metrics.retrieval import topk


def brute_force_p_at_k(nb, labels, query_labels):
    """P@k per query by loops: unlabelled queries skipped (NaN), only labelled neighbours counted."""
    out = []
    for q, row in enumerate(nb):
        if query_labels[q] is None:
            out.append(np.nan)
            continue
        counted = [labels[j] for j in row if labels[j] is not None]
        out.append(np.nan if not counted else sum(v == query_labels[q] for v in counted) / len(counted))
    return np.array(out)


def with_missing(y, share, seed, missing=None):
    y = np.asarray(y, dtype=object).copy()
    y[np.random.default_rng(seed).random(len(y)) < share] = missing
    return y


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
def test_precision_at_k_matches_a_brute_force_reference(missing):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 8))
    _, nb = topk(X, X, 7, exclude_self=True, dtype=np.float64)
    y = with_missing(rng.integers(0, 3, 300).astype(str), 0.3, 1, missing)
    ref = brute_force_p_at_k(
        nb, [None if not labelled([v])[0] else v for v in y], [None if not labelled([v])[0] else v for v in y]
    )
    got = precision_at_k(nb, y, per_query=True)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got[~np.isnan(got)], ref[~np.isnan(ref)], rtol=0, atol=1e-15)
    assert precision_at_k(nb, y) == pytest.approx(np.nanmean(ref), abs=1e-15)


def test_precision_at_k_with_separate_query_labels_and_no_missing_is_unchanged():
    nb = np.array([[0, 1], [1, 2], [2, 0]])
    gallery, queries = ["a", None, "b"], ["a", "b", None]
    assert precision_at_k(nb, gallery, queries, per_query=True).tolist()[:2] == [1.0, 1.0]
    assert np.isnan(precision_at_k(nb, gallery, queries, per_query=True)[2])
    assert precision_at_k(nb, ["a", "a", "b"], ["a", "b", "b"], per_query=True).tolist() == [1.0, 0.5, 0.5]
    with pytest.raises(ValueError, match="no query has a label and a labelled neighbour"):
        precision_at_k(np.array([[1], [1]]), ["a", None], [None, "a"])


def test_floors_classes_and_balanced_accuracy_ignore_missing_labels():
    assert random_floor(["a", None, "a", np.nan, "b", "b"]) == 0.5
    assert eligible_classes(["a", None, "a", "b", pd.NA], min_support=2).tolist() == ["a"]
    assert balanced_accuracy(["a", None, "b", "b"], ["a", "a", "b", "a"], ["a", "b"]) == 0.75
    with pytest.raises(ValueError, match=r"^y_true: no labelled entry"):
        balanced_accuracy([None, None], ["a", "b"], ["a", "b"])


def test_a_probe_with_missing_labels_is_the_probe_of_the_labelled_rows():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 200)
    X = rng.standard_normal((200, 6)) + y[:, None]
    partial = with_missing(y, 0.25, 3)
    keep = labelled(partial)
    probes = fit_probes(X, {"partial": partial, "full": y})
    alone = fit_probes(X[keep], {"partial": y[keep]})["partial"]
    np.testing.assert_array_equal(probes["partial"].coef_, alone.coef_)
    np.testing.assert_array_equal(probes["full"].coef_, fit_probes(X, {"full": y})["full"].coef_)


def test_evaluate_drops_missing_rows_per_attribute_only():
    rng = np.random.default_rng(4)
    y = {a: rng.integers(0, 2, 240) for a in ("digit", "parity")}
    X = rng.standard_normal((240, 6)) + 2 * y["digit"][:, None]
    tr, va = slice(0, 160), slice(160, 240)
    partial = {"digit": with_missing(y["digit"], 0.2, 5, np.nan), "parity": y["parity"]}
    row = evaluate(X[tr], {a: v[tr] for a, v in partial.items()}, X[va], {a: v[va] for a, v in partial.items()}, k=5)
    full = evaluate(X[tr], {"parity": y["parity"][tr]}, X[va], {"parity": y["parity"][va]}, k=5)
    assert row["parity BA"] == full["parity BA"] and row["parity P@5"] == full["parity P@5"]
    # digit: the probe of the labelled training rows, scored on the labelled evaluation rows
    ktr, kva = labelled(partial["digit"][tr]), labelled(partial["digit"][va])
    probe = fit_probes(X[tr][ktr], {"d": y["digit"][tr][ktr]})["d"]
    pred = probe.predict(X[va][kva])
    assert row["digit accuracy"] == pytest.approx(np.mean(pred == y["digit"][va][kva]), abs=1e-15)
    _, nb = topk(X[va], X[va], 5, exclude_self=True, dtype=np.float64)
    yv = [None if not k else v for v, k in zip(partial["digit"][va], kva)]
    assert row["digit P@5"] == pytest.approx(np.nanmean(brute_force_p_at_k(nb, yv, yv)), abs=1e-15)


@pytest.mark.parametrize(
    "column, match",
    [
        ([None] * 40, r"val_labels\['digit'\]: no labelled entry \(all 40 missing\)"),
        (["7"] * 39 + [None], r"val_labels\['digit'\]: fewer than 2 classes among its 39 labelled entries"),
    ],
)
def test_an_attribute_without_two_labelled_classes_is_an_error_naming_it(column, match):
    X = np.random.default_rng(0).standard_normal((40, 3))
    with pytest.raises(ValueError, match=match):
        evaluate(X, {"digit": np.tile(["1", "2"], 20)}, X, {"digit": np.array(column, dtype=object)}, k=3)
