"""Approximate nearest-neighbour indexes (FAISS) over unit rows, built reproducibly, searched at
each value of their search knob.

An :class:`AnnIndex` is made from a FAISS ``index_factory`` string (``"HNSW32"``,
``"IVF1024,PQ64"``, ``"OPQ32,IVF256,PQ32"``, ...), from one of two named configurations
(:meth:`AnnIndex.hnsw`, :meth:`AnnIndex.ivfpq`, the report's ``hnsw`` and ``ivfpq``) or from a
prebuilt index file (:meth:`AnnIndex.read`). The metric is the inner product on unit float32
rows, i.e. cosine. A build is the same whatever the number of threads: training and adding run on
one thread, except the rows added to an HNSW graph, which run on every FAISS thread
(:func:`add_threads`: FAISS from 1.15.1 builds the graph in batches searched against a frozen
snapshot and linked in a fixed order, so the graph does not depend on the thread count).

Its **knob** is the search parameter that trades recall for speed: ``nprobe`` for an IVF index
(inverted lists visited), ``efSearch`` for HNSW (candidate list length); an index with neither
(flat) has none. :meth:`AnnIndex.search` returns results sorted like
:func:`embdiag.metrics.retrieval.topk` (descending score, ties by lower index).

Checks before a build: :meth:`AnnIndex.check` with the gallery's row count refuses a factory
string whose parts cannot be trained or filled on those rows (:func:`factory_problems`); a
prebuilt file is compared with the gallery it claims to index (:meth:`AnnIndex.mismatch`).

A setting for a target recall: :func:`sweep` searches builds (:func:`sweep_builds`: HNSW over M x
efConstruction, IVF-PQ over nlist with the named ``ivfpq``'s codes) at knob values
(:func:`sweep_values`) and measures, per k, tie-aware recall with its interval
(:func:`recall_interval`), bytes per vector and the search's work counted by FAISS
(:func:`search_work`); :func:`cheapest` picks the cheapest setting whose interval lies wholly at
or above the target. Every number it decides by is the same on any machine and thread count
(builds as above, FAISS's counters), so a rerun chooses the same setting; queries per second are
timings beside it.

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
    "MATCH_ROWS",
    "MATCH_TOP",
    "SWEEP_M",
    "SWEEP_EF_CONSTRUCTION",
    "SWEEP_NLIST",
    "SWEEP_EF_SEARCH",
    "SWEEP_NPROBE",
    "RECALL_LEVEL",
    "AnnIndex",
    "add_threads",
    "cheapest",
    "deterministic_graph",
    "factory_problems",
    "hnsw_params",
    "ivfpq_params",
    "recall_interval",
    "search_work",
    "sweep",
    "sweep_builds",
    "sweep_values",
]

#: Knob values an index is swept over (``nprobe`` capped at the number of lists).
EF_SEARCH = (16, 32, 64, 128, 256, 512)
NPROBE = (1, 2, 4, 8, 16, 32)
#: The search knobs, in the order looked for (an IVF index over an HNSW quantizer sweeps ``nprobe``).
KNOBS = ("nprobe", "efSearch")
#: Defaults of a factory index's knob (a file index keeps the value saved in it).
DEFAULT = {"nprobe": 16, "efSearch": 64}
HNSW_M, HNSW_EF_CONSTRUCTION = 32, 200
#: The first FAISS whose HNSW graph is the same for any number of threads.
DETERMINISTIC_HNSW = (1, 15, 1)
#: FAISS warns below 39 training rows per centroid; IVF-PQ needs codebooks of at least MIN_NBITS bits.
FAISS_ROWS_PER_CENTROID = 39
MIN_NBITS = 4
#: Rows added to an index at a time (a memory-map's pages are released chunk by chunk).
CHUNK_ROWS = 65536
#: Bits per code a product or additive quantizer may have (2**nbits centroids per codebook).
NBITS_RANGE = (1, 16)
#: FAISS's NSG builds its graph with NNDescent, which needs more than this many rows.
NSG_MIN_ROWS = 100
#: Gallery rows a prebuilt index file is compared with (a seeded sample), and the results searched
#: for a sampled row's own id where the index cannot reconstruct its rows.
MATCH_ROWS, MATCH_TOP = 64, 10

#: The builds an index family's sweep tries (:func:`sweep_builds`): HNSW's links per node M times
#: its build effort efConstruction (the named ``hnsw``, M 32 and efConstruction 200, among them);
#: IVF-PQ's inverted lists as multiples of the named ``ivfpq``'s ``round(sqrt(n))``, each with the
#: ``ivfpq``'s codes.
SWEEP_M = (8, 16, 32)
SWEEP_EF_CONSTRUCTION = (40, 200)
SWEEP_NLIST = (0.5, 1, 2, 4)
#: The knob values a sweep searches each build at (:func:`sweep_values`; nprobe capped at nlist).
SWEEP_EF_SEARCH = (16, 32, 64, 128, 256, 512, 1024)
SWEEP_NPROBE = (1, 2, 4, 8, 16, 32, 64, 128, 256)
#: The level of the recall interval (:func:`recall_interval`) a setting reaches a target with.
RECALL_LEVEL = 0.95


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


class _Threads:
    """FAISS on ``threads`` threads inside the block, the caller's setting restored after."""

    def __init__(self, threads: int = 1):
        self.threads = threads

    def __enter__(self):
        faiss = _faiss()
        self.before = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(self.threads)

    def __exit__(self, *exc):
        _faiss().omp_set_num_threads(self.before)


def _version(text: str) -> tuple[int, ...]:
    """``"1.15.1"`` -> ``(1, 15, 1)`` (the leading numbers of a version string)."""
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def deterministic_graph(index) -> bool:
    """Whether adding rows to the empty or trained ``index`` gives the same index on any number of
    threads although FAISS runs it on several: an HNSW graph (``IndexHNSW`` over flat, scalar- or
    product-quantized storage) with FAISS 1.15.1 or later, which builds the graph in batches
    searched against a frozen snapshot and linked in a fixed order."""
    faiss = _faiss()
    graph = (faiss.IndexHNSWFlat, faiss.IndexHNSWSQ, faiss.IndexHNSWPQ)
    return type(faiss.downcast_index(index)) in graph and _version(faiss.__version__) >= DETERMINISTIC_HNSW


def add_threads(index) -> int:
    """FAISS threads that adding rows to ``index`` runs on: every FAISS thread
    (``omp_get_max_threads``) where the result does not depend on their number
    (:func:`deterministic_graph`), else one.

    Example:
        >>> import faiss
        >>> add_threads(faiss.IndexHNSWFlat(8, 16)) == faiss.omp_get_max_threads()
        True
        >>> add_threads(faiss.IndexIVFFlat(faiss.IndexFlatIP(8), 8, 4))
        1
    """
    return _faiss().omp_get_max_threads() if deterministic_graph(index) else 1


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


def _reconstructs(index) -> bool:
    """Whether ``index`` reconstructs its rows in the space it is searched in: flat-code indexes
    (LSH's codes are bits of another space), IVF indexes (through a direct map; IVF fast-scan
    read from a file crashes there), graphs and refinement over such storage."""
    faiss = _faiss()
    index = faiss.downcast_index(index)
    if isinstance(index, (faiss.IndexHNSW, faiss.IndexNSG)):
        return _reconstructs(index.storage)
    if isinstance(index, faiss.IndexRefine):
        return _reconstructs(index.refine_index)
    if isinstance(index, (faiss.IndexIVFFastScan, faiss.IndexLSH)):
        return False
    return isinstance(index, (faiss.IndexFlatCodes, faiss.IndexFastScan, faiss.IndexIVF))


def training_rows(n: int, nlist: int | None, train_rows: int | None = None) -> int:
    """Rows an index over ``n`` rows is trained on: ``min(n, train_rows)``, by default
    ``min(n, max(40 * nlist, 10000))`` (``nlist`` 1 for an index without lists)."""
    return min(n, train_rows or max(40 * (nlist or 1), 10000))


def _needs(index) -> tuple[list[str], list[tuple[str, int, str]]]:
    """What the empty FAISS ``index`` needs that its factory string does not guarantee.

    ``errors``: parameters FAISS's parser accepts but cannot run (an IVF of 0 lists, HNSW with M
    below 2, codes of 0 or more than 16 bits: FAISS aborts or crashes on some of them; PCA to more
    dimensions than it is given; IDMap, which takes no rows without ids). ``needs``: ``(what,
    rows, kind)``, ``kind`` ``"kmeans"`` (at least ``rows`` training rows, one per centroid, and
    FAISS advises 39), ``"train"`` (at least ``rows`` training rows) or ``"add"`` (more than
    ``rows`` rows added).
    """
    faiss = _faiss()
    errors, needs = [], []
    lo, hi = NBITS_RANGE

    def bits(what: str, nbits, kmeans: bool = True):
        for b in sorted({int(b) for b in nbits}):
            if not lo <= b <= hi:
                errors.append(f"{what} with {b}-bit codes; {lo} to {hi} bits per code are possible")
            elif kmeans:
                needs.append((f"{what} (codebooks of 2^{b} = {1 << b:,} centroids)", 1 << b, "kmeans"))

    def visit(ix):
        ix = faiss.downcast_index(ix)
        if isinstance(ix, faiss.IndexPreTransform):
            for i in range(ix.chain.size()):
                t = faiss.downcast_VectorTransform(ix.chain.at(i))
                if isinstance(t, (faiss.PCAMatrix, faiss.ITQTransform)):
                    if t.d_out > t.d_in:
                        errors.append(f"PCA to {t.d_out} dimensions of {t.d_in}; PCA cannot add dimensions")
                    else:
                        needs.append((f"PCA to {t.d_out} dimensions", t.d_out, "train"))
                elif isinstance(t, faiss.OPQMatrix) and t.pq is None:  # trained with 8-bit codebooks
                    needs.append(("OPQ's rotation (trained with codebooks of 256 centroids)", 256, "kmeans"))
            visit(ix.index)
        elif isinstance(ix, (faiss.IndexIDMap, faiss.IndexIDMap2)):
            errors.append("IDMap takes rows only with ids (add_with_ids), and rows are added without (row i as id i)")
        elif isinstance(ix, faiss.IndexRefine):
            visit(ix.base_index)
            visit(ix.refine_index)
        elif isinstance(ix, faiss.IndexHNSW):
            if ix.hnsw.cum_nneighbor_per_level.size() < 3:  # [0, 2M, 3M, ...] for M of 2 and more
                errors.append("HNSW with M below 2 links per node; M must be at least 2")
            visit(ix.storage)
        elif isinstance(ix, faiss.IndexNSG):
            needs.append(("NSG's graph (built by NNDescent)", NSG_MIN_ROWS, "add"))
            visit(ix.storage)
        if isinstance(ix, faiss.IndexIVF):
            if ix.nlist < 1:
                errors.append("an IVF of 0 inverted lists; it needs at least 1")
            else:
                needs.append((f"k-means of {ix.nlist:,} inverted lists", ix.nlist, "kmeans"))
            visit(ix.quantizer)
        if hasattr(ix, "pq") and isinstance(ix.pq, faiss.ProductQuantizer):
            bits("the product quantizer", [ix.pq.nbits])
        if hasattr(ix, "aq") and ix.aq is not None:
            local = hasattr(ix, "lsq") or hasattr(ix, "plsq")  # local search: no k-means
            bits("the additive quantizer", faiss.vector_to_array(ix.aq.nbits), kmeans=not local)

    visit(index)
    return errors, needs


def factory_problems(index, n: int, train_rows: int) -> tuple[list[str], list[str]]:
    """Why the empty FAISS ``index`` cannot be trained on ``train_rows`` of ``n`` rows and filled
    with the ``n`` rows (sentences; none when it can), and FAISS's advice it would not follow
    (fewer than 39 training rows per k-means centroid: FAISS warns and trains).

    Example:
        >>> import faiss
        >>> ivf = faiss.index_factory(16, "IVF64,PQ4x4", faiss.METRIC_INNER_PRODUCT)
        >>> factory_problems(ivf, 50, 50)[0]
        ['k-means of 64 inverted lists needs at least 64 training rows (one per centroid), got 50']
        >>> print(*factory_problems(ivf, 1000, 1000)[1])
        FAISS advises 39 training rows per centroid: k-means of 64 inverted lists is trained on 1,000, fewer than 2,496
    """
    errors, needs = _needs(index)
    got = f"got {n:,}" if train_rows >= n else f"got a training sample of {train_rows:,} of the {n:,} rows"
    advice = []
    for what, rows, kind in needs:
        if kind == "add" and n <= rows:
            errors.append(f"{what} needs more than {rows:,} rows, got {n:,}")
        elif kind != "add" and train_rows < rows:
            per = " (one per centroid)" if kind == "kmeans" else ""
            errors.append(f"{what} needs at least {rows:,} training rows{per}, {got}")
        elif kind == "kmeans" and train_rows < FAISS_ROWS_PER_CENTROID * rows:
            advice.append(
                f"FAISS advises {FAISS_ROWS_PER_CENTROID} training rows per centroid: {what} is trained on "
                f"{train_rows:,}, fewer than {FAISS_ROWS_PER_CENTROID * rows:,}"
            )
    return errors, advice


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
        self.advice: list[str] = []

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

    def check(self, d: int, n: int | None = None) -> AnnIndex:
        """Raise ValueError when FAISS cannot make the factory index for ``d`` dimensions or, given
        the gallery's ``n`` rows, cannot train and fill it (:func:`factory_problems`; FAISS's
        advice it would not follow is kept in ``advice``); a file index: when its d is not ``d``."""
        if self.index_ is None:
            index = self._probe(d)
            self.d, self._facts = d, (_knob(index), _nlist(index))
            if n is not None:
                errors, self.advice = factory_problems(index, n, training_rows(n, self.nlist, self.train_rows))
                if errors:
                    raise ValueError(f"{self.factory!r}: {'; '.join(errors)}")
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
        memory-map): trained on one thread, rows added on :func:`add_threads` threads; a file index
        checks that it holds ``n`` rows of ``d``."""
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
        with _Threads(1):
            if not index.is_trained:
                self._train(faiss, index, gallery)
        empty = len(faiss.serialize_index(index))
        with _Threads(add_threads(index)):
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
        m = training_rows(n, _nlist(index), self.train_rows)
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

    # ------------------------------------------------------------------ a file's rows

    def mismatch(self, gallery, seed: int = 0, rows: int = MATCH_ROWS, name: str = "the gallery") -> str | None:
        """Why row i of this built index is not row i of ``gallery`` (a sentence naming it
        ``name``), or None.

        The index must hold as many rows of as many dimensions as ``gallery``. Then a seeded sample
        of ``min(ntotal, rows)`` row indices (seed ``seed``; gallery rows that are zero or not
        finite are left out) is compared with the index's own copy of each row: a sampled row
        *matches* when at most an eighth of the other sampled rows lie nearer (cosine, after the
        index's transforms) than it to the index's reconstruction of its row; for an index that
        cannot reconstruct, when searching the index with it finds its own id among the top
        ``min(MATCH_TOP, ntotal // 8)`` (at least 1). Fewer than half matching is a mismatch.
        An index of these rows in this order matches every sampled row where it stores rows
        exactly, and nearly all where it compresses them to 4 bits a row or more (62 of 64 for
        PQ1x4 on random unit rows; at 1 or 2 bits a row it may be refused); an index of other
        rows matches about one row in eight, so that half is some eight standard deviations away.
        """
        if self.index_ is None:
            raise ValueError("the index is not built; call fit first")
        n = self.index_.ntotal
        if np.shape(gallery) != (n, self.index_.d):
            return (
                f"the index holds {n:,} rows of d = {self.index_.d}, {name} has {np.shape(gallery)[0]:,} rows of "
                f"d = {np.shape(gallery)[1]} (row i of the index must be row i of {name})"
            )
        ids = np.arange(n) if n <= rows else np.sort(np.random.default_rng([seed, 13]).choice(n, rows, replace=False))
        A = unit_scale_rows(np.asarray(take_rows(gallery, ids), dtype=np.float64))
        norms = np.linalg.norm(A, axis=1)
        valid = np.isfinite(norms) & (norms > 0)
        ids, U = ids[valid], (A[valid] / norms[valid, None]).astype(np.float32)
        if not len(ids):
            return None
        stored = self._stored(ids, U)
        if stored is not None:
            R, V = (B / np.maximum(np.linalg.norm(B, axis=1, keepdims=True), 1e-30) for B in stored)
            C = R.astype(np.float64) @ V.T.astype(np.float64)
            nearer = (C > np.diag(C)[:, None] + 1e-6).sum(axis=1)  # other sampled rows nearer than the row
            hit = nearer <= len(ids) // 8
            how = "are among the nearest eighth of the sampled rows (cosine) to the index's reconstruction of their row"
        else:
            top = max(1, min(MATCH_TOP, n // 8))
            _, I = self.index_.search(U, top)
            hit = (I == ids[:, None]).any(axis=1)
            how = f"find their own id among the index's top {top} results"
        if 2 * int(hit.sum()) >= len(ids):
            return None
        return (
            f"row i of the index is not row i of {name}: {int(hit.sum())} of {len(ids)} rows sampled with seed "
            f"{seed} {how}, fewer than half (an index of these rows in this order, lossy or not, matches nearly "
            f"all; row {int(ids[np.argmin(hit)])} does not)"
        )

    def _stored(self, ids, U) -> tuple[np.ndarray, np.ndarray] | None:
        """``(the index's reconstruction of rows ids, the rows U in the same space)``: U passed
        through the index's transforms, an IVF given a direct map for the while (removed after);
        None where the index cannot reconstruct."""
        faiss = _faiss()
        index = faiss.downcast_index(self.index_)
        while isinstance(index, faiss.IndexPreTransform):
            for i in range(index.chain.size()):
                U = faiss.downcast_VectorTransform(index.chain.at(i)).apply(U)
            index = faiss.downcast_index(index.index)
        if not _reconstructs(index):
            return None
        ivf = faiss.extract_index_ivf(index) if _nlist(index) is not None else None
        mapped = ivf is not None and ivf.direct_map.type == faiss.DirectMap.NoMap
        try:
            if mapped:  # an IVF reconstructs a row by its id only through a direct map
                ivf.make_direct_map(True)
            return index.reconstruct_batch(ids), U
        except RuntimeError:
            return None
        finally:
            if mapped:
                ivf.make_direct_map(False)

    # ------------------------------------------------------------------ search

    def search(self, queries, k: int, value: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, indices)`` of each query's top ``k`` at knob ``value`` (default
        :attr:`default`), sorted like ``topk`` (scores: cosines). An IVF query whose visited lists
        hold fewer than ``k`` rows is searched again over every list.

        Raises:
            ValueError: the index is not fitted, ``k`` exceeds its rows, or it returned fewer
                than ``k`` results for some query.
        """
        return self._search(queries, k, value)[:2]

    def _search(self, queries, k: int, value: int | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """:meth:`search` and how many queries were searched again over every list."""
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
        short = np.flatnonzero((I < 0).any(axis=1)) if self.knob == "nprobe" else np.arange(0)
        if len(short):
            faiss.ParameterSpace().set_index_parameter(self.index_, "nprobe", self.nlist)
            S[short], I[short] = self.index_.search(Q[short], k)
        if (I < 0).any():
            raise ValueError(
                f"{self.factory}: the index returned fewer than k = {k} results for "
                f"{int((I < 0).any(axis=1).sum())} query(ies)"
            )
        if self.index_.metric_type == faiss.METRIC_L2:
            S = 1.0 - S / 2.0  # squared distance of unit rows -> cosine
        return (*sort_like_topk(S.astype(np.float32), I.astype(np.int64)), len(short))


# ---------------------------------------------------------------------- a setting for a target recall


def sweep_builds(
    family: str, n: int, d: int, seed: int = 0, built: AnnIndex | None = None
) -> list[tuple[dict, AnnIndex]]:
    """The builds a sweep of the named index ``family`` (``"hnsw"`` or ``"ivfpq"``) over an ``n`` x
    ``d`` gallery tries, as ``(settings, index)`` pairs in order of build effort, not yet built.

    ``hnsw``: ``HNSW{M}`` for each M of :data:`SWEEP_M` and efConstruction of
    :data:`SWEEP_EF_CONSTRUCTION`. ``ivfpq``: ``IVF{nlist},PQ{m}x{nbits}np`` with the ``m`` and
    ``nbits`` of :func:`ivfpq_params` (the same codes: the same bytes per vector) for each ``nlist
    = round(f * sqrt(n))``, f in :data:`SWEEP_NLIST`, at most ``n // 39`` (FAISS's advice of 39
    training rows per list), the named ``ivfpq``'s own nlist always among them; each trained on
    ``min(n, max(40 nlist, 10000))`` seeded rows. ``built``: the named index already built over the
    gallery (:meth:`AnnIndex.hnsw`, :meth:`AnnIndex.ivfpq`), which takes its own place in the list.

    Example:
        >>> [s for s, _ in sweep_builds("hnsw", 1000, 64)][:3]
        [{'M': 8, 'efConstruction': 40}, {'M': 8, 'efConstruction': 200}, {'M': 16, 'efConstruction': 40}]
        >>> [(s["nlist"], a.factory) for s, a in sweep_builds("ivfpq", 10_000, 64)]
        [(50, 'IVF50,PQ8x8np'), (100, 'IVF100,PQ8x8np'), (200, 'IVF200,PQ8x8np')]
    """
    if family == "hnsw":
        out = [
            ({"M": m, "efConstruction": ef}, AnnIndex(f"HNSW{m}", seed=seed, ef_construction=ef))
            for m in SWEEP_M
            for ef in SWEEP_EF_CONSTRUCTION
        ]
    elif family == "ivfpq":
        q = ivfpq_params(n, d)
        most = n // FAISS_ROWS_PER_CENTROID
        lists = {max(1, int(round(f * np.sqrt(n)))) for f in SWEEP_NLIST}
        lists = sorted({v for v in lists if v <= min(most, 4 * q["nlist"])} | {q["nlist"]})
        out = [
            (
                {"nlist": v},
                AnnIndex(f"IVF{v},PQ{q['m']}x{q['nbits']}np", seed=seed, train_rows=training_rows(n, v)),
            )
            for v in lists
        ]
    else:
        raise ValueError(f"family: expected 'hnsw' or 'ivfpq', got {family!r}")
    if built is not None:
        same = lambda a: (a.factory, a.ef_construction, a.train_rows, a.seed)  # noqa: E731
        out = [(s, built if same(a) == same(built) else a) for s, a in out]
    return out


def sweep_values(ann: AnnIndex, k: int = 1) -> tuple:
    """The knob values a sweep searches ``ann`` at for ``k`` results: :data:`SWEEP_NPROBE` capped at
    its lists, or :data:`SWEEP_EF_SEARCH` raised to at least ``k`` (FAISS's HNSW keeps ``efSearch``
    candidates even below ``k``, and may return fewer than ``k``; hnswlib searches ``max(ef, k)``);
    ``(None,)`` for an index without a knob.

    Example:
        >>> sweep_values(AnnIndex("IVF20,Flat")), sweep_values(AnnIndex("HNSW8"), 100), sweep_values(AnnIndex("Flat"))
        ((1, 2, 4, 8, 16, 20), (100, 128, 256, 512, 1024), (None,))
    """
    if ann.knob is None:
        return (None,)
    if ann.knob == "nprobe":
        return tuple(sorted({min(v, ann.nlist) for v in SWEEP_NPROBE}))
    return tuple(sorted({max(v, k) for v in SWEEP_EF_SEARCH}))


def recall_interval(per_query, level: float = RECALL_LEVEL) -> tuple[float, float, float]:
    """``(recall, low, high)``: the mean of per-query recalls (each in [0, 1]) and the Wilson score
    interval of a share of ``len(per_query)`` trials at ``level``.

    A value in [0, 1] whose mean is p varies at most as much as a 0/1 trial, p (1 - p) (and as much
    only when every value is 0 or 1), so counting each query as one trial gives an interval at least
    as wide as the mean's spread calls for: Wilson's exactly at k = 1, wider above (a query's k
    results are not counted as k independent trials), and never one point: a few perfect queries
    do not reach a target.

    Example:
        >>> [round(x, 4) for x in recall_interval([1.0] * 200)]
        [1.0, 0.9812, 1.0]
        >>> [round(x, 4) for x in recall_interval([0.9, 1.0] * 500)]
        [0.95, 0.9347, 0.9619]
    """
    from scipy import stats  # (imported here: scipy.stats takes a second to import)

    r = np.asarray(per_query, dtype=np.float64)
    if r.ndim != 1 or not len(r) or not np.isfinite(r).all() or (r < 0).any() or (r > 1).any():
        raise ValueError("per_query: expected one recall in [0, 1] per query, at least one")
    n, p = len(r), float(r.mean())
    z = float(stats.norm.ppf((1 + level) / 2))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, (0.0 if p == 0 else float(centre - half)), (1.0 if p == 1 else float(centre + half))


def _work(index):
    """``(FAISS's counters, operations of a search from them and its query count)`` for the indexes
    :func:`search_work` counts, else None."""
    faiss = _faiss()
    ix = faiss.downcast_index(index)
    if type(ix) is faiss.IndexHNSWFlat:
        return faiss.cvar.hnsw_stats, lambda s, nq: s.ndis * ix.d
    coarse = (faiss.IndexFlat, faiss.IndexFlatIP, faiss.IndexFlatL2)
    if type(ix) not in (faiss.IndexIVFPQ, faiss.IndexIVFFlat) or type(faiss.downcast_index(ix.quantizer)) not in coarse:
        return None
    tables, per_code = (ix.pq.ksub * ix.d, ix.pq.M) if type(ix) is faiss.IndexIVFPQ else (0, ix.d)
    return faiss.cvar.indexIVF_stats, lambda s, nq: nq * (ix.nlist * ix.d + tables) + s.ndis * per_code


def search_work(ann: AnnIndex, queries, k: int, value: int | None = None):
    """``(scores, indices, operations per query, queries short of k)``: :meth:`AnnIndex.search`,
    the queries whose visited lists held fewer than ``k`` rows (searched again over every list: at
    this value the index alone returns fewer than ``k``), and the arithmetic it all took, counted
    by FAISS, which counts the same on any number of threads. HNSW over float rows:
    d multiply-adds per distance computed (``hnsw_stats.ndis``); IVF-PQ or IVF-flat over a flat
    coarse quantizer: ``nlist * d`` for the coarse search, for PQ ``2^nbits * d`` for the query's
    look-up tables and ``m`` look-ups per code scanned, for flat ``d`` per row scanned
    (``indexIVF_stats.ndis``); NaN for any other index.

    Example:
        >>> X = np.random.default_rng(0).standard_normal((500, 16)).astype(np.float32)
        >>> ann = AnnIndex("IVF8,Flat").fit(X)
        >>> search_work(ann, X[:4], 3, value=8)[2:]  # 8 centroids, then all 500 rows: 16 each
        (8128.0, 0)
    """
    if ann.index_ is None:
        raise ValueError("the index is not built; call fit first")
    counted = _work(ann.index_)
    if counted is not None:
        counted[0].reset()
    S, I, short = ann._search(queries, k, value)
    return S, I, (float("nan") if counted is None else float(counted[1](counted[0], len(I))) / len(I)), short


def _own_left_out(I: np.ndarray, own, k: int) -> np.ndarray:
    """The first ``k`` results of each row other than the query's own row ``own`` (None: all are others)."""
    if own is None:
        return I[:, :k]
    order = np.argsort(I == np.asarray(own)[:, None], axis=1, kind="stable")[:, :k]
    return np.take_along_axis(I, order, axis=1)


def sweep(
    builds,
    gallery,
    queries,
    exact,
    ks,
    *,
    own=None,
    target: float | None = None,
    repeats: int = 0,
    min_seconds: float = 0.25,
    level: float = RECALL_LEVEL,
) -> list[dict]:
    """Every setting of ``builds`` (``(settings, AnnIndex)`` pairs, e.g. :func:`sweep_builds`; an
    index not yet built is built over ``gallery`` and let go after its sweep) at each of its
    :func:`sweep_values` (at k, or k + 1 with ``own``), for each k of ``ks``: one row per build, k and
    knob value.

    A row: ``build`` (its settings as text, ``""`` for a single build), the settings, ``knob``,
    ``value``, ``k``; ``recall``, ``low``, ``high``: recall@k (tie-aware,
    :func:`~embdiag.metrics.retrieval.ann_recall`) of the ``queries`` against ``exact[:, :k]``
    (their exact neighbours, sorted like ``topk``, at least ``max(ks)`` each) and its interval
    (:func:`recall_interval`); ``queries``; ``bytes_per_vector``; ``ops_per_query`` and
    ``short_queries`` (:func:`search_work`); ``rank``: the build's place in ``builds``. As timings: ``build_s`` (None
    for an index read from a file) and ``queries_per_s``: the counted search's, and with a
    ``target`` only where the row reaches it (or else without one), the fastest of up to ``repeats``
    searches while one takes less than ``min_seconds`` (NaN with ``repeats`` 0). ``own``: each query's row
    in ``gallery`` when the queries are gallery rows (searched for k + 1, its own row left out).
    ``target``: a build is searched at each k up to the first knob value whose recall interval
    reaches it (``low >= target``; a larger value visits more candidates or lists, so costs more
    work, and is not searched) with every query's k results found at that value (no
    ``short_queries``); ``reaches`` says which rows do.
    """
    from ..metrics.retrieval import ann_recall

    ks = sorted({check_int(k, "k", minimum=1) for k in ks})
    Q = np.asarray(queries)
    E = np.asarray(exact)
    if E.ndim != 2 or len(E) != len(Q) or E.shape[1] < ks[-1]:
        raise ValueError(f"exact: expected {len(Q)} rows of at least {ks[-1]} neighbours, got shape {E.shape}")
    extra = own is not None
    rows = []
    for rank, (settings, ann) in enumerate(builds):
        fresh = ann.index_ is None
        if fresh:
            ann.fit(gallery)
        label = ", ".join(f"{name}={v}" for name, v in settings.items())
        for k in ks:
            for value in sweep_values(ann, k + extra):
                start = time.perf_counter()
                S, I, ops, short = search_work(ann, Q, k + extra, value)
                best = time.perf_counter() - start
                found = _own_left_out(I, own, k)
                recall, low, high = recall_interval(ann_recall(Q, gallery, found, E[:, :k], per_query=True), level)
                reaches = target is not None and low >= target and not short
                for _ in range(repeats - 1 if reaches or target is None else 0):
                    if best >= min_seconds:
                        break
                    start = time.perf_counter()
                    ann.search(Q, k + extra, value)
                    best = min(best, time.perf_counter() - start)
                rows.append(
                    {
                        "build": label,
                        **settings,
                        "knob": ann.knob or "",
                        "value": value,
                        "k": k,
                        "recall": recall,
                        "low": low,
                        "high": high,
                        "queries": len(Q),
                        "bytes_per_vector": float(ann.bytes_per_vector),
                        "ops_per_query": ops,
                        "short_queries": short,
                        "rank": rank,
                        "build_s": ann.build_seconds_,
                        "queries_per_s": len(Q) / best if repeats else float("nan"),
                        "reaches": reaches,
                    }
                )
                if reaches:
                    break
        if fresh:
            ann.index_ = None  # let the build go: the next one may be as large
    return rows


def _cost(row: dict) -> tuple:
    work = row["ops_per_query"]
    return (work if np.isfinite(work) else (row["value"] or 0), row["bytes_per_vector"], row["rank"], row["value"] or 0)


def cheapest(rows: list[dict], target: float) -> tuple[dict | None, dict | None]:
    """``(the cheapest row reaching target, the best row)`` of ``rows`` (one index at one k, e.g.
    :func:`sweep`'s). A row reaches ``target`` when its recall interval lies wholly at or above it
    (``low >= target``: a point estimate alone never does) and the setting found k results for
    every query (no ``short_queries``); None when none does. Cheapest: the
    fewest operations per query (the search's work, which sets its speed), then the fewest bytes
    per vector, then the earlier build (less build effort), then the lower knob value; an index
    whose work FAISS does not count is ordered by its knob's value (more candidates or lists visited,
    more work). The best: the highest recall, the cheapest of equals (None without rows).

    Example:
        >>> rows = [dict(value=v, recall=r, low=r - 0.01, ops_per_query=float(v), bytes_per_vector=8.0, rank=0)
        ...         for v, r in [(1, 0.8), (2, 0.955), (4, 0.99)]]
        >>> [None if r is None else r["value"] for r in cheapest(rows, 0.95)], cheapest(rows, 0.99)[0]
        ([4, 4], None)
    """
    passing = [r for r in rows if r["low"] >= target and not r.get("short_queries", 0)]
    best = min(rows, key=lambda r: (-r["recall"], *_cost(r))) if rows else None
    return (min(passing, key=_cost) if passing else None), best


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
