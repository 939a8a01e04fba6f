"""``embdiag report``, ``embdiag chapter`` and ``embdiag vectors`` under generated command lines
and input files (issue #30): whatever the files and options, the status is 0, 1 or 2
(embdiag.exits), 1 only from a ``--fail-if`` rule, never a traceback, and a refused command leaves
``--out`` as it was. The report's chapter is replaced by a stand-in (every input check runs before
it); the chapters' parameter checks run for real, and so do whole chapters (slow: executed end to
end on generated files, the committed pages checked unchanged) and ``vectors``."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from embdiag import exits
from embdiag.paper import pipeline
from embdiag.report import cli

from test_cli import METRICS, fake_report  # tests/report is on the path (rootdir-relative, no package)

N, D = 30, 4

#: Per input, the values a user means to give and the ones that are wrong; a command line draws
#: up to two inputs from the wrong ones and the rest from the right ones, so every fault is met
#: next to otherwise valid input (where it is not hidden behind an earlier refusal).
GOOD = {
    "vectors": ["float32", "float64", "int32", "zero row", "tiny 1e-30", "huge 1e30"],
    "labels": [None, "valid", "blank cells", "one class"],
    "pairs": [None, "valid"],
    "compress": ["", "fp16", "int8", "fp16,int8", "pca2", "prefix2", "upca2"],
    "index": ["", "hnsw"],
    "rule": [None, "overlap@10<0.5", "overlap@10>2", "rankme<=1"],
    "k": [None, "1", "5", "29"],
    "out": ["new", "nested new", "a report"],
    "stress": [False, True],
}
BAD = {
    "vectors": ["truncated", "1-D", "3-D", "object", "nan row", "inf value", "no rows", "text", "missing", "folder"],
    "labels": ["short", "bad split", "empty", "garbage"],
    "pairs": ["out of range", "not integers", "empty"],
    "compress": ["pca0", "pca99", "fp16,fp16", "bogus", "pca-1", ",", "prefix", "int8,"],
    "index": ["bogus", "hnsw,hnsw", "ivfpq,"],
    "rule": ["bogus", "probe_ba[weather]<0.5", "overlap@10<", "[x]", "overlap@10<0.5[int9]"],
    "k": ["0", "-3", "30", "abc", "2.5"],
    "out": ["a file", "inside a file", "a folder that is not a report"],
    "stress": [],
}


@st.composite
def command_lines(draw) -> dict:
    wrong = draw(st.sets(st.sampled_from([name for name in BAD if BAD[name]]), max_size=2))
    return {name: draw(st.sampled_from(BAD[name] if name in wrong else GOOD[name])) for name in GOOD}


def _write_vectors(path: Path, kind: str) -> Path:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, D)).astype(np.float32)
    if kind == "missing":
        return path
    if kind == "folder":
        path.mkdir()
        return path
    if kind == "text":
        path.write_text("1,2,3\n")
        return path
    arrays = {
        "float32": X,
        "float64": X.astype(np.float64),
        "int32": (X * 10).astype(np.int32),
        "1-D": X[:, 0],
        "3-D": X.reshape(N, 2, 2),
        "nan row": np.where(np.arange(N)[:, None] == 3, np.nan, X),
        "inf value": np.where((np.arange(N)[:, None] == 2) & (np.arange(D) == 1), np.inf, X),
        "zero row": np.where(np.arange(N)[:, None] == 5, 0.0, X).astype(np.float32),
        "no rows": X[:0],
        "tiny 1e-30": X * np.float32(1e-30),
        "huge 1e30": X * np.float32(1e30),
    }
    if kind == "object":
        np.save(path, np.array([[object()] * D] * N, dtype=object), allow_pickle=True)
    elif kind == "truncated":
        np.save(path, X)
        path.write_bytes(path.read_bytes()[:100])
    else:
        np.save(path, arrays[kind])
    return path


def _write_labels(path: Path, kind: str) -> Path:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {"id": np.arange(N), "split": np.where(np.arange(N) < 20, "train", "val"), "weather": rng.choice(["a", "b"], N)}
    )
    if kind == "short":
        frame = frame.iloc[:10]
    elif kind == "blank cells":
        frame.loc[::3, "weather"] = None
    elif kind == "bad split":
        frame["split"] = "sometimes"
    elif kind == "one class":
        frame["weather"] = "a"
    if kind == "empty":
        path.write_text("")
    elif kind == "garbage":
        path.write_bytes(b"\x00\xff\xfe" * 10)
    else:
        frame.to_csv(path, index=False)
    return path


def _write_pairs(path: Path, kind: str) -> Path:
    rows = {
        "valid": [(i, (i + 1) % N) for i in range(N)],
        "out of range": [(0, N + 5)],
        "not integers": [("a", "b")],
        "empty": [],
    }[kind]
    pd.DataFrame(rows, columns=["query", "target"]).to_csv(path, index=False)
    return path


def _out(root: Path, kind: str) -> Path:
    if kind == "new":
        return root / "report"
    if kind == "nested new":
        return root / "a" / "b" / "report"
    if kind in ("a file", "inside a file"):
        (root / "file").write_text("mine")
        return root / "file" if kind == "a file" else root / "file" / "report"
    out = root / "existing"
    out.mkdir()
    (out / ("report.json" if kind == "a report" else "thesis.tex")).write_text("{}")
    return out


def _state(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command_lines())
def test_report_exits_0_1_or_2_without_a_traceback_and_a_refusal_writes_nothing(line):
    vectors, labels, pairs, compress, index = (line[n] for n in ("vectors", "labels", "pairs", "compress", "index"))
    rule, k, out_kind, stress = line["rule"], line["k"], line["out"], line["stress"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        argv = [str(_write_vectors(root / "v.npy", vectors))]
        if labels:
            argv += ["--labels", str(_write_labels(root / "labels.csv", labels))]
        if pairs:
            argv += ["--pairs", str(_write_pairs(root / "pairs.csv", pairs))]
        argv += ["--compress", compress] if compress else []
        argv += ["--index", index] if index else []
        argv += ["--fail-if", rule] if rule else []
        argv += ["--k", k] if k else []
        argv += ["--stress"] if stress else []
        out = _out(root, out_kind)
        argv += ["--out", str(out)]
        before = _state(root)
        err = io.StringIO()
        with mock.patch.object(cli, "write_report", fake_report(METRICS)), contextlib.redirect_stderr(err):
            status = exits.guarded(lambda: cli.main(argv, progress=False))
        text = err.getvalue()
        assert status in (exits.OK, exits.VIOLATED, exits.BAD_INPUT), f"{argv}: exit {status}\n{text}"
        assert "Traceback" not in text, f"{argv}:\n{text}"
        if status == exits.BAD_INPUT:
            assert text.strip(), f"{argv}: refused without saying why"
            assert _state(root) == before, f"{argv}: a refused command changed files"
            assert not list(root.rglob(".*tmp-*")), f"{argv}: a half-written folder is left"
        else:
            assert (out / "report.html").is_file()
        if status == exits.VIOLATED:
            assert rule is not None, f"{argv}: exit 1 without a --fail-if rule"


PARAMETER_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.lists(st.integers(0, 5), max_size=3),
    st.sampled_from(["/", "/no/such/file.npy", ".", "README.md", "data"]),
)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["stress_tests", "compression", "neighbour_stability", "caption_retrieval", "rank_diagnostics"]),
    st.dictionaries(
        st.sampled_from(["k", "seed", "vectors_path", "labels_path", "dims", "n", "attribute", "severities", "nope"]),
        PARAMETER_VALUES,
        max_size=3,
    ),
)
def test_chapter_parameters_are_accepted_or_refused_by_name_never_crash(chapter, values):
    try:
        checked = pipeline.check_parameters(chapter, values)
    except pipeline.ChapterInputError as e:
        assert str(e), values
    else:
        assert set(checked) == set(values)


def _chapter_labels(path: Path, kind: str, n: int) -> Path:
    """Labels for a chapter's ``labels_path``: a ``split`` column and two attributes."""
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(
        {
            "split": np.where(np.arange(n) < 2 * n // 3, "train", "val"),
            "weather": rng.choice(["a", "b", "c"], n),
            "scene": rng.choice(["x", "y"], n),
        }
    )
    if kind == "no split":
        frame = frame.drop(columns="split")
    elif kind == "one class":
        frame["weather"] = "a"
    elif kind == "short":
        frame = frame.iloc[: n // 2]
    if kind == "garbage":
        path.write_bytes(b"\x00\xff\xfe" * 10)
    else:
        frame.to_csv(path, index=False)
    return path


def _pages():
    return _state(pipeline.DEFAULT.chapters)


@pytest.fixture(scope="module")
def committed_pages():
    before = _pages()
    yield
    assert _pages() == before, "a fuzzed chapter changed a committed page"


#: A chapter run draws at most one input from the wrong ones (as the report's command lines do).
CHAPTER_GOOD = {
    "vectors": ["150 rows", "150 rows float64", "150 rows x 1e30"],
    "labels": ["valid"],
    "k": [None, "5"],
    "out": ["new", "a report"],
}
CHAPTER_BAD = {
    "vectors": ["float32", "truncated", "1-D", "nan row", "zero row", "text", "folder", "missing"],
    "labels": ["no split", "one class", "short", "garbage"],
    "k": ["0", "500", "abc"],
    "out": ["a file", "inside a file"],
}


@st.composite
def chapter_runs(draw) -> dict:
    wrong = draw(st.sets(st.sampled_from(sorted(CHAPTER_BAD)), max_size=1))
    line = {n: draw(st.sampled_from(CHAPTER_BAD[n] if n in wrong else CHAPTER_GOOD[n])) for n in CHAPTER_GOOD}
    line["chapter"] = draw(st.sampled_from(["stress_tests", "compression", "neighbour_stability", "rank_diagnostics"]))
    return line


@pytest.mark.slow
@settings(
    max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(chapter_runs())
def test_a_chapter_run_end_to_end_exits_0_or_2_and_a_refusal_writes_nothing(committed_pages, line):
    """``embdiag chapter NAME -p vectors_path ... --out DIR --no-build``, executed for real."""
    from embdiag.paper.cli import main

    chapter, vectors, labels, k, out = (line[n] for n in ("chapter", "vectors", "labels", "k", "out"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "v.npy"
        n = 150 if vectors.startswith("150 rows") else N
        if n == 150:
            X = np.random.default_rng(0).normal(size=(n, 8))
            kinds = {"150 rows": X.astype(np.float32), "150 rows float64": X, "150 rows x 1e30": X * 1e30}
            np.save(path, kinds[vectors])
        else:
            _write_vectors(path, vectors)
        argv = ["chapter", chapter, "-p", "vectors_path", str(path)]
        if chapter != "rank_diagnostics":
            argv += ["-p", "labels_path", str(_chapter_labels(root / "labels.csv", labels, n))]
        argv += ["-p", "k", k] if k and chapter != "rank_diagnostics" else []
        target = _out(root, out)
        argv += ["--out", str(target), "--no-build"]
        before = _state(root)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = main(argv)
        text = err.getvalue()
        event(f"exit {status}")  # --hypothesis-show-statistics: how many ran through
        assert status in (exits.OK, exits.BAD_INPUT), f"{argv}: exit {status}\n{text[-3000:]}"
        assert "Traceback" not in text, f"{argv}:\n{text[-3000:]}"
        if status == exits.BAD_INPUT:
            assert text.strip(), f"{argv}: refused without saying why"
            assert _state(root) == before, f"{argv}: a refused chapter changed files"
            assert not list(root.rglob(".*tmp-*")), f"{argv}: a half-written folder is left"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    encoder=st.sampled_from(["reference-cnn", "reference-vit", "bogus", "", "hf:nobody/nothing@main", "wordllama"]),
    dataset=st.sampled_from(["procedural", "wordnet", "imagenet"]),
    out=st.sampled_from(["new", "nested new", "a file", "inside a file", "a folder that is not a report"]),
)
def test_vectors_exits_0_or_2_and_writes_both_files_or_nothing(encoder, dataset, out):
    from embdiag.paper.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        target = _out(root, out)
        before = _state(root)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                status = main(["vectors", "--encoder", encoder, "--dataset", dataset, "--out", str(target)])
            except SystemExit as e:  # argparse refuses a --dataset outside its choices
                status = e.code
        text = err.getvalue()
        assert status in (exits.OK, exits.BAD_INPUT), f"{encoder} {dataset} {out}: exit {status}\n{text[-3000:]}"
        assert "Traceback" not in text, text[-3000:]
        if status == exits.OK:
            assert {"vectors.npy", "labels.csv"} <= {p.name for p in target.iterdir()}
        else:
            assert text.strip() and _state(root) == before, f"{encoder} {dataset} {out}: {text}"
        assert not list(root.rglob(".*tmp-*")), "a half-written file is left"
