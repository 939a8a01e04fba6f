"""Moved pages (embdiag/paper/sphinxext.py MOVED): each old name redirects to a page the book has."""

from __future__ import annotations

import re

import yaml

from embdiag.paper import pipeline
from embdiag.paper.sphinxext import MOVED, redirect_page


def _toc_pages() -> set[str]:
    toc = yaml.safe_load((pipeline.REPO / "_toc.yml").read_text())
    return {toc["root"]} | {c["file"] for part in toc["parts"] for c in part["chapters"]}


def test_every_moved_page_points_at_a_page_of_the_book_and_is_none_itself():
    pages = _toc_pages()
    for old, new in MOVED.items():
        assert new in pages, f"{old} redirects to {new}, which the book does not have"
        assert old not in pages, f"{old} is still a page"


def test_a_redirect_is_relative_and_names_its_target():
    text = redirect_page("chapters/19_exact_responses", "chapters/05_stress_tests")
    assert re.search(r'http-equiv="Refresh" content="0; url=05_stress_tests.html"', text)
    assert 'href="05_stress_tests.html"' in text and 'href="../_static/favicon.svg"' in text
