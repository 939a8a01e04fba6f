"""embdiag report: arguments, input checks, the in-process measurement, outputs and exit codes.

Most tests replace :func:`cli.write_report` by a function that writes what a report writes; the
end-to-end tests measure for real, in this process (no kernel).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from embdiag import _atomic
from embdiag.data.files import InputError
from embdiag.paper import cli as paper_cli
from embdiag.paper.pipeline import REPO
from embdiag.report import cli, measurement
from embdiag.report.options import ReportOptions


@pytest.fixture
def vectors(tmp_path) -> Path:
    X = np.random.default_rng(0).normal(size=(30, 4)).astype(np.float32)
    X[0, 0] = 0.5
    path = tmp_path / "emb.npy"
    np.save(path, X)
    return path


def fake_report(metrics: list[dict], calls: list | None = None):
    """A stand-in for write_report: writes report.json with ``metrics``, a CSV and a page."""

    def write(options, folder, *, progress=True):
        if calls is not None:
            calls.append((options, folder))
        (folder / "report.json").write_text(json.dumps({"metrics": metrics}))
        pd.DataFrame(metrics).to_csv(folder / "metrics.csv", index=False)
        (folder / "report.html").write_text("fake <strong>report</strong>")

    return write


METRICS = [
    {"section": "identity", "metric": "overlap@10", "condition": "int8", "attribute": None, "value": 0.9},
    {"section": "identity", "metric": "overlap@10", "condition": "fp16", "attribute": None, "value": 1.0},
    {"section": "relevance", "metric": "delta_p@10", "condition": "int8", "attribute": "weather", "value": None},
]


@pytest.fixture
def fake(monkeypatch):
    calls = []
    monkeypatch.setattr(cli, "write_report", fake_report(METRICS, calls))
    return calls


def no_report(*args, **kwargs):
    raise AssertionError("nothing must be measured")


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


# -- end to end with a kernel ----------------------------------------------------------------
def test_end_to_end_in_this_process(tmp_path, vectors, capsys):
    labels = tmp_path / "labels.csv"
    labels.write_text("id,weather\n" + "".join(f"item{i},{'sun' if i % 2 else 'rain'}\n" for i in range(30)))
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("query,target\nitem0,item1\nitem0,item2\nitem5,item7\n")
    out = tmp_path / "reports" / "run1"
    args = [
        *(str(vectors), "--labels", str(labels), "--pairs", str(pairs), "--k", "5", "--quick", "--seed", "3"),
        *("--compress", "int8", "--fail-if", "overlap@5<0.1", "--fail-if", "total_variance[reference,raw]<0"),
        *("--out", str(out)),
    ]
    code = cli.main(args)
    captured = capsys.readouterr()
    assert code == cli.OK, captured.err
    assert captured.out.splitlines() == [
        str(out / "report.html"),
        "smallest condition passing every rule: int8 (8 bytes per vector, 2 times smaller than VECTORS as float32)",
    ]
    assert "measuring ..." in captured.err and "wrote " in captured.err

    assert {"report.html", "report.json", "identity.csv", "geometry.csv"} <= {p.name for p in out.iterdir()}
    assert leftovers(out.parent) == []
    report = json.loads((out / "report.json").read_text())
    assert report["inputs"]["files"]["VECTORS"]["path"] == str(vectors.resolve())
    assert (report["inputs"]["k"], report["inputs"]["quick"], report["inputs"]["seed"]) == (5, True, 3)
    assert report["inputs"]["options"]["compress"] == "int8"
    want = measurement.measure(
        **cli.read_inputs(vectors, labels=labels, pairs=pairs),
        compress="int8",
        k=5,
        quick=True,
        seed=3,
        progress=False,
    ).metrics
    got = pd.DataFrame(report["metrics"])
    np.testing.assert_allclose(got["value"].astype(float), want["value"], rtol=0, atol=0)

    page = (out / "report.html").read_text()
    assert "<title>embdiag report: emb.npy</title>" in page
    assert "embdiag report " + str(vectors) + " --labels" in page and "--fail-if 'overlap@5&lt;0.1'" in page
    assert page.index('class="embdiag-result"') < page.index("embdiag report " + str(vectors))  # the answer first
    assert page.index("Distribution: geometry without labels") < page.index("Neighbour identity")
    assert page.count("window.vegaEmbed=") == 1 and not re.search(r"""(src|href)=["']https?:""", page)


def test_an_input_error_while_measuring_exits_2_and_leaves_out_alone(tmp_path, vectors, monkeypatch, capsys):
    monkeypatch.setattr(measurement, "measure", _raise(InputError("labels.csv (--labels): too little support")))
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text("previous")
    assert cli.main([str(vectors), "--out", str(out)]) == cli.BAD_INPUT
    err = capsys.readouterr().err
    assert "embdiag report: labels.csv (--labels): too little support" in err and "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == ["report.json"] and (out / "report.json").read_text() == "previous"
    assert leftovers(tmp_path) == []


def test_a_failing_measurement_exits_3_with_its_traceback(tmp_path, vectors, monkeypatch, capsys):
    monkeypatch.setattr(measurement, "measure", lambda *a, **k: 1 / 0)
    out = tmp_path / "out"
    assert cli.main([str(vectors), "--out", str(out)]) == cli.FAILED
    err = capsys.readouterr().err
    assert "Traceback" in err and "embdiag report: the measurement failed: ZeroDivisionError: division by zero" in err
    assert not out.exists() and leftovers(tmp_path) == []


# -- after the chapter: fail-if, outputs, replacement -------------------------------------------
@pytest.fixture
def weather(tmp_path) -> list[str]:
    """``--labels`` with a weather column and ``--compress fp16,int8``: the inputs METRICS' rules name."""
    path = tmp_path / "weather.csv"
    path.write_text("weather\n" + "sun\nrain\n" * 15)
    return ["--labels", str(path), "--compress", "fp16,int8"]


def test_violations_exit_1_and_are_listed_but_the_report_is_written(tmp_path, vectors, weather, fake, capsys):
    out = tmp_path / "out"
    code = cli.main(
        [
            str(vectors),
            *weather,
            "--fail-if",
            "overlap@10<0.95",
            "--fail-if",
            "delta_p@10[weather]<-1",
            "--fail-if",
            "overlap@10[fp16]<0.95",
            "--out",
            str(out),
        ]
    )
    assert code == cli.VIOLATED
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        str(out / "report.html"),
        "--fail-if violated: overlap@10 (condition int8) = 0.9: violates overlap@10<0.95",
        "--fail-if violated: delta_p@10 (condition int8, attribute weather) = NaN (undefined: cannot be checked, "
        "counts as a violation): violates delta_p@10[weather]<-1",
    ]
    assert sorted(p.name for p in out.iterdir()) == ["metrics.csv", "report.html", "report.json"]
    assert "fake <strong>report</strong>" in (out / "report.html").read_text()


def test_no_rule_or_rules_that_hold_exit_0(tmp_path, vectors, weather, fake, capsys):
    assert cli.main([str(vectors), "--out", str(tmp_path / "a")]) == cli.OK
    assert cli.main([str(vectors), *weather, "--fail-if", "overlap@10<0.5", "--out", str(tmp_path / "b")]) == cli.OK
    assert "violated" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "rule, message",
    [
        (
            "overlap@5<0.9",
            "the report has no metric 'overlap@5'; its metrics are: abnormal_norms, antihub_overlap@10, "
            "antihub_share, bytes_per_vector, cert_coverage, cert_violations, changed_queries, ",
        ),
        ("ovrlap@10<0.9", "the report has no metric 'ovrlap@10'"),
        (
            "delta_p@10[wether]<-1",
            "'delta_p@10' has no condition or attribute 'wether'; its conditions and attributes "
            "are: fp16, int8, weather",
        ),
        (
            "overlap@10[pca64]<0.9",
            "'overlap@10' has no condition or attribute 'pca64'; its conditions and attributes are: fp16, int8",
        ),
        ("probe_ba[split]<0.5", "'probe_ba' has no condition or attribute 'split'"),  # split is never an attribute
    ],
)
def test_a_rule_naming_what_the_report_will_not_have_exits_2_before_anything_is_measured(
    tmp_path, vectors, weather, monkeypatch, capsys, rule, message
):
    """Issue #25, point 5: metric, attribute and condition names are checked before the chapter runs."""
    monkeypatch.setattr(cli, "write_report", no_report)
    labels = tmp_path / "weather.csv"
    labels.write_text("weather,split\n" + "sun,train\nrain,val\n" * 15)
    out = tmp_path / "out"
    assert cli.main([str(vectors), *weather, "--fail-if", rule, "--out", str(out)]) == cli.BAD_INPUT
    assert f"--fail-if {rule!r}: {message}" in capsys.readouterr().err
    assert not out.exists()


def test_a_malformed_rule_exits_2_before_anything_runs(tmp_path, vectors, monkeypatch, capsys):
    monkeypatch.setattr(cli, "write_report", no_report)
    assert cli.main([str(vectors), "--fail-if", "overlap@10 < ninety", "--out", str(tmp_path / "o")]) == cli.BAD_INPUT
    assert "--fail-if 'overlap@10 < ninety': expected NAME[QUALIFIER] OP NUMBER" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_the_options_reach_the_report(tmp_path, vectors, fake):
    compare = tmp_path / "v2.npy"
    np.save(compare, np.ones((30, 7), np.float32))
    queries = tmp_path / "q.npy"
    np.save(queries, np.ones((5, 4), np.float32))
    labels = tmp_path / "labels.csv"
    labels.write_text("a\n" + "x\ny\n" * 15)
    args = [str(vectors), "--compare", str(compare), "--queries", str(queries), "--labels", str(labels), "--stress"]
    assert cli.main([*args, "--out", str(tmp_path / "o")]) == cli.OK
    ((options, folder),) = fake
    assert options == ReportOptions(
        vectors=str(vectors),
        compare=(str(compare),),
        queries=str(queries),
        labels=str(labels),
        stress=True,
        out=str(tmp_path / "o"),
    )
    assert folder.parent == tmp_path and folder.name.startswith(".o.tmp-")


def test_a_previous_report_is_replaced_whole(tmp_path, vectors, fake):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text("{}")
    (out / "old_table.csv").write_text("x\n")
    assert cli.main([str(vectors), "--out", str(out)]) == cli.OK
    assert sorted(p.name for p in out.iterdir()) == ["metrics.csv", "report.html", "report.json"]
    assert leftovers(tmp_path) == []


def test_a_folder_that_is_not_a_report_is_never_replaced(tmp_path, vectors, monkeypatch, capsys):
    monkeypatch.setattr(cli, "write_report", no_report)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    assert cli.main([str(vectors), "--out", str(out)]) == cli.BAD_INPUT
    assert "(--out): a folder that is not empty and holds no report.json" in capsys.readouterr().err
    assert (out / "thesis.tex").read_text() == "precious"
    (tmp_path / "file").write_text("")
    assert cli.main([str(vectors), "--out", str(tmp_path / "file")]) == cli.BAD_INPUT
    assert "(--out): exists and is not a folder" in capsys.readouterr().err


def test_an_out_inside_a_file_or_an_unwritable_folder_is_bad_input(tmp_path, vectors, monkeypatch, capsys):
    # Issue #30: --out <a regular file>/out was a FileExistsError traceback and exit 1, which a
    # CI job reads as a violated threshold.
    monkeypatch.setattr(cli, "write_report", no_report)
    (tmp_path / "file").write_text("kept")
    for out in (tmp_path / "file" / "out", tmp_path / "file" / "a" / "b"):
        assert cli.main([str(vectors), "--out", str(out)]) == cli.BAD_INPUT
        err = capsys.readouterr().err
        assert "(--out): " in err and "file" in err and "is a file, not a folder" in err
        assert "Traceback" not in err
    assert (tmp_path / "file").read_text() == "kept"
    locked = tmp_path / "locked"
    locked.mkdir()
    monkeypatch.setattr(_atomic.tempfile, "mkdtemp", _raise(PermissionError(13, "Permission denied")))
    assert cli.main([str(vectors), "--out", str(locked / "r")]) == cli.BAD_INPUT
    err = capsys.readouterr().err
    assert f"{locked / 'r'} (--out): cannot write in {locked}: Permission denied" in err
    assert leftovers(tmp_path) == [] and not (locked / "r").exists()


def _raise(error):
    def raising(*args, **kwargs):
        raise error

    return raising


def test_an_empty_existing_folder_and_missing_parents_are_fine(tmp_path, vectors, fake):
    (tmp_path / "empty").mkdir()
    assert cli.main([str(vectors), "--out", str(tmp_path / "empty")]) == cli.OK
    assert cli.main([str(vectors), "--out", str(tmp_path / "a" / "b" / "c")]) == cli.OK
    assert (tmp_path / "a" / "b" / "c" / "report.html").is_file()


def test_a_report_that_writes_no_report_json_exits_3(tmp_path, vectors, monkeypatch, capsys):
    monkeypatch.setattr(cli, "write_report", lambda *a, **k: None)
    assert cli.main([str(vectors), "--out", str(tmp_path / "o")]) == cli.FAILED
    assert "the report wrote no usable report.json" in capsys.readouterr().err
    assert not (tmp_path / "o").exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "content, message",
    [
        ("{}", "wrote no usable report.json (KeyError"),
        ("not json", "wrote no usable report.json (JSONDecodeError"),
        ('{"metrics": [{"metric": "m"}]}', "metrics records lack value"),
    ],
)
def test_an_unusable_report_json_exits_3(tmp_path, vectors, monkeypatch, capsys, content, message):
    def write(options, folder, *, progress=True):
        (folder / "report.json").write_text(content)

    monkeypatch.setattr(cli, "write_report", write)
    assert cli.main([str(vectors), "--out", str(tmp_path / "o")]) == cli.FAILED
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists() and leftovers(tmp_path) == []


def test_read_metrics_reads_non_numbers_as_nan(tmp_path):
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"metrics": [{"metric": "m", "value": "n/a"}, {"metric": "m", "value": 2}]}))
    frame = cli.read_metrics(path)
    assert frame["value"].isna().tolist() == [True, False] and frame["value"].dtype == float


def test_a_failure_while_rendering_exits_3_and_leaves_nothing_behind(tmp_path, vectors, monkeypatch, capsys):
    from embdiag.report import page

    monkeypatch.setattr(page, "render", _raise(RuntimeError("render failed")))
    assert cli.main([str(vectors), "--out", str(tmp_path / "o")]) == cli.FAILED
    assert "the measurement failed: RuntimeError: render failed" in capsys.readouterr().err
    assert not (tmp_path / "o").exists() and leftovers(tmp_path) == []


# -- bad input: exit 2 before the chapter runs ------------------------------------------------
@pytest.fixture
def refuse(monkeypatch):
    monkeypatch.setattr(cli, "write_report", no_report)


def run_bad(args, capsys) -> str:
    assert cli.main(args) == cli.BAD_INPUT
    return capsys.readouterr().err


def test_missing_vectors(tmp_path, refuse, capsys):
    err = run_bad([str(tmp_path / "nope.npy"), "--out", str(tmp_path / "o")], capsys)
    assert f"embdiag report: {tmp_path / 'nope.npy'} (VECTORS): no such file" in err
    assert not (tmp_path / "o").exists()


def test_nan_rows_are_found_once_while_measuring(tmp_path, monkeypatch, capsys):
    """The command checks type and shape only (its scan would be a second pass over every row);
    the measurement's read scans, and its InputError exits 2 with nothing written."""
    X = np.ones((13, 3))  # k = 10 needs 13 rows (measurement.check_k)
    X[3, 1] = np.nan
    np.save(tmp_path / "v.npy", X)
    calls = []
    monkeypatch.setattr(cli, "write_report", fake_report(METRICS, calls))
    assert cli.main([str(tmp_path / "v.npy"), "--out", str(tmp_path / "o")], progress=False) == cli.OK
    assert len(calls) == 1  # the command's own checks let the file through to the measurement
    monkeypatch.undo()
    err = run_bad([str(tmp_path / "v.npy"), "--out", str(tmp_path / "o2")], capsys)
    assert "v.npy (VECTORS): contains NaN or infinite values (1 bad row(s), first at index 3)" in err
    assert not (tmp_path / "o2").exists() and leftovers(tmp_path) == []


def test_compare_with_other_row_count(tmp_path, vectors, refuse, capsys):
    np.save(tmp_path / "v2.npy", np.ones((29, 4)))
    err = run_bad([str(vectors), "--compare", str(tmp_path / "v2.npy"), "--out", str(tmp_path / "o")], capsys)
    assert "v2.npy (--compare): has 29 rows, VECTORS" in err and "has 30" in err


def test_queries_of_another_dimension(tmp_path, vectors, refuse, capsys):
    np.save(tmp_path / "q.npy", np.ones((3, 5)))
    err = run_bad([str(vectors), "--queries", str(tmp_path / "q.npy"), "--out", str(tmp_path / "o")], capsys)
    assert "q.npy (--queries): rows have dimension 5, VECTORS" in err and "has 4" in err


def test_labels_with_the_wrong_row_count(tmp_path, vectors, refuse, capsys):
    (tmp_path / "l.csv").write_text("a\nx\ny\n")
    err = run_bad([str(vectors), "--labels", str(tmp_path / "l.csv"), "--out", str(tmp_path / "o")], capsys)
    assert "l.csv (--labels): has 2 row(s), expected 30 (one per vector)" in err


def test_pairs_with_unknown_ids(tmp_path, vectors, refuse, capsys):
    (tmp_path / "l.csv").write_text("id,a\n" + "".join(f"i{i},{i % 2}\n" for i in range(30)))
    (tmp_path / "p.csv").write_text("query,target\ni0,i1\ni0,zzz\n")
    err = run_bad(
        [
            str(vectors),
            "--labels",
            str(tmp_path / "l.csv"),
            "--pairs",
            str(tmp_path / "p.csv"),
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert "p.csv (--pairs): 1 unknown target id(s) (first: 'zzz' at row 1)" in err


def test_pairs_by_index_against_separate_queries(tmp_path, vectors):
    np.save(tmp_path / "q.npy", np.ones((3, 4)))
    (tmp_path / "p.csv").write_text("query,target\n2,29\n0,1\n")
    data = cli.read_inputs(vectors, queries=tmp_path / "q.npy", pairs=tmp_path / "p.csv")
    positives, queries = data["pairs"]
    assert [p.tolist() for p in positives] == [[1], [29]] and queries.tolist() == [0, 2]
    (tmp_path / "p.csv").write_text("query,target\n3,1\n")
    with pytest.raises(cli.InputError, match=r"query index\(es\) out of range 0..2"):
        cli.read_inputs(vectors, queries=tmp_path / "q.npy", pairs=tmp_path / "p.csv")


def test_read_inputs_keeps_npy_memory_mapped(vectors):
    data = cli.read_inputs(vectors)
    assert isinstance(data["vectors"], np.memmap)
    assert {k for k, v in data.items() if v is None} == {"labels", "compare", "pairs", "qrels", "queries"}


def test_k_is_checked_by_the_measurements_rule_before_the_chapter(tmp_path, vectors, refuse, capsys):
    """One rule (measurement.check_k): k + 1 ranked rows besides the query's own, for the boundary margin."""
    err = run_bad([str(vectors), "--k", "28", "--out", str(tmp_path / "o")], capsys)
    assert f"--k 28: must be at most 27: {vectors} (VECTORS) has 30 rows; without --queries" in err
    np.save(tmp_path / "q.npy", np.ones((3, 4), np.float32))
    queries = ["--queries", str(tmp_path / "q.npy")]
    err = run_bad([str(vectors), *queries, "--k", "29", "--out", str(tmp_path / "o")], capsys)
    assert "--k 29: must be at most 28" in err and "each --queries row is searched for its k + 1 nearest" in err
    assert "own" not in err


def test_stress_needs_labels(tmp_path, vectors, refuse, capsys):
    err = run_bad([str(vectors), "--stress", "--out", str(tmp_path / "o")], capsys)
    assert "--stress: needs --labels" in err


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "the following arguments are required: VECTORS, --out"),
        (["v.npy"], "the following arguments are required: --out"),
        (["v.npy", "--out", "o", "--k", "0"], "argument --k: expected a positive integer, got 0"),
        (["v.npy", "--out", "o", "--k", "ten"], "argument --k: expected a positive integer, got 'ten'"),
        (["v.npy", "--out", "o", "--seed", "-1"], "argument --seed: expected a non-negative integer, got -1"),
        (["v.npy", "--out", "o", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_usage_errors_exit_2(args, message, refuse, capsys):
    assert cli.main(args) == cli.BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("usage: embdiag report") and message in err


def test_help_exits_0_and_states_the_exit_codes(capsys):
    assert cli.main(["-h"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "exit status: 0 written, no --fail-if violated; 1 written, a --fail-if violated; 2 bad input" in out
    assert "--fail-if EXPR" in out and "--compress SPEC" in out and "--index SPEC" in out


def test_compress_and_index_specs_are_checked_before_the_chapter(tmp_path, vectors, refuse, capsys):
    pytest.importorskip("embdiag.report.conditions")
    err = run_bad([str(vectors), "--compress", "int3", "--out", str(tmp_path / "o")], capsys)
    assert "--compress" in err
    err = run_bad([str(vectors), "--index", "annoy", "--out", str(tmp_path / "o")], capsys)
    assert "--index" in err


# -- the embdiag command ----------------------------------------------------------------------
def test_embdiag_report_runs_this_cli(monkeypatch):
    seen = []
    monkeypatch.setattr(cli, "main", lambda argv: seen.append(argv) or 7)
    assert paper_cli.main(["report", "v.npy", "--out", "o"]) == 7
    assert seen == [["v.npy", "--out", "o"]]


def test_embdiag_help_lists_report_and_vectors(capsys):
    with pytest.raises(SystemExit):
        paper_cli.main(["-h"])
    out = capsys.readouterr().out
    assert "report" in out and "vectors" in out


@pytest.mark.slow
def test_the_command_on_the_projects_cached_embeddings(tmp_path, capsys):
    """`embdiag vectors` writes the book's default input as files; `embdiag report --quick` on them
    gives the numbers the report chapter's own code computes on the same vectors."""
    from embdiag.report import measure

    assert paper_cli.main(["vectors", "--out", str(tmp_path / "in")]) == cli.OK
    vectors, labels, _ = cli.project_vectors()
    saved = np.load(tmp_path / "in" / "vectors.npy")
    np.testing.assert_array_equal(saved, vectors.astype(np.float32))
    table = pd.read_csv(tmp_path / "in" / "labels.csv", dtype=str)
    assert list(table.columns) == ["id", *labels.columns] and (table.drop(columns="id") == labels).all().all()
    assert "now: embdiag report" in capsys.readouterr().err
    code = paper_cli.main(
        [
            "report",
            str(tmp_path / "in" / "vectors.npy"),
            "--labels",
            str(tmp_path / "in" / "labels.csv"),
            "--compress",
            "int8",
            "--quick",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == cli.OK
    got = pd.DataFrame(json.loads((tmp_path / "r" / "report.json").read_text())["metrics"])
    want = measure(saved, labels=labels.astype(str), compress="int8", quick=True, progress=False).metrics
    pd.testing.assert_frame_equal(got[["metric", "condition", "attribute"]], want[["metric", "condition", "attribute"]])
    np.testing.assert_allclose(got["value"].astype(float), want["value"], rtol=1e-12, atol=0)


def test_the_chapter_constant_is_the_books_report_chapter():
    """Package data (a wheel carries it), and the file the book's notebooks/21_report.py links to."""
    assert cli.CHAPTER.is_file() and cli.CHAPTER.is_relative_to(Path(cli.__file__).parent)
    assert (REPO / "notebooks" / "21_report.py").resolve() == cli.CHAPTER


def test_the_report_chapter_on_a_users_files(tmp_path, capsys):
    """The real chapter, end to end: three labelled clusters, a PCA and an fp16 copy and an HNSW
    index; one threshold holds, one is violated (exit 1); the page, the JSON and the CSVs agree."""
    rng = np.random.default_rng(3)
    y = np.repeat(["a", "b", "c"], 200)
    X = rng.normal(size=(3, 24))[np.searchsorted(["a", "b", "c"], y)] + 0.8 * rng.normal(size=(600, 24))
    np.save(tmp_path / "emb.npy", X.astype(np.float32))
    pd.DataFrame({"kind": y}).to_csv(tmp_path / "labels.csv", index=False)
    out = tmp_path / "report"
    code = cli.main(
        [
            str(tmp_path / "emb.npy"),
            "--labels",
            str(tmp_path / "labels.csv"),
            "--compress",
            "fp16,pca4",
            "--index",
            "hnsw",
            "--fail-if",
            "overlap@10[fp16]<0.9",
            "--fail-if",
            "overlap@10[pca4]>0.1",
            "--out",
            str(out),
        ],
        progress=False,
    )
    stdout = capsys.readouterr().out
    assert code == cli.VIOLATED
    assert "overlap@10 (condition pca4" in stdout and "fp16" not in stdout.split("violated", 1)[1].split("\n")[0]
    # pca4 (16 bytes) fails its rule; fp16 (48 bytes) passes; hnsw is read by no rule
    assert "smallest condition passing every rule: fp16 (48 bytes per vector, 2 times smaller than VECTORS as" in stdout
    report = json.loads((out / "report.json").read_text())
    assert "Smallest condition passing every rule:</strong> <code>fp16</code>" in (out / "report.html").read_text()
    overlap = {m["condition"]: m["value"] for m in report["metrics"] if m["metric"] == "overlap@10"}
    assert overlap["fp16"] >= 0.9 and 0.1 < overlap["pca4"] < 1
    assert {"geometry.csv", "labels.csv", "identity.csv", "relevance.csv"} <= {p.name for p in out.iterdir()}
    page = (out / "report.html").read_text()
    assert "emb.npy (VECTORS), labels.csv (--labels)" in page  # the data named
    sha = hashlib.sha256((tmp_path / "emb.npy").read_bytes()).hexdigest()
    assert report["inputs"]["files"]["VECTORS"] == {
        "file": "emb.npy",
        "path": str((tmp_path / "emb.npy").resolve()),
        "bytes": (tmp_path / "emb.npy").stat().st_size,
        "sha256": sha,
    }
    made = page.count('<span class="embdiag-made">Made by <code>embdiag report</code>')  # not "outside the book"
    assert made == page.count('class="embdiag-exhibit') and "<code>emb.npy (VECTORS)</code> <span " in page
    assert f">{sha[:12]}</span>" in page and "chapter not known" not in page and "what these are" not in page
    assert page.count('class="embdiag-exhibit') >= 8
    assert "Not measured:</em> <code>--stress</code> was not asked for" in page
    assert not re.search(r"""(src|href)=["']https?:""", page)  # opens offline


def test_the_chapter_declares_every_option_as_a_parameter():
    from embdiag.paper import pipeline

    declared = pipeline.parameters(cli.CHAPTER.stem)
    assert set(ReportOptions(vectors="v.npy").parameters()) <= set(declared)


@pytest.mark.slow
@pytest.mark.cluster
def test_the_command_on_a_local_ray_cluster_gives_the_local_numbers(tmp_path):
    pytest.importorskip("ray")
    rng = np.random.default_rng(8)
    np.save(tmp_path / "emb.npy", rng.normal(size=(400, 12)).astype(np.float32))
    reports = {}
    for name, extra in (("local", []), ("ray", ["--cluster", "local:2"])):
        args = [str(tmp_path / "emb.npy"), "--compress", "fp16,pca4", "--out", str(tmp_path / name)] + extra
        assert cli.main(args, progress=False) == cli.OK
        reports[name] = json.loads((tmp_path / name / "report.json").read_text())
    assert reports["ray"]["metrics"] == reports["local"]["metrics"]
    assert "sharded over a Ray cluster" in reports["ray"]["inputs"]["exact_search"]


def test_a_bad_cluster_address_is_bad_input(tmp_path, vectors, refuse, capsys):
    err = run_bad([str(vectors), "--cluster", "somewhere", "--out", str(tmp_path / "o")], capsys)
    assert "--cluster: expected auto, local, local:N or ray://HOST:PORT, got 'somewhere'" in err


# -- --compare, more than once ---------------------------------------------------------------------
def test_each_compare_is_a_condition_named_by_its_files_stem(tmp_path, vectors):
    rng = np.random.default_rng(1)
    for name in ("model_b", "model_c"):
        np.save(tmp_path / f"{name}.npy", rng.normal(size=(30, 6)).astype(np.float32))
    data = cli.read_inputs(vectors, compare=[tmp_path / "model_b.npy", tmp_path / "model_c.npy"])
    assert [(c.name, c.array.shape) for c in data["compare"]] == [("model_b", (30, 6)), ("model_c", (30, 6))]
    assert "from model_b.npy" in data["compare"][0].description
    report = measurement.measure(**data, k=5, progress=False)
    assert list(report.tables["identity"]["condition"]) == ["model_b", "model_c"]
    one = cli.read_inputs(vectors, compare=tmp_path / "model_b.npy")["compare"]  # one path, as the chapter gives it
    assert [c.name for c in one] == ["model_b"]


def test_compare_files_reach_the_report_and_report_json_by_stem(tmp_path, vectors, fake):
    for name in ("b", "c"):
        np.save(tmp_path / f"{name}.npy", np.ones((30, 3), np.float32))
    argv = [str(vectors), "--compare", str(tmp_path / "b.npy"), "--compare", str(tmp_path / "c.npy")]
    assert cli.main([*argv, "--out", str(tmp_path / "o")]) == cli.OK
    ((options, _),) = fake
    assert options.compare == (str(tmp_path / "b.npy"), str(tmp_path / "c.npy"))
    assert list(options.files()) == ["VECTORS", "--compare b", "--compare c"]


def test_two_compare_files_with_one_stem_are_refused(tmp_path, vectors, refuse, capsys):
    for folder in ("x", "y"):
        (tmp_path / folder).mkdir()
        np.save(tmp_path / folder / "model.npy", np.ones((30, 3), np.float32))
    argv = [
        str(vectors),
        "--compare",
        str(tmp_path / "x" / "model.npy"),
        "--compare",
        str(tmp_path / "y" / "model.npy"),
    ]
    err = run_bad([*argv, "--out", str(tmp_path / "o")], capsys)
    assert "--compare: two files named 'model' (" in err and "rename one" in err
    assert not (tmp_path / "o").exists()
