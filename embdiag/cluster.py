"""Ray, for work that outgrows one machine: connect to a cluster, run tasks on it, check storage.

``--cluster`` addresses (:func:`parse_address`):

- ``auto``: the Ray cluster this machine belongs to (started with ``ray start``);
- ``ray://HOST:PORT``: a remote cluster through the Ray Client;
- ``local`` or ``local:N``: a Ray instance started here for the command, with N CPUs (default:
  all), and stopped after it: the cluster path on one machine (the tests use ``local:2``).

Every node needs the same ``embdiag`` installed; files that tasks write go to a folder every
node mounts, which :func:`check_shared` proves before any work is sent. A task whose worker
dies (a node lost, a process killed) is retried by Ray up to ``max_retries`` times; an exception
raised by the task itself is not retried and reaches the caller.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import socket
from pathlib import Path
from typing import Callable, Iterator, Sequence

__all__ = ["parse_address", "connect", "maybe_connect", "run_tasks", "check_shared", "MAX_RETRIES"]

#: Retries of a task whose worker died (Ray's own count; the task itself must be safe to rerun).
MAX_RETRIES = 3

_ADDRESS = re.compile(r"auto|local(?::(\d+))?|ray://[^\s:/]+:\d+")


def parse_address(address: str) -> tuple[str, int | None]:
    """``(kind, cpus)``: ``("auto", None)``, ``("client", None)`` or ``("local", N or None)``.

    Raises:
        ValueError: naming ``--cluster`` and the accepted forms.
    """
    address = address.strip() if isinstance(address, str) else address
    m = _ADDRESS.fullmatch(address) if isinstance(address, str) else None
    if not m:
        raise ValueError(f"--cluster: expected auto, local, local:N or ray://HOST:PORT, got {address!r}")
    if address.startswith("local"):
        cpus = int(m.group(1)) if m.group(1) else None
        if cpus == 0:
            raise ValueError("--cluster: local:N needs N >= 1 CPUs")
        return "local", cpus
    return ("auto", None) if address == "auto" else ("client", None)


@contextlib.contextmanager
def connect(address: str) -> Iterator:
    """Connect to the cluster at ``address`` for the duration of the block; yields the ``ray`` module.

    A ``local`` instance is started (no dashboard) and shut down after the block; a connection
    made here to another cluster is closed after it. Every worker runs on the pinned float path
    (:mod:`embdiag.floatpath`), as local chapters and sweeps do. If Ray is already initialised in this
    process (e.g. by a test), that connection is used and left open.
    """
    kind, cpus = parse_address(address)
    address = address.strip()
    import ray

    if ray.is_initialized():
        yield ray
        return
    runtime_env = {"env_vars": _float_path_variables()}
    if kind == "local":
        ray.init(
            num_cpus=cpus or os.cpu_count(), include_dashboard=False, configure_logging=False, runtime_env=runtime_env
        )
    else:
        ray.init(address=address, configure_logging=False, runtime_env=runtime_env)
    try:
        yield ray
    finally:
        ray.shutdown()


def _float_path_variables() -> dict:
    """The pinned float path's variables for every task's worker (:mod:`embdiag.floatpath`;
    none when the pin is off or this machine has no pinned level)."""
    from .floatpath import PINNED, supported, wanted

    return dict(PINNED) if wanted() and supported() else {}


def maybe_connect(address: str | None):
    """:func:`connect` to ``address``, or a block that does nothing when it is None (the local path)."""
    return contextlib.nullcontext() if address is None else connect(address)


def run_tasks(
    fn: Callable,
    calls: Sequence[tuple],
    *,
    num_cpus: float = 1,
    num_gpus: float = 0,
    max_retries: int = MAX_RETRIES,
    on_result: Callable[[int, object], None] | None = None,
) -> list:
    """``[fn(*args) for args in calls]``, each call a Ray task with the given resources, on the
    connected cluster (:func:`connect`). Results are returned in the order of ``calls``;
    ``on_result(i, result)`` is called as each finishes. ``fn`` must be importable by the
    workers (a module-level function of an installed package).

    Raises:
        the first exception a task raised (a dead worker's task is retried first).
    """
    import ray

    remote = ray.remote(fn).options(
        num_cpus=num_cpus, num_gpus=num_gpus, max_retries=max_retries, retry_exceptions=False
    )
    index = {remote.remote(*args): i for i, args in enumerate(calls)}
    results: list = [None] * len(calls)
    pending = list(index)
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                i = index[ref]
                results[i] = ray.get(ref)
                if on_result is not None:
                    on_result(i, results[i])
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    return results


def _sees(path: str, token: str) -> str | None:
    """On a worker: None if ``path`` holds ``token``, else what went wrong there."""
    try:
        found = Path(path).read_text() == token
    except OSError as e:
        return f"{socket.gethostname()}: {type(e).__name__}: {e}"
    return None if found else f"{socket.gethostname()}: the file holds another token"


def check_shared(folder) -> None:
    """Prove that every node of the connected cluster sees ``folder`` as this process does.

    Writes a random token into ``folder``, reads it back in one task per node (each pinned to
    that node) and removes it.

    Raises:
        RuntimeError: naming the folder and the nodes that cannot read it.
    """
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    folder = Path(folder).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(16)
    probe = folder / f".embdiag-shared-{token[:8]}"
    probe.write_text(token)
    try:
        nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
        sees = ray.remote(_sees)
        problems = ray.get(
            [
                sees.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
                    str(probe), token
                )
                for node in nodes
            ]
        )
    finally:
        probe.unlink(missing_ok=True)
    bad = [p for p in problems if p]
    if bad:
        raise RuntimeError(
            f"{folder}: not readable from every node of the cluster ({'; '.join(bad)}); records must "
            "go to storage every node mounts (give --root on a shared file system)"
        )
