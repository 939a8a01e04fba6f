"""Exact top-k over a gallery split into row shards, each searched by a Ray task, merged exactly.

:func:`sharded_topk` returns what :func:`embdiag.metrics.retrieval.topk` returns on this
machine, bit for bit: it scans the very chunks of topk's plan
(:func:`~embdiag.metrics.retrieval.search_plan`), grouped into shards of at most
``shard_rows`` rows, one task per shard and query block, each chunk one single-threaded GEMM
as in topk (:func:`~embdiag.metrics.retrieval.scan_chunks`), and merges the shards' top-k
lists by descending score, ties by the lower index. (Workers on another CPU architecture may
pick other BLAS kernels, whose float32 rounding differs: bit-equality needs the same kind of
machine.) A gallery memory-mapped from a ``.npy`` file is opened by each task from that file,
which every node must see; any other array goes through Ray's object store once.
:func:`sharded_check` splits the input check (NaN, inf and zero rows) the same way, and
:func:`block_mapper` runs the row blocks of :func:`embdiag.metrics.geometry.summary` (its Gram,
sums and largest magnitude) as tasks: the blocks' sums are added on the caller in block order,
as a local run adds them, so the geometry is the local geometry bit for bit.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_matrix, check_int, check_k
from ..cluster import parse_address
from ..data.files import InputError, bad_rows, refuse_bad_rows
from ..metrics.retrieval import merge_topk, scan_chunks, search_plan, unit_queries

__all__ = ["SHARD_ROWS", "check_address", "shards", "sharded_topk", "sharded_check", "block_mapper"]

#: Default gallery rows per shard (one task each): 1,000,000 rows of d = 768 float32 are 3 GB.
SHARD_ROWS = 1_000_000


def check_address(address: str) -> None:
    """Raise :class:`~embdiag.data.files.InputError` (naming ``--cluster``) unless ``address`` is
    one :func:`embdiag.cluster.parse_address` accepts.

    Example:
        >>> check_address("local:2")
        >>> check_address("somewhere")
        Traceback (most recent call last):
        ...
        embdiag.data.files.InputError: --cluster: expected auto, local, local:N or ray://HOST:PORT, got 'somewhere'
    """
    try:
        parse_address(address)
    except ValueError as e:
        raise InputError(str(e)) from None


def _file_of(G) -> str | None:
    """The ``.npy`` file that ``G`` maps whole, else None."""
    if not isinstance(G, np.memmap) or not str(G.filename or "").endswith(".npy"):
        return None
    try:
        whole = np.load(G.filename, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return None
    same = whole.shape == G.shape and whole.dtype == G.dtype and whole.offset == G.offset
    return str(G.filename) if same else None


def _shipped(X):
    """How tasks reach ``X``: the path of the ``.npy`` file it maps whole, else a reference to
    one copy in Ray's object store."""
    import ray

    return _file_of(X) or ray.put(np.asarray(X))


def _opened(source) -> np.ndarray:
    """On a worker: the array of a :func:`_shipped` source (a file is memory-mapped)."""
    return np.load(source, mmap_mode="r", allow_pickle=False) if isinstance(source, str) else source


def shards(plan_shares, shard_rows: int) -> list[list[tuple[int, int]]]:
    """topk's chunks (all shares, in gallery order) grouped into runs of consecutive chunks of
    at most ``shard_rows`` rows (a chunk larger than that is a shard of its own).

    Example:
        >>> shards([[(0, 4), (4, 8)], [(8, 20), (20, 24)]], shard_rows=8)
        [[(0, 4), (4, 8)], [(8, 20)], [(20, 24)]]
    """
    out, rows = [], shard_rows
    for chunk in (c for share in plan_shares for c in share):
        if rows + chunk[1] - chunk[0] > shard_rows:
            out.append([])
            rows = 0
        out[-1].append(chunk)
        rows += chunk[1] - chunk[0]
    return out


def _search_shard(unit_q: np.ndarray, q0: int, source, chunks, k: int) -> tuple[np.ndarray, np.ndarray]:
    """On a worker: the top ``k`` of the query block over the shard's chunks."""
    G = _opened(source)
    return scan_chunks(unit_q, G, k, chunks, q0=q0)


def sharded_topk(queries, gallery, k: int, *, shard_rows: int = SHARD_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~embdiag.metrics.retrieval.topk` (float32, no self-exclusion) of ``queries`` over
    ``gallery``, as Ray tasks over shards of at most ``shard_rows`` gallery rows, on the
    cluster this process is connected to (:func:`embdiag.cluster.connect`)."""
    import ray

    from ..cluster import run_tasks

    shard_rows = check_int(shard_rows, "shard_rows", minimum=1)
    Qn = unit_queries(queries)
    G = gallery if isinstance(gallery, np.memmap) else as_matrix(gallery, "gallery")
    if G.ndim != 2 or G.shape[1] != Qn.shape[1]:
        raise ValueError(f"gallery: expected {Qn.shape[1]} columns like the queries, got shape {G.shape}")
    k = check_k(k, len(G))
    qb, plan = search_plan(len(Qn), len(G), k)
    source = _shipped(G)
    groups = shards(plan, shard_rows)
    S, I = np.empty((len(Qn), k), np.float32), np.empty((len(Qn), k), np.int64)
    for q0 in range(0, len(Qn), qb):
        q1 = min(len(Qn), q0 + qb)
        block = ray.put(Qn[q0:q1])
        parts = run_tasks(_search_shard, [(block, q0, source, group, k) for group in groups])
        S[q0:q1], I[q0:q1] = merge_topk(parts, k)
    return S, I


def _check_rows(source, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """On a worker: the NaN/inf and all-zero rows among rows ``start:stop``."""
    X = _opened(source)
    return bad_rows(X, start, stop)


def sharded_check(X, where: str, *, shard_rows: int = SHARD_ROWS) -> None:
    """The input check of :func:`~embdiag.data.files.read_vectors` (NaN, inf and all-zero rows),
    one Ray task per ``shard_rows`` rows of ``X``, on the connected cluster: the same error,
    naming ``where``, the count and the first bad row. A whole ``.npy`` memory map is read by
    each task from its file; other arrays are checked here.

    Example (an array in memory: checked here, no cluster needed):
        >>> sharded_check(np.ones((4, 2)), "v.npy (VECTORS)")
        >>> sharded_check(np.array([[1.0, 2.0], [0.0, 0.0]]), "v.npy (VECTORS)")
        Traceback (most recent call last):
        ...
        embdiag.data.files.InputError: v.npy (VECTORS): 1 zero-norm row(s) (first at index 1); cosine is undefined
    """
    from ..cluster import run_tasks

    shard_rows = check_int(shard_rows, "shard_rows", minimum=1)
    source = _file_of(X)
    if source is None:
        refuse_bad_rows(*bad_rows(X), where)
        return
    parts = run_tasks(_check_rows, [(source, a, min(len(X), a + shard_rows)) for a in range(0, len(X), shard_rows)])
    refuse_bad_rows(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), where)


def _on_rows(fn, source, a: int, b: int, args: tuple):
    """On a worker: ``fn(X, a, b, *args)`` on one core, ``X`` opened from ``source``."""
    X = _opened(source)
    return fn(X, a, b, *args, workers=1)


def block_mapper(X):
    """``map_blocks`` for :func:`embdiag.metrics.geometry.summary` of ``X`` on the connected
    cluster: ``map_blocks(fn, spans, *args)`` runs ``fn(X, a, b, *args)`` as one single-CPU Ray
    task per span and returns the results in span order. A whole ``.npy`` memory map is read
    by each task from its file; any other array goes through the object store once."""
    from ..cluster import run_tasks

    source = _shipped(X)

    def map_blocks(fn, spans, *args):
        return run_tasks(_on_rows, [(fn, source, a, b, args) for a, b in spans])

    return map_blocks
