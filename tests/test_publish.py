"""Publishing the website: `make publish` (ghp-import onto gh-pages) and the Pages workflow.

`make publish` runs in a scratch git repository holding the project's Makefile, with a bare
repository as its `origin`; the installed ghp-import does the work (the venv stamp is marked
up to date with `make -o`, so nothing is installed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from embdiag.paper.pipeline import REPO

BUILD = "book/_build/html"
GIT = ["git", "-c", "user.name=embdiag", "-c", "user.email=embdiag@localhost", "-c", "init.defaultBranch=main"]


def _makefile_var(name: str) -> str:
    return re.search(rf"^{name} [?:]?= (.+)$", (REPO / "Makefile").read_text(), re.M).group(1).strip()


@pytest.fixture
def checkout(tmp_path) -> Path:
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    subprocess.run([*GIT, "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run([*GIT, "init", "-q", str(work)], check=True)
    shutil.copy(REPO / "Makefile", work / "Makefile")
    subprocess.run([*GIT, "add", "Makefile"], cwd=work, check=True)
    subprocess.run([*GIT, "commit", "-qm", "source"], cwd=work, check=True)
    subprocess.run([*GIT, "remote", "add", "origin", str(remote)], cwd=work, check=True)
    return work


def _publish(work: Path) -> subprocess.CompletedProcess:
    stamp = f"{_makefile_var('VENV')}/.embdiag-installed"
    return subprocess.run(
        ["make", "-o", stamp, "publish", f"GHP_IMPORT={sys.executable} -m ghp_import"],
        cwd=work,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "embdiag",
            "GIT_AUTHOR_EMAIL": "embdiag@localhost",
            "GIT_COMMITTER_NAME": "embdiag",
            "GIT_COMMITTER_EMAIL": "embdiag@localhost",
        },
    )


def _remote_files(work: Path) -> set[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(work.parent / "remote.git"), "ls-tree", "-r", "--name-only", "gh-pages"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


def test_publish_refuses_without_a_build(checkout):
    done = _publish(checkout)
    assert done.returncode != 0
    assert f"no built book at {BUILD}/" in done.stderr and "make book" in done.stderr
    assert not (checkout / ".venv").exists(), "publish installed or built something before refusing"


def test_publish_pushes_the_last_build_onto_gh_pages(checkout):
    html = checkout / BUILD
    (html / "_static").mkdir(parents=True)
    (html / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=intro.html" />')
    (html / "intro.html").write_text("<p>the book</p>")
    (html / "_static" / "embdiag.css").write_text("p {}")
    done = _publish(checkout)
    assert done.returncode == 0, done.stderr
    assert _remote_files(checkout) == {".nojekyll", "index.html", "intro.html", "_static/embdiag.css"}
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True, check=True
    ).stdout.strip()
    log = subprocess.run(
        ["git", "--git-dir", str(checkout.parent / "remote.git"), "log", "--format=%s", "gh-pages"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert log.strip() == f"Publish the book built from {head}"

    (html / "intro.html").unlink()  # the next build replaces the branch's content (-f: history too)
    assert _publish(checkout).returncode == 0
    assert _remote_files(checkout) == {".nojekyll", "index.html", "_static/embdiag.css"}


def test_pages_workflow_builds_with_make_book_and_deploys_the_same_folder():
    wf = yaml.safe_load((REPO / ".github" / "workflows" / "pages.yml").read_text())
    trigger = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as true
    assert trigger["push"]["branches"] == ["main"]
    assert wf["concurrency"]["group"] == "pages"
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    assert any(step.get("run") == "make book" for step in build["steps"])
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == BUILD == _makefile_var("HTML")
    assert deploy["needs"] == "build"
    assert {"pages": "write", "id-token": "write"}.items() <= deploy["permissions"].items()
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in deploy["steps"])
    assert "pages" not in wf.get("permissions", {}), "only the deploy job may write to Pages"


def test_readme_documents_both_routes():
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Publishing") :]
    section = section[: section.index("\n## ", 1)]
    for needle in ("make publish", "ghp-import", ".github/workflows/pages.yml", BUILD):
        assert needle in section, needle
