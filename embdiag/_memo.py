"""A disk memo for the study sections' measurements, which several pages read.

A section's ``run`` (:mod:`embdiag.study`) is read by its chapter, the conclusions and the
real-encoder comparison alike; it measures once and :func:`memo` keeps each result in
``data/cache/memo/`` (a pickle and its SHA-256), keyed by ``joblib.hash`` of the arguments
(arrays by content, bound to the signature with its defaults) and of :func:`state`: the SHA-256
of every source file of the ``embdiag`` package, the float path's variables and the numeric
packages' versions. A change of code, of float path or of a package is a new key, never a stale
hit; a file whose checksum does not match is measured again. An argument named ``progress``
(what a measurement reports while it runs, not what it measures) is left out of the key.
``EMBDIAG_MEMO=off`` turns the memo off.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import pickle
import platform
from importlib import metadata
from pathlib import Path

from ._atomic import write_files
from .artifacts import data_dir

__all__ = ["memo", "state"]

_PACKAGE = Path(__file__).parent
_PACKAGES = ("numpy", "scipy", "scikit-learn", "torch", "faiss-cpu", "pandas")


@functools.lru_cache(maxsize=1)
def _sources() -> str:
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def state() -> str:
    """What a memoized result depends on beyond its arguments: the package's sources, the float
    path (its variables, and the CPU when unpinned) and the numeric packages' versions."""
    from . import floatpath

    versions = []
    for name in _PACKAGES:
        try:
            versions.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name}=absent")
    pinned = {key: os.environ.get(key, "") for key in sorted(floatpath.PINNED)}
    path = floatpath.current()
    machine = "" if path == floatpath.LEVEL else _cpu()
    return "|".join([_sources(), path, repr(pinned), machine, *versions])


@functools.lru_cache(maxsize=1)
def _cpu() -> str:
    """The CPU's model and flags (an unpinned float path depends on them)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.machine()
    keep = [line for line in lines if line.startswith(("model name", "flags"))][:2]
    return platform.machine() + " " + " ".join(keep)


def memo(fn):
    """``fn`` with its results kept on disk (module doc); the arguments must be hashable by
    ``joblib.hash`` (arrays, tables, numbers, strings, mappings of them). A result that cannot be
    written (a full disk, a read-only data folder) is returned all the same, not kept."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if os.environ.get("EMBDIAG_MEMO", "").lower() == "off":
            return fn(*args, **kwargs)
        import joblib

        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = {name: value for name, value in bound.arguments.items() if name != "progress"}
        key = joblib.hash((fn.__module__, fn.__qualname__, state(), arguments))
        path = data_dir() / "cache" / "memo" / f"{fn.__module__}.{fn.__qualname__}" / f"{key}.pkl"
        found = _read(path)
        if found is not _MISSING:
            return found
        result = fn(*args, **kwargs)
        _write(path, result)
        return result

    return wrapper


_MISSING = object()


def _read(path: Path):
    """The result kept at ``path`` when its SHA-256 matches the one written beside it, else _MISSING."""
    try:
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != path.with_suffix(".sha256").read_text().strip():
            return _MISSING
        return pickle.loads(data)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
        return _MISSING


def _write(path: Path, result) -> None:
    """Keep ``result`` at ``path`` and its SHA-256 beside it (both renamed into place at once)."""
    try:
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        path.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(data).hexdigest()
        write_files(
            {
                path.with_suffix(".sha256"): lambda p: Path(p).write_text(digest),
                path: lambda p: Path(p).write_bytes(data),
            }
        )
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        pass  # a memo that cannot be kept costs time, not a result
