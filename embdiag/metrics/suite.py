"""The study's metric suite for one representation: geometry, probes, retrieval.

One call measures what each row of the study's tables reports for a set of
evaluation vectors: the four geometry numbers (no labels), standardized linear-probe
accuracy and balanced accuracy per attribute (probes fitted on training vectors), and
P@k per attribute (each evaluation vector queries the others by cosine). Labels may be
missing (None, NaN, pandas NA): a row without a label for an attribute is left out of that
attribute's numbers only.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .._validate import as_matrix, check_bool, check_mapping, nonzero_rows, same_length, squarable
from .geometry import summary
from .labels import balanced_accuracy, eligible_classes, labelled_values
from .retrieval import precision_at_k, topk


def frozen_classes(labels: Mapping[str, np.ndarray], min_support: int = 10) -> dict[str, np.ndarray]:
    """Eligible classes per attribute, fixed once before any comparison.

    Examples
    --------
    >>> frozen_classes({"shape": [0, 0, 0, 1, 1, 2]}, min_support=2)
    {'shape': array([0, 1])}
    """
    return {a: eligible_classes(y, min_support) for a, y in check_mapping(labels, "labels").items()}


def _check_attribute(y, name: str, min_classes: int) -> None:
    """Raise ``ValueError`` naming ``name`` unless its labelled entries hold ``min_classes`` classes."""
    values = labelled_values(y, name)[0]
    if len(np.unique(values)) < min_classes:
        raise ValueError(f"{name}: fewer than {min_classes} classes among its {len(values)} labelled entries")


def check_inputs(train, train_labels, val, val_labels, *, probes: bool = True) -> None:
    """Refuse what :func:`evaluate` cannot measure, naming the argument as its caller passed it
    (``train``, ``val_labels['weather']``): bad matrices, different widths, fewer than 2
    evaluation rows, a zero evaluation row (cosine), magnitudes whose squares leave float64,
    labels of another length, an attribute missing from ``train_labels``, and fewer than 2
    labelled classes where a probe needs them (P@k needs one labelled row)."""
    check_mapping(train_labels, "train_labels")
    check_mapping(val_labels, "val_labels")
    probes = check_bool(probes, "probes")
    train = as_matrix(train, "train")
    val = as_matrix(val, "val", min_rows=2)
    if val.shape[1] != train.shape[1]:
        raise ValueError(f"val: has {val.shape[1]} columns but train has {train.shape[1]}")
    nonzero_rows(val, "val")
    for rows, name in ((train, "train"), (val, "val")):
        squarable(rows, name)
    for a in val_labels:
        same_length(val=val, **{f"val_labels[{a!r}]": np.asarray(val_labels[a])})
        _check_attribute(val_labels[a], f"val_labels[{a!r}]", 2 if probes else 1)
        if probes:
            if a not in train_labels:
                raise ValueError(f"train_labels: has no attribute {a!r} (val_labels has)")
            same_length(train=train, **{f"train_labels[{a!r}]": np.asarray(train_labels[a])})
            _check_attribute(train_labels[a], f"train_labels[{a!r}]", 2)


def evaluate(
    train,
    train_labels: Mapping[str, np.ndarray],
    val,
    val_labels: Mapping[str, np.ndarray],
    *,
    k: int = 10,
    classes: Mapping[str, np.ndarray] | None = None,
    standardize: bool = True,
    probes: bool = True,
    neighbors=None,
    fitted=None,
) -> dict:
    """Metrics of one representation as a flat dict.

    Keys: ``total_variance``, ``mean_cosine``, ``rankme``, ``participation_ratio`` (of
    ``val``), then per attribute ``a``: ``"{a} accuracy"``, ``"{a} BA"`` (balanced accuracy
    over ``classes[a]``, default: :func:`frozen_classes` of ``val_labels``) and
    ``"{a} P@{k}"``; all shares in [0, 1]. ``probes=False`` skips the probe columns.
    P@k reads ``neighbors``, the ``(len(val), k)`` top-k indices of ``topk(val, val, k,
    exclude_self=True, dtype=np.float64)``: pass them when already computed (e.g. for
    overlap@k as well), else they are computed here. ``fitted``: the probes of
    :func:`~embdiag.metrics.probe.fit_probes` on ``train`` for every attribute of ``val_labels``
    (with ``standardize``), when already fitted, else they are fitted here.

    Missing labels (None, NaN, pandas NA) drop that row for that attribute only: its probe
    is fitted on the training rows labelled for it, accuracy and BA are over the evaluation
    rows labelled for it, and P@k skips unlabelled queries and counts only labelled
    neighbours (:func:`~embdiag.metrics.retrieval.precision_at_k`). An attribute with no
    labelled row, or fewer than 2 classes among them, in either set raises ``ValueError``
    naming it (fewer than 2 classes: only with ``probes``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.tile([0, 1], 30)
    >>> X = rng.normal(size=(60, 4)) + 4 * y[:, None]  # class 1 shifted by 4 in every feature
    >>> row = evaluate(X[:30], {"a": y[:30]}, X[30:], {"a": y[30:]}, k=3)
    >>> list(row)
    ['total_variance', 'mean_cosine', 'rankme', 'participation_ratio', 'a accuracy', 'a BA', 'a P@3']
    >>> round(row["a accuracy"], 4), round(row["a BA"], 4), round(row["a P@3"], 4)
    (1.0, 1.0, 0.8778)
    """
    check_inputs(train, train_labels, val, val_labels, probes=probes)
    classes = dict(check_mapping(classes, "classes")) if classes is not None else frozen_classes(val_labels)
    if probes and (missing := [a for a in val_labels if a not in classes]):
        raise ValueError(f"classes: has no classes for {', '.join(map(repr, missing))} (val_labels has)")
    row = summary(val)
    if probes:  # one call: the attributes share the training vectors' standardization and basis
        if fitted is None:
            from .probe import fit_probes  # imports scikit-learn

            fitted = fit_probes(train, {a: train_labels[a] for a in val_labels}, standardize=standardize)
        for a, y in val_labels.items():
            y, keep = labelled_values(y, f"val_labels[{a!r}]")
            pred = fitted[a].predict(val)[keep]
            row[f"{a} accuracy"] = float(np.mean(pred == y))
            row[f"{a} BA"] = balanced_accuracy(y, pred, classes[a])
    if neighbors is None:
        _, neighbors = topk(val, val, k, exclude_self=True, dtype=np.float64)
    elif np.shape(neighbors) != (len(val), k):
        raise ValueError(
            f"neighbors: expected shape {(len(val), k)} (one row of k indices per evaluation "
            f"vector), got {np.shape(neighbors)}"
        )
    for a, y in val_labels.items():
        row[f"{a} P@{k}"] = precision_at_k(neighbors, y)
    return row
