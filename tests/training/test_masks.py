"""Multi-block masks: disjoint context and targets, fixed counts, determinism per (seed, step)."""

import numpy as np
import pytest

from embdiag.training.masks import MaskConfig, sample_masks


@pytest.mark.parametrize(
    "grid, batch, cfg",
    [
        (4, 64, MaskConfig()),
        (4, 32, MaskConfig(n_targets=2, min_context=2)),
        (8, 16, MaskConfig()),
    ],
)
def test_shapes_disjointness_and_ranges(grid, batch, cfg):
    for step in range(5):
        m = sample_masks(cfg, grid, batch, seed=3, step=step)
        assert m.context.shape[0] == m.targets.shape[0] == batch
        assert m.targets.shape[1] == cfg.n_targets
        assert m.context.shape[1] >= cfg.min_context
        assert m.context.dtype == m.targets.dtype == np.int64
        assert m.context.min() >= 0 and m.context.max() < grid * grid
        assert m.targets.min() >= 0 and m.targets.max() < grid * grid
        assert (np.diff(m.context, axis=1) > 0).all()  # sorted, no repeats
        for b in range(batch):
            assert not set(m.context[b]) & set(m.targets[b].ravel())


def test_target_blocks_are_rectangles():
    grid = 8
    m = sample_masks(MaskConfig(), grid, 8, seed=0, step=0)
    for block in m.targets.reshape(-1, m.targets.shape[-1]):
        rows, cols = np.divmod(block, grid)
        h, w = np.ptp(rows) + 1, np.ptp(cols) + 1
        assert h * w == len(block) == len(set(block.tolist()))


def test_deterministic_per_seed_and_step():
    cfg = MaskConfig()
    a = sample_masks(cfg, 4, 16, seed=1, step=7)
    b = sample_masks(cfg, 4, 16, seed=1, step=7)
    assert np.array_equal(a.context, b.context) and np.array_equal(a.targets, b.targets)
    c = sample_masks(cfg, 4, 16, seed=1, step=8)
    d = sample_masks(cfg, 4, 16, seed=2, step=7)
    assert not np.array_equal(a.targets, c.targets) and not np.array_equal(a.targets, d.targets)


def test_infeasible_config_and_bad_arguments_raise():
    with pytest.raises(ValueError, match="min_context"):
        sample_masks(MaskConfig(n_targets=4, target_scale=(0.5, 0.5), min_context=12), 4, 4, 0, 0)
    with pytest.raises(ValueError, match="target_scale"):
        MaskConfig(target_scale=(0.5, 0.2))
    with pytest.raises(ValueError, match="grid"):
        sample_masks(MaskConfig(), 0, 4, 0, 0)
    with pytest.raises(ValueError, match="step"):
        sample_masks(MaskConfig(), 4, 4, 0, -1)
