"""One module per chapter of the book, named like it: that chapter's figures, tables, wording
and declared findings, computed from what the library measured (none measures anything itself).

- :mod:`.data` and :mod:`.reference_encoder` (page 02), :mod:`.training` (03 and 15),
  :mod:`.stress_tests` (05), :mod:`.compression` (06), :mod:`.neighbour_stability` (07),
  :mod:`.caption_retrieval` (08), :mod:`.rank_diagnostics` (20). The landing page (00) and the
  conclusions (09) stack the sections' findings (:mod:`embdiag.paper.conclusions`), the report
  chapter (21) is package data of :mod:`embdiag.report`.
"""
