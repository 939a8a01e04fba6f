"""How to cite the project: ``CITATION.cff`` of the checkout, as the cover's BibTeX block."""

from __future__ import annotations

import yaml

from .._project import project_root

__all__ = ["read", "bibtex"]


def read(path=None) -> dict:
    """The Citation File Format record (``CITATION.cff`` at the project root, or ``path``)."""
    path = project_root() / "CITATION.cff" if path is None else path
    return yaml.safe_load(open(path, encoding="utf-8").read())


def bibtex(record: dict | None = None) -> str:
    """``record`` (default :func:`read`) as one BibTeX ``@software`` entry keyed ``embdiag<year>``.

    >>> print(bibtex({"title": "T", "authors": [{"name": "A"}], "version": "1.0", "date-released": "2026-01-02"}))
    @software{embdiag2026,
      title = {T},
      author = {{A}},
      version = {1.0},
      year = {2026},
    }
    """
    record = read() if record is None else record
    year = str(record["date-released"])[:4]
    authors = " and ".join(
        "{" + a["name"] + "}" if "name" in a else f"{a['family-names']}, {a['given-names']}" for a in record["authors"]
    )
    fields = {"title": record["title"], "author": authors, "version": record["version"], "year": year}
    if "url" in record:
        fields["url"] = record["url"]
    body = "".join(f"  {key} = {{{value}}},\n" for key, value in fields.items())
    return f"@software{{embdiag{year},\n{body}}}"
