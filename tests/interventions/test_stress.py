"""Stress-test interventions: exact responses of the metrics, severity mapping, bad input.

Equivalent mutants
------------------
Mutants of ``tools/mutate.py`` (mutmut names ``embdiag.interventions.stress.x_<function>__mutmut_<k>``,
methods as ``xǁ<Class>ǁ<method>__mutmut_<k>``) that survive because they change no result; each has a
comment next to the code.

- ``Contraction.transform`` 2, ``CommonOffset.transform`` 2, ``RankRestriction.transform`` 3,
  ``Noise.transform`` 9, 22 (``astype(None)``): that is ``astype(float64)``.
- ``CommonOffset._fit`` 44, ``Noise._fit`` 14 (``"IJ,IJ->"``): the same einsum contraction.
- ``Noise.transform`` 12, 16 (``if X.size or True``, ``else 1``): ``as_matrix`` rejects empty
  arrays, so ``X.size`` is never 0 there and the ``else`` branch is never taken.
  ``Noise.transform`` 14 (``view(None)``): the same dtype, so ``crc32`` reads the same bytes.
- ``_Intervention.fit`` 19 (``min_rows`` dropped): only ``RankRestriction`` asks for 2 rows, and
  its ``principal_axes`` raises the same ``X: needs at least 2 row(s)`` error.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from embdiag.metrics.geometry import mean_cosine, participation_ratio, rankme, total_variance
from embdiag.metrics.retrieval import topk
from embdiag.interventions.stress import (
    INTERVENTIONS,
    SEVERITIES,
    CommonOffset,
    Contraction,
    Noise,
    RankRestriction,
    check_severity,
    grid,
    make_intervention,
    measure_grid,
    n_kept,
    stress_grid,
)

FAST = settings(max_examples=25, deadline=None)
severity = st.sampled_from(SEVERITIES) | st.floats(0.0, 0.995)
seed = st.integers(0, 2**31 - 1)


def _data(seed, n=60, d=12, offset=0.0):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d)) * np.linspace(2.0, 0.2, d) + offset * rng.standard_normal(d)
    return Z


def _unit(Z):
    return Z / np.linalg.norm(Z, axis=1, keepdims=True)


def _cos(Z):
    U = _unit(Z)
    return U @ U.T


@FAST
@given(seed=seed, s=severity, n=st.integers(8, 60), d=st.integers(2, 24))
def test_contraction_keeps_cosines_and_normalized_spectra(seed, s, n, d):
    X, E = _data(seed, n, d, offset=1.0), _data(seed + 1, n, d, offset=1.0)
    Y = Contraction(s).fit(X).transform(E)
    np.testing.assert_allclose(Y, (1 - s) * E, rtol=0, atol=0)
    np.testing.assert_allclose(_cos(Y), _cos(E), rtol=0, atol=1e-13)  # so the order is kept
    assert rankme(Y) == pytest.approx(rankme(E), rel=1e-9)
    assert participation_ratio(Y) == pytest.approx(participation_ratio(E), rel=1e-9)
    assert total_variance(Y) == pytest.approx((1 - s) ** 2 * total_variance(E), rel=1e-9)


def test_contraction_keeps_neighbour_order():
    E = _data(3, 200, 16)
    Y = Contraction(0.99).fit(E).transform(E)
    assert (
        np.argsort(-_cos(Y), axis=1, kind="stable")[:, :10] == np.argsort(-_cos(E), axis=1, kind="stable")[:, :10]
    ).all()


@FAST
@given(seed=seed, s=severity, n=st.integers(8, 60), d=st.integers(2, 24))
def test_common_offset_keeps_centered_variance_and_pr(seed, s, n, d):
    X, E = _data(seed, n, d), _data(seed + 1, n, d)
    off = CommonOffset(s, seed=seed).fit(X)
    Y = off.transform(E)
    rms = math.sqrt(np.mean(np.sum(X * X, axis=1)))
    assert np.linalg.norm(off.offset_) == pytest.approx(s / (1 - s) * rms, rel=1e-12)
    tol = 1e-12 * (1 + s / (1 - s)) * rms
    np.testing.assert_allclose(Y - E, np.broadcast_to(off.offset_, E.shape), atol=tol)
    assert total_variance(Y) == pytest.approx(total_variance(E), rel=1e-7)
    assert participation_ratio(Y) == pytest.approx(participation_ratio(E), rel=1e-6)


def test_common_offset_collapses_raw_rankme_and_direction_is_seeded():
    X, E = _unit(_data(0, 400, 64, offset=0.5)), _unit(_data(1, 200, 64, offset=0.5))
    Y = CommonOffset(0.99, seed=7).fit(X).transform(E)
    assert rankme(E) > 10 and rankme(Y) < 2.5 and mean_cosine(Y) > 0.999
    a, b = CommonOffset(0.5, seed=7).fit(X), CommonOffset(0.5, seed=8).fit(X)
    assert np.array_equal(a.direction_, CommonOffset(0.5, seed=7).fit(E).direction_)
    assert not np.allclose(a.direction_, b.direction_)
    u = np.zeros(64)
    u[3] = -2.0
    c = CommonOffset(0.5, direction=u).fit(X)
    np.testing.assert_allclose(c.direction_, u / 2)


@FAST
@given(seed=seed, s=severity, d=st.integers(2, 40))
def test_rank_restriction_rank_and_projection(seed, s, d):
    X, E = _data(seed, 3 * d + 5, d), _data(seed + 1, 2 * d + 3, d)
    rr = RankRestriction(s).fit(X)
    k = math.ceil(round(d * (1 - s), 9))
    assert rr.n_components_ == k == n_kept(d, s)
    Y = rr.transform(E)
    assert Y.shape == E.shape
    assert np.linalg.matrix_rank(Y - rr.mean_, tol=1e-9 * np.abs(E).max()) == k
    np.testing.assert_allclose(rr.components_ @ rr.components_.T, np.eye(k), atol=1e-12)
    np.testing.assert_allclose(rr.transform(Y), Y, atol=1e-10)  # a projection
    np.testing.assert_allclose(rr.mean_, X.mean(axis=0), atol=1e-14)  # fitted on training


def test_rank_restriction_study_scale_keeps_eight_of_768():
    assert n_kept(768, 0.99) == 8 and n_kept(768, 0.0) == 768 and n_kept(10, 0.7) == 3
    # d (1 - s) is rounded to 9 decimals before the ceiling: 3 + 3e-10 counts as 3, 3 + 2e-9 as 4
    assert n_kept(10, 0.7 - 3e-11) == 3 and n_kept(10, 0.7 - 2e-9) == 4
    X, E = _data(0, 40, 24), _data(1, 30, 24)
    np.testing.assert_allclose(RankRestriction(0.0).fit(X).transform(E), E, atol=1e-12)


@FAST
@given(seed=seed, s=st.floats(0.05, 0.99), d=st.integers(4, 64))
def test_noise_total_variance_matches_target(seed, s, d):
    n = 400
    X, E = _data(seed, n, d), _data(seed + 1, n, d)
    nz = Noise(s, seed=seed).fit(X)
    target = (s / (1 - s)) ** 2 * np.mean(np.sum(X * X, axis=1))
    assert nz.noise_variance_ == pytest.approx(target, rel=1e-12)
    got = total_variance(nz.transform(E) - E)
    se = math.sqrt(2.0 / ((n - 1) * d))  # relative sd of a chi-square total variance
    assert abs(got / target - 1) < 6 * se


def test_noise_is_reproducible_and_differs_between_sets():
    X, E = _data(0, 50, 8), _data(1, 50, 8)
    a = Noise(0.5, seed=1).fit(X)
    assert np.array_equal(a.transform(E), clone(a).fit(X).transform(E))
    assert not np.allclose(a.transform(E) - E, a.transform(X) - X)
    assert not np.allclose(a.transform(E), Noise(0.5, seed=2).fit(X).transform(E))
    np.testing.assert_array_equal(Noise(0.0).fit(X).transform(E), E)


@pytest.mark.parametrize("train", ["unit_sd", "data"])
def test_noise_draw_is_pinned(train):
    """The draw is ``default_rng([seed, crc32(bytes of X), n, d]).standard_normal((n, d))`` times
    ``sd``, added: pinned so that cached stress results stay reproducible. With training rows of
    squared norm ``d`` and ``s = .5`` the per-coordinate sd is exactly 1 (still noise)."""
    import zlib

    X = np.ones((10, 6)) if train == "unit_sd" else _data(0, 30, 6)
    E = _data(1, 20, 6).astype(np.float32)
    nz = Noise(0.5, seed=4).fit(X)
    sd = math.sqrt(nz.noise_variance_ / 6)
    assert (sd == 1.0) == (train == "unit_sd")
    draw = np.random.default_rng([4, zlib.crc32(E.tobytes()), 20, 6]).standard_normal((20, 6))
    np.testing.assert_array_equal(nz.transform(E), E.astype(np.float64) + sd * draw)
    np.testing.assert_array_equal(nz.transform(np.asfortranarray(E)), nz.transform(E))  # C-order bytes


def test_study_structure_of_the_severe_rows():
    """The .99 rows move the metrics the way the study's table does."""
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((6, 96))
    X = _unit(centers[rng.integers(0, 6, 600)] + rng.standard_normal((600, 96)) + 3 * np.ones(96) / 10)
    E = _unit(centers[rng.integers(0, 6, 300)] + rng.standard_normal((300, 96)) + 3 * np.ones(96) / 10)
    base = {"v": total_variance(E), "c": mean_cosine(E), "r": rankme(E), "p": participation_ratio(E)}
    out = {n: iv.fit(X).transform(E) for n, _, iv in grid(severities=(0.99,))}
    assert total_variance(out["contraction"]) == pytest.approx(1e-4 * base["v"], rel=1e-9)
    assert mean_cosine(out["contraction"]) == pytest.approx(base["c"], abs=1e-12)
    assert total_variance(out["common_offset"]) == pytest.approx(base["v"], rel=1e-6)
    assert mean_cosine(out["common_offset"]) > 0.9999 and rankme(out["common_offset"]) < 2.5
    assert rankme(out["rank_restriction"]) < 2 and participation_ratio(out["rank_restriction"]) <= 1 + 1e-9
    assert total_variance(out["noise"]) == pytest.approx(99**2, rel=0.02)
    assert abs(mean_cosine(out["noise"])) < 0.01 and rankme(out["noise"]) > base["r"]


def test_zero_severity_is_identity_for_all():
    X, E = _data(0, 40, 10), _data(1, 30, 10)
    for name, _, iv in grid(severities=(0.0,)):
        np.testing.assert_allclose(iv.fit(X).transform(E), E, atol=1e-12, err_msg=name)


def test_registry_and_grid():
    assert SEVERITIES == (0, 0.25, 0.5, 0.75, 0.9, 0.99)
    assert list(INTERVENTIONS) == ["contraction", "common_offset", "rank_restriction", "noise"]
    g = grid()
    assert len(g) == 4 * len(SEVERITIES)
    assert isinstance(make_intervention("noise", 0.99, seed=3), Noise)
    assert make_intervention("noise", 0.99, seed=3).seed == 3
    assert isinstance(make_intervention("contraction", 0.5, seed=3), Contraction)
    for name, cls in INTERVENTIONS.items():  # one signature for all: severity and seed
        iv = make_intervention(name, 0.5, seed=3)
        assert type(iv) is cls and iv.get_params()["seed"] == 3 and iv.get_params()["severity"] == 0.5
    with pytest.raises(ValueError, match="name"):
        make_intervention("shrink", 0.5)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 1.5, float("nan"), float("inf"), "0.5", True, None])
@pytest.mark.parametrize("cls", list(INTERVENTIONS.values()))
def test_bad_severity(cls, bad):
    iv = cls(bad)  # scikit-learn's rule: __init__ only stores, fit validates
    assert iv.get_params()["severity"] is bad
    with pytest.raises(ValueError, match=r"^severity: "):
        iv.fit(np.ones((3, 2)))


@pytest.mark.parametrize("bad", [-1, 1.5, True, "0", None])
@pytest.mark.parametrize("cls", list(INTERVENTIONS.values()))
def test_bad_seed_is_rejected_by_fit_for_every_intervention(cls, bad):
    iv = cls(0.5, seed=bad)
    with pytest.raises(ValueError, match=r"^seed: "):
        iv.fit(np.ones((3, 2)))


def test_bad_severity_via_set_params_and_helpers():
    iv = Contraction(0.5).set_params(severity=1.2)
    with pytest.raises(ValueError, match="severity"):
        iv.fit(np.ones((3, 2)))
    with pytest.raises(ValueError, match="severity"):
        make_intervention("noise", -1).fit(np.ones((3, 2)))
    assert check_severity(0.99) == 0.99


@pytest.mark.parametrize("cls", list(INTERVENTIONS.values()))
def test_transform_before_fit_and_bad_arrays(cls):
    X = _data(0, 20, 5)
    with pytest.raises(NotFittedError, match="call fit first"):
        cls(0.5).transform(X)
    Xn = X.copy()
    Xn[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"^X: contains NaN"):
        cls(0.5).fit(Xn)
    iv = cls(0.5).fit(X)
    with pytest.raises(ValueError, match="X"):
        iv.transform(Xn)
    with pytest.raises(ValueError, match="columns"):
        iv.transform(X[:, :3])


def test_bad_seed_and_direction():
    X = _data(0, 20, 5)
    with pytest.raises(ValueError, match=r"^seed: must be at least 0, got -1$"):
        Noise(0.5, seed=-1).fit(X)
    with pytest.raises(ValueError, match=r"^direction: expected length 5, got 4$"):
        CommonOffset(0.5, direction=np.ones(4)).fit(X)
    with pytest.raises(ValueError, match=r"^direction: must be nonzero$"):
        CommonOffset(0.5, direction=np.zeros(5)).fit(X)
    with pytest.raises(ValueError, match=r"^direction: expected a 1-D array, got shape \(5, 1\)$"):
        CommonOffset(0.5, direction=np.ones((5, 1))).fit(X)  # a column, though its length is d
    with pytest.raises(ValueError, match=r"^direction: contains NaN"):
        CommonOffset(0.5, direction=np.full(5, np.nan)).fit(X)
    with pytest.raises(ValueError, match=r"^X: needs at least 2 row\(s\), got 1$"):
        RankRestriction(0.5).fit(X[:1])
    with pytest.raises(ValueError, match=r"^severity: must be in \[0, 1\), got 1$"):
        check_severity(1)
    with pytest.raises(ValueError, match=r"^s: expected a number"):
        check_severity("0.5", "s")


def test_default_seed_is_zero_everywhere():
    """The documented default ``seed=0``: constructors, :func:`make_intervention` and :func:`grid`."""
    for name, cls in INTERVENTIONS.items():
        assert cls(0.5).get_params()["seed"] == 0, name
        assert make_intervention(name, 0.5).seed == 0, name
    assert CommonOffset(0.5).get_params()["direction"] is None
    assert [iv.seed for _, _, iv in grid(severities=(0.5,))] == [0] * len(INTERVENTIONS)
    X = _data(0, 20, 5)
    np.testing.assert_array_equal(Noise(0.5).fit(X).transform(X), Noise(0.5, seed=0).fit(X).transform(X))


@pytest.mark.parametrize("d", [1, 5, 64])
def test_common_offset_default_direction_is_the_seeded_gaussian_draw(d):
    X = _data(0, 20, d)
    for seed in (0, 7):
        u = np.random.default_rng(seed).standard_normal(d)
        off = CommonOffset(0.5, seed=seed).fit(X)
        assert off.direction_.shape == off.offset_.shape == (d,)
        np.testing.assert_allclose(off.direction_, u / np.linalg.norm(u), rtol=1e-15, atol=0)


def test_statistics_of_float32_training_vectors_are_float64():
    """Float32 vectors (as caches store them): the training norms are summed in float64, and an
    integer or float32 ``direction`` is normalized in float64, so the offset is exact to float64."""
    X = _data(0, 2000, 48).astype(np.float32)
    X64 = X.astype(np.float64)
    ms = np.mean(np.sum(X64 * X64, axis=1))
    assert Noise(0.5).fit(X).mean_sq_norm_ == pytest.approx(ms, rel=1e-13, abs=0)
    off = CommonOffset(0.5).fit(X)
    assert off.rms_norm_ == pytest.approx(math.sqrt(ms), rel=1e-13, abs=0)
    for u in (list(range(1, 49)), np.linspace(0.1, 3.7, 48, dtype=np.float32)):
        u64 = np.asarray(u, dtype=np.float64)
        c = CommonOffset(0.5, direction=u).fit(X)
        assert c.direction_.dtype == c.offset_.dtype == np.float64
        np.testing.assert_allclose(c.direction_, u64 / np.linalg.norm(u64), rtol=1e-15, atol=0)
        np.testing.assert_allclose(c.offset_, math.sqrt(ms) * u64 / np.linalg.norm(u64), rtol=1e-13, atol=0)


@pytest.fixture(scope="module")
def reference_vectors():
    from embdiag.encoders.vectors import driving_vectors

    return driving_vectors("reference-cnn")


@pytest.mark.slow
def test_contraction_keeps_p_at_10_and_rankme_on_the_reference_encoder(reference_vectors):
    """On the cached reference-encoder vectors: at every severity of the grid, contraction leaves the
    exact top-10 (so P@10 of every attribute, to the last bit) and RankMe (relative 1e-9) unchanged."""
    from embdiag.metrics.retrieval import precision_at_k, topk

    v = reference_vectors
    _, native = topk(v.val, v.val, 10, exclude_self=True, dtype=np.float64)
    for s in SEVERITIES[1:]:
        Y = Contraction(s).fit(v.train).transform(v.val)
        _, nb = topk(Y, Y, 10, exclude_self=True, dtype=np.float64)
        assert np.array_equal(nb, native), s
        for a, y in v.val_labels.items():
            assert precision_at_k(nb, y) == precision_at_k(native, y), (s, a)
        assert rankme(Y) == pytest.approx(rankme(v.val), rel=1e-9, abs=0), s
        assert total_variance(Y) == pytest.approx((1 - s) ** 2 * total_variance(v.val), rel=1e-9), s


@pytest.mark.slow
def test_common_offset_keeps_pr_on_the_reference_encoder(reference_vectors):
    """On the cached reference-encoder vectors: the common offset leaves PR (and centred total variance)
    unchanged to relative 1e-6 at every severity, while raw RankMe falls below 3 at .99."""
    v = reference_vectors
    for s in SEVERITIES[1:]:
        Y = CommonOffset(s, seed=0).fit(v.train).transform(v.val)
        assert participation_ratio(Y) == pytest.approx(participation_ratio(v.val), rel=1e-6), s
        assert total_variance(Y) == pytest.approx(total_variance(v.val), rel=1e-6), s
    assert rankme(Y) < 3 < rankme(v.val)


# -- measuring the grid --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def labelled():
    """Float32 vectors, as an encoder's cache stores them (the grid measures ``val`` in float64)."""
    from embdiag.synthetic import labelled_clusters

    train, y_train = labelled_clusters(90, d=12, seed=1)
    val, y_val = labelled_clusters(70, d=12, seed=2)
    return train.astype(np.float32), y_train, val.astype(np.float32), y_val


def _reference_row(name, s, train, y_train, val, y_val, k, seed, probes=True):
    """One grid point measured the plain way: a fresh intervention, evaluate's own search, overlap apart."""
    from embdiag.metrics.retrieval import overlap_at_k, topk
    from embdiag.metrics.suite import evaluate

    val = val.astype(np.float64)
    change = make_intervention(name, s, seed=seed).fit(train)
    if s == 0:
        return change, {**evaluate(train, y_train, val, y_val, k=k, probes=probes), f"overlap@{k}": 1.0}
    moved = change.transform(val)
    row = evaluate(change.transform(train), y_train, moved, y_val, k=k, probes=probes)
    _, before = topk(val, val, k, exclude_self=True, dtype=np.float64)
    _, after = topk(moved, moved, k, exclude_self=True, dtype=np.float64)
    return change, {**row, f"overlap@{k}": overlap_at_k(before, after)}


def test_measure_grid_equals_the_plain_loop(labelled):
    names, severities = ("noise", "contraction", "rank_restriction", "common_offset"), (0.9, 0.0, 0.5)
    got = list(measure_grid(*labelled, names=names, severities=severities, k=4, seed=3))
    assert [(n, s) for n, s, _, _, _ in got] == [(n, s) for n in names for s in severities]
    for name, s, change, row, _ in got:
        ref_change, ref_row = _reference_row(name, s, *labelled, k=4, seed=3)
        assert list(row) == list(ref_row) and row == ref_row, (name, s)  # exactly, to the last bit
        assert type(change) is type(ref_change) and change.severity_ == s and change.seed_ == 3
        assert change.n_features_in_ == 12 and change.get_params() == ref_change.get_params()
    fitted = {(n, s): c for n, s, c, _, _ in got}
    np.testing.assert_array_equal(
        fitted["common_offset", 0.9].offset_, CommonOffset(0.9, seed=3).fit(labelled[0]).offset_
    )  # fitted on train
    assert fitted["rank_restriction", 0.5].n_components_ == 6
    for name, s, change, row, neighbors in got:  # the neighbours the row was measured with
        moved = np.asarray(labelled[2], np.float64) if s == 0 else change.transform(np.asarray(labelled[2], np.float64))
        np.testing.assert_array_equal(neighbors, topk(moved, moved, 4, exclude_self=True, dtype=np.float64)[1])


def test_measure_grid_severity_zero_is_measured_once_on_the_unchanged_vectors(labelled, monkeypatch):
    import embdiag.interventions.stress as stress
    import embdiag.metrics.suite as suite

    calls = []
    evaluate = suite.evaluate
    monkeypatch.setattr(stress, "evaluate", lambda *a, **kw: calls.append(a[0]) or evaluate(*a, **kw))
    rows = [row for _, _, _, row, _ in measure_grid(*labelled, severities=(0.0, 0.5), k=4, probes=False)]
    assert len(rows) == 8 and len(calls) == 1 + 4
    assert calls[0] is labelled[0]  # severity 0: the training vectors as given
    zero = rows[::2]
    assert all(r == zero[0] for r in zero) and len({id(r) for r in zero}) == 4  # equal rows, not one object
    assert zero[0]["overlap@4"] == 1.0 and all(r["overlap@4"] == 1.0 for r in rows[:2])  # contraction
    assert list(zero[0]) == list(rows[1]) and not any("BA" in c for c in zero[0])  # no probes at 0 either


def test_measure_grid_defaults_k_10_and_seed_0(labelled):
    got = list(measure_grid(*labelled, names=("noise",), severities=(0.0, 0.9)))
    assert [(n, s) for n, s, _, _, _ in got] == [("noise", 0.0), ("noise", 0.9)]
    for name, s, change, row, _ in got:
        assert change.seed_ == 0
        assert row == _reference_row(name, s, *labelled, k=10, seed=0)[1], s


def test_measure_grid_searches_each_representation_once(labelled, monkeypatch):
    """One top-k search of the unchanged vectors plus one per changed representation; evaluate
    reads those neighbours and searches nothing itself."""
    import embdiag.interventions.stress as stress
    import embdiag.metrics.suite as suite

    searched = []
    topk = stress.topk
    monkeypatch.setattr(stress, "topk", lambda q, g, k, **kw: searched.append((q, kw)) or topk(q, g, k, **kw))
    monkeypatch.setattr(suite, "topk", lambda *a, **kw: pytest.fail("evaluate searched again"))
    list(measure_grid(*labelled, names=("noise", "contraction"), severities=(0.0, 0.5, 0.9), k=4, probes=False))
    assert len(searched) == 1 + 2 * 2
    assert all(kw == {"exclude_self": True, "dtype": np.float64} and q.dtype == np.float64 for q, kw in searched)


def test_stress_grid_defaults_and_table(labelled):
    table = stress_grid(*labelled)
    assert len(table) == len(INTERVENTIONS) * len(SEVERITIES)
    assert list(table["intervention"]) == [n for n in INTERVENTIONS for _ in SEVERITIES]
    assert list(table["severity"]) == list(SEVERITIES) * len(INTERVENTIONS)
    attributes = list(labelled[3])
    assert list(table.columns) == [
        "intervention",
        "severity",
        "total_variance",
        "mean_cosine",
        "rankme",
        "participation_ratio",
    ] + [f"{a} {m}" for a in attributes for m in ("accuracy", "BA")] + [f"{a} P@10" for a in attributes] + [
        "overlap@10"
    ]
    noise = table[table["intervention"] == "noise"].reset_index(drop=True)
    _, ref = _reference_row("noise", 0.99, *labelled, k=10, seed=0)
    assert noise.iloc[-1].drop(["intervention", "severity"]).to_dict() == ref  # default seed 0
    other = stress_grid(*labelled, names=("noise",), severities=(0.99,), seed=1)
    assert list(other["intervention"]) == ["noise"] and list(other["severity"]) == [0.99]
    assert other.loc[0, "rankme"] != ref["rankme"]
    assert noise.loc[5, "overlap@10"] < 0.5 < noise.loc[1, "overlap@10"]
    bare = stress_grid(*labelled, names=("contraction",), severities=(0.5,), k=3, probes=False)
    assert list(bare.columns) == [
        "intervention",
        "severity",
        "total_variance",
        "mean_cosine",
        "rankme",
        "participation_ratio",
    ] + [f"{a} P@3" for a in attributes] + ["overlap@3"]
    assert bare.loc[0, "overlap@3"] == 1.0 and len(bare) == 1 and bare.loc[0, "severity"] == 0.5


def test_measure_grid_bad_arguments(labelled):
    with pytest.raises(ValueError, match="k"):
        list(measure_grid(*labelled, k=0))
    with pytest.raises(ValueError, match="severity"):
        list(measure_grid(*labelled, severities=(0.5, 1.0), probes=False))
    with pytest.raises(ValueError, match="name"):
        list(measure_grid(*labelled, names=("shrink",)))


@pytest.mark.parametrize("scale", [1e160, 1e200, 1e300])
def test_noise_on_rows_whose_squared_norms_overflow_is_refused_by_name(scale):
    # Issue #30: finite float64 rows near 1e200 have squared norms beyond float64, and
    # Noise(0.99) returned +-inf silently.
    X = np.random.default_rng(0).standard_normal((20, 8)) * scale
    with pytest.raises(ValueError, match=r"X: the mean squared row norm .*overflows float64"):
        Noise(0.99).fit(X)


def test_noise_just_inside_float64_stays_finite():
    X = np.random.default_rng(0).standard_normal((20, 8)) * 1e150
    out = Noise(0.99).fit(X).transform(X)
    assert np.isfinite(out).all()
