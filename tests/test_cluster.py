"""Ray: addresses, tasks, shared storage, and the training sweep on a local two-CPU cluster.

The tests marked ``cluster`` start a real Ray instance on 127.0.0.1 with two CPUs (two worker
processes); skip them locally with ``-m 'not cluster'`` (CI runs them). The sweep through the
cluster must give the local sweep's records bit for bit (timings aside), also when a worker
is killed in the middle of a run: Ray retries the run, which resumes from its checkpoint.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from embdiag import artifacts, cluster
from embdiag.training.loop import CHECKPOINT
from embdiag.training.sweep import load_records, run_sweep

TIMINGS = ["train_seconds", "eval_seconds", "seconds_per_step", "wall_seconds", "resumed_from"]


@pytest.mark.parametrize(
    "address, parsed",
    [
        ("auto", ("auto", None)),
        (" auto ", ("auto", None)),
        ("local", ("local", None)),
        ("local:2", ("local", 2)),
        ("ray://head.example:10001", ("client", None)),
        ("ray://10.0.0.5:10001", ("client", None)),
    ],
)
def test_addresses(address, parsed):
    assert cluster.parse_address(address) == parsed


@pytest.mark.parametrize("address", ["", "ray://host", "local:0", "local:x", "http://host:1", "10.0.0.5:6379", 3])
def test_bad_addresses_are_refused_with_the_accepted_forms(address):
    with pytest.raises(ValueError, match=r"--cluster: "):
        cluster.parse_address(address)


def test_the_storage_probe_names_the_node_and_the_problem(tmp_path):
    (tmp_path / "probe").write_text("abc")
    assert cluster._sees(str(tmp_path / "probe"), "abc") is None
    assert "another token" in cluster._sees(str(tmp_path / "probe"), "xyz")
    assert "FileNotFoundError" in cluster._sees(str(tmp_path / "missing"), "abc")


def test_a_bad_address_stops_the_sweep_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match="--cluster: expected auto"):
        run_sweep("tiny", conditions=["SIGReg"], seeds=[0], root=tmp_path, progress=False, cluster="everywhere")
    assert not (tmp_path / "training").exists()


def test_a_cuda_sweep_asks_each_run_for_a_share_of_a_gpu(tmp_path, monkeypatch):
    """What Ray is asked for (no GPU here: the tasks are captured, not run)."""
    import contextlib

    from embdiag.training.sweep import GPU_SHARE

    asked = {}

    def capture(fn, calls, **resources):
        asked.update(resources, tasks=[c[0] for c in calls])
        return []

    monkeypatch.setattr(cluster, "connect", lambda address: contextlib.nullcontext())
    monkeypatch.setattr(cluster, "check_shared", lambda folder: None)
    monkeypatch.setattr(cluster, "run_tasks", capture)
    args = dict(conditions=["SIGReg"], seeds=[0], steps=3, root=tmp_path, progress=False, cluster="auto")
    run_sweep("tiny", device="cuda", **args)
    assert asked["num_gpus"] == GPU_SHARE and len(asked["tasks"]) == 2  # the run and the untrained reference
    assert {t.device for t in asked["tasks"]} == {"cuda"} and {t.label for t in asked["tasks"]} == {"tiny-steps3-cuda"}
    run_sweep("tiny", **args)
    assert asked["num_gpus"] == 0 and {t.device for t in asked["tasks"]} == {"cpu"}


# -- on a local Ray cluster ------------------------------------------------------------------------
def _double(x):
    return 2 * x


def _fail(path):
    with open(path, "a") as f:
        f.write("x")
    raise RuntimeError("task failed")


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
@pytest.mark.cluster
def test_tasks_return_in_order_and_errors_are_not_retried(ray_cluster, tmp_path):
    seen = []
    assert cluster.run_tasks(_double, [(i,) for i in range(5)], on_result=lambda i, r: seen.append((i, r))) == [
        0,
        2,
        4,
        6,
        8,
    ]
    assert sorted(seen) == [(i, 2 * i) for i in range(5)]
    with pytest.raises(Exception, match="task failed"):
        cluster.run_tasks(_fail, [(str(tmp_path / "attempts"),)])
    assert (tmp_path / "attempts").read_text() == "x"  # one attempt: a task's own error is final
    cluster.check_shared(tmp_path / "shared")  # one node, the same file system
    assert list((tmp_path / "shared").iterdir()) == []


def _comparable(root, label):
    """Records without timings, trajectories, and embeddings of every run of ``label``."""
    records = load_records(label, root=root).drop(columns=TIMINGS)
    runs = {}
    for manifest in sorted((Path(root) / "training" / label).glob("*/manifest.json")):
        a = artifacts.load(f"training/{label}/{manifest.parent.name}", root=root)
        runs[manifest.parent.name] = {k: v for k, v in a.items() if k != "record"}
    return records, runs


def _assert_same(root_a, root_b, label):
    rec_a, runs_a = _comparable(root_a, label)
    rec_b, runs_b = _comparable(root_b, label)
    pd.testing.assert_frame_equal(rec_a, rec_b)
    assert runs_a.keys() == runs_b.keys()
    for name in runs_a:
        for key, value in runs_a[name].items():
            if isinstance(value, pd.DataFrame):
                pd.testing.assert_frame_equal(value, runs_b[name][key], check_exact=True)
            else:
                np.testing.assert_array_equal(value, runs_b[name][key], err_msg=f"{name} {key}")


@pytest.mark.slow
@pytest.mark.cluster
def test_the_sweep_on_the_cluster_gives_the_local_records(ray_cluster, tmp_path):
    conditions = ["SIGReg", "Projector + SIGReg"]
    run_sweep("tiny", conditions=conditions, seeds=[0], workers=1, root=tmp_path / "local", progress=False)
    run_sweep("tiny", conditions=conditions, seeds=[0], root=tmp_path / "ray", progress=False, cluster="local:2")
    _assert_same(tmp_path / "local", tmp_path / "ray", "tiny")
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "ray").rglob("manifest.json")}
    run_sweep("tiny", conditions=conditions, seeds=[0], root=tmp_path / "ray", progress=False, cluster="local:2")
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "ray").rglob("manifest.json")} == before  # all skipped


def _ray_workers_running(function: str) -> list[int]:
    """Pids of the Ray worker processes now executing ``function`` (their process title)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if title.startswith(f"ray::{function}"):
                pids.append(int(entry.name))
    return pids


@pytest.mark.slow
@pytest.mark.cluster
def test_a_worker_killed_mid_run_loses_nothing(ray_cluster, tmp_path):
    """SIGKILL the worker of a run once it has checkpointed: Ray retries the task, the run resumes
    from its checkpoint, and the records equal an uninterrupted local sweep's."""
    steps, condition = 30, "SIGReg"
    checkpoint = tmp_path / "ray" / "cache" / "training" / f"tiny-steps{steps}" / "sigreg-s0" / CHECKPOINT
    errors = []

    def sweep():
        try:
            run_sweep(
                "tiny",
                conditions=[condition],
                seeds=[0],
                steps=steps,
                root=tmp_path / "ray",
                progress=False,
                cluster="local:2",
            )
        except BaseException as e:  # reported below
            errors.append(e)

    thread = threading.Thread(target=sweep)
    thread.start()
    killed, deadline = [], time.monotonic() + 300
    while not killed and thread.is_alive() and time.monotonic() < deadline:
        if checkpoint.is_file():  # written atomically: complete once it exists
            for pid in _ray_workers_running("_execute_on_one_thread"):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        time.sleep(0.02)
    thread.join(timeout=600)
    assert not thread.is_alive() and not errors, errors
    assert killed, "the run finished before its worker could be killed"
    ray_records = load_records(f"tiny-steps{steps}", root=tmp_path / "ray")
    assert (ray_records["status"] == "ok").all() and len(ray_records) == 2
    resumed = ray_records.set_index("condition").loc[condition, "resumed_from"]
    assert 0 < resumed < steps  # the retry resumed from the checkpoint, not from step 0
    run_sweep(
        "tiny", conditions=[condition], seeds=[0], steps=steps, workers=1, root=tmp_path / "local", progress=False
    )
    _assert_same(tmp_path / "local", tmp_path / "ray", f"tiny-steps{steps}")


# -- the report on the cluster ---------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.cluster
def test_sharded_search_equals_topk_bit_for_bit(ray_cluster, tmp_path):
    from embdiag.metrics.retrieval import topk
    from embdiag.report.sharded import sharded_topk

    rng = np.random.default_rng(0)
    G = rng.standard_normal((1000, 16)).astype(np.float32)
    G[500:520] = G[3]  # twenty exact ties with row 3, across shards
    Q = np.vstack([G[3:4], rng.standard_normal((40, 16)).astype(np.float32)])
    np.save(tmp_path / "g.npy", G)
    mapped = np.load(tmp_path / "g.npy", mmap_mode="r")
    want = topk(Q, G, 25)
    for gallery, shard_rows in ((G, 130), (mapped, 130), (mapped, 1000), (G, 7)):
        S, I = sharded_topk(Q, gallery, 25, shard_rows=shard_rows)
        np.testing.assert_array_equal(I, want[1])
        np.testing.assert_array_equal(S, want[0])
    # the 21 copies of row 3 lead, in an order set by float32 rounding (a copy's score depends on
    # its place in the GEMM's tiles), which the shards reproduce because they scan topk's chunks
    assert set(want[1][0, :21]) == {3, *range(500, 520)}
    with pytest.raises(ValueError, match="shard_rows: "):
        sharded_topk(Q, G, 5, shard_rows=0)


@pytest.mark.slow
@pytest.mark.cluster
def test_a_report_on_the_cluster_equals_the_local_report(ray_cluster, tmp_path):
    from embdiag.report import measure

    rng = np.random.default_rng(1)
    y = np.repeat(["a", "b", "c"], 200)
    X = (rng.normal(size=(3, 24))[np.searchsorted(["a", "b", "c"], y)] + rng.normal(size=(600, 24))).astype(np.float32)
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "other.npy", X @ rng.normal(size=(24, 24)).astype(np.float32))
    X = np.load(tmp_path / "x.npy", mmap_mode="r")
    args = dict(
        labels=pd.DataFrame({"kind": y}),
        compare=np.load(tmp_path / "other.npy", mmap_mode="r"),
        pairs=[np.array([(i + 1) % 600]) for i in range(600)],
        compress="fp16,pca8",
        index="hnsw",
        progress=False,
    )
    local = measure(X, shard_rows=97, **args)  # the geometry's sums in blocks of 97 rows, as on the cluster
    sharded = measure(X, cluster="local:2", shard_rows=97, **args)
    pd.testing.assert_frame_equal(local.metrics, sharded.metrics, check_exact=True)
    assert local.tables.keys() == sharded.tables.keys()
    for name, table in local.tables.items():
        pd.testing.assert_frame_equal(table, sharded.tables[name], check_exact=True)
    assert sharded.inputs["exact_search"].endswith("sharded over a Ray cluster (97 gallery rows per task)")
    assert sharded.inputs["sampling"]["geometry"] == "all 600 rows, one Ray task per block of 97 rows"
    assert sharded.inputs["sampling"]["bootstrap"].endswith(", one Ray task per interval")
    one_block = measure(X, **args).tables["geometry"]  # other block sums: the same up to rounding
    pd.testing.assert_frame_equal(one_block, local.tables["geometry"], rtol=1e-12)


@pytest.mark.slow
@pytest.mark.cluster
def test_the_geometry_by_blocks_on_the_cluster_is_the_local_geometry(ray_cluster, tmp_path):
    from embdiag.metrics.geometry import summary
    from embdiag.report.sharded import block_mapper

    rng = np.random.default_rng(3)
    full = rng.normal(size=(3000, 40)) + 5.0
    low_rank = rng.normal(size=(3000, 3)) @ rng.normal(size=(3, 40)) + 1.0  # refined spectra (more passes)
    tiny = full * 2.0**-300  # rescaled by a power of two before any square
    for i, X in enumerate((full.astype(np.float32), low_rank, tiny)):
        np.save(tmp_path / f"{i}.npy", X)
        for Z in (X, np.load(tmp_path / f"{i}.npy", mmap_mode="r")):  # shipped once, or read by each task
            assert summary(Z, block_rows=700, map_blocks=block_mapper(Z)) == summary(Z, block_rows=700)


def test_shards_group_consecutive_chunks_up_to_the_limit():
    from embdiag.report.sharded import shards

    plan = [[(0, 1024), (1024, 3072), (3072, 5000)], [(5000, 6024), (6024, 10000)]]
    assert shards(plan, 3072) == [[(0, 1024), (1024, 3072)], [(3072, 5000), (5000, 6024)], [(6024, 10000)]]
    assert shards(plan, 10**9) == [[c for share in plan for c in share]]
    assert shards(plan, 1) == [[c] for share in plan for c in share]


@pytest.mark.slow
@pytest.mark.cluster
def test_the_sharded_input_check_says_what_the_local_one_says(ray_cluster, tmp_path):
    from embdiag.data.files import InputError, read_vectors
    from embdiag.report.sharded import sharded_check

    X = np.random.default_rng(2).standard_normal((1000, 8)).astype(np.float32)
    np.save(tmp_path / "ok.npy", X)
    sharded_check(np.load(tmp_path / "ok.npy", mmap_mode="r"), "ok.npy (VECTORS)", shard_rows=128)
    X[[900, 130, 131]] = np.nan  # bad rows in two shards; the first is not in the first shard
    X[[50, 777]] = 0.0
    messages = []
    for name, Y in (("bad.npy", X), ("zero.npy", np.where(np.isnan(X), 1.0, X).astype(np.float32))):
        np.save(tmp_path / name, Y)
        with pytest.raises(InputError) as local:
            read_vectors(tmp_path / name)
        for array in (np.load(tmp_path / name, mmap_mode="r"), Y):  # from the file, and in memory
            with pytest.raises(InputError) as sharded:
                sharded_check(array, f"{tmp_path / name} (VECTORS)", shard_rows=128)
            assert str(sharded.value) == str(local.value)
        messages.append(str(local.value))
    assert "contains NaN or infinite values (3 bad row(s), first at index 130)" in messages[0]
    assert "2 zero-norm row(s) (first at index 50)" in messages[1]
