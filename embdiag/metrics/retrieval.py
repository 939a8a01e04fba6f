"""Exact cosine top-k search and the neighbour metrics built on it.

:func:`topk` returns, for each query, the ``k`` gallery rows of highest cosine
similarity, sorted by descending score with ties broken by the lower gallery index.
The gallery is read in row chunks (it may be an ``np.memmap`` larger than RAM, whose pages
are released once read: :mod:`embdiag._mapped`); extra memory is bounded by one ``query
block x chunk`` score buffer plus one normalized gallery chunk, independent of the gallery size.

Identity metrics compare two rankings (:func:`overlap_at_k`, :func:`boundary_margin`);
relevance metrics compare a ranking with labels or positives (:func:`precision_at_k`,
:func:`hit_at_k`, :func:`recall_at_k`). Every metric takes ``per_query=True`` to
return one value per query (for paired bootstraps) instead of the mean.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._blas import single_thread
from .._mapped import release_rows, take_rows
from .._scaling import unit_scale_rows, unsafe_norms
from .._validate import as_float, as_matrix, check_bool, check_int, check_k, same_length

__all__ = [
    "topk",
    "search_plan",
    "unit_queries",
    "scan_chunks",
    "merge_topk",
    "precision_at_k",
    "random_floor",
    "hit_at_k",
    "recall_at_k",
    "overlap_at_k",
    "ann_recall",
    "boundary_margin",
]

_BUFFER_BYTES = 1 << 25  # score buffer budget (32 MiB) used to pick default chunk sizes
_SELECT_BUFFER = 1 << 16  # entries of the buffer that selects a chunk's k-th scores (time only)


def _normalize(X: np.ndarray, name: str, dtype, offset: int = 0, out=None) -> np.ndarray:
    """Unit rows in ``dtype``, written to ``out`` when given. Raises on zero rows.

    Norms are accumulated in ``dtype``. Rows whose squares over- or underflow there (or
    that do not fit ``dtype`` at all, e.g. 1e39 for float32) are first scaled exactly by a
    power of two (:mod:`embdiag._scaling`); other rows are untouched. NaN or infinite
    entries are reported by ``as_matrix``.
    """
    # Equivalent mutants: no step here raises an invalid flag (squares are non-negative, NaN
    # propagates quietly), so invalid="ignore" may be dropped; copy=None copies no more than
    # False; "IJ,IJ->I" is the same contraction.
    with np.errstate(over="ignore", invalid="ignore"):
        Xd = X.astype(dtype, copy=False)
        sq = np.einsum("ij,ij->i", Xd, Xd)
    bad = np.flatnonzero(unsafe_norms(sq, dtype))
    if bad.size:
        rows = X[bad]
        nonfinite = bad[~np.isfinite(rows).all(axis=1)]
        if nonfinite.size:  # (as as_matrix says it, with indices into the whole gallery)
            raise ValueError(
                f"{name}: contains NaN or infinite values ({nonfinite.size} bad row(s), "
                f"first at index {offset + int(nonfinite[0])})"
            )
        # else the squares over- or underflowed
        Xd = Xd.copy() if Xd is X else Xd  # (copying also when Xd is not X: memory only; equivalent)
        Xd[bad] = unit_scale_rows(rows.astype(np.float64))  # astype(None) is float64 (equivalent)
        sq[bad] = np.einsum("ij,ij->i", Xd[bad], Xd[bad])  # "IJ,IJ->I": the same (equivalent)
    norms = np.sqrt(sq)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(f"{name}: zero-norm row at index {offset + int(zero[0])}; cosine is undefined")
    inv = (1.0 / norms).astype(Xd.dtype)
    if out is None:
        return Xd * inv[:, None]
    np.multiply(Xd, inv[:, None], out=out, casting="same_kind")  # the ufunc default (equivalent if dropped)
    return out


def _check_gallery(gallery) -> np.ndarray:
    """Shape/dtype checks without converting or scanning the whole (possibly mapped) gallery."""
    g = np.asarray(gallery)
    if g.dtype == object or not (np.issubdtype(g.dtype, np.number) or g.dtype == bool):
        raise ValueError(f"gallery: expected a numeric array, got dtype {g.dtype}")
    if np.iscomplexobj(g):
        raise ValueError("gallery: complex values are not supported")
    if g.ndim != 2:
        raise ValueError(f"gallery: expected a 2-D array, got shape {g.shape}")
    if g.size == 0:
        raise ValueError(f"gallery: empty array (shape {g.shape})")
    return g


def _first_chunk(k: int) -> int:
    # Sets chunk sizes and the worker split only: mutants of its constants are equivalent
    # (time only; results are exact for any chunking and split).
    return max(1024, 16 * k)


def _schedule(start: int, stop: int, cs: int, k: int):
    """Chunk bounds covering gallery rows ``start:stop``: start small, double up to ``cs``.

    The first chunk is selected with a full per-row top-k; later chunks only with a
    compare against the running k-th score. Doubling keeps the expected number of
    survivors per query and chunk near ``k`` from the start.
    """
    g0, step = start, min(cs, _first_chunk(k))
    while g0 < stop:
        g1 = min(stop, g0 + step)
        yield g0, g1
        g0, step = g1, min(cs, 2 * step)  # another growth factor (3) only changes time: equivalent


def _merge_lexsort(best_s, best_i, rows, cand_s, cand_i, k):
    """Merge candidates into the running top-k of their rows, order (-score, index)."""
    urows, inv = np.unique(rows, return_inverse=True)
    m = len(urows)
    all_r = np.concatenate([np.repeat(np.arange(m), k), inv])
    all_s = np.concatenate([best_s[urows].ravel(), cand_s])
    all_i = np.concatenate([best_i[urows].ravel(), cand_i])
    order = np.lexsort((all_i, -all_s, all_r))
    # every row id occurs k times in all_r, so minlength=m may be dropped (equivalent)
    starts = np.concatenate([[0], np.cumsum(np.bincount(all_r, minlength=m))[:-1]])
    take = order[starts[:, None] + np.arange(k)]
    best_s[urows] = all_s[take]
    best_i[urows] = all_i[take]


def _merge(best_s, best_i, rows, cand_s, cand_i, k):
    """Merge one chunk's candidates into the running top-k.

    ``rows`` ascend and, within a row, candidate indices ascend and exceed every index
    already held (chunks are visited in order). Each touched row is laid out as
    ``[current top-k | candidates]`` and sorted by score with a *stable* sort, which
    then orders equal scores by index. Rows with very many candidates (ties, adversarial
    order) go through a lexsort instead, to keep the padded layout small.
    """
    urows, starts, counts = np.unique(rows, return_index=True, return_counts=True)
    heavy = counts > 64 * k  # either path is exact: mutants of the threshold are equivalent
    if heavy.any():
        sel = np.isin(rows, urows[heavy])
        _merge_lexsort(best_s, best_i, rows[sel], cand_s[sel], cand_i[sel], k)
        keep = ~sel
        rows, cand_s, cand_i = rows[keep], cand_s[keep], cand_i[keep]
        if not rows.size:
            return
        urows, starts, counts = np.unique(rows, return_index=True, return_counts=True)
    u = len(urows)
    width = k + int(counts.max())
    # Equivalent mutants: a NaN padding sorts last like -inf (a row always holds k real
    # entries); a float64 S2 holds float32 scores exactly; np.full infers int64 for I2.
    S2 = np.full((u, width), -np.inf, dtype=best_s.dtype)
    I2 = np.full((u, width), np.iinfo(np.int64).max, dtype=np.int64)
    S2[:, :k] = best_s[urows]
    I2[:, :k] = best_i[urows]
    r = np.repeat(np.arange(u), counts)
    c = k + np.arange(len(rows)) - np.repeat(starts, counts)
    S2[r, c] = cand_s
    I2[r, c] = cand_i
    np.negative(S2, out=S2)
    # axis=1 is the default last axis here and numpy reads "STABLE" as "stable" (equivalent)
    order = np.argsort(S2, axis=1, kind="stable")[:, :k]
    best_s[urows] = -np.take_along_axis(S2, order, axis=1)
    best_i[urows] = np.take_along_axis(I2, order, axis=1)


def _workers() -> int:
    """Worker threads for :func:`topk`: one per core (each runs single-threaded BLAS)."""
    # Equivalent mutants of the constants: the thread count changes time only.
    return max(1, min(8, os.cpu_count() or 1))


def _kth_largest(S: np.ndarray, k: int, buf: np.ndarray) -> np.ndarray:
    """The ``k``-th largest entry of each row of ``S`` (one of the row's own values: a selection).

    Blocks of rows are copied into ``buf`` (at least one row long) and partitioned there, so
    ``S`` is left as it is and the extra memory is ``buf``.
    """
    n, m = S.shape
    out = np.empty(n, dtype=S.dtype)
    rows = len(buf) // m
    for i in range(0, n, rows):
        block = buf[: min(rows, n - i) * m].reshape(-1, m)
        np.copyto(block, S[i : i + rows])
        block.partition(m - k, axis=1)
        out[i : i + rows] = block[:, m - k]
    return out


def _scan(Qb, q0, G, chunks, k, exclude_self, dtype, failed=None, share=0):
    """Running top-k of the query block ``Qb`` (rows ``q0:``) over the given gallery chunks.

    Chunks must ascend. Returns ``(scores, indices)``, or ``(g0, None, error)`` if a
    chunk starting at ``g0`` is invalid (so the caller can report the first one). With
    ``failed`` (one flag per share, shares in gallery order) the scan sets
    ``failed[share]`` on error and stops once an earlier share has failed: a later share's
    failure never stops it, so the first bad row is always reached. (``share`` is read only
    with ``failed``, which ``topk`` passes with the share's index: its default is equivalent.)
    """
    nb, d = Qb.shape
    q1 = q0 + nb
    # Equivalent mutants: float64 bs holds float32 scores exactly; np.full infers int64 for bi;
    # the placeholders' index (-1) is never returned: with k below the number of candidates
    # and finite cosines every placeholder is replaced.
    bs = np.full((nb, k), -np.inf, dtype=dtype)
    bi = np.full((nb, k), -1, dtype=np.int64)
    cs = max(g1 - g0 for g0, g1 in chunks)
    sbuf = np.empty(nb * cs, dtype=dtype)
    mbuf = np.empty(nb * cs, dtype=bool)
    gbuf = np.empty((cs, d), dtype=dtype)
    # (min: one row still fits; a float64 buffer holds float32 scores exactly; equivalent)
    pbuf = np.empty(max(cs, _SELECT_BUFFER), dtype=dtype)
    # The first/dense flags pick a selection path; every path keeps each entry that can enter
    # the top-k (the merge drops the rest), so mutants of the flags change time only (equivalent).
    first = True
    for g0, g1 in chunks:
        if failed is not None and any(failed[:share]):
            break  # (return: topk raises the earlier share's error and reads no result; equivalent)
        m = g1 - g0
        try:
            chunk = G[g0:g1]
            if chunk.dtype not in (np.float32, np.float64):
                # _normalize names bad rows; dtype and shape passed _check_gallery, so this call
                # never raises and its name is never shown (mutants of it are equivalent)
                chunk = as_matrix(chunk, "gallery", finite=False)
            Gc = _normalize(chunk, "gallery", dtype, offset=g0, out=gbuf[:m])
            release_rows(G, g0, g1)  # a memory-mapped gallery keeps no read pages resident
        except ValueError as err:
            if failed is not None:
                failed[share] = True  # (a falsy flag: later shares scan on, time only; equivalent)
            return g0, None, err
        S = sbuf[: nb * m].reshape(nb, m)
        np.matmul(Qb, Gc.T, out=S)
        if exclude_self:
            lo, hi = max(q0, g0), min(q1, g1)
            if lo < hi:  # (lo <= hi: an empty range; equivalent)
                r = np.arange(lo, hi)
                S[r - q0, r - g0] = -np.inf
        M = mbuf[: nb * m].reshape(nb, m)
        # Keep entries that beat the running k-th score. (An entry equal to it has a
        # higher index than the entry holding it, so it never enters.)
        dense = first
        if not dense:
            np.greater(S, bs[:, k - 1 : k], out=M)
            dense = np.count_nonzero(M) > 4 * k * nb  # threshold: time only (equivalent mutants)
        if dense and m > k:  # (m >= k: at m == k the k-th score is the minimum; equivalent)
            # First chunk or an adversarial order: keep entries at least as high as the
            # chunk's own k-th score (ties kept, so the lower index can win).
            kth = _kth_largest(S, k, pbuf)
            if first:
                np.greater_equal(S, kth[:, None], out=M)
            else:
                M &= S >= kth[:, None]  # (= or |=: more candidates, the merge drops them; equivalent)
        elif dense:
            M[...] = True
        first = False
        flat = np.flatnonzero(M)
        if flat.size:
            rows, cols = np.divmod(flat, m)
            _merge(bs, bi, rows, S.ravel()[flat], cols + g0, k)
    return bs, bi


def search_plan(
    n_queries: int, n_gallery: int, k: int, chunk_size: int | None = None, dtype=np.float32
) -> tuple[int, list[list[tuple[int, int]]]]:
    """How :func:`topk` splits the work: ``(query_block, shares)``, the number of queries
    scored at a time and, per worker share, the ascending ``(start, stop)`` gallery chunks it
    scans. Each chunk is one single-threaded GEMM, so a chunk's scores depend only on its rows
    and the query block: scanning the same chunks elsewhere (:func:`scan_chunks`, e.g. one
    Ray task per group of chunks) gives the same scores, hence the same top-k.

    Examples
    --------
    >>> search_plan(3, 10, k=2, chunk_size=4)  # one share of three chunks
    (3, [[(0, 4), (4, 8), (8, 10)]])
    """
    dtype = np.dtype(dtype)
    # Equivalent mutants: the query block (8193), the clip's bounds (257, 16385, no lower
    # bound: smaller chunks) and / for // (int() truncates) change chunk sizes and time only.
    qb = min(n_queries, 8192)
    if chunk_size is None:
        chunk_size = int(np.clip(_BUFFER_BYTES // (dtype.itemsize * qb * _workers()), 256, 16384))
    else:
        chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    cs = int(min(chunk_size, n_gallery))
    # Each worker scans one contiguous share of the gallery (at least 4 chunks' worth).
    # Equivalent mutants: other worker counts (N / ..., 5 * ...) and float bounds (cast by
    # int() below) change time only.
    n_workers = int(max(1, min(_workers(), n_gallery // (4 * _first_chunk(k)))))
    bounds = np.linspace(0, n_gallery, n_workers + 1).astype(int)
    return qb, [list(_schedule(int(a), int(b), cs, k)) for a, b in zip(bounds[:-1], bounds[1:])]


def unit_queries(queries, dtype=np.float32) -> np.ndarray:
    """The queries as :func:`topk` scores them: unit rows in ``dtype`` (raises on NaN, inf or zero rows).

    Examples
    --------
    >>> np.round(unit_queries([[3.0, 4.0]]), 4)
    array([[0.6, 0.8]], dtype=float32)
    """
    return _normalize(as_matrix(queries, "queries"), "queries", np.dtype(dtype))


def scan_chunks(
    unit_q, gallery, k: int, chunks, q0: int = 0, exclude_self: bool = False, dtype=np.float32
) -> tuple[np.ndarray, np.ndarray]:
    """The top ``k`` (scores, gallery indices) of the unit query rows ``unit_q`` (rows ``q0:``
    of :func:`unit_queries`) over the ascending gallery ``chunks`` only, computed as
    :func:`topk` computes them (one single-threaded GEMM per chunk); :func:`merge_topk` of the
    parts covering every chunk of :func:`search_plan` is ``topk``'s result. Rows without ``k``
    candidates keep ``-inf`` / ``-1`` placeholders.

    Examples
    --------
    >>> G = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-0.6, 0.8]])
    >>> scan_chunks(unit_queries(G[:1]), G, 1, [(2, 4)])[1]  # query 0's best among gallery rows 2 and 3
    array([[2]])
    >>> parts = [scan_chunks(unit_queries(G), G, 2, chunks, exclude_self=True) for chunks in search_plan(4, 4, 2)[1]]
    >>> np.array_equal(merge_topk(parts, 2)[1], topk(G, G, 2, exclude_self=True)[1])
    True
    """
    with single_thread():
        out = _scan(unit_q, q0, _check_gallery(gallery), list(chunks), k, exclude_self, np.dtype(dtype))
    if len(out) == 3:
        raise out[2]
    return out


def merge_topk(parts, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The top ``k`` of each row over ``parts`` (a list of ``(scores, indices)`` of equal row
    counts), by descending score, ties by the lower index, as :func:`topk` orders them.

    Examples
    --------
    >>> parts = [(np.array([[0.9, 0.1]]), np.array([[3, 5]])), (np.array([[0.5, 0.2]]), np.array([[0, 1]]))]
    >>> merge_topk(parts, 2)
    (array([[0.9, 0.5]]), array([[3, 0]]))
    """
    S = np.concatenate([p[0] for p in parts], axis=1)
    I = np.concatenate([p[1] for p in parts], axis=1)
    order = np.lexsort((I, -S), axis=-1)[:, :k]
    return np.take_along_axis(S, order, axis=1), np.take_along_axis(I, order, axis=1)


def topk(queries, gallery, k: int, exclude_self: bool = False, chunk_size: int | None = None, dtype=np.float32):
    """Exact cosine top-``k`` of each query over the gallery rows.

    Returns ``(scores, indices)``, both of shape ``(n_queries, k)``, sorted by descending
    score; equal scores are ordered by the lower gallery index. Rows are normalized
    and scored in ``dtype``: ``np.float32`` (default; scores within ~1e-6 of float64,
    so the order of near-ties closer than that follows float32 rounding) or
    ``np.float64`` (the exact reference). With ``exclude_self=True`` query ``i`` is
    gallery row ``i`` and never its own neighbour (needs equal row counts). ``k`` must be
    smaller than the number of candidates. Each worker (below) scores at most
    ``chunk_size`` gallery rows at a time; by default the workers share a 32 MiB score
    buffer. Extra memory is the score buffers, boolean masks of a quarter of their size
    (float32), one normalized gallery chunk and a selection buffer of 65,536 scores (or one
    chunk row) per worker, whatever the gallery size (about 70 MB for 1,000 queries at
    d = 768); an explicit ``chunk_size`` is per worker, so those buffers grow with the number
    of workers. The gallery may be an ``np.memmap``; non-finite or zero rows raise
    ``ValueError`` naming the first such row.

    Each chunk is one BLAS GEMM; an entry is kept only if it beats the query's running
    k-th score (the first chunk, and any chunk where too many pass, use the chunk's own
    k-th score, found by ``np.partition``, ties kept), so selection costs one compare pass
    instead of a per-chunk sort. Chunk sizes double from 1,024 rows up to ``chunk_size``.
    With two or more cores and at least 8,192 gallery rows, the gallery is split into one contiguous
    share per core, each scanned by a thread with single-threaded BLAS (so no serial
    selection phase leaves a core idle), and the shares' top-k lists are merged. BLAS is
    single-threaded with one share too, so the scores do not depend on the thread count
    (:func:`search_plan`). ``benchmarks/bench_metrics.py`` times it against FAISS
    ``IndexFlatIP``, the float32 GEMM roofline and chunked numpy matmul + argpartition.

    Examples
    --------
    >>> G = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-0.6, 0.8]])
    >>> scores, indices = topk(G, G, k=2, exclude_self=True)
    >>> indices
    array([[1, 2],
           [0, 2],
           [3, 1],
           [2, 1]])
    >>> scores.shape, scores.dtype, f"{scores[0, 0]:.4f}"
    ((4, 2), dtype('float32'), '0.8000')
    """
    if dtype not in (np.float32, np.float64, "float32", "float64"):
        raise ValueError(f"dtype: expected float32 or float64, got {dtype!r}")
    dtype = np.dtype(dtype)
    exclude_self = check_bool(exclude_self, "exclude_self")
    Q = as_matrix(queries, "queries")
    G = _check_gallery(gallery)
    nq, d = Q.shape
    N = G.shape[0]
    if G.shape[1] != d:
        raise ValueError(f"gallery: has {G.shape[1]} columns but queries have {d}")
    if exclude_self:
        same_length(queries=Q, gallery=G)
    own = ", each query's own excluded" if exclude_self else ""
    k = check_k(k, N - 1 if exclude_self else N, candidates=f" gallery rows{own}")
    Qn = _normalize(Q, "queries", dtype)
    qb, jobs = search_plan(nq, N, k, chunk_size, dtype)
    n_workers = len(jobs)
    best_s = np.empty((nq, k), dtype=dtype)
    best_i = np.empty((nq, k), dtype=np.int64)
    for q0 in range(0, nq, qb):
        q1 = min(nq, q0 + qb)
        if n_workers == 1:
            with single_thread():  # as in every share: a chunk's scores do not depend on the core count
                results = [_scan(Qn[q0:q1], q0, G, jobs[0], k, exclude_self, dtype)]
        else:
            # Equivalent mutants: without the failure flags (or with a larger pool) the later
            # shares scan on, time only; the lowest failed chunk is still reported.
            failed = [False] * n_workers
            with single_thread(), ThreadPoolExecutor(n_workers) as pool:
                futures = [
                    pool.submit(_scan, Qn[q0:q1], q0, G, job, k, exclude_self, dtype, failed, i)
                    for i, job in enumerate(jobs)
                ]
                results = [f.result() for f in futures]
        errors = [r for r in results if isinstance(r, tuple) and len(r) == 3]
        if errors:
            # errors are in share order with distinct, ascending starts: any key (or none)
            raise min(errors, key=lambda e: e[0])[2]  # picks the first (equivalent mutants)
        bs, bi = results[0]
        for s_, i_ in results[1:]:
            _merge_lexsort(bs, bi, np.repeat(np.arange(q1 - q0), k), s_.ravel(), i_.ravel(), k)
        best_s[q0:q1], best_i[q0:q1] = bs, bi
    return best_s, best_i


# ----------------------------------------------------------------------------- metrics


def _neighbors(neighbors, name: str = "neighbors") -> np.ndarray:
    a = np.asarray(neighbors)
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D (n_queries, k) index array, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name}: empty array (shape {a.shape})")
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{name}: expected integer indices, got dtype {a.dtype}")
    if a.min() < 0:
        raise ValueError(f"{name}: negative index {a.min()}")
    return a


def _check_range(nb: np.ndarray, n: int, name: str) -> None:
    if nb.min() < 0 or nb.max() >= n:
        raise ValueError(f"{name}: indices must lie in [0, {n}), got range [{nb.min()}, {nb.max()}]")


def _reduce(values: np.ndarray, per_query: bool):
    return values if check_bool(per_query, "per_query") else float(values.mean())


def _label_array(labels, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``labels`` as one 1-D array (missing entries kept in place) and the mask of labelled ones."""
    from .labels import labelled_values  # (imported here: the labels module loads pandas)

    a = np.asarray(labels)
    keep = labelled_values(a, name)[1]
    return (a if keep.all() else np.where(keep, a.astype(object), None)), keep


def precision_at_k(neighbors, labels, query_labels=None, per_query: bool = False):
    """P@k: share of each query's ``k`` neighbours whose label equals the query's, averaged.

    ``neighbors`` is ``(n_queries, k)`` gallery indices; ``labels`` are the gallery labels.
    Without ``query_labels`` the queries are the gallery rows themselves (query ``i`` is
    row ``i``, searched with ``exclude_self=True``); a query listed among its own
    neighbours raises ``ValueError``.

    Missing labels (None, NaN, pandas NA): a query without a label is skipped, and among its
    ``k`` neighbours only the labelled ones count, so a query's value is the share of its
    labelled neighbours that share its label (undefined, NaN, when none of them is labelled).
    The mean is over the queries with a value; ``per_query`` gives NaN for the others.
    Without missing labels this is the share of all ``k``.

    Examples
    --------
    >>> neighbors = np.array([[1], [0], [3], [0]])  # each row's nearest other row
    >>> precision_at_k(neighbors, [0, 0, 1, 1]), precision_at_k(neighbors, [0, 0, 1, 1], per_query=True)
    (0.75, array([1., 1., 1., 0.]))
    >>> precision_at_k([[1, 2], [0, 2], [0, 1]], ["a", "a", None], per_query=True)  # row 2: no label
    array([ 1.,  1., nan])
    """
    nb = _neighbors(neighbors)
    lab, has = _label_array(labels, "labels")
    if query_labels is None:
        same_length(neighbors=nb, labels=lab)
    if nb.max() >= len(lab):
        raise ValueError(f"labels: has {len(lab)} entries (one per gallery row) but neighbors index row {nb.max()}")
    if query_labels is None:
        if (nb == np.arange(len(nb))[:, None]).any():
            raise ValueError("neighbors: a query appears among its own neighbours; search with exclude_self=True")
        ql, q_has = lab, has
    else:
        ql, q_has = _label_array(query_labels, "query_labels")
        same_length(neighbors=nb, query_labels=ql)
    if has.all() and q_has.all():
        return _reduce((lab[nb] == ql[:, None]).mean(axis=1), per_query)
    counted = has[nb]
    n_counted = counted.sum(axis=1)
    defined = q_has & (n_counted > 0)
    values = np.full(len(nb), np.nan)
    values[defined] = ((lab[nb] == ql[:, None]) & counted)[defined].sum(axis=1) / n_counted[defined]
    if not defined.any():
        raise ValueError("labels: no query has a label and a labelled neighbour; P@k is undefined")
    return values if check_bool(per_query, "per_query") else float(values[defined].mean())


def random_floor(labels) -> float:
    """Random-neighbour floor of P@k: ``sum_c share_c**2``, the chance that a random item
    shares the label of a random query (drawn with replacement), over the labelled items.

    Examples
    --------
    >>> random_floor([0, 0, 1, 1]), random_floor([0, 0, 0, 1]), random_floor(["a", None, "b"])
    (0.5, 0.625, 0.5)
    """
    from .labels import labelled_values  # (imported here: the labels module loads pandas)

    lab = labelled_values(labels, "labels")[0]
    _, counts = np.unique(lab, return_counts=True)
    share = counts / counts.sum()
    return float(np.sum(share * share))


def _positives(positives, n_queries: int):
    """Normalize ``positives`` to an int matrix of unique indices per row (padded with -1)."""
    if isinstance(positives, np.ndarray) or (
        isinstance(positives, (list, tuple)) and len(positives) and np.isscalar(positives[0])
    ):
        P = np.asarray(positives)
        if P.dtype == bool:
            if P.ndim != 2:
                raise ValueError(f"positives: a boolean mask must be 2-D (n_queries, n_gallery), got shape {P.shape}")
            rows = [np.flatnonzero(row) for row in P]
            P = None
        elif np.issubdtype(P.dtype, np.integer):
            if P.ndim == 1:
                P = P[:, None]
            if P.ndim != 2 or P.shape[1] == 0:
                raise ValueError(f"positives: expected 1-D or 2-D integer indices, got shape {np.shape(positives)}")
        else:
            raise ValueError(f"positives: expected integer indices or a boolean mask, got dtype {P.dtype}")
    else:
        rows = [np.asarray(sorted(row) if isinstance(row, (set, frozenset)) else row).ravel() for row in positives]
        for row in rows:
            if row.size and not np.issubdtype(row.dtype, np.integer):
                raise ValueError(f"positives: expected integer indices, got dtype {row.dtype}")
        P = None
    if P is None:
        if len(rows) != n_queries:
            raise ValueError(f"length mismatch: neighbors has {n_queries}, positives has {len(rows)}")
        # Equivalent mutants: a wider padding (max(2, ...)) matches no neighbour and is not
        # counted; np.full infers int64 (and P is cast to int64 below).
        width = max(1, max(row.size for row in rows))
        P = np.full((n_queries, width), -1, dtype=np.int64)
        for i, row in enumerate(rows):
            P[i, : row.size] = row
    elif len(P) != n_queries:
        raise ValueError(f"length mismatch: neighbors has {n_queries}, positives has {len(P)}")
    # Equivalent mutants: axis=1 is the default last axis; float64 indices (astype(None)) compare
    # exactly with integer neighbours; P is never empty (n_queries >= 1, width >= 1), so the
    # size guard's else branch is never taken.
    P = np.sort(P.astype(np.int64), axis=1)
    if (P[P != -1] < 0).any() if P.size else False:
        raise ValueError("positives: negative gallery index")
    P[:, 1:][P[:, 1:] == P[:, :-1]] = -1  # drop duplicates (-2 would do the same: equivalent)
    counts = np.count_nonzero(P >= 0, axis=1)
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        raise ValueError(f"positives: {empty.size} query(ies) without positives (first at index {empty[0]})")
    return P, counts


def _hits(nb: np.ndarray, positives):
    P, counts = _positives(positives, len(nb))
    return (nb[:, :, None] == P[:, None, :]).any(axis=2), counts


def _first_k(nb: np.ndarray, k):
    if k is None:
        return nb
    k = check_k(k, nb.shape[1] + 1, "k")  # "k" is check_k's default name (equivalent if dropped)
    return nb[:, :k]


_POSITIVES_DOC = """
    ``positives`` lists each query's relevant gallery indices, in one of these forms:
    a 1-D integer array (one positive per query, e.g. a caption's parent image), a 2-D
    integer array (the same number of positives per query, e.g. an image's five
    captions), a list of integer arrays or sets (any number, at least one), or a
    boolean mask of shape ``(n_queries, n_gallery)``. In integer arrays ``-1`` is padding
    (no positive), so ragged lists may be given as one padded array; duplicates count once,
    other negative indices raise. ``k`` (default: all columns of ``neighbors``) uses the
    first ``k`` neighbours only.
"""


def hit_at_k(neighbors, positives, k: int | None = None, per_query: bool = False):
    """Hit@k: whether at least one positive is among the first ``k`` neighbours, averaged.

    Examples
    --------
    >>> neighbors = np.array([[2, 0], [1, 3]])
    >>> hit_at_k(neighbors, [0, 2]), hit_at_k(neighbors, [0, 2], k=1), hit_at_k(neighbors, [0, 2], per_query=True)
    (0.5, 0.0, array([1., 0.]))
    """
    nb = _first_k(_neighbors(neighbors), k)
    hits, _ = _hits(nb, positives)
    return _reduce(hits.any(axis=1).astype(np.float64), per_query)  # astype(None): float64 (equivalent)


def recall_at_k(neighbors, positives, k: int | None = None, per_query: bool = False):
    """Recall@k: fraction of each query's positives found among its first ``k`` neighbours,
    averaged over queries (multi-positive, e.g. caption recall@10).

    Examples
    --------
    >>> neighbors = np.array([[2, 0], [1, 3]])
    >>> recall_at_k(neighbors, [[0, 2], [3, 4]]), recall_at_k(neighbors, [{0, 2}, {3, 4}], per_query=True)
    (0.75, array([1. , 0.5]))
    """
    nb = _first_k(_neighbors(neighbors), k)
    hits, counts = _hits(nb, positives)
    return _reduce(hits.sum(axis=1) / counts, per_query)


hit_at_k.__doc__ += _POSITIVES_DOC
recall_at_k.__doc__ += _POSITIVES_DOC


def overlap_at_k(neighbors_a, neighbors_b, per_query: bool = False):
    """Overlap@k: per query ``|A ∩ B| / k`` of two top-k identity lists, averaged.

    Identity, not relevance: 1 means the same neighbours (in any order). Queries whose
    overlap is below 1 are the queries whose top-k changed.

    Examples
    --------
    >>> a, b = np.array([[1, 2], [0, 2]]), np.array([[2, 1], [0, 3]])
    >>> overlap_at_k(a, b), overlap_at_k(a, b, per_query=True)
    (0.75, array([1. , 0.5]))
    """
    a = _neighbors(neighbors_a, "neighbors_a")
    b = _neighbors(neighbors_b, "neighbors_b")
    if a.shape != b.shape:
        raise ValueError(f"neighbors_a and neighbors_b: shapes differ ({a.shape} vs {b.shape})")
    values = (a[:, :, None] == b[:, None, :]).any(axis=2).sum(axis=1) / a.shape[1]
    return _reduce(values, per_query)


def ann_recall(queries, gallery, found, exact, per_query: bool = False):
    """Recall@k of an approximate search, tie-aware (ann-benchmarks' ``knn`` recall): per query,
    the share of its ``k`` ``found`` rows whose cosine with it is at least the lowest cosine
    among its ``k`` ``exact`` neighbours, averaged. A row tied with the k-th exact neighbour
    counts as found, so an index that returns a tied row in place of the one exact search kept
    is not penalized; ann-benchmarks adds 1e-3 to that threshold, this uses none. Cosines are
    float64 dot products of rows normalized in float64; ``gallery`` may be a memory-map (only
    the rows named are read).

    Examples
    --------
    >>> G = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    >>> q = np.array([[1.0, 0.0]])
    >>> ann_recall(q, G, [[1, 3]], [[0, 3]]), ann_recall(q, G, [[2, 3]], [[0, 3]])  # row 1 ties row 0
    (1.0, 0.5)
    """
    Q = as_matrix(queries, "queries", dtype=np.float64)
    F = _neighbors(found, "found")
    E = _neighbors(exact, "exact")
    if F.shape != E.shape or len(F) != len(Q):
        raise ValueError(
            f"found and exact: expected one row of k neighbours per query ({len(Q)} queries), "
            f"got shapes {F.shape} and {E.shape}"
        )
    n, d = np.shape(gallery)
    if d != Q.shape[1]:
        raise ValueError(f"gallery: expected {Q.shape[1]} columns like queries, got {d}")
    for nb, name in ((F, "found"), (E, "exact")):
        _check_range(nb, n, name)
    rows, inverse = np.unique(np.concatenate([F, E], axis=1), return_inverse=True)
    R = np.asarray(take_rows(gallery, rows), dtype=np.float64)
    R /= np.linalg.norm(R, axis=1, keepdims=True)
    Qu = Q / np.linalg.norm(Q, axis=1, keepdims=True)
    at = inverse.reshape(len(Q), -1)
    cos = np.empty(at.shape)
    for a in range(0, len(Q), 512):  # 512 queries' rows gathered at a time
        cos[a : a + 512] = np.einsum("qkd,qd->qk", R[at[a : a + 512]], Qu[a : a + 512])
    k = F.shape[1]
    threshold = cos[:, k:].min(axis=1, keepdims=True)
    return _reduce((cos[:, :k] >= threshold).sum(axis=1) / k, per_query)


def boundary_margin(scores, k: int) -> np.ndarray:
    """Per-query boundary margin: score at rank ``k`` minus score at rank ``k + 1``.

    ``scores`` is ``(n_queries, >= k + 1)`` sorted descending (as from
    ``topk(..., k + 1)``). A perturbation of every score by less than half the margin
    cannot change the top-``k`` set. Returns an array (one margin per query).

    Examples
    --------
    >>> scores = np.array([[0.9, 0.5, 0.4], [0.8, 0.7, 0.1]])
    >>> np.round(boundary_margin(scores, k=1), 4), np.round(boundary_margin(scores, k=2), 4)
    (array([0.4, 0.1]), array([0.1, 0.6]))
    """
    S = as_float(scores, "scores", ndim=2)
    if S.shape[1] < 2:
        raise ValueError(f"scores: needs at least 2 columns, got {S.shape[1]}")
    k = check_k(k, S.shape[1], "k")  # default name "k" and default axis -1 below (equivalent)
    if (np.diff(S, axis=1) > 0).any():
        raise ValueError("scores: rows must be sorted in descending order")
    return S[:, k - 1] - S[:, k]
