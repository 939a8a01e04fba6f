"""Conditions of ``embdiag report``: each representation is the library's transform (checked against a
direct call), index searches are sorted like ``topk`` and close to it, and bad specs name the option."""

import numpy as np
import pytest

from embdiag.interventions.ann import ivfpq_params, sort_like_topk
from embdiag.interventions.compression import MatryoshkaPrefix, PCACompression
from embdiag.interventions.precision import store
from embdiag.metrics.retrieval import overlap_at_k, topk
from embdiag.report import conditions
from embdiag.report.conditions import (
    ApproximateIndex,
    CompareFile,
    Compression,
    ReportCondition,
    Storage,
    file_condition,
    parse_compress,
    parse_conditions,
    parse_index,
)
from embdiag.data.files import InputError

RNG = np.random.default_rng(0)
X = RNG.standard_normal((400, 16)).astype(np.float32)


def by_name(conds):
    return {c.name: c for c in conds}


def unit(A):
    return A / np.linalg.norm(A.astype(np.float64), axis=1, keepdims=True)


def test_uncentred_pca_is_a_condition_of_its_own():
    """``upca<DIM>``: PCA without centring (issue #25, point 7), beside the centred ``pca<DIM>``."""
    shifted = X + 3.0  # a common offset: centring matters
    c = by_name(parse_compress("pca4,upca4", 16))
    assert (c["upca4"].kind, c["upca4"].method, c["upca4"].dim) == ("compression", "upca", 4)
    assert c["upca4"].description.startswith("Uncentred PCA (no mean subtracted) to 4 of 16 dimensions")
    assert c["pca4"].description.startswith("Centred PCA to 4 of 16 dimensions")
    up = PCACompression(4, center=False).fit(shifted)
    np.testing.assert_allclose(unit(c["upca4"].vectors(shifted)), up.transform(shifted), atol=1e-6)
    np.testing.assert_allclose(
        unit(c["pca4"].vectors(shifted)), PCACompression(4).fit(shifted).transform(shifted), atol=1e-6
    )
    assert not np.allclose(unit(c["upca4"].vectors(shifted)), unit(c["pca4"].vectors(shifted)), atol=1e-3)


def test_parse_compress_names_kinds_and_descriptions():
    conds = parse_compress("fp16, INT8,pca8,prefix4", 16)
    assert [(c.name, c.kind) for c in conds] == [
        ("fp16", "storage"),
        ("int8", "storage"),
        ("pca8", "compression"),
        ("prefix4", "compression"),
    ]
    assert "8 of 16 dimensions" in conds[2].description and "20,000 rows" in conds[2].description
    assert parse_compress("float16", 16)[0].name == "fp16"


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            "fp4",
            r"^--compress: unknown item 'fp4'; accepted: fp16 \(or float16\), int8, fp8, int8cal, int4, binary, "
            r"binary-rescore\[<M>\], pca<DIM> \(centred PCA\), upca<DIM> \(uncentred PCA\), prefix<DIM>",
        ),
        ("upca16", r"^--compress: 'upca16' asks for 16 dimensions; DIM must lie in \[1, 15\]"),
        (
            "pca16",
            r"^--compress: 'pca16' asks for 16 dimensions; DIM must lie in \[1, 15\] \(the vectors have d = 16\)",
        ),
        ("prefix0", r"^--compress: 'prefix0' asks for 0 dimensions"),
        ("int8,int8", r"^--compress: int8 listed twice$"),
        ("fp16,float16", r"^--compress: fp16 and float16 are the same condition \(fp16\); list it once$"),
        (
            "binary-rescore,binary-rescore4",
            r"^--compress: binary-rescore and binary-rescore4 are the same condition \(binary-rescore4\)",
        ),
        ("binary-rescore0", r"^--compress: 'binary-rescore0' rescores M k candidates; M must be at least 1$"),
        ("binary-rescorex", r"^--compress: unknown item 'binary-rescorex'"),
        ("fp16,", r"^--compress: empty item in 'fp16,'$"),
        ("", r"^--compress: empty item in ''$"),
    ],
)
def test_parse_compress_errors(spec, message):
    with pytest.raises(InputError, match=message):
        parse_compress(spec, 16)


def test_parse_conditions_one_class_per_kind_in_option_order():
    conds = parse_conditions("int8,pca4", "hnsw", n=len(X), d=16, compare=X[:, :8])
    assert [type(c) for c in conds] == [CompareFile, Storage, Compression, ApproximateIndex]
    assert [(c.name, c.kind, c.has_vectors) for c in conds] == [
        ("compare", "file", True),
        ("int8", "storage", True),
        ("pca4", "compression", True),
        ("hnsw", "index", False),
    ]
    assert (conds[1].format, conds[2].method, conds[2].dim) == ("int8", "pca", 4)
    assert parse_conditions("", " ", n=len(X), d=16) == []  # blank specs (an absent option): no condition
    assert parse_conditions(conds[1:3], (), n=len(X), d=16) == conds[1:3]  # built conditions pass as they are
    with pytest.raises(
        InputError,
        match=r"^conditions: names must be unique and not 'reference'; repeated or "
        r"reserved: \['fp16'\]$",
    ):
        parse_conditions("fp16", [Storage.of("float16")], n=len(X), d=16)
    with pytest.raises(InputError, match=r"^--compare: has 3 row\(s\), expected 400 \(one per vector\)$"):
        parse_conditions(n=len(X), d=16, compare=X[:3])


def test_parse_index_errors_and_parameters():
    with pytest.raises(
        InputError, match=r"^--index: unknown item 'flat'; accepted: hnsw, ivfpq, faiss:<index_factory string>, file:"
    ):
        parse_index("hnsw,flat", 1000, 16)
    with pytest.raises(
        InputError,
        match=r"^--index: ivfpq needs at least 624 rows \(4-bit codebooks of 39 "
        r"training rows per centroid\), got 623$",
    ):
        parse_index("ivfpq", 623, 16)
    assert parse_index("ivfpq", 624, 16)[0].params["nbits"] == 4
    (h,) = parse_index("hnsw", 1000, 16)
    assert h.description.startswith("FAISS HNSW, M=32, efConstruction=200, efSearch=64")
    assert "graph built on every FAISS thread" in h.description  # the same graph on any number of threads
    assert "built on one thread (reproducible)" in parse_index("ivfpq", 1000, 16)[0].description
    p = ivfpq_params(1_000_000, 768)
    assert (p["nlist"], p["m"], p["nbits"], p["nprobe"], p["train_rows"]) == (1000, 96, 8, 16, 40000)
    assert ivfpq_params(10**9, 100)["nlist"] == 4096 and ivfpq_params(10**9, 100)["m"] == 10
    assert ivfpq_params(1000, 7)["m"] == 1  # d // 8 == 0: one sub-quantizer
    # every codebook gets at least 39 training rows per centroid (FAISS's rule), 8 bits at most
    assert [ivfpq_params(n, 16)["nbits"] for n in (624, 1247, 1248, 2983, 9983, 9984, 10**6)] == [4, 4, 5, 6, 7, 8, 8]


def test_storage_and_compression_vectors_are_the_library_transforms(monkeypatch):
    monkeypatch.setattr(conditions, "CHUNK_ROWS", 64)  # several chunks: chunking changes nothing
    c = by_name(parse_compress("fp16,int8,pca8,prefix4", 16))
    for fmt, name in (("float16", "fp16"), ("int8", "int8")):
        out = c[name].vectors(X)
        assert out.dtype == np.float32 and out.shape == X.shape
        np.testing.assert_array_equal(out, store(X, fmt).reconstruct().astype(np.float32))
    fit = X[:300]
    # raw rows (the projection, not renormalized); their unit rows are the library's transform
    pca = PCACompression(8).fit(fit)
    np.testing.assert_array_equal(c["pca8"].vectors(X, fit), ((X - pca.mean_) @ pca.components_.T).astype(np.float32))
    np.testing.assert_allclose(unit(c["pca8"].vectors(X, fit)), pca.transform(X), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(c["prefix4"].vectors(X), X[:, :4])
    np.testing.assert_allclose(unit(c["prefix4"].vectors(X)), MatryoshkaPrefix(4).fit(X).transform(X), atol=1e-6)
    # default fit: all rows when there are at most fit_rows
    np.testing.assert_allclose(unit(c["pca8"].vectors(X)), PCACompression(8).fit(X).transform(X), atol=1e-6)
    small = parse_compress("pca8", 16, fit_rows=100, seed=3)[0]
    assert "at most 100 rows (seed 3)" in small.description
    assert not np.array_equal(small.vectors(X), c["pca8"].vectors(X))


def test_file_condition_rows():
    A = RNG.standard_normal((400, 5))
    c = file_condition(A, "other")
    assert (c.name, c.kind) == ("other", "file")
    rows = np.array([3, 1, 399])
    np.testing.assert_array_equal(c.vectors(X[rows], rows=rows), A[rows].astype(np.float32))
    assert c.vectors(X) is A  # all rows in order: the array itself (a memory-map stays one), no copy
    assert c.vectors(X, rows=np.arange(400)[::-1]).dtype == np.float32
    np.testing.assert_array_equal(c.vectors(X, rows=np.arange(400)[::-1]), A[::-1].astype(np.float32))
    half = file_condition(A.astype(np.float16), "half")
    assert half.vectors(X).dtype == np.float32  # other dtypes: a float32 copy
    with pytest.raises(ValueError, match=r"^X: has 3 rows, the other file has 400; pass rows=$"):
        c.vectors(X[rows])
    with pytest.raises(InputError, match=r"^--compare: expected an n x d numeric array, got shape \(5,\)"):
        file_condition(np.ones(5))


def test_file_condition_reads_a_path(tmp_path):
    path = tmp_path / "model_b.npy"
    np.save(path, X[:, :8])
    c = file_condition(path)
    assert c.name == "model_b" and "model_b.npy" in c.description
    np.testing.assert_array_equal(c.vectors(X), X[:, :8])


def test_sort_like_topk_breaks_ties_by_lower_index():
    S = np.array([[0.5, 0.9, 0.5, 0.1]], dtype=np.float32)
    I = np.array([[7, 2, 3, 1]])
    s, i = sort_like_topk(S, I)
    np.testing.assert_array_equal(i, [[2, 3, 7, 1]])
    np.testing.assert_array_equal(s, np.float32([[0.9, 0.5, 0.5, 0.1]]))


def test_hnsw_search_is_sorted_close_to_exact_and_reproducible_single_threaded():
    faiss = pytest.importorskip("faiss")
    faiss.omp_set_num_threads(1)
    (h,) = parse_index("hnsw", len(X), 16)
    S, I = h.search(X[:50], X, 10)
    assert h.vectors(X) is None and not h.has_vectors
    assert (np.diff(S, axis=1) <= 0).all()
    _, exact = topk(X[:50], X, 10)
    assert overlap_at_k(exact, I) > 0.95
    (again,) = parse_index("hnsw", len(X), 16)
    np.testing.assert_array_equal(again.search(X[:50], X, 10)[1], I)
    assert h._cache["gallery"] is X  # the index is built once per gallery object
    index = h._cache["ann"]
    h.search(X[:5], X, 3)
    assert h._cache["ann"] is index


def test_ivfpq_search_returns_k_results_sorted():
    pytest.importorskip("faiss")
    Z = RNG.standard_normal((700, 16)).astype(np.float32)
    (c,) = parse_index("ivfpq", len(Z), 16)
    S, I = c.search(Z[:20], Z, 10)
    assert I.shape == (20, 10) and (I >= 0).all() and (np.diff(S, axis=1) <= 0).all()


def test_exact_search_of_a_vector_condition_is_topk_of_its_vectors():
    c = parse_compress("prefix8", 16)[0]
    S, I = c.search(X[:10], X, 5)
    S2, I2 = topk(c.vectors(X[:10]), c.vectors(X), 5)
    np.testing.assert_array_equal(I, I2)
    assert isinstance(c, ReportCondition)


@pytest.mark.parametrize("kind", ["hnsw", "ivfpq"])
def test_index_builds_are_reproducible_whatever_the_thread_count(kind):
    faiss = pytest.importorskip("faiss")
    Z = np.random.default_rng(5).standard_normal((3000, 32)).astype(np.float32)
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(2)
    try:
        runs = [parse_index(kind, len(Z), 32)[0].search(Z[:300], Z, 10)[1] for _ in range(3)]
        assert faiss.omp_get_max_threads() == 2  # the caller's setting is restored
    finally:
        faiss.omp_set_num_threads(before)
    assert all(np.array_equal(runs[0], r) for r in runs[1:])


# ----------------------------------------------------------------------------- deployed stacks' codes


def test_deployed_codes_parse_with_names_conventions_and_bytes():
    conds = parse_compress(
        "st-int8,st-int8-rescore,st-uint8-rescore3,int8floor,mteb-int8-b100,mteb-int4,mteb-binary,mteb-fp8", 16
    )
    got = [(c.name, c.kind, c.convention, c.bytes_per_vector(16)) for c in conds]
    assert got == [
        ("st-int8", "storage", "sentence-transformers/usearch", 16.0),
        ("st-int8-rescore2", "storage", "sentence-transformers/usearch", 16.0),
        ("st-uint8-rescore3", "storage", "sentence-transformers/FAISS", 16.0),
        ("int8floor", "storage", "sentence-transformers codes decoded at the bin floor", 16.0),
        ("mteb-int8-b100", "storage", "mteb", 16.0),
        ("mteb-int4", "storage", "mteb", 8.0),
        ("mteb-binary", "storage", "mteb", 2.0),
        ("mteb-fp8", "storage", "mteb", 16.0),
    ]
    c = by_name(conds)
    assert 'Index(metric="ip", dtype="i8")' in c["st-int8"].description
    assert "rescore_multiplier=2" in c["st-int8-rescore2"].description
    assert "IndexFlatIP" in c["st-uint8-rescore3"].description
    assert "each run of 100 consecutive rows" in c["mteb-int8-b100"].description
    assert "each run of 50,000 consecutive rows" in c["mteb-int4"].description
    assert "not Hamming" in c["mteb-binary"].description and "no per-row scale" in c["mteb-fp8"].description
    assert [x.fitted for x in conds] == [True] * 4 + [False] * 4
    assert [x.cosine_search for x in conds] == [False] * 3 + [True] * 5


@pytest.mark.parametrize(
    "spec, message",
    [
        ("st-int8-rescore0", r"^--compress: 'st-int8-rescore0' rescores M k candidates; M must be at least 1$"),
        ("mteb-int8-b1", r"^--compress: 'mteb-int8-b1' calibrates B rows at a time; B must be at least 2$"),
        ("st-int8-rescore,st-int8-rescore2", r"same condition \(st-int8-rescore2\)"),
        ("mteb-uint8", r"^--compress: unknown item 'mteb-uint8'; accepted: .* st-int8\[-rescore\[<M>\]\]"),
    ],
)
def test_deployed_codes_errors(spec, message):
    with pytest.raises(InputError, match=message):
        parse_compress(spec, 16)


def test_every_condition_names_its_convention():
    conds = by_name(
        parse_conditions("fp16,int8,fp8,int8cal,int4,binary,binary-rescore,pca4,prefix4", "hnsw", n=400, d=16)
    )
    assert all(c.convention for c in conds.values())
    assert conds["int8cal"].convention == conds["int4"].convention == "embdiag (decoded to bin centres)"
    assert conds["binary"].convention == "Hamming (FAISS IndexBinaryFlat, usearch b1)"
    assert conds["fp16"].convention.startswith("IEEE float16")
    assert conds["hnsw"].convention == "FAISS" and file_condition(X).convention == "as given (--compare)"


def test_existing_storage_descriptions_are_unchanged():
    c = by_name(parse_compress("int8cal,binary,binary-rescore", 16))
    assert c["int8cal"].description == (
        "Vectors stored as int8 codes on per-dimension calibration ranges, 255 equal steps from each dimension's "
        "minimum to its maximum (round to nearest, clipped) and reconstructed; exact cosine search in float32; "
        "ranges from a seeded sample of at most 20,000 rows (seed 0), one shared table of 2 x d float64 not counted "
        "per vector."
    )
    assert (
        c["binary"].description
        == "Vectors stored as sign bits (x > 0), eight to a byte; searched by Hamming distance (ties by lower index)."
    )
    assert c["binary-rescore4"].name == "binary-rescore4"


def test_deployed_vectors_are_the_stacks_codes():
    from embdiag.interventions.codes import calibration_ranges
    from embdiag.interventions.conventions import mteb_quantize, st_dequantize, st_quantize

    quantization = pytest.importorskip("sentence_transformers.util.quantization")
    c = by_name(parse_compress("st-int8,st-uint8,int8floor,mteb-int8-b150,mteb-binary", 16))
    fit = X[:100]
    R = calibration_ranges(fit)
    st8 = quantization.quantize_embeddings(X, precision="int8", calibration_embeddings=fit)
    np.testing.assert_array_equal(c["st-int8"].vectors(X, fit), st8.astype(np.float32))
    st_u8 = quantization.quantize_embeddings(X, precision="uint8", ranges=R)
    np.testing.assert_array_equal(c["st-uint8"].vectors(X, fit), st_u8.astype(np.float32))
    floor = quantization._dequantize_embeddings(st8.astype(int), "int8", R)
    np.testing.assert_array_equal(c["int8floor"].vectors(X, fit), floor.astype(np.float32))
    np.testing.assert_array_equal(
        c["int8floor"].vectors(X, fit), st_dequantize(st_quantize(X, R), R).astype(np.float32)
    )
    runs = np.concatenate([mteb_quantize(X[a : a + 150], "int8") for a in (0, 150, 300)])
    np.testing.assert_array_equal(c["mteb-int8-b150"].vectors(X), runs)
    np.testing.assert_array_equal(c["mteb-binary"].vectors(X), (X > 0).astype(np.float32))
    assert c["st-int8"].vectors(X).tolist() == c["st-int8"].vectors(X, X).tolist()  # default: all 400 rows


@pytest.mark.parametrize("item, rescore", [("st-int8", False), ("st-int8-rescore3", True)])
def test_st_int8_search_is_semantic_search_usearch(item, rescore):
    quantization = pytest.importorskip("sentence_transformers.util.quantization")
    (c,) = parse_compress(item, 16)
    G, Q = unit(X).astype(np.float32), unit(RNG.standard_normal((12, 16))).astype(np.float32)
    _, ours = c.search(Q, G, 10, fit=G[:200])
    codes = quantization.quantize_embeddings(G, precision="int8", calibration_embeddings=G[:200])
    query = Q if rescore else quantization.quantize_embeddings(Q, precision="int8", calibration_embeddings=G[:200])
    results, _ = quantization.semantic_search_usearch(
        query,
        corpus_embeddings=codes,
        corpus_precision="int8",
        top_k=10,
        calibration_embeddings=G[:200],
        rescore=rescore,
        rescore_multiplier=3,
    )
    np.testing.assert_array_equal(ours, [[r["corpus_id"] for r in row] for row in results])


def test_mteb_conditions_search_the_cosine_of_their_codes():
    (c,) = parse_compress("mteb-int8", 16)
    codes = c.vectors(X)
    np.testing.assert_array_equal(c.search(X[:20], X, 5)[1], topk(c.vectors(X[:20]), codes, 5)[1])


def test_deployed_codes_in_a_report():
    """Measured end to end: the raw-code search and its geometry, with their conventions' names."""
    from embdiag.interventions.conventions import code_topk, st_quantize
    from embdiag.interventions.codes import calibration_ranges
    from embdiag.report import measure

    V = unit(X).astype(np.float32)
    report = measure(V, compress="st-int8,mteb-binary", progress=False)
    rows = report.tables["identity"].set_index("condition")
    codes = st_quantize(V, calibration_ranges(V))
    _, idx = code_topk(codes, codes, 10, exclude_self=True)
    _, ref = topk(V, V, 10, exclude_self=True, dtype=np.float64)
    changed = np.mean(np.any(np.sort(idx, axis=1) != np.sort(ref, axis=1), axis=1))
    assert rows.loc["st-int8", "changed_queries"] == pytest.approx(changed)
    assert set(report.tables["conditions"]["name"]) == {"st-int8", "mteb-binary"}


def test_conditions_exhibit_shows_the_convention_column_when_the_table_has_one():
    import pandas as pd

    from embdiag.report.sections import conditions as section

    conds = parse_compress("int8cal,st-int8", 16)
    rows = [{"name": c.name, "kind": c.kind, "description": c.description} for c in conds]
    (plain,) = section._draw(None, pd.DataFrame(rows), {})
    assert "convention" not in plain.html and section.CONVENTION.strip() not in plain.html
    for row, c in zip(rows, conds):
        row["convention"] = c.convention
    (shown,) = section._draw(None, pd.DataFrame(rows), {})
    assert "sentence-transformers/usearch" in shown.html and "embdiag (decoded to bin centres)" in shown.html
    assert shown.html.index(">convention<") < shown.html.index(">description<")
