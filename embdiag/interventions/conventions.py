r"""Stored codes and their scores as deployed stacks make them, bit for bit.

- **sentence-transformers** (``quantize_embeddings``, 6.2): per-dimension ranges ``[low_j,
  high_j]`` (float32) cut into 255 steps ``(high_j - low_j) / 255`` (a zero step read as 1); a
  value's code is ``clip(floor((x - low_j) / step_j), 0, 255)`` (truncation, not rounding),
  stored as ``uint8`` or, for ``int8``, less 128: :func:`st_quantize`. Its rescoring decodes a
  code at the floor of its bin, ``low_j + (code + 128) step_j`` in float64
  (:func:`st_dequantize`). ``semantic_search_usearch`` scores ``int8`` codes by the inner
  product of the raw codes (a usearch ``Index(metric="ip", dtype="i8")``, distance ``1 - dot``)
  and ``semantic_search_faiss`` scores ``uint8`` codes likewise (a FAISS ``IndexFlatIP`` over the
  codes read as floats); with ``rescore`` the ``rescore_multiplier x k`` best by code are
  re-ranked by the float query's dot product with each candidate decoded at the floor:
  :func:`st_topk` on :func:`code_topk`.
- **mteb** (``CompressionWrapper._quantize_embeddings``, 2.26): the rows of each ``encode`` call
  (the queries in one call, the corpus in runs of :data:`MTEB_BATCH` rows) are calibrated on
  themselves: ``floor((x - min_j) / step_j) - 2^(bits-1)`` in float32 with ``step_j = (max_j -
  min_j) / (2^bits - 1)`` for ``int8`` and ``int4`` (no clip; a constant dimension divides by
  zero); ``binary`` is the 0/1 vector ``x > 0``; ``fp8`` casts each value to float8 e4m3fn with
  no scale (round to nearest, ties to even, saturating at 448); the codes are returned as floats
  and scored by the model's similarity, cosine for a sentence-transformers model:
  :func:`mteb_quantize`.

Ties in a code search are ordered by the lower gallery index.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_matrix, check_bool, check_int
from .codes import e4m3_decode, e4m3_encode

__all__ = [
    "MTEB_BATCH",
    "MTEB_FORMATS",
    "ST_PRECISIONS",
    "code_topk",
    "mteb_quantize",
    "st_dequantize",
    "st_quantize",
    "st_topk",
]

#: Rows of a corpus mteb's ``SearchEncoderWrapper`` encodes (and so calibrates) at a time
#: (its ``corpus_chunk_size``).
MTEB_BATCH = 50_000
#: mteb's output types made here: bits of the calibrated integer codes (0: not calibrated).
MTEB_FORMATS = {"int8": 8, "uint8": 8, "int4": 4, "uint4": 4, "binary": 0, "fp8": 0}
#: sentence-transformers' calibrated precisions.
ST_PRECISIONS = ("int8", "uint8")
_NEVER = -(2**62)


def _floats(X, name: str) -> np.ndarray:
    """``X`` as a float32 or float64 matrix (kept in its own precision, as the stacks compute in it)."""
    A = as_matrix(X, name)
    return A if A.dtype in (np.float32, np.float64) else A.astype(np.float64)


def _st_steps(ranges, d: int) -> tuple[np.ndarray, np.ndarray]:
    """sentence-transformers' float32 starts and steps of a 2 x d ``ranges`` table."""
    R = np.asarray(ranges)
    if R.shape != (2, d) or not np.isfinite(R).all():
        raise ValueError(f"ranges: expected a finite 2 x {d} array of [low, high] per dimension, got shape {R.shape}")
    R = R.astype(np.float32)
    starts = R[0]
    steps = (R[1] - starts) / 255
    return starts, np.where(steps == 0, 1, steps)


def _check_precision(precision: str) -> str:
    if precision not in ST_PRECISIONS:
        raise ValueError(f"precision: expected one of {list(ST_PRECISIONS)}, got {precision!r}")
    return precision


def st_quantize(X, ranges, precision: str = "int8") -> np.ndarray:
    """sentence-transformers' ``quantize_embeddings(X, precision, ranges=ranges)``: ``int8`` or
    ``uint8`` codes of the rows ``X`` (computed in ``X``'s float precision on float32 ranges).

    Example:
        >>> st_quantize([[0.0, 0.5], [1.0, -1.0]], [[0.0, -1.0], [1.0, 1.0]])  # 1.0 / float32(1 / 255) < 255
        array([[-128,   63],
               [ 126, -128]], dtype=int8)
    """
    precision = _check_precision(precision)
    X = _floats(X, "X")
    starts, steps = _st_steps(ranges, X.shape[1])
    with np.errstate(over="ignore"):  # a tiny step: beyond the top code, clipped to it as in sentence-transformers
        q = np.clip(np.floor((X - starts) / steps), 0, 255)
    return q.astype(np.uint8) if precision == "uint8" else (q - 128).astype(np.int8)


def st_dequantize(codes, ranges, precision: str = "int8") -> np.ndarray:
    """The float64 values sentence-transformers' rescoring reads from codes: each bin's floor
    ``low_j + (code + 128) step_j`` (``uint8``: ``low_j + code step_j``).

    Example:
        >>> st_dequantize(np.array([[-128, 63]], dtype=np.int8), [[0.0, -1.0], [1.0, 1.0]]).round(4)
        array([[0.   , 0.498]])
    """
    precision = _check_precision(precision)
    c = np.asarray(codes)
    starts, steps = _st_steps(ranges, c.shape[-1])
    values = c.astype(np.float64)
    if precision == "int8":
        values += 128
    return values * steps + starts


def code_topk(query_codes, gallery_codes, k: int, *, exclude_self: bool = False, chunk_size: int = 8192):
    """Exact top-``k`` by the inner product of integer codes: ``(scores, indices)``, scores the
    integer dot products (float64, exact), sorted by descending score, ties by the lower gallery
    index. With ``exclude_self`` query i is gallery row i and never its own neighbour.

    Example:
        >>> G = np.array([[3, 0], [1, 1], [0, 2]], dtype=np.int8)
        >>> code_topk(np.array([[1, 1]], dtype=np.int8), G, 3)
        (array([[3., 2., 2.]]), array([[0, 1, 2]]))
    """
    Q, G = np.asarray(query_codes), np.asarray(gallery_codes)
    for name, A in (("query_codes", Q), ("gallery_codes", G)):
        if A.ndim != 2 or not np.issubdtype(A.dtype, np.integer):
            raise ValueError(f"{name}: expected a 2-d integer array, got {A.ndim}-d {A.dtype}")
    if G.shape[1] != Q.shape[1]:
        raise ValueError(f"gallery_codes: expected {Q.shape[1]} columns like query_codes, got {G.shape[1]}")
    exclude_self = check_bool(exclude_self, "exclude_self")
    if exclude_self and len(Q) != len(G):
        raise ValueError(f"exclude_self: needs as many queries as gallery rows, got {len(Q)} and {len(G)}")
    n = len(G)
    k = check_int(k, "k", minimum=1)
    if k > n - int(exclude_self):
        raise ValueError(f"k: must be at most the number of candidates ({n - int(exclude_self)}), got {k}")
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    Qf = Q.astype(np.float64)  # integer sums below 2^53: exact
    best = np.full((len(Q), 0), _NEVER, dtype=np.int64)
    for a in range(0, n, chunk_size):
        b = min(n, a + chunk_size)
        key = np.rint(Qf @ G[a:b].astype(np.float64).T).astype(np.int64) * n + (n - 1 - np.arange(a, b))
        if exclude_self:
            own = np.arange(len(Q))
            inside = (own >= a) & (own < b)
            key[own[inside], own[inside] - a] = _NEVER
        both = np.concatenate([best, key], axis=1)
        keep = min(k, both.shape[1])
        best = np.take_along_axis(both, np.argpartition(-both, keep - 1, axis=1)[:, :keep], axis=1)
    best = -np.sort(-best, axis=1)
    idx = n - 1 - np.mod(best, n)
    return np.floor_divide(best, n).astype(np.float64), idx


def st_topk(queries, gallery, k: int, ranges, *, precision: str = "int8", rescore: int = 0, exclude_self=False):
    """The top ``k`` of sentence-transformers' ``semantic_search_usearch`` (``int8``) or
    ``semantic_search_faiss`` (``uint8``) with ``exact=True``: both sides coded by
    :func:`st_quantize` on ``ranges``, searched by :func:`code_topk`; ``rescore=m`` (its
    ``rescore=True, rescore_multiplier=m``) re-ranks the ``m k`` best by the float query's dot
    product with each candidate's :func:`st_dequantize` (float64). ``(scores, indices)``,
    descending, ties by the lower index.

    Example:
        >>> G = np.array([[0.9, 0.1], [0.2, 1.0], [1.0, 0.0], [0.0, 0.2]])
        >>> R = [[0.0, 0.0], [1.0, 1.0]]
        >>> st_topk(G[:1], G, 2, R)  # raw codes (101, -103) . (126, -128) beat the query's own
        (array([[25910., 20810.]]), array([[2, 0]]))
    """
    Q = _floats(queries, "queries")
    G = _floats(gallery, "gallery")
    rescore = check_int(rescore, "rescore", minimum=0)
    k = check_int(k, "k", minimum=1)
    n_cand = len(G) - int(bool(exclude_self))
    Qc, Gc = st_quantize(Q, ranges, precision), st_quantize(G, ranges, precision)
    scores, cand = code_topk(Qc, Gc, min(n_cand, max(1, rescore) * k), exclude_self=exclude_self)
    if not rescore:
        return scores[:, :k], cand[:, :k]
    rescored = np.einsum("ij,ikj->ik", Q, st_dequantize(Gc[cand], np.asarray(ranges), precision))
    order = np.lexsort((cand, -rescored), axis=-1)[:, :k]
    return np.take_along_axis(rescored, order, axis=1), np.take_along_axis(cand, order, axis=1)


def _mteb_batch(Y: np.ndarray, fmt: str) -> np.ndarray:
    """mteb's codes of one ``encode`` call's float32 rows ``Y``, as float32."""
    bits = MTEB_FORMATS[fmt]
    if fmt == "binary":
        return np.where(Y > 0, np.float32(1), np.float32(0))
    if fmt == "fp8":
        return e4m3_decode(e4m3_encode(Y)).astype(np.float32)
    mins, maxs = Y.min(axis=0), Y.max(axis=0)
    steps = (maxs - mins) / np.float32(2**bits - 1)
    subtract = np.float32(0 if fmt.startswith("u") else 2 ** (bits - 1))
    with np.errstate(divide="ignore", invalid="ignore"):  # a constant dimension: mteb divides by zero too
        return np.floor((Y - mins) / steps) - subtract


def mteb_quantize(X, fmt: str, batch: int = MTEB_BATCH) -> np.ndarray:
    """mteb's ``CompressionWrapper`` output (``fmt`` one of :data:`MTEB_FORMATS`) for the rows
    ``X``, cast to float32 first as mteb casts an encoder's array: the codes as float32, each run
    of ``batch`` consecutive rows calibrated on its own per-dimension minima and maxima (the
    integer formats; a run whose dimension is constant gives NaN there, as mteb's division by zero
    does).

    Example:
        >>> mteb_quantize([[0.0, 1.0], [1.0, -1.0], [0.5, 0.0]], "int4")  # a maximum / float32(1 / 15) < 15
        array([[-8.,  6.],
               [ 6., -8.],
               [-1., -1.]], dtype=float32)
    """
    if fmt not in MTEB_FORMATS:
        raise ValueError(f"fmt: expected one of {list(MTEB_FORMATS)}, got {fmt!r}")
    X = as_matrix(X, "X").astype(np.float32)
    batch = check_int(batch, "batch", minimum=1)
    out = np.empty(X.shape, dtype=np.float32)
    for a in range(0, len(X), batch):
        out[a : a + batch] = _mteb_batch(X[a : a + batch], fmt)
    return out
