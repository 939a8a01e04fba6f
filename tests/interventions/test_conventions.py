"""Codes and scores of deployed stacks (embdiag.interventions.conventions) against the stacks themselves.

sentence-transformers 6.2 and usearch 2.26 are test dependencies: the codes must equal
``quantize_embeddings`` bit for bit and the rankings ``semantic_search_usearch`` /
``semantic_search_faiss`` (exact=True) exactly. mteb (heavy: datasets, polars) is checked
against ``CompressionWrapper`` where it is installed, and always against a transcription of its
source with torch.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from embdiag.interventions.codes import calibration_ranges
from embdiag.interventions.conventions import (
    MTEB_FORMATS,
    code_topk,
    mteb_quantize,
    st_dequantize,
    st_quantize,
    st_topk,
)

quantization = pytest.importorskip("sentence_transformers.util.quantization")

FLOATS = st.floats(-4, 4, allow_nan=False, width=32)


def _fixture(seed: int, n: int = 300, nq: int = 25, d: int = 48):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, d)).astype(np.float32)
    G /= np.linalg.norm(G, axis=1, keepdims=True)
    Q = rng.standard_normal((nq, d)).astype(np.float32)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    return Q, G, calibration_ranges(G[:200])


def _st_ranking(results) -> np.ndarray:
    return np.array([[r["corpus_id"] for r in row] for row in results])


def _tie_free(scores: np.ndarray, upto: int) -> bool:
    s = scores[:, :upto]
    return bool((np.diff(s, axis=1) != 0).all())


# ----------------------------------------------------------------------------- sentence-transformers


@pytest.mark.filterwarnings("ignore:overflow encountered in divide")  # sentence-transformers' own, on a tiny step
@settings(max_examples=40, deadline=None)
@given(
    arrays(np.float32, st.tuples(st.integers(2, 30), st.integers(1, 12)), elements=FLOATS),
    st.sampled_from(["int8", "uint8"]),
    st.sampled_from([np.float32, np.float64]),
)
def test_st_codes_equal_quantize_embeddings_bit_for_bit(X, precision, dtype):
    """Calibrated on the first half (so the rest can fall outside the ranges and be clipped)."""
    X = X.astype(dtype)
    R = calibration_ranges(X[: max(1, len(X) // 2)])
    ours = st_quantize(X, R, precision)
    theirs = quantization.quantize_embeddings(X, precision=precision, ranges=R)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    both = quantization.quantize_embeddings(X, precision=precision, calibration_embeddings=X[: max(1, len(X) // 2)])
    np.testing.assert_array_equal(ours, both)


@settings(max_examples=20, deadline=None)
@given(arrays(np.float32, st.tuples(st.integers(2, 20), st.integers(1, 8)), elements=FLOATS))
def test_st_floor_decoding_equals_its_rescoring(X):
    R = calibration_ranges(X)
    for precision in ("int8", "uint8"):
        codes = st_quantize(X, R, precision)
        theirs = quantization._dequantize_embeddings(codes.astype(int), precision, R)
        np.testing.assert_array_equal(st_dequantize(codes, R, precision), theirs)


def test_st_max_value_falls_below_the_top_code():
    """float32 steps put a dimension's maximum just below 255: its code is 254 (126 in int8)."""
    assert st_quantize([[1.0]], [[0.0], [1.0]], "uint8")[0, 0] == 254


@pytest.mark.parametrize("rescore", [0, 2, 3])
def test_st_topk_equals_semantic_search_usearch(rescore):
    Q, G, R = _fixture(0)
    k = 10
    ours_s, ours = st_topk(Q, G, k, R, rescore=rescore)
    codes = st_quantize(G, R, "int8")
    if rescore:
        assert _tie_free(ours_s, k + 1)
        results, _ = quantization.semantic_search_usearch(
            Q, corpus_embeddings=codes, corpus_precision="int8", top_k=k, ranges=R, rescore_multiplier=rescore
        )
    else:
        cand_s, _ = code_topk(st_quantize(Q, R), codes, k + 1)
        assert _tie_free(cand_s, k + 1)
        results, _ = quantization.semantic_search_usearch(
            st_quantize(Q, R), corpus_embeddings=codes, corpus_precision="int8", top_k=k, rescore=False
        )
    np.testing.assert_array_equal(ours, _st_ranking(results))
    theirs = np.array([[r["score"] for r in row] for row in results])  # without rescoring: usearch's 1 - dot
    np.testing.assert_allclose(ours_s, theirs if rescore else 1 - theirs, rtol=1e-6)


@pytest.mark.parametrize("rescore", [0, 2])
def test_st_uint8_topk_equals_semantic_search_faiss(rescore):
    Q, G, R = _fixture(1)
    k = 10
    ours_s, ours = st_topk(Q, G, k, R, precision="uint8", rescore=rescore)
    assert _tie_free(ours_s, k)
    codes = st_quantize(G, R, "uint8")
    query = Q if rescore else st_quantize(Q, R, "uint8")
    results, _ = quantization.semantic_search_faiss(
        query,
        corpus_embeddings=codes,
        corpus_precision="uint8",
        top_k=k,
        ranges=R,
        rescore=bool(rescore),
        rescore_multiplier=max(rescore, 1),
    )
    np.testing.assert_array_equal(ours, _st_ranking(results))


def test_st_rescoring_candidates_are_the_code_ranking():
    """Rescoring re-orders the m k best by code: every rescored result is among them."""
    Q, G, R = _fixture(2)
    _, cand = code_topk(st_quantize(Q, R), st_quantize(G, R), 20)
    _, idx = st_topk(Q, G, 10, R, rescore=2)
    assert all(set(a) <= set(b) for a, b in zip(idx, cand))


# ----------------------------------------------------------------------------- code search


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.int8, st.tuples(st.integers(3, 25), st.integers(1, 6)), elements=st.integers(-3, 3)),
    st.integers(1, 5),
    st.booleans(),
)
def test_code_topk_is_the_brute_force_ranking_ties_by_lower_index(C, k, exclude_self):
    """Few code values: many ties, all broken by the lower gallery index."""
    n = len(C)
    k = min(k, n - 1)
    S = (C.astype(np.int64) @ C.astype(np.int64).T).astype(np.float64)
    if exclude_self:
        np.fill_diagonal(S, -np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(n), S.shape), -S), axis=1)[:, :k]
    scores, idx = code_topk(C, C, k, exclude_self=exclude_self, chunk_size=4)
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(scores, np.take_along_axis(S, order, axis=1))


def test_code_topk_refuses_floats_and_too_many():
    C = np.zeros((3, 2), dtype=np.int8)
    with pytest.raises(ValueError, match="integer"):
        code_topk(C.astype(float), C, 1)
    with pytest.raises(ValueError, match="at most"):
        code_topk(C, C, 3, exclude_self=True)


# ----------------------------------------------------------------------------- mteb

# mteb/models/compression_wrappers/compression_wrapper.py, CompressionWrapper._quantize_embeddings
# (mteb 2.26.24; the same lines at embeddings-benchmark/mteb a905523d0111f999360b312bd4a601a0a97a0e1c):
#   float8 / float16: quantized = embeddings.type(torch_dtype).type(torch.float16)
#   int8 / int4:      mins, maxs = torch.min(embeddings, dim=0).values, torch.max(embeddings, dim=0).values
#                     steps = (maxs - mins) / (2**num_bits - 1)
#                     subtract = 0 if unsigned else int(2**num_bits * 0.5)
#                     quantized = torch.floor((embeddings - mins) / steps) - subtract
#   binary:           quantized = torch.where(embeddings > 0, 1.0, 0.0)
# encode() first does torch.tensor(embeddings).float(); search_wrappers.py encodes the queries in one
# call and the corpus in runs of corpus_chunk_size = 50_000 rows; scores: model.similarity (cosine).


def _mteb_transcribed(X: np.ndarray, fmt: str) -> np.ndarray:
    torch = pytest.importorskip("torch")
    e = torch.tensor(X).float()
    if fmt == "fp8":
        return e.type(torch.float8_e4m3fn).type(torch.float16).float().numpy()
    if fmt == "binary":
        return torch.where(e > 0, 1.0, 0.0).numpy()
    bits = MTEB_FORMATS[fmt]
    mins, maxs = torch.min(e, dim=0).values, torch.max(e, dim=0).values
    steps = (maxs - mins) / (2**bits - 1)
    subtract = 0 if fmt.startswith("u") else int(2**bits * 0.5)
    return (torch.floor((e - mins) / steps) - subtract).numpy()


MTEB_CASES = arrays(
    np.float32,
    st.tuples(st.integers(2, 20), st.integers(1, 8)),
    elements=st.floats(-500, 500, allow_nan=False, width=32),
    unique=True,
)


@settings(max_examples=40, deadline=None)
@given(MTEB_CASES, st.sampled_from(sorted(MTEB_FORMATS)))
def test_mteb_codes_equal_its_source_transcribed(X, fmt):
    """Distinct values: no dimension is constant (mteb divides by a zero step there)."""
    np.testing.assert_array_equal(mteb_quantize(X, fmt), _mteb_transcribed(X, fmt))


def test_mteb_runs_are_calibrated_on_themselves():
    X = np.random.default_rng(3).standard_normal((25, 4)).astype(np.float32)
    out = mteb_quantize(X, "int8", batch=10)
    for a in (0, 10, 20):
        np.testing.assert_array_equal(out[a : a + 10], _mteb_transcribed(X[a : a + 10], "int8"))
    assert np.isnan(mteb_quantize(np.ones((2, 3)), "int4")).all()  # a constant run: 0 / 0, as in mteb


def test_mteb_fixture_values():
    """Hand-computed from the lines above: float32 steps put a maximum just below the top code."""
    X = np.array([[0.0, 1.0], [1.0, -1.0], [0.5, 0.0]])
    np.testing.assert_array_equal(mteb_quantize(X, "int4"), [[-8, 6], [6, -8], [-1, -1]])
    np.testing.assert_array_equal(mteb_quantize(X, "binary"), [[0, 1], [1, 0], [1, 0]])
    np.testing.assert_array_equal(mteb_quantize([[0.1, 500.0, 2.0**-10]], "fp8"), [[0.1015625, 448.0, 0.0]])


@pytest.mark.parametrize("fmt", ["int8", "int4", "uint8", "binary", "fp8"])
def test_mteb_codes_equal_compression_wrapper(fmt):
    pytest.importorskip("mteb")
    torch = pytest.importorskip("torch")
    from mteb.models.compression_wrappers.compression_wrapper import CompressionWrapper
    from mteb.types import OutputDType

    wrapper = object.__new__(CompressionWrapper)  # no model: only its quantization is exercised
    level = {"fp8": OutputDType.FLOAT8_E4M3FN}.get(fmt) or OutputDType(fmt)
    wrapper._quantization_level, wrapper.clipping_margin, wrapper.min_embeds = level, None, 0
    X = np.random.default_rng(4).standard_normal((40, 16)).astype(np.float32) / 4
    theirs = wrapper._quantize_embeddings(torch.tensor(X))
    np.testing.assert_array_equal(mteb_quantize(X, fmt), theirs.float().numpy())
