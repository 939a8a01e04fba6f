"""How embdiag shows a result: the presentation primitives that the book (``paper``) and the
report (``report``) both draw with.

- :mod:`embdiag.view.theme`: the colour palette, dashes, panel widths and Altair theme.
- :mod:`embdiag.view.charts`: the offline Altair renderer (deterministic chart HTML).
- :mod:`embdiag.view.exhibits`: captioned, downloadable, traceable tables and figures.
- :mod:`embdiag.view.result`: a page's result box.
- :mod:`embdiag.view.markdown`: a paragraph of Markdown that Jupyter and a plain renderer both show.

Every object shown exposes ``_repr_html_``, ``_repr_markdown_`` or ``_repr_mimebundle_``, so
it needs no IPython to be rendered. This part imports only the shared helpers (``artifacts``).
"""
