"""The GitHub Action: action.yml passes every input through the environment to
``embdiag.report.action``, which runs ``embdiag report`` with them; the README's workflow uses it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from embdiag import exits
from embdiag.paper.pipeline import REPO
from embdiag.report import action
from embdiag.report.options import OPTIONS, in_action

ACTION = yaml.safe_load((REPO / "action.yml").read_text())


def _step(name: str) -> dict:
    return next(s for s in ACTION["runs"]["steps"] if s.get("name") == name)


def test_every_input_reaches_the_command_through_the_environment_only():
    step = _step("embdiag report")
    inputs = set(ACTION["inputs"]) - set(action.OWN_INPUTS)
    assert step["env"] == {f"EMBDIAG_{n.upper().replace('-', '_')}": f"${{{{ inputs.{n} }}}}" for n in inputs}
    assert step["run"] == "python -m embdiag.report.action" and "${{" not in step["run"]  # nothing pasted into bash
    assert ACTION["runs"]["using"] == "composite" and ACTION["inputs"]["vectors"]["required"] is True


@pytest.mark.parametrize(
    "env, message",
    [
        ({}, "^vectors: the action needs"),
        ({"EMBDIAG_VECTORS": "v", "EMBDIAG_QUICK": "yes"}, "^quick: expected true or false"),
    ],
)
def test_bad_inputs_are_named(env, message):
    with pytest.raises(ValueError, match=message):
        action.arguments(env)


def test_the_readme_shows_a_workflow_using_the_action():
    text = (REPO / "README.md").read_text()
    block = re.search(r"## A CI gate: the GitHub Action\n.*?```yaml\n(.*?)```", text, re.S)
    assert block, "README: the section and its workflow"
    workflow = yaml.safe_load(block.group(1))
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    used = next(s for s in steps if "embdiag" in s.get("uses", ""))
    assert set(used["with"]) <= set(ACTION["inputs"]) and "vectors" in used["with"]
    assert all(r.strip() for r in used["with"]["fail-if"].splitlines())


def test_the_readme_lists_every_input_of_the_action():
    text = " ".join((REPO / "README.md").read_text().split())
    listed = re.search(r"Its inputs are the command's \((.*?)\), with `fail-if` one rule per line", text)
    assert listed, "README: the sentence listing the Action's inputs"
    named = re.findall(r"`([a-z-]+)`", listed.group(1).split(";")[0]) + ["fail-if"]
    assert sorted(named) == sorted(o.input for o in in_action())
    left_out = {o.flag for o in OPTIONS if o.flag is not None and o.action is None}
    assert set(re.findall(r"`(--[a-z-]+)`", listed.group(1))) == left_out


@pytest.mark.slow
def test_the_action_runs_the_report_and_its_status_is_the_gate(tmp_path):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 400)
    np.save(tmp_path / "v.npy", (2 * rng.standard_normal((3, 16))[y] + rng.standard_normal((400, 16))).astype("f4"))
    pd.DataFrame({"cls": [f"c{v}" for v in y]}).to_csv(tmp_path / "l.csv", index=False)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "EMBDIAG_VECTORS": "v.npy",
        "EMBDIAG_LABELS": "l.csv",
        "EMBDIAG_COMPRESS": "int8,prefix4",
        "EMBDIAG_K": "5",
        "EMBDIAG_QUICK": "true",
        "EMBDIAG_FAIL_IF": "overlap@5[int8]<0.5\noverlap@5[prefix4]<0.99",
        "EMBDIAG_OUT": "gate",
    }
    run = subprocess.run([sys.executable, "-m", "embdiag.report.action"], env=env, cwd=tmp_path, capture_output=True)
    assert run.returncode == exits.VIOLATED, run.stderr.decode()[-2000:]
    assert (
        "violates overlap@5[prefix4]<0.99" in run.stdout.decode()
        and "[int8]" not in run.stdout.decode().split("violated")[1]
    )
    assert (tmp_path / "gate" / "report.html").is_file() and (tmp_path / "gate" / "report.json").is_file()
