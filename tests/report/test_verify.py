"""``embdiag verify``: an untouched report is recomputed number for number; an edited number, a
changed input or a report that departs from its JSON Schema is caught and named."""

from __future__ import annotations

import json
import re

import jsonschema
import numpy as np
import pytest

from embdiag import exits
from embdiag.data.files import InputError, file_record
from embdiag.report import measure
from embdiag.report import verify as V

N, D = 300, 12


@pytest.fixture(scope="module")
def files(tmp_path_factory, write_user_files):
    """A user's vectors, labels (with a split column), pairs and a second representation."""
    return write_user_files(tmp_path_factory.mktemp("inputs"), N, D)


def _report(files, out, **options):
    """A report folder as ``embdiag report`` writes it: the chapter's call of ``measure``, saved."""
    from embdiag.report.cli import read_inputs

    given = {"VECTORS": files / "vectors.npy", "--labels": files / "labels.csv", "--pairs": files / "pairs.csv"}
    given.update(options.pop("given", {}))
    if "--qrels" in given:  # graded judgments replace the pairs
        del given["--pairs"]
    keys = {
        "--labels": "labels",
        "--pairs": "pairs",
        "--qrels": "qrels",
        "--queries": "queries",
    }
    data = read_inputs(
        given["VECTORS"],
        **{keys[o]: p for o, p in given.items() if o in keys},
        compare=[p for o, p in given.items() if o.startswith("--compare ")],
    )
    report = measure(**data, k=5, progress=False, sources={o: file_record(p) for o, p in given.items()}, **options)
    report.save(out)
    return out


@pytest.fixture(scope="module")
def folder(files, tmp_path_factory):
    return _report(
        files,
        tmp_path_factory.mktemp("report"),
        compress="fp16,int4,binary-rescore,pca6",
        index="hnsw",
        fail_if=["overlap@5<0.5"],
    )


def _edited(folder, tmp_path, edit):
    copy = tmp_path / "edited"
    copy.mkdir()
    document = json.loads((folder / "report.json").read_text())
    edit(document)
    (copy / "report.json").write_text(json.dumps(document))
    return copy


def test_an_untouched_report_is_verified(folder, capsys):
    assert V.verify(folder) == ([], [])
    assert V.main([str(folder)]) == exits.OK
    out = capsys.readouterr().out
    assert "verified: " in out and re.search(r", in \d+\.\d s$", out.strip())  # and how long it took


def test_an_edited_number_is_named(folder, tmp_path, capsys):
    def edit(d):
        row = next(m for m in d["metrics"] if m["metric"] == "overlap@5" and m["condition"] == "int4")
        row["value"] += 0.001

    edited = _edited(folder, tmp_path, edit)
    found, _ = V.verify(edited)
    assert len(found) == 1 and found[0].startswith("metrics[section=identity, metric=overlap@5, condition=int4].value")
    assert V.main([str(edited)]) == exits.VIOLATED
    assert "differs: metrics[section=identity, metric=overlap@5, condition=int4].value: recorded" in (
        capsys.readouterr().out
    )


def test_an_edited_verdict_or_a_dropped_row_is_named(folder, tmp_path):
    def edit(d):
        d["summary"][0]["verdict"] = "costs relevance"
        d["tables"]["identity"].pop()

    found, _ = V.verify(_edited(folder, tmp_path, edit))
    assert any(f.startswith("summary[condition=fp16].verdict: recorded 'costs relevance'") for f in found), found
    assert "tables.identity: 4 items recorded, 5 recomputed" in found


def test_a_changed_input_is_named_by_its_sha256(files, tmp_path, capsys):
    moved = tmp_path / "inputs"
    moved.mkdir()
    for name in ("vectors.npy", "labels.csv", "pairs.csv"):
        (moved / name).write_bytes((files / name).read_bytes())
    folder = _report(
        moved,
        tmp_path / "r",
        compress="int8",
    )
    X = np.load(moved / "vectors.npy")
    X[7, 3] += 1e-3
    np.save(moved / "vectors.npy", X)
    assert V.main([str(folder)]) == exits.VIOLATED
    out = capsys.readouterr().out
    assert f"differs: VECTORS {moved / 'vectors.npy'}: SHA-256 " in out and "(the input changed)" in out


def test_inputs_are_found_by_name_in_another_folder(files, folder, tmp_path):
    elsewhere = tmp_path / "copied"
    elsewhere.mkdir()
    for name in ("vectors.npy", "labels.csv", "pairs.csv"):
        (elsewhere / name).write_bytes((files / name).read_bytes())
    document = json.loads((folder / "report.json").read_text())
    for record in document["inputs"]["files"].values():
        record["path"] = str(tmp_path / "gone" / record["file"])  # as on another machine
    copy = _edited(folder, tmp_path, lambda d: d.update(document))
    with pytest.raises(InputError, match="^VECTORS: the report's input vectors.npy is not found"):
        V.verify(copy)
    assert V.verify(copy, inputs=elsewhere) == ([], [])


def test_a_second_representation_and_the_stress_grid_are_recomputed(files, tmp_path):
    folder = _report(
        files, tmp_path / "r", given={"--compare other": files / "other.npy"}, stress=True, compress="prefix6"
    )
    assert V.verify(folder) == ([], [])


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.pop("gates"), "does not follow embdiag-report/2 at \\(top\\): 'gates' is a required property"),
        (lambda d: d.update(schema="embdiag-report/0"), "schema 'embdiag-report/0', this embdiag verifies"),
        (lambda d: d["metrics"][0].update(value="high"), "at metrics/0/value: 'high' is not of type"),
        (lambda d: d["inputs"]["files"]["VECTORS"].update(sha256="x"), "at inputs/files/VECTORS/sha256: 'x' does not"),
    ],
)
def test_a_report_that_departs_from_its_schema_is_refused(folder, tmp_path, edit, message, capsys):
    edited = _edited(folder, tmp_path, edit)
    with pytest.raises(InputError, match=message):
        V.verify(edited)
    assert V.main([str(edited)]) == exits.BAD_INPUT
    assert "Traceback" not in capsys.readouterr().err


def test_what_cannot_be_verified_is_bad_input(tmp_path, capsys):
    assert V.main([str(tmp_path / "none")]) == exits.BAD_INPUT
    assert "(DIR): not a folder" in capsys.readouterr().err
    (tmp_path / "report.json").write_text("{")
    assert V.main([str(tmp_path)]) == exits.BAD_INPUT
    assert "report.json: not JSON" in capsys.readouterr().err
    project = measure(np.random.default_rng(1).standard_normal((50, 4)), k=3, progress=False)
    project.save(tmp_path / "project")  # no files: the project's cached vectors, or arrays
    assert V.main([str(tmp_path / "project")]) == exits.BAD_INPUT
    assert "names no input file" in capsys.readouterr().err
    assert V.main([str(tmp_path / "project"), "--rtol", "-1"]) == exits.BAD_INPUT


def test_every_report_follows_the_schema(folder, files, tmp_path):
    schema = json.loads(V.SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    quick = _report(
        files, tmp_path / "q", quick=True, stress=True, compress="", given={"--queries": files / "other.npy"}
    )
    for f in (folder, quick):
        validator.validate(json.loads((f / "report.json").read_text()))


def test_differences_compares_numbers_within_the_tolerance_and_the_rest_exactly():
    assert V.differences({"a": 1.0}, {"a": 1.0 + 1e-8}) == ["a: recorded 1.0, recomputed 1.00000001"]
    assert V.differences({"a": 1.0}, {"a": 1.0 + 1e-8}, rtol=1e-7) == []
    assert V.differences({"a": None}, {"a": 0.0}) == ["a: recorded None, recomputed 0.0"]
    assert V.differences({"a": True}, {"a": 1}) == ["a: recorded True, recomputed 1"]
    assert V.differences({"a": [1, 2]}, {"a": [1]}) == ["a: 2 items recorded, 1 recomputed"]
    assert V.differences({"a": 1}, {"b": 1}) == ["a: not recomputed", "b: not recorded"]
    versions = {"inputs": {"versions": {"numpy": "1"}, "files": {}}}
    assert V.differences(versions, {"inputs": {"versions": {"numpy": "2"}, "files": {"x": 1}}}) == []


@pytest.mark.slow
def test_a_report_written_by_the_command_is_verified_by_the_command(files, tmp_path, capsys):
    from embdiag.paper.cli import main as embdiag

    out = tmp_path / "report"
    args = ["report", str(files / "vectors.npy"), "--labels", str(files / "labels.csv"), "--compress", "int4,prefix6"]
    assert embdiag([*args, "--k", "5", "--out", str(out), "--fail-if", "overlap@5<0.1"]) == exits.OK
    assert embdiag(["verify", str(out)]) == exits.OK
    assert "verified: " in capsys.readouterr().out


def test_a_report_with_graded_judgments_is_verified(files, tmp_path):
    qrels = files / "qrels.csv"
    rows = [f"{i},{(i + 1) % N},2\n{i},{(i + 3) % N},1\n" for i in range(0, N, 2)]
    qrels.write_text("query,document,grade\n" + "".join(rows))
    folder = _report(files, tmp_path / "r", given={"--qrels": qrels}, compress="int4,binary")
    given = json.loads((folder / "report.json").read_text())["inputs"]["files"]
    assert set(given) == {"VECTORS", "--labels", "--qrels"}
    assert V.verify(folder) == ([], [])


def test_a_prebuilt_index_file_is_an_input_found_again_and_checked(files, tmp_path):
    """A ``file:`` index is recorded by SHA-256 like the other inputs: found again in another
    folder (the index spec follows it), and a rebuilt file is a changed input."""
    import shutil

    faiss = pytest.importorskip("faiss")
    from embdiag.interventions.ann import AnnIndex

    X = np.load(files / "vectors.npy")
    built = AnnIndex("IVF8,Flat").fit(X)
    faiss.write_index(built.index_, str(tmp_path / "ivf.faiss"))
    spec = f"hnsw;file:{tmp_path / 'ivf.faiss'}"
    out = _report(files, tmp_path / "report", index=spec, given={"--index ivf": tmp_path / "ivf.faiss"})
    assert "--index ivf" in json.loads((out / "report.json").read_text())["inputs"]["files"]
    assert V.verify(out) == ([], [])
    moved = tmp_path / "moved"
    shutil.copytree(files, moved)
    shutil.move(tmp_path / "ivf.faiss", moved / "ivf.faiss")
    assert V.verify(out, inputs=moved) == ([], [])
    faiss.extract_index_ivf(built.index_).nprobe = 2  # the same rows, another knob value saved
    faiss.write_index(built.index_, str(moved / "ivf.faiss"))
    found, _ = V.verify(out, inputs=moved)
    assert len(found) == 1 and found[0].startswith("--index ivf ") and "(the input changed)" in found[0]


def test_verify_hashes_each_input_once_and_runs_each_index_search_once(folder, monkeypatch):
    from embdiag.data import files as data_files
    from embdiag.report import measurement
    from embdiag.report.conditions import ApproximateIndex

    hashed, searched, timed = [], [], []
    real_hash, real_search, real_measure = data_files.sha256_of, ApproximateIndex.search, measurement.measure
    monkeypatch.setattr(V, "sha256_of", lambda path: hashed.append(path) or real_hash(path))
    monkeypatch.setattr(data_files, "sha256_of", lambda path: hashed.append(path) or real_hash(path))
    monkeypatch.setattr(
        ApproximateIndex, "search", lambda self, *a, **k: searched.append(1) or real_search(self, *a, **k)
    )
    monkeypatch.setattr(measurement, "measure", lambda *a, **k: timed.append(k["timed"]) or real_measure(*a, **k))
    assert V.verify(folder) == ([], [])
    document = json.loads((folder / "report.json").read_text())
    assert len(hashed) == len(document["inputs"]["files"]) and timed == [False]
    # one search per knob value, and the identity section's search at the default
    assert len(searched) == len(document["tables"]["index_curves"]) + 1


def test_a_timed_report_repeats_a_short_search_for_its_speed(files, monkeypatch):
    from embdiag.report.cli import read_inputs
    from embdiag.report.conditions import ApproximateIndex
    from embdiag.report.sections.indexes import TIMING_REPEATS

    searched = []
    real = ApproximateIndex.search
    monkeypatch.setattr(ApproximateIndex, "search", lambda self, *a, **k: searched.append(1) or real(self, *a, **k))
    data = read_inputs(files / "vectors.npy")
    curves = measure(**data, index="hnsw", k=5, progress=False).tables["index_curves"]
    # searches of a few hundred rows take microseconds; the identity section's search is not timed
    assert len(searched) == TIMING_REPEATS * len(curves) + 1
