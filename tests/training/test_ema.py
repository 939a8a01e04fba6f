"""EMA momentum schedule and update."""

import pytest
import torch
from torch import nn

from embdiag.training.ema import ema_update, momentum_at


def test_schedule_endpoints_and_linearity():
    assert momentum_at(0, 1000) == pytest.approx(0.996)
    assert momentum_at(1000, 1000) == pytest.approx(1.0)
    assert momentum_at(500, 1000) == pytest.approx(0.998)
    assert momentum_at(10, 20, start=0.5, end=0.7) == pytest.approx(0.6)
    with pytest.raises(ValueError, match="step"):
        momentum_at(1001, 1000)
    with pytest.raises(ValueError, match="total_steps"):
        momentum_at(0, 0)


def test_update_math():
    torch.manual_seed(0)
    target, online = nn.Linear(3, 2), nn.Linear(3, 2)
    before = [p.clone() for p in target.parameters()]
    ema_update(target, online, 0.9)
    for t, b, o in zip(target.parameters(), before, online.parameters()):
        assert torch.allclose(t, 0.9 * b + 0.1 * o, atol=1e-7)
    ema_update(target, online, 0.0)
    assert all(torch.equal(t, o) for t, o in zip(target.parameters(), online.parameters()))
    snapshot = [p.clone() for p in target.parameters()]
    with torch.no_grad():
        for p in online.parameters():
            p.add_(1.0)
    ema_update(target, online, 1.0)
    assert all(torch.equal(t, s) for t, s in zip(target.parameters(), snapshot))
    with pytest.raises(ValueError, match="momentum"):
        ema_update(target, online, 1.5)
    with pytest.raises(ValueError, match="target"):
        ema_update(nn.Linear(2, 2), online, 0.5)
