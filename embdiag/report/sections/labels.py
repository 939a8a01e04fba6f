"""Recoverable labels: per label column, a linear probe's balanced accuracy and P@k, with floors.

Measured (:func:`measure`, with the probes of :class:`Probes`): per label column, probe balanced
accuracy (:func:`~embdiag.metrics.probe.fit_probes` fitted on the training rows of the labels'
``split`` column and scored on its evaluation rows, or without one on a seeded 70/30 split; at
most :data:`~embdiag.report.measurement.PROBE_ROWS` rows; C's path stopped after
:data:`PROBE_PATIENCE` values below the best) and P@k of the searched queries, with floors;
classes frozen once by :func:`~embdiag.metrics.suite.frozen_classes`. The ``split`` column
(:data:`~embdiag.data.files.SPLIT_COLUMN`) is never an attribute. A missing label leaves that
row out for that attribute only (counted in ``missing_labels``). Shown: a figure of both
measures against their floors, the table of values and the class support."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import altair as alt
import numpy as np
import pandas as pd

from ..._mapped import take_rows
from ...metrics.labels import balanced_accuracy, labelled, labelled_values
from ...metrics.retrieval import precision_at_k, random_floor
from ...metrics.suite import frozen_classes
from ...view import exhibits as exhibit
from ...view import theme
from .. import streams
from ..conditions import ReportCondition, _sample_rows
from .measured import Section, label_arrays, record
from .presentation import for_reading, kind_colour, kinds, section

if TYPE_CHECKING:
    from ..measurement import Plan, Report

NAME = "labels"
TITLE = "Recoverable labels: probes and P@k"
INTRO = (
    "What a linear probe recovers (balanced accuracy) and how often neighbours share a query's label (P@k), "
    "each beside its chance floor."
)
#: Why the section can be missing.
MISSING = "no --labels file was given"
#: What the section establishes and what not (the report's ``scope``).
SCOPE = (
    "What a linear probe recovers and how often neighbours share a query's label, against chance "
    "floors; it does not establish that the labels are the ones the application needs."
)


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence, the probes' and P@k's figure and tables, or why there are none."""
    return section(report, NAME, MISSING, _draw)


#: The probes' path over C stops after this many values below the best (``LinearProbe(patience=...)``).
PROBE_PATIENCE = 2


def probe_split(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """The probes' training and evaluation rows, each part in its random order (the stress grid
    takes the first rows of each): with a ``split`` column its training and evaluation rows (a
    seeded sample of at most 70% and 30% of ``probe_rows`` of each), else a seeded 70/30 split of
    a seeded sample of at most ``probe_rows`` rows."""
    n_tr = int(round(0.7 * plan.probe_rows))
    if plan.is_train is None:
        rows = _sample_rows(len(plan.V), plan.probe_rows, plan.seed, streams.PROBE)
        perm = np.random.default_rng([plan.seed, streams.SPLIT]).permutation(len(rows))
        n_tr = int(round(0.7 * len(rows)))
        return rows[perm[:n_tr]], rows[perm[n_tr:]]
    parts = []
    for part, (mask, cap) in enumerate(((plan.is_train, n_tr), (~plan.is_train, plan.probe_rows - n_tr))):
        rows = np.flatnonzero(mask)
        rows = rows[_sample_rows(len(rows), cap, plan.seed, streams.PROBE + 100 * (part + 1))]
        parts.append(rows[np.random.default_rng([plan.seed, streams.SPLIT, part]).permutation(len(rows))])
    return parts[0], parts[1]


def _support(ys: dict[str, np.ndarray], min_support: int) -> tuple[list[dict], list[dict]]:
    """Per column, the rare-class count (metric records) and every class's count (support table rows)."""
    records, support = [], []
    for col, y in ys.items():
        values, counts = np.unique(labelled_values(y, col)[0], return_counts=True)
        support += [
            {"attribute": col, "class": v, "count": int(c), "eligible": bool(c >= min_support)}
            for v, c in zip(values, counts)
        ]
        records.append(record("labels", "rare_classes", "reference", int((counts < min_support).sum()), col))
        records.append(record("labels", "missing_labels", "reference", int((~labelled(y)).sum()), col))
    return records, support


def classes_of(y) -> np.ndarray:
    """The classes of the labelled entries of ``y`` (none when every entry is missing)."""
    keep = labelled(y)
    return np.unique(y[keep]) if keep.any() else np.empty(0, dtype=object)


def _probe_classes(ys, classes, tr, va, min_support: int) -> tuple[dict[str, np.ndarray], list[str]]:
    """Per column, the frozen classes present in the evaluation rows ``va`` (columns with fewer
    than two, or whose training rows ``tr`` hold fewer than two classes, are left out, with a note)."""
    out, notes = {}, []
    for col, y in ys.items():
        present = np.intersect1d(classes[col], classes_of(y[va]))
        if len(present) < 2:
            notes.append(
                f"--labels: column {col!r} has fewer than 2 classes with at least {min_support} items "
                "present in the probe's evaluation split; no probe accuracy"
            )
        elif len(classes_of(y[tr])) < 2:
            notes.append(
                f"--labels: column {col!r} has fewer than 2 classes among the probe's labelled training "
                "rows; no probe accuracy"
            )
        else:
            out[col] = present
    return out, notes


@dataclass(frozen=True)
class Probes:
    """The probes' labels and rows: each column's labels (``ys``) and frozen classes, the training
    and evaluation rows (sorted), the classes each column's balanced accuracy averages over
    (``ba_classes``: columns without a probe left out) and the notes on those."""

    ys: dict[str, np.ndarray]
    classes: dict[str, np.ndarray]
    tr: np.ndarray
    va: np.ndarray
    ba_classes: dict[str, np.ndarray]
    notes: list[str]

    @classmethod
    def of(cls, plan: Plan) -> Probes | None:
        if plan.labels is None:
            return None
        ys = label_arrays(plan.labels)
        classes = frozen_classes(ys, plan.min_support)
        tr, va = (np.sort(part) for part in probe_split(plan))
        return cls(ys, classes, tr, va, *_probe_classes(ys, classes, tr, va, plan.min_support))

    def accuracy(self, plan: Plan, c: ReportCondition | None) -> dict[str, float]:
        """Balanced accuracy per column of probes fitted on rows ``tr`` of the reference (``c``
        None) or of condition ``c`` and evaluated on rows ``va``; empty for an index or without
        columns. Single-threaded (:func:`~embdiag.metrics.probe.fit_probes`)."""
        if not self.ba_classes or (c is not None and not c.has_vectors):
            return {}
        V, tr, va, ys = plan.V, self.tr, self.va, self.ys
        Xtr = take_rows(V, tr) if c is None else c.vectors(take_rows(V, tr), plan.fit, rows=tr)
        Xva = take_rows(V, va) if c is None else c.vectors(take_rows(V, va), plan.fit, rows=va)
        cols = {col: ys[col][tr] for col in self.ba_classes}
        from ...metrics.probe import fit_probes  # imports scikit-learn

        probes = fit_probes(Xtr, cols, random_state=plan.seed, patience=PROBE_PATIENCE)
        return {col: balanced_accuracy(ys[col][va], p.predict(Xva), self.ba_classes[col]) for col, p in probes.items()}


def measure(plan: Plan, neighbours: dict[str, np.ndarray], probes: Probes | None, ba: dict[str, dict]) -> Section:
    """Class support, and per representation and column the probe's balanced accuracy (``ba``,
    from :meth:`Probes.accuracy`) and P@k of the searched queries (queries that are VECTORS rows
    only), with their floors."""
    if probes is None:
        return Section(False)
    ys, classes, ba_classes, notes = probes.ys, probes.classes, probes.ba_classes, list(probes.notes)
    rows, support = _support(ys, plan.min_support)
    table = []
    for name in ["reference"] + [c.name for c in plan.conds]:
        for col, y in ys.items():
            row = {
                "representation": name,
                "attribute": col,
                "eligible_classes": len(classes[col]),
                "missing_labels": int((~labelled(y)).sum()),
            }
            if col in ba.get(name, {}):
                row.update(probe_ba=ba[name][col], ba_floor=1.0 / len(ba_classes[col]))
                rows.append(record("labels", "probe_ba", name, ba[name][col], col))
            if plan.self_search:
                p = precision_at_k(neighbours[name], y[plan.g_idx], y[plan.q_sel])
                row.update({f"p@{plan.k}": p, "p_floor": random_floor(y[plan.g_idx])})
                rows.append(record("labels", f"p@{plan.k}", name, p, col))
            table.append(row)
    if not plan.self_search:
        notes.append("--labels with --queries: labels describe VECTORS only, so P@k of the queries is not measured")
    tables = {
        "support": pd.DataFrame(support, columns=["attribute", "class", "count", "eligible"]),
        "labels": pd.DataFrame(table),
    }
    return Section(True, rows, tables, notes)


def probe_statement(plan: Plan) -> str:
    """Which rows fit the probes and which score them, and how C is chosen."""
    from ...metrics.probe import LinearProbe  # imports scikit-learn

    grid = LinearProbe.Cs_default
    how = (
        f"; C picked from {grid[0]:g} to {grid[-1]:g} (x10, strongest regularization first) on a seeded "
        f"stratified fifth of the training rows, stopping {PROBE_PATIENCE} values past the best"
    )
    if plan.is_train is None:
        return f"a seeded 70/30 split of at most {plan.probe_rows:,} labelled rows" + how
    tr, va = probe_split(plan)
    n_tr, n_va = int(plan.is_train.sum()), int((~plan.is_train).sum())
    return (
        f"the labels' split column: {len(tr):,} of its {n_tr:,} training rows fit them, {len(va):,} of its "
        f"{n_va:,} evaluation rows score them" + (" (seeded samples)" if len(tr) + len(va) < n_tr + n_va else "") + how
    )


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    k = report.inputs["k"]
    out = [
        exhibit.figure(
            chart(table.assign(kind=table["representation"].map(kinds(report))), k),
            name="report-labels",
            **mark,
            caption=(
                f"Balanced accuracy of a linear probe and P@{k} per label column and representation (dots, coloured by "
                f"kind), with each measure's chance floor (grey tick). One probe split and one query sample, no "
                "interval."
            ),
        ),
        exhibit.table(
            shown := for_reading(table).set_index(["representation", "attribute"]),
            name="report-labels-table",
            collapsed="Probe accuracy and P@k per representation and attribute",
            **mark,
            extremes=[c for c in ("probe BA (%)", f"P@{k} (%)") if c in shown] or False,  # no floors
            caption=(
                f"The values of the figure. eligible classes: classes with at least {report.inputs['min_support']} "
                "labelled items; unlabelled rows: rows without a label for the attribute (left out of its numbers); "
                "probe BA: the probe's balanced accuracy (%) on the evaluation rows over the eligible classes present, "
                f"BA floor: its chance level (1 / classes); P@{k}: percent of a query's labelled neighbours with its "
                f"label (unlabelled queries skipped), P@k floor: its chance level (sum of squared class shares)."
            ),
        ),
    ]
    support = report.tables.get("support")
    if support is not None:
        out.append(
            exhibit.table(
                support.set_index(["attribute", "class"]),
                name="report-support",
                collapsed="Labels with too few rows, left out",
                **mark,
                extremes=False,
                caption=(
                    f"Labelled items per class (count); eligible: at least {report.inputs['min_support']} items, so "
                    f"the class counts in probe accuracy and the comparisons."
                ),
            )
        )
    return out


def chart(labels: pd.DataFrame, k: int = 10) -> alt.FacetChart:
    """Probe balanced accuracy and P@k per representation (dots, coloured by ``kind`` when the table
    has that column) with their floors (ticks), one panel per measure and label column."""
    parts = []
    labels = labels if "kind" in labels else labels.assign(kind="reference")
    for value, floor, measure in (("probe_ba", "ba_floor", "probe BA"), (f"p@{k}", "p_floor", f"P@{k}")):
        if value in labels:
            parts.append(
                labels[["representation", "kind", "attribute", value, floor]]
                .rename(columns={value: "value", floor: "floor"})
                .assign(measure=measure)
            )
    data = pd.concat(parts, ignore_index=True).dropna(subset=["value"])
    order = list(dict.fromkeys(labels["representation"]))
    y = alt.Y("representation:N", sort=order, title=None)
    dots = (
        alt.Chart()
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("value:Q", title="share", scale=alt.Scale(domain=[0, 1])),
            y=y,
            color=kind_colour(),
            tooltip=[
                "representation",
                "kind",
                "attribute",
                "measure",
                alt.Tooltip("value:Q", format=".4f"),
                alt.Tooltip("floor:Q", format=".4f"),
            ],
        )
    )
    floor = alt.Chart().mark_tick(color="gray", thickness=2).encode(x="floor:Q", y=y)
    attributes = list(dict.fromkeys(labels["attribute"]))
    chart = (
        alt.layer(floor, dots, data=data)
        .properties(width=theme.panel_width(len(attributes), gap=80), height=18 * len(order))
        .facet(
            row=alt.Row("measure:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
            column=alt.Column("attribute:N", title=None, sort=attributes),
        )
    )
    return theme.legend_below(chart)
