"""Named random streams: every random draw of a run is a pure function of (seed, stream, step).

Initialisation, data order, masks and SIGReg directions each read their own stream, so
they are matched across conditions (the same seed gives the same encoder initialisation
and the same batches whatever the condition) and a resumed run can recreate the draws of
any step without replaying the ones before it.
"""

from __future__ import annotations

import zlib

import numpy as np
import torch

STREAMS: tuple[str, ...] = ("init-encoder", "init-predictor", "init-projector", "order", "masks", "sigreg")


def _check(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name}: expected a non-negative integer, got {value!r}")
    return int(value)


def rng(seed: int, stream: str, step: int = 0) -> np.random.Generator:
    """A numpy generator for draw ``step`` of ``stream`` in run ``seed``."""
    if stream not in STREAMS:
        raise ValueError(f"stream: expected one of {STREAMS}, got {stream!r}")
    key = [_check("seed", seed), zlib.crc32(stream.encode()), _check("step", step)]
    return np.random.default_rng(np.random.SeedSequence(key))


def torch_generator(seed: int, stream: str, step: int = 0, device="cpu") -> torch.Generator:
    """A torch generator on ``device`` seeded from :func:`rng` of the same arguments."""
    g = torch.Generator(device=device)
    g.manual_seed(int(rng(seed, stream, step).integers(2 ** 63)))
    return g
