"""embdiag: can you trust an embedding?

Four properties of one set of vectors, each measured by its own instrument:
distribution (:mod:`embdiag.geometry`), recoverable labels (:mod:`embdiag.probe`),
neighbour identity and relevance (:mod:`embdiag.retrieval`), with paired
uncertainty (:mod:`embdiag.stats`).
"""

__version__ = "0.1.0"
