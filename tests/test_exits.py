"""The exit-status contract of every command (embdiag.exits): 1 only from a negative check, 2 for
bad input without a traceback, 3 for a defect of embdiag, with one; the README states it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from embdiag import exits
from embdiag.paper import cli, pipeline

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_statuses_are_the_contracts():
    assert (exits.OK, exits.VIOLATED, exits.BAD_INPUT, exits.FAILED) == (0, 1, 2, 3)
    assert set(exits.CONTRACT) == {0, 1, 2, 3}


def test_every_command_of_the_cli_is_in_the_contract(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    listed = re.search(r"\{([a-z,]+)\}", capsys.readouterr().out).group(1).split(",")
    assert set(listed) == set(exits.COMMANDS)


def test_the_readme_states_the_contract_as_the_code_does():
    assert exits.contract_table() in README.read_text(encoding="utf-8")


def test_a_chapter_that_fails_is_a_defect_not_a_violated_threshold(monkeypatch, capsys):
    def failing(*args, **kwargs):
        raise pipeline.ChapterError("chapter 20_rank_diagnostics failed in cell 3: ZeroDivisionError")

    monkeypatch.setattr(pipeline, "execute", failing)
    assert cli.main(["chapter", "rank_diagnostics", "--no-build"]) == exits.FAILED
    assert "failed in cell 3" in capsys.readouterr().err


def test_an_exception_escaping_a_command_is_exit_3_with_its_traceback(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(pipeline, "chapter_names", broken)
    assert cli.main(["sync"]) == exits.FAILED
    err = capsys.readouterr().err
    assert "Traceback" in err and "KeyError: 'a bug'" in err and "internal error" in err


def test_bad_input_is_exit_2_without_a_traceback(capsys):
    assert cli.main(["chapter", "no_such_chapter", "--no-build"]) == exits.BAD_INPUT
    err = capsys.readouterr().err
    assert "no_such_chapter" in err and "Traceback" not in err


def test_guarded_passes_statuses_and_exits_through():
    assert exits.guarded(lambda: exits.VIOLATED) == exits.VIOLATED
    with pytest.raises(SystemExit):
        exits.guarded(lambda: (_ for _ in ()).throw(SystemExit(2)))
