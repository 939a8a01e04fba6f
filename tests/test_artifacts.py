"""Cached artifacts: checksums, parameters, atomic writes."""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pytest

from embdiag import artifacts

PARAMS = {"n": 3, "seed": 0, "sizes": (1, 2)}


def test_round_trip_with_manifest(tmp_path):
    arrays = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "names": np.array(["a", "bb"])}
    folder = artifacts.save("demo", arrays, PARAMS, command="make demo", root=tmp_path)
    m = json.loads((folder / "manifest.json").read_text())
    assert m["params"] == {"n": 3, "seed": 0, "sizes": [1, 2]}
    assert m["files"]["x.npy"]["shape"] == [2, 3] and len(m["files"]["x.npy"]["sha256"]) == 64
    out = artifacts.load("demo", PARAMS, root=tmp_path)
    np.testing.assert_array_equal(out["x"], arrays["x"])
    np.testing.assert_array_equal(out["names"], arrays["names"])


def test_corrupt_file_is_detected(tmp_path):
    folder = artifacts.save("demo", {"x": np.arange(100.0)}, PARAMS, root=tmp_path)
    raw = bytearray((folder / "x.npy").read_bytes())
    raw[-1] ^= 0xFF
    (folder / "x.npy").write_bytes(bytes(raw))
    with pytest.raises(artifacts.CorruptArtifactError, match="checksum mismatch for x.npy"):
        artifacts.load("demo", PARAMS, root=tmp_path)
    with pytest.raises(artifacts.CorruptArtifactError):
        artifacts.cached("demo", PARAMS, lambda: {"x": np.zeros(1)}, root=tmp_path)


def test_missing_file_is_detected(tmp_path):
    folder = artifacts.save("demo", {"x": np.arange(3)}, PARAMS, root=tmp_path)
    (folder / "x.npy").unlink()
    with pytest.raises(artifacts.CorruptArtifactError, match="missing"):
        artifacts.load("demo", root=tmp_path)


def test_stale_parameters_are_detected_and_named(tmp_path):
    artifacts.save("demo", {"x": np.arange(3)}, PARAMS, command="make demo", root=tmp_path)
    with pytest.raises(artifacts.StaleArtifactError, match=r"differ in: seed.*make demo"):
        artifacts.load("demo", {**PARAMS, "seed": 1}, root=tmp_path)


def test_cached_builds_once_and_rebuilds_when_stale(tmp_path):
    calls = []

    def build():
        calls.append(1)
        return {"x": np.full(2, len(calls))}

    assert artifacts.cached("c", PARAMS, build, root=tmp_path)["x"][0] == 1
    assert artifacts.cached("c", PARAMS, build, root=tmp_path)["x"][0] == 1
    assert artifacts.cached("c", {**PARAMS, "n": 4}, build, root=tmp_path)["x"][0] == 2
    assert len(calls) == 2


def test_failed_build_leaves_nothing_behind(tmp_path):
    class Boom(Exception):
        pass

    def build():
        raise Boom

    with pytest.raises(Boom):
        artifacts.cached("c", PARAMS, build, root=tmp_path)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(artifacts.ArtifactError, match="object arrays"):
        artifacts.save("c", {"x": np.array([{}, 1], dtype=object)}, PARAMS, root=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_missing_artifact(tmp_path):
    with pytest.raises(artifacts.MissingArtifactError, match="no manifest"):
        artifacts.load("nothing", root=tmp_path)


def test_tables_round_trip_exactly(tmp_path):
    import pandas as pd

    table = pd.DataFrame({"name": ["a", "b"], "x": [0.1 + 0.2, 1 / 3], "n": [1, 2]})
    artifacts.save("t", {"table": table}, PARAMS, root=tmp_path)
    back = artifacts.load("t", PARAMS, root=tmp_path)["table"]
    pd.testing.assert_frame_equal(back, table, check_dtype=False)
    assert back["x"].tolist() == table["x"].tolist()


def test_cached_rebuilds_a_corrupt_cache_entry_but_not_a_committed_artifact(tmp_path, capsys):
    calls = []

    def build():
        calls.append(1)
        return {"x": np.arange(3.0)}

    for name in ("cache/entry", "records/run"):
        artifacts.cached(name, {"n": 3}, build, command="make it", root=tmp_path)
        (tmp_path / name / "x.npy").write_bytes(b"flipped")
    out = artifacts.cached("cache/entry", {"n": 3}, build, command="make it", root=tmp_path)
    assert np.array_equal(out["x"], np.arange(3.0)) and len(calls) == 3
    assert "rebuilding a corrupt cache entry" in capsys.readouterr().err
    with pytest.raises(artifacts.CorruptArtifactError, match="regenerate it with: make it"):
        artifacts.cached("records/run", {"n": 3}, build, command="make it", root=tmp_path)
    assert len(calls) == 3


def test_raw_files_round_trip_and_are_checksummed(tmp_path):
    blob = bytes(range(256)) * 3
    artifacts.save("enc", {"weights.safetensors": blob, "x": np.arange(3)}, {"a": 1}, root=tmp_path)
    out = artifacts.load("enc", {"a": 1}, root=tmp_path)
    assert out["weights.safetensors"] == blob and out["x"].tolist() == [0, 1, 2]
    m = artifacts.manifest("enc", root=tmp_path)["files"]["weights.safetensors"]
    assert m["dtype"] == "bytes" and m["sha256"] == hashlib.sha256(blob).hexdigest()
    (tmp_path / "enc" / "weights.safetensors").write_bytes(blob[:-1])
    with pytest.raises(artifacts.CorruptArtifactError, match="weights.safetensors"):
        artifacts.load("enc", root=tmp_path)
    with pytest.raises(artifacts.ArtifactError, match="suffix"):
        artifacts.save("bad", {"weights": blob}, {}, root=tmp_path)


def test_numpy_parameters_equal_plain_ones(tmp_path):
    params = {"n": np.int64(10), "x": np.float32(0.5), "ok": np.bool_(True), "sizes": np.array([1, 2])}
    artifacts.save("np", {"x": np.arange(3)}, params, root=tmp_path)
    assert artifacts.manifest("np", root=tmp_path)["params"] == {"n": 10, "x": 0.5, "ok": True, "sizes": [1, 2]}
    artifacts.load("np", {"n": 10, "x": 0.5, "ok": True, "sizes": (1, 2)}, root=tmp_path)
    artifacts.load("np", params, root=tmp_path)
    with pytest.raises(artifacts.StaleArtifactError, match="differ in: n"):
        artifacts.load("np", {**params, "n": 11}, root=tmp_path)


@pytest.mark.parametrize(
    "damage",
    [
        lambda m: m.pop("files"),
        lambda m: m.pop("params"),
        lambda m: m.update(files=[]),
        lambda m: m["files"]["x.npy"].pop("sha256"),
        lambda m: m["files"].update({"../x.npy": m["files"]["x.npy"]}),
    ],
)
def test_malformed_manifest_is_a_corrupt_artifact(tmp_path, damage):
    folder = artifacts.save("demo", {"x": np.arange(3)}, PARAMS, root=tmp_path)
    m = json.loads((folder / "manifest.json").read_text())
    damage(m)
    (folder / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(artifacts.CorruptArtifactError, match="artifact 'demo'"):
        artifacts.load("demo", PARAMS, root=tmp_path)


@pytest.mark.parametrize("text", ["[1, 2]", "null", '{"files": {}}', "not json"])
def test_manifest_that_is_no_mapping_is_a_corrupt_artifact(tmp_path, text):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "manifest.json").write_text(text)
    with pytest.raises(artifacts.CorruptArtifactError, match="artifact 'demo'"):
        artifacts.load("demo", root=tmp_path)


def test_manifest_that_is_a_directory_is_a_corrupt_artifact(tmp_path):
    (tmp_path / "demo" / "manifest.json").mkdir(parents=True)
    with pytest.raises(artifacts.CorruptArtifactError, match="artifact 'demo'"):
        artifacts.load("demo", root=tmp_path)
    calls = []
    artifacts.save("cache/e", {"x": np.arange(3)}, PARAMS, root=tmp_path)
    shutil.rmtree(tmp_path / "cache" / "e")
    (tmp_path / "cache" / "e" / "manifest.json").mkdir(parents=True)
    out = artifacts.cached("cache/e", PARAMS, lambda: calls.append(1) or {"x": np.arange(3)}, root=tmp_path)
    assert calls == [1] and out["x"].tolist() == [0, 1, 2]  # a regenerable entry is rebuilt


def _vouch(folder, fname):
    """Write the current checksum of ``folder/fname`` into the manifest (as if it had been saved so)."""
    m = json.loads((folder / "manifest.json").read_text())
    m["files"][fname]["sha256"] = hashlib.sha256((folder / fname).read_bytes()).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("mmap", [False, True])
@pytest.mark.parametrize("keep", [20, -8], ids=["header cut", "data cut"])
def test_a_truncated_npy_that_the_manifest_vouches_for_is_corrupt(tmp_path, mmap, keep):
    folder = artifacts.save("demo", {"x": np.arange(100.0)}, PARAMS, command="make demo", root=tmp_path)
    (folder / "x.npy").write_bytes((folder / "x.npy").read_bytes()[:keep])
    _vouch(folder, "x.npy")
    with pytest.raises(artifacts.CorruptArtifactError) as refused:
        artifacts.load("demo", PARAMS, root=tmp_path, mmap=mmap)
    message = str(refused.value)
    assert message.startswith("artifact 'demo': x.npy is corrupt (") and str(folder / "x.npy") in message
    assert message.endswith("; regenerate it with: make demo")
    calls = []
    artifacts.save("cache/e", {"x": np.arange(3.0)}, PARAMS, root=tmp_path)
    (tmp_path / "cache" / "e" / "x.npy").write_bytes(b"\x93NUMPY")
    _vouch(tmp_path / "cache" / "e", "x.npy")
    out = artifacts.cached("cache/e", PARAMS, lambda: calls.append(1) or {"x": np.arange(3.0)}, root=tmp_path)
    assert calls == [1] and out["x"].tolist() == [0, 1, 2]  # a regenerable entry is rebuilt


def test_an_unreadable_table_is_corrupt(tmp_path):
    import pandas as pd

    folder = artifacts.save("demo", {"t": pd.DataFrame({"a": [1, 2]})}, PARAMS, command="make demo", root=tmp_path)
    (folder / "t.csv").write_bytes(b"\xff\xfe\x00a\n")
    _vouch(folder, "t.csv")
    with pytest.raises(artifacts.CorruptArtifactError, match=r"^artifact 'demo': t.csv is corrupt \(.*make demo$"):
        artifacts.load("demo", PARAMS, root=tmp_path)


def test_a_listed_file_that_is_a_folder_is_corrupt(tmp_path):
    folder = artifacts.save("demo", {"x": np.arange(3)}, PARAMS, command="make demo", root=tmp_path)
    (folder / "x.npy").unlink()
    (folder / "x.npy").mkdir()
    with pytest.raises(artifacts.CorruptArtifactError) as refused:
        artifacts.load("demo", PARAMS, root=tmp_path)
    where = folder / "x.npy"
    assert str(refused.value) == (
        f"artifact 'demo': x.npy listed in the manifest is not a file ({where}); regenerate it with: make demo"
    )


@pytest.mark.parametrize("blocked", ["records", "records/run", "records/run/x"])
def test_saving_where_a_file_stands_in_the_way_is_refused_naming_it(tmp_path, blocked):
    name = "records/run/x"
    (tmp_path / blocked).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / blocked).write_text("mine")
    with pytest.raises(artifacts.ArtifactError) as refused:
        artifacts.save(name, {"x": np.arange(3)}, PARAMS, root=tmp_path)
    assert str(refused.value) == (
        f"artifact {name!r}: cannot save to {tmp_path / name}: {tmp_path / blocked} is a file, not a folder"
    )
    assert (tmp_path / blocked).read_text() == "mine"  # left in place
    assert [p.name for p in (tmp_path / blocked).parent.iterdir()] == [(tmp_path / blocked).name]  # no temporary


# -- the read log ------------------------------------------------------------------------------------
@pytest.fixture
def read_log(tmp_path, monkeypatch):
    """An empty read log, with the data root in ``tmp_path/data`` and the project root ``tmp_path``."""
    monkeypatch.setenv("EMBDIAG_ROOT", str(tmp_path))
    monkeypatch.setenv("EMBDIAG_DATA", str(tmp_path / "data"))
    artifacts.clear_reads()
    yield tmp_path / "data"
    artifacts.clear_reads()


def test_load_records_the_artifact_once_with_its_manifest_checksum(read_log):
    folder = artifacts.save("cache/demo", {"x": np.arange(3)}, PARAMS)
    assert artifacts.reads() == [], "saving is not reading"
    artifacts.load("cache/demo", PARAMS)
    artifacts.load("cache/demo", PARAMS, mmap=True)
    expected = hashlib.sha256((folder / "manifest.json").read_bytes()).hexdigest()
    assert artifacts.reads() == [artifacts.Read("data/cache/demo", expected)]


def test_failed_loads_are_not_recorded(read_log):
    artifacts.save("demo", {"x": np.arange(3)}, PARAMS)
    with pytest.raises(artifacts.StaleArtifactError):
        artifacts.load("demo", {**PARAMS, "seed": 9})
    with pytest.raises(artifacts.MissingArtifactError):
        artifacts.load("nothing")
    assert artifacts.reads() == []


def test_cached_records_the_entry_it_returns(read_log):
    artifacts.cached("cache/c", PARAMS, lambda: {"x": np.zeros(2)})
    artifacts.cached("cache/c", {**PARAMS, "n": 4}, lambda: {"x": np.ones(2)})  # rebuilt: same path, new manifest
    (read,) = artifacts.reads()
    assert read.path == "data/cache/c"
    assert read.sha256 == hashlib.sha256((read_log / "cache" / "c" / "manifest.json").read_bytes()).hexdigest()


def test_record_read_keeps_first_order_without_duplicates(read_log):
    study = read_log / "study"
    study.mkdir(parents=True)
    (study / "a.csv").write_text("x\n1\n")
    (study / "b.csv").write_text("x\n2\n")
    artifacts.save("demo", {"x": np.arange(2)}, PARAMS)
    assert artifacts.record_read(study / "b.csv").sha256 == hashlib.sha256(b"x\n2\n").hexdigest()
    artifacts.load("demo")
    artifacts.record_read("data/study/a.csv")  # relative to the project root
    artifacts.record_read(study / "b.csv")
    assert [r.path for r in artifacts.reads()] == ["data/study/b.csv", "data/demo", "data/study/a.csv"]


def test_paths_outside_the_project_read_as_data_or_absolute(tmp_path, monkeypatch):
    root, data, other = tmp_path / "checkout", tmp_path / "elsewhere", tmp_path / "outside.csv"
    root.mkdir()
    monkeypatch.setenv("EMBDIAG_ROOT", str(root))
    monkeypatch.setenv("EMBDIAG_DATA", str(data))
    artifacts.save("cache/x", {"x": np.arange(2)}, PARAMS)
    other.write_text("1\n")
    assert artifacts.describe("data/cache/x").path == "data/cache/x", "data/... falls back to the data root"
    assert artifacts.describe(other).path == other.resolve().as_posix()
    with pytest.raises(ValueError, match="path: no such file"):
        artifacts.record_read("data/nothing.csv")
    (data / "plain").mkdir()
    with pytest.raises(ValueError, match="not an artifact"):
        artifacts.describe(data / "plain")


def test_inventory_lists_committed_inputs_with_the_provenance_checksums(read_log):
    artifacts.save("encoders/demo", {"w": np.arange(4)}, PARAMS, command="python -m make demo")
    artifacts.save("cache/scratch", {"x": np.arange(3)}, PARAMS)  # regenerable: not listed
    (read_log / "study").mkdir()
    (read_log / "study" / "values.csv").write_text("a,b\n1,2\n")
    table = artifacts.inventory()
    assert table["path"].tolist() == ["data/encoders/demo", "data/study/values.csv"]
    for row in table.itertuples():
        assert row.sha256 == artifacts.describe(row.path).sha256
    demo = table.iloc[0]
    assert demo["files"] == 1 and demo["command"] == "python -m make demo"
    assert demo["bytes"] == (read_log / "encoders" / "demo" / "w.npy").stat().st_size
    assert table.iloc[1]["command"] == "" and table.iloc[1]["bytes"] == 8


def test_reads_inside_unrecorded_are_not_logged(tmp_path):
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("x\n")
    second.write_text("y\n")
    artifacts.clear_reads()
    artifacts.record_read(first)
    with artifacts.unrecorded():
        artifacts.record_read(second)
        assert len(artifacts.reads()) == 2  # noted while inside
    assert [r.sha256 for r in artifacts.reads()] == [artifacts.describe(first).sha256]
    artifacts.clear_reads()
