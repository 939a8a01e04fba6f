"""Storage formats, rounding bounds and the soundness of the top-k certificate.

Equivalent mutants
------------------
Mutants of ``tools/mutate.py`` (mutmut names ``embdiag.interventions.precision.x_<function>__mutmut_<k>``)
that survive because they change no result; each has a comment next to the code.

Storage and bounds (store, reconstruction_error, the bounds, ...):

- ``StoredVectors`` ``reconstruct`` 5, 6, 7, ``store`` 49, 55, 75 (``astype(None)``): that is
  ``astype(float64)``.
- ``store`` 64 (divisor 2.0 for a zero scale): the scale is 0 only for rows with
  ``max|x| <= 127 * 2**-150``, whose entries round to code 0 whether divided by 1 or by 2.
- ``reconstruction_error`` 42, 48 (``_normalize(..., None)``): the rows are already float64
  (``as_matrix(..., dtype=float64)``), and ``np.asarray(X, dtype=None)`` keeps them so.
- ``reconstruction_error`` 61, ``_normalize`` 16 (``"IJ,IJ->I"``): the same einsum with other
  index letters.
- ``_stored`` 2, 3 (the ``native`` branch never taken): native rows then come back as a
  float64 copy of the same values (``store(X, "native").reconstruct()``; ``as_matrix`` gives
  float32 or float64, exact in float64), already checked nonzero, and every later use casts
  them to the arithmetic (``_normalize``, ``topk(dtype=...)``) or sums squares in float64.
- ``normalization_bound`` 3, ``scoring_bound`` 3, ``certificate_bound`` 5 (default
  ``min_sq_norm=2.0``): with ``min_sq_norm >= 1`` the underflow term ``d tiny / min_sq_norm``
  is below half an ulp of ``gamma_d >= d u`` (``tiny / u`` is ``2**-1021`` or ``2**-125``), so
  ``g`` is the same float. ``scoring_bound`` 12 (``- d tiny``): likewise below half an ulp of
  the first term ``gamma_d (1 + eta)**2 >= d u`` (both are 0 at d = 0).
- ``certificate_bound`` 41, ``_error_upper`` 30 (``1 + 9 * u``): ``1 + 9 * 2**-53`` rounds (a
  tie, to even) to ``1 + 8 * 2**-53``, the same float.
- ``certificate_bound`` 13, 15 (gallery errors not cast to float64 before ``max``): for numeric
  input ``float(g.max())`` is the same value either way (rounding to float64 is monotone, so it
  commutes with the maximum).

Comparisons (compare_conditions, query_scores, StorageResult, ...):

- ``compare_conditions`` 2, ``compare_storage`` 2, ``compare_study_conditions`` 4 (default
  ``chunk_size`` 1025): the chunk size only sets how many query rows each score product
  takes (memory, time). ``compare_study_conditions`` 29 (``chunk_size`` not passed to the
  offset rows): the same, and an invalid one was already rejected by the first call.
- ``compare_study_conditions`` 11 (conditions left out): the default is ``STUDY_CONDITIONS``.
- ``compare_conditions`` 92, 94, 308, 310 (``dtype`` None or dropped in
  ``np.asarray``): the margins and overlaps are float64 already. ``_score_errors`` 26,
  ``query_scores`` 98 (``astype(None)``): that is ``astype(float64)``.
- ``compare_conditions`` 108, 154, 324, ``query_scores`` 57 (``... and False``: the shortcut
  that reuses the queries' array for the same gallery is off): the same rows are normalized
  or stored again, with the same values; time only.
- ``compare_conditions`` 127 (``"IJ,IJ->I"``): the same einsum contraction.
- ``compare_conditions`` 136-142, 338, 345, ``_score_errors`` 21 (the reference score matrix
  cached never, always or at another size, or recomputed per chunk): the same float64
  products; memory and time only.
- ``compare_conditions`` 189, 194, 195, 201, 206, 207 (a native side's error measured
  anyway): ``reconstruction_error`` of rows with themselves is exactly the zeros it replaces.
- ``compare_conditions`` 228 (``np.zeros_like(None)`` as a native gallery's error bounds): a
  0-d zero; ``certificate_bound`` uses only the maximum, 0 either way.
- ``compare_conditions`` 267 (``margins >= 0``): a zero margin fails the second test anyway,
  since every bound is positive.
- ``compare_conditions`` 297, 303 (``axis`` dropped in ``np.sort``): the last axis is axis 1.
- ``query_scores`` 81, 95 (``[query:query + 2]`` then ``[0]``): row 0 of the slice is the
  query either way.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from embdiag.interventions import CommonOffset, precision
from embdiag.interventions.codes import calibration_ranges
from embdiag.interventions.precision import (
    CALIBRATED,
    FORMATS,
    OFFSET_CONDITIONS,
    STUDY_CONDITIONS,
    StorageCondition,
    StorageResult,
    bytes_per_vector,
    _normalize,
    certificate_bound,
    compare_conditions,
    compare_storage,
    compare_study_conditions,
    normalization_bound,
    query_scores,
    reconstruction_error,
    scoring_bound,
    store,
)

# ---- mutation survivors: storage and bounds (prec2)

_F64_TINY, _F32_TINY = 2.0**-1074, 2.0**-149


def _gamma_ref(d, u):
    from decimal import Decimal

    return Decimal(d) * u / (1 - Decimal(d) * u)


def _eta_ref(d, arithmetic, min_sq_norm):
    """normalization_bound's model (its docstring) in 60-digit decimal arithmetic: the upper distance."""
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    p, emin = (53, -1074) if arithmetic == "float64" else (24, -149)
    u, tiny = Decimal(2) ** -p, Decimal(2) ** emin
    g = _gamma_ref(d, u) + d * tiny / ((1 - u) ** 2 * Decimal(min_sq_norm))
    return (1 + u) ** 3 / ((1 - u) ** 2 * (1 - g).sqrt()) - 1


def test_store_defaults_to_float16_and_records_its_format():
    X = np.random.default_rng(20).standard_normal((5, 8))
    s = store(X)
    assert s.fmt == "float16" and s.codes.dtype == np.float16
    np.testing.assert_array_equal(s.reconstruct(), X.astype(np.float16).astype(np.float64))
    for fmt in ("native", "float32", "float16", "int8"):
        assert store(X, fmt).fmt == fmt


def test_store_error_messages_name_the_argument():
    with pytest.raises(
        ValueError,
        match=r"^fmt: expected one of \['native', 'float32', 'float16', 'int8', 'fp8', 'int8cal', 'int4', "
        r"'binary'\], got 'int2'$",
    ):
        store(np.ones((2, 2)), "int2")
    for fmt in FORMATS:
        with pytest.raises(ValueError, match=r"^X: contains NaN or infinite values"):
            store(np.array([[1.0, 2.0], [np.nan, 1.0]]), fmt)
    with pytest.raises(ValueError, match=r"^X: 1 value\(s\) exceed the float16 range \(\|x\| <= 65504\)$"):
        store(np.array([[1.0, -7e4]]), "float16")


def test_int8_codes_stay_in_range_when_the_scale_is_a_float32_subnormal():
    # max|x| / 127 = 1.49 * 2**-149 rounds to the float32 subnormal 2**-149: x / scale reaches
    # 127 * 1.49 = 189, and only the clip keeps the codes in [-127, 127] (int8 would wrap).
    a = 127 * 1.49 * _F32_TINY
    X = np.array([[a, -a, a / 3], [-a, a / 2, 0.25 * a]])
    s = store(X, "int8")
    assert s.scale.tolist() == [np.float32(_F32_TINY)] * 2
    ref = np.clip(np.rint(X / _F32_TINY), -127, 127)
    np.testing.assert_array_equal(s.codes, ref)
    assert s.codes[0, 0] == 127 and s.codes[0, 1] == -127 and s.codes[1, 0] == -127
    np.testing.assert_array_equal(np.sign(s.codes), np.sign(ref))


def test_reconstruction_error_input_checks_name_the_argument():
    X = np.random.default_rng(21).standard_normal((3, 4))
    with pytest.raises(ValueError, match=r"^length mismatch: X has 3, X_hat has 2$"):
        reconstruction_error(X, X[:2])
    with pytest.raises(ValueError, match=r"^X_hat: expected shape \(3, 4\), got \(3, 5\)$"):
        reconstruction_error(X, np.ones((3, 5)))
    bad = X.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"^X: contains NaN"):
        reconstruction_error(bad, X)
    with pytest.raises(ValueError, match=r"^X_hat: contains NaN"):
        reconstruction_error(X, bad)
    zero = X.copy()
    zero[2] = 0.0
    with pytest.raises(ValueError, match=r"^X: 1 zero-norm row\(s\) \(first at index 2\)"):
        reconstruction_error(zero, X)
    with pytest.raises(ValueError, match=r"^X_hat: 1 zero-norm row\(s\) \(first at index 2\)"):
        reconstruction_error(X, zero)


def test_reconstruction_error_reads_integers_exactly_in_float64():
    # 2**24 + 1 has no float32 value: read as float64 on both sides, equal rows have error 0.
    X = np.array([[2**24 + 1, 3], [5, -7]], dtype=np.int64)
    np.testing.assert_array_equal(reconstruction_error(X, X.astype(np.float64)), [0.0, 0.0])
    np.testing.assert_array_equal(reconstruction_error(X.astype(np.float64), X), [0.0, 0.0])
    Y = np.array([[2**24, 3], [5, -7]], dtype=np.int64)
    e = reconstruction_error(X, Y)
    # |u_hat - u| for x = (2**24 + 1, 3), y = (2**24, 3): about 3 / 2**48 in the second coordinate
    assert e[1] == 0.0 and e[0] == pytest.approx(3 / 2.0**48, rel=1e-6)


def test_gamma_is_infinite_once_d_u_reaches_one():
    u = 2.0**-24
    assert precision._gamma(2**23, u) == 1.0  # 0.5 / 0.5
    assert precision._gamma(2**24, u) == np.inf and precision._gamma(3 * 2**23, u) == np.inf
    for d in (2**24, 3 * 2**23):
        assert normalization_bound(d, "float32") == np.inf and scoring_bound(d, "float32") == np.inf


def test_normalization_bound_is_infinite_when_the_sum_of_squares_may_underflow_entirely():
    # float32, d = 1, min_sq_norm chosen so that the underflow term is 1 - gamma_1: g == 1.0
    # exactly; float64, d = 30, min_sq_norm = 20 * 2**-1074: g = 1.5. No bound either way.
    u = 2.0**-24
    assert normalization_bound(1, "float32", _F32_TINY / ((1 - u) ** 2 * (1 - u / (1 - u)))) == np.inf
    assert normalization_bound(1, "float64", _F64_TINY) == np.inf
    assert normalization_bound(30, "float64", 20 * _F64_TINY) == np.inf
    assert scoring_bound(30, "float64", 20 * _F64_TINY) == np.inf
    with pytest.raises(ValueError, match=r"^arithmetic: expected one of \['float64', 'float32'\], got 'float16'$"):
        normalization_bound(8, "float16")


@pytest.mark.parametrize("arithmetic", ["float64", "float32"])
def test_normalization_bound_is_its_model_to_a_few_ulps(arithmetic):
    """The bound against its model in 60 digits, with no absolute slack: evaluated plainly in
    float64, ``(1 + u)**3 / (...) - 1`` came out a third too small at d = 1 (4u for 5.5u)."""
    tiny = _F64_TINY if arithmetic == "float64" else _F32_TINY
    for d in list(range(1, 65)) + [100, 255, 768, 1024, 100_000]:
        # min_sq_norm = 1 (no underflow), 1e-30, and near the underflow limit (term 1/3, and 4/5 of g
        # where m is a normal float64; a subnormal m must be a whole multiple of 2**-1074)
        near = 1.25 * d * tiny if arithmetic == "float32" else 5.0 * d * tiny
        for m in (1.0, 1e-30, 3.0 * d * tiny, near):
            want = float(_eta_ref(d, arithmetic, m))
            assert normalization_bound(d, arithmetic, m) == pytest.approx(want, rel=1e-12, abs=0), (d, m)


@pytest.mark.parametrize("d", [200, 255, 256, 257, 511, 512, 768, 1000, 1024])
def test_normalization_bound_covers_measured_errors_at_larger_d(d):
    # random, constant, same-sign and near-tie (1 + k 2**-52) rows; float64 against long double
    if np.finfo(np.longdouble).eps >= 2.0**-60:
        pytest.skip("needs an extended-precision long double")
    rng = np.random.default_rng(d)
    X = np.vstack(
        [
            rng.standard_normal((20, d)),
            np.ones((1, d)),
            rng.random((10, d)),
            1 + rng.integers(0, 8, (5, d)) * 2.0**-52,
            rng.standard_normal((5, d)) * 1e-160,
        ]
    )
    L = X.astype(np.longdouble)
    exact = L / np.sqrt((L**2).sum(axis=1))[:, None]
    err = np.sqrt(((_normalize(X, "float64").astype(np.longdouble) - exact) ** 2).sum(axis=1))
    assert err.max() <= normalization_bound(d, "float64", 1e-320)


def test_scoring_bound_is_its_formula():
    from fractions import Fraction

    for arithmetic, u, tiny in (("float64", 2.0**-53, _F64_TINY), ("float32", 2.0**-24, _F32_TINY)):
        for d in (1, 7, 768):
            for m in (1.0, 3.0 * d * tiny):
                eta = Fraction(normalization_bound(d, arithmetic, m))
                g = Fraction(d) * Fraction(u) / (1 - Fraction(d) * Fraction(u))
                want = g * (1 + eta) ** 2 + d * Fraction(tiny) + eta * (2 + eta)
                assert scoring_bound(d, arithmetic, m) == pytest.approx(float(want), rel=1e-13, abs=0), (d, m)


def _cert_exact(q, g_max, d, arithmetic, reference_arithmetic, m):
    from fractions import Fraction

    return (
        Fraction(float(q))
        + Fraction(float(g_max))
        + Fraction(scoring_bound(d, reference_arithmetic, m))
        + Fraction(scoring_bound(d, arithmetic, m))
    )


def test_certificate_bound_is_never_below_its_exact_sum():
    from fractions import Fraction

    u = Fraction(2) ** -53
    cases = [  # (query_error, gallery_error, d, arithmetic, reference_arithmetic, min_sq_norm)
        ([0.1, 0.0, 0.25], [0.2, 0.3], 5, "float64", "float64", 3.0 * 5 * _F64_TINY),  # underflow term 1/3
        ([1e-3, 0.7], [0.3], 5, "float32", "float64", 3.0 * 5 * _F32_TINY),
        (np.float32([0.1, 0.3]), np.float32([0.2]), 16, "float32", "float32", 1.0),
        ([0.1], [], 4, "float64", "float64", 1.0),  # no stored gallery: no gallery term
        (0.0625, 0.125, 768, "float64", "float32", 1.0),
    ]
    for q, g, d, a, ra, m in cases:
        b = certificate_bound(q, g, d, arithmetic=a, reference_arithmetic=ra, min_sq_norm=m)
        assert b.dtype == np.float64
        g_max = np.max(np.asarray(g, dtype=np.float64), initial=0.0)
        for qi, bi in zip(np.atleast_1d(np.asarray(q, dtype=np.float64)), np.atleast_1d(b)):
            exact = _cert_exact(qi, g_max, d, a, ra, m)
            assert exact <= Fraction(float(bi)) <= exact * (1 + 16 * u), (q, g, d)  # inflated by 1 + 8u


def test_error_upper_bounds_the_measured_error_rigorously():
    from decimal import Decimal, getcontext

    getcontext().prec = 50
    u, tiny = Decimal(2) ** -53, Decimal(2) ** -1074
    for d in (1, 100, 10**6):
        eta = normalization_bound(d)
        err = np.array([0.0, 1e-3, 0.5, 1.9])
        up = precision._error_upper(err, d, eta)
        assert np.isfinite(up).all() and up.dtype == np.float64
        g = _gamma_ref(d, u)
        for e, b in zip(err, up):
            s = (Decimal(e) / (1 - u)) ** 2 + d * tiny
            exact = (s / (1 - g)).sqrt() / (1 - u) + 2 * Decimal(eta)  # before the 1 + 8u inflation
            assert exact <= Decimal(b) <= exact * (1 + 16 * u), (d, e)


def test_exact_storage_gets_finite_bounds():
    # float32 data stored as float32: every measured error is 0, and the bound stays finite
    X = np.random.default_rng(22).standard_normal((40, 8)).astype(np.float32)
    r = compare_storage(X, StorageCondition("fp32", gallery="float32", queries="float32"), k=3)
    assert (r.query_error == 0).all() and (r.gallery_error == 0).all()
    assert np.isfinite(r.bound).all() and r.certified.any()


def test_storage_condition_messages_name_the_field():
    for field, kw in (("gallery", {"gallery": "int2"}), ("queries", {"queries": "int2"})):
        with pytest.raises(
            ValueError,
            match=rf"^{field}: expected one of \['native', 'float32', 'float16', "
            r"'int8', 'fp8', 'int8cal', 'int4', 'binary'\], got 'int2'$",
        ):
            StorageCondition("x", **kw)
    with pytest.raises(ValueError, match=r"^arithmetic: expected one of \['float64', 'float32'\], got 'float16'$"):
        StorageCondition("x", arithmetic="float16")


# ---- end of prec2 block


K = 10


def _unit(Z):
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


def _scores(Q, G, dtype):
    return (_normalize(Q, dtype) @ _normalize(G, dtype).T).astype(np.float64)


# ------------------------------------------------------------------------------ storage


def test_float_formats_round_to_nearest():
    X = np.random.default_rng(0).standard_normal((20, 16))
    for fmt in ("float16", "float32"):
        s = store(X, fmt)
        assert s.codes.dtype == fmt and s.nbytes == X.size * np.dtype(fmt).itemsize
        np.testing.assert_array_equal(s.reconstruct(), X.astype(fmt).astype(np.float64))
    assert store(X, "native").reconstruct() is not None
    np.testing.assert_array_equal(store(X, "native").reconstruct(), X)


def test_int8_scheme():
    X = np.random.default_rng(1).standard_normal((30, 24))
    X[3] = 0.0
    s = store(X, "int8")
    assert s.codes.dtype == np.int8 and s.scale.dtype == np.float32
    assert s.nbytes == X.size + 4 * len(X)
    assert np.abs(s.codes).max() <= 127
    nz = np.ones(len(X), bool)
    nz[3] = False
    assert (np.abs(s.codes[nz]).max(axis=1) == 127).all()
    np.testing.assert_allclose(s.scale, np.abs(X).max(axis=1) / 127, rtol=1e-7)
    err = np.abs(s.reconstruct() - X)
    assert (err <= s.scale.astype(np.float64)[:, None] * (0.5 + 1e-6)).all()  # round to nearest
    np.testing.assert_array_equal(s.reconstruct()[3], 0.0)


def test_reconstruction_error_is_on_unit_vectors():
    X = np.random.default_rng(2).standard_normal((10, 8))
    np.testing.assert_allclose(reconstruction_error(X, 3.0 * X), 0.0, atol=1e-15)
    Y = X.copy()
    Y[0] = -Y[0]
    assert reconstruction_error(X, Y)[0] == pytest.approx(2.0)
    e16 = reconstruction_error(_unit(X), store(_unit(X), "float16").reconstruct())
    assert 0 < e16.max() < 2.0**-11 * 1.01  # relative float16 rounding, per unit vector


def test_float16_overflow_and_bad_format():
    with pytest.raises(ValueError, match="float16"):
        store(np.full((2, 2), 1e5), "float16")
    with pytest.raises(ValueError, match="fmt"):
        store(np.ones((2, 2)), "int2")
    with pytest.raises(ValueError, match="X"):
        store(np.array([[np.nan, 1.0]]), "int8")


# ------------------------------------------------------------------------ rounding bounds


def test_bound_magnitudes():
    assert 4e-14 < normalization_bound(768) < 5e-14
    assert 2e-5 < normalization_bound(768, "float32") < 2.5e-5
    assert 1e-13 < scoring_bound(768) < 3e-13
    assert 5e-5 < scoring_bound(768, "float32") < 2e-4
    assert normalization_bound(768, "float32", min_sq_norm=0.0) == np.inf
    with pytest.raises(ValueError, match="arithmetic"):
        scoring_bound(8, "float16")


@pytest.mark.parametrize("scale", [1.0, 1e-15, 1e12])
def test_float32_scoring_rounding_is_within_bound(scale):
    rng = np.random.default_rng(3)
    Q, G = rng.standard_normal((200, 768)) * scale, rng.standard_normal((300, 768)) * scale
    Q[:5] = np.abs(Q[:5])  # same-sign rows: worst case for cancellation-free accumulation
    G[:5] = np.abs(G[:5])
    err32 = np.abs(_scores(Q, G, "float32") - _scores(Q, G, "float64")).max()
    assert err32 <= scoring_bound(768, "float32") - scoring_bound(768)
    n32 = np.abs(_normalize(Q, "float32") - _normalize(Q, "float64")).max()
    assert n32 <= normalization_bound(768, "float32")


def test_certificate_bound_formula():
    b = certificate_bound([0.1, 0.0], [0.2, 0.3], 4)
    r = 2 * scoring_bound(4)
    np.testing.assert_allclose(b, [0.4 + r, 0.3 + r], rtol=1e-12)


# ---------------------------------------------------------------- certificate soundness


def _near_tie_gallery(rng, n_q, d, log_gap):
    """Queries plus a gallery holding, per query, k+1 vectors at prescribed cosines whose
    rank-k/rank-(k+1) gap is 10**log_gap (down to below float64 resolution), an exact
    duplicate of one of them, and random filler."""
    Q = _unit(rng.standard_normal((n_q, d)))
    gal = []
    for q in Q:
        c = np.sort(rng.uniform(0.6, 0.9, K + 1))[::-1]
        c[K] = c[K - 1] - 10.0**log_gap
        W = rng.standard_normal((K + 1, d))
        W -= np.outer(W @ q, q)
        W = _unit(W)
        gal.append(c[:, None] * q + np.sqrt(1 - c**2)[:, None] * W)
        gal.append(gal[-1][rng.integers(0, K + 1)][None])  # exact tie somewhere
    G = np.vstack(gal + [_unit(rng.standard_normal((n_q, d)))])
    return Q, G[rng.permutation(len(G))]


CONDITIONS = STUDY_CONDITIONS + (
    StorageCondition("FP16 gallery, FP32 arithmetic", gallery="float16", arithmetic="float32"),
    StorageCondition("INT8 queries, FP16 gallery", gallery="float16", queries="int8"),
    StorageCondition("FP32 storage", gallery="float32", queries="float32"),
    StorageCondition("FP8 queries + gallery", gallery="fp8", queries="fp8"),
    StorageCondition("INT8cal gallery", gallery="int8cal"),
    StorageCondition("INT4 queries + gallery", gallery="int4", queries="int4"),
    StorageCondition("binary gallery", gallery="binary"),
)


def _store_side(X, fmt, ranges):
    """``X`` stored in ``fmt`` as compare_conditions stores a side (a calibrated one on ``ranges``)."""
    return store(X, fmt, ranges if fmt in CALIBRATED else None).reconstruct()


def _assert_sound(results, Q, G):
    same = G is None
    G = Q if same else G
    ref = _scores(Q, G, "float64")
    for r in results:
        c = r.condition
        R = c.calibration(G)
        Qs = _store_side(Q, c.queries, R)
        Gs = Qs if same and c.gallery == c.queries else _store_side(G, c.gallery, R)
        diff = np.abs(_scores(Qs, Gs, c.arithmetic) - ref)
        if same:
            np.fill_diagonal(diff, 0.0)
        assert (diff.max(axis=1) <= r.bound).all(), c.name  # the score-level inequality
        assert r.violations == 0, c.name  # hence no certified change
        # another GEMM blocking rounds differently: agree to a few ulps of the arithmetic (float32
        # sums over d terms in an order that varies with BLAS blocking and load: 8 ulps of 1)
        ulp = 2.0**-20 if c.arithmetic == "float32" else 2.0**-50
        assert r.max_score_error == r.score_error.max()
        assert r.max_score_error == pytest.approx(diff.max(), rel=0, abs=ulp)
        np.testing.assert_allclose(r.score_error, diff.max(axis=1), rtol=0, atol=ulp)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), log_gap=st.floats(-17, -1), d=st.sampled_from([16, 64, 200]))
def test_certificate_is_sound_on_constructed_near_ties(seed, log_gap, d):
    rng = np.random.default_rng(seed)
    Q, G = _near_tie_gallery(rng, 12, d, log_gap)
    res = compare_conditions(Q, CONDITIONS, G, k=K)
    _assert_sound(res, Q, G)
    assert not res[0].changed.any()


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), dup=st.floats(0, 1e-3), d=st.sampled_from([8, 32, 128]))
@example(seed=14300, dup=0.0009911690932594515, d=128)  # float32 scores 2 ulps apart under load (CI)
@example(seed=15, dup=0.0, d=128)
def test_certificate_is_sound_when_queries_are_the_gallery(seed, dup, d):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((150, d)) + 0.5
    X[100:] = X[:50] + dup * rng.standard_normal((50, d))  # near and exact duplicates
    res = compare_conditions(X, CONDITIONS, k=K)
    _assert_sound(res, X, None)


def _random_trials(seeds, n, d):
    checked = certified = changed = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        X = _unit(rng.standard_normal((n, d)) + rng.uniform(0, 1) * rng.standard_normal(d))
        for r in compare_conditions(X, CONDITIONS[1:], k=K):
            assert r.violations == 0, (seed, r.condition.name)
            checked += r.changed.size
            certified += int(r.certified.sum())
            changed += r.n_changed
    assert certified > 0.2 * checked and changed > 0  # both sides of the boundary exercised


def test_certified_queries_survive_random_trials():
    _random_trials(range(10), 120, 48)


@pytest.mark.slow
def test_certified_queries_survive_random_trials_at_study_scale():
    _random_trials(range(100, 112), 983, 768)


def test_uncertified_ties_and_a_flip_at_the_boundary():
    """A gap far below float16 resolution flips under FP16 storage and is never certified."""
    rng = np.random.default_rng(5)
    Q, G = _near_tie_gallery(rng, 20, 64, -9)
    r = compare_storage(Q, STUDY_CONDITIONS[2], G, k=K)
    assert not r.certified[r.margins < 1e-6].any()
    assert r.violations == 0


def test_well_separated_data_is_mostly_certified():
    rng = np.random.default_rng(6)
    centers = _unit(rng.standard_normal((60, 256)))
    X = _unit(np.repeat(centers, K + 1, axis=0) + 0.02 * rng.standard_normal((60 * (K + 1), 256)))
    res = compare_conditions(X, k=K)
    for r in res:
        assert r.coverage > 0.95, r.condition.name
        assert r.n_changed == 0


# -------------------------------------------------------------------- study conditions


def test_study_conditions_structure():
    rng = np.random.default_rng(7)
    X = _unit(rng.standard_normal((400, 128)) + 0.3 * rng.standard_normal(128))
    res = {r.condition.name: r for r in compare_conditions(X, k=K)}
    nat = res["native reference"]
    assert nat.max_score_error == 0.0 and nat.n_changed == 0 and nat.mean_overlap == 1.0
    assert nat.coverage == 1.0
    assert res["FP32 arithmetic"].max_score_error < 1e-6
    assert res["FP16 gallery"].max_score_error < res["INT8 gallery"].max_score_error
    assert res["FP16 gallery"].coverage > res["INT8 gallery"].coverage
    for r in res.values():
        assert r.overlap.shape == (400,) and 0 <= r.mean_overlap <= 1
        assert np.array_equal(r.changed, r.overlap < 1)
        assert r.changed_margins.shape == (r.n_changed,)
        assert set(r.summary()) >= {"condition", "max_score_error", "changed_queries", "coverage"}
    labels = rng.integers(0, 3, 400)
    assert nat.precision_change(labels) == 0.0
    assert abs(res["INT8 gallery"].precision_change(labels)) < 5


def _rows_with_hits(counts, query_labels, gallery_labels, rng, k):
    """Neighbour rows whose i-th row holds exactly counts[i] items of query i's label."""
    out = np.empty((len(counts), k), dtype=np.int64)
    for i, c in enumerate(counts):
        same = np.flatnonzero(gallery_labels == query_labels[i])
        other = np.flatnonzero(gallery_labels != query_labels[i])
        out[i] = np.r_[rng.choice(same, c, replace=False), rng.choice(other, k - c, replace=False)]
    return out


def test_precision_change_is_exactly_zero_when_hits_only_move_between_queries():
    # Seed 9 makes the difference of the two float means -1.1e-16 although the number of
    # relevant neighbours is the same: the change must come from integer counts.
    rng = np.random.default_rng(9)
    n, gallery_labels = 983, np.arange(60) % 3
    query_labels = rng.integers(0, 3, n)
    counts = rng.integers(0, K + 1, n)
    ref = _rows_with_hits(counts, query_labels, gallery_labels, rng, K)
    new = _rows_with_hits(rng.permutation(counts), query_labels, gallery_labels, rng, K)
    zeros = np.zeros(n)
    result = StorageResult(
        STUDY_CONDITIONS[0],
        K,
        0.0,
        np.ones(n, bool),
        zeros,
        zeros,
        zeros,
        np.zeros(n, bool),
        zeros,
        zeros,
        reference_neighbors=ref,
        neighbors=new,
    )
    assert result.precision_change(gallery_labels, query_labels) == 0.0
    new[0, :] = ref[0, :]  # one query's hits now differ by a known count
    assert result.precision_change(gallery_labels, query_labels) == pytest.approx(
        100 * ((gallery_labels[new] == query_labels[:, None]).sum() - counts.sum()) / (K * n)
    )


def test_offset_then_fp16_changes_more_than_native_fp16():
    rng = np.random.default_rng(8)
    train = _unit(rng.standard_normal((300, 64)))
    X = _unit(rng.standard_normal((300, 64)))
    moved = CommonOffset(0.99).fit(train).transform(X)
    native = compare_storage(X, STUDY_CONDITIONS[1], k=K)
    offset = compare_conditions(moved, STUDY_CONDITIONS[:2], k=K)
    assert offset[0].n_changed == 0 and offset[0].max_score_error == 0.0
    assert offset[1].n_changed > native.n_changed
    assert offset[1].violations == 0


# -------------------------------------------------------------------------- bad input


def test_bad_input():
    X = np.random.default_rng(9).standard_normal((30, 8))
    with pytest.raises(ValueError, match="gallery"):
        StorageCondition("x", gallery="int2")
    with pytest.raises(ValueError, match="arithmetic"):
        StorageCondition("x", arithmetic="float16")
    with pytest.raises(ValueError, match="k"):
        compare_conditions(X, k=29)
    with pytest.raises(ValueError, match="k"):
        compare_conditions(X, gallery=X[:5], k=5)
    with pytest.raises(ValueError, match="gallery"):
        compare_conditions(X, gallery=X[:, :4])
    Xn = X.copy()
    Xn[1, 1] = np.nan
    with pytest.raises(ValueError, match="queries"):
        compare_conditions(Xn)
    Xz = X.copy()
    Xz[2] = 0
    with pytest.raises(ValueError, match="zero-norm"):
        compare_conditions(Xz)
    with pytest.raises(ValueError, match="condition"):
        compare_storage(X, "FP16 gallery")
    with pytest.raises(ValueError, match="conditions"):
        compare_conditions(X, ["FP16 gallery"])


def test_rows_that_vanish_in_storage_are_named():
    X = np.random.default_rng(10).standard_normal((30, 8))
    X[4] *= 1e-9  # underflows to zero in float16
    with pytest.raises(ValueError, match="queries stored as float16"):
        compare_storage(X, STUDY_CONDITIONS[2], k=3)


# ---------------------------------------------------------------- survivors of mutation testing


def test_summary_reports_the_largest_errors():
    rng = np.random.default_rng(11)
    X = _unit(rng.standard_normal((60, 16)))
    r = compare_storage(X[:20], StorageCondition("both int8", gallery="int8", queries="int8"), X[20:], k=3)
    s = r.summary()
    assert r.gallery_error.min() < r.gallery_error.max() and r.query_error.min() < r.query_error.max()
    assert s["max_error_gallery"] == r.gallery_error.max()
    assert s["max_error_queries"] == r.query_error.max()
    assert s["n_queries"] == 20 and s["certified"] == int(r.certified.sum())


def test_default_k_is_ten():
    X = _unit(np.random.default_rng(12).standard_normal((40, 8)))
    results = compare_conditions(X, STUDY_CONDITIONS[:2])
    assert [r.k for r in results] == [10, 10] and results[1].neighbors.shape == (40, 10)
    assert "overlap@10" in results[1].summary()
    assert compare_storage(X, STUDY_CONDITIONS[1]).k == 10


def test_float16_range_boundary():
    np.testing.assert_array_equal(
        store(np.array([[65504.0, -65504.0]]), "float16").reconstruct(), [[65504.0, -65504.0]]
    )  # the largest float16 is stored exactly
    for X in ([[1.0, 65505.0]], [[-70000.0, 0.5]], [[1.0, 2.0], [3.0, 1e9]]):
        with pytest.raises(ValueError, match=r"X: 1 value\(s\) exceed the float16 range \(\|x\| <= 65504\)"):
            store(np.array(X), "float16")


def _bound_reference(d: int, arithmetic: str, min_sq_norm: float) -> float:
    """normalization_bound's model evaluated with 60 decimal digits (Decimal), from its docstring."""
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    p, emin = (53, -1074) if arithmetic == "float64" else (24, -149)
    u, tiny = Decimal(2) ** -p, Decimal(2) ** emin
    g = d * u / (1 - d * u) + d * tiny / ((1 - u) ** 2 * Decimal(min_sq_norm))
    hi = (1 + u) ** 3 / ((1 - u) ** 2 * (1 - g).sqrt()) - 1
    lo = 1 - (1 - u) ** 3 / ((1 + u) ** 2 * (1 + g).sqrt())
    return float(max(hi, lo))


@pytest.mark.parametrize("arithmetic", ["float64", "float32"])
def test_normalization_bound_over_many_dimensions(arithmetic):
    for d in list(range(1, 130)) + [255, 256, 768, 1024, 4096, 100_000]:
        for m in (1.0, 1e-30):
            assert normalization_bound(d, arithmetic, m) == pytest.approx(
                _bound_reference(d, arithmetic, m), rel=1e-9, abs=0
            ), (d, m)


def test_normalization_bound_covers_measured_errors_at_every_small_d():
    # Brute force against a wider reference (long double): the worst row for each d stays below the bound.
    if np.finfo(np.longdouble).eps >= 2.0**-60:
        pytest.skip("needs an extended-precision long double")
    rng = np.random.default_rng(13)
    for d in range(1, 200):
        X = np.vstack([rng.standard_normal((40, d)), np.ones((1, d)), rng.random((40, d)) * 1e-150])
        for arithmetic, rows, min_sq in (("float64", X, 1e-300), ("float32", X[:41], 1.0)):  # float32: unit scale
            exact = rows.astype(np.longdouble) / np.sqrt((rows.astype(np.longdouble) ** 2).sum(axis=1))[:, None]
            err = np.sqrt(((_normalize(rows, arithmetic).astype(np.longdouble) - exact) ** 2).sum(axis=1))
            assert err.max() <= normalization_bound(d, arithmetic, min_sq), (d, arithmetic)


# ------------------------------------------------------- per-query errors, one query's scores, the eight rows


def test_score_error_is_each_querys_largest_change():
    rng = np.random.default_rng(14)
    X = _unit(rng.standard_normal((80, 24)) + 0.4)
    ref = _scores(X, X, "float64")
    for r in compare_conditions(X, CONDITIONS, k=5):
        c = r.condition
        Xq = store(X, c.queries).reconstruct()
        Xg = Xq if c.gallery == c.queries else store(X, c.gallery).reconstruct()
        diff = np.abs(_scores(Xq, Xg, c.arithmetic) - ref)
        np.fill_diagonal(diff, 0.0)
        ulp = 2.0**-22 if c.arithmetic == "float32" else 2.0**-50
        np.testing.assert_allclose(r.score_error, diff.max(axis=1), rtol=0, atol=ulp, err_msg=c.name)
        assert r.max_score_error == r.score_error.max()


def test_query_scores_match_the_search():
    rng = np.random.default_rng(15)
    X = _unit(rng.standard_normal((60, 16)))
    for c in CONDITIONS:
        ref, out = query_scores(X, c, 7)
        assert ref[7] == out[7] == -np.inf
        r = compare_storage(X, c, k=4)
        assert set(np.argsort(-ref, kind="stable")[:4]) == set(r.reference_neighbors[7])
        assert set(np.argsort(-out, kind="stable")[:4]) == set(r.neighbors[7])
        mask = np.arange(60) != 7
        assert np.abs(out[mask] - ref[mask]).max() == pytest.approx(r.score_error[7], abs=2.0**-22)
    G = X[:20]
    ref, out = query_scores(X[20:], STUDY_CONDITIONS[3], 0, G)
    assert ref.shape == (20,) and np.isfinite(ref).all()
    np.testing.assert_allclose(ref, _scores(X[20:21], G, "float64")[0], atol=1e-15)


def test_query_scores_bad_input():
    X = np.random.default_rng(16).standard_normal((10, 4))
    with pytest.raises(ValueError, match="query: expected an index below 10"):
        query_scores(X, STUDY_CONDITIONS[1], 10)
    with pytest.raises(ValueError, match="query"):
        query_scores(X, STUDY_CONDITIONS[1], -1)
    with pytest.raises(ValueError, match="condition"):
        query_scores(X, "FP16 gallery", 0)


def test_compare_study_conditions_runs_the_eight_rows():
    rng = np.random.default_rng(17)
    train, val = _unit(rng.standard_normal((100, 32))), _unit(rng.standard_normal((150, 32)))
    res = compare_study_conditions(train, val, k=K, offset_severity=0.9, offset_seed=3)
    assert [r.condition for r in res] == list(STUDY_CONDITIONS + OFFSET_CONDITIONS)
    alone = compare_conditions(val, k=K)
    for a, b in zip(res[:6], alone):
        np.testing.assert_array_equal(a.neighbors, b.neighbors)
        assert a.max_score_error == b.max_score_error
    moved = CommonOffset(0.9, seed=3).fit(train).transform(val)
    for a, b in zip(res[6:], compare_conditions(moved, OFFSET_CONDITIONS, k=K)):
        np.testing.assert_array_equal(a.neighbors, b.neighbors)
        np.testing.assert_array_equal(a.margins, b.margins)
    assert res[6].n_changed == 0 and res[6].max_score_error == 0.0
    assert np.median(res[6].margins) < 0.1 * np.median(res[0].margins)  # the offset packs the scores


@pytest.mark.slow
def test_no_certified_query_changes_on_the_reference_encoder():
    from embdiag.encoders.vectors import driving_vectors

    v = driving_vectors("reference-cnn")
    res = {r.condition.name: r for r in compare_study_conditions(v.train, v.val, k=K)}
    assert len(res) == 8
    for name, r in res.items():
        assert r.violations == 0, name
        assert (r.score_error <= r.bound).all(), name  # the score-level inequality behind the certificate
    for name in ("native reference", "common-offset reference"):
        r = res[name]
        assert r.max_score_error == 0.0 and r.n_changed == 0 and r.mean_overlap == 1.0 and r.coverage == 1.0
        assert all(r.precision_change(y) == 0.0 for y in v.val_labels.values())
    fp32 = res["FP32 arithmetic"]
    assert 0 < fp32.max_score_error <= scoring_bound(v.dim, "float32") + scoring_bound(v.dim)
    assert fp32.n_changed == 0 and fp32.mean_overlap == 1.0
    assert res["FP16 gallery"].coverage > res["INT8 gallery"].coverage
    assert res["offset + FP16 gallery"].n_changed > res["FP16 gallery"].n_changed


@pytest.mark.parametrize("scale", [1e200, 1e-200, 2.0**700, 2.0**-700])
def test_reconstruction_error_at_extreme_finite_magnitudes(scale):
    """The error is scale-free; squaring rows of 1e200 once overflowed to a silent 0, and rows
    of 1e-200 underflowed to "zero-norm row(s)"."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 32))
    X_hat = X + rng.normal(scale=1e-3, size=X.shape)
    ref = precision.reconstruction_error(X, X_hat)
    got = precision.reconstruction_error(X * scale, X_hat * scale)
    if np.log2(scale).is_integer():  # a power of two changes no bit
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normalize_rescaling_changes_no_bit_of_ordinary_rows(dtype):
    """Rescaling by powers of two before normalizing is exact: ordinary rows get the bits of
    the plain ``a / sqrt(a . a)`` in the arithmetic being modelled."""
    X = np.random.default_rng(1).normal(size=(200, 96)) * np.logspace(-3, 3, 200)[:, None]
    a = X.astype(dtype)
    plain = a / np.sqrt(np.einsum("ij,ij->i", a, a))[:, None]
    np.testing.assert_array_equal(precision._normalize(X, dtype), plain)


# ---- mutation survivors: comparisons (prec1)

_U64 = 2.0**-53
_F16 = StorageCondition("FP16 gallery, separate", gallery="float16")


def test_k_may_leave_exactly_two_candidates_beyond_it():
    # The margin needs rank k + 1 and the search asks for fewer than all candidates, so k can be
    # n_candidates - 2. k = n_candidates - 1 passed the old check and then failed inside the
    # reference search with a message naming k + 1 ("... got 29" for k = 28).
    X = _unit(np.random.default_rng(20).standard_normal((30, 8)))
    r = compare_storage(X, STUDY_CONDITIONS[1], k=27)
    assert r.neighbors.shape == (30, 27) and r.k == 27
    with pytest.raises(
        ValueError, match=r"^k: must be at most 27 \(the margin ranks k \+ 1 of 29 candidates\), got 28$"
    ):
        compare_conditions(X, k=28)
    assert compare_conditions(X, [STUDY_CONDITIONS[3]], X[:5], k=3)[0].neighbors.shape == (30, 3)
    with pytest.raises(ValueError, match=r"^k: must be at most 3 \(the margin ranks k \+ 1 of 5 candidates\), got 4$"):
        compare_conditions(X, gallery=X[:5], k=4)
    for k in (0, -1):
        with pytest.raises(ValueError, match=rf"^k: must be at least 1, got {k}$"):
            compare_conditions(X, k=k)
    with pytest.raises(ValueError, match=r"^k: expected an integer, got 2.0$"):
        compare_conditions(X, k=2.0)


def _bad_copies(X):
    """Copies of ``X`` with a NaN in row 1, a zero row 2, and a row 4 that vanishes in float16."""
    nan, zero, tiny = X.copy(), X.copy(), X.copy()
    nan[1, 1] = np.nan
    zero[2] = 0.0
    tiny[4] *= 1e-9
    return nan, zero, tiny


def test_compare_conditions_names_the_bad_argument():
    rng = np.random.default_rng(21)
    X = rng.standard_normal((30, 8))
    nan, zero, tiny = _bad_copies(X)
    cases = [
        (dict(queries=nan), r"^queries: contains NaN or infinite values \(1 bad row\(s\), first at index 1\)$"),
        (
            dict(queries=X, gallery=nan),
            r"^gallery: contains NaN or infinite values \(1 bad row\(s\), first at index 1\)$",
        ),
        (dict(queries=zero), r"^queries: 1 zero-norm row\(s\) \(first at index 2\); cosine is undefined$"),
        (dict(queries=X, gallery=zero), r"^gallery: 1 zero-norm row\(s\) \(first at index 2\); cosine is undefined$"),
        (
            dict(queries=X, gallery=tiny, conditions=_F16),
            r"^gallery stored as float16: 1 zero-norm row\(s\) \(first at index 4\)",
        ),
        (
            dict(queries=tiny, conditions=STUDY_CONDITIONS[1]),
            r"^gallery stored as float16: 1 zero-norm row\(s\) \(first at index 4\)",
        ),
        (dict(queries=X, chunk_size=0), r"^chunk_size: must be at least 1, got 0$"),
        (dict(queries=X, chunk_size=2.0), r"^chunk_size: expected an integer, got 2.0$"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            compare_conditions(**{"k": 3, **kwargs})
    with pytest.raises(ValueError, match=r"^chunk_size: must be at least 1, got 0$"):
        compare_storage(X, STUDY_CONDITIONS[1], X[:10], k=3, chunk_size=0)
    with pytest.raises(ValueError, match=r"^conditions: expected StorageCondition items, got 'FP16 gallery'$"):
        compare_conditions(X, [STUDY_CONDITIONS[1], "FP16 gallery"], k=3)


def test_a_single_condition_gives_a_list_of_one():
    X = _unit(np.random.default_rng(22).standard_normal((25, 6)))
    (r,) = compare_conditions(X, STUDY_CONDITIONS[1], k=3)
    assert r.condition == STUDY_CONDITIONS[1]


@pytest.mark.parametrize("cached", [True, False])
def test_score_errors_in_small_chunks_match_brute_force(monkeypatch, cached):
    """Chunks of 1 and 7 queries (more queries than dimensions), with and without the cached
    reference score matrix, give each query's largest score change over the pairs it searches."""
    if not cached:
        monkeypatch.setattr(precision, "_CACHE_SCORES", 0)
    rng = np.random.default_rng(23)
    X, G = _unit(rng.standard_normal((50, 6)) + 0.3), _unit(rng.standard_normal((31, 6)))
    conds = [STUDY_CONDITIONS[1], STUDY_CONDITIONS[4], STUDY_CONDITIONS[5]]
    for gallery in (None, G):
        Gn = X if gallery is None else G
        ref = _scores(X, Gn, "float64")
        for chunk in (1, 7):
            for r in compare_conditions(X, conds, gallery, k=3, chunk_size=chunk):
                c = r.condition
                Xq = store(X, c.queries).reconstruct()
                Xg = Xq if gallery is None and c.gallery == c.queries else store(Gn, c.gallery).reconstruct()
                diff = np.abs(_scores(Xq, Xg, c.arithmetic) - ref)
                if gallery is None:
                    np.fill_diagonal(diff, 0.0)
                ulp = 2.0**-22 if c.arithmetic == "float32" else 2.0**-50
                np.testing.assert_allclose(r.score_error, diff.max(axis=1), rtol=0, atol=ulp, err_msg=c.name)


def test_self_pairs_are_not_scored():
    # Every row but row 0 is exactly a float16 number, so under FP16 gallery storage only row 0
    # moves: query 0 (whose own pair is never searched) sees no score change, the others do.
    rng = np.random.default_rng(24)
    X = rng.standard_normal((40, 12)).astype(np.float16).astype(np.float64)
    X[0] = rng.standard_normal(12)
    for chunk in (1024, 3):
        r = compare_storage(X, STUDY_CONDITIONS[1], k=3, chunk_size=chunk)
        assert r.score_error[0] < 1e-12
        assert (r.score_error[1:] > 1e-9).all()
        assert r.query_error.max() == 0.0 and r.gallery_error[0] > 0 and (r.gallery_error[1:] == 0).all()


def test_float32_inputs_are_referenced_in_float64():
    rng = np.random.default_rng(25)
    for dtype in (np.float32, np.float64):
        X = rng.standard_normal((40, 12)).astype(dtype)
        G = rng.standard_normal((30, 12)).astype(dtype)
        for gallery in (None, G):
            nat, f32 = compare_conditions(X, [STUDY_CONDITIONS[0], STUDY_CONDITIONS[5]], gallery, k=3)
            assert nat.max_score_error == 0.0 and (nat.score_error == 0.0).all()
            assert (f32.score_error > 0).all()  # float32 arithmetic rounds some score of every query


def test_fp32_arithmetic_scores_are_the_float32_ones_exactly():
    # Basis-vector queries make every product exact, so the score changes are exactly the float32
    # rounding of the normalized gallery entries.
    rng = np.random.default_rng(26)
    G = rng.standard_normal((30, 6))
    Q = np.eye(6)
    expected = np.abs(_normalize(G, "float32").astype(np.float64) - _normalize(G, "float64")).max(axis=0)
    for c in (STUDY_CONDITIONS[5], StorageCondition("FP32 storage", gallery="float32", arithmetic="float32")):
        r = compare_storage(Q, c, G, k=3)
        np.testing.assert_array_equal(r.score_error, expected)
        assert (expected > 0).all()
        ref, out = query_scores(Q, c, 2, G)
        np.testing.assert_array_equal(out, _normalize(G, "float32")[:, 2].astype(np.float64))
        np.testing.assert_array_equal(ref, _normalize(G, "float64")[:, 2])


def test_result_arrays_have_one_entry_per_query_or_gallery_row():
    rng = np.random.default_rng(27)
    Q, G = rng.standard_normal((20, 6)), rng.standard_normal((35, 6))
    for gallery, n_g in ((G, 35), (None, 20)):
        for r in compare_conditions(Q, CONDITIONS, gallery, k=3):
            for name in ("query_error", "bound", "margins", "certified", "score_error", "overlap", "changed"):
                assert getattr(r, name).shape == (20,), (r.condition.name, name)
            assert r.gallery_error.shape == (n_g,)
            assert r.bound.dtype == r.margins.dtype == r.overlap.dtype == np.float64
            assert r.certified.dtype == r.changed.dtype == bool
            assert r.neighbors.shape == r.reference_neighbors.shape == (20, 3)
            if r.condition.queries == "native":
                assert (r.query_error == 0).all()
            if r.condition.gallery == "native":
                assert (r.gallery_error == 0).all()


def _expected_bound(Q, G, c):
    """The documented bound: measured errors made rigorous (``_error_upper``) on stored sides, 0 on
    native ones, and rounding terms with half the smallest squared row norm of native and stored rows."""
    same = G is None
    G = Q if same else G
    R = c.calibration(G)
    Qs, Gs = _store_side(Q, c.queries, R), _store_side(G, c.gallery, R)
    d = Q.shape[1]
    sq_min = 0.5 * min(float(np.einsum("ij,ij->i", A, A, dtype=np.float64).min()) for A in (Q, G, Qs, Gs))
    eta64 = normalization_bound(d, "float64", sq_min)
    up = [
        np.zeros(len(A)) if fmt == "native" else precision._error_upper(reconstruction_error(A, S), d, eta64)
        for A, S, fmt in ((Q, Qs, c.queries), (G, Gs, c.gallery))
    ]
    return certificate_bound(*up, d, arithmetic=c.arithmetic, min_sq_norm=sq_min)


def _int8_rows(rng, n, d, s, first):
    """n rows of entries of magnitude s; row 0, the shortest (norm s / 2), is a multiple of
    ``first`` (int8 stores it with a chosen rounding)."""
    X = s * rng.uniform(0.7, 1.0, (n, d)) * rng.choice([-1.0, 1.0], (n, d))
    X[0] = 0.5 * s * np.asarray(first) / np.linalg.norm(first)
    return X


def test_bound_is_the_documented_composition():
    rng = np.random.default_rng(28)
    up8, down8 = [127.0] + [0.6] * 7, [127.0] + [0.4] * 7  # int8 stores row 0 longer / shorter
    f32_int8 = StorageCondition("INT8 both, FP32 arithmetic", gallery="int8", queries="int8", arithmetic="float32")
    scenarios = [
        # ordinary magnitudes: native sides contribute nothing but rounding
        (rng.standard_normal((20, 8)), rng.standard_normal((30, 8)), CONDITIONS),
        (rng.standard_normal((20, 8)), None, CONDITIONS),
        # queries so small that the float64 underflow terms dominate the rounding bound
        (
            rng.standard_normal((20, 8)) * 1e-155,
            rng.standard_normal((30, 8)),
            [STUDY_CONDITIONS[0], StorageCondition("FP32 gallery", gallery="float32")],
        ),
        # float32 input whose squares underflow in float32: the norms are taken in float64
        (rng.standard_normal((20, 8)).astype(np.float32) * np.float32(1e-25), None, [STUDY_CONDITIONS[0]]),
        # float32 underflow terms, smallest row native (int8 lengthens it) or stored (shortened)
        (_int8_rows(rng, 20, 8, 3e-19, up8), None, [f32_int8]),
        (
            _int8_rows(rng, 20, 8, 3e-19, down8),
            rng.standard_normal((30, 8)),
            [StorageCondition("INT8 queries, FP32", queries="int8", arithmetic="float32")],
        ),
        (
            rng.standard_normal((20, 8)),
            _int8_rows(rng, 30, 8, 3e-19, down8),
            [StorageCondition("INT8 gallery, FP32", gallery="int8", arithmetic="float32")],
        ),
    ]
    for Q, G, conds in scenarios:
        for r in compare_conditions(Q, conds, G, k=3):
            expected = _expected_bound(Q, G, r.condition)
            assert np.isfinite(expected).all()
            np.testing.assert_array_equal(r.bound, expected, err_msg=r.condition.name)


def test_native_bound_is_the_two_rounding_terms():
    rng = np.random.default_rng(29)
    X = rng.standard_normal((20, 8))
    sq_min = 0.5 * np.einsum("ij,ij->i", X, X).min()
    r = compare_storage(X, STUDY_CONDITIONS[0], k=3)
    np.testing.assert_array_equal(r.bound, (2 * scoring_bound(8, "float64", sq_min)) * (1 + 8 * _U64))


def test_no_guarantee_when_float32_squares_could_overflow():
    # Row 5 has squared norm exactly float32max / 4 (4095^2 + 90^2 + 9^2 + 3^2 = 2^24 - 1):
    # still guaranteed; twice as long, FP32 arithmetic gives no guarantee (float64 still does).
    rng = np.random.default_rng(30)
    X = rng.standard_normal((30, 8))
    X[5] = 0.0
    X[5, :4] = np.array([4095.0, 90.0, 9.0, 3.0]) * 2.0**51
    assert np.einsum("ij,ij->i", X, X)[5] == np.finfo(np.float32).max / 4
    nat, f32 = compare_conditions(X, [STUDY_CONDITIONS[0], STUDY_CONDITIONS[5]], k=3)
    assert np.isfinite(nat.bound).all() and np.isfinite(f32.bound).all() and f32.certified.any()
    X[5] *= 2
    nat, f32 = compare_conditions(X, [STUDY_CONDITIONS[0], STUDY_CONDITIONS[5]], k=3)
    assert np.isfinite(nat.bound).all() and nat.certified.any()
    assert f32.bound.shape == (30,) and f32.bound.dtype == np.float64 and np.isposinf(f32.bound).all()
    assert not f32.certified.any()


def _exact_margin_search(margin, condition=STUDY_CONDITIONS[0]):
    """Query e1 over rows (x, 1, 0) with |x| < 2**-27: the computed cosine is exactly x, so the
    top-1 margin is exactly ``margin`` (rows x = margin, 0 and -1e-9). d = 3 puts the bound's
    mantissa where the scan below also separates (1 - 4u) from (1 - 5u)."""
    G = np.array([[-1e-9, 1.0, 0.0], [0.0, 1.0, 0.0], [margin, 1.0, 0.0]])
    return compare_storage(np.array([[1.0, 0.0, 0.0]]), condition, G, k=1)


def test_certified_exactly_when_the_bound_is_below_the_slackened_half_margin():
    B = _exact_margin_search(1e-12).bound[0]  # the same rows' norms for every margin below
    margins = [B * f for f in (1.5, 2.5, 3.5, 5.0)]
    m = 2 * B
    for _ in range(12):  # every float from 2B up: covers bound == margin (1 - 4u) / 2 exactly
        margins.append(m)
        m = np.nextafter(m, 1.0)
    seen = set()
    for m in margins:
        r = _exact_margin_search(m)
        assert r.margins[0] == m and r.bound[0] == B
        rule = bool(B < m * (1 - 4 * _U64) / 2)
        assert r.certified[0] == rule, m / B
        assert not rule or B < m / 2
        seen.add(rule)
    assert seen == {True, False}
    assert any(B == m * (1 - 4 * _U64) / 2 for m in margins)  # the equality case is among them
    assert any((B < m * (1 - 4 * _U64) / 2) != (B < m * (1 - 5 * _U64) / 2) for m in margins)


def test_fp32_search_breaks_float32_ties_by_index():
    # Rows 0 and 1 score 1e-9 (1 - 1e-9) and 1e-9 in float64 but the same in float32: the float32
    # search puts row 0 (lower index) first, the float64 reference row 1.
    G = np.array([[1e-9 * (1 - 1e-9), 1.0], [1e-9, 1.0], [0.0, 1.0], [-1e-9, 1.0]])
    Q = np.array([[1.0, 0.0]])
    for c in (STUDY_CONDITIONS[5], StorageCondition("FP32 storage", gallery="float32", arithmetic="float32")):
        r = compare_storage(Q, c, G, k=1)
        assert r.reference_neighbors[0, 0] == 1 and r.neighbors[0, 0] == 0
        assert r.changed[0] and not r.certified[0] and r.violations == 0
        ref, out = query_scores(Q, c, 0, G)
        assert ref[1] > ref[0] and out[0] == out[1]


def test_query_scores_names_the_bad_argument():
    rng = np.random.default_rng(31)
    X = rng.standard_normal((10, 4))
    nan, zero, tiny = _bad_copies(X)
    cases = [
        (
            (nan, STUDY_CONDITIONS[1], 0),
            r"^queries: contains NaN or infinite values \(1 bad row\(s\), first at index 1\)$",
        ),
        (
            (X, STUDY_CONDITIONS[1], 0, nan),
            r"^gallery: contains NaN or infinite values \(1 bad row\(s\), first at index 1\)$",
        ),
        ((zero, STUDY_CONDITIONS[1], 0), r"^queries: 1 zero-norm row\(s\) \(first at index 2\); cosine is undefined$"),
        (
            (X, STUDY_CONDITIONS[1], 0, zero),
            r"^gallery: 1 zero-norm row\(s\) \(first at index 2\); cosine is undefined$",
        ),
        ((tiny, STUDY_CONDITIONS[2], 0), r"^queries stored as float16: 1 zero-norm row\(s\) \(first at index 4\)"),
        ((X, STUDY_CONDITIONS[1], 0, tiny), r"^gallery stored as float16: 1 zero-norm row\(s\) \(first at index 4\)"),
        ((X, STUDY_CONDITIONS[1], -1), r"^query: must be at least 0, got -1$"),
        ((X, STUDY_CONDITIONS[1], 10), r"^query: expected an index below 10, got 10$"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            query_scores(*args)
    ref, out = query_scores(X, STUDY_CONDITIONS[1], 7)  # an index above d = 4 is fine
    assert ref[7] == out[7] == -np.inf and np.isfinite(np.delete(ref, 7)).all()


def test_query_scores_reference_is_float64_and_fp32_scores_are_float32_numbers():
    rng = np.random.default_rng(32)
    X32, G32 = rng.standard_normal((15, 10)).astype(np.float32), rng.standard_normal((12, 10)).astype(np.float32)
    X, G = X32.astype(np.float64), G32.astype(np.float64)
    for gallery, G64 in ((None, X), (G32, G)):
        ref, _ = query_scores(X32, STUDY_CONDITIONS[0], 3, gallery)
        expected = _scores(X[3:4], G64, "float64")[0]
        if gallery is None:
            expected[3] = -np.inf
        np.testing.assert_allclose(ref, expected, rtol=0, atol=1e-15)
    for c in (STUDY_CONDITIONS[5], StorageCondition("INT8 gallery, FP32", gallery="int8", arithmetic="float32")):
        for gallery in (None, G):
            _, out = query_scores(X, c, 3, gallery)
            assert out.dtype == np.float64
            finite = out[np.isfinite(out)]
            np.testing.assert_array_equal(finite, finite.astype(np.float32).astype(np.float64))


def _hits_result(rng, n_q, n_g, k):
    """A StorageResult whose neighbour rows hold known hit counts; returns it and the counts."""
    gallery_labels = np.arange(n_g) % 3
    query_labels = rng.integers(0, 3, n_q)
    before = rng.integers(0, k + 1, n_q)
    after = before.copy()
    after[3:] = rng.permutation(before[3:])  # the same mean P@k, per-query changes
    ref = _rows_with_hits(before, query_labels, gallery_labels, rng, k)
    new = _rows_with_hits(after, query_labels, gallery_labels, rng, k)
    new[:3] = ref[:3]  # three unchanged queries
    changed = np.any(np.sort(new, axis=1) != np.sort(ref, axis=1), axis=1)
    z = np.zeros(n_q)
    r = StorageResult(
        STUDY_CONDITIONS[1],
        k,
        0.0,
        changed,
        z,
        z,
        z,
        np.zeros(n_q, bool),
        z,
        np.zeros(n_g),
        reference_neighbors=ref,
        neighbors=new,
    )
    return r, gallery_labels, query_labels, before, after


def test_agreement_kept_counts_changed_queries_with_unchanged_precision():
    rng = np.random.default_rng(33)
    r, gl, ql, before, after = _hits_result(rng, 40, 60, 5)
    expected = int((r.changed & (before == after)).sum())
    assert 0 < expected < r.changed.sum() and r.precision_change(gl, ql) == 0.0
    assert r.agreement_kept(gl, ql) == expected
    # queries that are the gallery (labels only): a hand-made case
    labels = np.array([0, 0, 1, 1, 0, 1, 0, 1])
    ref = np.array([[1, 4], [0, 4], [3, 5], [2, 5], [0, 1], [2, 3], [0, 2], [3, 5]])
    new = np.array([[4, 1], [6, 4], [7, 5], [2, 5], [0, 3], [2, 0], [4, 3], [3, 5]])
    changed = np.any(np.sort(new, axis=1) != np.sort(ref, axis=1), axis=1)
    assert changed.tolist() == [False, True, True, False, True, True, True, False]
    z = np.zeros(8)
    s = StorageResult(
        STUDY_CONDITIONS[1], 2, 0.0, changed, z, z, z, np.zeros(8, bool), z, z, reference_neighbors=ref, neighbors=new
    )
    # P@2 before 1, 1, 1, 1, 1, 1, 1/2, 1 and after 1, 1, 1, 1, 1/2, 1/2, 1/2, 1: queries 1, 2, 6 changed
    # their neighbours but kept their P@2 (4 and 5 lost it; 0, 3, 7 did not change)
    assert s.agreement_kept(labels) == 3


def test_summary_has_every_column():
    X = _unit(np.random.default_rng(34).standard_normal((30, 8)))
    r = compare_storage(X, STUDY_CONDITIONS[3], k=4)
    s = r.summary()
    assert set(s) == {
        "condition",
        "max_score_error",
        "changed_queries",
        "n_queries",
        "overlap@4",
        "certified",
        "coverage",
        "violations",
        "max_error_queries",
        "max_error_gallery",
    }
    assert s["violations"] == r.violations == 0 and s["condition"] == "INT8 gallery"
    assert s["changed_queries"] == r.n_changed and s["coverage"] == r.coverage


def test_compare_storage_searches_the_given_gallery():
    rng = np.random.default_rng(35)
    Q, G = _unit(rng.standard_normal((20, 8))), _unit(rng.standard_normal((45, 8)))
    r = compare_storage(Q, STUDY_CONDITIONS[3], G, k=3)
    (b,) = compare_conditions(Q, [STUDY_CONDITIONS[3]], G, k=3)
    assert r.gallery_error.shape == (45,)
    np.testing.assert_array_equal(r.neighbors, b.neighbors)
    np.testing.assert_array_equal(r.reference_neighbors, b.reference_neighbors)
    np.testing.assert_array_equal(r.bound, b.bound)


def test_compare_study_conditions_defaults_and_k():
    rng = np.random.default_rng(36)
    train, val = _unit(rng.standard_normal((80, 16))), _unit(rng.standard_normal((60, 16)))
    res = compare_study_conditions(train, val)
    assert [r.k for r in res] == [10] * 8
    moved = CommonOffset(0.99, seed=0).fit(train).transform(val)
    for a, b in zip(res[6:], compare_conditions(moved, OFFSET_CONDITIONS)):
        np.testing.assert_array_equal(a.margins, b.margins)
        np.testing.assert_array_equal(a.neighbors, b.neighbors)
    res5 = compare_study_conditions(train, val, k=5, chunk_size=7)
    assert [r.k for r in res5] == [5] * 8
    for a, b in zip(res5[:6], compare_conditions(val, k=5)):
        np.testing.assert_array_equal(a.neighbors, b.neighbors)
    # chunk_size is checked with the evaluation vectors, before any offset is fitted
    with pytest.raises(ValueError, match=r"^chunk_size: must be at least 1, got 0$"):
        compare_study_conditions(train, val, offset_severity=2.0, chunk_size=0)


def test_precision_change_with_missing_labels_is_the_mean_over_defined_queries():
    rng = np.random.default_rng(3)
    n, k = 40, 4
    labels = rng.integers(0, 3, n).astype(object)
    labels[[1, 7]] = None
    ref = np.array([rng.choice(np.delete(np.arange(n), i), k, replace=False) for i in range(n)])
    new = ref.copy()
    new[:10] = np.array([rng.choice(np.delete(np.arange(n), i), k, replace=False) for i in range(10)])
    zeros = np.zeros(n)
    result = StorageResult(
        STUDY_CONDITIONS[0],
        k,
        0.0,
        np.ones(n, bool),
        zeros,
        zeros,
        zeros,
        np.zeros(n, bool),
        zeros,
        zeros,
        reference_neighbors=ref,
        neighbors=new,
    )

    def p_at_k(rows):  # brute force: each labelled query, among its labelled neighbours
        out = np.full(n, np.nan)
        for i in range(n):
            kept = [j for j in rows[i] if labels[j] is not None]
            if labels[i] is not None and kept:
                out[i] = np.mean([labels[j] == labels[i] for j in kept])
        return out

    before, after = p_at_k(ref), p_at_k(new)
    ok = ~(np.isnan(before) | np.isnan(after))
    assert result.precision_change(labels) == pytest.approx(100 * np.mean(after[ok] - before[ok]), rel=1e-12)
    same = StorageResult(
        STUDY_CONDITIONS[0],
        k,
        0.0,
        np.ones(n, bool),
        zeros,
        zeros,
        zeros,
        np.zeros(n, bool),
        zeros,
        zeros,
        reference_neighbors=ref,
        neighbors=ref.copy(),
    )
    assert same.precision_change(labels) == 0.0


# ---------------------------------------------------------------------- low-bit formats


def test_fp8_error_is_half_an_e4m3_quantum_of_the_scaled_value():
    X = np.random.default_rng(11).standard_normal((40, 64)) * np.logspace(-3, 3, 40)[:, None]
    stored = store(X, "fp8")
    c = stored.scale.astype(np.float64)[:, None]
    binade = np.maximum(np.frexp(np.abs(X) / c)[1] - 1, -6)  # e4m3's binade of each scaled value
    assert (np.abs(stored.reconstruct() - X) <= c * 2.0 ** (binade - 4) * (1 + 1e-9)).all()
    assert stored.codes.dtype == np.uint8 and stored.nbytes == 40 * bytes_per_vector("fp8", 64)


@pytest.mark.parametrize("fmt, levels", [("int8cal", 255), ("int4", 15)])
def test_calibrated_formats_store_within_half_a_step_of_the_calibration_ranges(fmt, levels):
    rng = np.random.default_rng(12)
    X = rng.standard_normal((300, 33))
    R = calibration_ranges(X[:200])  # calibrated on a sample: later rows may lie outside
    stored = store(X, fmt, R)
    step = (R[1] - R[0]) / levels
    err = np.abs(stored.reconstruct() - np.clip(X, R[0], R[1]))
    assert (err <= step / 2 * (1 + 1e-9)).all()
    assert stored.nbytes == 300 * bytes_per_vector(fmt, 33) + R.nbytes  # codes, and the one shared table
    np.testing.assert_array_equal(store(X, fmt).ranges, calibration_ranges(X))  # by default the rows' own


def test_int8cal_codes_use_the_signed_sentence_transformers_layout():
    X = np.array([[0.0, 1.0], [2.0, 3.0], [1.0, 2.0]])
    stored = store(X, "int8cal")
    assert stored.codes.dtype == np.int8
    np.testing.assert_array_equal(stored.codes, [[-128, -128], [127, 127], [0, 0]])  # 127.5 rounds to even 128


def test_binary_stores_sign_bits_eight_to_a_byte():
    X = np.random.default_rng(13).standard_normal((10, 20))
    stored = store(X, "binary")
    assert stored.codes.shape == (10, 3) and stored.nbytes == 10 * bytes_per_vector("binary", 20)
    np.testing.assert_array_equal(stored.reconstruct(), np.where(X > 0, 1.0, -1.0))


def test_a_calibrated_condition_stores_both_sides_on_the_gallerys_ranges_by_default():
    rng = np.random.default_rng(14)
    Q, G = rng.standard_normal((20, 8)) * 3, rng.standard_normal((200, 8))
    c = StorageCondition("int4 both", gallery="int4", queries="int4")
    np.testing.assert_array_equal(c.calibration(G), calibration_ranges(G))
    R = calibration_ranges(Q)
    given = StorageCondition("int4 on the queries' ranges", gallery="int4", queries="int4", ranges=R)
    a, b = compare_conditions(Q, [c, given], G, k=3)
    _assert_sound([a, b], Q, G)
    assert StorageCondition("fp16", gallery="float16").calibration(G) is None
    with pytest.raises(ValueError, match="^ranges: only a calibrated format"):
        StorageCondition("x", gallery="float16", ranges=R)
    with pytest.raises(ValueError, match="^ranges: only the calibrated formats"):
        store(Q, "fp8", R)


def test_bytes_per_vector_of_every_format():
    assert [bytes_per_vector(f, 10) for f in FORMATS[1:]] == [40, 20, 14, 14, 10, 5, 2]
    for fmt in FORMATS[1:]:
        X = np.random.default_rng(15).standard_normal((7, 13))
        stored = store(X, fmt)
        table = 0 if stored.ranges is None else stored.ranges.nbytes
        assert stored.nbytes - table == 7 * bytes_per_vector(fmt, 13), fmt
