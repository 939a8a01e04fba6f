"""Writes that a full disk, a read-only folder or a kill at any moment cannot leave half done.

Everything is written under a hidden temporary name beside its target (:data:`TEMPORARY`,
listed in .gitignore), then renamed onto it: a reader, or a process killed meanwhile, sees the
old file or folder or the whole new one, and a write that fails removes its temporary.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Mapping

#: How the temporary files and folders of an unfinished write are named: a process killed
#: mid-write leaves at most these beside what it was replacing.
TEMPORARY = ".{name}.tmp-"


def write_files(writes: Mapping[Path, Callable[[str], object]]) -> None:
    """``write(path)`` for each target into a hidden temporary file beside it, then, once every
    one is written, one rename each onto the targets (a failed write renames none)."""
    done: dict[Path, str] = {}
    try:
        for target, write in writes.items():
            fd, tmp = tempfile.mkstemp(prefix=TEMPORARY.format(name=target.name), dir=target.parent)
            os.close(fd)
            done[target] = tmp
            write(tmp)
            os.chmod(tmp, 0o644)
        for target, tmp in done.items():
            os.replace(tmp, target)
    except BaseException:
        for tmp in done.values():
            Path(tmp).unlink(missing_ok=True)
        raise


def write_file(target: Path, write: Callable[[str], object]) -> None:
    """:func:`write_files` of one target."""
    write_files({Path(target): write})


def workspace(target: Path) -> Path:
    """A new private folder beside ``target`` (its parents made) to build ``target`` in."""
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=TEMPORARY.format(name=target.name), dir=target.parent))


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one step (Linux ``renameat2(RENAME_EXCHANGE)``);
    False where the system or the file system cannot, and nothing was moved."""
    import ctypes

    try:
        swap = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    swap.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_cwd, exchange = -100, 2  # AT_FDCWD, RENAME_EXCHANGE (linux/fcntl.h)
    return swap(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), exchange) == 0


def replace_folder(tmp: Path, out: Path) -> None:
    """Move the finished folder ``tmp`` to ``out``; a previous folder there is removed only
    after. Where the system can, the two are swapped in one step, so a process killed at any
    moment leaves ``out`` holding the previous folder or the new one, never neither."""
    if not out.exists():
        os.replace(tmp, out)
        return
    if _exchange(tmp, out):
        shutil.rmtree(tmp, ignore_errors=True)  # now the previous folder
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    os.replace(out, old / out.name)
    try:
        os.replace(tmp, out)
    except BaseException:
        os.replace(old / out.name, out)
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)
