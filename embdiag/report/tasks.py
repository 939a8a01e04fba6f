"""The report's steps run as tasks: one after another, or two (or more) at a time, each
single-threaded, with the same results either way (a task reads only its inputs, never another
task's result). Exceptions are handed back as results, so the caller decides which to raise."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed

from .._blas import single_thread

__all__ = ["outcome", "run_tasks"]


def outcome(task: Callable):
    """``task()``, or the exception it raised (returned, not raised)."""
    try:
        return task()
    except Exception as e:  # noqa: BLE001 - handed back to the caller, who raises it or reads it
        return e


def run_tasks(tasks: dict, workers: int, done: Callable) -> dict:
    """Each task's result (or the exception it raised), by key; ``done(key)`` as each finishes.
    With ``workers`` > 1 the tasks run that many at a time on threads, each single-threaded (BLAS
    limited to one thread; FAISS builds run on one thread, except an HNSW graph, built on every
    FAISS thread with the same result), one per core; else one after
    another here, BLAS on every core. A task's result does not depend on which way it ran, nor on
    the others (no task reads another's).

    Example:
        >>> finished = []
        >>> out = run_tasks({"a": lambda: 1, "b": lambda: 1 / 0}, 2, finished.append)
        >>> out["a"], type(out["b"]).__name__, sorted(finished)
        (1, 'ZeroDivisionError', ['a', 'b'])
    """
    out = {}
    if workers < 2 or len(tasks) < 2:
        for key, task in tasks.items():
            out[key] = outcome(task)
            done(key)
        return out
    with single_thread(), ThreadPoolExecutor(workers) as pool:
        futures = {pool.submit(outcome, task): key for key, task in tasks.items()}
        for future in as_completed(futures):
            out[futures[future]] = future.result()
            done(futures[future])
    return out
