"""A paragraph of Markdown as a display object: Jupyter shows it as Markdown
(``_repr_markdown_``), and so does any renderer that reads an object's representations, with no
IPython needed."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Markdown"]


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
