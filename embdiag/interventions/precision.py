r"""Numerical storage and scoring precision, with a rigorous top-k certificate.

Storage formats (:func:`store`, then ``.reconstruct()`` to float64):

- ``"native"``: the vectors as given (no change);
- ``"float32"`` / ``"float16"``: IEEE round-to-nearest cast (float16 overflow above
  65504 raises ``ValueError``);
- ``"int8"``: symmetric per-vector scale ``c = max|x| / 127`` (stored as float32),
  codes ``q = clip(rint(x / c), -127, 127)`` (round to nearest, ties to even),
  reconstruction ``q * c``. A zero row stores scale 0 and codes 0.
- ``"fp8"``: float8 e4m3 with a per-vector float32 scale ``c = max|x| / 448`` (the largest
  e4m3 value), codes ``e4m3(x / c)`` (:func:`~embdiag.interventions.codes.e4m3_encode`: round to
  nearest, ties to even), reconstruction ``decode(code) * c``.
- ``"int8cal"`` and ``"int4"``: per-dimension calibration ranges ``[low_j, high_j]``
  (:func:`~embdiag.interventions.codes.calibration_ranges` of calibration rows; by default of the
  rows stored), cut into 255 or 15 equal steps; a value is stored as its nearest step, clipped
  to the range (:func:`~embdiag.interventions.codes.calibrated_encode`). int8cal's codes are
  ``step - 128`` as int8 (sentence-transformers' layout, which truncates where this rounds);
  int4's are packed two to a byte. The ranges (2 x d, float64) are one table
  shared by every vector.
- ``"binary"``: the sign bits ``x > 0``, eight to a byte; reconstruction ``+-1``.
  :func:`~embdiag.interventions.codes.sign_topk` searches them by Hamming distance.

:func:`bytes_per_vector` gives each format's bytes per stored vector (a shared calibration
table not counted).

Scoring is cosine: both sides are normalized, then dot products are taken. With
``arithmetic="float64"`` the reconstructed vectors are normalized and scored in
float64; ``arithmetic="float32"`` casts, normalizes and accumulates in float32 (the
study's arithmetic-only condition). Reconstruction errors are measured in the units
the score uses: ``e = || x_hat / ||x_hat|| - x / ||x|| ||_2``, computed in float64.

:func:`compare_conditions` runs the study's conditions (:data:`STUDY_CONDITIONS`)
against their own reference ranking (native vectors, float64 arithmetic) and returns
one :class:`StorageResult` each. For the study's "offset + FP16 gallery" row, pass
vectors already moved by :class:`embdiag.interventions.CommonOffset`: the reference
is then the offset vectors scored in float64 ("common-offset reference").
:func:`compare_study_conditions` runs all eight of the study's rows that way
(:data:`STUDY_CONDITIONS` on the vectors, :data:`OFFSET_CONDITIONS` on the moved ones).

Certificate (see :func:`certificate_bound`): a query is certified when its bound on
how far any of its computed scores can move is below half its computed reference
margin (rank-k score minus rank-(k+1) score). The bound covers storage error *and*
the floating-point rounding of normalization and accumulation in both the reference
and the perturbed scoring, so a certified query provably keeps its top-k set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._scaling import unit_scale_rows
from .._validate import as_matrix, check_int, nonzero_rows, same_length
from ..metrics.retrieval import boundary_margin, overlap_at_k, precision_at_k, topk
from .codes import (
    E4M3_MAX,
    calibrated_decode,
    calibrated_encode,
    calibration_ranges,
    e4m3_decode,
    e4m3_encode,
    pack_nibbles,
    unpack_nibbles,
)

__all__ = [
    "FORMATS",
    "CALIBRATED",
    "ARITHMETICS",
    "bytes_per_vector",
    "StoredVectors",
    "store",
    "reconstruction_error",
    "normalization_bound",
    "scoring_bound",
    "certificate_bound",
    "StorageCondition",
    "STUDY_CONDITIONS",
    "OFFSET_CONDITIONS",
    "StorageResult",
    "compare_storage",
    "compare_conditions",
    "compare_study_conditions",
    "query_scores",
]

FORMATS = ("native", "float32", "float16", "int8", "fp8", "int8cal", "int4", "binary")
#: Formats stored on per-dimension calibration ranges, with their bits per value.
CALIBRATED = {"int8cal": 8, "int4": 4}
ARITHMETICS = ("float64", "float32")

_U = {"float64": 2.0**-53, "float32": 2.0**-24}  # unit roundoff
_TINY = {"float64": 2.0**-1074, "float32": 2.0**-149}  # smallest subnormal
_U64 = _U["float64"]
_CACHE_SCORES = 1 << 22  # keep the reference score matrix when it has at most this many entries


def _check_choice(value, options, name):
    if value not in options:
        raise ValueError(f"{name}: expected one of {list(options)}, got {value!r}")
    return value


# ----------------------------------------------------------------------------- storage


@dataclass(frozen=True, eq=False)
class StoredVectors:
    """Vectors as stored: ``codes`` as kept (float16, int8, or uint8 bytes for fp8, int4 and
    binary), ``scale`` (float32, per row) for int8 and fp8, ``ranges`` (2 x d, shared by every
    row) for the calibrated formats, ``d`` the vectors' width (packed codes have fewer columns).

    Examples
    --------
    >>> stored = store(np.array([[1.0, -0.25]]), "int8")  # scale 1 / 127
    >>> stored.codes, stored.nbytes, np.round(stored.reconstruct(), 4)
    (array([[127, -32]], dtype=int8), 6, array([[ 1.   , -0.252]]))
    >>> store(np.array([[0.3, -2.0, 0.0]]), "binary").reconstruct()
    array([[ 1., -1., -1.]])
    """

    fmt: str
    codes: np.ndarray
    scale: np.ndarray | None = None
    ranges: np.ndarray | None = None
    d: int | None = None

    @property
    def nbytes(self) -> int:
        """Bytes held: codes, per-row scales and the shared calibration table."""
        return self.codes.nbytes + sum(a.nbytes for a in (self.scale, self.ranges) if a is not None)

    def reconstruct(self) -> np.ndarray:
        """The stored vectors as float64 (for int8: ``codes * scale``, computed in float64)."""
        if self.fmt == "int8":
            # (astype(None) here would also give float64: equivalent mutants)
            return self.codes.astype(np.float64) * self.scale.astype(np.float64)[:, None]
        if self.fmt == "fp8":
            return e4m3_decode(self.codes) * self.scale.astype(np.float64)[:, None]
        if self.fmt == "int8cal":
            return calibrated_decode(self.codes.astype(np.int16) + 128, self.ranges, 8)
        if self.fmt == "int4":
            return calibrated_decode(unpack_nibbles(self.codes, self.d), self.ranges, 4)
        if self.fmt == "binary":
            return np.unpackbits(self.codes, axis=1, count=self.d).astype(np.float64) * 2 - 1
        return self.codes.astype(np.float64)


def bytes_per_vector(fmt: str, d: int) -> int:
    """Bytes one ``d``-dimensional vector takes stored in ``fmt`` (not ``"native"``, whose size is
    its input's): codes plus a per-row scale; a calibrated format's shared table is not counted.

    Examples
    --------
    >>> [bytes_per_vector(f, 768) for f in ("float32", "float16", "int8", "fp8", "int8cal", "int4", "binary")]
    [3072, 1536, 772, 772, 768, 384, 96]
    """
    _check_choice(fmt, FORMATS[1:], "fmt")
    d = check_int(d, "d", minimum=1)
    per_row_scale = 4 if fmt in ("int8", "fp8") else 0
    bits = {"float32": 32, "float16": 16, "int8": 8, "fp8": 8, "int8cal": 8, "int4": 4, "binary": 1}[fmt]
    return -(-d * bits // 8) + per_row_scale


def store(X, fmt: str = "float16", ranges=None) -> StoredVectors:
    """Store the rows of ``X`` in ``fmt`` (one of :data:`FORMATS`; scheme in the module doc).

    ``ranges``: the calibration ranges of ``"int8cal"`` and ``"int4"`` (a 2 x d array, as
    :func:`~embdiag.interventions.codes.calibration_ranges` returns); by default those of ``X``.

    Examples
    --------
    >>> half = store(np.array([[1.0, 0.5], [0.25, -2.0]]), "float16")
    >>> half.codes.dtype, half.nbytes, half.reconstruct()
    (dtype('float16'), 8, array([[ 1.  ,  0.5 ],
           [ 0.25, -2.  ]]))
    >>> store(np.array([[0.0, 1.0], [3.0, -1.0]]), "int4").reconstruct()  # 15 steps: 0.2, 2/15
    array([[ 0.,  1.],
           [ 3., -1.]])
    """
    return _store(X, fmt, "X", ranges)


def _store(X, fmt: str, name: str, ranges=None) -> StoredVectors:
    """:func:`store`, refusing under ``name`` values the format cannot hold: beyond float16's or
    float32's largest, or (int8, fp8) beyond 127 or 448 times float32's largest, where the
    per-row float32 scale overflows."""
    _check_choice(fmt, FORMATS, "fmt")
    X = as_matrix(X, name)
    if ranges is not None and fmt not in CALIBRATED:
        raise ValueError(f"ranges: only the calibrated formats ({', '.join(CALIBRATED)}) take ranges, not {fmt!r}")
    if fmt == "native":
        return StoredVectors(fmt, X)
    d = X.shape[1]
    if fmt in CALIBRATED:
        R = calibration_ranges(X) if ranges is None else np.asarray(ranges, dtype=np.float64)
        u = calibrated_encode(X, R, CALIBRATED[fmt])
        codes = (u.astype(np.int16) - 128).astype(np.int8) if fmt == "int8cal" else pack_nibbles(u)
        return StoredVectors(fmt, codes, ranges=R, d=d)
    if fmt == "binary":
        return StoredVectors(fmt, np.packbits(X > 0, axis=1), d=d)
    levels = {"int8": 127, "fp8": E4M3_MAX}.get(fmt, 1)
    top = float(np.finfo(np.float16 if fmt == "float16" else np.float32).max) * levels
    if X.dtype == np.float64 or fmt == "float16":  # float32 rows always fit float32, int8 and fp8
        over = int(np.count_nonzero(np.abs(X) > top))
        if over:
            raise ValueError(f"{name}: {over} value(s) exceed the {fmt} range (|x| <= {top:.5g})")
    if fmt in ("float32", "float16"):
        return StoredVectors(fmt, X.astype(fmt), d=d)
    scale = (np.abs(X).max(axis=1).astype(np.float64) / levels).astype(np.float32)  # astype(None): float64 too
    # scale 0 means max|x| <= levels * 2**-150: such entries give code 0 for any divisor near 1
    div = np.where(scale > 0, scale, 1.0).astype(np.float64)[:, None]
    if fmt == "fp8":  # e4m3_encode saturates at 448, as the clip below for int8
        return StoredVectors(fmt, e4m3_encode(X.astype(np.float64) / div), scale, d=d)
    # the clip matters: a float32-subnormal scale can round down by up to half, x / scale then exceeds 127
    codes = np.clip(np.rint(X.astype(np.float64) / div), -127, 127).astype(np.int8)
    return StoredVectors(fmt, codes, scale, d=d)


def _normalize(X: np.ndarray, dtype: str) -> np.ndarray:
    """Cast to ``dtype``, then divide by the row norm computed in ``dtype`` (on rows rescaled
    by powers of two, which changes no bit of the result unless the squares would over- or
    underflow, as in :func:`~embdiag._scaling.unit_rows`)."""
    a = unit_scale_rows(np.asarray(X, dtype=dtype))
    return a / np.sqrt(np.einsum("ij,ij->i", a, a))[:, None]  # index letters are names only


def reconstruction_error(X, X_hat) -> np.ndarray:
    """Per-row ``|| x_hat/||x_hat|| - x/||x|| ||_2`` in float64 (the error a cosine score sees).

    Examples
    --------
    >>> np.round(reconstruction_error([[1.0, 0.0], [1.0, 0.0]], [[2.0, 0.0], [0.0, 1.0]]), 4)  # same, orthogonal
    array([0.    , 1.4142])
    """
    X = as_matrix(X, "X", dtype=np.float64)
    X_hat = as_matrix(X_hat, "X_hat", dtype=np.float64)
    same_length(X=X, X_hat=X_hat)
    if X.shape != X_hat.shape:
        raise ValueError(f"X_hat: expected shape {X.shape}, got {X_hat.shape}")
    nonzero_rows(X, "X")
    nonzero_rows(X_hat, "X_hat")
    w = _normalize(X_hat, "float64") - _normalize(X, "float64")  # both already float64 (as_matrix)
    return np.sqrt(np.einsum("ij,ij->i", w, w))


# ------------------------------------------------------------------- rounding bounds


def _gamma(n: int, u: float) -> float:
    return n * u / (1 - n * u) if n * u < 1 else math.inf


def normalization_bound(d: int, arithmetic: str = "float64", min_sq_norm: float = 1.0) -> float:
    r"""Bound ``eta`` on ``|| fl(x / ||x||) - x / ||x|| ||_2`` for a d-vector (cast, norm, divide).

    Model (Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 2-3), unit
    roundoff ``u`` of ``arithmetic``: the cast gives ``a_i = x_i (1 + d_c)``; the sum of
    squares, in *any* order with or without FMA, gives ``S~ = ||a||^2 (1 + t)`` with
    ``|t| <= g = gamma_d + d * tiny / ||a||^2`` (``gamma_d = d u / (1 - d u)``; the
    second term covers gradual underflow of tiny products); ``n~ = sqrt(S~)(1 + d_s)``;
    ``u~_i = a_i / n~ (1 + d_q)^2`` (division, or reciprocal then multiply). With all
    ``|d| <= u`` and ``||a|| / ||x|| in [1 - u, 1 + u]``, every ratio ``u~_i / u_i``
    lies in ``[(1-u)^3 / ((1+u)^2 sqrt(1+g)), (1+u)^3 / ((1-u)^2 sqrt(1-g))]``, so
    ``||u~ - u|| <= eta ||u|| = eta`` with ``eta`` the larger distance of these from 1 (the
    upper one, evaluated to a few ulps).
    ``min_sq_norm`` is the smallest ``||x||^2`` among the rows (only the underflow term
    uses it). About ``(d / 2 + 5) u``: 4.3e-14 in float64, 2.3e-5 in float32 at d = 768.

    Examples
    --------
    >>> f"{normalization_bound(768):.2e}", f"{normalization_bound(768, 'float32'):.2e}"
    ('4.32e-14', '2.32e-05')
    """
    _check_choice(arithmetic, ARITHMETICS, "arithmetic")
    u, tiny = _U[arithmetic], _TINY[arithmetic]
    if not min_sq_norm > 0:
        return math.inf
    # for min_sq_norm >= 1 the underflow term is below half an ulp of gamma_d >= d u: no effect
    g = _gamma(d, u) + d * tiny / ((1 - u) ** 2 * min_sq_norm)
    if g >= 1:
        return math.inf
    # The upper distance (1+u)^3 / ((1-u)^2 sqrt(1-g)) - 1, through log1p/expm1 (to a few ulps):
    # written plainly it loses the small difference from 1 (1 + u rounds to 1 in float64, so the
    # float64 bound came out up to a third too small at small d). The lower distance
    # 1 - (1-u)^3 / ((1+u)^2 sqrt(1+g)) is never the larger: with x = (1+u)^3/(1-u)^2 and
    # y = (1-u)^3/(1+u)^2, the two differ by x/sqrt(1-g) + y/sqrt(1+g) - 2
    # >= (x + y - 2) + g (x - y) / 2 > 0, as x + y - 2 = (24u^2 + 8u^4) / (1 - u^2)^2 and x >= y.
    return math.expm1(3 * math.log1p(u) - 2 * math.log1p(-u) - 0.5 * math.log1p(-g))


def scoring_bound(d: int, arithmetic: str = "float64", min_sq_norm: float = 1.0) -> float:
    r"""Bound on ``|computed cosine - exact cosine|`` for any pair of d-vectors.

    The computed score is ``s~ = fl(u~^T v~)`` of the computed unit vectors. The standard
    dot-product bound (any summation order, FMA allowed) gives
    ``|s~ - u~^T v~| <= gamma_d sum |u~_i v~_i| + d tiny <= gamma_d (1 + eta)^2 + d tiny``
    (Cauchy-Schwarz, ``||u~|| <= 1 + eta``), and
    ``|u~^T v~ - u^T v| <= ||u~ - u|| ||v~|| + ||u|| ||v~ - v|| <= eta (2 + eta)``, with
    ``eta`` = :func:`normalization_bound`. So the bound is
    ``gamma_d (1 + eta)^2 + d tiny + eta (2 + eta)``: about 1.7e-13 (float64) and 1e-4
    (float32) at d = 768. Assumes no overflow (row norms far below the dtype's maximum).

    Examples
    --------
    >>> f"{scoring_bound(768):.2e}", f"{scoring_bound(768, 'float32'):.2e}"
    ('1.72e-13', '9.22e-05')
    """
    eta = normalization_bound(d, arithmetic, min_sq_norm)
    # d tiny is below half an ulp of the first term (>= d u), kept to follow the derivation
    return _gamma(d, _U[arithmetic]) * (1 + eta) ** 2 + d * _TINY[arithmetic] + eta * (2 + eta)


def _error_upper(err: np.ndarray, d: int, eta64: float) -> np.ndarray:
    """Rigorous upper bound on the exact ``||u_hat - u||`` from its float64 measurement.

    ``err = fl(sqrt(sum w~_i^2))``, ``w~ = fl(u~_hat - u~)``: undo the sqrt, sum and
    subtraction roundings, then add the two normalization errors ``eta64``.
    """
    u, g = _U64, _gamma(d, _U64)
    s = (err / (1 - u)) ** 2 + d * _TINY["float64"]
    return (np.sqrt(s / (1 - g)) / (1 - u) + 2 * eta64) * (1 + 8 * u)  # 1 + 9u rounds to this float


def certificate_bound(
    query_error,
    gallery_error,
    d: int,
    *,
    arithmetic: str = "float64",
    reference_arithmetic: str = "float64",
    min_sq_norm: float = 1.0,
) -> np.ndarray:
    r"""Per-query bound ``B_q`` on ``|s~_hat(q, g) - s~(q, g)|`` over every gallery vector g.

    ``s~`` is the computed reference score (native vectors, ``reference_arithmetic``),
    ``s~_hat`` the computed perturbed score (stored vectors, ``arithmetic``).
    ``query_error`` (per query) and ``gallery_error`` (per gallery vector, or a scalar)
    must be *upper bounds* on the exact errors ``e = ||u_hat - u||`` of the unit vectors
    (0 where a side is not stored); :func:`compare_storage` derives them rigorously
    from the measured errors.

    Derivation. For exact unit vectors ``u, v`` and ``u_hat = u + e_q``, ``v_hat = v + e_g``:
    ``u_hat^T v_hat - u^T v = u_hat^T (v_hat - v) + (u_hat - u)^T v``, and ``||u_hat|| =
    ||v|| = 1``, so by Cauchy-Schwarz ``|s_hat - s| <= ||e_g|| + ||e_q||`` (no product
    term is needed). Adding the computed-versus-exact gap of each side
    (:func:`scoring_bound` ``R``) by the triangle inequality:
    ``|s~_hat - s~| <= ||e_q|| + max_g ||e_g|| + R_ref + R_hat = B_q``
    (inflated by ``1 + 8u`` to cover its own float64 evaluation).

    Certificate. Let ``m_q = s~_(k) - s~_(k+1)`` be the computed reference margin. If
    ``B_q < m_q / 2``, then for every reference top-k member j and every non-member l,
    ``s~_hat(q,j) - s~_hat(q,l) >= m_q - 2 B_q > 0``: the perturbed computed top-k set
    equals the reference one, strictly (tie-breaking cannot matter). This holds for any
    BLAS summation order; it assumes IEEE arithmetic in the stated precision (no
    extended-precision or Strassen-type products) and no overflow.

    Examples
    --------
    >>> bound = certificate_bound(np.zeros(3), 1e-3, 768)  # native queries, gallery errors up to 1e-3
    >>> bound.shape, f"{bound[0]:.6f}", f"{certificate_bound(np.zeros(3), 1e-3, 768, arithmetic='float32')[0]:.6f}"
    ((3,), '0.001000', '0.001092')
    """
    q = np.asarray(query_error, dtype=np.float64)
    g = np.asarray(gallery_error, dtype=np.float64)  # float(max) is the same without the cast (monotone)
    g_max = float(g.max()) if g.size else 0.0
    rounding = scoring_bound(d, reference_arithmetic, min_sq_norm) + scoring_bound(d, arithmetic, min_sq_norm)
    return (q + g_max + rounding) * (1 + 8 * _U64)  # 1 + 9u rounds to this float


# ----------------------------------------------------------------- conditions, results


@dataclass(frozen=True)
class StorageCondition:
    """One storage/scoring condition: storage format of each side and the arithmetic.

    Examples
    --------
    >>> StorageCondition("FP16 gallery", gallery="float16")
    StorageCondition(name='FP16 gallery', gallery='float16', queries='native', arithmetic='float64')
    >>> [condition.name for condition in STUDY_CONDITIONS][:3]
    ['native reference', 'FP16 gallery', 'FP16 queries + gallery']
    """

    name: str
    gallery: str = "native"
    queries: str = "native"
    arithmetic: str = "float64"
    ranges: np.ndarray | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        _check_choice(self.gallery, FORMATS, "gallery")
        _check_choice(self.queries, FORMATS, "queries")
        _check_choice(self.arithmetic, ARITHMETICS, "arithmetic")
        if self.ranges is not None and not {self.gallery, self.queries} & set(CALIBRATED):
            raise ValueError(f"ranges: only a calibrated format ({', '.join(CALIBRATED)}) takes ranges")

    def calibration(self, gallery: np.ndarray) -> np.ndarray | None:
        """The ranges a calibrated side is stored on: :attr:`ranges`, by default the native
        ``gallery``'s (None when no side is calibrated)."""
        if not {self.gallery, self.queries} & set(CALIBRATED):
            return None
        return calibration_ranges(gallery) if self.ranges is None else self.ranges


STUDY_CONDITIONS = (
    StorageCondition("native reference"),
    StorageCondition("FP16 gallery", gallery="float16"),
    StorageCondition("FP16 queries + gallery", gallery="float16", queries="float16"),
    StorageCondition("INT8 gallery", gallery="int8"),
    StorageCondition("INT8 queries + gallery", gallery="int8", queries="int8"),
    StorageCondition("FP32 arithmetic", arithmetic="float32"),
)
"""The study's storage conditions; apply them to offset vectors for the offset rows."""

OFFSET_CONDITIONS = (
    StorageCondition("common-offset reference"),
    StorageCondition("offset + FP16 gallery", gallery="float16"),
)
"""The study's two rows on vectors moved by a common offset (see :func:`compare_study_conditions`)."""


@dataclass(frozen=True, eq=False)
class StorageResult:
    """One condition compared with its own reference ranking (per-query arrays, length n_q).

    ``max_score_error`` is the largest ``|s~_hat - s~|`` over all query x gallery pairs the
    search ranks (self pairs excluded when the queries are the gallery); ``score_error``
    holds that largest change per query (``None`` when not measured). ``margins`` are
    the computed reference rank-k minus rank-(k+1) scores; ``bound`` and ``certified``
    are from :func:`certificate_bound`; errors are the measured float64 values.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 8))
    >>> result = compare_storage(X, StorageCondition("FP16 gallery", gallery="float16"), k=3)
    >>> result.k, result.changed.shape, result.violations, result.summary()["n_queries"]
    (3, (50,), 0, 50)
    """

    condition: StorageCondition
    k: int
    max_score_error: float
    changed: np.ndarray
    overlap: np.ndarray
    margins: np.ndarray
    bound: np.ndarray
    certified: np.ndarray
    query_error: np.ndarray
    gallery_error: np.ndarray
    reference_neighbors: np.ndarray = field(repr=False)
    neighbors: np.ndarray = field(repr=False)
    score_error: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_changed(self) -> int:
        """Queries whose top-k identity set changed."""
        return int(self.changed.sum())

    @property
    def mean_overlap(self) -> float:
        """Mean overlap@k with the reference top-k."""
        return float(self.overlap.mean())

    @property
    def coverage(self) -> float:
        """Fraction of queries certified."""
        return float(self.certified.mean())

    @property
    def changed_margins(self) -> np.ndarray:
        """Reference margins of the changed queries."""
        return self.margins[self.changed]

    @property
    def violations(self) -> int:
        """Certified queries that nevertheless changed (always 0 if the certificate is sound)."""
        return int((self.certified & self.changed).sum())

    def precision_change(self, labels, query_labels=None) -> float:
        """P@k of the perturbed minus the reference ranking, in percentage points.

        ``labels`` are the gallery labels; ``query_labels`` as in
        :func:`embdiag.metrics.retrieval.precision_at_k` (omit when the queries are the gallery).
        Computed from the integer count of relevant neighbours gained or lost, so an
        unchanged P@k gives exactly 0. With missing labels (None), the mean over the queries
        whose P@k is defined on both sides of the per-query change (each P@k among the labelled
        neighbours), still exactly 0 when nothing changed.
        """
        before = precision_at_k(self.reference_neighbors, labels, query_labels, per_query=True)
        after = precision_at_k(self.neighbors, labels, query_labels, per_query=True)
        defined = ~(np.isnan(before) | np.isnan(after))
        if not defined.all():
            return 100.0 * float(np.mean(after[defined] - before[defined])) if defined.any() else float("nan")
        gained = int(np.rint((after - before) * self.k).sum())
        return 100.0 * gained / (self.k * before.size)

    def agreement_kept(self, labels, query_labels=None) -> int:
        """Changed queries whose own P@k is nevertheless unchanged (turnover hidden from relevance)."""
        before = precision_at_k(self.reference_neighbors, labels, query_labels, per_query=True)
        after = precision_at_k(self.neighbors, labels, query_labels, per_query=True)
        return int((self.changed & (before == after)).sum())

    def summary(self) -> dict:
        """Flat row for a table."""
        return {
            "condition": self.condition.name,
            "max_score_error": self.max_score_error,
            "changed_queries": self.n_changed,
            "n_queries": int(self.changed.size),
            f"overlap@{self.k}": self.mean_overlap,
            "certified": int(self.certified.sum()),
            "coverage": self.coverage,
            "violations": self.violations,
            "max_error_queries": float(self.query_error.max()),
            "max_error_gallery": float(self.gallery_error.max()),
        }


# ------------------------------------------------------------------------- comparison


def _stored(X: np.ndarray, fmt: str, name: str, ranges=None) -> np.ndarray:
    if fmt == "native":  # a shortcut: store(X, "native") gives a float64 copy of the same values
        return X
    Xs = _store(X, fmt, f"{name} stored as {fmt}", ranges if fmt in CALIBRATED else None).reconstruct()
    nonzero_rows(Xs, f"{name} stored as {fmt}")
    return Xs


def _score_errors(Qr, Gr, Qp, Gp, exclude_self: bool, chunk: int, ref=None) -> np.ndarray:
    """Per query, the largest |perturbed - reference| score; ``ref`` is the full reference matrix if cached."""
    worst = np.empty(Qr.shape[0])
    for a in range(0, Qr.shape[0], chunk):
        b = min(Qr.shape[0], a + chunk)
        # Equivalent mutants: recomputing the cached rows gives the same float64 products (time
        # only); astype(None) is astype(float64).
        r = Qr[a:b] @ Gr.T if ref is None else ref[a:b]
        diff = np.abs((Qp[a:b] @ Gp.T).astype(np.float64) - r)
        if exclude_self:
            diff[np.arange(b - a), np.arange(a, b)] = 0.0
        worst[a:b] = diff.max(axis=1)
    return worst


# Equivalent mutants (here and in compare_storage / compare_study_conditions): another default
# chunk_size only changes how many query rows each score product takes (memory, time).
def reference_ranking(Q, G, k: int, exclude_self: bool, reference=None) -> tuple[np.ndarray, np.ndarray]:
    """The float64 reference ranking ``topk(Q, G, k + 1)`` a certificate reads, or ``reference``
    (already computed) after checking its shape."""
    if reference is None:
        return topk(Q, G, k + 1, exclude_self=exclude_self, dtype=np.float64)
    S, I = (np.asarray(a) for a in reference)
    if S.shape != (len(Q), k + 1) or I.shape != S.shape or S.dtype != np.float64:
        raise ValueError(
            f"reference: expected float64 scores and indices of shape ({len(Q)}, {k + 1}) (topk of k + 1 "
            f"in float64), got {S.shape} {S.dtype} and {I.shape}"
        )
    return S, I


def compare_conditions(
    queries,
    conditions=STUDY_CONDITIONS,
    gallery=None,
    *,
    k: int = 10,
    chunk_size: int = 1024,
    reference=None,
    score_errors: bool = True,
) -> list[StorageResult]:
    """Run each condition against one reference ranking; one :class:`StorageResult` each.

    Each query searches ``gallery`` by cosine for its top ``k``; with ``gallery=None``
    the queries search each other and the query itself is excluded. The reference is
    the native vectors scored in float64; each condition stores queries and/or gallery
    (:func:`store`; a calibrated format on the condition's ranges, by default the gallery's),
    reconstructs to float64 and scores in its arithmetic (a binary side is scored as its
    ``+-1`` vectors by cosine, which orders as Hamming distance does).

    ``k`` is at most the number of candidates minus two (the margin ranks ``k + 1``, and
    the search asks for fewer than all candidates). The certificate's rounding terms use
    half the smallest squared row norm among the native and stored vectors (their
    underflow terms), and a query is certified when its bound is below
    ``margin * (1 - 4u) / 2`` (u = 2**-53: the factor absorbs the rounding of that
    product, so ``bound < margin / 2`` holds exactly).

    ``reference``: the reference ranking ``topk(queries, gallery, k + 1, dtype=np.float64)``
    (with ``exclude_self`` when ``gallery`` is None) when it is already computed, as a report
    certifying several conditions on one sample has it; it is checked for shape only.
    ``score_errors=False`` skips measuring every pair's score change (two more products of the
    queries with the whole gallery): ``max_score_error`` is then NaN and ``score_error`` None;
    the certificate does not read them.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 8))
    >>> results = compare_conditions(X, k=3)  # the queries search each other
    >>> len(results), results[0].condition.name, results[0].n_changed, [r.violations for r in results]
    (6, 'native reference', 0, [0, 0, 0, 0, 0, 0])
    """
    Q = as_matrix(queries, "queries")
    exclude_self = gallery is None
    G = Q if exclude_self else as_matrix(gallery, "gallery")
    if G.shape[1] != Q.shape[1]:
        raise ValueError(f"gallery: expected {Q.shape[1]} columns like queries, got {G.shape[1]}")
    nonzero_rows(Q, "queries")
    nonzero_rows(G, "gallery")
    n_cand = G.shape[0] - int(exclude_self)
    k = check_int(k, "k", minimum=1)
    if n_cand < 3:  # the margin needs rank k + 1 of more than k + 1 candidates, k >= 1
        side, mine = ("queries", ", each query's own row excluded") if exclude_self else ("gallery", "")
        raise ValueError(f"{side}: needs at least 3 candidates (k + 2, k >= 1{mine}), got {n_cand}")
    if k + 1 >= n_cand:  # the margin needs rank k + 1, and topk asks for fewer than all candidates
        raise ValueError(f"k: must be at most {n_cand - 2} (the margin ranks k + 1 of {n_cand} candidates), got {k}")
    conditions = [conditions] if isinstance(conditions, StorageCondition) else list(conditions)
    for c in conditions:
        if not isinstance(c, StorageCondition):
            raise ValueError(f"conditions: expected StorageCondition items, got {c!r}")
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    d = Q.shape[1]

    # Equivalent mutants: dtype=None in np.asarray (the margins and overlaps are float64
    # already); normalizing G == Q again gives the same rows; "IJ,IJ->I" is the same
    # einsum; caching the reference scores never, always or at another size only trades memory
    # for time (the same float64 products).
    ref_scores, ref_idx = reference_ranking(Q, G, k, exclude_self, reference)
    margins = np.asarray(boundary_margin(ref_scores, k), dtype=np.float64)
    ref_nbrs = ref_idx[:, :k]
    sq = lambda A: np.einsum("ij,ij->i", A, A, dtype=np.float64)  # noqa: E731
    sq_min_ref = float(min(sq(Q).min(), sq(G).min()))
    Qr = Gr = ref_full = None
    if score_errors:
        Qr = _normalize(Q, "float64")
        Gr = Qr if exclude_self else _normalize(G, "float64")
        ref_full = Qr @ Gr.T if Q.shape[0] * G.shape[0] <= _CACHE_SCORES else None

    results = []
    for c in conditions:
        # Equivalent mutants: storing G == Q again gives the same rows (time only); measuring a
        # native side's error gives exactly the zeros it replaces; np.zeros_like(None) for g_up is
        # a 0-d zero, and certificate_bound uses only its maximum, 0.
        ranges = c.calibration(G)
        Qs = _stored(Q, c.queries, "queries", ranges)
        Gs = Qs if exclude_self and c.gallery == c.queries else _stored(G, c.gallery, "gallery", ranges)
        sq_min = min(sq_min_ref, float(sq(Qs).min()), float(sq(Gs).min())) * 0.5
        eta64 = normalization_bound(d, "float64", sq_min)
        q_err = np.zeros(Q.shape[0]) if c.queries == "native" else reconstruction_error(Q, Qs)
        g_err = np.zeros(G.shape[0]) if c.gallery == "native" else reconstruction_error(G, Gs)
        q_up = np.zeros_like(q_err) if c.queries == "native" else _error_upper(q_err, d, eta64)
        g_up = np.zeros_like(g_err) if c.gallery == "native" else _error_upper(g_err, d, eta64)
        bound = certificate_bound(q_up, g_up, d, arithmetic=c.arithmetic, min_sq_norm=sq_min)
        big = np.finfo(c.arithmetic).max / 4
        if max(sq(Qs).max(), sq(Gs).max()) > big:  # overflow possible: no guarantee
            bound = np.full_like(bound, np.inf)
        # Equivalent mutant: margins >= 0 (a zero margin fails the second test, every bound > 0).
        certified = (margins > 0) & (bound < margins * (1 - 4 * _U64) / 2)

        # Equivalent mutants: np.sort without axis sorts the last one, axis 1; normalizing Gs is
        # Qs again gives the same rows; without ref_full the reference rows are recomputed.
        _, idx = topk(Qs, Gs, k, exclude_self=exclude_self, dtype=np.dtype(c.arithmetic).type)
        changed = np.any(np.sort(idx, axis=1) != np.sort(ref_nbrs, axis=1), axis=1)
        overlap = np.asarray(overlap_at_k(ref_nbrs, idx, per_query=True), dtype=np.float64)
        err = None
        if score_errors:
            Qp = _normalize(Qs, c.arithmetic)
            Gp = Qp if Gs is Qs else _normalize(Gs, c.arithmetic)
            err = _score_errors(Qr, Gr, Qp, Gp, exclude_self, chunk_size, ref_full)
        largest = float(err.max()) if err is not None else np.nan
        results.append(
            StorageResult(c, k, largest, changed, overlap, margins, bound, certified, q_err, g_err, ref_nbrs, idx, err)
        )
    return results


def query_scores(queries, condition: StorageCondition, query: int, gallery=None) -> tuple[np.ndarray, np.ndarray]:
    """One query's scores against every gallery row: the reference's and ``condition``'s.

    As :func:`compare_conditions` computes them (reference: native vectors in float64;
    condition: stored, reconstructed, scored in its arithmetic), returned as float64.
    With ``gallery=None`` the queries are the gallery and the query's own row is ``-inf``.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 8))
    >>> reference, stored = query_scores(X, STUDY_CONDITIONS[1], query=0)  # FP16 gallery
    >>> reference.shape, float(reference[0]), bool(np.abs(stored[1:] - reference[1:]).max() < 1e-3)
    ((50,), -inf, True)
    """
    if not isinstance(condition, StorageCondition):
        raise ValueError(f"condition: expected a StorageCondition, got {condition!r}")
    Q = as_matrix(queries, "queries")
    same = gallery is None
    G = Q if same else as_matrix(gallery, "gallery")
    query = check_int(query, "query", minimum=0)
    if query >= Q.shape[0]:
        raise ValueError(f"query: expected an index below {Q.shape[0]}, got {query}")
    nonzero_rows(Q, "queries")
    nonzero_rows(G, "gallery")
    ranges = condition.calibration(G)
    Qs = _stored(Q, condition.queries, "queries", ranges)
    # Equivalent mutants: storing G == Q again gives the same rows; [query:query + 2][0] is the
    # same row; astype(None) is astype(float64).
    Gs = Qs if same and condition.gallery == condition.queries else _stored(G, condition.gallery, "gallery", ranges)
    ref = _normalize(G, "float64") @ _normalize(Q[query : query + 1], "float64")[0]
    out = _normalize(Gs, condition.arithmetic) @ _normalize(Qs[query : query + 1], condition.arithmetic)[0]
    out = out.astype(np.float64)
    if same:
        ref[query] = out[query] = -np.inf
    return ref, out


def compare_study_conditions(
    train, evaluation, *, k: int = 10, offset_severity: float = 0.99, offset_seed: int = 0, chunk_size: int = 1024
) -> list[StorageResult]:
    """The study's eight rows: each evaluation vector queries the others (exact top ``k``).

    :data:`STUDY_CONDITIONS` run on ``evaluation`` against the native float64 ranking;
    :data:`OFFSET_CONDITIONS` run on ``evaluation`` moved by a
    :class:`~embdiag.interventions.CommonOffset` of ``offset_severity`` (direction drawn
    from ``offset_seed``, norm from ``train``: fitted on training vectors only) against
    the moved vectors' own float64 ranking.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 8))
    >>> rows = compare_study_conditions(X[:25], X[25:], k=3)
    >>> len(rows), [r.condition.name for r in rows[-2:]]
    (8, ['common-offset reference', 'offset + FP16 gallery'])
    """
    # Equivalent mutants: STUDY_CONDITIONS is the default; chunk_size left out of the second call
    # only changes its chunking (an invalid one was rejected by the first call).
    from .stress import CommonOffset  # the stress module imports the metrics suite and scikit-learn

    native = compare_conditions(evaluation, STUDY_CONDITIONS, k=k, chunk_size=chunk_size)
    moved = CommonOffset(offset_severity, seed=offset_seed).fit(train).transform(evaluation)
    return native + compare_conditions(moved, OFFSET_CONDITIONS, k=k, chunk_size=chunk_size)


def compare_storage(
    queries, condition: StorageCondition, gallery=None, *, k: int = 10, chunk_size: int = 1024
) -> StorageResult:
    """:func:`compare_conditions` for a single condition.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 8))
    >>> result = compare_storage(X, StorageCondition("INT8 gallery", gallery="int8"), k=3)
    >>> result.condition.name, result.certified.shape, result.violations  # certified queries never change
    ('INT8 gallery', (50,), 0)
    """
    if not isinstance(condition, StorageCondition):
        raise ValueError(f"condition: expected a StorageCondition, got {condition!r}")
    return compare_conditions(queries, [condition], gallery, k=k, chunk_size=chunk_size)[0]
