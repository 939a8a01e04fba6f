"""Cached artifacts with a manifest of checksums and the parameters that made them.

An artifact is a folder ``<root>/<name>/`` of ``.npy`` arrays, ``.csv`` tables (pandas
DataFrames, floats written at full precision) and raw files (``bytes`` stored under their
key, which must carry a suffix, e.g. ``weights.safetensors``) plus ``manifest.json``
recording each file's SHA-256, shape and dtype, the parameters that produced it and the
command that regenerates it. Loading verifies every checksum and compares the stored
parameters with the requested ones, so a corrupt or stale artifact raises instead of
being used. Writes go to a temporary sibling folder that is renamed into place only when
complete: a failed build leaves nothing half-written.

Every successful :func:`load` is noted in a process-level *read log* (:func:`reads`), as is
every committed plain file a reader declares with :func:`record_read` (e.g. the study's
transcribed values), so that a chapter's figures can name the data they were made from.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from ._project import project_root

MANIFEST = "manifest.json"
#: Folder (under the data root) of regenerable entries; everything else under ``data/`` is committed.
CACHE = "cache"


class ArtifactError(ValueError):
    """An artifact is missing, corrupt, was made with other parameters or cannot be saved
    where asked."""


class MissingArtifactError(ArtifactError):
    """No artifact of that name exists."""


class CorruptArtifactError(ArtifactError):
    """A file is missing, is not a file, does not match the manifest's checksum or cannot be
    read as what it claims to be (e.g. a truncated ``.npy``)."""


class StaleArtifactError(ArtifactError):
    """The artifact was made with parameters other than the requested ones."""


def data_dir() -> Path:
    """Root for artifacts: ``$EMBDIAG_DATA``, else ``data/`` of :func:`~embdiag._project.project_root`."""
    env = os.environ.get("EMBDIAG_DATA")
    return Path(env) if env else project_root() / "data"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def source_digest(*paths: Path) -> str:
    """SHA-256 (16 hex digits) of source files: of each file given, and of every ``*.py``
    under each folder given (sorted). Put it in an artifact's parameters so that results
    made by older code are stale, never silently reused."""
    h = hashlib.sha256()
    for path in map(Path, paths):
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for f in files:
            h.update(f.relative_to(path.parent if path.is_dir() else f.parent).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _plain(value):
    """JSON form of a value JSON cannot write: numpy scalars and arrays as Python numbers
    and lists (so ``np.int64(10)`` equals ``10``), anything else as its ``str``."""
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    return str(value)


def _canonical(params: Mapping) -> dict:
    """Parameters as they round-trip through JSON (tuples become lists, numpy numbers plain)."""
    return json.loads(json.dumps(dict(params), sort_keys=True, default=_plain))


def save(
    name: str,
    arrays: Mapping[str, "np.ndarray | pd.DataFrame | bytes"],
    params: Mapping,
    *,
    command: str = "",
    root: Path | None = None,
) -> Path:
    """Write ``arrays`` (numpy arrays or DataFrames) as artifact ``name`` atomically; return its folder.

    Raises :class:`ArtifactError` when a file stands where the artifact's folder or one of
    its parents would be (it is left in place).
    """
    root = Path(root) if root is not None else data_dir()
    final = root / name
    blocker = next((p for p in (final, *final.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise ArtifactError(f"artifact {name!r}: cannot save to {final}: {blocker} is a file, not a folder")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        files = {}
        for key, arr in arrays.items():
            if isinstance(arr, bytes):
                if not Path(key).suffix:
                    raise ArtifactError(f"{name}/{key}: a raw file needs a key with a suffix (e.g. 'x.bin')")
                fname = key
                (tmp / fname).write_bytes(arr)
                meta = {"shape": [len(arr)], "dtype": "bytes"}
            elif isinstance(arr, pd.DataFrame):
                fname = f"{key}.csv"
                arr.to_csv(tmp / fname, index=False, float_format="%.17g")
                meta = {"shape": list(arr.shape), "dtype": "table"}
            else:
                arr = np.asarray(arr)
                if arr.dtype == object:
                    raise ArtifactError(f"{name}/{key}: object arrays cannot be stored safely")
                fname = f"{key}.npy"
                np.save(tmp / fname, arr, allow_pickle=False)
                meta = {"shape": list(arr.shape), "dtype": str(arr.dtype)}
            files[fname] = {"sha256": _sha256(tmp / fname), **meta}
        manifest = {"name": name, "params": _canonical(params), "command": command, "files": files}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def manifest(name: str, *, root: Path | None = None) -> dict:
    """The manifest of artifact ``name``.

    Raises :class:`MissingArtifactError` when there is none, :class:`CorruptArtifactError`
    when it cannot be read or lacks ``params`` or a well-formed ``files`` table.
    """
    root = Path(root) if root is not None else data_dir()
    path = root / name / MANIFEST
    if not path.exists():
        raise MissingArtifactError(f"artifact {name!r}: no manifest at {path}")
    try:
        m = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorruptArtifactError(f"artifact {name!r}: unreadable manifest {path}: {e}") from e
    problem = _manifest_problem(m)
    if problem:
        raise CorruptArtifactError(f"artifact {name!r}: malformed manifest {path}: {problem}")
    return m


def _manifest_problem(m) -> str:
    """What is wrong with a parsed manifest, or ``""``."""
    if not isinstance(m, dict):
        return f"expected a JSON object, got {type(m).__name__}"
    if not isinstance(m.get("params"), dict):
        return "no 'params' object"
    if not isinstance(m.get("files"), dict):
        return "no 'files' object"
    for fname, meta in m["files"].items():
        if Path(fname).name != fname or fname in ("", ".", "..", MANIFEST):
            return f"file name {fname!r} is not a plain name inside the artifact"
        if not (isinstance(meta, dict) and isinstance(meta.get("sha256"), str) and "dtype" in meta):
            return f"entry of {fname} lacks 'sha256' or 'dtype'"
    return ""


def load(name: str, params: Mapping | None = None, *, root: Path | None = None, mmap: bool = False) -> dict:
    """Load artifact ``name`` after verifying checksums and (if given) parameters."""
    root = Path(root) if root is not None else data_dir()
    m = manifest(name, root=root)
    if params is not None and m["params"] != _canonical(params):
        want, have = _canonical(params), m["params"]
        diff = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
        raise StaleArtifactError(
            f"artifact {name!r} was made with other parameters (differ in: {', '.join(diff)}); "
            f"regenerate it with: {m.get('command') or 'its build command'}"
        )
    regenerate = f"regenerate it with: {m.get('command') or 'its build command'}"
    out = {}
    for fname, meta in m["files"].items():
        path = root / name / fname
        if not path.exists():
            raise CorruptArtifactError(
                f"artifact {name!r}: file {fname} listed in the manifest is missing; {regenerate}"
            )
        if not path.is_file():
            raise CorruptArtifactError(
                f"artifact {name!r}: {fname} listed in the manifest is not a file ({path}); {regenerate}"
            )
        if _sha256(path) != meta["sha256"]:
            raise CorruptArtifactError(
                f"artifact {name!r}: checksum mismatch for {fname}; the file is corrupt; {regenerate}"
            )
        try:
            if meta["dtype"] == "bytes":
                out[fname] = path.read_bytes()
            elif fname.endswith(".csv"):
                out[fname[:-4]] = pd.read_csv(path)
            else:
                out[fname[:-4]] = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:  # a file the manifest's checksum vouches for, unreadable
            raise CorruptArtifactError(f"artifact {name!r}: {fname} is corrupt ({path}: {e}); {regenerate}") from e
    _log(Read(display_path(root / name), _sha256(root / name / MANIFEST)))
    return out


def is_regenerable(name: str) -> bool:
    """Whether artifact ``name`` is a regenerable cache entry (under ``cache/``, not committed)."""
    return Path(name).parts[:1] == (CACHE,)


def cached(
    name: str,
    params: Mapping,
    build: Callable[[], Mapping[str, np.ndarray]],
    *,
    command: str = "",
    root: Path | None = None,
) -> dict[str, np.ndarray]:
    """Load artifact ``name`` if present with these ``params``, else build, save and return it.

    A stale artifact (other parameters) is rebuilt. A corrupt one is rebuilt, with a note on
    stderr, only when it is a regenerable cache entry (:func:`is_regenerable`); a corrupt
    committed artifact raises with the command that regenerates it.
    """
    try:
        return load(name, params, root=root)
    except (MissingArtifactError, StaleArtifactError):
        pass
    except CorruptArtifactError as e:
        if not is_regenerable(name):
            raise
        print(f"embdiag: rebuilding a corrupt cache entry ({e})", file=sys.stderr)
    save(name, build(), params, command=command, root=root)
    return load(name, params, root=root)


# -- the read log ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Read:
    """One input a process read: ``path`` as shown to a reader (see :func:`display_path`) and
    ``sha256``, of the file itself, or of an artifact's ``manifest.json`` (which holds the
    checksum of each of its files and the parameters that made it)."""

    path: str
    sha256: str


_READS: dict[str, Read] = {}


def _log(read: Read) -> None:
    """Note ``read``; a path read again keeps its first place and takes the latest checksum."""
    _READS[read.path] = read


def display_path(path: Path) -> str:
    """``path`` as a reader of the book sees it: relative to the project root when inside it
    (``data/study/storage.csv``); inside the data root, as ``data/<name>`` (wherever
    ``$EMBDIAG_DATA`` puts it); else absolute."""
    path = Path(path).resolve()
    for base, prefix in ((project_root().resolve(), ""), (data_dir().resolve(), "data/")):
        if path.is_relative_to(base):
            return prefix + path.relative_to(base).as_posix()
    return path.as_posix()


def _locate(path) -> Path:
    """An existing file or folder for ``path``: as given if absolute; else relative to the project
    root, or, for ``data/...``, to the data root. Raises ``ValueError`` naming the path."""
    path = Path(path)
    candidates = [path] if path.is_absolute() else [project_root() / path]
    if not path.is_absolute() and path.parts[:1] == ("data",):
        candidates.append(data_dir().joinpath(*path.parts[1:]))
    found = next((p for p in candidates if p.exists()), None)
    if found is None:
        raise ValueError(f"path: no such file or artifact folder {path} (looked at {', '.join(map(str, candidates))})")
    return found


def describe(path) -> Read:
    """The :class:`Read` of a file (its SHA-256) or an artifact folder (the SHA-256 of its manifest)."""
    found = _locate(path)
    if found.is_dir():
        if not (found / MANIFEST).is_file():
            raise ValueError(f"path: folder {found} is not an artifact (no {MANIFEST})")
        return Read(display_path(found), _sha256(found / MANIFEST))
    return Read(display_path(found), _sha256(found))


def record_read(path) -> Read:
    """Note in the read log that this process read ``path`` (a committed plain file, e.g.
    ``data/study/storage.csv``, or an artifact folder); return its :class:`Read`. Artifacts
    loaded with :func:`load` are noted without this call."""
    read = describe(path)
    _log(read)
    return read


@contextlib.contextmanager
def unrecorded():
    """Inside the block, loads are not noted in the read log (for work that checks an input's
    identity, such as a staleness key, without the page using what it read)."""
    saved = dict(_READS)
    try:
        yield
    finally:
        _READS.clear()
        _READS.update(saved)


def reads() -> list[Read]:
    """Every input this process has read so far (:func:`load` and :func:`record_read`), in the
    order first read, each path once."""
    return list(_READS.values())


def clear_reads() -> None:
    """Empty the read log (for tests, and for a process that starts a new piece of work)."""
    _READS.clear()


def inventory(root: Path | None = None) -> pd.DataFrame:
    """The committed inputs under the data root (everything but ``cache/``), one row each:
    every artifact folder (``path``, ``sha256`` of its manifest, its number of ``files`` and
    their ``bytes``, the ``command`` that regenerates it) and every plain file outside an
    artifact (its own ``sha256``; ``command`` empty). Sorted by path; the checksums are those
    a provenance line under a figure shows (:func:`describe`)."""
    root = Path(root) if root is not None else data_dir()
    rows, folders = [], set()
    for path in sorted(root.rglob(MANIFEST)):
        rel = path.parent.relative_to(root)
        if rel.parts[:1] == (CACHE,):
            continue
        folders.add(path.parent)
        m = manifest(rel.as_posix(), root=root)
        files = [path.parent / f for f in m["files"]]
        rows.append(
            {
                "path": f"data/{rel.as_posix()}",
                "sha256": _sha256(path),
                "files": len(files),
                "bytes": sum(f.stat().st_size for f in files if f.exists()),
                "command": m.get("command", ""),
            }
        )
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if rel.parts[:1] == (CACHE,) or any(parent in folders for parent in path.parents):
            continue
        rows.append(
            {
                "path": f"data/{rel.as_posix()}",
                "sha256": _sha256(path),
                "files": 1,
                "bytes": path.stat().st_size,
                "command": "",
            }
        )
    return pd.DataFrame(rows, columns=["path", "sha256", "files", "bytes", "command"]).sort_values(
        "path", ignore_index=True
    )
