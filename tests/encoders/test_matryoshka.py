"""Matryoshka contrastive loss: equals CLIP at one prefix, symmetric, permutation invariant."""

import math

import pytest
import torch
import torch.nn.functional as F

from embdiag.encoders.matryoshka import DIMS, clip_loss, matryoshka_loss


def _pair(n=8, d=768, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g), torch.randn(n, d, generator=g)


def _reference_clip(a, b, s):
    """Written out per row from the definition (independent of the vectorised version)."""
    a, b = F.normalize(a, dim=-1), F.normalize(b, dim=-1)
    total = 0.0
    for i in range(len(a)):
        li = s * (a[i] @ b.T)
        lt = s * (b[i] @ a.T)
        total += -(li[i] - torch.logsumexp(li, 0)) - (lt[i] - torch.logsumexp(lt, 0))
    return total / (2 * len(a))


def test_equals_plain_clip_with_the_full_width_only():
    a, b = _pair()
    assert torch.allclose(matryoshka_loss(a, b, 10.0, dims=(768,)), _reference_clip(a, b, 10.0), atol=1e-5)
    assert torch.allclose(clip_loss(a, b, 10.0), _reference_clip(a, b, 10.0), atol=1e-5)


def test_is_the_mean_over_prefixes_each_renormalised():
    a, b = _pair()
    want = sum(_reference_clip(a[:, :k], b[:, :k], 5.0) for k in DIMS) / len(DIMS)
    assert torch.allclose(matryoshka_loss(a, b, 5.0), want, atol=1e-5)


def test_symmetric_permutation_and_scale_invariant():
    a, b = _pair()
    p = torch.randperm(len(a), generator=torch.Generator().manual_seed(1))
    base = matryoshka_loss(a, b, 7.0)
    assert torch.allclose(matryoshka_loss(b, a, 7.0), base, atol=1e-6)
    assert torch.allclose(matryoshka_loss(a[p], b[p], 7.0), base, atol=1e-5)
    assert torch.allclose(matryoshka_loss(3 * a, 0.5 * b, 7.0), base, atol=1e-5)


def test_matched_pairs_beat_chance_and_identical_pairs_approach_zero():
    a, b = _pair(n=16)
    assert abs(clip_loss(a, b, 1e-6).item() - math.log(16)) < 1e-4  # uninformative logits: log n
    assert clip_loss(a, a, 100.0).item() < 1e-3


def test_gradient_reaches_every_prefix():
    a, b = _pair(d=768)
    for k in DIMS:
        x = a.clone().requires_grad_(True)
        matryoshka_loss(x, b, 10.0, dims=(k,)).backward()
        assert x.grad[:, :k].abs().sum() > 0 and x.grad[:, k:].abs().sum() == 0
    x = a.clone().requires_grad_(True)
    s = torch.tensor(10.0, requires_grad=True)
    matryoshka_loss(x, b, s).backward()
    assert (x.grad.abs().sum(0) > 0).all() and s.grad is not None


def test_errors_name_the_argument():
    a, b = _pair(d=64)
    with pytest.raises(ValueError, match="dims"):
        matryoshka_loss(a, b, 1.0)
    with pytest.raises(ValueError, match="images, texts"):
        clip_loss(a, b[:3], 1.0)
