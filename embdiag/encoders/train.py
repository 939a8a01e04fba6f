"""Train a reference dual encoder on image–caption pairs of the procedural pool split.

Only the unlabelled ``pool`` split is read (never train, val or the caption groups).
Each step takes ``batch_size`` pool images in the order of a seeded per-epoch
permutation, one of each image's five captions drawn by a per-step seeded generator,
and minimises :func:`~embdiag.encoders.matryoshka.matryoshka_loss` with AdamW (no decay on
biases, norms and the logit scale) under a linear-warmup cosine schedule that is a pure
function of the step. A checkpoint is written every ``checkpoint_every`` steps under
``cache/encoders/<name>/``; a rerun with the same configuration resumes from it and
reproduces the uninterrupted run. The result is saved with :func:`embdiag.artifacts.save`
as ``encoders/<name>/weights.safetensors``. Run it in the background::

    python -m embdiag.encoders.train --arch vit --minutes 30
    python -m embdiag.encoders.train --arch cnn --minutes 30

The default is 3,600 steps of 128 pairs; ``--minutes`` caps the wall time: a run that
reaches it stops, saves what it has and records the steps done (step times and a short
run's record: ``benchmarks/bench_encoders.py``).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .. import artifacts
from ..data import load_procedural
from .dual import ARCHS, DualConfig, DualEncoder, ReferenceEncoder, image_tensor, to_bytes
from .matryoshka import DIMS, matryoshka_loss
from .tokenizer import WordTokenizer

#: Image towers of the two reference encoders (text tower and sizes shared).
REFERENCE_CONFIGS = {"vit": DualConfig(arch="vit"), "cnn": DualConfig(arch="cnn", channels=(32, 64, 128, 256))}


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation and data of one training run."""

    steps: int = 3600
    batch_size: int = 128
    lr: float = 2e-3
    weight_decay: float = 0.05
    warmup: int = 200
    seed: int = 0
    n_pool: int = 20000
    pool_image_size: int = 64
    dims: tuple[int, ...] = DIMS
    checkpoint_every: int = 250


def learning_rate(step: int, config: TrainConfig) -> float:
    """Linear warmup over ``warmup`` steps, then cosine decay to zero at ``steps``."""
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    t = (step - config.warmup) / max(1, config.steps - config.warmup)
    return config.lr * 0.5 * (1 + math.cos(math.pi * min(t, 1.0)))


def batch_at(step: int, config: TrainConfig, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Image rows and caption columns (0..4) of batch ``step``: a pure function of the step."""
    first = step * config.batch_size
    rows = np.arange(first, first + config.batch_size)
    epochs = rows // n
    idx = np.empty(config.batch_size, np.int64)
    for e in np.unique(epochs):
        perm = np.random.default_rng([config.seed, 1, int(e)]).permutation(n)
        idx[epochs == e] = perm[rows[epochs == e] % n]
    return idx, np.random.default_rng([config.seed, 2, step]).integers(0, 5, config.batch_size)


def _optimizer(model: DualEncoder, config: TrainConfig) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.ndim >= 2]
    rest = [p for p in model.parameters() if p.ndim < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": rest, "weight_decay": 0.0}], lr=config.lr
    )


def train_reference(
    arch: str,
    *,
    minutes: float = 30.0,
    config: TrainConfig | None = None,
    model_config: DualConfig | None = None,
    name: str | None = None,
    root: Path | None = None,
    log=None,
) -> ReferenceEncoder:
    """Train (or resume) reference encoder ``reference-<arch>``, save it and return it."""
    if arch not in ARCHS:
        raise ValueError(f"arch: expected one of {ARCHS}, got {arch!r}")
    if not minutes > 0:
        raise ValueError(f"minutes: expected a positive number, got {minutes!r}")
    config = config or TrainConfig()
    name = name or f"reference-{arch}"
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    root = Path(root) if root is not None else artifacts.data_dir()
    start = time.perf_counter()
    pool = load_procedural(splits=("pool",), n_pool=config.n_pool, image_size=config.pool_image_size, root=root)
    tokenizer = WordTokenizer(max_len=(model_config or REFERENCE_CONFIGS[arch]).max_len).fit(pool.captions.ravel())
    mc = dataclasses.replace(model_config or REFERENCE_CONFIGS[arch], arch=arch, vocab_size=len(tokenizer.vocabulary_))
    ids, mask = tokenizer.encode(pool.captions.ravel(), "document")
    ids, mask = ids.reshape(len(pool), 5, -1), mask.reshape(len(pool), 5, -1)
    images = np.asarray(pool.images)

    torch.manual_seed(config.seed)
    model = DualEncoder(mc)
    opt = _optimizer(model, config)
    record = {"model": dataclasses.asdict(mc), "train": dataclasses.asdict(config), "data": pool.key}
    ckpt = root / artifacts.CACHE / "encoders" / name / "checkpoint.pt"
    step, losses = 0, []
    if ckpt.exists():
        state = torch.load(ckpt, weights_only=False)
        if state["record"] == record:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            step, losses = state["step"], state["losses"]
            log(f"{name}: resuming at step {step}")
    model.train()
    deadline = start + 60 * minutes
    while step < config.steps and time.perf_counter() < deadline:
        for g in opt.param_groups:
            g["lr"] = learning_rate(step, config)
        rows, cols = batch_at(step, config, len(images))
        x = image_tensor(images[rows], mc.image_size)
        t_ids, t_mask = torch.from_numpy(ids[rows, cols]), torch.from_numpy(mask[rows, cols])
        loss = matryoshka_loss(
            model.encode_image(x),
            model.encode_text(t_ids, t_mask),
            model.logit_scale.exp().clamp(max=100.0),
            config.dims,
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        step += 1
        if step % config.checkpoint_every == 0 or step == config.steps:
            ckpt.parent.mkdir(parents=True, exist_ok=True)
            torch.save(
                {
                    "record": record,
                    "model": model.state_dict(),
                    "opt": opt.state_dict(),
                    "step": step,
                    "losses": losses,
                },
                ckpt.with_suffix(".tmp"),
            )
            os.replace(ckpt.with_suffix(".tmp"), ckpt)
            log(
                f"{name}: step {step}/{config.steps} loss {np.mean(losses[-50:]):.3f} "
                f"({time.perf_counter() - start:.0f} s)"
            )
    data = to_bytes(model.eval(), tokenizer)
    params = {**record, "steps_done": step, "final_loss": float(np.mean(losses[-50:])) if losses else None}
    artifacts.save(
        f"encoders/{name}",
        {"weights.safetensors": data},
        params,
        root=root,
        command=f"python -m embdiag.encoders.train --arch {arch} --minutes {minutes:g}",
    )
    return ReferenceEncoder.from_bytes(data, name)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m embdiag.encoders.train", description=__doc__.split("\n")[0])
    p.add_argument("--arch", choices=ARCHS, required=True)
    p.add_argument("--minutes", type=float, default=30.0, help="wall-time cap (default 30)")
    p.add_argument("--steps", type=int, default=TrainConfig.steps)
    p.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    enc = train_reference(a.arch, minutes=a.minutes, config=TrainConfig(steps=a.steps))
    print(f"{enc.name} revision {enc.revision}")


if __name__ == "__main__":
    main()
