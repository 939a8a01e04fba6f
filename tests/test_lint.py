"""The package and the tests pass ruff's lint, as configured in pyproject.toml (ruff is in the test extra)."""

import subprocess
import sys

from embdiag.paper.pipeline import REPO


def test_ruff_check_is_clean():
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "embdiag", "tests"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
