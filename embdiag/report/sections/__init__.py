"""The sections of an ``embdiag report``, one module each, each holding what it measures and
what it shows: ``hygiene``, ``summary``, ``conditions``, ``geometry``, ``labels``, ``identity`` (with
the certificates), ``hubness``, ``indexes``, ``relevance``, ``stress``, ``frontier``, ``gates``.

Each section module has ``NAME``, ``TITLE`` (its heading on the page), ``INTRO`` (the Markdown
paragraph under the heading), ``MISSING`` (why it can be missing) and ``exhibits(report, *,
timings=False)``: the display objects of the section of a :class:`~embdiag.report.measurement.Report`
(its scope sentence, then its tables and figures, or why it was not measured), each shown by its
own ``_repr_html_``, ``_repr_markdown_`` or ``_repr_mimebundle_``, so that Jupyter and a plain
renderer (:mod:`embdiag.report.page`) show them alike, without IPython. A measured section has
``SCOPE`` (what it establishes and what not) and ``measure(plan, ...)``, which
:func:`~embdiag.report.measurement.measure` calls; the summary and the frontier are measured
from the other sections' tables (:func:`summary.summarize`, :func:`frontier.frontier_table`), the
gates by :mod:`embdiag.report.fail_if`.

:data:`PAGE` is the page's order; :func:`head` opens the page (the result box, the overview and the sampling),
:func:`show` gives a section as the page shows it. Every caption names the data, the uncertainty
shown and what each column means; the charts are plain Altair, drawn offline
(:func:`enable`), each representation coloured by its kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...view import charts
from ...view.markdown import Markdown
from .presentation import Folded
from . import (
    conditions,
    frontier,
    gates,
    geometry,
    hubness,
    hygiene,
    identity,
    indexes,
    labels,
    relevance,
    stress,
    summary,
)

if TYPE_CHECKING:
    from ..measurement import Report

__all__ = ["PAGE", "head", "overview", "sampling", "show", "enable"]

#: The sections in the order the report's page shows them.
PAGE = (hygiene, summary, conditions, geometry, labels, identity, hubness, indexes, relevance, stress, frontier, gates)
_BY_NAME = {s.NAME: s for s in PAGE}


def enable() -> None:
    """Draw the sections' charts offline, in the book's theme (:func:`embdiag.view.charts.enable`)."""
    charts.enable()


def show(report: Report, name: str, *, timings: bool = False) -> list:
    """Section ``name`` (one of :data:`PAGE`'s names) as the page shows it under its title: its
    ``INTRO`` as Markdown (when it has one), then its exhibits."""
    if name not in _BY_NAME:
        raise ValueError(f"name: unknown section {name!r}; sections are {', '.join(_BY_NAME)}")
    section = _BY_NAME[name]
    return ([Markdown(section.INTRO)] if section.INTRO else []) + section.exhibits(report, timings=timings)


def head(report: Report, source: str, command: str | None = None) -> list:
    """What opens the page: the result box (:func:`embdiag.report.sections.summary.result`),
    then the :func:`overview` of the data (``source``: one sentence naming it) with the command
    that measures it (``command``, shown when given), then how it was sampled (:func:`sampling`)."""
    return [summary.result(report), overview(report, source, command), sampling(report)]


def overview(report: Report, source: str, command: str | None = None) -> Markdown:
    """Which data and how much of it, notes on anything left out, and ``command`` (when given)."""
    i = report.inputs
    lines = [f"**Data:** {source}. {i['n']:,} vectors of dimension {i['d']}, k = {i['k']}, seed {i['seed']}."]
    if "quick_statement" in i:
        lines.append(f"**{i['quick_statement']}**")
    missing = {a: m for a, m in i.get("missing_labels", {}).items() if m}
    if missing:
        lost = ", ".join(f"{a} {m:,} of {i['n']:,}" for a, m in missing.items())
        lines.append(f"**Missing labels** (each row left out for that attribute only): {lost}.")
    lines += [f"- Note: {note}" for note in i["notes"]]
    if command:
        lines.append(f"```\n{command}\n```")
    return Markdown("\n\n".join(lines))


def sampling(report: Report) -> Folded:
    """How the rows were searched and sampled, folded under one line."""
    i = report.inputs
    s = i["sampling"]
    lines = [
        f"**Searched:** {s['queries']} as queries, against {s['gallery']} ({i['exact_search']}).",
        f"**Samples:** geometry on {s['geometry']}; probes on {s['probes']}; intervals from {s['bootstrap']}.",
    ]
    if "scored" in s:
        lines.append(f"**Relevance:** {s['scored']}.")
    return Folded("How the rows were searched and sampled", "\n\n".join(lines))
