"""pyproject.toml's ranges, constraints.txt's exact versions, and the two installs that use them (the Makefile's
and environment.yml's) agree."""

import re
import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from embdiag.paper.pipeline import REPO

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def requirements(*extras: str) -> list[Requirement]:
    """The base dependencies (no ``extras``) or those of the named extras, without embdiag's own."""
    lines = PROJECT["dependencies"] if not extras else [r for e in extras for r in PROJECT["optional-dependencies"][e]]
    return [Requirement(r) for r in lines if not r.startswith("embdiag")]


def constraints() -> dict[str, Version]:
    """constraints.txt as {canonical name: exact version}."""
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and re.fullmatch(r"[A-Za-z0-9._-]+", name), f"constraints.txt: not name==version: {line!r}"
            pins[canonicalize_name(name)] = Version(version)
    return pins


def test_every_direct_dependency_is_pinned_inside_its_range():
    pins = constraints()
    for req in requirements() + requirements(*PROJECT["optional-dependencies"]):
        name = canonicalize_name(req.name)
        assert name in pins, f"{req}: not in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), f"{req}: constraints.txt pins {pins[name]}"


def test_base_dependencies_are_ranges_up_to_the_next_major():
    pins = constraints()
    for req in requirements():
        ops = {s.operator: Version(s.version) for s in req.specifier}
        assert set(ops) == {">=", "<"}, f"{req}: a range, >= lower, < upper"
        pinned = pins[canonicalize_name(req.name)]
        assert ops["<"] == Version(str(pinned.major + 1)), f"{req}: the upper bound is the major after {pinned}"


def test_torch_is_the_cpu_wheel_version():
    """torch==2.13.0 resolves to the local CPU wheel on the project's machines (a local label would not)."""
    assert str(constraints()["torch"]) == "2.13.0"


def test_make_and_conda_install_with_the_constraints():
    makefile = (REPO / "Makefile").read_text()
    assert "pip install --quiet -e '.[test]' -c constraints.txt" in makefile
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip == ["-c constraints.txt", "-e .[test]"]
