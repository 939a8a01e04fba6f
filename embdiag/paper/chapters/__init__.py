"""One module per chapter of the book, named like it: that chapter's figures, tables, wording
and declared findings, computed from what the library measured (none measures anything itself).

- :mod:`.rank_diagnostics` (chapter 01), :mod:`.data` (02), :mod:`.training` (04 and 05),
  :mod:`.stress_tests` (06), :mod:`.compression` (07), :mod:`.neighbour_stability` (08),
  :mod:`.caption_retrieval` (09), :mod:`.reference_encoder` (10).
"""
