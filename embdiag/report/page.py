"""The report's page: :mod:`embdiag.report.sections` in order, as one offline HTML file.

``embdiag report`` writes it from the measured :class:`~embdiag.report.measurement.Report` in the
same process, from the same section functions the book's report chapter displays: the page
opens with the section head (the result box, then the data and the command that made it), then
each section of :data:`~embdiag.report.sections.PAGE` under its title, its introduction and its
exhibits. :func:`recorded` gives the command of a report measured elsewhere (the book's chapter)
from what the report records.
"""

from __future__ import annotations

import html
import shlex

from . import html as pages
from . import sections


def command(arguments: list[str]) -> str:
    """The shell command line ``embdiag report ARGUMENTS``, each argument quoted where a shell needs it.

    Example:
        >>> command(["v.npy", "--fail-if", "overlap@10<0.95"])
        "embdiag report v.npy --fail-if 'overlap@10<0.95'"
    """
    return shlex.join(["embdiag", "report", *arguments])


#: What stands for the files of a report measured without any (the book's cached vectors).
PLACEHOLDERS = {"VECTORS": "vectors.npy", "--labels": "labels.csv"}


def recorded(report, out: str = "report") -> list[str]:
    """The ``embdiag report`` arguments that measure what ``report`` records: its options (defaults
    left out), its files by name and ``--out out``. A report measured on no file (the project's
    cached vectors) names :data:`PLACEHOLDERS` instead: ``vectors.npy``, and ``labels.csv`` when
    it has label columns."""
    from .options import ReportOptions

    files = {key: r["file"] for key, r in (report.inputs.get("files") or {}).items()}
    if "VECTORS" not in files:
        labelled = bool(report.inputs.get("label_columns"))
        files = {key: p for key, p in PLACEHOLDERS.items() if key == "VECTORS" or labelled} | files
    return [*ReportOptions.from_report(report.inputs, files).command_line(), "--out", out]


def _section(section, report, timings: bool) -> str:
    head = f"<h2>{html.escape(section.TITLE)}</h2>\n{pages.markdown(section.INTRO)}"
    body = pages.outputs(section.exhibits(report, timings=timings))
    return f'<section class="embdiag-section" id="{section.NAME}">\n{head}{body}\n</section>'


def render(report, source: str, *, title: str, arguments: list[str], timings: bool = True) -> str:
    """The page of ``report`` (measured on ``source``, one sentence naming the data) made by
    ``embdiag report ARGUMENTS``; ``timings``: show this run's index speeds."""
    sections.enable()
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        pages.outputs(sections.head(report, source, command(arguments))),
        *(_section(s, report, timings) for s in sections.PAGE),
    ]
    return pages.document("\n".join(parts), title)
