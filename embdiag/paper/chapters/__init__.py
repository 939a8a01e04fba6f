"""One module per chapter of the book, named like it: that chapter's figures, tables, wording
and declared findings, computed from what the library measured (none measures anything itself).

- :mod:`.data` (chapter 02), :mod:`.training` (03 and 10), :mod:`.reference_encoder` (04),
  :mod:`.stress_tests` (05 and 11), :mod:`.compression` (06 and 12), :mod:`.neighbour_stability`
  (07 and 13), :mod:`.caption_retrieval` (08), :mod:`.rank_diagnostics` (15). The conclusions
  (09) stack the sections' findings (:mod:`embdiag.paper.conclusions`), the report chapter (16)
  is package data of :mod:`embdiag.report`.
"""
