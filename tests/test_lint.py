"""The package, the tests and the benchmarks pass ruff's lint and format check, as configured in pyproject.toml
(ruff is in the test extra; the files hashed into committed records are excluded from formatting)."""

import subprocess
import sys

import pytest

from embdiag.paper.pipeline import REPO


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_is_clean(command):
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "--no-cache", "embdiag", "tests", "benchmarks"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
