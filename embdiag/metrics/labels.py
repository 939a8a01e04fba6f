"""Labels as the probes and P@k read them: which entries carry one, their classes, and
balanced accuracy.

Missing labels (None, NaN, pandas NA / NaT; :func:`labelled`) are allowed everywhere here: a
row without a label is left out of what it scores.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validate import as_labels, check_int, same_length

__all__ = ["labelled", "labelled_values", "class_codes", "eligible_classes", "balanced_accuracy"]


def labelled(y) -> np.ndarray:
    """Which entries of the 1-D labels ``y`` carry a label: all but None, NaN and pandas' NA / NaT.

    Examples
    --------
    >>> labelled(["a", None, float("nan"), "b"])
    array([ True, False, False,  True])
    """
    a = np.asarray(y, dtype=object)
    if a.ndim != 1:
        raise ValueError(f"y: expected a 1-D array of labels, got shape {a.shape}")
    return ~pd.isna(a)


def labelled_values(y, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """``(values, keep)``: the labelled entries of the 1-D labels ``y`` (checked like any labels)
    and the mask :func:`labelled` of them; all entries, as given, when none is missing.

    Raises ``ValueError`` naming ``name`` when no entry is labelled.

    Examples
    --------
    >>> labelled_values(["a", None, "b"])
    (array(['a', 'b'], dtype=object), array([ True, False,  True]))
    """
    a = np.asarray(y)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array of labels, got shape {a.shape}")
    keep = labelled(a)
    if a.size and not keep.any():
        raise ValueError(f"{name}: no labelled entry (all {a.size} missing)")
    return as_labels(a if keep.all() else a[keep], name), keep


def class_codes(y, classes) -> np.ndarray:
    """Each entry's position among the sorted ``classes`` (float), NaN where it has no label or
    one outside them.

    >>> class_codes(["b", None, "a", "z"], ["a", "b"]).tolist()
    [1.0, nan, 0.0, nan]
    >>> class_codes(["b", "a"], []).tolist()  # no class: every entry outside
    [nan, nan]
    """
    values, keep = labelled_values(y)
    classes = np.unique(classes)
    if classes.size == 0:
        return np.full(len(keep), np.nan)
    pos = np.clip(np.searchsorted(classes, values), 0, len(classes) - 1)
    hit = classes[pos] == values
    codes = np.full(len(keep), np.nan)
    codes[np.flatnonzero(keep)[hit]] = pos[hit]
    return codes


def eligible_classes(y, min_support: int = 10) -> np.ndarray:
    """Classes with at least ``min_support`` labelled samples in ``y``, sorted (missing labels
    are no class).

    Examples
    --------
    >>> eligible_classes([0, 0, 1, 2, 2, 2], min_support=2)
    array([0, 2])
    >>> eligible_classes(["a", None, "a", "b"], min_support=2)
    array(['a'], dtype=object)
    """
    y = labelled_values(y)[0]
    check_int(min_support, "min_support", minimum=1)
    classes, counts = np.unique(y, return_counts=True)
    return classes[counts >= min_support]


def balanced_accuracy(y_true, y_pred, classes) -> float:
    """Mean per-class recall over the given (frozen, e.g. eligible) ``classes``.

    Samples whose true label is not in ``classes`` or missing are ignored; a prediction outside
    ``classes`` counts as an error. Needs at least two classes, each present in ``y_true``.

    Examples
    --------
    >>> round(balanced_accuracy([0, 0, 0, 1], [0, 0, 1, 1], classes=[0, 1]), 4)  # (2/3 + 1) / 2
    0.8333
    >>> balanced_accuracy([0, 1, 2], [0, 1, 1], classes=[0, 1])  # the sample of class 2 is ignored
    1.0
    """
    (y_true, keep), y_pred = labelled_values(y_true, "y_true"), as_labels(y_pred, "y_pred")
    same_length(y_true=keep, y_pred=y_pred)
    y_pred = y_pred if keep.all() else y_pred[keep]
    classes = np.unique(as_labels(classes, "classes"))
    if len(classes) < 2:
        raise ValueError(f"classes: needs at least 2 classes, got {len(classes)}")
    recalls = []
    for c in classes:
        mask = y_true == c
        if not mask.any():
            raise ValueError(f"classes: class {c.item()!r} has no samples in y_true; its recall is undefined")
        recalls.append(np.mean(y_pred[mask] == c))
    return float(np.mean(recalls))
