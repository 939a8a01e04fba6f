"""Approximate nearest-neighbour indexes (FAISS) over unit rows, built reproducibly, searched at
each value of their search knob.

An :class:`AnnIndex` is made from a FAISS ``index_factory`` string (``"HNSW32"``,
``"IVF1024,PQ64"``, ``"OPQ32,IVF256,PQ32"``, ...), from one of two named configurations
(:meth:`AnnIndex.hnsw`, :meth:`AnnIndex.ivfpq`, the report's ``hnsw`` and ``ivfpq``) or from a
prebuilt index file (:meth:`AnnIndex.read`). The metric is the inner product on unit float32
rows, i.e. cosine. A build (training and adding) runs on one thread: a multi-threaded HNSW build
differs from run to run. Its **knob** is the search parameter that trades recall for speed:
``nprobe`` for an IVF index (inverted lists visited), ``efSearch`` for HNSW (candidate list
length); an index with neither (flat) has none. :meth:`AnnIndex.search` returns results sorted
like :func:`embdiag.metrics.retrieval.topk` (descending score, ties by lower index).

Size: ``index_bytes`` is the serialized index; ``bytes_per_vector`` what each added row adds
to it (the serialized index minus the same index emptied, over its rows): a row's codes, id and
links, not the shared coarse quantizer, codebooks or transforms.

Example:
    >>> X = np.random.default_rng(0).standard_normal((500, 16)).astype(np.float32)
    >>> index = AnnIndex("IVF8,Flat").fit(X)
    >>> index.knob, index.ladder, index.default
    ('nprobe', (1, 2, 4, 8), 8)
    >>> index.search(X[:2], 3, value=8)[1][:, 0]  # every list visited: exact; each row finds itself
    array([0, 1])
    >>> round(index.bytes_per_vector, 1)  # a float32 row and its 8-byte id, and a little list bookkeeping
    72.1
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np

from .._mapped import release_rows, take_rows
from .._scaling import unit_scale_rows
from .._validate import as_matrix, check_int, nonzero_rows

__all__ = [
    "EF_SEARCH",
    "NPROBE",
    "KNOBS",
    "AnnIndex",
    "hnsw_params",
    "ivfpq_params",
]

#: Knob values an index is swept over (``nprobe`` capped at the number of lists).
EF_SEARCH = (16, 32, 64, 128, 256, 512)
NPROBE = (1, 2, 4, 8, 16, 32)
#: The search knobs, in the order looked for (an IVF index over an HNSW quantizer sweeps ``nprobe``).
KNOBS = ("nprobe", "efSearch")
#: Defaults of a factory index's knob (a file index keeps the value saved in it).
DEFAULT = {"nprobe": 16, "efSearch": 64}
HNSW_M, HNSW_EF_CONSTRUCTION = 32, 200
#: FAISS warns below 39 training rows per centroid; IVF-PQ needs codebooks of at least MIN_NBITS bits.
FAISS_ROWS_PER_CENTROID = 39
MIN_NBITS = 4
#: Rows added to an index at a time (a memory-map's pages are released chunk by chunk).
CHUNK_ROWS = 65536


def hnsw_params(n: int, d: int) -> dict:
    """Parameters of the named ``hnsw`` index (fixed; ``n`` and ``d`` are not used).

    Example:
        >>> hnsw_params(1_000_000, 768)
        {'M': 32, 'efConstruction': 200, 'efSearch': 64}
    """
    return {"M": HNSW_M, "efConstruction": HNSW_EF_CONSTRUCTION, "efSearch": DEFAULT["efSearch"]}


def ivfpq_params(n: int, d: int) -> dict:
    """Parameters of the named ``ivfpq`` index for an ``n`` x ``d`` gallery.

    ``nlist = max(1, min(4096, round(sqrt(n))))`` lists; ``m`` = the largest divisor of ``d``
    at most ``max(1, d // 8)`` (sub-vectors of at least 8 dimensions); ``nprobe = min(nlist,
    16)``; trained on a seeded sample of ``min(n, max(40 * nlist, 10000))`` rows; ``nbits =
    min(8, floor(log2(train_rows / 39)))`` bits per code, so that every codebook has the 39
    training rows per centroid that FAISS asks for (8 bits from 9,984 rows).

    Example:
        >>> ivfpq_params(1_000_000, 768)
        {'nlist': 1000, 'm': 96, 'nbits': 8, 'nprobe': 16, 'train_rows': 40000}
    """
    nlist = max(1, min(4096, int(round(np.sqrt(n)))))
    cap = max(1, d // 8)
    m = max(j for j in range(1, cap + 1) if d % j == 0)
    train_rows = min(n, max(40 * nlist, 10000))
    nbits = int(min(8, np.floor(np.log2(max(train_rows, 1) / FAISS_ROWS_PER_CENTROID))))
    return {"nlist": nlist, "m": m, "nbits": nbits, "nprobe": min(nlist, DEFAULT["nprobe"]), "train_rows": train_rows}


def _faiss():
    try:
        import faiss
    except ImportError:  # pragma: no cover - faiss is a dependency
        raise ImportError("approximate indexes need faiss (pip install faiss-cpu)") from None
    return faiss


def unit_f32(X, name: str = "X") -> np.ndarray:
    """The rows as unit float32 vectors (norms taken in float64 on rows scaled by a power of two,
    which is exact: no overflow or underflow at any scale). Raises ValueError naming ``name`` on
    a NaN, inf or zero row, or an array that is not a numeric matrix."""
    A = unit_scale_rows(as_matrix(X, name, dtype=np.float64))
    nonzero_rows(A, name)
    return (A / np.linalg.norm(A, axis=1)[:, None]).astype(np.float32)


class _OneThread:
    """FAISS on one thread inside the block, the caller's setting restored after."""

    def __enter__(self):
        faiss = _faiss()
        self.threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)

    def __exit__(self, *exc):
        _faiss().omp_set_num_threads(self.threads)


def _knob(index) -> str | None:
    space = _faiss().ParameterSpace()
    space.initialize(index)
    names = {space.parameter_ranges.at(i).name for i in range(space.parameter_ranges.size())}
    return next((k for k in KNOBS if k in names), None)


def _hnsw(index):
    """The HNSW graph of ``index``, inside any transforms or refinement that wrap it."""
    faiss = _faiss()
    inner = faiss.downcast_index(index)
    while not hasattr(inner, "hnsw"):
        inner = faiss.downcast_index(inner.base_index if hasattr(inner, "base_index") else inner.index)
    return inner.hnsw


def _nlist(index) -> int | None:
    try:
        return int(_faiss().extract_index_ivf(index).nlist)
    except RuntimeError:
        return None


class AnnIndex:
    """A FAISS index over unit float32 rows (module doc); scikit-learn style: :meth:`fit` builds it.

    ``factory``: a FAISS ``index_factory`` string; ``seed``: seed of the training sample and of
    FAISS's k-means; ``train_rows``: rows the training sample holds at most (default ``max(40 *
    nlist, 10000)``, every row when fewer); ``default``: the knob value of :meth:`search` without
    one (default :data:`DEFAULT`'s, capped at nlist); ``ef_construction``: HNSW's build effort.

    After :meth:`fit`: ``index_`` (the FAISS index), ``build_seconds_``, ``index_bytes``,
    ``bytes_per_vector``.

    Raises:
        ValueError: a factory string FAISS cannot parse (its message quoted), or one without
            inner-product support.
    """

    def __init__(
        self,
        factory: str,
        *,
        seed: int = 0,
        train_rows: int | None = None,
        default: int | None = None,
        ef_construction: int | None = None,
        path: str | None = None,
        d: int | None = None,
    ):
        self.factory, self.seed, self.train_rows, self.d = factory, seed, train_rows, d
        self.ef_construction, self.path = ef_construction, path
        self._default = default
        self.index_ = None
        self._facts = None

    @classmethod
    def hnsw(cls, n: int, d: int, seed: int = 0) -> AnnIndex:
        """The named ``hnsw``: ``HNSW32``, efConstruction 200, efSearch 64 (:func:`hnsw_params`)."""
        p = hnsw_params(n, d)
        return cls(f"HNSW{p['M']}", seed=seed, default=p["efSearch"], ef_construction=p["efConstruction"])

    @classmethod
    def ivfpq(cls, n: int, d: int, seed: int = 0) -> AnnIndex:
        """The named ``ivfpq`` for an ``n`` x ``d`` gallery (:func:`ivfpq_params`), without FAISS's
        polysemous training (``np``: it orders codes for Hamming filtering, which is not used, and
        takes ten times the rest of the training)."""
        q = ivfpq_params(n, d)
        return cls(
            f"IVF{q['nlist']},PQ{q['m']}x{q['nbits']}np", seed=seed, train_rows=q["train_rows"], default=q["nprobe"]
        )

    @classmethod
    def read(cls, path) -> AnnIndex:
        """A prebuilt index file (``faiss.write_index``): row ``i`` of the index must be row ``i``
        of the gallery it is searched as, stored as unit rows for the inner product (or L2, whose
        order on unit rows is the same; scores are turned into cosines). Its knob keeps the value
        saved in the file."""
        faiss = _faiss()
        try:
            index = faiss.read_index(str(path))
        except RuntimeError as e:
            raise ValueError(f"{path}: not a FAISS index file ({str(e).splitlines()[-1].strip()})") from None
        if index.metric_type not in (faiss.METRIC_INNER_PRODUCT, faiss.METRIC_L2):
            raise ValueError(f"{path}: the index's metric is {index.metric_type}; inner product or L2 is needed")
        out = cls(type(faiss.downcast_index(index)).__name__, path=str(path))
        out.index_, out.build_seconds_ = index, None
        out._facts = (_knob(index), _nlist(index))
        out._default = out._get(index) if out.knob else None
        out._sizes(None)
        return out

    # ------------------------------------------------------------------ the knob

    def _probe(self, d: int | None = None):
        """The (empty, untrained) index of the factory string for ``d`` (default: ``self.d``, else 8)."""
        d = d or self.d or 8
        faiss = _faiss()
        try:
            return faiss.index_factory(d, self.factory, faiss.METRIC_INNER_PRODUCT)
        except RuntimeError as e:
            raise ValueError(
                f"{self.factory!r}: FAISS cannot make this index ({str(e).splitlines()[-1].strip()})"
            ) from None

    def check(self, d: int) -> AnnIndex:
        """Raise ValueError when FAISS cannot make the factory index for ``d`` dimensions."""
        if self.index_ is None:
            index = self._probe(d)
            self.d, self._facts = d, (_knob(index), _nlist(index))
        elif self.index_.d != d:
            raise ValueError(f"{self.path}: the index has d = {self.index_.d}, the vectors d = {d}")
        return self

    def _knob_nlist(self) -> tuple[str | None, int | None]:
        """The knob and the number of lists, read once from the index (or the factory's empty one):
        neither depends on ``d``, training or the rows added."""
        if self._facts is None:
            index = self.index_ if self.index_ is not None else self._probe()
            self._facts = (_knob(index), _nlist(index))
        return self._facts

    @property
    def knob(self) -> str | None:
        """``"nprobe"``, ``"efSearch"`` or None (the index has no search knob)."""
        return self._knob_nlist()[0]

    @property
    def nlist(self) -> int | None:
        """Inverted lists of an IVF index (None for others)."""
        return self._knob_nlist()[1]

    @property
    def default(self) -> int | None:
        """The knob value searched without one."""
        if self.knob is None:
            return None
        value = self._default if self._default is not None else DEFAULT[self.knob]
        return min(value, self.nlist) if self.knob == "nprobe" else value

    @property
    def ladder(self) -> tuple[int, ...]:
        """The knob values of a sweep (:data:`NPROBE` up to nlist, :data:`EF_SEARCH`), with the
        default; ``()`` without a knob."""
        if self.knob is None:
            return ()
        base = [min(v, self.nlist) for v in NPROBE] if self.knob == "nprobe" else list(EF_SEARCH)
        return tuple(sorted(set(base) | {self.default}))

    def _get(self, index) -> int:
        """The knob's value saved in ``index``."""
        if self.knob == "nprobe":
            return int(_faiss().extract_index_ivf(index).nprobe)
        return int(_hnsw(index).efSearch)

    # ------------------------------------------------------------------ build

    def fit(self, gallery) -> AnnIndex:
        """Build (and train) the index over the unit rows of ``gallery`` (n x d, possibly a
        memory-map) on one thread; a file index checks that it holds ``n`` rows of ``d``."""
        if np.ndim(gallery) != 2 or not len(gallery):
            as_matrix(gallery, "gallery")  # raises, naming what is wrong
        n, d = np.shape(gallery)
        if self.path is not None:
            if (self.index_.ntotal, self.index_.d) != (n, d):
                raise ValueError(
                    f"{self.path}: the index holds {self.index_.ntotal:,} rows of d = {self.index_.d}, "
                    f"the vectors are {n:,} x {d} (row i of the index must be row i of the vectors)"
                )
            return self
        faiss = _faiss()
        start = time.perf_counter()
        index = self._probe(d)
        if self.ef_construction is not None:
            _hnsw(index).efConstruction = self.ef_construction
        with _OneThread():
            if not index.is_trained:
                self._train(faiss, index, gallery)
            empty = len(faiss.serialize_index(index))
            for a in range(0, n, CHUNK_ROWS):
                b = min(a + CHUNK_ROWS, n)
                index.add(unit_f32(gallery[a:b], "gallery"))
                release_rows(gallery, a, b)
        self.build_seconds_ = time.perf_counter() - start
        self.index_ = index
        self._sizes(empty)
        return self

    def _train(self, faiss, index, gallery) -> None:
        n = len(gallery)
        nlist = _nlist(index) or 1
        m = min(n, self.train_rows or max(40 * nlist, 10000))
        rows = np.sort(np.random.default_rng([self.seed, 12]).choice(n, m, replace=False)) if m < n else np.arange(n)
        ivf = None if _nlist(index) is None else faiss.extract_index_ivf(index)
        if ivf is not None:
            ivf.cp.seed = self.seed
            pq = getattr(faiss.downcast_index(ivf), "pq", None)
            if pq is not None:
                pq.cp.seed = self.seed
        index.train(unit_f32(take_rows(gallery, rows), "gallery"))

    def _sizes(self, empty: int | None) -> None:
        faiss = _faiss()
        full = len(faiss.serialize_index(self.index_))
        if empty is None:  # a file index: measure it emptied
            clone = faiss.clone_index(self.index_)
            clone.reset()
            empty = len(faiss.serialize_index(clone))
            del clone
        self.index_bytes = full
        self.bytes_per_vector = (full - empty) / max(self.index_.ntotal, 1)

    # ------------------------------------------------------------------ search

    def search(self, queries, k: int, value: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, indices)`` of each query's top ``k`` at knob ``value`` (default
        :attr:`default`), sorted like ``topk`` (scores: cosines). An IVF query whose visited lists
        hold fewer than ``k`` rows is searched again over every list.

        Raises:
            ValueError: the index is not fitted, ``k`` exceeds its rows, or it returned fewer
                than ``k`` results for some query.
        """
        if self.index_ is None:
            raise ValueError("the index is not built; call fit first")
        k = check_int(k, "k", minimum=1)
        if k > self.index_.ntotal:
            raise ValueError(f"k: the index holds {self.index_.ntotal} rows, got k = {k}")
        faiss = _faiss()
        Q = unit_f32(queries, "queries")
        if Q.shape[1] != self.index_.d:
            raise ValueError(f"queries: expected {self.index_.d} columns like the index, got {Q.shape[1]}")
        value = self.default if value is None else check_int(value, self.knob or "value", minimum=1)
        if self.knob is not None:
            faiss.ParameterSpace().set_index_parameter(self.index_, self.knob, value)
        S, I = self.index_.search(Q, k)
        if self.knob == "nprobe" and (I < 0).any():
            short = np.flatnonzero((I < 0).any(axis=1))
            faiss.ParameterSpace().set_index_parameter(self.index_, "nprobe", self.nlist)
            S[short], I[short] = self.index_.search(Q[short], k)
        if (I < 0).any():
            raise ValueError(
                f"{self.factory}: the index returned fewer than k = {k} results for "
                f"{int((I < 0).any(axis=1).sum())} query(ies)"
            )
        if self.index_.metric_type == faiss.METRIC_L2:
            S = 1.0 - S / 2.0  # squared distance of unit rows -> cosine
        return sort_like_topk(S.astype(np.float32), I.astype(np.int64))


def sort_like_topk(S: np.ndarray, I: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows sorted by descending score, ties by lower index (the order of ``topk``)."""
    order = np.lexsort((I, -S), axis=-1)
    return np.take_along_axis(S, order, axis=1), np.take_along_axis(I, order, axis=1)


def factory_name(factory: str) -> str:
    """A condition name for a factory string: lower case, runs of other characters as ``-``.

    Example:
        >>> factory_name("IVF1024,PQ64x8")
        'ivf1024-pq64x8'
    """
    return re.sub(r"[^a-z0-9_.]+", "-", factory.lower()).strip("-")


def file_name(path) -> str:
    """A condition name for an index file: its stem, as :func:`factory_name` writes names."""
    return factory_name(Path(path).stem)
