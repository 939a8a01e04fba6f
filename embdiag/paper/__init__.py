"""The executable paper: chapter pipeline (``pipeline``), each chapter's figures, tables, wording
and findings (``chapters``, one module per chapter; drawn with :mod:`embdiag.view`'s theme,
charts and exhibits), the Sphinx extension that serves the chart libraries and the chapter
sources (``sphinxext``) and the command line (``cli``). The top of the dependency order: it may
import every other part of the package.
"""
