"""What the report's sections show alike: each kind of representation's colour
(:data:`KIND_COLOURS`), the provenance line of a report's exhibits (:func:`provenance`), the
scope sentence, folded, or the reason a section was not measured (:func:`scope`), detail a reader
opens on demand (:class:`Folded`), columns under their readable names with shares in percent
(:func:`for_reading`), and :func:`section`, which puts a section's exhibits under its scope."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import altair as alt
import pandas as pd

from ...artifacts import Read
from ...view import theme
from ...view.markdown import Html, Markdown

if TYPE_CHECKING:
    from ..measurement import Report

__all__ = [
    "KIND_COLOURS",
    "LONG_TABLE",
    "Folded",
    "Html",
    "kind_colour",
    "kinds",
    "provenance",
    "scope",
    "for_reading",
    "section",
]


@dataclass(frozen=True)
class Folded:
    """Markdown ``text`` shown collapsed under the line ``title``: detail a reader opens on demand.

    Example:
        >>> Folded("Scope", "*shape* only")._repr_html_()
        '<details class="embdiag-more"><summary>Scope</summary>\\n<p><em>shape</em> only</p>\\n</details>'
    """

    title: str
    text: str

    def _repr_html_(self) -> str:
        from ..html import markdown

        summary = f"<summary>{html.escape(self.title)}</summary>"
        return f'<details class="embdiag-more">{summary}\n{markdown(self.text)}</details>'

    def __repr__(self) -> str:
        return f"{self.title}: {self.text}"


#: One colour per kind of representation, used by every chart of the report.
#: Why a section that compares conditions is missing: there are none.
NO_CONDITION = "no second representation (--compare, --compress or --index) was given"
KIND_COLOURS = {kind: theme.colour(kind) for kind in ("reference", "file", "storage", "compression", "index")}


def kind_colour(title: str | None = "kind") -> alt.Color:
    """The colour channel of every report chart: field ``kind``, :data:`KIND_COLOURS`."""
    scale = alt.Scale(domain=list(KIND_COLOURS), range=list(KIND_COLOURS.values()))
    return alt.Color("kind:N", title=title, scale=scale)


def kinds(report: Report) -> dict[str, str]:
    """Representation name -> its kind (``reference`` for the reference vectors)."""
    return {"reference": "reference", **{c["name"]: c["kind"] for c in report.inputs["conditions"]}}


def provenance(report: Report) -> dict:
    """The provenance arguments of a report's exhibits: for a user's files, made by
    ``embdiag report`` (its version) from those files (name, option, SHA-256); else (the book's
    run on the project's cached vectors) the chapter pipeline's own line."""
    files = report.inputs.get("files") or {}
    if not files:
        return {}
    version = report.inputs.get("versions", {}).get("embdiag", "")
    made = f"Made by <code>embdiag report</code>{' ' + html.escape(version) if version else ''}"
    return {"made": made, "reads": [Read(f"{r['file']} ({option})", r["sha256"]) for option, r in files.items()]}


#: The line a section's folded scope (what it establishes and what not) opens from.
SCOPE_TITLE = "Scope"


def scope(report: Report, name: str, missing: str) -> list[Folded | Markdown]:
    """The section's scope sentence (the report's ``scope[name]``), folded under :data:`SCOPE_TITLE`,
    when its table ``name`` has rows, else why it was not measured (``missing``, or that no
    condition can represent the vectors)."""
    if name in report.tables and not report.tables[name].empty:
        scope = report.scope.get(name)
        return [Folded(SCOPE_TITLE, code_options(scope))] if scope else []
    from .summary import CANNOT_REPRESENT  # the summary section imports this module

    unmeasurable = report.summary and all(e["verdict"] == CANNOT_REPRESENT for e in report.summary)
    if unmeasurable and name in ("identity", "relevance", "frontier"):
        return [Markdown("*Not measured:* no condition given can represent these vectors (see the summary).")]
    return [Markdown(f"*Not measured:* {code_options(missing)}.")]


def code_options(text: str) -> str:
    """``text`` with each ``--option`` as code, so Markdown keeps its two hyphens."""
    return re.sub(r"(--[a-z][a-z-]*)", r"`\1`", text)


#: Report columns as the page heads them.
_HEADERS = {
    "total_variance": "total variance",
    "mean_cosine": "mean cosine",
    "rankme": "RankMe",
    "participation_ratio": "participation ratio",
    "eligible_classes": "eligible classes",
    "missing_labels": "unlabelled rows",
    "probe_ba": "probe BA",
    "ba_floor": "BA floor",
    "p_floor": "P@k floor",
    "n_queries": "queries",
    "changed_queries": "changed queries",
    "median_margin_changed": "median margin, changed",
    "median_margin_unchanged": "median margin, unchanged",
    "cert_coverage": "certified",
    "cert_violations": "certified but changed",
    "bytes_per_vector": "bytes per vector",
    "queries_needed": "queries needed",
    "informative": "informative",
}


#: Columns holding a share (0-1), which the page shows in percent: exact names, then endings.
_SHARES = {"probe_ba", "ba_floor", "p_floor", "changed_queries", "cert_coverage"}
_SHARE_END = re.compile(r"(?:^| )(?:BA|accuracy|[pP]@\d+|overlap@\d+)$")


def for_reading(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as a page shows it: shares in percent with ``(%)`` in their header, other
    columns under their readable name (:data:`_HEADERS`; ``p@k`` as ``P@k``)."""
    out = frame.copy()
    names = {}
    for c in out.columns:
        share = c in _SHARES or bool(_SHARE_END.search(c))
        name = _HEADERS.get(c, re.sub(r"^p@", "P@", c).replace(" p@", " P@"))
        if share:
            out[c] = 100.0 * out[c]
            name += " (%)"
        names[c] = name
    return out.rename(columns=names)


#: Longer tables than this many rows are shown collapsed under one line (their figure shows them).
LONG_TABLE = 15


def section(report: Report, name: str, missing: str, draw: Callable) -> list:
    """Section ``name``'s scope sentence and exhibits: ``draw(report, table, mark)`` of its table
    ``name`` with the provenance arguments ``mark`` (:func:`provenance`), or without that table
    why it was not measured (``missing``)."""
    parts = scope(report, name, missing)
    table = report.tables.get(name)
    if table is None or table.empty:
        return parts
    return parts + draw(report, table, provenance(report))
