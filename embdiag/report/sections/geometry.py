"""Distribution: the label-free geometry of every representation.

Measured (:func:`measure`): :func:`embdiag.metrics.geometry.summary` of the reference and of every
condition with vectors, over every row (quick: a seeded sample of
:data:`~embdiag.report.measurement.QUICK_GEOMETRY_ROWS` rows), in two spaces kept apart
(:data:`SPACES`, the records' ``attribute``): the ``raw`` rows as given or made (a compression's
projection, not renormalized) and the ``unit`` rows (each row divided by its norm, what cosine
search sees). Shown: one table per space."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..._mapped import take_rows
from ...view import exhibits as exhibit
from ..conditions import CHUNK_ROWS, unit_rows_f32
from .measured import Section, record
from .presentation import for_reading, section

if TYPE_CHECKING:
    from ..measurement import Plan, Report

NAME = "geometry"
TITLE = "Distribution: geometry without labels"
INTRO = (
    "Without labels: how spread the vectors are, how much they share one direction and how many directions "
    "carry their variance, on raw rows and on unit rows (what cosine compares), in tables not to be mixed."
)
#: Why the section can be missing.
MISSING = ""
#: What the section establishes and what not (the report's ``scope``).
SCOPE = (
    "Label-free shape of each representation (spread, mean direction, effective rank) on a sample; it"
    " says nothing about whether neighbours or labels are kept."
)


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence and one geometry table per space."""
    return section(report, NAME, MISSING, _draw)


#: Geometry's two spaces: the rows as given (or as a condition makes them) and their unit rows.
SPACES = ("raw", "unit")


GEOMETRY_KEYS = ("total_variance", "mean_cosine", "rankme", "participation_ratio")


def unit(X, own: bool) -> np.ndarray:
    """The unit rows of ``X``: ``X`` itself divided in place when ``own`` (a float32 array made for
    the report), else a float32 copy (norms in float64, chunk by chunk)."""
    if not own:
        return unit_rows_f32(X)
    for a in range(0, len(X), CHUNK_ROWS):
        chunk = X[a : a + CHUNK_ROWS]
        chunk /= np.linalg.norm(chunk.astype(np.float64), axis=1)[:, None]
    return X


def both_spaces(X, geometry: Callable, own: bool) -> dict[str, dict]:
    """``{"raw": geometry(X), "unit": geometry(unit rows of X)}`` (``X`` normalized in place when ``own``)."""
    raw = geometry(X)
    return {"raw": raw, "unit": geometry(unit(X, own))}


def measure(plan: Plan, geo: dict[str, dict]) -> Section:
    """The geometry records and table of every representation's summaries in both :data:`SPACES`."""
    rows = [
        record("geometry", key, name, r[key], space)
        for space in SPACES
        for name, by in geo.items()
        for r in [by[space]]
        for key in GEOMETRY_KEYS
    ]
    table = pd.DataFrame(
        [
            {"space": space, "representation": name, **by[space], "n_rows": len(plan.geo_idx)}
            for space in SPACES
            for name, by in geo.items()
        ]
    )
    return Section(True, rows, {"geometry": table})


def rows(plan: Plan) -> np.ndarray:
    """The reference rows geometry reads: ``V``, or its sampled rows."""
    return plan.V if len(plan.geo_idx) == len(plan.V) else take_rows(plan.V, plan.geo_idx)


_GEOMETRY_COLUMNS = (
    "total variance: sum of the per-dimension variances; mean cosine: mean cosine of distinct "
    "pairs of rows; RankMe: effective rank, exp of the entropy of the normalized singular values; "
    "participation ratio: (sum of covariance eigenvalues)² / sum of their squares"
)


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    rows = int(table["n_rows"].iloc[0])
    every = rows == report.inputs["n"]
    which = f"{'all' if every else 'the same'} {rows:,} {'' if every else 'sampled '}rows"
    spaces = {
        "raw": (
            "raw rows: the vectors as given, a storage format's reconstruction, a compression's "
            "projection before any renormalization"
        ),
        "unit": "unit rows: every row divided by its norm (what cosine search compares)",
    }
    out = []
    for space, what in spaces.items():
        part = for_reading(table[table["space"] == space].drop(columns=["space", "n_rows"]))
        out.append(
            exhibit.table(
                part.set_index("representation"),
                name=f"report-geometry-{space}",
                **mark,
                collapsed=f"Geometry of {space} rows: every number",
                caption=(
                    f"Geometry of {what}, each representation on {which} (embdiag.metrics.geometry.summary): "
                    f"{_GEOMETRY_COLUMNS}. Compare rows within this table only. "
                    f"{'No' if every else 'One sample, no'} interval."
                ),
            )
        )
    return out
