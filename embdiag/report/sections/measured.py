"""What a section's measurement gives the report, and the helpers every section's measurement
reads: a :class:`Section` of metric records (:func:`record`, one row of the metrics table,
columns :data:`~embdiag.report.measurement.METRIC_COLUMNS`), tables, notes, inputs entries and
timings; each label column's values (:func:`label_arrays`); a search result without the query's
own row (:func:`drop_self`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["Section", "record", "median", "label_arrays", "drop_self"]


@dataclass
class Section:
    """What one section adds to the report: metric records (:func:`record`), tables, notes and
    inputs entries; ``measured``: whether the report has the section (and its scope sentence)."""

    measured: bool
    rows: list[dict] = field(default_factory=list)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    inputs: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)


def record(section: str, metric: str, condition: str, value, attribute: str = "", low=np.nan, high=np.nan) -> dict:
    """One row of the metrics table (columns :data:`~embdiag.report.measurement.METRIC_COLUMNS`)."""
    return {
        "section": section,
        "metric": metric,
        "condition": condition,
        "attribute": attribute,
        "value": float(value),
        "low": float(low),
        "high": float(high),
    }


def median(x) -> float:
    """The median of ``x``, NaN when ``x`` is empty."""
    return float(np.median(x)) if len(x) else float("nan")


def label_arrays(labels: pd.DataFrame) -> dict[str, np.ndarray]:
    """Label column name -> its values as strings (an object array; a missing label is None)."""
    return {str(col): np.where(labels[col].notna(), labels[col].astype(str), None) for col in labels.columns}


def drop_self(S, I, self_pos, keep: int):
    """The first ``keep`` results of each row other than the query's own gallery row."""
    if self_pos is None:
        return S[:, :keep], I[:, :keep]
    order = np.argsort(I == np.asarray(self_pos)[:, None], axis=1, kind="stable")[:, :keep]
    return np.take_along_axis(S, order, axis=1), np.take_along_axis(I, order, axis=1)
