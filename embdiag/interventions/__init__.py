"""Changes to cached vectors, never to the encoder: stress tests, compression, storage precision.

``stress`` (contraction, common offset, rank restriction, noise over a severity grid),
``identities`` (the stress tests' responses that algebra predicts, beside their measured
values), ``compression`` (Matryoshka prefix, PCA), ``caption_retrieval`` (image–caption
retrieval in both directions under Matryoshka compression, with its bootstrap and
shuffled-correspondence control), ``precision`` (storage formats, scoring arithmetic,
top-k certificates). Measures their effect with :mod:`embdiag.metrics`; imports nothing else
of the package but the shared helpers.
"""

from .compression import MatryoshkaPrefix, PCACompression
from .precision import STUDY_CONDITIONS, StorageCondition, compare_conditions, compare_storage, store
from .stress import (
    INTERVENTIONS,
    SEVERITIES,
    CommonOffset,
    Contraction,
    Noise,
    RankRestriction,
    grid,
    make_intervention,
    measure_grid,
    stress_grid,
)

__all__ = [
    "INTERVENTIONS",
    "SEVERITIES",
    "STUDY_CONDITIONS",
    "CommonOffset",
    "Contraction",
    "MatryoshkaPrefix",
    "Noise",
    "PCACompression",
    "RankRestriction",
    "StorageCondition",
    "compare_conditions",
    "compare_storage",
    "grid",
    "make_intervention",
    "measure_grid",
    "store",
    "stress_grid",
]
