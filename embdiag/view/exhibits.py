"""Exhibits: every table and figure of the book, captioned, downloadable and traceable.

:func:`table` and :func:`figure` wrap a DataFrame (or a pandas Styler) and an Altair chart in
``<figure class="embdiag-exhibit ...">`` with

* a caption (``Table: ...`` / ``Figure: ...``), which says what is shown, from which data;
* for tables, the highest and lowest value of each column that declares them meaningful marked
  with the classes :data:`MAX` / :data:`MIN` (``embdiag/static/embdiag.css`` adds ▲ / ▼, so
  the marks do not rely on colour), and a legend in the caption;
* one provenance line: a CSV download of the data (a ``data:`` link with the CSV
  percent-encoded, so the site stays self-contained, works offline and under any sub-path, and
  the link cannot go stale), the chapter source that made it (told to the kernel by
  :func:`embdiag.paper.pipeline.execute`, with its non-default parameters) and the inputs read
  so far by the process (:func:`embdiag.artifacts.reads`), each with the first 12 hex digits
  of its SHA-256 (listed when the reader opens the line, if there are many).

The result is an :class:`Exhibit`, which Jupyter displays as that HTML. Output is deterministic:
the Styler's ids come from ``name``, the chart's from its spec. In a chapter::

    exhibits.table(counts_table, name="class-counts", caption="Images per class and split ...")
    exhibits.figure(chart, name="class-shares-weather", caption="Share of each weather class ...")
"""

from __future__ import annotations

import copy
import html
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence
from urllib.parse import quote

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler
from pandas.io.formats.style_render import _default_formatter

from .. import artifacts
from .charts import chart_html

__all__ = [
    "Exhibit",
    "table",
    "figure",
    "extreme_marks",
    "readable_number",
    "MISSING",
    "chart_data",
    "csv_link",
    "provenance",
    "MAX",
    "MIN",
    "LEGEND",
    "SOURCES",
    "source_file",
]

#: Environment variables of the kernel executing a chapter: the chapter source's name (``NN_name``)
#: and its non-default parameters as a JSON object (set by :func:`embdiag.paper.pipeline.execute`).
CHAPTER_ENV, PARAMETERS_ENV = "EMBDIAG_CHAPTER", "EMBDIAG_CHAPTER_PARAMETERS"
#: Classes of the highest and lowest cells of a column.
MAX, MIN = "embdiag-max", "embdiag-min"
LEGEND = "▲ highest, ▼ lowest value of each column"
#: Folder of the built site holding the chapter sources (written by :mod:`embdiag.paper.sphinxext`).
SOURCES = "_sources_py"
#: From a chapter page (``chapters/NN_name.html``) to the site's root; the Reproduce chapter's artifact list.
TO_ROOT = ".."
REPRODUCE = "24_reproduce.html#artifacts"  # a chapter page too, beside the others
#: Number of characters of a SHA-256 shown.
SHORT = 12
#: More inputs than this are listed in a collapsed ``<details>``.
INLINE_READS = 3

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_CSV_SAFE = ",;:/()"  # left as they are in the data: link (everything else percent-encoded)


@dataclass(frozen=True)
class Exhibit:
    """A captioned table or figure: ``kind`` (``"table"`` or ``"figure"``), ``name`` and its ``html``."""

    kind: str
    name: str
    html: str

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"<{self.kind.capitalize()}: {self.name}>"


# -- checks ------------------------------------------------------------------------------------
def _check_name(name) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"name: expected letters, digits, '-' and '_' (starting with a letter or digit), "
            f"no spaces or slashes; got {name!r}"
        )
    return name


def _check_caption(caption) -> str:
    if not isinstance(caption, str) or not caption.strip():
        raise ValueError(f"caption: expected a non-empty sentence saying what is shown, got {caption!r}")
    return caption.strip()


# -- extremes ----------------------------------------------------------------------------------
def _numeric(column: pd.Series) -> bool:
    return (
        pd.api.types.is_numeric_dtype(column)
        and not pd.api.types.is_bool_dtype(column)
        and not pd.api.types.is_complex_dtype(column)
    )


def extreme_marks(frame: pd.DataFrame, rows=None) -> np.ndarray:
    """Per cell of ``frame``: :data:`MAX`, :data:`MIN` or ``""`` (an array of its shape).

    In every numeric (not boolean) column, the cells equal to the column's highest value are
    :data:`MAX` and those equal to its lowest :data:`MIN` (ties: all of them), comparing only
    the rows where the boolean array ``rows`` is true (default: all). NaN is ignored; a column
    with fewer than two numbers among those rows, or whose numbers are all equal, is not marked.
    """
    n_rows, n_cols = frame.shape
    keep = np.ones(n_rows, bool) if rows is None else np.asarray(rows, bool)
    out = np.full((n_rows, n_cols), "", dtype=object)
    for j in range(n_cols):
        column = frame.iloc[:, j]
        if not _numeric(column):
            continue
        values = column.to_numpy(dtype=float, na_value=np.nan)
        compared = keep & ~np.isnan(values)
        if compared.sum() < 2:
            continue
        high, low = values[compared].max(), values[compared].min()
        if high == low:
            continue
        out[compared & (values == high), j] = MAX
        out[compared & (values == low), j] = MIN
    return out


_SHOWN_NUMBER = re.compile(r"[-−+]?(?:\d[\d,]*)?\.?\d+(?:[eE][-+]?\d+)?(?: × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?")
_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
#: What a missing value shows in a table.
MISSING = "—"
#: Significant digits of a table's unformatted numbers.
DIGITS = 4


def _shown_value(text: str) -> float:
    """The number a cell's text shows (``1,234.5``, ``-0.25``, ``8.21 × 10⁻⁵``), NaN if none."""
    m = _SHOWN_NUMBER.search(text)
    if not m:
        return np.nan
    mantissa = m.group(0).split(" × ")[0].replace(",", "").replace("−", "-")
    exponent = int(m.group(1).translate(_SUPERSCRIPT)) if m.group(1) else 0
    return float(mantissa) * 10.0**exponent


def readable_number(value) -> str:
    """A number as a table shows it when its column sets no format: integers with thousands
    separators, other floats to :data:`DIGITS` significant digits without e-notation (below
    10⁻⁴ as ``8.214 × 10⁻⁵``), :data:`MISSING` for NaN and None; anything else as ``str``.

    >>> [readable_number(v) for v in (2000, 0.821445, 8.21445e-05, 22.6, 3343.4, 12345.6, float("nan"), "a")]
    ['2,000', '0.8214', '8.214 × 10⁻⁵', '22.6', '3,343', '12,346', '—', 'a']
    """
    if _missing(value):
        return MISSING
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if not np.isfinite(value):
        return "∞" if value > 0 else "-∞"
    if value == round(value) and abs(value) < 1e15:
        return f"{int(round(value)):,}"
    if abs(value) >= 10 ** (DIGITS - 1):  # DIGITS or more digits before the point: whole, with separators
        return f"{value:,.0f}"
    if abs(value) < 1e-4:
        mantissa, exponent = f"{value:.{DIGITS - 1}e}".split("e")
        return f"{mantissa} × 10{str(int(exponent)).translate(str.maketrans('-0123456789', '⁻⁰¹²³⁴⁵⁶⁷⁸⁹'))}"
    return np.format_float_positional(value, precision=DIGITS, unique=False, fractional=False, trim="-")


def _missing(value) -> bool:
    return value is None or (isinstance(value, (float, np.floating)) and np.isnan(value))


def _missing_shown(formatter):
    def shown(value):
        return MISSING if _missing(value) else formatter(value)

    return shown


def _readable(styler: Styler) -> None:
    """Every data cell that shows pandas' default text shown by :func:`readable_number` instead;
    every missing value, whatever its format, shown as :data:`MISSING`."""
    funcs = styler._display_funcs  # the Styler's per-cell formatters
    precision = pd.get_option("styler.format.precision")
    frame = styler.data
    for i, j in np.ndindex(*frame.shape):
        value, shown = frame.iat[i, j], funcs[(i, j)]
        plain = _default_formatter(value, precision)
        funcs[(i, j)] = readable_number if shown(value) == plain else _missing_shown(shown)


def _merge_index_names(table_html: str) -> str:
    """The Styler's HTML with the index's names moved into the header row's empty corner
    cells, so that a named index does not add a header row of its own (single-level columns only)."""
    head = re.search(r"<thead>(.*?)</thead>", table_html, re.S)
    if head is None:
        return table_html
    rows = re.findall(r"<tr>.*?</tr>", head.group(1), re.S)
    if len(rows) != 2:
        return table_html
    names = re.findall(r'<th class="index_name level\d+" >.*?</th>', rows[1])
    corner = re.findall(r'<th class="blank(?: level\d+)?" >&nbsp;</th>', rows[0])
    if (
        not names
        or len(names) != len(corner)
        or re.sub(r'<th class="blank col\d+" >&nbsp;</th>', "", rows[1]).count("<th") != len(names)
    ):
        return table_html
    first = rows[0]
    for blank, name in zip(corner, names):
        first = first.replace(blank, name, 1)
    merged = head.group(0).replace(rows[0], first).replace(rows[1], "")
    return table_html.replace(head.group(0), re.sub(r"\n\s*\n", "\n", merged))


def _as_displayed(styler: Styler) -> pd.DataFrame:
    """The Styler's data with each numeric cell replaced by the number its formatted text shows
    (NaN where the text shows none), so that marks follow what the reader sees: two cells
    printed alike are tied, whatever their last bits."""
    frame = styler.data.copy()
    for j in range(frame.shape[1]):
        column = frame.iloc[:, j]
        if not _numeric(column):
            continue
        shown = [_shown_value(str(styler._display_funcs[(i, j)](value))) for i, value in enumerate(column)]
        frame.isetitem(j, np.asarray(shown, dtype=float))
    return frame


def _rows_mask(frame: pd.DataFrame, extremes_rows) -> np.ndarray:
    """``extremes_rows`` (a boolean mask or a list of index labels) as a boolean array."""
    if extremes_rows is None:
        return np.ones(len(frame), bool)
    values = extremes_rows.to_numpy() if isinstance(extremes_rows, pd.Series) else extremes_rows
    as_array = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if (
        as_array.ndim == 1
        and len(as_array) == len(frame)
        and len(frame)
        and all(isinstance(v, (bool, np.bool_)) for v in as_array)
    ):
        return as_array.astype(bool)
    labels = list(values)
    missing = [label for label in labels if label not in frame.index]
    if missing:
        raise ValueError(
            f"extremes_rows: expected a boolean mask of {len(frame)} rows or index labels of the "
            f"table; no row is labelled {missing[0]!r}"
        )
    return np.asarray(frame.index.isin(labels), bool)


def _add_classes(styler: Styler, marks: np.ndarray) -> None:
    """Add ``marks`` to the cells' classes, keeping classes the Styler already sets."""
    merged = {
        (r, c): f"{styler.cell_context[(r, c)]} {marks[r, c]}" if styler.cell_context.get((r, c)) else marks[r, c]
        for r, c in zip(*np.nonzero(marks != ""))
    }
    frame = styler.data
    if frame.index.is_unique and frame.columns.is_unique:
        classes = pd.DataFrame("", index=frame.index, columns=frame.columns)
        for (r, c), value in merged.items():
            classes.iat[r, c] = value
        styler.set_td_classes(classes)
    else:  # set_td_classes needs unique labels; the same classes by position
        styler.cell_context.update(merged)


# -- CSV -----------------------------------------------------------------------------------------
def _meaningful_index(index: pd.Index) -> bool:
    """Whether an index carries information (a name, or labels other than 0, 1, 2, ...)."""
    if index.nlevels > 1 or any(n is not None for n in index.names):
        return True
    return not (index.dtype.kind in "iu" and np.array_equal(index.to_numpy(), np.arange(len(index))))


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV with one header line: floats to 6 significant digits, the index only
    where it is meaningful, the levels of hierarchical column labels joined by spaces
    (``("variance", "study")`` becomes ``variance study``)."""
    if isinstance(frame.columns, pd.MultiIndex):
        frame = frame.set_axis([" ".join(str(p) for p in c if str(p)) for c in frame.columns], axis=1)
    return frame.to_csv(index=_meaningful_index(frame.index), float_format="%.6g", lineterminator="\n")


def csv_link(frame: pd.DataFrame, filename: str) -> str:
    """An ``<a class="embdiag-csv">`` that downloads :func:`csv_text` of ``frame`` as ``filename``."""
    href = "data:text/csv;charset=utf-8," + quote(csv_text(frame), safe=_CSV_SAFE)
    name = html.escape(filename)
    return f'<a class="embdiag-csv" download="{name}" href="{href}">{name}</a>'


def _downloads(frames: Sequence[pd.DataFrame], name: str) -> str:
    """The CSV links of an exhibit's ``frames`` (``CSV: name.csv``), or ``""`` for none."""
    if not frames:
        return ""
    names = [f"{name}.csv"] if len(frames) == 1 else [f"{name}-{i}.csv" for i in range(1, len(frames) + 1)]
    return "CSV: " + ", ".join(csv_link(f, n) for f, n in zip(frames, names))


# -- chart data ----------------------------------------------------------------------------------
def _frame_of(values) -> pd.DataFrame | None:
    if not isinstance(values, list) or not values:
        return None
    frame = (
        pd.DataFrame.from_records(values)
        if all(isinstance(v, dict) for v in values)
        else pd.DataFrame({"data": values})
    )
    images = [
        c
        for c in frame.columns
        if frame[c].notna().any() and all(isinstance(v, str) and v.startswith("data:image/") for v in frame[c].dropna())
    ]
    frame = frame.drop(columns=images)
    return frame if frame.shape[1] else None


def chart_data(spec) -> list[pd.DataFrame]:
    """The data of a Vega-Lite ``spec`` (an Altair chart or its ``to_dict()``), one frame per
    dataset in the order first used: inline ``data.values`` and named top-level ``datasets``,
    in layers and concatenations too. Columns holding only images (``data:image/...`` URLs) are
    dropped; datasets without columns (e.g. Altair's ``empty``) are skipped."""
    if not isinstance(spec, dict):
        spec = spec.to_dict()
    datasets = spec.get("datasets", {}) or {}
    order: list = []  # dataset names, and inline values as JSON text, in order of first use

    def walk(node) -> None:
        if isinstance(node, dict):
            data = node.get("data")
            if isinstance(data, dict):
                if "values" in data:
                    key = ("values", json.dumps(data["values"], sort_keys=True))
                elif data.get("name") in datasets:
                    key = ("name", data["name"])
                else:
                    key = None
                if key is not None and key not in order:
                    order.append(key)
            for k in sorted(node):
                if k not in ("data", "datasets"):
                    walk(node[k])
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(spec)
    order += [("name", n) for n in sorted(datasets) if ("name", n) not in order]
    frames = [_frame_of(json.loads(v) if kind == "values" else datasets[v]) for kind, v in order]
    return [f for f in frames if f is not None]


# -- provenance ----------------------------------------------------------------------------------
def source_file(chapter: str) -> str:
    """File name, inside :data:`SOURCES` of the built site, of chapter source ``NN_name``: a
    ``.txt`` copy, so that every web server shows it as text instead of offering a download."""
    return f"{chapter}.py.txt"


def _chapter() -> tuple[str | None, dict]:
    chapter = os.environ.get(CHAPTER_ENV) or None
    try:
        changed = json.loads(os.environ.get(PARAMETERS_ENV) or "{}")
    except json.JSONDecodeError:
        changed = {}
    return chapter, changed if isinstance(changed, dict) else {}


def _value(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _read_html(read: artifacts.Read) -> str:
    return (
        f'<code>{html.escape(read.path)}</code> <span class="embdiag-sha" title="SHA-256, first {SHORT} '
        f'hex digits">{html.escape(read.sha256[:SHORT])}</span>'
    )


def _as_reads(reads) -> list[artifacts.Read]:
    if reads is None:
        return artifacts.reads()
    if isinstance(reads, (str, Path)):
        raise ValueError(f"reads: expected a list of paths, got the single path {reads!r}")
    out = []
    for item in reads:
        if isinstance(item, artifacts.Read):
            out.append(item)
            continue
        try:
            out.append(artifacts.describe(item))
        except ValueError as e:
            raise ValueError(f"reads: {e}") from None
    return list(dict.fromkeys(out))


def provenance(reads=None, made: str | None = None, downloads: str = "") -> str:
    """The provenance line: ``downloads`` (the exhibit's CSV links, if any), then ``Made by
    notebooks/NN_name.py`` (linked to its copy in the site, with the non-default parameters)
    ``from`` the inputs ``reads`` (default: everything this process has read,
    :func:`embdiag.artifacts.reads`; else a list of paths or :class:`~embdiag.artifacts.Read`),
    each with its short checksum, in one line. More than :data:`INLINE_READS` inputs are counted
    on that line and listed with their checksums when the reader opens it. Outside the chapter
    pipeline the chapter is unknown and said to be so. The chapter clause is the
    ``embdiag-made`` span (nbval, re-running a chapter outside the pipeline, masks it).

    ``made``: HTML that replaces the chapter clause, for a page outside the book (e.g. a report
    of a user's files); the link to the book's page on its inputs is then left out.
    """
    about = f' (<a class="embdiag-artifacts" href="{REPRODUCE}">what these are</a>)'
    if made is not None:
        about = ""
    else:
        chapter, changed = _chapter()
        if chapter:
            href = f"{TO_ROOT}/{SOURCES}/{quote(source_file(chapter))}"
            made = f'Made by <a class="embdiag-source" href="{href}">notebooks/{html.escape(chapter)}.py</a>'
            if changed:
                made += " with " + ", ".join(
                    f"<code>{html.escape(f'{k}={_value(v)}')}</code>" for k, v in sorted(changed.items())
                )
        else:
            made = "Made outside the book's chapter pipeline (chapter not known)"
    made = (downloads + " · " if downloads else "") + f'<span class="embdiag-made">{made}</span>'
    items = [_read_html(r) for r in _as_reads(reads)]
    if not items:
        return f'<div class="embdiag-provenance"><p>{made}, reading no recorded input.</p></div>'
    if len(items) <= INLINE_READS:
        return f'<div class="embdiag-provenance"><p>{made} from {", ".join(items)}{about}.</p></div>'
    listing = "".join(f"<li>{item}</li>" for item in items)
    return (
        f'<div class="embdiag-provenance"><details><summary>{made} from {len(items)} inputs{about}</summary>'
        f"<ul>{listing}</ul></details></div>"
    )


# -- exhibits ------------------------------------------------------------------------------------
def _caption(label: str, caption: str, legend: str = "") -> str:
    extra = f' <span class="embdiag-legend">{html.escape(legend, quote=False)}</span>' if legend else ""
    return (
        f'<figcaption><span class="embdiag-label">{label}:</span> {html.escape(caption, quote=False)}{extra}'
        "</figcaption>"
    )


def _shown(styler: Styler) -> pd.DataFrame:
    """The part of the Styler's data that it shows (hidden rows and columns dropped; a hidden
    index becomes a default one, so the CSV leaves it out)."""
    frame = styler.data
    rows = np.setdiff1d(np.arange(len(frame)), list(styler.hidden_rows))
    cols = np.setdiff1d(np.arange(frame.shape[1]), list(styler.hidden_columns))
    shown = frame.iloc[rows, cols]
    if all(styler.hide_index_):
        shown = shown.reset_index(drop=True)
    return shown


def _columns_mask(frame: pd.DataFrame, extremes) -> np.ndarray:
    """``extremes`` (True: every column; a list: the columns of these labels) as a boolean array."""
    if extremes is True:
        return np.ones(frame.shape[1], bool)
    labels = [extremes] if isinstance(extremes, (str, tuple)) else list(extremes)
    missing = [label for label in labels if label not in frame.columns]
    if missing:
        raise ValueError(
            f"extremes: expected True, False or column labels of the table; no column is labelled "
            f"{missing[0]!r} (columns: {list(frame.columns)})"
        )
    return np.asarray(frame.columns.isin(labels), bool)


def table(
    data,
    *,
    name: str,
    caption: str,
    extremes=False,
    extremes_rows=None,
    reads=None,
    made: str | None = None,
    collapsed: str | None = None,
) -> Exhibit:
    """A captioned table with its extremes marked, a CSV download and its provenance.

    Args:
        data: a DataFrame, or a pandas Styler (its formats, hidden rows/columns and styles are
            kept; the caller's Styler is not changed).
        name: the exhibit's id on its page (``table-<name>``) and CSV file name: letters, digits,
            ``-`` and ``_``.
        caption: what the table shows, from which data, with which uncertainty.
        extremes: the columns where highest or lowest means something (a list of column labels;
            not counts of classes, floors, sizes or ranks), whose highest and lowest values are
            marked (:func:`extreme_marks` of the values as displayed: cells printed alike are
            marked alike); True marks every numeric column; False (the default) marks nothing.
        extremes_rows: compare only these rows (a boolean mask or a list of index labels), e.g.
            this run's rows of a table that interleaves them with the published study's.
        reads: the inputs named in the provenance line (default: everything read so far).
        made: replaces the provenance line's chapter clause (see :func:`provenance`).
        collapsed: if given, the table, caption and all, is shown collapsed under this line
            (a ``<details class="embdiag-more">``): detail a reader opens on demand.

    Raises:
        ValueError: naming ``name``, ``caption``, ``data``, ``extremes``, ``extremes_rows``,
            ``reads`` or ``collapsed``.
    """
    name, caption = _check_name(name), _check_caption(caption)
    if collapsed is not None and (not isinstance(collapsed, str) or not collapsed.strip()):
        raise ValueError(f"collapsed: expected the line a reader clicks to open the table, got {collapsed!r}")
    if isinstance(data, Styler):
        styler = copy.deepcopy(data)
    elif isinstance(data, pd.DataFrame):
        styler = data.style
    else:
        raise ValueError(f"data: expected a pandas DataFrame or Styler, got {type(data).__name__}")
    frame = styler.data
    _readable(styler)
    legend = ""
    if extremes:
        rows = _rows_mask(frame, extremes_rows)
        rows[list(styler.hidden_rows)] = False
        marks = extreme_marks(_as_displayed(styler), rows)
        marks[:, ~_columns_mask(frame, extremes)] = ""
        marks[:, list(styler.hidden_columns)] = ""
        if (marks != "").any():
            _add_classes(styler, marks)
            legend = LEGEND if extremes_rows is None else f"{LEGEND} (among the {int(rows.sum())} rows compared)"
    styler.set_uuid(name)
    body = (
        f'<figure class="embdiag-exhibit embdiag-table" id="table-{name}">\n'
        f'<div class="embdiag-scroll">\n{_merge_index_names(styler.to_html())}</div>\n'
        f"{_caption('Table', caption, legend)}\n"
        f"{provenance(reads, made, _downloads([_shown(styler)], name))}\n</figure>"
    )
    if collapsed is not None:
        body = (
            f'<details class="embdiag-more"><summary>{html.escape(collapsed.strip(), quote=False)}</summary>\n'
            f"{body}\n</details>"
        )
    return Exhibit("table", name, body)


def _data_frames(data) -> list[pd.DataFrame]:
    if isinstance(data, pd.DataFrame):
        return [data]
    if isinstance(data, (list, tuple)) and data and all(isinstance(d, pd.DataFrame) for d in data):
        return list(data)
    raise ValueError(f"data: expected a DataFrame or a list of DataFrames, got {type(data).__name__}")


def figure(chart, *, name: str, caption: str, data=None, reads=None, made: str | None = None) -> Exhibit:
    """A captioned Altair chart with a CSV download of its data and its provenance.

    Args:
        chart: an Altair chart (or its Vega-Lite dict), drawn by :func:`embdiag.view.charts.chart_html`.
        name: the exhibit's id on its page (``figure-<name>``) and CSV file name(s).
        caption: what is plotted, from which data, with which uncertainty.
        data: the data offered for download (a DataFrame or a list of them); default the chart's
            own datasets (:func:`chart_data`), one link each (``<name>-1.csv``, ... when several).
        reads: the inputs named in the provenance line (default: everything read so far).
        made: replaces the provenance line's chapter clause (see :func:`provenance`).

    Raises:
        ValueError: naming ``name``, ``caption``, ``chart``, ``data`` or ``reads``.
    """
    name, caption = _check_name(name), _check_caption(caption)
    if isinstance(chart, dict):
        spec = chart
    elif hasattr(chart, "to_dict"):
        spec = chart.to_dict()
    else:
        raise ValueError(f"chart: expected an Altair chart or a Vega-Lite dict, got {type(chart).__name__}")
    frames = chart_data(spec) if data is None else _data_frames(data)
    body = (
        f'<figure class="embdiag-exhibit embdiag-figure" id="figure-{name}">\n'
        f'<div class="embdiag-scroll">\n{chart_html(spec)}\n</div>\n'
        f"{_caption('Figure', caption)}\n{provenance(reads, made, _downloads(frames, name))}\n</figure>"
    )
    return Exhibit("figure", name, body)
