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

from .._lazy import exports

__all__, __getattr__, __dir__ = exports(
    __name__,
    {
        "ann": ("AnnIndex",),
        "codes": ("calibration_ranges", "sign_topk"),
        "compression": ("MatryoshkaPrefix", "PCACompression"),
        "precision": (
            "STUDY_CONDITIONS",
            "StorageCondition",
            "bytes_per_vector",
            "compare_conditions",
            "compare_storage",
            "store",
        ),
        "truncation": ("TruncationResult", "compare_truncation", "truncation_bound"),
        "stress": (
            "INTERVENTIONS",
            "SEVERITIES",
            "CommonOffset",
            "Contraction",
            "Noise",
            "RankRestriction",
            "grid",
            "make_intervention",
            "measure_grid",
            "stress_grid",
        ),
    },
)
