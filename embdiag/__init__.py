"""embdiag: can you trust an embedding?

Four properties of one set of vectors, each measured by its own instrument:

- distribution, no labels: :mod:`embdiag.geometry`
- recoverable labels: :mod:`embdiag.probe`
- neighbour identity and relevance: :mod:`embdiag.retrieval`, with paired uncertainty
  from :mod:`embdiag.stats`; :mod:`embdiag.suite` runs them together.

Changes to cached vectors: :mod:`embdiag.interventions` (stress tests),
:mod:`embdiag.compression` (Matryoshka prefix, PCA), :mod:`embdiag.precision` (storage
formats, scoring arithmetic, top-k certificates). Data: :mod:`embdiag.data`. Cached
results: :mod:`embdiag.artifacts`. The executable paper: :mod:`embdiag.paper`.
"""

__version__ = "0.1.0"
