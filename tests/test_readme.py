"""The README's quickstart runs as printed, on vectors whose answers are known."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from embdiag.paper.pipeline import REPO
from embdiag.synthetic import labelled_clusters


def quickstart() -> str:
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Quickstart") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
def test_quickstart_runs_and_reports_every_condition(tmp_path):
    train, y_train = labelled_clusters(600, d=300, seed=1)
    val, y_val = labelled_clusters(300, d=300, seed=2)
    for name, array in {"train": train, "val": val, "y_train": y_train["weather"], "y_val": y_val["weather"]}.items():
        np.save(tmp_path / f"{name}.npy", array)
    out = subprocess.run(
        [sys.executable, "-c", quickstart()], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert re.search(r"^native RankMe [\d.]+ BA 0\.\d{3}$", out, re.M)
    assert re.search(r"^PCA-256 RankMe [\d.]+ BA 0\.\d{3}$", out, re.M)
    assert re.search(r"^ΔP@10 PCA-256: [+-]\d+\.\d\d pp \[[+-]\d+\.\d\d, [+-]\d+\.\d\d\]$", out, re.M)
    assert "native reference | changed top-10: 0 | ΔP@10 pp: 0.0" in out
    assert "INT8 gallery | changed top-10:" in out


def test_readme_chapter_commands_name_real_chapters_and_parameters():
    """Every `embdiag chapter NAME -p KEY VALUE` in the README, the chapter sources and the
    book's own pages names a chapter (or declared variant) and parameters that chapter has."""
    from embdiag.paper import pipeline

    sources = [REPO / "README.md", *sorted((REPO / "notebooks").glob("*.py")), *sorted((REPO / "book").glob("*.md"))]
    text = "\n".join(p.read_text() for p in sources)
    commands = re.findall(r"embdiag chapter ([A-Za-z0-9_]+)((?: -p \S+ (?:'[^']*'|\S+))*)", text)
    assert len(commands) >= 5
    for name, params in commands:
        if name in pipeline.variants():
            continue
        known = pipeline.parameters(name)  # raises on an unknown chapter
        for key in re.findall(r"-p (\S+)", params):
            assert key in known, f"README: chapter {name} has no parameter {key!r}"


def test_readme_report_command_parses():
    """The README's `embdiag report` example uses options the command has, with valid specs."""
    import shlex

    from embdiag.report import cli, conditions, fail_if

    text = (REPO / "README.md").read_text()
    block = re.search(r"```bash\n(\.venv/bin/embdiag report .*?)```", text, re.S).group(1)
    argv = shlex.split(block.replace("\\\n", " "))[2:]
    args = cli.build_parser().parse_args(argv)
    assert args.vectors == "vectors.npy" and args.out == "report/"
    conditions.parse_compress(args.compress, 768)
    conditions.parse_index(args.index, 100_000, 768)
    assert [fail_if.parse(rule).metric for rule in args.fail_if] == ["overlap@10", "delta_p@10"]
