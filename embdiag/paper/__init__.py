"""The executable paper: chapter pipeline (``pipeline``), offline Altair charts (``charts``) in
one visual system (``theme``: a colour per named thing, one meaning per dash, text sizes),
captioned, downloadable and traceable tables and figures (``exhibits``), each chapter's figures,
tables, wording and findings (``chapters``, one module per chapter), the Sphinx extension
that serves the chart libraries and the chapter sources (``sphinxext``) and the command line
(``cli``). The top of the dependency order: it may import every other part of the package.
"""
