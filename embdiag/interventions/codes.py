r"""Low-bit codes for stored vectors: float8 e4m3, calibrated int8 and int4, and sign bits.

Each code is what a vector store keeps, bit for bit, and its exact decoding:

- **float8 e4m3** (``e4m3fn``: 1 sign, 4 exponent bits of bias 7, 3 mantissa bits; largest
  448, smallest subnormal 2^-9; no infinity): :func:`e4m3_encode` rounds to nearest, ties to
  even, and saturates at 448, one byte per value; :func:`e4m3_decode` reads it back.
- **calibrated integers** (the sentence-transformers and mteb convention): each dimension's range
  ``[low_j, high_j]`` from a calibration sample (:func:`calibration_ranges`) is cut into ``2^bits
  - 1`` equal steps; a value is stored as the nearest step (round to nearest, ties to even,
  clipped to the range): :func:`calibrated_encode` / :func:`calibrated_decode`. Four-bit codes are
  packed two to a byte (:func:`pack_nibbles`).
- **sign bits**: bit ``x_j > 0`` (a zero stores as a negative sign), eight to a byte
  (``np.packbits``); read back as ``+-1``. :func:`sign_topk` searches them by Hamming distance,
  optionally rescoring the best candidates with the float query.
"""

from __future__ import annotations

import numpy as np

from .._scaling import unit_rows
from .._validate import as_matrix, check_bool, check_int

__all__ = [
    "E4M3_MAX",
    "e4m3_encode",
    "e4m3_decode",
    "calibration_ranges",
    "calibrated_encode",
    "calibrated_decode",
    "pack_nibbles",
    "unpack_nibbles",
    "sign_topk",
]

#: Largest finite float8 e4m3fn value (1.75 x 2^8).
E4M3_MAX = 448.0
_E4M3_MIN_EXP = -6  # exponent of the smallest normal value, 2^-6
_SUBNORMAL_QUANTUM = 2.0**-9
_NEVER = -(2**62)  # a Hamming key no gallery row reaches (its negation is still an int64)


#: Float64 bits below the three mantissa bits e4m3 keeps.
_DROPPED = 52 - 3


def _e4m3_round(x: np.ndarray) -> np.ndarray:
    """``x`` (float64) rounded to the nearest float8 e4m3fn value, ties to even, saturating at
    +-448 (exact: the quantum of each binade is a power of two). Normal binades round on the
    float64 bits (add half a unit of the last kept bit, less one, plus that bit; clear the rest:
    a carry moves into the exponent as it should); below 2^-6 the quantum is 2^-9."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    bits = a.view(np.int64)
    kept = (bits + ((1 << (_DROPPED - 1)) - 1) + ((bits >> _DROPPED) & 1)) & ~np.int64((1 << _DROPPED) - 1)
    r = np.where(a < 2.0**_E4M3_MIN_EXP, np.rint(a / _SUBNORMAL_QUANTUM) * _SUBNORMAL_QUANTUM, kept.view(np.float64))
    return np.copysign(np.minimum(r, E4M3_MAX), x)


def e4m3_encode(x) -> np.ndarray:
    """The float8 e4m3fn bytes (uint8) of ``x`` rounded to the nearest e4m3fn value, ties to even, saturating at +-448.

    Example:
        >>> e4m3_encode(np.array([1.0, -0.5, 448.0, 1000.0, 2.0**-9, 0.0]))
        array([ 56, 176, 126, 126,   1,   0], dtype=uint8)
    """
    r = _e4m3_round(x)
    a = np.abs(r)
    bits = a.view(np.int64)
    normal = a >= 2.0**_E4M3_MIN_EXP
    field = np.where(normal, (bits >> 52) - 1023 + 7, 0)
    mant = np.where(normal, (bits >> _DROPPED) & 7, np.rint(a / _SUBNORMAL_QUANTUM).astype(np.int64))
    return (np.signbit(r).astype(np.uint8) << 7 | field.astype(np.uint8) << 3 | mant.astype(np.uint8)).astype(np.uint8)


def _e4m3_values() -> np.ndarray:
    """The float64 value of each of the 256 float8 e4m3fn bytes (0x7f / 0xff, NaN, read as +-480:
    never encoded)."""
    b = np.arange(256, dtype=np.uint8)
    field = (b >> 3 & 15).astype(np.int64)
    mant = (b & 7).astype(np.float64)
    value = np.where(field == 0, mant * _SUBNORMAL_QUANTUM, np.ldexp(8.0 + mant, field - 10))
    return np.where(b >> 7, -value, value)


_E4M3_VALUES = _e4m3_values()


def e4m3_decode(codes) -> np.ndarray:
    """The float64 values of float8 e4m3fn bytes (the NaN pattern 0x7f / 0xff is never encoded).

    Example:
        >>> e4m3_decode(np.array([56, 176, 126, 1], dtype=np.uint8)).tolist()
        [1.0, -0.5, 448.0, 0.001953125]
    """
    return _E4M3_VALUES[np.asarray(codes, dtype=np.uint8)]


def calibration_ranges(X) -> np.ndarray:
    """Each dimension's ``[low, high]`` over the calibration rows ``X``: a 2 x d float64 array
    (row 0 the minima, row 1 the maxima), as sentence-transformers' ``quantize_embeddings`` takes.

    Example:
        >>> calibration_ranges([[0.0, 2.0], [1.0, -2.0], [0.5, 0.0]])
        array([[ 0., -2.],
               [ 1.,  2.]])
    """
    X = as_matrix(X, "X", dtype=np.float64)
    return np.stack([X.min(axis=0), X.max(axis=0)])


def _steps(ranges, bits: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    R = np.asarray(ranges, dtype=np.float64)
    if R.shape != (2, d) or not np.isfinite(R).all() or (R[1] < R[0]).any():
        raise ValueError(f"ranges: expected a finite 2 x {d} array of [low, high] per dimension, got shape {R.shape}")
    with np.errstate(over="ignore"):
        step = (R[1] - R[0]) / (2**bits - 1)
    if not np.isfinite(step).all():
        raise ValueError("ranges: a span high - low exceeds the float64 range; rescale the vectors")
    return R[0], step


def calibrated_encode(X, ranges, bits: int) -> np.ndarray:
    """Unsigned ``bits``-bit codes (uint8, one per value) of the rows ``X`` on ``ranges``: the
    nearest of ``2^bits`` equal steps from ``low_j`` to ``high_j`` (ties to even), clipped to them.

    Example:
        >>> calibrated_encode([[0.0, 0.5], [1.2, -1.0]], [[0.0, -1.0], [1.0, 1.0]], bits=4)
        array([[ 0, 11],
               [15,  0]], dtype=uint8)
    """
    X = as_matrix(X, "X", dtype=np.float64)
    bits = check_int(bits, "bits", minimum=1)
    if bits > 8:
        raise ValueError(f"bits: must be at most 8 (one byte per code), got {bits}")
    low, step = _steps(ranges, bits, X.shape[1])
    scaled = (X - low) / np.where(step > 0, step, 1.0)
    return np.clip(np.rint(np.where(step > 0, scaled, 0.0)), 0, 2**bits - 1).astype(np.uint8)


def calibrated_decode(codes, ranges, bits: int) -> np.ndarray:
    """The float64 values ``low_j + code x step_j`` of :func:`calibrated_encode`'s codes."""
    codes = np.asarray(codes)
    low, step = _steps(ranges, bits, codes.shape[1])
    return low + codes.astype(np.float64) * step


def pack_nibbles(codes: np.ndarray) -> np.ndarray:
    """Four-bit codes (n x d, values 0..15) packed two to a byte: n x ceil(d / 2) uint8, the
    even column in the high nibble.

    Example:
        >>> pack_nibbles(np.array([[1, 2, 15]], dtype=np.uint8))
        array([[ 18, 240]], dtype=uint8)
    """
    c = np.asarray(codes, dtype=np.uint8)
    if c.shape[1] % 2:
        c = np.concatenate([c, np.zeros((len(c), 1), np.uint8)], axis=1)
    return (c[:, 0::2] << 4 | c[:, 1::2]).astype(np.uint8)


def unpack_nibbles(packed: np.ndarray, d: int) -> np.ndarray:
    """The n x d four-bit codes of :func:`pack_nibbles`."""
    p = np.asarray(packed, dtype=np.uint8)
    out = np.empty((len(p), 2 * p.shape[1]), np.uint8)
    out[:, 0::2], out[:, 1::2] = p >> 4, p & 15
    return out[:, :d]


def _signs(X: np.ndarray) -> np.ndarray:
    """``+1`` where ``x > 0``, else ``-1``, as float32 (exact integer products while d < 2^24)."""
    return np.where(X > 0, np.float32(1), np.float32(-1))


#: Rows a FAISS binary search returns beyond the m asked for, so that ties at rank m fit inside.
_TIE_ROOM = 64


def _hamming_top(Sq: np.ndarray, Sg: np.ndarray, m: int, exclude_self: bool, chunk: int) -> np.ndarray:
    """Indices of each query's ``m`` nearest gallery rows by Hamming distance, nearest first,
    ties by the lower index. FAISS's ``IndexBinaryFlat`` (XOR and popcount of the packed bits)
    returns ``m + 64`` rows per query; a query is complete when the last of them lies farther
    than its m-th (every row tied with the m-th is inside), and is sorted by (distance, index).
    The others, and every query without FAISS, take :func:`_hamming_gemm`."""
    try:
        import faiss
    except ImportError:  # pragma: no cover - faiss is a dependency
        return _hamming_gemm(Sq, Sg, m, np.arange(len(Sq)) if exclude_self else None, chunk)
    n, d = Sg.shape
    index = faiss.IndexBinaryFlat(8 * -(-d // 8))  # packbits pads both sides with the same zero bits
    index.add(np.packbits(Sg > 0, axis=1))
    kk = min(n, m + int(exclude_self) + _TIE_ROOM)
    D, I = index.search(np.packbits(Sq > 0, axis=1), kk)
    last = D[:, -1].copy()
    if exclude_self:
        D = np.where(I == np.arange(len(Sq))[:, None], d + 1, D)  # the query's own row: past every other
    order = np.lexsort((I, D), axis=-1)[:, :m]
    D, I = np.take_along_axis(D, order, axis=1), np.take_along_axis(I, order, axis=1)
    spill = np.flatnonzero((last <= D[:, -1]) & (kk < n))  # ties at rank m may continue past the list
    if spill.size:
        I[spill] = _hamming_gemm(Sq[spill], Sg, m, spill if exclude_self else None, chunk)
    return I.astype(np.int64)


def _hamming_gemm(Sq: np.ndarray, Sg: np.ndarray, m: int, own, chunk: int) -> np.ndarray:
    """:func:`_hamming_top` of every query by float32 products: ``Sq @ Sg.T`` is ``d - 2 x
    Hamming`` exactly (integer sums in float32); the key ``dot x n + (n - 1 - j)`` orders by dot,
    then by lower index. ``own``: each query's own gallery row (never its neighbour), or None."""
    n = len(Sg)
    best = np.full((len(Sq), 0), _NEVER)
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        key = np.rint(Sq @ Sg[a:b].T).astype(np.int64) * n + (n - 1 - np.arange(a, b))
        if own is not None:
            inside = (own >= a) & (own < b)
            key[np.flatnonzero(inside), own[inside] - a] = _NEVER
        both = np.concatenate([best, key], axis=1)
        keep = min(m, both.shape[1])
        part = np.argpartition(-both, keep - 1, axis=1)[:, :keep]
        best = np.take_along_axis(both, part, axis=1)
    best = -np.sort(-best, axis=1)
    return n - 1 - np.mod(best, n)


def sign_topk(queries, gallery, k: int, *, exclude_self: bool = False, rescore: int = 0, chunk_size: int = 16384):
    r"""Top-``k`` search of sign-bit codes: ``(scores, indices)`` sorted by descending score,
    ties by the lower gallery index.

    ``rescore=0``: Hamming search of the query's sign bits; the score is the cosine of the two
    ``+-1`` vectors, ``(d - 2 H) / d``. ``rescore=m``: the ``m k`` nearest by Hamming distance
    rescored with the float query against the gallery's ``+-1`` vector (sentence-transformers'
    rescoring; no float gallery is kept): the score is their cosine, computed in float64. With
    ``exclude_self`` query i is gallery row i and never its own neighbour.

    Example:
        >>> G = np.array([[1.0, 2.0, -1.0], [1.0, -2.0, 1.0], [-1.0, -1.0, -1.0], [0.5, 0.1, -3.0]])
        >>> scores, idx = sign_topk(G[:1], G, 2)  # rows 0 and 3 share all three signs
        >>> idx, scores
        (array([[0, 3]]), array([[1., 1.]]))
        >>> sign_topk(np.array([[0.1, 2.0, -1.0]]), G[1:], 1, rescore=3)[1]  # +-1 rows: 2 signs kept beat 1
        array([[2]])
    """
    Q = as_matrix(queries, "queries", dtype=np.float64)
    G = as_matrix(gallery, "gallery", dtype=np.float64)
    if G.shape[1] != Q.shape[1]:
        raise ValueError(f"gallery: expected {Q.shape[1]} columns like queries, got {G.shape[1]}")
    exclude_self = check_bool(exclude_self, "exclude_self")
    if exclude_self and len(Q) != len(G):
        raise ValueError(f"exclude_self: needs queries and gallery of equal length, got {len(Q)} and {len(G)}")
    n_cand = len(G) - int(exclude_self)
    k = check_int(k, "k", minimum=1)
    if k > n_cand:
        own = ", each query's own excluded" if exclude_self else ""
        raise ValueError(f"k: must be at most the number of candidates ({n_cand} gallery rows{own}), got {k}")
    rescore = check_int(rescore, "rescore", minimum=0)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    d = Q.shape[1]
    Sq, Sg = _signs(Q), _signs(G)
    if not rescore:
        idx = _hamming_top(Sq, Sg, k, exclude_self, chunk_size)
        dots = np.einsum("ij,ikj->ik", Sq.astype(np.float64), Sg[idx].astype(np.float64))
        return dots / d, idx
    cand = _hamming_top(Sq, Sg, min(rescore * k, n_cand), exclude_self, chunk_size)
    zero = ~(Q != 0).any(axis=1)
    if zero.any():
        raise ValueError(f"queries: zero row at index {int(np.argmax(zero))} (a rescored query needs a direction)")
    scores = np.einsum("ij,ikj->ik", unit_rows(Q), Sg[cand].astype(np.float64)) / np.sqrt(d)
    order = np.lexsort((cand, -scores), axis=-1)[:, :k]
    return np.take_along_axis(scores, order, axis=1), np.take_along_axis(cand, order, axis=1)
