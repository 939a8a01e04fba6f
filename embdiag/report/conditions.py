"""The second representations a report compares with the reference VECTORS.

A :class:`ReportCondition` is one of four kinds, each a class:

- :class:`CompareFile` (``"file"``): the ``--compare`` vectors (the same n items, another
  model or pipeline; d may differ);
- :class:`Storage` (``"storage"``): the vectors stored as float16, int8 (per-row scale), float8
  e4m3, int8 or int4 on per-dimension calibration ranges, or sign bits, and reconstructed
  (:func:`embdiag.interventions.precision.store`); sign bits are searched by Hamming distance,
  optionally rescoring the best candidates with the float query
  (:func:`embdiag.interventions.codes.sign_topk`); or, as :class:`DeployedCodes`, codes made and
  scored as sentence-transformers/usearch or mteb make and score them
  (:mod:`embdiag.interventions.conventions`);
- :class:`Compression` (``"compression"``): PCA, centred (``pca<DIM>``) or uncentred
  (``upca<DIM>``), fitted by :class:`~embdiag.interventions.compression.PCACompression`, or a
  Matryoshka prefix (``prefix<DIM>``; :class:`~embdiag.interventions.compression.MatryoshkaPrefix`
  renormalizes these same coordinates);
- :class:`ApproximateIndex` (``"index"``): an approximate FAISS index over the unit float32
  reference rows (no vectors of its own; its search is compared with exact search).

:func:`parse_conditions` is the one parser of ``--compare``, ``--compress`` and ``--index``: the
command checks its options with it before anything is measured, and
:func:`~embdiag.report.measure` builds the report's conditions with it.

Exact search is always :func:`embdiag.metrics.retrieval.topk` in float32 (cosine: rows are
compared after normalisation). Conditions with vectors return their raw rows (not renormalized:
a compression's projection, whose geometry a report measures beside that of its unit rows), one
float32 copy of the rows they are given, transformed in chunks of
:data:`CHUNK_ROWS` rows (a memory-map's pages are released chunk by chunk:
:mod:`embdiag._mapped`); a ``"file"`` condition asked for all its rows returns its array
itself (a memory-map stays one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from .._mapped import release_rows, take_rows
from .._validate import check_int
from ..data.files import InputError, read_vectors
from ..interventions.ann import (
    FAISS_ROWS_PER_CENTROID,
    MIN_NBITS,
    AnnIndex,
    deterministic_graph,
    factory_name,
    file_name,
    hnsw_params,
    ivfpq_params,
)
from ..interventions.codes import calibration_ranges, sign_topk
from ..interventions.conventions import MTEB_BATCH, MTEB_FORMATS, mteb_quantize, st_dequantize, st_quantize, st_topk
from ..interventions.precision import CALIBRATED, StorageCondition, bytes_per_vector, compare_conditions, store
from ..interventions.truncation import compare_truncation
from ..metrics.retrieval import topk

if TYPE_CHECKING:
    from ..interventions.compression import MatryoshkaPrefix, PCACompression

__all__ = [
    "CHUNK_ROWS",
    "COMPRESSION_METHODS",
    "FIT_ROWS",
    "ApproximateIndex",
    "CompareFile",
    "Compression",
    "DeployedCodes",
    "ReportCondition",
    "STORAGE_CONVENTIONS",
    "Storage",
    "file_condition",
    "index_files",
    "with_index_files",
    "parse_compress",
    "parse_conditions",
    "parse_index",
    "unit_rows_f32",
]

#: Rows transformed (or added to an index) at a time.
CHUNK_ROWS = 65536
#: Default largest number of rows PCA is fitted on (a seeded sample when there are more).
FIT_ROWS = 20000

_STORAGE = {
    "fp16": "float16",
    "float16": "float16",
    "int8": "int8",
    "fp8": "fp8",
    "int8cal": "int8cal",
    "int4": "int4",
    "binary": "binary",
}
#: Candidates per result that ``binary-rescore`` rescores by default (``binary-rescore<M>`` for M).
RESCORE = 4
_COMPRESS_FORMS = (
    "fp16 (or float16), int8, fp8, int8cal, int4, binary, binary-rescore[<M>], pca<DIM> (centred PCA), "
    "upca<DIM> (uncentred PCA), prefix<DIM> (DIM an integer below d), st-int8[-rescore[<M>]], "
    "st-uint8[-rescore[<M>]] (sentence-transformers codes scored as usearch / FAISS score them), int8floor, "
    "mteb-int8[-b<B>], mteb-int4[-b<B>], mteb-binary, mteb-fp8 (mteb's codes, B rows calibrated at a time)"
)
#: Compression methods of ``--compress``: spec prefix -> what its description calls it.
COMPRESSION_METHODS = {
    "pca": "Centred PCA",
    "upca": "Uncentred PCA (no mean subtracted)",
    "prefix": "Matryoshka prefix",
}
_INDEX_FORMS = "hnsw, ivfpq, faiss:<index_factory string>, file:<FAISS index file> (separate items by ';')"


def _chunks(n: int):
    for a in range(0, n, CHUNK_ROWS):
        yield a, min(n, a + CHUNK_ROWS)


def _map_rows(X, fn, d_out: int) -> np.ndarray:
    """``fn`` applied to row chunks of ``X``, written into one float32 array."""
    out = np.empty((len(X), d_out), dtype=np.float32)
    for a, b in _chunks(len(X)):
        out[a:b] = fn(np.asarray(X[a:b]))
        release_rows(X, a, b)
    return out


def unit_rows_f32(X) -> np.ndarray:
    """Unit rows of ``X`` as one float32 copy (norms taken in float64, chunk by chunk).

    Example:
        >>> unit_rows_f32(np.array([[3.0, 4.0], [0.0, -2.0]]))
        array([[ 0.6,  0.8],
               [ 0. , -1. ]], dtype=float32)
    """

    def unit(chunk):
        c = chunk.astype(np.float64)
        return c / np.linalg.norm(c, axis=1)[:, None]

    return _map_rows(X, unit, np.shape(X)[1])


def _sample_rows(n: int, m: int, seed: int, stream: int) -> np.ndarray:
    """Sorted seeded sample of ``min(n, m)`` of ``range(n)`` (all rows when ``n <= m``)."""
    if n <= m:
        return np.arange(n)
    return np.sort(np.random.default_rng([seed, stream]).choice(n, m, replace=False))


def _calibration(X, fit, fit_rows: int, seed: int) -> np.ndarray:
    """Per-dimension calibration ranges of ``fit``, by default of a seeded sample of at most
    ``fit_rows`` rows of ``X`` (``seed``, stream 11)."""
    if fit is None:
        fit = np.asarray(X[_sample_rows(len(X), fit_rows, seed, 11)])
    return calibration_ranges(fit)


@dataclass(frozen=True)
class ReportCondition:
    """What a report compares with the reference rows: a second representation, or a second search.

    ``name``: ``"int8"``, ``"fp16"``, ``"pca256"``, ``"prefix256"``, ``"hnsw"``, ``"ivfpq"`` or
    the ``--compare`` file's stem; ``description``: one sentence stating every parameter;
    ``kind`` (per class): ``"file"``, ``"storage"``, ``"compression"`` or ``"index"``;
    ``convention``: a short phrase naming the stack whose codes and scores the condition
    reproduces (``"embdiag (decoded to bin centres)"``, ``"sentence-transformers/usearch"``, ``"mteb"``);
    ``has_vectors``: whether the condition is a representation (all kinds but ``"index"``).
    Build conditions with :func:`parse_conditions` (or :func:`parse_compress`,
    :func:`parse_index` and :func:`file_condition`).
    """

    kind: ClassVar[str]
    has_vectors: ClassVar[bool] = True
    convention: ClassVar[str] = ""

    name: str
    description: str

    def vectors(self, X, fit=None, rows=None) -> np.ndarray | None:
        """The condition's representation of the rows ``X`` as one float32 array (None for an index).

        ``fit``: the rows a PCA is fitted on (other kinds ignore it). ``rows``: for a
        :class:`CompareFile`, the indices of ``X``'s rows in VECTORS (other kinds ignore it).
        """
        raise NotImplementedError

    #: Whether :meth:`vectors` needs the rows it is fitted on (``fit``): PCA, calibration ranges.
    fitted: ClassVar[bool] = False
    #: Whether the condition is searched by exact float32 cosine search of its vectors (False: by
    #: its own :meth:`search`, as an index or sign bits are).
    cosine_search: ClassVar[bool] = True

    def cannot_store(self, X) -> str | None:
        """Why the condition cannot hold the rows ``X`` at all (a sentence), or None (the default)."""
        return None

    def bytes_per_vector(self, d: int) -> float | None:
        """Bytes one vector of the ``d``-dimensional reference takes in this representation
        (None where unknown: an index not yet built)."""
        raise NotImplementedError

    #: Whether :meth:`certify` proves anything for the condition (known before measuring).
    certified: ClassVar[bool] = False

    def certify(self, queries, gallery, k: int, fit=None, reference=None):
        """Which ``queries`` provably keep their exact top ``k`` in ``gallery`` under the condition:
        a result with ``coverage`` and ``violations``, or None where no bound applies (the default).
        ``fit``: the rows a fitted condition is fitted on; ``reference``: the float64 ranking
        ``topk(queries, gallery, k + 1)`` when already computed (shared by the conditions)."""
        return None

    def search(self, queries, gallery, k: int, fit=None) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, indices)`` of each query's top ``k`` gallery rows, sorted like ``topk``:
        exact float32 search of the condition's representations of ``queries`` and ``gallery``
        (each made by :meth:`vectors`, fitted on ``fit``)."""
        return topk(self.vectors(queries, fit), self.vectors(gallery, fit), k)


@dataclass(frozen=True)
class CompareFile(ReportCondition):
    """The ``--compare`` representation: ``array`` (n x d'), row i of which is item i of VECTORS.

    Example:
        >>> other = file_condition(np.arange(6.0).reshape(3, 2), "other")
        >>> other.kind, other.vectors(np.zeros((1, 4)), rows=[2])
        ('file', array([[4., 5.]], dtype=float32))
    """

    kind: ClassVar[str] = "file"
    convention: ClassVar[str] = "as given (--compare)"

    array: np.ndarray = field(compare=False, repr=False)

    def vectors(self, X, fit=None, rows=None) -> np.ndarray:
        """Rows ``rows`` of the file (default: all rows, then ``X`` must have the file's row count);
        asked for all its rows in order, a float32 or float64 file returns its own array
        (memory-mapped if it was read so) instead of a copy."""
        A = self.array
        if rows is None:
            if len(X) != len(A):
                raise ValueError(f"X: has {len(X)} rows, the {self.name} file has {len(A)}; pass rows=")
            rows = np.arange(len(A))
        rows = np.asarray(rows)
        if len(rows) == len(A) and A.dtype in (np.float32, np.float64) and (rows == np.arange(len(A))).all():
            return A
        out = np.empty((len(rows), A.shape[1]), dtype=np.float32)
        for a, b in _chunks(len(rows)):
            out[a:b] = take_rows(A, rows[a:b])
        return out

    def bytes_per_vector(self, d: int) -> float:
        """The file's bytes per row: its width times its item size."""
        return float(self.array.shape[1] * self.array.dtype.itemsize)


_STORAGE_HOW = {
    "float16": "IEEE float16 (round to nearest)",
    "int8": "int8 codes with a symmetric per-row float32 scale max|x|/127 (round to nearest)",
    "fp8": "float8 e4m3 codes with a per-row float32 scale max|x|/448 (round to nearest, ties to even)",
    "int8cal": "int8 codes on per-dimension calibration ranges, 255 equal steps from each dimension's minimum "
    "to its maximum (round to nearest, clipped)",
    "int4": "int4 codes on per-dimension calibration ranges, 15 equal steps from each dimension's minimum "
    "to its maximum (round to nearest, clipped), two codes to a byte",
}


#: The stack whose codes and scores each storage format reproduces.
STORAGE_CONVENTIONS = {
    "float16": "IEEE float16 (numpy astype, PyTorch half, mteb float16)",
    "int8": "embdiag (per-row scale, decoded)",
    "fp8": "embdiag (per-row scale, decoded)",
    "int8cal": "embdiag (decoded to bin centres)",
    "int4": "embdiag (decoded to bin centres)",
    "binary": "Hamming (FAISS IndexBinaryFlat, usearch b1)",
    "binary-rescore": "embdiag (Hamming candidates rescored on +-1 vectors)",
}


@dataclass(frozen=True)
class Storage(ReportCondition):
    """The rows stored in ``format`` (``"float16"``, ``"int8"``, ``"fp8"``, ``"int8cal"``,
    ``"int4"`` or ``"binary"``; :func:`~embdiag.interventions.precision.store`) and reconstructed
    to float32. The calibrated formats take their per-dimension ranges from ``fit`` rows, by
    default from a seeded sample of at most ``fit_rows`` of the rows stored (``seed``, stream
    11). ``binary`` keeps the sign bits and is searched by Hamming distance, or with ``rescore``
    = M by rescoring the M k nearest with the float query (:func:`~embdiag.interventions.codes.sign_topk`).

    Example:
        >>> int8 = Storage.of("int8")  # scale max|x| / 127 = 2
        >>> int8.name, int8.vectors(np.array([[254.0, -63.4]])), int8.bytes_per_vector(768)
        ('int8', array([[254., -64.]], dtype=float32), 772.0)
    """

    kind: ClassVar[str] = "storage"

    format: str
    rescore: int = 0
    fit_rows: int = FIT_ROWS
    seed: int = 0

    @classmethod
    def of(cls, fmt: str, rescore: int = 0, fit_rows: int = FIT_ROWS, seed: int = 0) -> Storage:
        """The condition of storage format ``fmt`` (``rescore``: binary's rescored candidates per
        result, 0 for none) with its description."""
        if fmt == "binary":
            name = f"binary-rescore{rescore}" if rescore else "binary"
            search = (
                f"the {rescore} k nearest by Hamming distance rescored by the cosine of the float query and "
                "each candidate's +-1 vector (no float gallery kept)"
                if rescore
                else "searched by Hamming distance (ties by lower index)"
            )
            return cls(name, f"Vectors stored as sign bits (x > 0), eight to a byte; {search}.", fmt, rescore)
        desc = f"Vectors stored as {_STORAGE_HOW[fmt]} and reconstructed; exact cosine search in float32."
        if fmt in CALIBRATED:
            desc = desc[:-1] + (
                f"; ranges from a seeded sample of at most {fit_rows:,} rows (seed {seed}), one shared table of "
                "2 x d float64 not counted per vector."
            )
        return cls("fp16" if fmt == "float16" else fmt, desc, fmt, 0, fit_rows, seed)

    @property
    def fitted(self) -> bool:
        return self.format in CALIBRATED

    @property
    def cosine_search(self) -> bool:
        return self.format != "binary"

    @property
    def certified(self) -> bool:
        return self.cosine_search  # sign bits are searched by Hamming distance: no float bound

    def certify(self, queries, gallery, k: int, fit=None, reference=None):
        """The float certificate of both sides stored (:func:`~embdiag.interventions.precision.compare_conditions`;
        a calibrated format on the ranges of ``fit``); None for sign bits."""
        if not self.certified:
            return None
        condition = StorageCondition(
            self.name, gallery=self.format, queries=self.format, ranges=self.ranges(gallery, fit)
        )
        return compare_conditions(queries, [condition], gallery=gallery, k=k, reference=reference, score_errors=False)[
            0
        ]

    def ranges(self, X, fit=None) -> np.ndarray | None:
        """A calibrated format's per-dimension ranges (of ``fit``, by default of a seeded sample
        of ``X``); None for the other formats."""
        return _calibration(X, fit, self.fit_rows, self.seed) if self.fitted else None

    def vectors(self, X, fit=None, rows=None) -> np.ndarray:
        """:func:`~embdiag.interventions.precision.store` of ``X``, reconstructed (binary: ``+-1``)."""
        R = self.ranges(X, fit)
        return _map_rows(X, lambda c: store(c, self.format, R).reconstruct(), np.shape(X)[1])

    @property
    def convention(self) -> str:
        """The stack whose codes and scores the format reproduces (:data:`STORAGE_CONVENTIONS`)."""
        return STORAGE_CONVENTIONS["binary-rescore" if self.rescore else self.format]

    def search(self, queries, gallery, k: int, fit=None) -> tuple[np.ndarray, np.ndarray]:
        """Binary: :func:`~embdiag.interventions.codes.sign_topk` of the rows (rescored with
        :attr:`rescore`); the other formats: exact float32 cosine search of their reconstructions
        (a calibrated format on the ranges of ``fit``)."""
        if self.format != "binary":
            return super().search(queries, gallery, k, fit)
        return sign_topk(np.asarray(queries), np.asarray(gallery), k, rescore=self.rescore)

    def cannot_store(self, X) -> str | None:
        """Why the format cannot store the rows ``X`` (a sentence with the count), or None:
        float16 has no value beyond 65504, and int8's and fp8's float32 scale none beyond 127 and
        448 times float32's largest (the calibrated formats and sign bits store any finite rows)."""
        limit, what = {
            "float16": (float(np.finfo(np.float16).max), "float16's largest, 65,504"),
            "int8": (127 * float(np.finfo(np.float32).max), "127 times float32's largest"),
            "fp8": (448 * float(np.finfo(np.float32).max), "448 times float32's largest"),
        }.get(self.format, (None, ""))
        if limit is None or (self.format != "float16" and getattr(X, "dtype", None) != np.float64):
            return None  # float32 rows always fit int8's and fp8's float32 scale
        over = sum(int((np.abs(np.asarray(X[a:b])) > limit).sum()) for a, b in _chunks(len(X)))
        return f"{over:,} values lie beyond {what}" if over else None

    def bytes_per_vector(self, d: int) -> float:
        """:func:`~embdiag.interventions.precision.bytes_per_vector` of the format."""
        return float(bytes_per_vector(self.format, d))


#: Candidates per result the ``st-*-rescore`` conditions rescore by default (sentence-transformers'
#: ``rescore_multiplier`` default).
ST_RESCORE = 2
_ST_CODES = (
    "per-dimension ranges from a seeded sample of at most {fit_rows:,} rows (seed {seed}) cast to float32, "
    "255 steps (max - min) / 255, code floor((x - min) / step) clipped to [0, 255]{less}"
)
_MTEB_CODES = (
    "each run of {batch:,} consecutive rows coded calibrated on its own per-dimension minimum and maximum "
    "(mteb encodes a corpus in runs of 50,000 rows, the queries in one call), code floor((x - min) / step) "
    "- {half} with step (max - min) / {top} in float32, not clipped"
)


@dataclass(frozen=True)
class DeployedCodes(ReportCondition):
    """Codes made and scored as a deployed stack does (:mod:`embdiag.interventions.conventions`):
    :meth:`vectors` returns the codes themselves as float32 (or, for ``int8floor``, their decoding),
    so the report's search and geometry see what the stack scores.

    ``scheme``: ``"st-int8"`` / ``"st-uint8"`` (sentence-transformers' ``quantize_embeddings``
    codes on calibration ranges, searched by the inner product of the raw codes as
    ``semantic_search_usearch`` / ``semantic_search_faiss`` do, ``rescore`` = M re-ranking the
    M k best with the float query), ``"int8floor"`` (the same int8 codes decoded at each bin's
    floor, cosine), ``"mteb-int8"``, ``"mteb-int4"`` (mteb's codes, each run of ``batch`` rows
    calibrated on itself), ``"mteb-binary"`` (0/1 vectors), ``"mteb-fp8"`` (float8 e4m3, no
    scale), each scored by cosine as mteb scores them. The sentence-transformers schemes take
    their ranges from ``fit`` rows, by default from a seeded sample of at most ``fit_rows`` of
    the rows coded (``seed``, stream 11).

    Example:
        >>> c = DeployedCodes.of("mteb-binary")
        >>> c.convention, c.vectors(np.array([[0.5, -1.0, 0.0]]))
        ('mteb', array([[1., 0., 0.]], dtype=float32))
    """

    kind: ClassVar[str] = "storage"

    scheme: str
    rescore: int = 0
    batch: int = MTEB_BATCH
    fit_rows: int = FIT_ROWS
    seed: int = 0

    @classmethod
    def of(
        cls, scheme: str, rescore: int = 0, batch: int = MTEB_BATCH, fit_rows: int = FIT_ROWS, seed: int = 0
    ) -> DeployedCodes:
        """The condition of ``scheme`` with its name and description."""
        if scheme.startswith("st-"):
            precision = scheme[3:]
            less = ", less 128 (int8)" if precision == "int8" else " (uint8)"
            codes = _ST_CODES.format(fit_rows=fit_rows, seed=seed, less=less)
            how = (
                'semantic_search_usearch scores them (a usearch Index(metric="ip", dtype="i8"), exact=True)'
                if precision == "int8"
                else "semantic_search_faiss scores them (a FAISS IndexFlatIP over the codes, exact=True)"
            )
            decode = "min + (code + 128) step" if precision == "int8" else "min + code step"
            rescored = (
                f"; the {rescore} k best by code rescored by the float query's dot product with each candidate "
                f"decoded at its bin floor {decode} (rescore=True, rescore_multiplier={rescore})"
                if rescore
                else ""
            )
            name = f"{scheme}-rescore{rescore}" if rescore else scheme
            desc = (
                f"{precision} codes as sentence-transformers quantize_embeddings(precision={precision!r}) makes them: "
                f"{codes}; searched by the inner product of the raw codes as {how}{rescored}; ties by lower index; "
                "one shared table of 2 x d float32 not counted per vector."
            )
            return cls(name, desc, scheme, rescore, batch, fit_rows, seed)
        if scheme == "int8floor":
            desc = (
                "int8 codes as sentence-transformers quantize_embeddings(precision='int8') makes them: "
                f"{_ST_CODES.format(fit_rows=fit_rows, seed=seed, less=', less 128')}; decoded at each bin's floor "
                "min + (code + 128) step in float64, as its rescoring decodes them; exact cosine search in float32."
            )
            return cls(scheme, desc, scheme, 0, batch, fit_rows, seed)
        fmt = scheme[5:]
        if fmt in ("int8", "int4"):
            bits = MTEB_FORMATS[fmt]
            codes = _MTEB_CODES.format(batch=batch, half=2 ** (bits - 1), top=2**bits - 1)
            what = f"{fmt} codes as mteb's CompressionWrapper makes them: {codes}"
            name = scheme if batch == MTEB_BATCH else f"{scheme}-b{batch}"
        elif fmt == "binary":
            what = (
                "0/1 vectors (x > 0) as mteb's CompressionWrapper makes them, scored by cosine (not Hamming distance)"
            )
            name = scheme
        else:
            what = (
                "each value cast to float8 e4m3fn with no per-row scale (round to nearest, ties to even, saturating "
                "at 448) as mteb's CompressionWrapper casts it"
            )
            name = scheme
        desc = (
            f"{what}; the codes scored by cosine, as mteb scores a model whose similarity is cosine; exact cosine "
            "search in float32."
        )
        return cls(name, desc, scheme, 0, batch, fit_rows, seed)

    @property
    def convention(self) -> str:
        """The stack whose codes and scores the condition reproduces."""
        if self.scheme == "int8floor":
            return "sentence-transformers codes decoded at the bin floor"
        if self.scheme == "st-uint8":
            return "sentence-transformers/FAISS"
        return "sentence-transformers/usearch" if self.scheme == "st-int8" else "mteb"

    @property
    def fitted(self) -> bool:
        return not self.scheme.startswith("mteb-")

    @property
    def cosine_search(self) -> bool:
        return not self.scheme.startswith("st-")

    def ranges(self, X, fit=None) -> np.ndarray | None:
        """The calibration ranges of a sentence-transformers scheme (of ``fit``, by default of a
        seeded sample of ``X``); None for mteb's, calibrated on the rows coded."""
        return _calibration(X, fit, self.fit_rows, self.seed) if self.fitted else None

    def vectors(self, X, fit=None, rows=None) -> np.ndarray:
        """The codes of ``X`` as float32 (``int8floor``: decoded at the bin floor); mteb's schemes
        calibrate each run of :attr:`batch` rows of ``X`` on itself."""
        if self.scheme.startswith("mteb-"):
            out = np.empty(np.shape(X), dtype=np.float32)
            for a in range(0, len(X), self.batch):
                b = min(len(X), a + self.batch)
                out[a:b] = mteb_quantize(np.asarray(X[a:b]), self.scheme[5:], batch=self.batch)
                release_rows(X, a, b)
            return out
        R = self.ranges(X, fit)
        if self.scheme == "int8floor":
            return _map_rows(X, lambda c: st_dequantize(st_quantize(c, R), R), np.shape(X)[1])
        return _map_rows(X, lambda c: st_quantize(c, R, self.scheme[3:]), np.shape(X)[1])

    def search(self, queries, gallery, k: int, fit=None) -> tuple[np.ndarray, np.ndarray]:
        """sentence-transformers' schemes: :func:`~embdiag.interventions.conventions.st_topk` on the
        ranges of ``fit`` (by default of a seeded sample of ``gallery``); the others: exact float32
        cosine search of their vectors."""
        if self.cosine_search:
            return super().search(queries, gallery, k, fit)
        R = self.ranges(gallery, fit)
        return st_topk(np.asarray(queries), np.asarray(gallery), k, R, precision=self.scheme[3:], rescore=self.rescore)

    def bytes_per_vector(self, d: int) -> float:
        """Bytes of the codes a vector store keeps: one per value (int4: two to a byte, binary: eight);
        calibration tables, shared, not counted."""
        bits = {"mteb-int4": 4, "mteb-binary": 1}.get(self.scheme, 8)
        return float(-(-d * bits // 8))


@dataclass(frozen=True)
class Compression(ReportCondition):
    """``method`` ``"pca"`` (centred PCA: ``(x - mean) @ components.T``), ``"upca"`` (uncentred:
    ``x @ components.T``, directions of the second-moment matrix) or ``"prefix"`` (the first
    coordinates) to ``dim`` dimensions, not renormalized (search is by cosine; the report
    measures the geometry of these rows and of their unit rows). PCA is fitted on ``fit`` rows,
    by default on a seeded sample of at most ``fit_rows`` rows of the rows transformed
    (``seed``, stream 11).

    Example:
        >>> Compression.of("prefix", 2, d=3).vectors(np.array([[3.0, 4.0, 12.0]]))
        array([[3., 4.]], dtype=float32)
    """

    kind: ClassVar[str] = "compression"

    method: str
    dim: int
    fit_rows: int = FIT_ROWS
    seed: int = 0

    @classmethod
    def of(cls, method: str, dim: int, d: int, fit_rows: int = FIT_ROWS, seed: int = 0) -> Compression:
        """The ``pca<dim>``, ``upca<dim>`` or ``prefix<dim>`` condition of ``d``-dimensional rows,
        with its description."""
        if method == "prefix":
            desc = f"Matryoshka prefix: the first {dim} of {d} coordinates; exact cosine search in float32."
        else:
            desc = (
                f"{COMPRESSION_METHODS[method]} to {dim} of {d} dimensions, fitted on a seeded sample of at "
                f"most {fit_rows:,} rows (seed {seed}); exact cosine search in float32."
            )
        return cls(f"{method}{dim}", desc, method, dim, fit_rows, seed)

    @property
    def convention(self) -> str:
        """Matryoshka truncation for a prefix; embdiag's own fit for PCA."""
        return "Matryoshka (first coordinates)" if self.method == "prefix" else "embdiag (PCA fitted here)"

    def model(self, X, fit=None) -> MatryoshkaPrefix | PCACompression:
        """The fitted transformer: a prefix of ``X``'s width, or PCA fitted on ``fit`` (default: a
        seeded sample of ``X``)."""
        from ..interventions.compression import MatryoshkaPrefix, PCACompression  # imports scikit-learn

        if self.method == "prefix":
            return MatryoshkaPrefix(self.dim).fit(np.asarray(X[:1]))
        if fit is None:
            fit = np.asarray(X[_sample_rows(len(X), self.fit_rows, self.seed, 11)])
        return PCACompression(self.dim, center=self.method == "pca").fit(fit)

    def vectors(self, X, fit=None, rows=None) -> np.ndarray:
        """``X`` compressed by :meth:`model` (not renormalized)."""
        if self.method == "prefix":
            return _map_rows(X, lambda c: c[:, : self.dim], self.dim)
        model = self.model(X, fit)
        return _map_rows(X, lambda c: (c.astype(np.float64) - model.mean_) @ model.components_.T, self.dim)

    @property
    def fitted(self) -> bool:
        return self.method != "prefix"

    certified: ClassVar[bool] = True

    def certify(self, queries, gallery, k: int, fit=None, reference=None):
        """The truncation certificate (:func:`~embdiag.interventions.truncation.compare_truncation`)."""
        return compare_truncation(queries, self.model(gallery, fit), gallery, k=k, name=self.name, reference=reference)

    def bytes_per_vector(self, d: int) -> float:
        """``dim`` float32 coordinates (a PCA's mean and axes are one shared table, not counted)."""
        return 4.0 * self.dim


@dataclass(frozen=True)
class ApproximateIndex(ReportCondition):
    """An approximate index (:class:`~embdiag.interventions.ann.AnnIndex`) searched instead of exact
    search: inner product on unit float32 rows, built reproducibly (:func:`build_statement`),
    training seeded with ``seed``, searched at its knob's default value; :meth:`curve` sweeps the knob.
    ``params``: the parameters a named index's description states (for ``ivfpq``, those of the
    gallery size it was parsed for; a build uses :func:`ivfpq_params` of its gallery).

    Example:
        >>> X = np.random.default_rng(0).standard_normal((200, 8)).astype(np.float32)
        >>> hnsw, = parse_index("hnsw", n=200, d=8)
        >>> hnsw.vectors(X) is None, hnsw.search(X[:3], X, 2)[1][:, 0]  # each query's nearest row: itself
        (True, array([0, 1, 2]))
    """

    kind: ClassVar[str] = "index"
    convention: ClassVar[str] = "FAISS"
    has_vectors: ClassVar[bool] = False
    cosine_search: ClassVar[bool] = False

    params: dict = field(compare=False)
    seed: int = 0
    factory: str = ""
    d: int = 0
    path: str | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def hnsw(cls, n: int, d: int, seed: int = 0) -> ApproximateIndex:
        """The ``hnsw`` condition (:func:`hnsw_params`) with its description."""
        p = hnsw_params(n, d)
        ann = AnnIndex.hnsw(n, d, seed)
        return cls(
            "hnsw",
            f"FAISS HNSW, M={p['M']}, efConstruction={p['efConstruction']}, efSearch={p['efSearch']}, "
            f"inner product on unit float32 rows, {build_statement(ann._probe(d))}.",
            p,
            seed,
            ann.factory,
            d,
        )

    @classmethod
    def ivfpq(cls, n: int, d: int, seed: int = 0) -> ApproximateIndex:
        """The ``ivfpq`` condition for an ``n`` x ``d`` gallery (:func:`ivfpq_params`) with its description.

        Raises:
            InputError: ``n`` is too small for codebooks of :data:`MIN_NBITS` bits.
        """
        q = ivfpq_params(n, d)
        if q["nbits"] < MIN_NBITS:
            raise InputError(
                f"--index: ivfpq needs at least {FAISS_ROWS_PER_CENTROID << MIN_NBITS} rows "
                f"({MIN_NBITS}-bit codebooks of {FAISS_ROWS_PER_CENTROID} training rows per "
                f"centroid), got {n}"
            )
        desc = (
            f"FAISS IVF-PQ, nlist={q['nlist']} (round(sqrt(n)), at most 4096), m={q['m']} sub-quantizers "
            f"of {d // q['m']} dimensions, {q['nbits']} bits per code, nprobe={q['nprobe']}, trained on a "
            f"seeded sample of {q['train_rows']:,} rows (seed {seed}), inner product on unit float32 rows, "
            f"{build_statement(None)}."
        )
        return cls("ivfpq", desc, q, seed, AnnIndex.ivfpq(n, d, seed).factory, d)

    @classmethod
    def of_factory(cls, factory: str, d: int, seed: int = 0, n: int | None = None) -> ApproximateIndex:
        """A condition from a FAISS ``index_factory`` string (named by :func:`factory_name`); given
        the gallery's ``n`` rows, FAISS's advice on training rows the index would not follow is
        noted in its description.

        Raises:
            InputError: ``--index faiss:<string>: why``: FAISS cannot make the index (its message
                quoted), or, given ``n``, cannot train or fill it on ``n`` rows
                (:func:`~embdiag.interventions.ann.factory_problems`).
        """
        try:
            ann = AnnIndex(factory, seed=seed).check(d, n)
        except ValueError as e:
            raise _item_error(f"faiss:{factory}", e, repr(factory)) from None
        knob = f"{ann.knob} {ann.default} by default" if ann.knob else "no search knob"
        advice = "".join(f" Note: {a} (FAISS warns, and trains)." for a in ann.advice)
        desc = (
            f"FAISS index_factory {factory!r}, {knob}, trained (where it needs training) on a seeded sample "
            f"of at most max(40 nlist, 10,000) rows (seed {seed}), inner product on unit float32 rows, "
            f"{build_statement(ann._probe(d))}.{advice}"
        )
        return cls(factory_name(factory), desc, {}, seed, factory, d)

    @classmethod
    def of_file(cls, path, d: int, n: int | None = None, vectors=None, seed: int = 0) -> ApproximateIndex:
        """A condition from a prebuilt FAISS index file (named by its stem), checked against the
        ``n`` rows it claims to index and, given ``vectors`` (VECTORS' rows, e.g. a memory-map),
        against a sample of them seeded with ``seed``
        (:meth:`~embdiag.interventions.ann.AnnIndex.mismatch`).

        Raises:
            InputError: ``--index file:<path>: why``: the file is not a FAISS index with d columns
                and a cosine-compatible metric, does not hold ``n`` rows, or does not hold
                ``vectors``' rows in their order.
        """
        item = f"file:{path}"
        try:
            ann = AnnIndex.read(path).check(d)
        except ValueError as e:
            raise _item_error(item, e, str(path)) from None
        ntotal = ann.index_.ntotal
        if n is not None and ntotal != n:
            raise InputError(
                f"--index {item}: the index holds {ntotal:,} rows, VECTORS has {n:,} "
                "(row i of the index must be row i of VECTORS)"
            )
        why = None if vectors is None else ann.mismatch(vectors, seed, name="VECTORS")
        if why:
            raise InputError(f"--index {item}: {why}")
        knob = f"{ann.knob} {ann.default} as saved" if ann.knob else "no search knob"
        desc = (
            f"FAISS index read from {Path(path).name} ({ann.factory}, {ann.index_.ntotal:,} rows), {knob}; "
            "row i of the index is row i of VECTORS."
        )
        out = cls(file_name(path), desc, {}, 0, ann.factory, d, str(path))
        out._cache.update(ann=ann)
        return out

    def vectors(self, X, fit=None, rows=None) -> None:
        """None: an index has no vectors of its own."""
        return None

    def settings(self) -> list[str]:
        """``"<knob>=<value>"`` of each knob value a curve searches (known before a build; an
        ``ivfpq``'s for the gallery size it was parsed for)."""
        ann = self._cache.get("ann")
        if ann is None:
            ann = AnnIndex(self.factory, d=self.d, default=self.params.get("nprobe", self.params.get("efSearch")))
        return [f"{ann.knob}={v}" for v in ann.ladder]

    def ann(self, gallery) -> AnnIndex:
        """The index over ``gallery``, built once (kept while the same array object is passed again)."""
        if self.path is not None:
            return self._cache["ann"].fit(gallery)
        if self._cache.get("gallery") is not gallery:
            n, d = np.shape(gallery)
            if self.params and self.name == "ivfpq" and ivfpq_params(n, d)["nbits"] < MIN_NBITS:
                raise InputError(
                    f"--index ivfpq: needs at least {FAISS_ROWS_PER_CENTROID << MIN_NBITS} gallery rows "
                    f"({MIN_NBITS}-bit codebooks), got {n}"
                )
            if self.params:  # a named index: its parameters for this gallery's size
                ann = getattr(AnnIndex, self.name)(n, d, self.seed)
            else:
                ann = AnnIndex(self.factory, seed=self.seed)
            self._cache.clear()
            self._cache.update(gallery=gallery, ann=ann.fit(gallery))
        return self._cache["ann"]

    def search(self, queries, gallery, k: int, value: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The index's top ``k`` of the unit float32 ``queries`` at knob ``value`` (default: the
        index's), sorted like ``topk``; the index over ``gallery`` is built once."""
        try:
            return self.ann(gallery).search(queries, k, value)
        except ValueError as e:
            raise ValueError(f"{self.name}: {e}") from None

    def bytes_per_vector(self, d: int) -> float | None:
        """Bytes each indexed vector adds to the serialized index (None before one is built): HNSW
        its float32 row, graph links, level and offset; IVF-PQ its PQ code and 8-byte id. The
        coarse quantizer and codebooks, shared by every vector, are not counted."""
        ann = self._cache.get("ann")
        return None if ann is None or ann.index_ is None else float(ann.bytes_per_vector)


def build_statement(index) -> str:
    """How an index is built, as its condition's description says it: an HNSW graph's rows are added
    on every FAISS thread where that gives the same graph for any number of threads
    (:func:`~embdiag.interventions.ann.deterministic_graph`: so a report can use the machine's cores
    and ``embdiag verify`` still rebuilds the graph exactly), anything else on one thread.
    ``index``: the empty FAISS index (None: not a graph)."""
    if index is not None and deterministic_graph(index):
        training = "" if index.is_trained else ", its training on one thread"
        return (
            "graph built on every FAISS thread (FAISS's deterministic build: the same graph for any number "
            f"of threads, rebuilt exactly by embdiag verify){training}"
        )
    return "built on one thread (reproducible)"


def _item_error(item: str, e: ValueError, subject: str) -> InputError:
    """``--index <item>: why`` from an index's ValueError ``"<subject>: why"``."""
    why = str(e)
    return InputError(f"--index {item}: {why.removeprefix(subject + ': ')}")


def _split(spec, option: str) -> list[str]:
    if not isinstance(spec, str):
        raise InputError(f"{option}: expected a comma-separated string, got {spec!r}")
    items = [s.strip().lower() for s in spec.split(",")]
    if spec.strip() == "" or any(not s for s in items):
        raise InputError(f"{option}: empty item in {spec!r}")
    dup = sorted({s for s in items if items.count(s) > 1})
    if dup:
        raise InputError(f"{option}: {', '.join(dup)} listed twice")
    return items


def _compress_item(item: str, d: int, fit_rows: int, seed: int) -> ReportCondition:
    """The condition of one ``--compress`` item."""
    if item in _STORAGE:
        return Storage.of(_STORAGE[item], fit_rows=fit_rows, seed=seed)
    deployed = _deployed_item(item, fit_rows, seed)
    if deployed is not None:
        return deployed
    rescored = re.fullmatch(r"binary-rescore(\d*)", item)
    if rescored:
        m = int(rescored.group(1) or RESCORE)
        if m < 1:
            raise InputError(f"--compress: {item!r} rescores M k candidates; M must be at least 1")
        return Storage.of("binary", rescore=m)
    m = re.fullmatch(r"(pca|upca|prefix)(\d+)", item)
    if not m:
        raise InputError(f"--compress: unknown item {item!r}; accepted: {_COMPRESS_FORMS}")
    dim = int(m.group(2))
    if not 1 <= dim < d:
        raise InputError(
            f"--compress: {item!r} asks for {dim} dimensions; DIM must lie in [1, {d - 1}] "
            f"(the vectors have d = {d}); accepted: {_COMPRESS_FORMS}"
        )
    return Compression.of(m.group(1), dim, d, fit_rows, seed)


def _deployed_item(item: str, fit_rows: int, seed: int) -> DeployedCodes | None:
    """The :class:`DeployedCodes` condition of one ``--compress`` item, or None for another item."""
    if item in ("int8floor", "mteb-binary", "mteb-fp8"):
        return DeployedCodes.of(item, fit_rows=fit_rows, seed=seed)
    st = re.fullmatch(r"(st-u?int8)(-rescore(\d*))?", item)
    if st:
        m = int(st.group(3) or ST_RESCORE) if st.group(2) else 0
        if st.group(2) and m < 1:
            raise InputError(f"--compress: {item!r} rescores M k candidates; M must be at least 1")
        return DeployedCodes.of(st.group(1), rescore=m, fit_rows=fit_rows, seed=seed)
    mteb = re.fullmatch(r"(mteb-int[48])(-b(\d+))?", item)
    if mteb:
        batch = int(mteb.group(3)) if mteb.group(2) else MTEB_BATCH
        if batch < 2:
            raise InputError(f"--compress: {item!r} calibrates B rows at a time; B must be at least 2")
        return DeployedCodes.of(mteb.group(1), batch=batch)
    return None


def parse_compress(spec: str, d: int, *, fit_rows: int = FIT_ROWS, seed: int = 0) -> list[ReportCondition]:
    """Conditions of a ``--compress`` spec such as ``"fp16,int8,pca256,prefix256"``.

    ``fp16`` / ``float16``, ``int8``, ``fp8``, ``int8cal``, ``int4`` and ``binary``:
    :class:`Storage` (int8: symmetric per-row scale ``max|x| / 127``; fp8: float8 e4m3 with a
    per-row scale; int8cal and int4: per-dimension calibration ranges from a seeded sample of at
    most ``fit_rows`` rows; binary: sign bits searched by Hamming distance, ``binary-rescore<M>``
    with the M k nearest rescored by the float query, M = 4 when omitted). Codes made and scored
    as a deployed stack does (:class:`DeployedCodes`): ``st-int8`` and ``st-uint8``
    (sentence-transformers' codes searched by the inner product of the raw codes, as usearch and
    FAISS score them; ``-rescore<M>`` rescoring the M k best with the float query, M = 2 when
    omitted), ``int8floor`` (those int8 codes decoded at the bin floor, cosine), ``mteb-int8`` and
    ``mteb-int4`` (mteb's codes, each run of B rows calibrated on itself, ``-b<B>``, B = 50,000
    when omitted), ``mteb-binary`` (0/1 vectors) and ``mteb-fp8`` (float8 without a scale), scored
    by cosine as mteb scores them. ``pca<DIM>``:
    centred PCA to ``DIM`` dimensions,
    ``upca<DIM>``: uncentred PCA (no mean subtracted), each fitted on a seeded sample of at most
    ``fit_rows`` rows; ``prefix<DIM>``: the first ``DIM`` coordinates (Matryoshka prefix); all
    :class:`Compression`. ``DIM`` must lie in ``[1, d)``.

    Raises:
        InputError: naming ``--compress`` and listing the accepted forms.

    Example:
        >>> [(c.name, c.kind) for c in parse_compress("int8,pca64,upca64,prefix64", d=128)]
        [('int8', 'storage'), ('pca64', 'compression'), ('upca64', 'compression'), ('prefix64', 'compression')]
    """
    d = check_int(d, "d", minimum=1)
    fit_rows = check_int(fit_rows, "fit_rows", minimum=2)
    items = _split(spec, "--compress")
    out = [_compress_item(item, d, fit_rows, seed) for item in items]
    for i, c in enumerate(out):
        twin = next((items[j] for j in range(i) if out[j].name == c.name), None)
        if twin is not None:
            raise InputError(f"--compress: {twin} and {items[i]} are the same condition ({c.name}); list it once")
    return out


def _index_items(spec) -> list[str]:
    """The items of an ``--index`` spec: ``;``-separated parts, each a ``faiss:`` or ``file:``
    item (kept whole, commas and case included) or a comma list of named indexes."""
    if not isinstance(spec, str):
        raise InputError(f"--index: expected a string, got {spec!r}")
    items = []
    for part in spec.split(";"):
        kind, sep, rest = part.strip().partition(":")
        if sep and kind.lower() in ("faiss", "file"):
            if not rest.strip():
                raise InputError(f"--index: {kind.lower()}: names nothing in {spec!r}")
            items.append(f"{kind.lower()}:{rest.strip()}")
        else:
            items += _split(part, "--index")
    return items


def index_files(spec) -> dict[str, str]:
    """The prebuilt index files an ``--index`` spec names: ``"--index <name>"`` -> path (the
    report records each by SHA-256, as it records its other input files).

    Example:
        >>> index_files("hnsw;file:/data/ivf.faiss")
        {'--index ivf': '/data/ivf.faiss'}
    """
    if not isinstance(spec, str) or not spec.strip():
        return {}
    return {f"--index {file_name(item[5:])}": item[5:] for item in _index_items(spec) if item.startswith("file:")}


def with_index_files(spec: str, paths: dict) -> str:
    """``spec`` with each ``file:`` item's path replaced by ``paths[name]`` where given (the
    file found again by ``embdiag verify``); other items as they were.

    Example:
        >>> with_index_files("hnsw;file:/old/ivf.faiss", {"--index ivf": "/new/ivf.faiss"})
        'hnsw;file:/new/ivf.faiss'
    """
    parts = []
    for part in spec.split(";"):
        kind, sep, rest = part.strip().partition(":")
        key = f"--index {file_name(rest.strip())}" if sep and kind.lower() == "file" else None
        parts.append(f"file:{paths[key]}" if key in paths else part)
    return ";".join(parts)


def parse_index(spec: str, n: int, d: int, *, seed: int = 0, vectors=None) -> list[ApproximateIndex]:
    """Conditions of an ``--index`` spec such as ``"hnsw,ivfpq"`` or ``"hnsw;faiss:IVF256,PQ32"``
    (FAISS, inner product on unit float32 rows = cosine).

    ``hnsw``: ``IndexHNSWFlat(d, 32)``, efConstruction 200, efSearch 64. ``ivfpq``: ``IndexIVFPQ``
    with the parameters of :func:`ivfpq_params` for an ``n``-row gallery (k-means and PQ training
    seeded with ``seed``). ``faiss:<string>``: any ``index_factory`` string, case kept (named by
    :func:`~embdiag.interventions.ann.factory_name`); ``file:<path>``: a prebuilt index of the
    ``n`` rows (named by its stem). Items are separated by commas, and parts holding a
    ``faiss:`` or ``file:`` item by ``;`` (a factory string has commas of its own). IVF queries
    whose probed lists hold fewer than k vectors are searched again over every list. Results
    are sorted like ``topk``; indexes are built reproducibly (:func:`build_statement`).

    Checked before anything is built: a factory string's parameters against ``n`` rows
    (:func:`~embdiag.interventions.ann.factory_problems`: IVF lists and codebook centroids at
    most the training rows, PQ's m dividing d, nbits from 1 to 16, HNSW's M at least 2, ...);
    a file's d, metric and row count, and, given ``vectors`` (the ``n`` x ``d`` rows, e.g. a
    memory-map), its rows against a sample of them (:meth:`ApproximateIndex.of_file`).

    Raises:
        InputError: naming ``--index`` (and the item) and what is wrong, or listing the accepted forms.

    Example:
        >>> [(c.name, c.kind) for c in parse_index("hnsw,ivfpq;faiss:IVF16,PQ8x4", n=1000, d=64)]
        [('hnsw', 'index'), ('ivfpq', 'index'), ('ivf16-pq8x4', 'index')]
    """
    n, d = check_int(n, "n", minimum=1), check_int(d, "d", minimum=1)
    out = []
    for item in _index_items(spec):
        if item.startswith("faiss:"):
            out.append(ApproximateIndex.of_factory(item[6:], d, seed, n=n))
        elif item.startswith("file:"):
            out.append(ApproximateIndex.of_file(item[5:], d, n=n, vectors=vectors, seed=seed))
        elif item in ("hnsw", "ivfpq"):
            out.append(getattr(ApproximateIndex, item)(n, d, seed))
        else:
            raise InputError(f"--index: unknown item {item!r}; accepted: {_INDEX_FORMS}")
    names = [c.name for c in out]
    dup = sorted({x for x in names if names.count(x) > 1})
    if dup:
        raise InputError(f"--index: {', '.join(dup)} listed twice")
    return out


def file_condition(path_or_array, name: str | None = None, source: str | None = None) -> CompareFile:
    """The ``--compare`` representation: a path (read with :func:`~embdiag.data.files.read_vectors`)
    or an n x d' array of the same items as VECTORS (row i is item i). ``name`` defaults to the
    file's stem (``"compare"`` for an array); ``source``, the file an array was read from, to the
    file's name (``"an array"``).

    Example:
        >>> c = file_condition(np.ones((3, 2)))
        >>> c.name, c.kind, c.description.split(":")[0]
        ('compare', 'file', "Second representation 'compare' from an array")
    """
    if isinstance(path_or_array, (str, Path)):
        A = read_vectors(path_or_array, "--compare")
        name = name or Path(path_or_array).stem
        where = Path(path_or_array).name
    else:
        A = np.asarray(path_or_array) if not isinstance(path_or_array, np.memmap) else path_or_array
        if A.ndim != 2 or A.shape[0] < 2 or not np.issubdtype(A.dtype, np.number):
            raise InputError(f"--compare: expected an n x d numeric array, got shape {A.shape} dtype {A.dtype}")
        name = name or "compare"
        where = source or "an array"
    desc = (
        f"Second representation {name!r} from {where}: {A.shape[0]:,} x {A.shape[1]} rows, "
        "item i is row i of VECTORS; exact cosine search in float32."
    )
    return CompareFile(name, desc, A)


def _from_spec(spec, parse) -> list[ReportCondition]:
    """``parse(spec)`` of a spec string (a blank one: no condition); a list of conditions as it is."""
    if not isinstance(spec, str):
        return list(spec)
    return parse(spec) if spec.strip() else []


def parse_conditions(
    compress="", index="", *, n: int, d: int, compare=None, seed: int = 0, vectors=None
) -> list[ReportCondition]:
    """A report's conditions, in order: ``compare``, then ``compress``'s, then ``index``'s.

    ``compress`` and ``index``: spec strings (:func:`parse_compress`, :func:`parse_index`; a
    blank string means none, as the command passes an absent option) or lists of conditions;
    ``compare``: a path, an n x d' array or a :class:`CompareFile` of the ``n`` reference rows
    (``d`` columns), or a list of them (one condition each); ``vectors``: those reference rows
    (e.g. a memory-map), which an ``--index file:`` is checked against (a sample of
    :data:`~embdiag.interventions.ann.MATCH_ROWS` rows). PCA descriptions, index training and
    that sample use ``seed``.

    Raises:
        InputError: a bad spec, a ``compare`` without ``n`` rows, or names that repeat or are
            ``"reference"``.

    Example:
        >>> [(c.name, c.kind) for c in parse_conditions("int8,pca4", "hnsw", n=1000, d=16)]
        [('int8', 'storage'), ('pca4', 'compression'), ('hnsw', 'index')]
        >>> parse_conditions("fp16", " ", n=1000, d=16, compare=np.ones((999, 8)))
        Traceback (most recent call last):
        ...
        embdiag.data.files.InputError: --compare: has 999 row(s), expected 1000 (one per vector)
    """
    many = isinstance(compare, (list, tuple))
    conds = [_compare(c, n) for c in (compare if many else [] if compare is None else [compare])]
    conds += _from_spec(compress, lambda s: parse_compress(s, d, seed=seed))
    conds += _from_spec(index, lambda s: parse_index(s, n, d, seed=seed, vectors=vectors))
    names = [c.name for c in conds]
    dup = sorted({x for x in names if names.count(x) > 1} | ({"reference"} & set(names)))
    if dup:
        raise InputError(f"conditions: names must be unique and not 'reference'; repeated or reserved: {dup}")
    return conds


def _compare(compare, n: int) -> CompareFile:
    """The ``--compare`` condition of ``n`` reference rows."""
    c = compare if isinstance(compare, CompareFile) else file_condition(compare)
    if len(c.array) != n:
        raise InputError(f"--compare: has {len(c.array)} row(s), expected {n} (one per vector)")
    return c
