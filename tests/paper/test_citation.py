"""How to cite (embdiag/paper/citation.py): CITATION.cff agrees with the package and reads as BibTeX."""

import doctest
import tomllib

from embdiag._project import project_root
from embdiag.paper import citation


def test_citation_file_names_the_package_version_and_licence():
    project = tomllib.loads((project_root() / "pyproject.toml").read_text())["project"]
    record = citation.read()
    assert record["cff-version"] == "1.2.0" and record["version"] == project["version"]
    assert record["license"] == project["license"] and record["authors"]


def test_bibtex_entry_carries_the_record():
    text = citation.bibtex()
    assert text.startswith("@software{embdiag2026,\n") and text.endswith("}")
    assert f"version = {{{citation.read()['version']}}}" in text
    family = citation.bibtex(
        {
            "title": "T",
            "version": "2",
            "date-released": "2027-03-04",
            "authors": [{"family-names": "Doe", "given-names": "Jo"}],
            "url": "https://x",
        }
    )
    assert "author = {Doe, Jo}" in family and "year = {2027}" in family and "url = {https://x}" in family


def test_docstring_examples():
    results = doctest.testmod(citation, report=False)
    assert results.attempted > 0 and results.failed == 0
