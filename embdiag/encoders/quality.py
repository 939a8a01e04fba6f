"""Is an encoder a meaningful subject? What its vectors carry beyond its inputs, and its training card.

:func:`pooled_pixels` gives the pixel baseline features, :func:`probe_items` whether
standardized probes on any representations are right on each evaluation row and
:func:`probe_table` their balanced accuracy, :func:`spanned_directions` how many
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
from ..metrics.labels import class_codes, labelled_values
from ..metrics.probe import fit_probes
from ..metrics.suite import frozen_classes

__all__ = ["card", "spanned_directions", "pooled_pixels", "probe_items", "probe_table"]


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


def probe_items(
    features: Mapping[str, tuple[np.ndarray, np.ndarray]],
    train_labels: Mapping[str, np.ndarray],
    val_labels: Mapping[str, np.ndarray],
) -> pd.DataFrame:
    """Per evaluation row, whether each representation's standardized probe is right, in the
    layout :class:`~embdiag.metrics.stats.ItemIntervals` resamples: columns ``("class", a)``,
    the row's position among attribute ``a``'s eligible classes (NaN: not counted), then
    ``(name, "{a} BA")``, 1.0 where the probe fitted on ``name``'s training rows predicts the
    row's class, 0.0 where not (NaN where not counted).

    ``features`` maps a representation's name to its (training, evaluation) rows.
    """
    classes = frozen_classes(val_labels)
    columns = {}
    for a, y in val_labels.items():
        columns[("class", a)] = class_codes(y, classes[a])
    for name, (train, val) in features.items():
        probes = fit_probes(train, {a: train_labels[a] for a in val_labels})
        for a, y in val_labels.items():
            values, keep = labelled_values(y)
            right = np.full(len(keep), np.nan)
            right[keep] = probes[a].predict(val)[keep] == values
            right[np.isnan(columns[("class", a)])] = np.nan
            columns[(name, f"{a} BA")] = right
    return pd.DataFrame(columns)


def probe_table(items: pd.DataFrame) -> pd.DataFrame:
    """Balanced accuracy (%) of each representation (rows) on each attribute (columns) of
    :func:`probe_items`: the mean over classes of each class's share right."""
    names = [n for n in items.columns.get_level_values(0).unique() if n != "class"]
    attributes = list(items["class"].columns)
    rows = {}
    for name in names:
        rows[name] = {}
        for a in attributes:
            codes, right = items[("class", a)].to_numpy(), items[(name, f"{a} BA")].to_numpy()
            counted = ~np.isnan(codes)
            rows[name][a] = 100 * float(
                np.mean([right[counted & (codes == c)].mean() for c in np.unique(codes[counted])])
            )
    return pd.DataFrame(rows).T.rename_axis("representation")
