"""``embdiag report``: the four properties of the study measured on a user's own vectors.

:mod:`embdiag.data.files` reads the user's files (vectors, labels, retrieval pairs) and raises
:class:`~embdiag.data.files.InputError` naming the file and the problem; ``conditions``
builds the conditions compared with the reference (``--compare``, ``--compress``,
``--index``: a class per kind, parsed by :func:`parse_conditions`); ``options`` declares every
option of the command once (:class:`ReportOptions`); ``measurement``
computes every number of a report as a :class:`Report` (:func:`measure`), each section measured
and shown by its own module of ``sections``; ``fail_if``
checks thresholds on it, ``page`` writes the report as one offline page from the sections
(``html``: display objects and executed notebooks as HTML) and ``cli`` is the ``embdiag report``
command, which measures in its own process. Imports
``metrics``, ``data``, ``interventions``, ``training``, ``encoders``, ``view`` and the shared
helpers; the book (``embdiag.paper``) imports it.
"""

from ..data.files import InputError, check_support, read_labels, read_pairs, read_vectors
from .conditions import (
    ApproximateIndex,
    CompareFile,
    Compression,
    ReportCondition,
    Storage,
    file_condition,
    parse_compress,
    parse_conditions,
    parse_index,
)
from .measurement import Report, measure
from .options import ReportOptions

__all__ = [
    "ApproximateIndex",
    "CompareFile",
    "Compression",
    "InputError",
    "Report",
    "ReportCondition",
    "ReportOptions",
    "Storage",
    "check_support",
    "file_condition",
    "measure",
    "parse_compress",
    "parse_conditions",
    "parse_index",
    "read_labels",
    "read_pairs",
    "read_vectors",
]
