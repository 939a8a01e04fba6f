"""``embdiag report`` and ``embdiag chapter`` under generated command lines and input files (issue
#30): whatever the files and options, the status is 0, 1 or 2 (embdiag.exits), 1 only from a
``--fail-if`` rule, never a traceback, and a refused command leaves ``--out`` as it was. The
report's chapter is replaced by a stand-in (every input check runs before it); the chapters'
parameter checks run for real."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings, strategies as st

from embdiag import exits
from embdiag.paper import pipeline
from embdiag.report import cli

from test_cli import METRICS, fake_chapter  # tests/report is on the path (rootdir-relative, no package)

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
        with mock.patch.object(cli, "run_chapter", fake_chapter(METRICS)), contextlib.redirect_stderr(err):
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
