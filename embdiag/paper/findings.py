"""The findings protocol every section of the study and the conclusions share.

A section declares its findings as criteria fixed before this project's numbers were looked at
(``CRITERIA``: ``{finding: criterion}`` in its module of :mod:`embdiag.paper.chapters`). Its
``findings`` function applies each criterion to this run's numbers, and where it can to the
study's published ones (``data/study/``, read by :func:`read_published`), and returns a
*verdict table* (:func:`verdicts`): one row per declared finding, in the declared order, with
``finding``, ``criterion``, ``study`` and ``this run`` (the numbers in words) and
``reproduces`` (True, False, or None where this run did not measure it). A section may add
``from`` (who stated the finding) and ``holds in the study`` (the criterion on the published
numbers). :func:`table` and :func:`summary` present a verdict table; the conclusions stack them.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .. import artifacts
from .._project import published_dir

__all__ = ["VERDICT_COLUMNS", "read_published", "verdicts", "in_words", "table", "summary", "Result", "box", "result"]

#: Columns that hold a verdict (True, False, or None: not measured).
VERDICT_COLUMNS = ("holds in the study", "reproduces")
_WORDS = {True: "yes", False: "no"}


def read_published(name: str, path=None, **read_csv) -> pd.DataFrame:
    """The study's published table ``data/study/<name>`` (or ``path``), read by
    :func:`pandas.read_csv` with ``read_csv`` and recorded in the chapter's read log."""
    path = Path(path) if path is not None else published_dir() / name
    out = pd.read_csv(path, **read_csv)
    artifacts.record_read(path)
    return out


def _verdict(value) -> bool | None:
    return None if value is None or pd.isna(value) else bool(value)


def verdicts(criteria: Mapping[str, str], rows: Iterable, *, origin: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The verdict table of ``rows``: ``(finding, study, this run, reproduces)``, or
    ``(finding, study, this run, holds in the study, reproduces)``, one per finding of
    ``criteria`` in its order; ``origin`` (``{finding: who}``) adds a ``from`` column.

    Raises:
        ValueError: a row names an undeclared finding, or a declared finding has no row.

    >>> v = verdicts({"spread collapses": "variance below 1%"},
    ...              [("spread collapses", "0.004 vs 1.2", "0.003 vs 1.1", True)])
    >>> v[["finding", "criterion", "reproduces"]].to_dict("records")
    [{'finding': 'spread collapses', 'criterion': 'variance below 1%', 'reproduces': True}]
    """
    rows = [tuple(r) for r in rows]
    found = [r[0] for r in rows]
    if sorted(found) != sorted(criteria) or len(set(found)) != len(found):
        raise ValueError(f"rows: findings {found} do not match the declared {list(criteria)} one to one")
    out = []
    for finding, study, this_run, *verdict in sorted(rows, key=lambda r: list(criteria).index(r[0])):
        row = {"finding": finding}
        if origin is not None:
            row["from"] = origin[finding]
        row |= {"criterion": criteria[finding], "study": study, "this run": this_run}
        if len(verdict) == 2:
            row["holds in the study"] = _verdict(verdict[0])
        row["reproduces"] = _verdict(verdict[-1])
        out.append(row)
    return pd.DataFrame(out)


def in_words(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its boolean columns and verdict columns in words: yes, no, not measured.

    >>> in_words(pd.DataFrame({"reproduces": [True, None], "n": [1, 2]}))["reproduces"].tolist()
    ['yes', 'not measured']
    """

    def words(column: pd.Series) -> pd.Series:
        if pd.api.types.is_bool_dtype(column) or column.name in VERDICT_COLUMNS:
            return column.map(lambda v: "not measured" if _verdict(v) is None else _WORDS[bool(v)])
        return column

    return table.apply(words)


def table(verdict_table: pd.DataFrame) -> pd.DataFrame:
    """A verdict table for display: indexed by ``finding``, verdicts in words."""
    return in_words(verdict_table).set_index("finding")


def _line(row, criterion: bool) -> str:
    if _verdict(row["reproduces"]) is None:
        return f"- *{row['finding']}*: not measured in this run."
    holds = "holds" if row["reproduces"] else "does **not** hold"
    why = f" ({row['criterion']})" if criterion else ""
    return f"- *{row['finding']}* {holds} here{why}: {row['this run']}."


def summary(verdict_table: pd.DataFrame, claim: str, *, criterion: bool = True) -> str:
    """The verdicts as a Markdown sentence and list: ``claim`` formatted with ``held`` and
    ``measured`` (counts of findings), then one line per finding, with its criterion unless
    ``criterion`` is False.

    >>> v = verdicts({"a": "x > 0", "b": "y > 0"}, [("a", "", "x = 1", True), ("b", "", "y = -1", False)])
    >>> print(summary(v, "{held} of {measured} findings hold"))
    1 of 2 findings hold:
    <BLANKLINE>
    - *a* holds here (x > 0): x = 1.
    - *b* does **not** hold here (y > 0): y = -1.
    """
    measured = verdict_table["reproduces"].map(_verdict).dropna()
    lines = [_line(r, criterion) for _, r in verdict_table.iterrows()]
    return claim.format(held=int(measured.astype(bool).sum()), measured=len(measured)) + ":\n\n" + "\n".join(lines)


@dataclass(frozen=True)
class Result:
    """A page's result box: ``html`` is a ``<div class="embdiag-result">``, which Jupyter shows."""

    html: str

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return "<Result>"


def _names(rows) -> str:
    return "; ".join(f"<em>{html.escape(r['finding'])}</em>" for _, r in rows.iterrows())


def result(verdict_table: pd.DataFrame, claim: str, *, figure=None) -> Result:
    """The result box that opens a chapter: ``claim`` formatted with ``held`` and ``measured``
    (as in :func:`summary`), the findings that hold by name, those that do not with the numbers
    that decide them (``this run``), a count of those not measured, then ``figure`` (an
    exhibit or anything with ``_repr_html_``), the one decisive figure, if given.

    >>> v = verdicts({"a": "x > 0", "b": "y > 0"}, [("a", "", "x = 1", True), ("b", "", "y = -1", False)])
    >>> print(result(v, "{held} of {measured} findings hold here").html)  # doctest: +NORMALIZE_WHITESPACE
    <div class="embdiag-result"><p><strong>Result.</strong> 1 of 2 findings hold here: <em>a</em>.
    Not holding: <em>b</em> (y = -1).</p></div>
    """
    verdict = verdict_table["reproduces"].map(_verdict)
    held, failed = verdict_table[verdict == True], verdict_table[verdict == False]  # noqa: E712 (None is neither)
    unmeasured = int(verdict.isna().sum())
    text = html.escape(claim.format(held=len(held), measured=len(held) + len(failed)), quote=False)
    text += f": {_names(held)}." if len(held) else "."
    if len(failed):
        text += (
            " Not holding: "
            + "; ".join(
                f"<em>{html.escape(r['finding'])}</em> ({html.escape(str(r['this run']), quote=False)})"
                for _, r in failed.iterrows()
            )
            + "."
        )
    if unmeasured:
        text += f" Not measured in this run: {_names(verdict_table[verdict.isna()])}."
    return box(text, figure=figure)


def box(text: str, *, figure=None) -> Result:
    """A result box of ``text`` (HTML, already escaped), then ``figure`` if given."""
    body = f"<p><strong>Result.</strong> {text}</p>"
    if figure is not None:
        body += figure._repr_html_()
    return Result(f'<div class="embdiag-result">{body}</div>')
