"""The exit statuses of every ``embdiag`` command: one contract, written once.

A CI job reads the status alone, so each number means one thing on every command:

* :data:`OK` (0): the command did what was asked;
* :data:`VIOLATED` (1): it ran to the end and the check it was asked for came out negative:
  ``report``, a ``--fail-if`` threshold violated (each violation printed); ``verify``, the
  recomputed report differs from its report.json or an input changed; ``embeddings``, the
  recomputed vectors differ from the committed ones (kept); ``train``, a run ended failed (its
  record says why);
* :data:`BAD_INPUT` (2): bad input, refused before anything is written: the message names the
  file, option or parameter as the user wrote it and what is wrong with it; or an output folder
  that cannot be written (a full disk, a read-only or forbidden folder), what it held kept;
* :data:`FAILED` (3): a defect of embdiag itself (a chapter's cell or the command raised for a
  reason that is not the input); the only status that prints a traceback. The output it was
  writing (a report folder, a chapter's page) is left as it was.

Stopped by SIGTERM, ``report``, ``chapter`` and ``vectors`` remove their temporaries, stop the
chapter kernel they started and exit :data:`TERMINATED` (143, 128 + 15: what a shell reports for
a process that SIGTERM ended), what they were writing left as it was or whole.

:func:`guarded` turns an unexpected exception into :data:`FAILED` with its traceback, so a crash
can never read as 0, 1 or 2.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import sys
import traceback
from typing import Callable

__all__ = ["OK", "VIOLATED", "BAD_INPUT", "FAILED", "TERMINATED", "CONTRACT", "COMMANDS", "guarded", "contract_table"]

OK, VIOLATED, BAD_INPUT, FAILED = 0, 1, 2, 3
#: The status of a command that SIGTERM stopped (128 + the signal's number, the shell's convention).
TERMINATED = 128 + signal.SIGTERM

#: What each status means (one line each).
CONTRACT = {
    OK: "done as asked",
    VIOLATED: "ran to the end and the check asked for came out negative (below, per command)",
    BAD_INPUT: "bad input, refused before anything is written, or an output folder that cannot be written "
    "(full, read-only), what it held kept; the message names the file, option or parameter as you wrote it",
    FAILED: "a defect of embdiag itself (the only status that prints a traceback); the output it was writing "
    "is left as it was",
}
#: Every command and what status 1 means for it (``None``: the command never exits 1).
COMMANDS = {
    "report": "a `--fail-if` threshold is violated (each violation printed)",
    "verify": "the recomputed report differs from its report.json, or an input's SHA-256 changed (each "
    "difference printed)",
    "chapter": None,
    "book": None,
    "vectors": None,
    "sync": None,
    "train": "a training run ended failed (its record says why)",
    "embeddings": "the recomputed vectors differ from the committed ones (which are kept)",
}


def contract_table() -> str:
    """The contract as a Markdown table: one row per status, then what 1 means per command."""
    rows = ["| status | meaning |", "|---|---|"]
    rows += [f"| {code} | {meaning} |" for code, meaning in CONTRACT.items()]
    ones = "; ".join(f"`{c}`: {m}" for c, m in COMMANDS.items() if m)
    never = ", ".join(f"`{c}`" for c, m in COMMANDS.items() if not m)
    return "\n".join(rows) + f"\n\nStatus 1: {ones}. {never} never exit 1."


#: Errors of the file system rather than of embdiag: no space or quota left, a file beyond the
#: size limit, a read-only file system, no permission.
STORAGE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM}


def is_storage_error(error: OSError) -> bool:
    """Whether ``error`` is the file system's (:data:`STORAGE_ERRORS`, or numpy's short write
    ``"N requested and M written"``, which carries no errno: a full disk)."""
    short = error.errno is None and re.fullmatch(r"\d+ requested and \d+ written", str(error))
    return error.errno in STORAGE_ERRORS or bool(short)


def storage_error_at(error: OSError, path) -> OSError:
    """The file system's ``error`` (:func:`is_storage_error`) naming ``path`` where it names no
    file (a write that fails after its file was opened names none); a short write as ENOSPC."""
    if error.filename:
        return error
    code = error.errno or errno.ENOSPC
    return OSError(code, error.strerror or os.strerror(code), str(path))


_ERRNO_TEXT = re.compile(r"\[Errno (\d+)\] ([^:]+)(?:: '(.*)')?")


def kernel_storage_error(ename: str, evalue: str) -> OSError | None:
    """The file system's error (:func:`is_storage_error`) that a chapter's kernel raised, from
    the name and message papermill reports (``OSError``, ``[Errno 28] No space left on device:
    'PATH'``), as an ``OSError`` again; None for any other error.

    Example:
        >>> e = kernel_storage_error("OSError", "[Errno 28] No space left on device: '/r/report.json'")
        >>> e.errno, e.strerror, e.filename
        (28, 'No space left on device', '/r/report.json')
        >>> kernel_storage_error("ValueError", "[Errno 28] x") is None
        True
    """
    if ename not in {"OSError", "IOError", "PermissionError"}:
        return None
    found = _ERRNO_TEXT.fullmatch(evalue.strip())
    error = OSError(int(found[1]), found[2], found[3]) if found else OSError(evalue.strip())
    return error if is_storage_error(error) else None


def guarded(command: Callable[[], int], prog: str = "embdiag") -> int:
    """Run ``command`` (returning a status); an exception that escapes it is a defect of
    embdiag: its traceback is printed and the status is :data:`FAILED`. An ``OSError`` of the
    file system (:data:`STORAGE_ERRORS`: a full disk, a read-only or forbidden folder) is the
    machine's, not embdiag's: one line naming the file, and :data:`BAD_INPUT`. ``SystemExit``
    and ``KeyboardInterrupt`` pass through."""
    try:
        return command()
    except OSError as error:
        if not is_storage_error(error):
            return _defect(prog)
        where = f" {error.filename}" if error.filename else ""
        print(
            f"{prog}: cannot write{where}: {error.strerror or f'a short write, {error}'} (a full disk or quota, "
            "or a read-only or forbidden folder)",
            file=sys.stderr,
        )
        return BAD_INPUT
    except Exception:  # noqa: BLE001 (every escaping exception is, by the contract, a defect)
        return _defect(prog)


def _defect(prog: str) -> int:
    """Print the exception being handled, as a defect of embdiag; :data:`FAILED`."""
    traceback.print_exc()
    print(f"{prog}: internal error (a defect of embdiag, not of your input): exit {FAILED}", file=sys.stderr)
    return FAILED
