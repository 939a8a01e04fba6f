"""Run configuration: one frozen dataclass per concern and the named compute profiles.

A :class:`TrainConfig` fully determines a run together with its condition and seed; it
round-trips through JSON (:meth:`TrainConfig.to_dict` / :meth:`TrainConfig.from_dict`),
is stored in every checkpoint and record, and a changed value makes old records stale.

Profiles (``PROFILES``):

- ``tiny``: seconds per run, for tests and the CI smoke sweep (16 x 16 images, depth 1).
- ``cpu`` (default): the study's seven conditions x five seeds on the 2-core CPU in about
  40 minutes on two single-threaded workers (the 64 x 64 scenes, patch 16: 16 tokens,
  depth 2, batch 64, 800 steps: 0.12 s per step with a detached target, 0.17 s without,
  measured side by side). At 800 steps the EMA reference beats the untrained encoder in
  probe accuracy on all three attributes and in P@10 on time of day and scene, not on
  weather (seed 0; see the training chapter).
- ``study``: the study's scale (depth 6, 64 x 64 images, patch 8: 64 tokens, batch 128,
  4,000 steps), for a GPU.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from .masks import MaskConfig
from .models import MODEL_SIZES, ModelConfig

__all__ = ["DataConfig", "TrainConfig", "PROFILES", "profile"]


@dataclass(frozen=True)
class DataConfig:
    """Which procedural scenes a run reads: ``n_pool`` unlabelled training images, the
    ``n_train`` / ``n_val`` labelled evaluation images, generated at ``source_size`` pixels
    (then area-downsampled to the model's ``image_size``)."""

    n_pool: int = 20000
    n_train: int = 2000
    n_val: int = 983
    source_size: int = 64
    seed: int = 0
    difficulty: float = 0.5

    def __post_init__(self):
        for name in ("n_pool", "n_train", "n_val", "source_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected a positive integer, got {v!r}")


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation and bookkeeping of one run (the condition and seed are separate).

    Loss: ``prediction + sigreg_weight * SIGReg`` (SIGReg only where the condition has it,
    on ``n_directions`` directions redrawn every step). AdamW (``weight_decay`` on matrices
    only), learning rate linear warmup over ``warmup`` steps to ``lr`` then cosine to
    ``min_lr`` (:func:`~embdiag.training.loop.lr_at`), gradient norm clipped at ``clip``;
    EMA momentum ``ema_start`` to ``ema_end``. A loss that is not finite or exceeds
    ``max_loss`` fails the run. Evaluation every ``eval_every`` steps (and at the end),
    checkpoint every ``checkpoint_every`` steps.
    """

    profile: str
    model: ModelConfig
    masks: MaskConfig = field(default_factory=MaskConfig)
    data: DataConfig = field(default_factory=DataConfig)
    batch_size: int = 64
    steps: int = 1000
    lr: float = 1e-3
    min_lr: float = 1e-5
    warmup: int = 100
    weight_decay: float = 0.05
    clip: float = 1.0
    sigreg_weight: float = 0.05
    n_directions: int = 256
    ema_start: float = 0.996
    ema_end: float = 1.0
    eval_every: int = 200
    checkpoint_every: int = 200
    max_loss: float = 1e4

    def __post_init__(self):
        for name in ("batch_size", "steps", "n_directions", "eval_every", "checkpoint_every"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: expected a positive integer, got {v!r}")
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or self.warmup < 0:
            raise ValueError(f"warmup: expected a non-negative integer, got {self.warmup!r}")
        for name in ("lr", "clip", "max_loss"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: expected a positive number, got {getattr(self, name)!r}")
        for name in ("min_lr", "weight_decay", "sigreg_weight"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name}: expected a non-negative number, got {getattr(self, name)!r}")
        if self.min_lr > self.lr:
            raise ValueError(f"min_lr: {self.min_lr} exceeds lr {self.lr}")
        if not 0.0 <= self.ema_start <= self.ema_end <= 1.0:
            raise ValueError(f"ema_start, ema_end: expected 0 <= start <= end <= 1, got {self.ema_start}, "
                             f"{self.ema_end}")
        if self.batch_size > self.data.n_pool:
            raise ValueError(f"batch_size: {self.batch_size} exceeds the pool of {self.data.n_pool} images")

    def to_dict(self) -> dict:
        """Plain JSON-able dict (nested configs as dicts)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        """Inverse of :meth:`to_dict` (lists become tuples)."""
        d = dict(d)
        masks = {k: tuple(v) if isinstance(v, list) else v for k, v in d.pop("masks").items()}
        return cls(model=ModelConfig(**d.pop("model")), masks=MaskConfig(**masks),
                   data=DataConfig(**d.pop("data")), **d)

    def replace(self, **changes) -> "TrainConfig":
        """A copy with ``changes`` (validated again)."""
        return replace(self, **changes)


PROFILES: dict[str, TrainConfig] = {
    "tiny": TrainConfig(
        profile="tiny", model=MODEL_SIZES["tiny"],
        masks=MaskConfig(n_targets=2, min_context=2),
        data=DataConfig(n_pool=128, n_train=300, n_val=200, source_size=32),
        batch_size=16, steps=6, lr=1e-3, warmup=2, n_directions=32, eval_every=3, checkpoint_every=2),
    "cpu": TrainConfig(
        profile="cpu", model=MODEL_SIZES["cpu"], masks=MaskConfig(n_targets=4),
        data=DataConfig(n_pool=20000), batch_size=64, steps=800, lr=1e-3, warmup=100,
        eval_every=200, checkpoint_every=200),
    "study": TrainConfig(
        profile="study", model=MODEL_SIZES["study"], masks=MaskConfig(n_targets=4),
        data=DataConfig(n_pool=20000), batch_size=128, steps=4000, lr=1e-3, warmup=400,
        eval_every=500, checkpoint_every=500),
}


def profile(name: str, **changes) -> TrainConfig:
    """The named profile's configuration, with optional field ``changes`` (e.g. ``steps=10``)."""
    if name not in PROFILES:
        raise ValueError(f"profile: expected one of {tuple(PROFILES)}, got {name!r}")
    return PROFILES[name].replace(**changes) if changes else PROFILES[name]
