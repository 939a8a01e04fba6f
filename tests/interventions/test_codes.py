"""Low-bit codes: float8 e4m3 against PyTorch's float8_e4m3fn bit for bit, calibrated integers
against their definition and sentence-transformers' layout, sign-bit search against FAISS's
binary index and a brute-force Hamming sort."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embdiag.interventions.codes import (
    E4M3_MAX,
    calibrated_decode,
    calibrated_encode,
    calibration_ranges,
    e4m3_decode,
    e4m3_encode,
    pack_nibbles,
    sign_topk,
    unpack_nibbles,
)


def _values(seed: int = 0) -> np.ndarray:
    """float32 values over every e4m3 binade: random, powers of two, exact midpoints (ties), subnormals."""
    rng = np.random.default_rng(seed)
    random = rng.normal(size=20000) * rng.choice([1e-4, 1e-3, 1e-2, 0.1, 1, 10, 100], 20000)
    powers = np.ldexp(1.0, np.arange(-12, 9))
    grid = e4m3_decode(np.arange(0, 127, dtype=np.uint8))
    midpoints = (grid[1:] + grid[:-1]) / 2  # ties: to even
    x = np.concatenate([random, powers, -powers, powers * 1.0625, midpoints, -midpoints, [0.0, E4M3_MAX]])
    return x[np.abs(x) <= E4M3_MAX].astype(np.float32)


def test_e4m3_matches_pytorch_bit_for_bit():
    torch = pytest.importorskip("torch")
    x = _values()
    reference = torch.from_numpy(x).to(torch.float8_e4m3fn)
    np.testing.assert_array_equal(e4m3_encode(x.astype(np.float64)), reference.view(torch.uint8).numpy())
    np.testing.assert_array_equal(e4m3_decode(e4m3_encode(x)), reference.to(torch.float64).numpy())


def test_every_e4m3_value_is_its_own_code():
    finite = np.array([b for b in range(256) if b & 0x7F != 0x7F], dtype=np.uint8)  # 0x7f, 0xff: NaN
    values = e4m3_decode(finite)
    np.testing.assert_array_equal(e4m3_encode(values), finite)
    assert values.max() == E4M3_MAX and sorted(set(np.abs(values)))[1] == 2.0**-9  # largest; smallest subnormal


def test_e4m3_rounds_ties_to_even_and_saturates():
    assert e4m3_decode(e4m3_encode(np.array([1.0625, 1.1875, 500.0, -1e30]))).tolist() == [1.0, 1.25, 448.0, -448.0]
    assert e4m3_decode(e4m3_encode(np.array([2.0**-10, 3 * 2.0**-11]))).tolist() == [0.0, 2.0**-9]


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-E4M3_MAX, max_value=E4M3_MAX, allow_subnormal=False))
def test_e4m3_error_is_at_most_half_a_quantum(x):
    r = float(e4m3_decode(e4m3_encode(np.array([x])))[0])
    binade = max(np.frexp(abs(x))[1] - 1, -6)
    assert abs(r - x) <= 2.0 ** (binade - 4) * (1 + 1e-12)  # half of the quantum 2^(binade - 3)


def test_calibrated_codes_round_to_the_nearest_step_within_the_ranges():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 12)) * rng.uniform(0.1, 3, 12)
    R = calibration_ranges(X[:300])
    for bits in (4, 8):
        step = (R[1] - R[0]) / (2**bits - 1)
        u = calibrated_encode(X, R, bits)
        assert u.dtype == np.uint8 and u.min() == 0 and u.max() == 2**bits - 1
        back = calibrated_decode(u, R, bits)
        inside = (X >= R[0]) & (X <= R[1])
        assert (np.abs(back - X)[inside] <= (step / 2 * (1 + 1e-9) + 1e-15)[np.nonzero(inside)[1]]).all()
        np.testing.assert_allclose(back[~inside], np.clip(X, R[0], R[1])[~inside], atol=1e-12)  # clipped to an end
        grid = R[0] + np.arange(2**bits)[:, None] * step
        np.testing.assert_allclose(calibrated_decode(calibrated_encode(grid, R, bits), R, bits), grid, atol=1e-12)


def test_int8_codes_differ_from_sentence_transformers_truncation_by_at_most_one():
    # sentence-transformers' quantize_embeddings(precision="int8"): ((x - low) / step - 128).astype(int8),
    # which truncates toward zero: up for the lower half of the range, down for the upper
    X = np.random.default_rng(2).normal(size=(200, 16))
    R = calibration_ranges(X)
    step = (R[1] - R[0]) / 255
    truncated = ((X - R[0]) / step - 128).astype(np.int8).astype(int)
    ours = calibrated_encode(X, R, 8).astype(int) - 128
    assert set(np.unique(ours - truncated)) == {-1, 0, 1}


def test_a_constant_dimension_is_stored_exactly():
    X = np.column_stack([np.full(5, 0.7), np.arange(5.0)])
    R = calibration_ranges(X)
    np.testing.assert_array_equal(calibrated_decode(calibrated_encode(X, R, 4), R, 4)[:, 0], 0.7)


@pytest.mark.parametrize("d", [1, 2, 7, 8])
def test_nibbles_pack_two_to_a_byte_and_unpack(d):
    c = np.random.default_rng(d).integers(0, 16, size=(9, d)).astype(np.uint8)
    packed = pack_nibbles(c)
    assert packed.shape == (9, -(-d // 2))
    np.testing.assert_array_equal(unpack_nibbles(packed, d), c)


def test_bad_ranges_and_bits_are_refused_by_name():
    X = np.ones((3, 2))
    for R in (np.ones((2, 3)), np.array([[1.0, 1.0], [0.0, 2.0]]), np.array([[0.0, np.nan], [1.0, 1.0]])):
        with pytest.raises(ValueError, match="^ranges: expected a finite 2 x 2 array"):
            calibrated_encode(X, R, 8)
    with pytest.raises(ValueError, match="^ranges: a span high - low exceeds the float64 range"):
        calibrated_encode(X, [[-1e308, 0.0], [1e308, 1.0]], 8)
    for bits, message in ((0, "must be at least 1"), (9, "must be at most 8"), (4.0, "expected an integer")):
        with pytest.raises(ValueError, match=f"^bits: {message}"):
            calibrated_encode(X, calibration_ranges(X), bits)


def _hamming(Q: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Hamming distances of the sign bits (x > 0), by XOR and popcount of the packed bytes."""
    q, g = np.packbits(Q > 0, axis=1), np.packbits(G > 0, axis=1)
    return np.unpackbits(q[:, None, :] ^ g[None, :, :], axis=2).sum(axis=2)


def test_sign_search_ranks_by_hamming_distance_ties_by_lower_index():
    rng = np.random.default_rng(3)
    G = rng.normal(size=(300, 16))  # 16 bits: many exact ties
    Q = rng.normal(size=(40, 16))
    H = _hamming(Q, G)
    order = np.lexsort((np.broadcast_to(np.arange(300), H.shape), H), axis=1)[:, :10]
    scores, idx = sign_topk(Q, G, 10, chunk_size=37)  # chunks that cut through tie groups
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(scores, (16 - 2 * np.take_along_axis(H, order, axis=1)) / 16)


def test_sign_search_distances_match_faiss_binary_index():
    faiss = pytest.importorskip("faiss")
    rng = np.random.default_rng(4)
    G, Q = rng.normal(size=(2000, 64)), rng.normal(size=(50, 64))
    index = faiss.IndexBinaryFlat(64)
    index.add(np.packbits(G > 0, axis=1))
    D, _ = index.search(np.packbits(Q > 0, axis=1), 20)
    scores, _ = sign_topk(Q, G, 20)
    np.testing.assert_array_equal(np.rint(64 * (1 - scores) / 2).astype(int), D)


def test_sign_search_excludes_self():
    X = np.random.default_rng(5).normal(size=(60, 8))
    _, idx = sign_topk(X, X, 5, exclude_self=True)
    assert not (idx == np.arange(60)[:, None]).any()
    H = _hamming(X, X).astype(float)
    np.fill_diagonal(H, np.inf)
    np.testing.assert_array_equal(idx, np.lexsort((np.broadcast_to(np.arange(60), H.shape), H), axis=1)[:, :5])


def test_rescoring_reorders_the_hamming_candidates_by_the_float_query():
    rng = np.random.default_rng(6)
    G, Q = rng.normal(size=(400, 24)), rng.normal(size=(30, 24))
    signs = np.where(G > 0, 1.0, -1.0)
    full = (Q / np.linalg.norm(Q, axis=1, keepdims=True)) @ signs.T / np.sqrt(24)
    best = np.lexsort((np.broadcast_to(np.arange(400), full.shape), -full), axis=1)[:, :5]
    scores, idx = sign_topk(Q, G, 5, rescore=80)  # 400 candidates: every row rescored
    np.testing.assert_array_equal(idx, best)
    np.testing.assert_allclose(scores, np.take_along_axis(full, best, axis=1), rtol=1e-12)
    _, few = sign_topk(Q, G, 5, rescore=2)  # only the 10 nearest by Hamming distance are rescored
    candidates = sign_topk(Q, G, 10)[1]
    assert all(set(f) <= set(c) for f, c in zip(few, candidates))


@settings(max_examples=30, deadline=None)
@given(st.floats(min_value=1e-30, max_value=1e30), st.integers(0, 3))
def test_a_positive_factor_changes_no_sign_search(factor, rescore):
    X = np.random.default_rng(7).normal(size=(50, 12))
    a, b = (
        sign_topk(X, X, 4, exclude_self=True, rescore=rescore),
        sign_topk(X * factor, X * factor, 4, exclude_self=True, rescore=rescore),
    )
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_allclose(a[0], b[0], rtol=1e-12)


def test_sign_search_refuses_bad_parameters_by_name():
    X = np.ones((4, 3))
    for kwargs, message in (
        ({"k": 5}, "^k: must be at most the number of candidates \\(4 gallery rows\\), got 5$"),
        ({"k": 4, "exclude_self": True}, "^k: must be at most the number of candidates \\(3 gallery rows, each"),
        ({"k": 1, "rescore": -1}, "^rescore: must be at least 0"),
        ({"k": 1, "exclude_self": "yes"}, "^exclude_self: expected True or False"),
    ):
        with pytest.raises(ValueError, match=message):
            sign_topk(X, X, **kwargs)
    with pytest.raises(ValueError, match="^gallery: expected 3 columns"):
        sign_topk(X, np.ones((4, 2)), 1)
    with pytest.raises(ValueError, match="^queries: zero row at index 1"):
        sign_topk(np.array([[1.0, 0, 0], [0, 0, 0]]), X, 1, rescore=2)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    d=st.sampled_from([5, 16, 64, 130]),
    m=st.integers(1, 30),
    room=st.sampled_from([0, 3, 64]),
)
def test_faiss_hamming_path_equals_the_exact_products_whatever_the_ties(seed, d, m, room):
    """FAISS's binary search with a tie check (and the exact products for queries whose ties spill
    past the rows it returned) gives the same lists as the exact products alone."""
    import embdiag.interventions.codes as codes

    rng = np.random.default_rng(seed)
    X = np.where(rng.normal(size=(300, d)) > 0, np.float32(1), np.float32(-1))
    before, codes._TIE_ROOM = codes._TIE_ROOM, room  # room 0: most queries spill into the fallback
    try:
        for own in (False, True):
            fast = codes._hamming_top(X[:60] if not own else X, X, m, own, 97)
            exact = codes._hamming_gemm(X[:60] if not own else X, X, m, np.arange(300) if own else None, 97)
            np.testing.assert_array_equal(fast, exact)
    finally:
        codes._TIE_ROOM = before
