"""Synthetic matrices used by the book's worked examples and stand-in vectors."""

import numpy as np
import pytest

from embdiag import synthetic
from embdiag.metrics.geometry import mean_cosine, participation_ratio, total_variance


def test_exact_singular_values_and_centering():
    Z = synthetic.matrix_with_singular_values([3, 1, 0, 0], n=8, seed=1)
    np.testing.assert_allclose(np.linalg.svd(Z, compute_uv=False), [3, 1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-12)


@pytest.mark.parametrize(
    "bad", [dict(singular_values=[], n=5), dict(singular_values=[1, -1], n=5), dict(singular_values=[1, 2, 3], n=3)]
)
def test_bad_spectra_rejected(bad):
    with pytest.raises(ValueError):
        synthetic.matrix_with_singular_values(**bad)


def test_anisotropic_gaussian_mean_and_decay():
    Z = synthetic.anisotropic_gaussian(20000, 8, decay=2.0, mean_norm=5.0, seed=0)
    assert np.linalg.norm(Z.mean(axis=0)) == pytest.approx(5.0, rel=0.02)
    lam = np.linalg.eigvalsh(np.cov(Z.T))[::-1]
    np.testing.assert_allclose(lam / lam[0], np.arange(1, 9) ** -2.0, rtol=0.1, atol=0.01)


def test_labelled_clusters_scale_and_determinism():
    Z, y = synthetic.labelled_clusters(983, seed=2)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1, atol=1e-12)
    assert 0.2 < total_variance(Z) < 0.3 and 0.7 < mean_cosine(Z) < 0.8
    assert 30 < participation_ratio(Z) < 50
    assert set(y) == {"weather", "scene", "time"} and all(len(v) == 983 for v in y.values())
    Z2, y2 = synthetic.labelled_clusters(983, seed=2)
    np.testing.assert_array_equal(Z, Z2)
    assert not np.array_equal(Z, synthetic.labelled_clusters(983, seed=3)[0])
    with pytest.raises(ValueError, match="strength"):
        synthetic.labelled_clusters(10, strength=(0.1,))


def test_float32_near_tie_ties_in_float32_only():
    X = synthetic.float32_near_tie()
    np.testing.assert_allclose(np.linalg.norm(X[:3], axis=1), 1.0, rtol=0, atol=1e-15)
    s64 = X[1:3] @ X[0]
    s32 = X[1:3].astype(np.float32) @ X[0].astype(np.float32)
    assert s64[1] - s64[0] == pytest.approx(1e-9, rel=1e-6) and s32[0] == s32[1]
