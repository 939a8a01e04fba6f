"""The study's sections, each measured once in one home.

A section's module (``embdiag.study.<section>``) holds everything that decides its findings:

- ``Settings``: a frozen dataclass of the section's parameters; its fields carry the names and
  defaults of the section chapter's parameters cell (``tests/study/test_homes.py`` checks they
  agree), so the chapter, the conclusions and the real-encoder comparison measure alike;
- ``run(inputs, settings=Settings())``: the section's measurement, every number its findings and
  its chapter's exhibits read, measured once. A fixed-encoder section's result is kept on disk by
  :mod:`embdiag._memo` (checked against its SHA-256, keyed by the inputs' content, the settings
  and the code), so a second reader reads the same result; the training section reads the
  sweep's committed records, which are its measurement (``embdiag train`` makes them);
- ``CRITERIA``: its declared findings (:class:`embdiag.study.findings.Claim`), each with its
  margin and why that margin;
- ``findings(measured, study=None)``: their verdicts (:func:`embdiag.study.findings.verdicts`),
  against the study's published values (``read_study()``) unless ``study`` is given.

Claims and verdict tables follow one protocol (:mod:`embdiag.study.findings`). The chapter
modules (:mod:`embdiag.paper.chapters`) draw the exhibits from a measurement; they measure
nothing themselves. Imports ``metrics``, ``data``, ``interventions``, ``training`` and
``encoders``; nothing of ``paper`` or ``report``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["SECTIONS", "check_attribute", "home"]

#: The study's sections in its order: section -> (module of its home, chapter that shows it).
SECTIONS = {
    "training": ("training", "03_training"),
    "stress tests": ("stress_tests", "05_stress_tests"),
    "compression": ("compression", "06_compression"),
    "neighbour stability": ("neighbour_stability", "07_neighbour_stability"),
    "caption retrieval": ("caption_retrieval", "08_caption_retrieval"),
}


def home(section: str) -> ModuleType:
    """The module of ``section`` (a key of :data:`SECTIONS`)."""
    if section not in SECTIONS:
        raise ValueError(f"section: expected one of {list(SECTIONS)}, got {section!r}")
    return importlib.import_module(f"{__name__}.{SECTIONS[section][0]}")


def check_attribute(attribute, attributes) -> str:
    """``attribute`` if it is one of ``attributes`` (None: weather where the labels have it, else
    the first attribute), else ``ValueError`` listing them."""
    attributes = list(attributes)
    if attribute is None and attributes:
        return "weather" if "weather" in attributes else attributes[0]
    if attribute not in attributes:
        raise ValueError(f"attribute: {attribute!r} is not among the labels' attributes {attributes}")
    return attribute
