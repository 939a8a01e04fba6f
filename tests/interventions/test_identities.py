"""The stress interventions' exact responses: identities that hold to rounding on any vectors.

The table is checked row by row (labels, severities, kinds), its values against numpy
references, its relative error where the prediction is zero, the defaults and the seed, the
float64 reading of float32 and integer inputs, float64 neighbour scoring at a near-tie, and
errors naming the argument.

Equivalent mutants
------------------
Mutants of ``tools/mutate.py`` (mutmut names
``embdiag.interventions.identities.x_<function>__mutmut_<k>``) that survive because they change
no result; each has a comment next to the code.

None survive: the two listed before (``dtype=None`` in the two ``topk`` calls) are refused by
``topk`` since issue #30, and so killed.
"""

import numpy as np
import pandas as pd
import pytest

from embdiag.interventions import identities
from embdiag.interventions.identities import exact_responses
from embdiag.synthetic import float32_near_tie


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    scales = 1.0 / np.arange(1, 41)
    train = rng.standard_normal((300, 40)) * scales + 0.3
    val = rng.standard_normal((120, 40)) * scales + 0.3
    return exact_responses(train, val, (0.5, 0.99), k=5)


def test_every_exact_identity_holds_to_rounding(table):
    exact = table[table["kind"] == "exact"]
    assert len(exact) == 2 * 9
    assert exact["relative error"].max() < 1e-9


def test_noise_holds_in_expectation_only(table):
    noisy = table[table["kind"] == "in expectation"]
    assert len(noisy) == 2
    assert (noisy["relative error"] < 0.05).all() and (noisy["relative error"] > 0).all()


def test_predictions_are_computed_not_copied(table):
    row = table[(table["intervention"] == "contraction") & (table["severity"] == 0.99)].iloc[0]
    native = table[(table["intervention"] == "common offset") & (table["severity"] == 0.99)].iloc[0]["predicted"]
    assert row["predicted"] == pytest.approx(1e-4 * native)
    kept = table[table["identity"].str.startswith("training PR")]
    assert kept["identity"].tolist() == [
        "training PR = PR of the 20 kept eigenvalues",
        "training PR = PR of the 1 kept eigenvalues",
    ]


def test_a_broken_identity_shows(monkeypatch):
    """The table has teeth: a contraction that also shifts the vectors breaks the PR-free rows."""
    real = identities.Contraction

    class Shifted(real):
        def transform(self, X):
            return super().transform(X) + np.linspace(0, 1, X.shape[1])

    monkeypatch.setattr(identities, "Contraction", Shifted)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 8))
    t = exact_responses(X, X[:30], (0.5,), k=3)
    bad = t[(t["intervention"] == "contraction") & (t["identity"] == "mean cosine unchanged")]
    assert bad["relative error"].iloc[0] > 1e-3


def test_mismatched_widths_are_named():
    with pytest.raises(ValueError, match="val: has 3 columns, train has 4"):
        exact_responses(np.ones((5, 4)), np.ones((5, 3)))


COLUMNS = ["intervention", "severity", "identity", "predicted", "measured", "relative error", "kind"]


def _layout(k, m_half, m_most):
    """The rows expected for severities (0.5, 0.99): (intervention, severity, identity, kind)."""
    rows = []
    for s, m in ((0.5, m_half), (0.99, m_most)):
        rows += [
            ("contraction", s, "total variance = (1 - s)² × native", "exact"),
            ("contraction", s, "mean cosine unchanged", "exact"),
            ("contraction", s, "RankMe unchanged", "exact"),
            ("contraction", s, "PR unchanged", "exact"),
            ("contraction", s, f"top-{k} neighbours unchanged (overlap@{k})", "exact"),
            ("common offset", s, "total variance unchanged", "exact"),
            ("common offset", s, "PR unchanged", "exact"),
            ("rank restriction", s, f"training variance = sum of the {m} kept eigenvalues", "exact"),
            ("rank restriction", s, f"training PR = PR of the {m} kept eigenvalues", "exact"),
            ("noise", s, "total variance = native + noise variance", "in expectation"),
        ]
    return rows


def test_every_row_is_labelled(table):
    """Columns in order, and each row's intervention, severity, identity and kind, spelled out
    (d = 40: the rank restriction keeps ceil(40 x 0.5) = 20 and ceil(40 x 0.01) = 1 directions)."""
    assert table.columns.tolist() == COLUMNS
    got = list(table[["intervention", "severity", "identity", "kind"]].itertuples(index=False, name=None))
    assert got == _layout(5, 20, 1)


def _tv(Z):
    return float(np.var(Z, axis=0, ddof=1).sum())


def _pr(lam):
    return float(lam.sum() ** 2 / (lam**2).sum())


def _cov_eig(Z):
    return np.sort(np.linalg.eigvalsh(np.cov(Z, rowvar=False)))[::-1]


def _mean_cos(Z):
    U = Z / np.linalg.norm(Z, axis=1, keepdims=True)
    G = U @ U.T
    n = len(Z)
    return float((G.sum() - np.trace(G)) / (n * (n - 1)))


def _rankme(Z, eps=1e-7):
    sv = np.linalg.svd(Z, compute_uv=False)
    p = sv / sv.sum() + eps
    return float(np.exp(-np.sum(p * np.log(p))))


def test_predicted_and_measured_match_independent_references():
    """Every predicted and measured value against numpy references (np.var, eigvalsh of
    np.cov, a brute-force cosine Gram, an SVD), with the stress maps written out by hand:
    contraction x -> (1 - s) x, noise variance (s / (1 - s))² x mean squared training norm."""
    rng = np.random.default_rng(3)
    scales = 1.0 / np.arange(1, 9)
    train = rng.standard_normal((50, 8)) * scales + 0.3
    val = rng.standard_normal((30, 8)) * scales + 0.3
    t = exact_responses(train, val, (0.5, 0.9), k=3)
    lam = _cov_eig(train)
    expect = []
    for s, m in ((0.5, 4), (0.9, 1)):
        c = (1 - s) * val
        _, V = np.linalg.eigh(np.cov(train, rowvar=False))
        P = V[:, ::-1][:, :m]  # the top m training directions
        mu = train.mean(axis=0)
        tr = mu + (train - mu) @ P @ P.T
        noise_var = (s / (1 - s)) ** 2 * float(np.mean(np.sum(train**2, axis=1)))
        expect += [
            ((1 - s) ** 2 * _tv(val), _tv(c)),
            (_mean_cos(val), _mean_cos(c)),
            (_rankme(val), _rankme(c)),
            (_pr(_cov_eig(val)), _pr(_cov_eig(c))),
            (1.0, 1.0),
            (_tv(val), _tv(val)),
            (_pr(_cov_eig(val)), _pr(_cov_eig(val))),
            (lam[:m].sum(), _tv(tr)),
            (_pr(lam[:m]), _pr(_cov_eig(tr)[:m])),
            (_tv(val) + noise_var, None),
        ]
    for (_, row), (pred, meas) in zip(t.iterrows(), expect, strict=True):
        assert row["predicted"] == pytest.approx(pred, rel=1e-9), row["identity"]
        if meas is not None:
            assert row["measured"] == pytest.approx(meas, rel=1e-9), row["identity"]
        else:  # noise: the measured variance is a draw near native + noise variance, not the prediction itself
            assert row["measured"] != row["predicted"]
            assert row["measured"] == pytest.approx(pred, rel=0.2)
        assert isinstance(row["predicted"], float) and isinstance(row["measured"], float)
    err = (t["measured"] - t["predicted"]).abs() / t["predicted"].abs()
    assert (t["relative error"] == err).all()


def test_a_zero_prediction_reports_the_absolute_error(monkeypatch):
    """Orthonormal rows have mean cosine exactly 0; a relative error is undefined there, so the
    row reports |measured| instead (here a shifted contraction makes the measured cosine nonzero)."""
    real = identities.Contraction

    class Shifted(real):
        def transform(self, X):
            return super().transform(X) + 0.25

    monkeypatch.setattr(identities, "Contraction", Shifted)
    val = np.eye(6)
    train = np.random.default_rng(0).standard_normal((20, 6))
    t = exact_responses(train, val, (0.5,), k=2)
    row = t[t["identity"] == "mean cosine unchanged"].iloc[0]
    assert row["predicted"] == 0.0
    assert row["measured"] == pytest.approx(_mean_cos(0.5 * val + 0.25), rel=1e-12)
    assert row["measured"] > 0.1
    assert row["relative error"] == abs(row["measured"])


def test_defaults_are_k10_and_seed0():
    rng = np.random.default_rng(4)
    train, val = rng.standard_normal((40, 6)), rng.standard_normal((25, 6))
    t = exact_responses(train, val, (0.5,))
    assert "top-10 neighbours unchanged (overlap@10)" in t["identity"].tolist()
    pd.testing.assert_frame_equal(t, exact_responses(train, val, (0.5,), k=10, seed=0))
    assert exact_responses(train, val, (0.5,), seed=1)["measured"].iloc[-1] != t["measured"].iloc[-1]


def test_seed_reaches_the_random_interventions():
    """The seed is passed to the common offset (its direction) and to the noise (its draw)."""
    from embdiag.interventions.stress import CommonOffset, Noise
    from embdiag.metrics.geometry import total_variance

    rng = np.random.default_rng(5)
    train, val = rng.standard_normal((40, 6)) + 2.0, rng.standard_normal((25, 6)) + 2.0
    t = exact_responses(train, val, (0.9,), k=3, seed=7)
    tv = dict(zip(zip(t["intervention"], t["identity"]), t["measured"]))
    o7 = CommonOffset(0.9, seed=7).fit(train).transform(val)
    o0 = CommonOffset(0.9, seed=0).fit(train).transform(val)
    assert tv[("common offset", "total variance unchanged")] == total_variance(o7) != total_variance(o0)
    n7 = Noise(0.9, seed=7).fit(train).transform(val)
    assert tv[("noise", "total variance = native + noise variance")] == total_variance(n7)


def test_float32_and_integer_inputs_are_read_as_float64():
    """The inputs are converted to float64 first: float32 (or integer) vectors give exactly the
    table of their float64 values (the noise draw is keyed on the bytes of the float64 rows, and
    large integers keep every digit)."""
    rng = np.random.default_rng(6)
    train = rng.standard_normal((40, 6)).astype(np.float32)
    val = rng.standard_normal((25, 6)).astype(np.float32)
    want = exact_responses(train.astype(np.float64), val.astype(np.float64), (0.5, 0.9), k=3)
    pd.testing.assert_frame_equal(exact_responses(train, val, (0.5, 0.9), k=3), want, check_exact=True)
    # integers above 2**24, where float32 (numpy's default float for integer input) loses the last digits
    ti, vi = rng.integers(2**24, 2**24 + 999, (40, 6)), rng.integers(2**24, 2**24 + 999, (25, 6))
    assert (ti.astype(np.float32) != ti).any()
    pd.testing.assert_frame_equal(
        exact_responses(ti, vi, (0.5,), k=3),
        exact_responses(ti.astype(np.float64), vi.astype(np.float64), (0.5,), k=3),
        check_exact=True,
    )


def test_neighbours_are_scored_in_float64():
    """A near-tie 1e-9 apart (below float32 resolution): float64 scoring ranks it the same way
    before and after an exact contraction (s = 0.5 halves every entry), so overlap@1 is 1."""
    val = float32_near_tie()
    from embdiag.metrics.retrieval import topk

    assert (
        topk(val, val, 1, exclude_self=True)[1][0, 0] != topk(val, val, 1, exclude_self=True, dtype=np.float64)[1][0, 0]
    )
    train = np.random.default_rng(7).standard_normal((20, 4))
    t = exact_responses(train, val, (0.5,), k=1)
    assert t[t["identity"] == "top-1 neighbours unchanged (overlap@1)"]["measured"].iloc[0] == 1.0


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match=r"^train: expected a 2-D array"):
        exact_responses(np.ones(5), np.ones((5, 3)))
    with pytest.raises(ValueError, match=r"^val: expected a 2-D array"):
        exact_responses(np.ones((5, 3)), np.ones(5))
