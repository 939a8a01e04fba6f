"""Fault injection for the output-folder tests (tests/test_output_faults.py), loaded by any Python
process started with this folder on PYTHONPATH (chapter kernels too).

``EMBDIAG_READONLY=DIR``: every write under DIR (an open for writing, mkdir, rename, replace,
remove, rmdir, symlink, link, truncate, chmod) raises ``OSError(EROFS)``, as on a read-only
mount, through an audit hook (PEP 578: the events Python raises before the system call).
"""

import errno
import os
import sys

_ROOT = os.environ.get("EMBDIAG_READONLY")
_WRITES = {
    "os.mkdir",
    "os.rename",
    "os.replace",
    "os.remove",
    "os.rmdir",
    "os.symlink",
    "os.link",
    "os.truncate",
    "os.chmod",
    "os.utime",
    "shutil.rmtree",
    "shutil.move",
    "shutil.copyfile",
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _inside(path) -> bool:
    try:
        p = os.path.abspath(os.fsdecode(path)) if not isinstance(path, int) else None
    except TypeError:
        return False
    return p is not None and (p == _ROOT or p.startswith(_ROOT + os.sep))


def _hook(event, args):
    if event == "open":
        path, mode, flags = args
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        paths = [path] if writes else []
    elif event in _WRITES:
        paths = [a for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))]
    else:
        return
    for p in paths:
        if _inside(p):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(p))


if _ROOT:
    _ROOT = os.path.abspath(_ROOT)
    sys.addaudithook(_hook)
