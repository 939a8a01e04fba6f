"""Every study section's home follows one protocol, and its settings are its chapter's parameters."""

from __future__ import annotations

import dataclasses

import pytest

from embdiag import study
from embdiag.paper import pipeline


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


@pytest.mark.parametrize("section", list(study.SECTIONS))
def test_a_home_declares_settings_run_criteria_and_findings(section):
    home = study.home(section)
    assert dataclasses.is_dataclass(home.Settings) and home.Settings.__dataclass_params__.frozen
    assert callable(home.run) and callable(home.findings) and callable(home.read_study)
    assert home.CRITERIA and all(hasattr(c, "margin") and hasattr(c, "why") for c in home.CRITERIA.values())


@pytest.mark.parametrize("section", list(study.SECTIONS))
def test_settings_are_the_chapters_parameters_with_their_defaults(section):
    _, chapter = study.SECTIONS[section]
    parameters = pipeline.parameters(chapter)
    defaults = study.home(section).Settings()
    for field in dataclasses.fields(defaults):
        assert field.name in parameters, f"{chapter} has no parameter {field.name!r}"
        assert _plain(getattr(defaults, field.name)) == _plain(parameters[field.name]), field.name


def test_an_unknown_section_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"^section: expected one of"):
        study.home("geometry")
