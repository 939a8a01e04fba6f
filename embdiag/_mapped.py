"""Resident pages of memory-mapped arrays: give back the ones a chunked scan has finished with.

A chunked pass over an ``np.memmap`` (a 3 GB ``.npy`` read with ``mmap_mode="r"``) leaves
every page it touched mapped into the process, so its resident memory grows to the whole
file although only one chunk is in use at a time. :func:`release_rows` drops the pages of
rows already read from the process (``madvise(MADV_DONTNEED)``); the file stays in the
operating system's page cache, so reading those rows again costs a page fault, not a disk
read. Only shared mappings are released (``np.memmap`` modes ``r``, ``r+`` and ``w+``,
whose pages are the file's); a copy-on-write (``c``) map, an ordinary array or a
non-contiguous block is left alone. :func:`take_rows` gathers scattered rows the same way.
"""

from __future__ import annotations

import mmap

import numpy as np

_SHARED_MODES = ("r", "r+", "w+")


def _shared_mapping(X) -> mmap.mmap | None:
    """The shared ``mmap`` behind ``X`` (following ``.base``), or None."""
    obj = X
    while obj is not None:
        if isinstance(obj, np.memmap):
            mm = getattr(obj, "_mmap", None)
            return mm if isinstance(mm, mmap.mmap) and obj.mode in _SHARED_MODES else None
        obj = getattr(obj, "base", None)
    return None


def release_rows(X, start: int, stop: int) -> bool:
    """Drop the process's resident pages holding rows ``start:stop`` of ``X``.

    Pages at the block's ends may hold neighbouring rows too; they are read back from the
    page cache on their next use. Returns whether anything was released (False for arrays
    that are not shared memory maps, closed maps and non-contiguous or empty blocks).
    """
    mm = _shared_mapping(X)
    block = X[start:stop]
    if mm is None or block.size == 0 or not block.flags.c_contiguous or not hasattr(mm, "madvise"):
        return False
    try:
        base = np.frombuffer(mm, dtype=np.uint8).ctypes.data
    except (ValueError, TypeError):  # a closed map
        return False
    lo = block.ctypes.data - base
    hi = lo + block.nbytes
    lo -= lo % mmap.PAGESIZE
    mm.madvise(mmap.MADV_DONTNEED, lo, min(len(mm), hi) - lo)
    return True


#: Rows gathered at a time by :func:`take_rows` before their pages are released.
TAKE_ROWS = 8192
#: Bytes the kernel may map around a faulting page: fault-around (64 KiB by default) or a whole
#: large folio of the page cache (up to 2 MiB on x86-64).
MAPPED_AROUND = 2 << 20


def take_rows(X, rows) -> np.ndarray:
    """``X[rows]`` as an array in memory (``rows``: integer indices).

    Gathering scattered rows from a memory map would leave most of the file resident (each
    read maps the pages around it too); here the rows are gathered :data:`TAKE_ROWS` at a
    time and the span of each batch, widened by :data:`MAPPED_AROUND` bytes on each side, is
    released (:func:`release_rows`) once copied.
    """
    rows = np.asarray(rows)
    if _shared_mapping(X) is None or rows.ndim != 1 or rows.size == 0 or not np.issubdtype(rows.dtype, np.integer):
        return np.asarray(X[rows])
    out = np.empty((len(rows),) + tuple(X.shape[1:]), dtype=X.dtype)
    pad = -(-MAPPED_AROUND // max(1, X[:1].nbytes))  # rows the kernel may have mapped beside a batch
    for a in range(0, len(rows), TAKE_ROWS):
        batch = rows[a : a + TAKE_ROWS]
        out[a : a + len(batch)] = X[batch]  # raises IndexError for an index out of range
        batch = np.where(batch < 0, batch + len(X), batch)
        release_rows(X, max(0, int(batch.min()) - pad), int(batch.max()) + 1 + pad)
    return out
