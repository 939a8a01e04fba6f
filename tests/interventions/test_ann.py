"""Approximate indexes (``embdiag.interventions.ann``): the knob found in any factory string, results
sorted like exact search, builds reproducible, a prebuilt file read back as the index it was, and
sizes that match what FAISS stores per row."""

import numpy as np
import pytest

from embdiag.data.files import InputError
from embdiag.interventions import ann
from embdiag.interventions.ann import EF_SEARCH, AnnIndex, add_threads, deterministic_graph, factory_name, file_name
from embdiag.metrics.retrieval import overlap_at_k, topk
from embdiag.report.conditions import index_files, parse_index, with_index_files

faiss = pytest.importorskip("faiss")
RNG = np.random.default_rng(0)
X = RNG.standard_normal((1200, 16)).astype(np.float32)


@pytest.mark.parametrize(
    "factory, knob",
    [
        ("HNSW16", "efSearch"),
        ("IVF16,Flat", "nprobe"),
        ("IVF16,PQ4x4", "nprobe"),
        ("OPQ4,IVF8,PQ4x4", "nprobe"),
        ("IVF8,PQ4x4,RFlat", "nprobe"),
        ("IVF8_HNSW8,Flat", "nprobe"),
        ("Flat", None),
    ],
)
def test_knob_ladder_and_default_of_any_factory_string(factory, knob):
    index = AnnIndex(factory).check(16)
    assert index.knob == knob
    if knob == "nprobe":
        assert index.ladder == tuple(sorted({min(v, index.nlist) for v in (1, 2, 4, 8, 16, 32)} | {index.default}))
        assert index.default == min(16, index.nlist)
    elif knob == "efSearch":
        assert index.ladder == EF_SEARCH and index.default == 64
    else:
        assert index.ladder == () and index.default is None


def test_visiting_every_list_of_an_ivf_flat_index_is_exact_search():
    index = AnnIndex("IVF16,Flat").fit(X)
    S, I = index.search(X[:100], 10, value=16)
    S0, I0 = topk(X[:100], X, 10)
    np.testing.assert_array_equal(I, I0)
    np.testing.assert_allclose(S, S0, atol=1e-5)
    _, few = index.search(X[:100], 10, value=1)
    assert overlap_at_k(I0, few) < 1  # one list of sixteen misses neighbours
    assert (np.diff(index.search(X[:100], 10)[0], axis=1) <= 0).all()


def test_builds_are_reproducible_and_leave_the_callers_threads():
    before = faiss.omp_get_max_threads()
    runs = [AnnIndex("HNSW16", ef_construction=40).fit(X).search(X[:200], 10, value=16)[1] for _ in range(2)]
    runs += [AnnIndex("IVF16,PQ4x4", seed=3).fit(X).search(X[:200], 10)[1] for _ in range(2)]
    assert faiss.omp_get_max_threads() == before
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[2], runs[3])


@pytest.mark.parametrize("factory", ["HNSW16", "HNSW16_SQ8", "HNSW16_PQ4x4"])
def test_an_hnsw_graph_is_added_on_every_thread_and_is_the_same_for_any_thread_count(factory, monkeypatch):
    Z = np.random.default_rng(4).standard_normal((3000, 16)).astype(np.float32)
    entered = []

    class Recorded(ann._Threads):
        def __enter__(self):
            entered.append(self.threads)
            return super().__enter__()

    monkeypatch.setattr(ann, "_Threads", Recorded)
    graphs, before = [], faiss.omp_get_max_threads()
    try:
        for threads in (1, 2, 3):
            faiss.omp_set_num_threads(threads)
            built = AnnIndex(factory, ef_construction=40).fit(Z)
            graphs.append(faiss.vector_to_array(faiss.downcast_index(built.index_).hnsw.neighbors))
            assert entered[-1] == threads  # the rows were added on every thread
    finally:
        faiss.omp_set_num_threads(before)
    assert graphs[0].size > 0 and all(np.array_equal(graphs[0], g) for g in graphs[1:])


def test_other_adds_and_older_faiss_run_on_one_thread(monkeypatch):
    empty = {f: faiss.index_factory(16, f, faiss.METRIC_INNER_PRODUCT) for f in ("HNSW16", "IVF16,Flat", "PCA8,HNSW16")}
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(2)
    try:
        assert [add_threads(i) for i in empty.values()] == [2, 1, 1]
        monkeypatch.setattr(faiss, "__version__", "1.15.0")  # not known to build the same graph on any thread count
        assert not deterministic_graph(empty["HNSW16"]) and add_threads(empty["HNSW16"]) == 1
    finally:
        faiss.omp_set_num_threads(before)


def test_sizes_are_what_faiss_stores_per_row():
    hnsw = AnnIndex("HNSW16").fit(X)
    links = faiss.downcast_index(hnsw.index_).hnsw.neighbors.size()
    assert hnsw.bytes_per_vector == pytest.approx(4 * 16 + 4 * links / len(X) + 12)  # row, links, level, offset
    ivf = AnnIndex("IVF16,PQ4x8").fit(X)
    assert ivf.bytes_per_vector == pytest.approx(4 + 8, abs=0.5)  # 4 one-byte codes and an 8-byte id
    assert ivf.index_bytes == len(faiss.serialize_index(ivf.index_))


def test_a_prebuilt_file_searches_as_the_index_it_was(tmp_path):
    built = AnnIndex("IVF16,Flat").fit(X)
    faiss.extract_index_ivf(built.index_).nprobe = 4
    faiss.write_index(built.index_, str(tmp_path / "my ivf.faiss"))
    read = AnnIndex.read(tmp_path / "my ivf.faiss").fit(X)
    assert read.knob == "nprobe" and read.default == 4  # the knob value saved in the file
    np.testing.assert_array_equal(read.search(X[:50], 5)[1], built.search(X[:50], 5, value=4)[1])
    assert read.bytes_per_vector == pytest.approx(built.bytes_per_vector)
    with pytest.raises(ValueError, match=r"the index holds 1,200 rows of d = 16, the vectors are 1,199 x 16"):
        read.fit(X[:-1])


def test_an_l2_file_on_unit_rows_gives_cosines(tmp_path):
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    flat = faiss.IndexFlatL2(16)
    flat.add(unit)
    faiss.write_index(flat, str(tmp_path / "l2.faiss"))
    S, I = AnnIndex.read(tmp_path / "l2.faiss").fit(X).search(X[:20], 5)
    S0, I0 = topk(X[:20], X, 5)
    np.testing.assert_array_equal(I, I0)
    np.testing.assert_allclose(S, S0, atol=1e-5)


def test_bad_factory_strings_and_files_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match=r"^'IVF16,Nope': FAISS cannot make this index \("):
        AnnIndex("IVF16,Nope").check(16)
    with pytest.raises(InputError, match=r"^--index faiss:LSH: FAISS cannot make this index"):
        parse_index("faiss:LSH", 1200, 16)  # LSH has no inner-product form
    (tmp_path / "junk.faiss").write_bytes(b"not an index")
    with pytest.raises(InputError, match=r"^--index file:.*junk.faiss: not a FAISS index file"):
        parse_index(f"file:{tmp_path / 'junk.faiss'}", 1200, 16)
    with pytest.raises(ValueError, match=r"^the index is not built; call fit first$"):
        AnnIndex("Flat").search(X[:2], 3)


def test_index_spec_grammar_keeps_factory_strings_whole():
    conds = parse_index("hnsw ; faiss:IVF16,PQ4x4;faiss: HNSW8", 1200, 16)
    assert [(c.name, c.factory) for c in conds] == [
        ("hnsw", "HNSW32"),
        ("ivf16-pq4x4", "IVF16,PQ4x4"),
        ("hnsw8", "HNSW8"),
    ]
    assert conds[1].settings() == ["nprobe=1", "nprobe=2", "nprobe=4", "nprobe=8", "nprobe=16"]
    with pytest.raises(InputError, match=r"^--index: faiss: names nothing in 'faiss:'$"):
        parse_index("faiss:", 1200, 16)
    with pytest.raises(InputError, match=r"^--index: hnsw listed twice$"):
        parse_index("hnsw;hnsw", 1200, 16)
    assert factory_name("OPQ32,IVF1024,PQ32") == "opq32-ivf1024-pq32" and file_name("/a/My Index.faiss") == "my-index"
    assert index_files("hnsw;file:/x/a.faiss") == {"--index a": "/x/a.faiss"}
    assert with_index_files("file:/x/a.faiss;hnsw", {"--index a": "/y/a.faiss"}) == "file:/y/a.faiss;hnsw"


def test_a_wrapped_hnsw_keeps_its_build_effort_and_saved_knob(tmp_path):
    index = AnnIndex("PCA8,HNSW8", ef_construction=24).fit(X)
    graph = faiss.downcast_index(faiss.downcast_index(index.index_).index).hnsw
    assert graph.efConstruction == 24
    graph.efSearch = 40
    faiss.write_index(index.index_, str(tmp_path / "pca-hnsw.faiss"))
    assert AnnIndex.read(tmp_path / "pca-hnsw.faiss").default == 40
