"""Changes to cached vectors, never to the encoder: stress tests, compression, storage precision.

``stress`` (contraction, common offset, rank restriction, noise over a severity grid),
``identities`` (the stress tests' responses that algebra predicts, beside their measured
values), ``compression`` (Matryoshka prefix, PCA), ``caption_retrieval`` (image–caption
retrieval in both directions under Matryoshka compression, with its bootstrap and
shuffled-correspondence control), ``precision`` (storage formats, scoring arithmetic,
top-k certificates), ``codes`` (the low-bit codes some formats store: float8 e4m3,
calibrated int8 and int4, sign bits with their Hamming search), ``truncation`` (a per-query
certificate that a Matryoshka prefix or PCA cannot change the exact top-k), ``ann`` (approximate
FAISS indexes, built reproducibly and searched at each value of their knob). Measures their effect with
:mod:`embdiag.metrics`; imports nothing else of the package but the shared helpers.
"""

from .ann import AnnIndex
from .codes import calibration_ranges, sign_topk
from .compression import MatryoshkaPrefix, PCACompression
from .precision import (
    STUDY_CONDITIONS,
    StorageCondition,
    bytes_per_vector,
    compare_conditions,
    compare_storage,
    store,
)
from .truncation import TruncationResult, compare_truncation, truncation_bound
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
    "AnnIndex",
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
    "TruncationResult",
    "bytes_per_vector",
    "calibration_ranges",
    "compare_conditions",
    "compare_storage",
    "compare_truncation",
    "grid",
    "make_intervention",
    "measure_grid",
    "sign_topk",
    "store",
    "stress_grid",
    "truncation_bound",
]
