"""environment.yml mirrors pyproject.toml's pins."""

import tomllib

import yaml

from embdiag.paper.pipeline import REPO


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = set(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        pins |= {p for p in extra if not p.startswith("embdiag")}
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert set(pip) - {"-e ."} == pins
    assert all("==" in p for p in pins), "every dependency is pinned exactly"
