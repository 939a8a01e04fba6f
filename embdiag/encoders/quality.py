"""Is an encoder a meaningful subject? Its training card and two declared bars.

An encoder is worth stress-testing only if its vectors carry more than its inputs do.
:data:`BARS` declares the two tests (before any measurement): its standardized linear
probes beat the same probes on pooled pixels (:func:`pooled_pixels`) in balanced accuracy
on at least two of the three attributes, and its text→image Hit@10 on the caption groups
lies in [50%, 100%) (useful, not trivial). :func:`probe_table` measures the first;
:func:`caption_table` reads the second from the caption-retrieval measurement
(:func:`embdiag.interventions.caption_retrieval.evaluate`, which this package may not
import, so the chapter passes its result in); :func:`verdicts` applies the bars;
:func:`card` reads how an encoder was trained from its committed manifest.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from .. import artifacts
from ..metrics.geometry import covariance_eigenvalues
from ..metrics.probe import balanced_accuracy, fit_probes
from ..metrics.suite import frozen_classes

__all__ = ["BARS", "card", "spanned_directions", "pooled_pixels", "probe_table", "caption_table", "verdicts"]

BARS = {
    "labels beyond pixels": "standardized-probe balanced accuracy above the pooled-pixel probe's "
                            "on at least 2 of the 3 attributes",
    "captions find their image": "text→image Hit@10 on the caption groups at least 50% and below 100%",
}


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
    return {"encoder": name, "image tower": p["model"]["arch"].upper(),
            "revision": m["files"]["weights.safetensors"]["sha256"][:12],
            "steps": f"{p['steps_done']:,} of {p['train']['steps']:,}", "batch": p["train"]["batch_size"],
            "Matryoshka dims": ", ".join(map(str, p["train"]["dims"])), "final loss": round(p["final_loss"], 3),
            "command": m["command"]}


def probe_table(features: Mapping[str, tuple[np.ndarray, np.ndarray]], train_labels: Mapping[str, np.ndarray],
                val_labels: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Balanced accuracy (%) of a standardized probe per representation (rows) and attribute (columns).

    ``features`` maps a representation's name to its (training, evaluation) rows.
    """
    classes = frozen_classes(val_labels)
    rows = {}
    for name, (train, val) in features.items():
        probes = fit_probes(train, {a: train_labels[a] for a in val_labels})
        rows[name] = {a: 100 * balanced_accuracy(y, probes[a].predict(val), classes[a]) for a, y in val_labels.items()}
    return pd.DataFrame(rows).T.rename_axis("representation")


def caption_table(retrieval) -> pd.DataFrame:
    """Text→image Hit@1 and Hit@10 (%) of query-role captions over their images, one row per
    representation (indexed by its ``dimensions``, native first), with chance Hit@10 (10 in the
    number of images).

    ``retrieval``: the result of :func:`embdiag.interventions.caption_retrieval.evaluate` with
    ``k = 10`` (its :class:`~embdiag.interventions.caption_retrieval.CaptionRetrieval`), whose
    per-caption hits are read here, not recomputed.
    """
    if getattr(retrieval, "k", None) != 10:
        raise ValueError(f"retrieval: expected a caption-retrieval result searched with k = 10 (the bar reads "
                         f"Hit@10), got k = {getattr(retrieval, 'k', None)!r}")
    rows = {r.dim: {"Hit@1": 100 * r.t2i.mean("hit_1"), "Hit@10": 100 * r.t2i.mean("hit_k"),
                    "chance Hit@10": 100 * 10 / retrieval.n_images} for r in retrieval.representations}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("dimensions")


def verdicts(probes: pd.DataFrame, captions: pd.DataFrame, encoder: str, pixels: str = "pooled pixels") -> pd.DataFrame:
    """Each bar of :data:`BARS` with this encoder's numbers and whether it is met."""
    beats = probes.loc[encoder] > probes.loc[pixels]
    native = captions.iloc[0]
    detail = ", ".join(f"{a} {probes.loc[encoder, a]:.1f} vs {probes.loc[pixels, a]:.1f}" for a in probes.columns)
    return pd.DataFrame([
        {"bar": "labels beyond pixels", "criterion": BARS["labels beyond pixels"],
         "this encoder": f"{detail} ({int(beats.sum())} of {len(beats)})", "met": bool(beats.sum() >= 2)},
        {"bar": "captions find their image", "criterion": BARS["captions find their image"],
         "this encoder": f"Hit@10 {native['Hit@10']:.2f}% (Hit@1 {native['Hit@1']:.2f}%)",
         "met": bool(50 <= native["Hit@10"] < 100)},
    ])
