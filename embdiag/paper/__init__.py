"""The executable paper: chapter pipeline (``pipeline``), offline Altair charts (``charts``),
the Sphinx extension that serves the chart libraries (``sphinxext``) and the command line
(``cli``). The top of the dependency order: it may import every other part of the package.
"""
