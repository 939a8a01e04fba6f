"""Is an encoder a meaningful subject? What its vectors carry beyond its inputs, and its training card.

:func:`pooled_pixels` gives the pixel baseline features, :func:`probe_table` the balanced
accuracy of standardized probes on any representations, :func:`spanned_directions` how many
directions an encoder's vectors use, and :func:`card` how a reference encoder was trained (from
its committed manifest). The chapter's declared bars and their verdicts are in
:mod:`embdiag.paper.chapters.reference_encoder`.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from .. import artifacts
from ..metrics.geometry import covariance_eigenvalues
from ..metrics.probe import balanced_accuracy, fit_probes
from ..metrics.suite import frozen_classes

__all__ = ["card", "spanned_directions", "pooled_pixels", "probe_table"]


def pooled_pixels(images, grid: int = 8) -> np.ndarray:
    """Pixel baseline features: ``grid x grid`` average-pooled RGB plus per-channel mean and std.

    ``images``: uint8 (n, H, W, 3) with H and W divisible by ``grid``.
    """
    x = np.asarray(images).astype(np.float32) / 255
    if x.ndim != 4 or x.shape[-1] != 3 or x.shape[1] % grid or x.shape[2] % grid:
        raise ValueError(f"images: expected (n, H, W, 3) with H and W divisible by {grid}, got {x.shape}")
    n, h, w, _ = x.shape
    p = x.reshape(n, grid, h // grid, grid, w // grid, 3).mean(axis=(2, 4)).reshape(n, -1)
    return np.concatenate([p, x.mean(axis=(1, 2)), x.std(axis=(1, 2))], 1).astype(np.float64)


def spanned_directions(Z, rel: float = 1e-9) -> int:
    """How many directions the rows of ``Z`` use: centred-covariance eigenvalues above ``rel``
    times the largest."""
    lam = covariance_eigenvalues(Z)
    return int(np.sum(lam > rel * lam.max()))


def card(name: str, root=None) -> dict:
    """How the reference encoder ``name`` was trained, from its committed manifest."""
    m = artifacts.manifest(f"encoders/{name}", root=root)
    p = m["params"]
    return {
        "encoder": name,
        "image tower": p["model"]["arch"].upper(),
        "revision": m["files"]["weights.safetensors"]["sha256"][:12],
        "steps": f"{p['steps_done']:,} of {p['train']['steps']:,}",
        "batch": p["train"]["batch_size"],
        "Matryoshka dims": ", ".join(map(str, p["train"]["dims"])),
        "final loss": round(p["final_loss"], 3),
        "command": m["command"],
    }


def probe_table(
    features: Mapping[str, tuple[np.ndarray, np.ndarray]],
    train_labels: Mapping[str, np.ndarray],
    val_labels: Mapping[str, np.ndarray],
) -> pd.DataFrame:
    """Balanced accuracy (%) of a standardized probe per representation (rows) and attribute (columns).

    ``features`` maps a representation's name to its (training, evaluation) rows.
    """
    classes = frozen_classes(val_labels)
    rows = {}
    for name, (train, val) in features.items():
        probes = fit_probes(train, {a: train_labels[a] for a in val_labels})
        rows[name] = {a: 100 * balanced_accuracy(y, probes[a].predict(val), classes[a]) for a, y in val_labels.items()}
    return pd.DataFrame(rows).T.rename_axis("representation")
