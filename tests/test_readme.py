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


def write_digits_like(folder, n: int = 900, d: int = 384, seed: int = 0):
    """A user trial's files: n x d float32 vectors around ten 'digit' centres, labels ``digit``,
    ``parity`` (a few missing) and a ``split`` column (train / test)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    digit = rng.integers(0, 10, n)
    X = (3.0 * rng.standard_normal((10, d))[digit] + rng.standard_normal((n, d))).astype(np.float32)
    np.save(folder / "vectors.npy", X)
    parity = np.where(digit % 2, "odd", "even").astype(object)
    parity[::50] = ""
    pd.DataFrame(
        {"digit": digit.astype(str), "parity": parity, "split": np.where(rng.random(n) < 0.7, "train", "test")}
    ).to_csv(folder / "labels.csv", index=False)


@pytest.mark.slow
def test_readme_report_command_runs_as_printed_on_384_d_vectors_with_other_labels(tmp_path, monkeypatch):
    """The README's `embdiag report` example, as printed, on a user's 384-d vectors with labels that are
    not the study's (digit, parity, a split column): written, every condition summarized, gates recorded."""
    import json
    import shlex

    from embdiag.report import cli

    text = (REPO / "README.md").read_text()
    block = re.search(r"```bash\n(\.venv/bin/embdiag report .*?)```", text, re.S).group(1)
    argv = shlex.split(block.replace("\\\n", " "))[2:]
    write_digits_like(tmp_path)
    monkeypatch.chdir(tmp_path)
    code = cli.main(argv, progress=False)
    assert code in (cli.OK, cli.VIOLATED)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert [e["condition"] for e in report["summary"]] == ["fp16", "int8", "pca256", "prefix256", "hnsw", "ivfpq"]
    assert all(e["verdict"] for e in report["summary"])
    assert report["inputs"]["label_columns"] == ["digit", "parity"]
    assert report["inputs"]["missing_labels"] == {"digit": 0, "parity": 18}
    assert {g["rule"] for g in report["gates"]} == {"overlap@10<0.95", "delta_p@10<-1"}
    assert (code == cli.VIOLATED) == (not all(g["passed"] for g in report["gates"]))
    assert {r["attribute"] for r in report["metrics"] if r["section"] == "geometry"} == {"raw", "unit"}


@pytest.mark.slow
def test_readme_chapter_command_on_own_vectors_runs_as_printed(tmp_path, monkeypatch):
    """The README's own-vectors chapter example, as printed, on a user's 384-d vectors with labels
    that are not the study's: the page is written under --out and the book is left alone."""
    import shlex

    from embdiag.paper.cli import main

    text = (REPO / "README.md").read_text()
    line = re.search(
        r"^\.venv/bin/embdiag chapter \S+ -p vectors_path vectors\.npy -p labels_path labels\.csv.*$", text, re.M
    ).group(0)
    argv = shlex.split(line.split("#")[0])[1:]
    write_digits_like(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = {p.name: p.read_bytes() for p in (REPO / "book" / "chapters").glob("*.ipynb")}
    assert main(argv) == 0
    out = tmp_path / argv[argv.index("--out") + 1]
    assert sorted(p.suffix for p in out.iterdir()) == [".html", ".ipynb"]
    assert "384-d" in next(out.glob("*.html")).read_text()
    assert {p.name: p.read_bytes() for p in (REPO / "book" / "chapters").glob("*.ipynb")} == before
