"""The study's metric suite for one representation: geometry, probes, retrieval.

One call measures what each row of the study's tables reports for a set of
evaluation vectors: the four geometry numbers (no labels), standardized linear-probe
accuracy and balanced accuracy per attribute (probes fitted on training vectors), and
P@k per attribute (each evaluation vector queries the others by cosine).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .geometry import summary
from .probe import LinearProbe, balanced_accuracy, eligible_classes
from .retrieval import precision_at_k, topk


def frozen_classes(labels: Mapping[str, np.ndarray], min_support: int = 10) -> dict[str, np.ndarray]:
    """Eligible classes per attribute, fixed once before any comparison."""
    return {a: eligible_classes(y, min_support) for a, y in labels.items()}


def evaluate(train, train_labels: Mapping[str, np.ndarray], val, val_labels: Mapping[str, np.ndarray], *,
             k: int = 10, classes: Mapping[str, np.ndarray] | None = None, standardize: bool = True,
             probes: bool = True) -> dict:
    """Metrics of one representation as a flat dict.

    Keys: ``total_variance``, ``mean_cosine``, ``rankme``, ``participation_ratio`` (of
    ``val``), then per attribute ``a``: ``"{a} accuracy"``, ``"{a} BA"`` (balanced accuracy
    over ``classes[a]``, default: :func:`frozen_classes` of ``val_labels``) and
    ``"{a} P@{k}"``; all shares in [0, 1]. ``probes=False`` skips the probe columns.
    """
    classes = dict(classes) if classes is not None else frozen_classes(val_labels)
    row = summary(val)
    if probes:
        for a, y in val_labels.items():
            pred = LinearProbe(standardize=standardize).fit(train, train_labels[a]).predict(val)
            row[f"{a} accuracy"] = float(np.mean(pred == np.asarray(y)))
            row[f"{a} BA"] = balanced_accuracy(y, pred, classes[a])
    _, neighbors = topk(val, val, k, exclude_self=True, dtype=np.float64)
    for a, y in val_labels.items():
        row[f"{a} P@{k}"] = precision_at_k(neighbors, y)
    return row


def stress_grid(train, train_labels: Mapping[str, np.ndarray], val, val_labels: Mapping[str, np.ndarray], *,
                names=None, severities=None, k: int = 10, seed: int = 0, probes: bool = True):
    """:func:`evaluate` for every intervention x severity, each fitted on ``train`` only.

    Returns a DataFrame with columns ``intervention``, ``severity`` and the metric columns,
    one row per grid point, in the grid's order (see :func:`embdiag.interventions.grid`).
    Eligible classes are frozen once, from ``val_labels``, for every row.
    """
    import pandas as pd

    from .interventions import INTERVENTIONS, SEVERITIES, grid

    classes = frozen_classes(val_labels)
    rows = []
    for name, s, change in grid(tuple(names or INTERVENTIONS), tuple(severities or SEVERITIES), seed=seed):
        change.fit(train)
        row = evaluate(change.transform(train), train_labels, change.transform(val), val_labels,
                       k=k, classes=classes, probes=probes)
        rows.append({"intervention": name, "severity": s, **row})
    return pd.DataFrame(rows)
