"""The stress grid: every metric of the reference vectors under the study's declared interventions.

Measured (:func:`measure`, on request): :func:`~embdiag.interventions.stress.measure_grid` on
the first :data:`STRESS_ROWS` rows of the probe split. Shown: the grid's table."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..._mapped import take_rows
from ...metrics.labels import eligible_classes, labelled
from ...view import exhibits as exhibit
from .labels import classes_of, probe_split
from .measured import Section, label_arrays, record
from .presentation import for_reading, section

if TYPE_CHECKING:
    from ..measurement import Plan, Report

NAME = "stress"
TITLE = "Stress grid"
INTRO = (
    "With `--stress`, the study's interventions (contraction, common offset, rank restriction, noise) at "
    "each severity, every metric measured again."
)
#: Why the section can be missing.
MISSING = "--stress was not asked for"
#: What the section establishes and what not (the report's ``scope``).
SCOPE = (
    "How the metrics move under declared synthetic changes of the vectors; it probes sensitivity, not"
    " the changes the user's pipeline makes."
)


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence and the grid's table, or why there is none."""
    return section(report, NAME, MISSING, _draw)


STRESS_ROWS = 5_000


def _stress_records(condition: str, row: dict) -> list[dict]:
    """Metric records of one stress grid row (``"<column> BA"`` -> ``probe_ba`` of that column, ...)."""
    out = []
    for key, value in row.items():
        m = re.fullmatch(r"(.*) (BA|accuracy|P@\d+)", key)
        if m:
            metric = {"BA": "probe_ba", "accuracy": "probe_accuracy"}.get(m.group(2), m.group(2).lower())
            out.append(record("stress", metric, condition, value, m.group(1)))
        else:
            out.append(record("stress", key, condition, value))
    return out


def measure(plan: Plan) -> Section:
    """The stress grid on the first :data:`STRESS_ROWS` rows of the probe split (70/30 of them), over the
    label columns with two classes of at least 10 items in its evaluation rows."""
    if not plan.stress:
        return Section(False)
    tr, va = probe_split(plan)
    tr, va = np.sort(tr[: int(0.7 * STRESS_ROWS)]), np.sort(va[: STRESS_ROWS - int(0.7 * STRESS_ROWS)])
    ys = label_arrays(plan.labels)
    cols = [
        c
        for c, y in ys.items()
        if len(classes_of(y[tr])) >= 2 and labelled(y[va]).any() and len(eligible_classes(y[va], 10)) >= 2
    ]
    notes = []
    if len(cols) < len(ys):
        notes.append(
            f"--stress: columns without 2 classes of at least 10 items in the stress evaluation rows "
            f"left out: {[c for c in ys if c not in cols]}"
        )
    if not cols:
        return Section(
            True,
            tables={"stress": pd.DataFrame()},
            notes=notes + ["--stress: no label column usable; stress grid skipped"],
        )
    Xtr, Xva = take_rows(plan.V, tr).astype(np.float64), take_rows(plan.V, va).astype(np.float64)
    rows, table = [], []
    from ...interventions.stress import measure_grid  # imports scikit-learn

    for name, s, _, row, _ in measure_grid(
        Xtr, {c: ys[c][tr] for c in cols}, Xva, {c: ys[c][va] for c in cols}, k=plan.k, seed=plan.seed
    ):
        rows += _stress_records(f"{name}@{s:g}", row)
        table.append({"intervention": name, "severity": s, **row})
    return Section(True, rows, {"stress": pd.DataFrame(table)}, notes)


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    return [
        exhibit.table(
            for_reading(table).set_index(["intervention", "severity"]),
            name="report-stress",
            **mark,
            caption=(
                "Metrics of the reference vectors under each declared intervention and severity "
                "(embdiag.interventions.stress): geometry as above, per label column probe accuracy, BA and P@k (%), "
                "and overlap@k (%) with the unchanged vectors' neighbours."
            ),
        )
    ]
