"""embdiag: can you trust an embedding?

Four properties of one set of vectors, each measured by its own instrument. The package
follows the design, one subpackage per part, each importing only those listed before it:

- shared helpers, top-level modules: ``artifacts`` (checksummed cache), ``floatpath`` (the
  pinned float path every chapter, report and sweep runs on), ``cluster`` (Ray), ``synthetic``
  (matrices with known spectra), ``_validate`` (argument checks), ``_blas`` (thread control),
  ``_scaling`` (exact power-of-two rescaling), ``_mapped`` (releasing memory-mapped pages),
  ``_images`` (images as ``data:`` URLs), ``_project`` (where the project's folders are); and
  ``static/``, the house stylesheet (package data);
- :mod:`embdiag.metrics`: geometry, probes, retrieval, paired statistics, the suite;
- :mod:`embdiag.data`: procedural driving scenes, BDD100K and COCO loaders;
- :mod:`embdiag.interventions`: stress tests, compression, caption retrieval under compression,
  storage precision (uses metrics);
- :mod:`embdiag.training` and :mod:`embdiag.encoders`: the two study designs (use data, metrics);
- :mod:`embdiag.view`: how a result is shown: chart theme and offline renderer, captioned
  exhibits, result boxes, Markdown text (uses only the shared helpers);
- :mod:`embdiag.report`: ``embdiag report`` on a user's vectors (uses data, metrics,
  interventions, training, encoders, view);
- :mod:`embdiag.paper`: chapters, the book and the command line (uses everything).
"""

__version__ = "0.1.0"
