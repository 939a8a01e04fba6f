"""A page's result box: the answer that opens a chapter or a report, before the details."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Result", "box"]


@dataclass(frozen=True)
class Result:
    """A page's result box: ``html`` is a ``<div class="embdiag-result">``, which Jupyter shows."""

    html: str

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return "<Result>"


def box(text: str, *, figure=None) -> Result:
    """A result box of ``text`` (HTML, already escaped), then ``figure`` if given.

    Example:
        >>> box("Two of three hold.").html
        '<div class="embdiag-result"><p><strong>Result.</strong> Two of three hold.</p></div>'
    """
    body = f"<p><strong>Result.</strong> {text}</p>"
    if figure is not None:
        body += figure._repr_html_()
    return Result(f'<div class="embdiag-result">{body}</div>')
