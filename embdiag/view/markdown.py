"""Text as a display object: a paragraph of Markdown (``_repr_markdown_``) or a piece of HTML
(``_repr_html_``), shown by Jupyter and by any renderer that reads an object's representations,
with no IPython needed."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Html", "Markdown"]


@dataclass(frozen=True)
class Markdown:
    """Markdown text ``data``, displayed as Markdown.

    Example:
        >>> Markdown("*Scope:* shape only.")._repr_markdown_()
        '*Scope:* shape only.'
    """

    data: str

    def _repr_markdown_(self) -> str:
        return self.data

    def __repr__(self) -> str:
        return self.data


@dataclass(frozen=True)
class Html:
    """HTML ``html`` (already escaped) as a display object.

    Example:
        >>> Html("<p>x</p>")._repr_html_()
        '<p>x</p>'
    """

    html: str

    def _repr_html_(self) -> str:
        return self.html
