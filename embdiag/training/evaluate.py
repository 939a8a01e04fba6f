"""Evaluation of the context encoder: embed the labelled images, then measure with ``embdiag.metrics``.

Embeddings are the pooled context-encoder outputs of the full images (eval mode, no
gradient). Metrics (:func:`measure`) come from :func:`embdiag.metrics.suite.evaluate` on
the validation embeddings with probes fitted on the training embeddings, **raw** (not
standardised; ``C`` chosen on a stratified validation split of the training images):
total variance, mean cosine, RankMe, participation ratio, and per attribute accuracy,
balanced accuracy over the frozen eligible classes (support >= 10 in validation) and
P@10 among validation images; plus the majority floor of accuracy and the random floor
of P@10 per attribute (:func:`floors`).
"""

from __future__ import annotations

import numpy as np
import torch

from ..metrics.probe import majority_floor
from ..metrics.retrieval import random_floor
from ..metrics.suite import evaluate, frozen_classes
from .inputs import TrainingData
from .models import Encoder

__all__ = ["embed", "measure", "floors", "evaluate_encoder"]


@torch.no_grad()
def embed(encoder: Encoder, images: torch.Tensor, batch_size: int = 500) -> np.ndarray:
    """Pooled embeddings (n, width) as float32, computed in eval mode on the encoder's device;
    the encoder's train/eval mode is restored."""
    was_training = encoder.training
    encoder.eval()
    device = next(encoder.parameters()).device
    try:
        out = [encoder.pool(images[i:i + batch_size].to(device)).float().cpu()
               for i in range(0, len(images), batch_size)]
    finally:
        encoder.train(was_training)
    return torch.cat(out).numpy()


def floors(data: TrainingData, k: int = 10) -> dict:
    """Per attribute: ``"{a} majority"`` (accuracy floor) and ``"{a} random P@{k}"``, on validation labels."""
    row = {}
    for a, y in data.val_labels.items():
        row[f"{a} majority"] = majority_floor(y)
        row[f"{a} random P@{k}"] = random_floor(y)
    return row


def measure(train: np.ndarray, val: np.ndarray, data: TrainingData, probes: bool = True) -> dict:
    """Metrics of one encoder's ``train`` / ``val`` embeddings (see the module docstring).

    Raises ``ValueError`` when the embeddings are not finite.
    """
    classes = frozen_classes(data.val_labels)
    return evaluate(train, data.train_labels, val, data.val_labels, classes=classes, standardize=False,
                    probes=probes)


def evaluate_encoder(encoder: Encoder, data: TrainingData, final: bool = True):
    """``(metrics, train embeddings, val embeddings)`` of ``encoder``. ``final=False`` is the
    cheaper trajectory evaluation: geometry and P@10 of the validation images only (no
    probes, and the training images are not embedded: ``None``)."""
    val = embed(encoder, data.val)
    if not final:
        return evaluate(val, data.val_labels, val, data.val_labels, probes=False), None, val
    train = embed(encoder, data.train)
    return measure(train, val, data), train, val
