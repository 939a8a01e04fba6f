"""The training loop at tiny scale: determinism, matched initialisation, resume after a kill, failures."""

import math

import numpy as np
import pytest
import torch

from embdiag.training import loop, losses
from embdiag.training.checkpoint import load_checkpoint, save_checkpoint
from embdiag.training.conditions import CONDITIONS, condition
from embdiag.training.config import DataConfig, TrainConfig, profile
from embdiag.training.inputs import load_training_data
from embdiag.training.loop import batch_indices, build_models, lr_at, step_losses, train
from embdiag.training.masks import sample_masks

CFG = profile("tiny")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    torch.set_num_threads(1)
    return load_training_data(CFG.data, CFG.model.image_size, root=tmp_path_factory.mktemp("scenes"))


def test_lr_schedule_warmup_then_cosine():
    cfg = profile("tiny", steps=101, warmup=10, lr=1e-3, min_lr=1e-5)
    assert lr_at(0, cfg) == pytest.approx(1e-4)
    assert lr_at(9, cfg) == pytest.approx(1e-3)
    assert lr_at(10, cfg) == pytest.approx(1e-3)
    assert lr_at(100, cfg) == pytest.approx(1e-5)
    assert lr_at(55, cfg) == pytest.approx(1e-5 + 0.5 * (1e-3 - 1e-5))
    lrs = [lr_at(s, cfg) for s in range(10, 101)]
    assert all(a >= b for a, b in zip(lrs, lrs[1:]))
    with pytest.raises(ValueError, match="step"):
        lr_at(101, cfg)


def test_batches_cover_each_epoch_once_and_are_reproducible():
    seen = np.concatenate([batch_indices(100, 10, 0, s) for s in range(10)])
    assert sorted(seen.tolist()) == list(range(100))
    assert np.array_equal(batch_indices(100, 10, 0, 13), batch_indices(100, 10, 0, 13))
    assert not np.array_equal(batch_indices(100, 10, 0, 3), batch_indices(100, 10, 0, 13))


def test_same_seed_same_initial_encoder_in_every_condition():
    states = [build_models(CFG, c, 7) for c in CONDITIONS]
    ref = states[0]["encoder"].state_dict()
    for models in states[1:]:
        assert all(torch.equal(ref[k], v) for k, v in models["encoder"].state_dict().items())
        assert all(
            torch.equal(a, b) for a, b in zip(states[0]["predictor"].parameters(), models["predictor"].parameters())
        )
    ema = build_models(CFG, condition("EMA reference"), 7)
    assert all(torch.equal(a, b) for a, b in zip(ema["target"].parameters(), ema["encoder"].parameters()))
    assert not any(p.requires_grad for p in ema["target"].parameters())
    other = build_models(CFG, CONDITIONS[0], 8)["encoder"].state_dict()
    assert not torch.equal(ref["patch.weight"], other["patch.weight"])
    assert set(build_models(CFG, condition("Projector + SIGReg"), 7)) == {"encoder", "predictor", "projector"}


def _grads(name, data):
    c = condition(name)
    models = build_models(CFG, c, 0)
    m = sample_masks(CFG.masks, CFG.model.grid, 8, 0, 0)
    d = losses.random_directions(CFG.model.projector_dim if c.projector else 192, 16, torch.Generator())
    out = step_losses(
        models, c, data.batch(torch.arange(8)), torch.from_numpy(m.context), torch.from_numpy(m.targets), d, 0.05
    )
    out.loss.backward()
    return out, {k: p.grad.clone() for k, p in models["encoder"].named_parameters()}


def test_switches_change_the_gradient_not_the_forward_pass(data):
    sg, g_sg = _grads("Stop-gradient only", data)
    ctl, g_ctl = _grads("Contracted control", data)
    ema, g_ema = _grads("EMA reference", data)
    assert sg.prediction.item() == ctl.prediction.item() == ema.prediction.item()
    assert sg.sigreg.item() == ctl.sigreg.item() == 0.0
    assert all(torch.equal(g_sg[k], g_ema[k]) for k in g_sg)  # EMA at init = detached self-target
    assert not torch.allclose(g_sg["blocks.0.qkv.weight"], g_ctl["blocks.0.qkv.weight"])
    reg, _ = _grads("SIGReg", data)
    assert reg.sigreg.item() > 0 and reg.loss.item() == pytest.approx(reg.prediction.item() + 0.05 * reg.sigreg.item())


def _same(a, b):
    assert a["status"] == b["status"] == "ok"
    assert a["metrics"] == b["metrics"]
    assert np.array_equal(a["train_embeddings"], b["train_embeddings"])
    assert np.array_equal(a["val_embeddings"], b["val_embeddings"])
    assert [r["step"] for r in a["trajectory"]] == [r["step"] for r in b["trajectory"]]


def test_tiny_training_is_deterministic_and_complete(data):
    c = condition("SIGReg + stop-gradient")
    a, b = train(CFG, c, 0, data=data), train(CFG, c, 0, data=data)
    _same(a, b)
    assert a["steps_done"] == CFG.steps and a["resumed_from"] == 0
    assert [r["step"] for r in a["trajectory"]] == [3, 6]
    assert "timeofday accuracy" not in a["trajectory"][0] and "timeofday accuracy" in a["trajectory"][-1]
    assert {"timeofday majority", "weather random P@10", "scene BA", "rankme"} <= set(a["metrics"])
    assert a["train_embeddings"].shape == (300, 192) and a["val_embeddings"].dtype == np.float32


class Killed(Exception):
    pass


def test_resume_after_kill_is_bit_identical(data, tmp_path):
    c = condition("Projector + SIGReg")
    reference = train(CFG, c, 1, data=data)

    def kill_at_5(step, info):
        if step == 5:
            raise Killed

    with pytest.raises(Killed):
        train(CFG, c, 1, tmp_path, data=data, progress=kill_at_5)
    ckpt = tmp_path / loop.CHECKPOINT
    assert load_checkpoint(ckpt)["step"] == 4
    # A kill in the middle of writing the next checkpoint leaves a partial temporary file.
    stray = tmp_path / f".{loop.CHECKPOINT}.abc123.tmp"
    stray.write_bytes(ckpt.read_bytes()[:1000])
    resumed = train(CFG, c, 1, tmp_path, data=data)
    assert resumed["resumed_from"] == 4 and not stray.exists()
    _same(reference, resumed)


def test_damaged_checkpoint_is_detected_and_ignored(data, tmp_path, capsys):
    c = condition("EMA reference")
    reference = train(CFG, c, 2, data=data)
    with pytest.raises(Killed):
        train(CFG, c, 2, tmp_path, data=data, progress=lambda s, i: (_ for _ in ()).throw(Killed) if s == 3 else None)
    ckpt = tmp_path / loop.CHECKPOINT
    ckpt.write_bytes(ckpt.read_bytes()[:-100])  # truncated by a crash
    assert load_checkpoint(ckpt) is None
    assert "checksum mismatch" in capsys.readouterr().err
    rerun = train(CFG, c, 2, tmp_path, data=data)
    assert rerun["resumed_from"] == 0
    _same(reference, rerun)


def test_checkpoint_of_another_run_is_not_resumed(data, tmp_path):
    save_checkpoint(tmp_path / loop.CHECKPOINT, {"identity": {"seed": 99}, "step": 4})
    assert train(CFG, condition("SIGReg"), 0, tmp_path, data=data)["resumed_from"] == 0


def test_nan_loss_fails_the_run_with_its_last_metrics(data, monkeypatch):
    calls = {"n": 0}
    original = losses.prediction_loss

    def poisoned(predicted, target):
        calls["n"] += 1
        value = original(predicted, target)
        return value * math.nan if calls["n"] == 5 else value

    monkeypatch.setattr(losses, "prediction_loss", poisoned)
    r = train(CFG, condition("Contracted control"), 0, data=data)
    assert r["status"] == "failed" and "step 5" in r["reason"]
    assert r["steps_done"] == 4 and r["train_embeddings"] is None
    assert r["metrics"]["rankme"] == r["trajectory"][-1]["rankme"] and r["trajectory"][-1]["step"] == 3


def test_exploding_loss_fails_the_run(data):
    r = train(CFG.replace(max_loss=1e-6), condition("SIGReg"), 0, data=data)
    assert r["status"] == "failed" and "above" in r["reason"] and r["steps_done"] == 0 and r["trajectory"] == []


def test_config_round_trips_and_validates():
    for name in ("tiny", "cpu", "study"):
        cfg = profile(name)
        assert TrainConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="batch_size"):
        profile("tiny", batch_size=1000)
    with pytest.raises(ValueError, match="profile"):
        profile("gpu")
    with pytest.raises(ValueError, match="n_pool"):
        DataConfig(n_pool=0)


def test_study_profile_runs_at_tiny_scale(tmp_path):
    cfg = profile(
        "study",
        steps=2,
        batch_size=4,
        warmup=1,
        eval_every=2,
        n_directions=16,
        data=DataConfig(n_pool=8, n_train=150, n_val=120),
    )
    assert (cfg.model.width, cfg.model.depth, cfg.model.n_patches) == (192, 6, 64)
    r = train(cfg, condition("Projector + SIGReg + stop-gradient"), 0, data_root=tmp_path, device="cpu")
    assert r["status"] == "ok" and r["val_embeddings"].shape == (120, 192)
