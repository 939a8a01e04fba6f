"""The truncation certificate: its bound is attained (so it cannot be tightened as a function of the
angles), every pair's computed score change lies within it, and no certified query changes, on
constructed near-ties for Matryoshka prefixes and for centred and uncentred PCA."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embdiag.interventions import MatryoshkaPrefix, PCACompression, compare_truncation, truncation_bound

K = 4


def _unit(A):
    return A / np.linalg.norm(A, axis=1, keepdims=True)


def _scores(Q, G):
    return _unit(Q) @ _unit(G).T


def test_the_bound_is_attained():
    # q = (cos t, sin t), g = (cos t, -sin t): full cosine cos 2t, prefix-1 cosine 1, change 1 - cos 2t
    t = 0.3
    q, g = np.array([[np.cos(t), np.sin(t)]]), np.array([[np.cos(t), -np.sin(t)]])
    change = abs(_scores(q[:, :1], g[:, :1]) - _scores(q, g))[0, 0]
    assert change == pytest.approx(1 - np.cos(2 * t), rel=1e-12)
    assert float(truncation_bound(np.cos(t), np.cos(t))) == pytest.approx(change, rel=1e-12)
    assert float(truncation_bound(np.cos(t), np.cos(t))) >= change


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 12), st.integers(0, 2**31 - 1))
def test_every_truncated_cosine_moves_within_the_bound_of_its_two_angles(d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2, d)) * rng.uniform(0.01, 3, d)
    keep = rng.integers(1, d)
    kept = np.linalg.norm(X[:, :keep], axis=1) / np.linalg.norm(X, axis=1) * (1 - 1e-14)  # lower bounds
    change = abs(_scores(X[:1, :keep], X[1:, :keep]) - _scores(X[:1], X[1:]))[0, 0]
    assert change <= float(truncation_bound(kept[0], kept[1]))


def _near_ties(rng, n_q, d, log_gap, keep):
    """Queries and, per query, k + 1 gallery rows at prescribed full cosines whose rank-k and
    rank-(k+1) differ by 10**log_gap, with most of their weight in the first ``keep`` coordinates,
    an exact duplicate of one of them, and random filler."""
    scale = np.r_[np.ones(keep), np.full(d - keep, 0.15)]
    Q = _unit(rng.standard_normal((n_q, d)) * scale)
    gal = []
    for q in Q:
        c = np.sort(rng.uniform(0.6, 0.95, K + 1))[::-1]
        c[K] = c[K - 1] - 10.0**log_gap
        W = rng.standard_normal((K + 1, d)) * scale
        W -= np.outer(W @ q, q)
        gal.append(c[:, None] * q + np.sqrt(1 - c**2)[:, None] * _unit(W))
        gal.append(gal[-1][rng.integers(0, K + 1)][None])
    G = np.vstack(gal + [_unit(rng.standard_normal((3 * n_q, d)) * scale)])
    return Q, G[rng.permutation(len(G))]


def _models(G, keep):
    return [MatryoshkaPrefix(keep).fit(G), PCACompression(keep).fit(G), PCACompression(keep, center=False).fit(G)]


def _transformed(model, X):
    if isinstance(model, MatryoshkaPrefix):
        return X[:, : model.k]
    return (X - model.mean_) @ model.components_.T


def _assert_sound(r, model, Q, G):
    same = G is None
    G = Q if same else G
    diff = np.abs(_scores(_transformed(model, Q), _transformed(model, G)) - _scores(Q, G))
    if same:
        np.fill_diagonal(diff, 0.0)
    assert (diff.max(axis=1) <= r.bound).all(), r.name  # the score-level inequality
    assert r.violations == 0, r.name


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), log_gap=st.floats(-12, -1), d=st.sampled_from([8, 24, 64]))
def test_no_certified_query_changes_on_constructed_near_ties(seed, log_gap, d):
    rng = np.random.default_rng(seed)
    keep = d // 2
    Q, G = _near_ties(rng, 10, d, log_gap, keep)
    for model in _models(G, keep):
        _assert_sound(compare_truncation(Q, model, G, k=K), model, Q, G)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), dup=st.floats(0, 1e-2))
def test_no_certified_query_changes_when_the_queries_are_the_gallery(seed, dup):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((120, 16)) * np.r_[np.ones(6), np.full(10, 0.05)] + 0.3
    X[80:] = X[:40] + dup * rng.standard_normal((40, 16))  # near and exact duplicates
    for model in _models(X, 6):
        _assert_sound(compare_truncation(X, model, k=K), model, X, None)


def test_both_sides_of_the_boundary_are_exercised():
    rng = np.random.default_rng(3)
    Q, G = _near_ties(rng, 40, 32, -3, 16)
    results = [compare_truncation(Q, m, G, k=K) for m in _models(G, 16)]
    assert all(r.violations == 0 for r in results)
    assert sum(int(r.certified.sum()) for r in results) > 0 and sum(int(r.changed.sum()) for r in results) > 0


def test_a_small_residual_certifies_most_queries_and_a_large_one_none():
    rng = np.random.default_rng(4)
    centers = rng.standard_normal((30, 8))
    X = np.repeat(centers, 5, axis=0) + 0.05 * rng.standard_normal((150, 8))
    small = np.hstack([X, 1e-4 * rng.standard_normal((150, 24))])
    large = np.hstack([X, rng.standard_normal((150, 24))])
    assert compare_truncation(small, MatryoshkaPrefix(8).fit(small), k=K).coverage > 0.9
    r = compare_truncation(large, MatryoshkaPrefix(8).fit(large), k=K)
    assert r.coverage == 0 and r.changed.any()


def test_the_prefix_angles_are_rigorous_lower_bounds():
    X = np.random.default_rng(5).standard_normal((50, 10))
    r = compare_truncation(X, MatryoshkaPrefix(3).fit(X), k=K)
    exact = np.linalg.norm(X[:, :3], axis=1) / np.linalg.norm(X, axis=1)
    assert (r.cos_query <= exact).all() and (r.cos_query >= exact * (1 - 1e-13)).all()
    assert r.cos_gallery == r.cos_query.min()


def test_pca_directions_beyond_the_rank_are_dropped_not_certified_against():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((80, 3)) @ rng.standard_normal((3, 10))  # rank 3 in 10 dimensions
    model = PCACompression(5, center=False).fit(X)  # uncentred: no mean to pay for
    assert model.rank_ == 3
    r = compare_truncation(X, model, k=K)  # keeps the whole row space: only rounding moves the scores
    assert r.coverage > 0.9 and r.violations == 0 and not r.changed[r.certified].any()
    assert r.bound.max() < 1e-9


def test_a_mean_far_from_the_rows_is_paid_for():
    X = np.random.default_rng(7).standard_normal((100, 12)) + 5.0  # centring moves every cosine a lot
    centred = compare_truncation(X, PCACompression(12).fit(X), k=K)  # a full basis: centring alone changes order
    plain = compare_truncation(X, PCACompression(12, center=False).fit(X), k=K)  # a rotation: nothing changes
    assert centred.coverage == 0 and centred.changed.any() and centred.violations == 0
    assert plain.coverage > 0.9 and not plain.changed.any()


def test_bad_arguments_are_refused_by_name():
    X = np.random.default_rng(8).standard_normal((20, 6))
    fitted = MatryoshkaPrefix(3).fit(X)
    for call, message in (
        (lambda: compare_truncation(X, "prefix", k=3), "^model: expected a fitted MatryoshkaPrefix or PCACompression"),
        (lambda: compare_truncation(X, MatryoshkaPrefix(3), k=3), "^model: MatryoshkaPrefix is not fitted"),
        (lambda: compare_truncation(X, fitted, k=0), "^k: must be at least 1"),
        (lambda: compare_truncation(X, fitted, k=18), "^k: must be at most 17"),
        (lambda: compare_truncation(X[:, :4], fitted, k=3), "^queries: expected 6 columns"),
        (lambda: compare_truncation(X, fitted, X[:, :4], k=3), "^gallery: expected 6 columns like queries"),
        (lambda: compare_truncation(X[:3], fitted, k=1), "^queries: needs at least 3 candidates"),
        (lambda: truncation_bound(np.nan, 0.5), "^cos_q: expected cosines in \\[0, 1\\]"),
        (lambda: truncation_bound(0.5, -0.1), "^cos_g: expected cosines in \\[0, 1\\]"),
    ):
        with pytest.raises(ValueError, match=message):
            call()
    zero = X.copy()
    zero[4, :3] = 0.0
    with pytest.raises(ValueError, match="^queries \\(truncated\\): 1 zero-norm row\\(s\\) \\(first at index 4\\)"):
        compare_truncation(zero, fitted, k=3)


def test_a_shared_reference_ranking_gives_the_same_certificates():
    from embdiag.interventions.precision import StorageCondition, compare_conditions
    from embdiag.metrics.retrieval import topk

    rng = np.random.default_rng(4)
    G = np.hstack([rng.normal(size=(300, 6)), 0.05 * rng.normal(size=(300, 10))])
    Q = G[:40] + 0.01 * rng.normal(size=(40, 16))
    ref = topk(Q, G, 6, dtype=np.float64)
    model = MatryoshkaPrefix(6).fit(G)
    a, b = (compare_truncation(Q, model, G, k=5, reference=r) for r in (None, ref))
    np.testing.assert_array_equal(a.certified, b.certified)
    np.testing.assert_array_equal(a.bound, b.bound)
    fp16 = StorageCondition("fp16", gallery="float16", queries="float16")
    (c,), (d,) = (compare_conditions(Q, [fp16], G, k=5, reference=r) for r in (None, ref))
    np.testing.assert_array_equal(c.certified, d.certified)
    with pytest.raises(ValueError, match=r"^reference: expected float64 scores and indices of shape \(40, 6\)"):
        compare_truncation(Q, model, G, k=5, reference=topk(Q, G, 5, dtype=np.float64))


def test_skipping_score_errors_keeps_the_certificate():
    from embdiag.interventions.precision import StorageCondition, compare_conditions

    rng = np.random.default_rng(5)
    G = rng.normal(size=(200, 12))
    Q = G[:30] + 0.01 * rng.normal(size=(30, 12))
    int8 = StorageCondition("int8", gallery="int8", queries="int8")
    (full,), (fast,) = (compare_conditions(Q, [int8], G, k=4, score_errors=e) for e in (True, False))
    np.testing.assert_array_equal(full.certified, fast.certified)
    np.testing.assert_array_equal(full.neighbors, fast.neighbors)
    assert full.max_score_error > 0 and np.isnan(fast.max_score_error) and fast.score_error is None
