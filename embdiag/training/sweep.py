"""The sweep: every (condition, seed) run of a profile as a cached, resumable artifact.

Each run is an artifact ``training/<label>/<condition-slug>-s<seed>`` under the data root
(``label`` is the profile name, or ``<profile>-steps<N>`` when ``steps`` is overridden, so a
smoke sweep never overwrites real records), saved with :func:`embdiag.artifacts.save`:
``record.csv`` (one row: status, timings, final metrics and floors), ``trajectory.csv``
(one row per evaluation) and, for finished runs, the final train and validation
embeddings stored as float16 offsets from a float32 ``center`` (the training mean; read
them with :func:`load_embeddings`). Each seed also gets an untrained reference
``untrained-s<seed>``: the step-0 encoder, identical in every condition. The manifest's
parameters hold the full configuration, the data parameters and :func:`code_digest`, so
changed settings or training code make a record stale and the sweep reruns it. The data
parameters hold the digest of the scenes' bytes, and the sweep notes in
``training/renderings.json`` (:data:`RENDERINGS`) which scene artifacts (generator code and
parameters) and float path each digest was rendered from: on another float path the same
generator renders a few pixel values one level apart, and such records are not stale. Complete
records are skipped; interrupted runs resume from their checkpoint under
``cache/training/<label>/`` (not committed).

Runs go to ``workers`` spawned processes, each on one thread (two single-threaded
processes use the 2-core CPU far better than one process on two threads), or with
``cluster`` to a Ray cluster, one task per run (:mod:`embdiag.cluster`). Progress goes
to stderr: every tenth of a run, and one line per finished run with its time.

    python -m embdiag.training.sweep --profile cpu --workers 2
    embdiag train --profile study --cluster auto --root /shared/embdiag-data
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Iterable, NamedTuple

import numpy as np
import pandas as pd

from .. import artifacts, floatpath
from .._validate import check_int
from ..data.procedural import artifact_name, split_params
from ..metrics.stats import paired_t_interval
from .conditions import COMPARISONS, CONDITIONS, SEEDS, Condition, condition
from .config import PROFILES, TrainConfig, profile as get_profile
from .inputs import ATTRIBUTES, data_params, load_training_data

__all__ = [
    "UNTRAINED",
    "RESULT_FILES",
    "RENDERINGS",
    "DEVICES",
    "GPU_SHARE",
    "code_digest",
    "run_label",
    "run_sweep",
    "load_records",
    "load_trajectories",
    "load_embeddings",
    "paired_seeds",
    "paired_differences",
    "paired_table",
    "add_arguments",
    "main",
]

UNTRAINED = "Untrained (step 0)"
RESULT_FILES = (
    "checkpoint.py",
    "conditions.py",
    "config.py",
    "ema.py",
    "evaluate.py",
    "inputs.py",
    "loop.py",
    "losses.py",
    "masks.py",
    "models.py",
    "seeding.py",
)
#: Under the data root: ``{content digest: {"scenes": [[artifact names], ...], "float_path": ...}}``.
RENDERINGS = "training/renderings.json"
GEOMETRY = ("total_variance", "mean_cosine", "rankme", "participation_ratio")
PER_ATTRIBUTE = ("accuracy", "BA", "P@10")


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """Digest of the modules that determine a run's results (not this orchestration module)."""
    here = Path(__file__).resolve().parent
    return artifacts.source_digest(*(here / name for name in RESULT_FILES))


#: Where runs train; records made on a GPU (bfloat16 autocast) go to their own folder.
DEVICES = ("cpu", "cuda")
#: With ``device="cuda"`` on a cluster, the share of one GPU each run asks for (four small runs per GPU).
GPU_SHARE = 0.25


def _data_params(cfg, root) -> dict:
    """:func:`~embdiag.training.inputs.data_params`, the scenes it may render on first use left
    out of the read log: a record's staleness key is not an input of the page that reads it."""
    with artifacts.unrecorded():
        return data_params(cfg, None if root is None else str(root))


def run_label(profile: str, steps: int | None = None, device: str = "cpu") -> str:
    """Records folder of a profile: its name, ``<profile>-steps<N>`` for a non-default ``steps``,
    and ``-cuda`` appended for runs trained on a GPU."""
    if profile not in PROFILES:
        raise ValueError(f"profile: expected one of {tuple(PROFILES)}, got {profile!r}")
    if device not in DEVICES:
        raise ValueError(f"device: expected one of {DEVICES}, got {device!r}")
    label = profile if steps is None or steps == PROFILES[profile].steps else f"{profile}-steps{steps}"
    return label if device == "cpu" else f"{label}-{device}"


def _parse_label(label: str) -> tuple[str, int | None, str]:
    label, cuda, _ = label.partition("-cuda")
    name, _, steps = label.partition("-steps")
    return name, int(steps) if steps else None, "cuda" if cuda else "cpu"


def _slug(condition_name: str) -> str:
    return "untrained" if condition_name == UNTRAINED else condition(condition_name).slug


def _params(cfg: TrainConfig, label: str, condition_name: str, seed: int, root=None) -> dict:
    device = _parse_label(label)[2]
    return {
        "label": label,
        "condition": condition_name,
        "seed": seed,
        "config": cfg.to_dict(),
        "data": _data_params(cfg.data, root),
        "code": code_digest(),
        **({"device": device} if device != "cpu" else {}),
    }


class Task(NamedTuple):
    label: str
    condition: str  # a condition name or UNTRAINED
    seed: int

    @property
    def name(self) -> str:
        return f"training/{self.label}/{_slug(self.condition)}-s{self.seed}"

    def config(self) -> TrainConfig:
        profile, steps, _ = _parse_label(self.label)
        return get_profile(profile, steps=steps) if steps else get_profile(profile)

    @property
    def device(self) -> str:
        return _parse_label(self.label)[2]


def _scene_names(data: dict) -> list[str]:
    """The scene artifacts (generator code and parameters in their names) that ``data``, a
    record's data parameters, reads: train, val, pool."""
    return [
        artifact_name(
            split_params(
                split,
                data[f"n_{split}"],
                seed=data["seed"],
                image_size=data["source_size"],
                difficulty=data["difficulty"],
            )
        )
        for split in ("train", "val", "pool")
    ]


def _renderings_path(root) -> Path:
    return Path(root if root is not None else artifacts.data_dir()) / RENDERINGS


def _renderings(root) -> dict:
    path = _renderings_path(root)
    return json.loads(path.read_text()) if path.exists() else {}


def _note_rendering(data: dict, root) -> None:
    """Record in :data:`RENDERINGS` which scenes and float path ``data["content"]`` was rendered
    from: the first float path is kept, and scene names are added when an edit of the generator
    renames the scenes but leaves their bytes (so their digest) unchanged."""
    notes = _renderings(root)
    names = _scene_names(data)
    note = notes.setdefault(data["content"], {"scenes": [], "float_path": floatpath.current()})
    if names in note["scenes"]:
        return
    note["scenes"].append(names)
    path = _renderings_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(notes, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def _rendered_elsewhere(stored: dict, params: dict, root) -> bool:
    """Whether a record made with ``stored`` parameters differs from ``params`` only in the digest
    of the scenes' bytes, and those scenes came from the same generator and parameters on
    another float path (per :data:`RENDERINGS`)."""
    data = stored.get("data")
    if not isinstance(data, dict) or "content" not in data:
        return False
    same = json.loads(json.dumps({**stored, "data": {**data, "content": params["data"]["content"]}}, sort_keys=True))
    note = _renderings(root).get(data["content"])
    return (
        same == json.loads(json.dumps(params, sort_keys=True))
        and note is not None
        and _scene_names(params["data"]) in note["scenes"]
        and note["float_path"] != floatpath.current()
    )


def _load_record(name: str, params: dict, root) -> dict:
    """``artifacts.load`` of a record, accepting one rendered on another float path
    (:func:`_rendered_elsewhere`); a stale or corrupt one raises as there."""
    try:
        return artifacts.load(name, params, root=root, mmap=True)
    except artifacts.StaleArtifactError:
        if not _rendered_elsewhere(artifacts.manifest(name, root=root)["params"], params, root):
            raise
        return artifacts.load(name, root=root, mmap=True)


def _is_done(task: Task, root) -> bool:
    try:
        _load_record(task.name, _params(task.config(), task.label, task.condition, task.seed, root), root)
        return True
    except artifacts.CorruptArtifactError as e:
        print(f"{task.name}: {e}; rerunning", file=sys.stderr)
        return False
    except artifacts.ArtifactError:
        return False


def _embedding_arrays(record: dict) -> dict:
    train, val = record["train_embeddings"], record["val_embeddings"]
    if train is None:
        return {}
    center = train.mean(axis=0, dtype=np.float64).astype(np.float32)
    small = max(np.abs(train - center).max(), np.abs(val - center).max()) < 6e4
    dtype = np.float16 if small else np.float32
    return {
        "center": center,
        "train_embeddings": (train - center).astype(dtype),
        "val_embeddings": (val - center).astype(dtype),
    }


@functools.lru_cache(maxsize=1)
def _training_data(data_cfg, image_size: int, root):
    return load_training_data(data_cfg, image_size, root)


@contextlib.contextmanager
def _one_thread():
    """Run the block on one thread of torch and BLAS, then restore: every run trains so (in
    this process, a worker process or a Ray worker), because a float sum over more threads
    rounds differently and the records would depend on where a run went."""
    import torch
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            yield
    finally:
        torch.set_num_threads(threads)


def _execute(task: Task, root, progress: bool) -> dict:
    """Run (or resume) one task and save its artifact; returns its record row."""
    from .evaluate import evaluate_encoder, floors
    from .loop import initial_encoder, train

    t0 = time.perf_counter()
    cfg = task.config()
    data = _training_data(cfg.data, cfg.model.image_size, root)
    if task.condition == UNTRAINED:
        metrics, train_emb, val_emb = evaluate_encoder(initial_encoder(cfg, task.seed).to(task.device), data)
        record = {
            "status": "ok",
            "reason": "",
            "steps_done": 0,
            "metrics": {**metrics, **floors(data)},
            "trajectory": [{"step": 0, **metrics}],
            "train_embeddings": train_emb,
            "val_embeddings": val_emb,
            "resumed_from": 0,
            "train_seconds": 0.0,
            "eval_seconds": time.perf_counter() - t0,
            "seconds_per_step": float("nan"),
        }
    else:
        every = max(1, cfg.steps // 10)
        tag = f"{_slug(task.condition)} s{task.seed}"

        def report(step, info):
            if progress and (step % every == 0 or step == cfg.steps):
                print(
                    f"    {tag}: step {step}/{cfg.steps}  loss {info['loss']:.4f}  ({time.perf_counter() - t0:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )

        work = Path(root if root is not None else artifacts.data_dir()) / "cache" / task.name
        record = train(cfg, condition(task.condition), task.seed, work, data=data, progress=report, device=task.device)
    row = {
        "label": task.label,
        "profile": cfg.profile,
        "condition": task.condition,
        "seed": task.seed,
        "status": record["status"],
        "reason": record["reason"],
        "steps": cfg.steps if task.condition != UNTRAINED else 0,
        "steps_done": record["steps_done"],
        "resumed_from": record["resumed_from"],
        "train_seconds": record["train_seconds"],
        "eval_seconds": record["eval_seconds"],
        "seconds_per_step": record["seconds_per_step"],
        "wall_seconds": time.perf_counter() - t0,
        **record["metrics"],
    }
    trajectory = pd.DataFrame(record["trajectory"]) if record["trajectory"] else pd.DataFrame(columns=["step"])
    artifacts.save(
        task.name,
        {"record": pd.DataFrame([row]), "trajectory": trajectory, **_embedding_arrays(record)},
        _params(cfg, task.label, task.condition, task.seed, root),
        command=f"python -m embdiag.training.sweep --profile {cfg.profile} --steps {cfg.steps} "
        f"--conditions '{task.condition}' --seeds {task.seed}"
        + (f" --device {task.device}" if task.device != "cpu" else ""),
        root=root,
    )
    if task.condition != UNTRAINED:
        shutil.rmtree(work, ignore_errors=True)
    return row


def _execute_on_one_thread(task: Task, root, progress: bool) -> dict:
    """:func:`_execute` on one thread (:func:`_one_thread`): what a worker process or a Ray
    task runs."""
    with _one_thread():
        return _execute(task, root, progress)


def _tasks(label: str, conditions: Iterable[Condition], seeds: Iterable[int]) -> list[Task]:
    tasks = [Task(label, UNTRAINED, s) for s in seeds]
    return tasks + [Task(label, c.name, s) for s in seeds for c in conditions]


def run_sweep(
    profile: str = "cpu",
    conditions=None,
    seeds=None,
    steps: int | None = None,
    workers: int = 2,
    root=None,
    progress: bool = True,
    cluster: str | None = None,
    device: str = "cpu",
) -> pd.DataFrame:
    """Run every missing or stale run of ``profile`` (``conditions``: names or slugs, default
    all seven; ``seeds``: default ``SEEDS``; ``steps``: override the profile's) plus the
    untrained reference of each seed, on ``workers`` processes (1: in this process, on one
    thread like a worker, so that the records are the same), or with
    ``cluster`` (an address of :func:`embdiag.cluster.parse_address`) as one Ray task per run
    asking for one CPU, and :data:`GPU_SHARE` of a GPU with ``device="cuda"`` (``workers``
    unused), writing to ``root`` (default the data root), which every node must see (checked
    first). Either way finished runs are skipped, interrupted ones resume from their
    checkpoint (also when Ray retries a run whose worker died) and the records are the same.
    Returns :func:`load_records` of the label."""
    workers = check_int(workers, "workers", minimum=1)
    if cluster is not None:
        from ..cluster import parse_address

        parse_address(cluster)
    label = run_label(profile, steps, device)
    conds = CONDITIONS if conditions is None else tuple(condition(c) for c in conditions)
    seeds = [check_int(s, "seeds", minimum=0) for s in (SEEDS if seeds is None else seeds)]
    root = str(root) if root is not None else None
    tasks = _tasks(label, conds, seeds)
    todo = [t for t in tasks if not _is_done(t, root)]  # also generates and caches the scenes, once
    for cfg in {t.config().data for t in tasks}:
        _note_rendering(data_params(cfg, root), root)
    say = (lambda msg: print(msg, file=sys.stderr, flush=True)) if progress else (lambda msg: None)
    say(
        f"sweep {label}: {len(tasks)} runs, {len(tasks) - len(todo)} complete, {len(todo)} to run "
        + (f"on the Ray cluster {cluster}" if cluster is not None else f"on {workers} worker(s)")
    )
    t0 = time.perf_counter()
    finished = []

    def done(_, row):
        finished.append(row)
        say(
            f"[{len(finished):>2}/{len(todo)}] {_slug(row['condition'])} s{row['seed']}: {row['status']} "
            f"in {row['wall_seconds']:.0f} s  (sweep {time.perf_counter() - t0:.0f} s)"
            + (f"  {row['reason']}" if row["reason"] else "")
        )

    if cluster is not None and todo:
        from .. import cluster as ray_cluster

        shared = str(Path(root if root is not None else artifacts.data_dir()).resolve())
        with ray_cluster.connect(cluster):
            ray_cluster.check_shared(shared)
            ray_cluster.run_tasks(
                _execute_on_one_thread,
                [(t, shared, progress) for t in todo],
                on_result=done,
                num_gpus=GPU_SHARE if device == "cuda" else 0,
            )
    elif workers == 1:
        for i, task in enumerate(todo):
            done(i, _execute_on_one_thread(task, root, progress))
    elif todo:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(_execute_on_one_thread, t, root, progress) for t in todo]
            for i, f in enumerate(as_completed(futures)):
                done(i, f.result())
    return load_records(label, root=root)


def load_records(profile: str, root=None, conditions: Iterable[str] | None = None) -> pd.DataFrame:
    """One row per saved run of ``profile`` (a label, e.g. ``cpu``), untrained references first,
    then the conditions in the study's order, by seed; with ``conditions`` (names), the runs of
    those only (the others are not read, so a page that reads these does not change when another
    condition's run is added). Columns: ``condition``, ``seed``, ``status``, ``stale`` (made with
    other settings or code than the current ones), timings, final metrics and floors. Checksums
    are verified."""
    root_path = Path(root) if root is not None else artifacts.data_dir()
    folder = root_path / "training" / profile
    wanted = None if conditions is None else set(conditions)
    rows = []
    for manifest in sorted(folder.glob("*/" + artifacts.MANIFEST)):
        name = f"training/{profile}/{manifest.parent.name}"
        p = artifacts.manifest(name, root=root_path)["params"]
        if wanted is not None and p["condition"] not in wanted:
            continue
        try:
            record = _load_record(
                name,
                _params(Task(profile, p["condition"], p["seed"]).config(), profile, p["condition"], p["seed"], root),
                root_path,
            )["record"]
            stale = False
        except artifacts.StaleArtifactError:
            record, stale = artifacts.load(name, root=root_path, mmap=True)["record"], True
        row = {**record.iloc[0].to_dict(), "stale": stale}
        row["reason"] = row["reason"] if isinstance(row["reason"], str) else ""
        rows.append(row)
    if not rows:
        return pd.DataFrame(columns=["condition", "seed", "status", "stale"])
    df = pd.DataFrame(rows)
    order = {name: i for i, name in enumerate([UNTRAINED] + [c.name for c in CONDITIONS])}
    df = df.sort_values(["condition", "seed"], key=lambda s: s.map(order) if s.name == "condition" else s)
    return df.reset_index(drop=True)


def load_trajectories(profile: str, root=None) -> pd.DataFrame:
    """Every saved run's evaluations during training (``trajectory.csv``), one row per run and
    evaluated step, with ``condition`` and ``seed``; untrained references contribute step 0."""
    root_path = Path(root) if root is not None else artifacts.data_dir()
    parts = []
    for manifest in sorted((root_path / "training" / profile).glob("*/" + artifacts.MANIFEST)):
        name = f"training/{profile}/{manifest.parent.name}"
        p = artifacts.manifest(name, root=root_path)["params"]
        trajectory = artifacts.load(name, root=root_path, mmap=True)["trajectory"]
        parts.append(trajectory.assign(condition=p["condition"], seed=p["seed"]))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["condition", "seed", "step"])


def load_embeddings(profile: str, condition_name: str, seed: int, root=None) -> tuple[np.ndarray, np.ndarray]:
    """Final (train, val) float32 embeddings of one run (``condition_name`` may be ``UNTRAINED``)."""
    a = artifacts.load(Task(profile, condition_name, seed).name, root=root)
    if "center" not in a:
        raise ValueError(f"{condition_name} s{seed}: the run failed and has no embeddings")
    c = a["center"].astype(np.float32)
    return a["train_embeddings"].astype(np.float32) + c, a["val_embeddings"].astype(np.float32) + c


def paired_seeds(runs: pd.DataFrame, a: str, b: str, column: str) -> tuple[list, pd.Series, pd.Series, tuple]:
    """Condition ``a`` minus ``b`` in ``column``, seed by seed, over the seeds both have among
    ``runs``: ``(seeds, a by seed, b by seed, (mean, low, high))`` with the paired Student-t 95%
    interval (NaN bounds below two seeds; with none, the mean is NaN too)."""
    x = runs[runs["condition"] == a].set_index("seed")[column]
    y = runs[runs["condition"] == b].set_index("seed")[column]
    seeds = sorted(set(x.index) & set(y.index))
    if len(seeds) >= 2:
        iv = paired_t_interval(x[seeds].to_numpy(), y[seeds].to_numpy())
        return seeds, x, y, (iv.mean, iv.low, iv.high)
    return seeds, x, y, (float(x[seeds].sum() - y[seeds].sum()) if seeds else np.nan, np.nan, np.nan)


def paired_differences(df: pd.DataFrame, metric: str, attribute: str | None = None) -> pd.DataFrame:
    """The five declared comparisons (A minus B, seed by seed) of column ``"{attribute} {metric}"``
    (or ``metric`` for a geometry column), with paired Student-t 95% intervals.

    Only runs with status ``ok`` enter; a seed counts when both A and B have it. One row per
    comparison and seed: ``comparison``, ``A``, ``B``, ``metric``, ``attribute``, ``seed``,
    ``a``, ``b``, ``difference``, and the comparison's ``mean``, ``low``, ``high``, ``n``
    (NaN interval with fewer than two seeds).
    """
    column = f"{attribute} {metric}" if attribute else metric
    if column not in df.columns:
        raise ValueError(f"metric: no column {column!r} in the records")
    ok = df[df["status"] == "ok"]
    rows = []
    for comp in COMPARISONS:
        seeds, a, b, (mean, low, high) = paired_seeds(ok, comp.a, comp.b, column)
        for s in seeds:
            rows.append(
                {
                    "comparison": comp.label,
                    "A": comp.a,
                    "B": comp.b,
                    "metric": metric,
                    "attribute": attribute or "",
                    "seed": s,
                    "a": a[s],
                    "b": b[s],
                    "difference": a[s] - b[s],
                    "mean": mean,
                    "low": low,
                    "high": high,
                    "n": len(seeds),
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "comparison",
            "A",
            "B",
            "metric",
            "attribute",
            "seed",
            "a",
            "b",
            "difference",
            "mean",
            "low",
            "high",
            "n",
        ],
    )


def paired_table(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`paired_differences` for every geometry metric and every per-attribute metric."""
    parts = [paired_differences(df, m) for m in GEOMETRY]
    parts += [paired_differences(df, m, a) for a in ATTRIBUTES for m in PER_ATTRIBUTE]
    return pd.concat(parts, ignore_index=True)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The sweep's options (``embdiag train``)."""
    parser.add_argument("--profile", default="cpu", choices=tuple(PROFILES), help="compute profile (default: cpu)")
    parser.add_argument("--conditions", nargs="+", metavar="NAME", help="condition names or slugs (default: all seven)")
    parser.add_argument("--seeds", nargs="+", type=int, metavar="SEED", help=f"seeds (default: {list(SEEDS)})")
    parser.add_argument(
        "--steps",
        type=int,
        help="training steps (default: the profile's; other values are recorded under <profile>-steps<N>)",
    )
    parser.add_argument("--workers", type=int, default=2, help="single-threaded worker processes (default: 2)")
    parser.add_argument(
        "--root",
        type=Path,
        help="data root (default: the repository's data/); with --cluster a folder every node mounts",
    )
    parser.add_argument(
        "--device",
        default="cpu",
        choices=DEVICES,
        help="where runs train (default: cpu; cuda records go to <profile>-cuda)",
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run each run as a Ray task: auto (this machine's "
        "cluster), ray://HOST:PORT, or local[:N] (a Ray instance started here with N CPUs)",
    )
    return parser


def main(args: argparse.Namespace) -> int:
    """Run the sweep for parsed ``args``; print one line per run; 1 if any run failed."""
    df = run_sweep(
        args.profile,
        conditions=args.conditions,
        seeds=args.seeds,
        steps=args.steps,
        workers=args.workers,
        root=args.root,
        cluster=args.cluster,
        device=args.device,
    )
    cols = [
        c
        for c in ("condition", "seed", "status", "stale", "total_variance", "timeofday accuracy", "timeofday P@10")
        if c in df.columns
    ]
    with pd.option_context("display.width", 160, "display.max_rows", 100):
        print(df[cols].to_string(index=False))
    return int((df["status"] != "ok").any())


if __name__ == "__main__":
    from embdiag.training import sweep as _sweep  # so that worker processes unpickle the package's functions

    sys.exit(
        _sweep.main(
            _sweep.add_arguments(
                argparse.ArgumentParser(
                    prog="python -m embdiag.training.sweep", description="Run the JEPA training sweep."
                )
            ).parse_args()
        )
    )
