"""Training: pool split only, deterministic, resumable, saved as a pinned artifact."""

import numpy as np
import pytest
import torch

from embdiag import artifacts
from embdiag.encoders import DualConfig, TrainConfig, load_encoder, train_reference
from embdiag.encoders.train import batch_at, learning_rate

TINY = DualConfig(width=32, depth=1, heads=2, channels=(8, 16), text_width=32, text_depth=0, dim=128)
FAST = TrainConfig(steps=4, batch_size=8, warmup=2, n_pool=24, pool_image_size=32, dims=(128, 64), checkpoint_every=2)


def test_schedule_and_batches_are_pure_functions_of_the_step():
    c = TrainConfig(steps=100, warmup=10, lr=1.0)
    assert learning_rate(0, c) == pytest.approx(0.1) and learning_rate(9, c) == pytest.approx(1.0)
    assert learning_rate(100, c) == pytest.approx(0.0) and learning_rate(55, c) == pytest.approx(0.5)
    rows, cols = batch_at(3, FAST, 24)
    assert np.array_equal(rows, batch_at(3, FAST, 24)[0]) and np.array_equal(cols, batch_at(3, FAST, 24)[1])
    epoch = np.concatenate([batch_at(s, FAST, 24)[0] for s in range(3)])  # one epoch: every image once
    assert sorted(epoch) == list(range(24)) and cols.min() >= 0 and cols.max() <= 4


@pytest.mark.parametrize("arch", ["vit", "cnn"])
def test_trains_saves_and_resumes_identically(arch, tmp_path):
    torch.set_num_threads(1)
    enc = train_reference(arch, config=FAST, model_config=TINY, root=tmp_path, log=lambda m: None)
    m = artifacts.manifest(f"encoders/reference-{arch}", root=tmp_path)
    assert m["params"]["steps_done"] == 4 and m["files"]["weights.safetensors"]["sha256"] == enc.revision
    assert m["params"]["data"] and "--arch " + arch in m["command"]
    loaded = load_encoder(f"reference-{arch}", root=tmp_path)
    assert loaded.revision == enc.revision and loaded.dim == 128

    # Interrupted after the step-2 checkpoint, then rerun: resumes and ends with the same weights.
    def interrupt(msg):
        if "step 2/" in msg:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_reference(arch, config=FAST, model_config=TINY, root=tmp_path / "b", log=interrupt)
    messages = []
    resumed = train_reference(arch, config=FAST, model_config=TINY, root=tmp_path / "b", log=messages.append)
    assert "resuming at step 2" in messages[0] and resumed.revision == enc.revision
    images = np.random.default_rng(0).integers(0, 256, (3, 32, 32, 3), dtype=np.uint8)
    assert resumed.encode_images(images).shape == (3, 128)


def test_errors_name_the_argument(tmp_path):
    with pytest.raises(ValueError, match="arch"):
        train_reference("mlp", root=tmp_path)
    with pytest.raises(ValueError, match="minutes"):
        train_reference("vit", minutes=0, root=tmp_path)
