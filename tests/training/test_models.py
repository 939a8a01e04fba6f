"""Encoder, predictor and projector: shapes, position embeddings, seeded initialisation."""

import numpy as np
import pytest
import torch

from embdiag.training.models import (
    MODEL_SIZES,
    Encoder,
    ModelConfig,
    Predictor,
    Projector,
    init_weights,
    model_config,
    sincos_2d,
)


def test_sincos_position_embeddings():
    pe = sincos_2d(192, 4)
    assert pe.shape == (16, 192)
    assert torch.allclose(pe[:, 0::1].abs().max(), torch.tensor(1.0), atol=1e-6)
    # Row half depends only on the row, column half only on the column.
    grid = pe.reshape(4, 4, 192)
    assert torch.allclose(grid[:, 0, :96], grid[:, 3, :96]) and torch.allclose(grid[0, :, 96:], grid[3, :, 96:])
    # sin^2 + cos^2 = 1 per frequency, and every position is distinct.
    assert torch.allclose(pe[:, :48] ** 2 + pe[:, 48:96] ** 2, torch.ones(16, 48), atol=1e-6)
    assert len({tuple(np.round(r, 6)) for r in pe.numpy()}) == 16
    # Position (0, 0) is sin(0) = 0, cos(0) = 1.
    assert torch.equal(pe[0], torch.tensor([0.0] * 48 + [1.0] * 48 + [0.0] * 48 + [1.0] * 48))
    with pytest.raises(ValueError, match="dim"):
        sincos_2d(190, 4)


@pytest.mark.parametrize("size", ["tiny", "cpu", "study"])
def test_shapes_and_pooled_dimension(size):
    cfg = model_config(size)
    enc, pred, proj = Encoder(cfg), Predictor(cfg), Projector(cfg)
    x = torch.randn(3, 3, cfg.image_size, cfg.image_size)
    assert enc(x).shape == (3, cfg.n_patches, 192)
    assert enc.pool(x).shape == (3, 192)
    keep = torch.tensor([[0, 2, 5]] * 3)
    tokens = enc(x, keep=keep)
    assert tokens.shape == (3, 3, 192)
    targets = torch.tensor([[[1, 3], [4, 6]]] * 3)
    assert pred(tokens, keep, targets).shape == (3, 2, 2, 192)
    assert proj(enc.pool(x)).shape == (3, cfg.projector_dim)


def test_context_tokens_equal_full_tokens_without_attention_mixing():
    # With one token kept, attention is trivial: the kept token's output does not depend on the others.
    cfg = MODEL_SIZES["tiny"]
    enc = init_weights(Encoder(cfg), torch.Generator().manual_seed(0))
    x = torch.randn(2, 3, cfg.image_size, cfg.image_size)
    y = x.clone()
    y[:, :, 8:, :] = 0  # change pixels outside patch 0
    a = enc(x, keep=torch.tensor([[0], [0]]))
    b = enc(y, keep=torch.tensor([[0], [0]]))
    assert torch.allclose(a, b, atol=1e-6)


def test_init_is_a_function_of_the_generator():
    cfg = MODEL_SIZES["tiny"]
    a = init_weights(Encoder(cfg), torch.Generator().manual_seed(5)).state_dict()
    torch.manual_seed(123)  # the global RNG plays no part
    b = init_weights(Encoder(cfg), torch.Generator().manual_seed(5)).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    w = a["blocks.0.qkv.weight"]
    assert abs(w.std().item() - 0.02 * 0.88) < 0.002 and w.abs().max() <= 0.04  # truncated at 2 std


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(image_size=30, patch_size=8), "patch_size"),
        (dict(width=190), "width"),
        (dict(depth=0), "depth"),
    ],
)
def test_invalid_config_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**kwargs)
    with pytest.raises(ValueError, match="size"):
        model_config("huge")
