"""Controlled training (design A): a small JEPA trained under seven conditions.

One module per idea: ``conditions`` (the seven conditions, seeds and declared comparisons
as data), ``masks`` (I-JEPA multi-block masks seeded per step), ``models`` (ViT encoder,
predictor, projector), ``losses`` (prediction loss and SIGReg as published in LeJEPA),
``ema`` (momentum schedule and update), ``config`` (run configuration and the ``tiny`` /
``cpu`` / ``study`` profiles), ``inputs`` (the procedural scenes as tensors), ``evaluate``
(embeddings measured with :mod:`embdiag.metrics`), ``checkpoint`` (atomic, checksummed),
``seeding`` (named random streams), ``loop`` (one training loop for every condition) and
``sweep`` (the resumable 35-run sweep, its records and paired comparisons) and ``ladder``
(the same conditions at more training steps, and the gaps per length); the study's
findings on the runs are in :mod:`embdiag.study.training`, the chapters' figures in
:mod:`embdiag.paper.chapters.training`. Reads images
from :mod:`embdiag.data` and measures with :mod:`embdiag.metrics`; imports nothing of
``interventions``, ``encoders`` or ``paper``.
"""

from .conditions import COMPARISONS, CONDITIONS, SEEDS, Comparison, Condition, condition
from .config import PROFILES, DataConfig, TrainConfig, profile
from .ema import ema_update, momentum_at
from .losses import prediction_loss, random_directions, sigreg
from .loop import lr_at, train
from .masks import MaskConfig, Masks, sample_masks
from .models import MODEL_SIZES, Encoder, ModelConfig, Predictor, Projector

# The sweep's names load lazily, so that ``python -m embdiag.training.sweep`` runs a fresh module.
_SWEEP = (
    "UNTRAINED",
    "load_embeddings",
    "load_records",
    "load_trajectories",
    "paired_differences",
    "paired_table",
    "run_label",
    "run_sweep",
)


def __getattr__(name):
    if name in _SWEEP:
        from . import sweep

        return getattr(sweep, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "COMPARISONS",
    "CONDITIONS",
    "MODEL_SIZES",
    "PROFILES",
    "SEEDS",
    "UNTRAINED",
    "Comparison",
    "Condition",
    "DataConfig",
    "Encoder",
    "MaskConfig",
    "Masks",
    "ModelConfig",
    "Predictor",
    "Projector",
    "TrainConfig",
    "condition",
    "ema_update",
    "load_embeddings",
    "load_records",
    "load_trajectories",
    "lr_at",
    "momentum_at",
    "paired_differences",
    "paired_table",
    "prediction_loss",
    "profile",
    "random_directions",
    "run_label",
    "run_sweep",
    "sample_masks",
    "sigreg",
    "train",
]
