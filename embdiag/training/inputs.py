"""Training and evaluation images as tensors, from the procedural scenes.

``pool`` images train the JEPA (no labels); the labelled ``train`` and ``val`` splits
only evaluate it. Images are generated at ``source_size`` pixels by
:func:`embdiag.data.load_procedural` (cached on disk), area-downsampled to the model's
``image_size`` when smaller (mean over ``f x f`` pixel blocks) and standardised per colour
channel with the pool's mean and standard deviation. The pool stays uint8 in memory and is
converted batch by batch (:meth:`TrainingData.batch`). No augmentation: the masks are the task.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .. import artifacts
from ..data import load_procedural
from ..data.procedural import artifact_name, load_split, split_params
from .config import DataConfig

__all__ = ["ATTRIBUTES", "TrainingData", "load_training_data", "content_digest", "data_params", "to_float"]

ATTRIBUTES: tuple[str, ...] = ("timeofday", "weather", "scene")


def to_float(images: torch.Tensor, size: int, mean: torch.Tensor | None = None,
             std: torch.Tensor | None = None) -> torch.Tensor:
    """uint8 (n, 3, H, H) -> float32 (n, 3, size, size): scaled to [0, 1], area-downsampled by
    ``H // size``, then ``(x - mean) / std`` per channel when given."""
    h = images.shape[-1]
    if images.shape[-2] != h or h % size:
        raise ValueError(f"size: {size} must divide the square image size {tuple(images.shape[-2:])}")
    x = images.float().div_(255.0)
    if h != size:
        x = F.avg_pool2d(x, h // size)
    if mean is not None:
        x = (x - mean.view(1, 3, 1, 1)) / std.view(1, 3, 1, 1)
    return x


@dataclass(frozen=True, eq=False)
class TrainingData:
    """The uint8 pool (n, 3, H, H) with its channel ``mean`` / ``std`` at ``image_size``, the
    float32 evaluation images (n, 3, S, S) and their string labels per attribute."""

    pool: torch.Tensor
    mean: torch.Tensor
    std: torch.Tensor
    image_size: int
    train: torch.Tensor
    val: torch.Tensor
    train_labels: dict
    val_labels: dict
    source: str

    def batch(self, index) -> torch.Tensor:
        """Standardised float32 pool images ``index`` at ``image_size``."""
        return to_float(self.pool[index], self.image_size, self.mean, self.std)


@functools.lru_cache(maxsize=8)
def content_digest(cfg: DataConfig, root: str | None = None) -> str:
    """SHA-256 (16 hex digits) of the images and attribute codes of the splits of ``cfg``, from
    the checksums in their cache manifests (the splits are generated on first use). An edit
    of the generator's code that leaves the images unchanged keeps the digest."""
    h = hashlib.sha256()
    for split, n in (("train", cfg.n_train), ("val", cfg.n_val), ("pool", cfg.n_pool)):
        name = artifact_name(split_params(split, n, seed=cfg.seed, image_size=cfg.source_size,
                                          difficulty=cfg.difficulty))
        try:
            files = artifacts.manifest(name, root=root)["files"]
        except artifacts.MissingArtifactError:
            load_split(split, n, seed=cfg.seed, image_size=cfg.source_size, difficulty=cfg.difficulty, root=root)
            files = artifacts.manifest(name, root=root)["files"]
        for key in ("images.npy", "attributes.npy"):
            h.update(f"{split}/{key}:{files[key]['sha256']}".encode())
    return h.hexdigest()[:16]


def data_params(cfg: DataConfig, root: str | None = None) -> dict:
    """What determines the images: the data config and :func:`content_digest`."""
    return {"n_pool": cfg.n_pool, "n_train": cfg.n_train, "n_val": cfg.n_val, "source_size": cfg.source_size,
            "seed": cfg.seed, "difficulty": cfg.difficulty, "content": content_digest(cfg, root)}


def _channel_stats(pool: torch.Tensor, size: int, chunk: int = 2000) -> tuple[torch.Tensor, torch.Tensor]:
    s, ss, n = torch.zeros(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64), 0
    for i in range(0, len(pool), chunk):
        x = to_float(pool[i:i + chunk], size).double()
        s += x.sum(dim=(0, 2, 3))
        ss += x.square().sum(dim=(0, 2, 3))
        n += x.numel() // 3
    mean = s / n
    return mean.float(), (ss / n - mean.square()).clamp_min(1e-12).sqrt().float()


def load_training_data(cfg: DataConfig, image_size: int, root: str | Path | None = None) -> TrainingData:
    """Load (generating and caching on first use) the scenes of ``cfg`` at ``image_size`` pixels."""
    ds = load_procedural(seed=cfg.seed, n_train=cfg.n_train, n_val=cfg.n_val, n_pool=cfg.n_pool,
                         image_size=cfg.source_size, difficulty=cfg.difficulty, splits=("train", "val", "pool"),
                         root=root)

    def nchw(split):
        return torch.from_numpy(np.ascontiguousarray(np.asarray(ds.subset(split).images).transpose(0, 3, 1, 2)))

    pool = nchw("pool")
    mean, std = _channel_stats(pool, image_size)
    train, val = ds.subset("train"), ds.subset("val")
    return TrainingData(pool=pool, mean=mean, std=std, image_size=image_size,
                        train=to_float(nchw("train"), image_size, mean, std),
                        val=to_float(nchw("val"), image_size, mean, std),
                        train_labels={a: train.labels(a) for a in ATTRIBUTES},
                        val_labels={a: val.labels(a) for a in ATTRIBUTES}, source=ds.source)
