"""The study's seven training conditions, five seeds and five declared comparisons, as data.

A :class:`Condition` is four switches read by the one training loop:

- ``stop_gradient``: the target latents are detached (no gradient through the target side);
- ``ema``: the target branch is a separate encoder, an exponential moving average of the
  context encoder (its output is detached, so ``ema`` implies ``stop_gradient``);
  without it the target branch is the context encoder itself on the full image;
- ``sigreg``: SIGReg on the pooled context embeddings (or on the projector outputs);
- ``projector``: a temporary MLP between encoder and SIGReg (implies ``sigreg``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["Condition", "CONDITIONS", "SEEDS", "Comparison", "COMPARISONS", "condition"]


@dataclass(frozen=True)
class Condition:
    """One training condition: a name and the four switches (validated on construction)."""

    name: str
    stop_gradient: bool
    ema: bool
    sigreg: bool
    projector: bool

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name: expected a non-empty string, got {self.name!r}")
        for switch in ("stop_gradient", "ema", "sigreg", "projector"):
            if not isinstance(getattr(self, switch), bool):
                raise ValueError(f"{switch}: expected True or False, got {getattr(self, switch)!r}")
        if self.ema and not self.stop_gradient:
            raise ValueError(f"{self.name}: ema=True needs stop_gradient=True (the EMA target is detached)")
        if self.projector and not self.sigreg:
            raise ValueError(f"{self.name}: projector=True needs sigreg=True (the projector only feeds SIGReg)")

    @property
    def slug(self) -> str:
        """File-name form of the name, e.g. ``projector-sigreg-stop-gradient``."""
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")


CONDITIONS: tuple[Condition, ...] = (
    Condition("EMA reference", stop_gradient=True, ema=True, sigreg=False, projector=False),
    Condition("Stop-gradient only", stop_gradient=True, ema=False, sigreg=False, projector=False),
    Condition("SIGReg + stop-gradient", stop_gradient=True, ema=False, sigreg=True, projector=False),
    Condition("SIGReg", stop_gradient=False, ema=False, sigreg=True, projector=False),
    Condition("Projector + SIGReg + stop-gradient", stop_gradient=True, ema=False, sigreg=True, projector=True),
    Condition("Projector + SIGReg", stop_gradient=False, ema=False, sigreg=True, projector=True),
    Condition("Contracted control", stop_gradient=False, ema=False, sigreg=False, projector=False),
)

SEEDS: tuple[int, ...] = (0, 1, 2, 3, 4)


class Comparison(NamedTuple):
    """A declared paired contrast: condition ``a`` minus condition ``b``, seed by seed."""

    label: str
    a: str
    b: str


COMPARISONS: tuple[Comparison, ...] = (
    Comparison("stop-gradient effect, no SIGReg", "Stop-gradient only", "Contracted control"),
    Comparison("stop-gradient effect, no projector", "SIGReg + stop-gradient", "SIGReg"),
    Comparison("stop-gradient effect, with projector", "Projector + SIGReg + stop-gradient", "Projector + SIGReg"),
    Comparison("projector effect, with stop-gradient", "Projector + SIGReg + stop-gradient", "SIGReg + stop-gradient"),
    Comparison("projector effect, without stop-gradient", "Projector + SIGReg", "SIGReg"),
)


def condition(name: str) -> Condition:
    """The condition called ``name`` (its name or its slug)."""
    for c in CONDITIONS:
        if name in (c.name, c.slug):
            return c
    valid = ", ".join(repr(c.name) for c in CONDITIONS)
    raise ValueError(f"condition: unknown name {name!r}; expected one of {valid} (or their slugs)")
