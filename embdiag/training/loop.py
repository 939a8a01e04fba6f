"""One training loop for every condition: ``train(config, condition, seed) -> record``.

A step (:func:`step_losses`) reads the condition's four switches as data:

1. the context encoder encodes the context patches of each image;
2. the target branch encodes the full image: the EMA encoder if ``condition.ema``, else the
   context encoder itself; under ``condition.stop_gradient`` without gradient;
3. the predictor predicts the layer-normalised target tokens of each target block from the
   context tokens (:func:`~embdiag.training.losses.prediction_loss`);
4. with ``condition.sigreg``, SIGReg on the mean context token of each image, passed first
   through the projector if ``condition.projector``.

Then AdamW with clipping, and the EMA update when there is an EMA target. Every random
draw comes from a named stream of the seed (:mod:`~embdiag.training.seeding`): the
initialisation of the encoder is the same in every condition, and step ``s`` always sees
the same batch, masks and SIGReg directions. Checkpoints (every ``checkpoint_every``
steps) hold the full state, so a resumed run ends bit-identical to an uninterrupted one on
the same device and thread count. Evaluations during training measure geometry and P@10 of
the validation images (probes would cost more than the ~10% of training allowed for
evaluation); the final one adds the probes. A non-finite or exploding loss stops the run; its record
is ``status="failed"`` with the metrics of the last evaluation before the failure.
"""

from __future__ import annotations

import copy
import math
import time
from functools import lru_cache
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np
import torch
from torch import nn

from . import losses
from .checkpoint import load_checkpoint, save_checkpoint
from .conditions import Condition
from .config import TrainConfig
from .ema import ema_update, momentum_at
from .evaluate import evaluate_encoder, floors
from .inputs import TrainingData, load_training_data
from .masks import sample_masks
from .models import Encoder, Predictor, Projector, gather_tokens, init_weights
from .seeding import rng, torch_generator

__all__ = ["lr_at", "build_models", "initial_encoder", "batch_indices", "StepOutput", "step_losses", "train"]

CHECKPOINT = "checkpoint.pt"


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate of ``step`` (0-based): linear warmup ``lr * (step + 1) / warmup`` for the
    first ``warmup`` steps, then cosine from ``lr`` to ``min_lr`` at the last step."""
    if not 0 <= step < cfg.steps:
        raise ValueError(f"step: expected 0..{cfg.steps - 1}, got {step!r}")
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    span = max(1, cfg.steps - 1 - cfg.warmup)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * (step - cfg.warmup) / span))


def initial_encoder(cfg: TrainConfig, seed: int) -> Encoder:
    """The context encoder at step 0 for ``seed`` (the same in every condition)."""
    return init_weights(Encoder(cfg.model), torch_generator(seed, "init-encoder"))


def build_models(cfg: TrainConfig, condition: Condition, seed: int) -> nn.ModuleDict:
    """``encoder``, ``predictor``, plus ``target`` (EMA copy, frozen) and ``projector`` where the
    condition has them; each initialised from its own stream of ``seed``."""
    models = nn.ModuleDict({
        "encoder": initial_encoder(cfg, seed),
        "predictor": init_weights(Predictor(cfg.model), torch_generator(seed, "init-predictor")),
    })
    if condition.projector:
        models["projector"] = init_weights(Projector(cfg.model), torch_generator(seed, "init-projector"))
    if condition.ema:
        models["target"] = copy.deepcopy(models["encoder"]).requires_grad_(False)
    return models


@lru_cache(maxsize=2)
def _permutation(n: int, seed: int, epoch: int) -> np.ndarray:
    return rng(seed, "order", epoch).permutation(n)


def batch_indices(n_pool: int, batch_size: int, seed: int, step: int) -> np.ndarray:
    """Pool indices of batch ``step``: consecutive slices of a per-epoch permutation of the pool."""
    per_epoch = n_pool // batch_size
    epoch, i = divmod(step, per_epoch)
    return _permutation(n_pool, seed, epoch)[i * batch_size:(i + 1) * batch_size]


class StepOutput(NamedTuple):
    """One step's loss (``prediction + sigreg_weight * sigreg``), its parts (sigreg is 0 when
    off) and the pooled context embeddings (B, width)."""

    loss: torch.Tensor
    prediction: torch.Tensor
    sigreg: torch.Tensor
    embedding: torch.Tensor


def step_losses(models: nn.ModuleDict, condition: Condition, images: torch.Tensor, context: torch.Tensor,
                targets: torch.Tensor, directions: torch.Tensor | None, sigreg_weight: float) -> StepOutput:
    """The JEPA losses of one batch under ``condition`` (see the module docstring)."""
    encoder = models["encoder"]
    tokens = encoder(images, keep=context)
    target_encoder = models["target"] if condition.ema else encoder
    with torch.set_grad_enabled(torch.is_grad_enabled() and not condition.stop_gradient):
        latents = losses.target_latents(target_encoder(images))
    B, T, n_t = targets.shape
    wanted = gather_tokens(latents, targets.reshape(B, T * n_t)).reshape(B, T, n_t, -1)
    prediction = losses.prediction_loss(models["predictor"](tokens, context, targets), wanted)
    embedding = tokens.mean(dim=1)
    reg = torch.zeros((), device=images.device)
    if condition.sigreg:
        z = models["projector"](embedding) if condition.projector else embedding
        reg = losses.sigreg(z, directions)
    return StepOutput(prediction + sigreg_weight * reg, prediction, reg, embedding)


def _optimizer(models: nn.ModuleDict, cfg: TrainConfig) -> torch.optim.AdamW:
    trainable = [p for p in models.parameters() if p.requires_grad]
    decay = [p for p in trainable if p.ndim >= 2 and p.shape[:2] != (1, 1)]
    rest = [p for p in trainable if not any(p is q for q in decay)]
    return torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                              {"params": rest, "weight_decay": 0.0}], lr=cfg.lr, betas=(0.9, 0.999))


def train(config: TrainConfig, condition: Condition, seed: int, out_dir: str | Path | None = None, *,
          data: TrainingData | None = None, device: str | torch.device = "cpu",
          progress: Callable[[int, dict], None] | None = None, data_root: str | Path | None = None) -> dict:
    """Train one run and return its record.

    ``out_dir`` holds the checkpoint (resumed from when present and made with the same
    configuration, condition and seed; ``None``: no checkpoints). ``data`` defaults to
    :func:`~embdiag.training.inputs.load_training_data` of the config (from ``data_root``).
    ``progress(step, info)`` is called after every step with the step's losses.
    On CUDA the forward passes run under bfloat16 autocast.

    Returns a dict: ``status`` (``"ok"`` / ``"failed"``), ``reason``, ``steps_done``,
    ``metrics`` (final, with floors), ``trajectory`` (one dict per evaluation: step, mean
    losses since the previous one, learning rate, metrics), ``train_embeddings`` and
    ``val_embeddings`` (float32, ``None`` for a failed run), ``resumed_from`` (step),
    ``train_seconds``, ``eval_seconds``, ``seconds_per_step``.
    """
    device = torch.device(device)
    data = data if data is not None else load_training_data(config.data, config.model.image_size, data_root)
    models = build_models(config, condition, seed).to(device)
    opt = _optimizer(models, config)
    identity = {"config": config.to_dict(), "condition": condition.name, "seed": seed}
    ckpt_path = Path(out_dir) / CHECKPOINT if out_dir is not None else None
    state = load_checkpoint(ckpt_path) if ckpt_path is not None else None
    start, trajectory, sums = 0, [], {"prediction": 0.0, "sigreg": 0.0, "n": 0}
    train_seconds = eval_seconds = 0.0
    if state is not None and state["identity"] == identity:
        models.load_state_dict(state["models"])
        opt.load_state_dict(state["optimizer"])
        start, trajectory, sums = state["step"], state["trajectory"], state["sums"]
        train_seconds, eval_seconds = state["train_seconds"], state["eval_seconds"]
    autocast = torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")
    status, reason, last = "ok", "", None
    steps_done = start
    models.train()
    for step in range(start, config.steps):
        t0 = time.perf_counter()
        masks = sample_masks(config.masks, config.model.grid, config.batch_size, seed, step)
        index = torch.from_numpy(batch_indices(len(data.pool), config.batch_size, seed, step))
        images = data.batch(index).to(device)
        directions = None
        if condition.sigreg:
            directions = losses.random_directions(config.model.projector_dim if condition.projector
                                                  else config.model.width, config.n_directions,
                                                  torch_generator(seed, "sigreg", step)).to(device)
        for group in opt.param_groups:
            group["lr"] = lr_at(step, config)
        with autocast:
            out = step_losses(models, condition, images, torch.from_numpy(masks.context).to(device),
                              torch.from_numpy(masks.targets).to(device), directions, config.sigreg_weight)
        loss = out.loss.item()
        if not math.isfinite(loss) or loss > config.max_loss:
            status, reason = "failed", f"loss {loss:.4g} at step {step + 1} (not finite or above {config.max_loss:g})"
            break
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        nn.utils.clip_grad_norm_(models.parameters(), config.clip)
        opt.step()
        if condition.ema:
            ema_update(models["target"], models["encoder"], momentum_at(step + 1, config.steps, config.ema_start,
                                                                        config.ema_end))
        steps_done = step + 1
        train_seconds += time.perf_counter() - t0
        sums["prediction"] += out.prediction.item()
        sums["sigreg"] += out.sigreg.item()
        sums["n"] += 1
        if progress is not None:
            progress(steps_done, {"loss": loss, "prediction": out.prediction.item(), "sigreg": out.sigreg.item()})
        if steps_done % config.eval_every == 0 or steps_done == config.steps:
            t1 = time.perf_counter()
            try:
                metrics, train_emb, val_emb = evaluate_encoder(models["encoder"], data,
                                                               final=steps_done == config.steps)
            except ValueError as e:  # non-finite or degenerate embeddings
                status, reason = "failed", f"evaluation at step {steps_done}: {e}"
                break
            eval_seconds += time.perf_counter() - t1
            last = (metrics, train_emb, val_emb)
            n = max(sums["n"], 1)
            trajectory.append({"step": steps_done, "prediction_loss": sums["prediction"] / n,
                               "sigreg_loss": sums["sigreg"] / n, "lr": lr_at(step, config), **metrics})
            sums = {"prediction": 0.0, "sigreg": 0.0, "n": 0}
        if ckpt_path is not None and steps_done % config.checkpoint_every == 0 and steps_done < config.steps:
            save_checkpoint(ckpt_path, {"identity": identity, "step": steps_done, "models": models.state_dict(),
                                        "optimizer": opt.state_dict(), "trajectory": trajectory, "sums": sums,
                                        "train_seconds": train_seconds, "eval_seconds": eval_seconds})
    if status == "ok":
        metrics, train_emb, val_emb = last
    else:
        metrics = {k: v for k, v in trajectory[-1].items() if k not in ("step", "prediction_loss", "sigreg_loss",
                                                                      "lr")} if trajectory else {}
        train_emb = val_emb = None
    return {"condition": condition.name, "seed": seed, "profile": config.profile, "status": status,
            "reason": reason, "steps_done": steps_done, "metrics": {**metrics, **floors(data)},
            "trajectory": trajectory, "train_embeddings": train_emb, "val_embeddings": val_emb,
            "resumed_from": start, "train_seconds": train_seconds, "eval_seconds": eval_seconds,
            "seconds_per_step": train_seconds / max(steps_done, 1)}
