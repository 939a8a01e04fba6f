"""SIGReg: statistical properties of the Epps-Pulley statistic and agreement with jepa-science."""

import math

import pytest
import torch

from embdiag.training.losses import KNOTS, T_MAX, epps_pulley, prediction_loss, random_directions, sigreg

jepa_science = pytest.importorskip("jepa_science")


def _expected_gaussian() -> float:
    """E[T] for N(0, 1) samples: N * E|ecf - phi|^2 = 1 - phi(t)^2 per knot, on the same quadrature."""
    t = torch.linspace(0, T_MAX, KNOTS, dtype=torch.float64)
    dt = T_MAX / (KNOTS - 1)
    w = torch.full((KNOTS,), 2 * dt, dtype=torch.float64)
    w[[0, -1]] = dt
    phi = torch.exp(-(t**2) / 2)
    return float(((1 - phi**2) * phi * w).sum())


@pytest.mark.parametrize("n", [16, 64, 512])
def test_gaussian_samples_average_about_1_05_at_any_batch_size(n):
    g = torch.Generator().manual_seed(n)
    stats = epps_pulley(torch.randn(n, 4000, generator=g))
    assert abs(_expected_gaussian() - 1.05) < 0.01
    assert stats.mean().item() == pytest.approx(_expected_gaussian(), abs=0.03)


def test_zero_embeddings_give_0_402_n():
    t = torch.linspace(0, T_MAX, KNOTS, dtype=torch.float64)
    dt = T_MAX / (KNOTS - 1)
    w = torch.full((KNOTS,), 2 * dt, dtype=torch.float64)
    w[[0, -1]] = dt
    phi = torch.exp(-(t**2) / 2)
    per_n = float(((1 - phi) ** 2 * phi * w).sum())
    assert per_n == pytest.approx(0.402, abs=5e-4)
    d = random_directions(8, 16, torch.Generator().manual_seed(0))
    for n in (10, 100):
        assert sigreg(torch.zeros(n, 8), d).item() == pytest.approx(per_n * n, rel=1e-5)


@pytest.mark.parametrize("n, d, k", [(64, 192, 256), (128, 64, 1024), (7, 3, 5)])
def test_agrees_with_jepa_science_on_the_same_directions(n, d, k):
    z = torch.randn(n, d, generator=torch.Generator().manual_seed(1)) * 1.7 + 0.3
    ours = sigreg(z, random_directions(d, k, torch.Generator().manual_seed(42)))
    ref = jepa_science.sigreg_loss(z, num_slices=k, generator=torch.Generator().manual_seed(42))
    assert ours.item() == pytest.approx(ref.item(), abs=1e-5, rel=1e-5)


def test_directions_are_unit_columns_and_gradient_flows():
    a = random_directions(192, 256, torch.Generator().manual_seed(0))
    assert a.shape == (192, 256)
    assert torch.allclose(a.norm(dim=0), torch.ones(256), atol=1e-6)
    z = torch.randn(32, 192, requires_grad=True)
    sigreg(z, a).backward()
    assert torch.isfinite(z.grad).all() and z.grad.abs().sum() > 0


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match="directions"):
        sigreg(torch.randn(4, 8), torch.randn(7, 3))
    with pytest.raises(ValueError, match="z"):
        sigreg(torch.randn(4), torch.randn(4, 3))
    with pytest.raises(ValueError, match="k"):
        random_directions(4, 0, torch.Generator())
    with pytest.raises(ValueError, match="predicted"):
        prediction_loss(torch.zeros(2, 3), torch.zeros(3, 2))


def test_prediction_loss_is_smooth_l1():
    p, t = torch.tensor([0.0, 0.5, 3.0]), torch.zeros(3)
    assert prediction_loss(p, t).item() == pytest.approx((0 + 0.5 * 0.25 + 2.5) / 3)
    assert math.isclose(prediction_loss(t, t).item(), 0.0)
