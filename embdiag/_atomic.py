"""Writes that a full disk, a read-only folder or a kill at any moment cannot leave half done.

Everything is written under a hidden temporary name beside its target (:data:`TEMPORARY`,
listed in .gitignore), then renamed onto it: a reader, or a process killed meanwhile, sees the
old file or folder or the whole new one, and a write that fails removes its temporary.

A command's output folder (``--out``) follows three more rules: it never holds one of the
command's inputs nor the project's own folders (:func:`out_refusal`); one process at a time
writes it (:func:`claimed`, a lock beside it); and SIGTERM stops the command as an exception,
so its temporaries are removed and the chapter kernel it started is stopped
(:func:`terminable`, :func:`in_worker`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, Mapping

from .exits import TERMINATED

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
        with _uninterrupted():
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
    try:
        with _uninterrupted():
            os.replace(out, old / out.name)
            try:
                os.replace(tmp, out)
            except BaseException:
                os.replace(old / out.name, out)
                raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


# -- the rules of an output folder ----------------------------------------------------------------
def project_folders() -> list[Path]:
    """The folders the book and its pipeline own, resolved: ``book/``, ``notebooks/`` and
    ``data/`` of the checkout (where :func:`~embdiag._project.project_root` is one, holding
    ``_toc.yml`` and ``notebooks/``), and the artifacts' root ``$EMBDIAG_DATA`` where set."""
    from ._project import _is_root, project_root

    root = project_root()
    folders = [root / name for name in ("book", "notebooks", "data")] if _is_root(root) else []
    if os.environ.get("EMBDIAG_DATA"):
        folders.append(Path(os.environ["EMBDIAG_DATA"]))
    return [folder.expanduser().resolve() for folder in folders]


def _relation(a: Path, b: Path) -> str | None:
    """How the path ``a`` stands to ``b``: ``is``, ``lies inside``, ``holds``, or None."""
    if a == b:
        return "is"
    if b in a.parents:
        return "lies inside"
    if a in b.parents:
        return "holds"
    return None


def _spellings(path) -> set[Path]:
    """``path`` made absolute with its folder resolved (a link itself, as given) and with every
    link followed."""
    given = Path(os.path.abspath(Path(path).expanduser()))
    return {given.parent.resolve() / given.name, given.resolve()}


def out_refusal(out: Path, inputs: Mapping[str, object] | None = None, option: str = "--out") -> str | None:
    """Why the output folder ``out`` (resolved) may not be written, as an input error's message
    (``PATH (OPTION): what is wrong``), or None. An output folder never is, lies inside or holds
    one of :func:`project_folders`, and never holds an input: none of ``inputs`` (the option
    as the user wrote it -> the path as given; None where absent) is ``out`` or lies inside it,
    as given or with its links followed."""
    for folder in project_folders():
        relation = _relation(out, folder)
        if relation is not None:
            return (
                f"{out} ({option}): {relation} {folder}, a folder of the book and its pipeline (book/, "
                "notebooks/, data/); an output folder never holds them: choose one outside"
            )
    for name, path in (inputs or {}).items():
        if path is not None and any(_relation(p, out) in ("is", "lies inside") for p in _spellings(path)):
            return (
                f"{path} ({name}): lies inside {out} ({option}), the output folder; an output folder never "
                f"holds an input: choose another {option} or move the file out of it"
            )
    return None


#: The lock of an output folder ``NAME``: a hidden file beside it holding the writing process's
#: pid, removed when that process is done (named like a temporary: a killed run leaves nothing else).
LOCK = TEMPORARY + "lock"


class Busy(Exception):
    """Another process holds the lock of the output folder (:func:`claimed`)."""


@contextlib.contextmanager
def _locked(out: Path, option: str, inside: bool = False) -> Iterator[None]:
    """Within: this process holds ``flock`` on ``out``'s :data:`LOCK`, beside ``out`` (or, with
    ``inside``, in the existing folder ``out`` where its parent cannot be written); :class:`Busy`
    if another process does."""
    import fcntl

    path = out.parent / LOCK.format(name=out.name)
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:  # a folder that cannot be written: named as the user named it
            if inside and e.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and path.parent != out:
                path = out / LOCK.format(name=out.name)
                continue
            raise OSError(e.errno, e.strerror, str(out)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            who = f"another embdiag run (pid {holder})" if holder.isdigit() else "another embdiag run"
            raise Busy(f"{out} ({option}): {who} is writing this folder; wait for it, or choose another") from None
        try:
            current = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            current = False
        if current:
            break
        os.close(fd)  # the file of a run that ended meanwhile and removed it: lock a new one
    try:
        with contextlib.suppress(OSError):  # the pid only informs; the lock is the flock
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


@contextlib.contextmanager
def made(folder: Path) -> Iterator[Path]:
    """Within: ``folder`` and its parents exist. Those made here are removed again, deepest
    first, when the block raises and they are empty: a failed write leaves no new folder."""
    folder = Path(folder)
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield folder
    except BaseException:
        for p in missing:
            try:
                p.rmdir()
            except OSError:
                break
        raise


@contextlib.contextmanager
def claimed(out: Path, *, option: str = "--out", make: bool = False) -> Iterator[None]:
    """Within: ``out``'s parents exist (``out`` too with ``make``, a folder written into; those
    made are removed again if the block raises: :func:`made`), and this process alone writes
    ``out``: it holds the lock beside it (:data:`LOCK`; with ``make``, in ``out`` where its parent
    cannot be written), or :class:`Busy` names the process that does."""
    with made(out if make else out.parent), _locked(out, option, inside=make):
        yield


# -- SIGTERM --------------------------------------------------------------------------------------
_held = {"depth": 0, "pending": False}


def _stop(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one is enough: the clean-up is not cut short
    if _held["depth"]:
        _held["pending"] = True
        return
    raise SystemExit(TERMINATED)


@contextlib.contextmanager
def terminable() -> Iterator[None]:
    """Within (in the main thread): SIGTERM raises ``SystemExit(TERMINATED)``, once, so every
    finally-block runs and removes its temporaries before the command exits 143; a SIGTERM
    during a rename that puts an output in place (:func:`_uninterrupted`) waits for it. The
    previous handler is restored on leaving."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


@contextlib.contextmanager
def _uninterrupted() -> Iterator[None]:
    """Within: a SIGTERM (:func:`terminable`) waits until the block ends."""
    _held["depth"] += 1
    try:
        yield
    finally:
        _held["depth"] -= 1
        if not _held["depth"] and _held["pending"]:
            _held["pending"] = False
            raise SystemExit(TERMINATED)


def _descendants() -> set[int]:
    """The pids of this process's descendants (read from Linux's /proc; none elsewhere)."""
    children: dict[int, list[int]] = {}
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return set()
    for pid in entries:
        try:
            stat = Path("/proc", pid, "stat").read_text()
        except OSError:
            continue
        children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(pid))
    found, todo = set(), [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _running(pid: int) -> bool:
    try:
        return Path("/proc", str(pid), "stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    except (OSError, IndexError):
        return False


def _end(pids: set[int], grace: float = 2.0) -> None:
    """SIGTERM to ``pids``, then SIGKILL to those still running after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while any(map(_running, pids)) and time.monotonic() < deadline:
            time.sleep(0.05)


def in_worker(call: Callable[[], object]) -> object:
    """``call()`` in a worker thread while this thread waits for it, so that SIGTERM's
    exception (:func:`terminable`) and Ctrl-C's reach this thread while a papermill kernel runs
    (nbclient, run in the main thread, takes both signals for itself). When one comes, the
    processes ``call`` started (a chapter's kernel runs in a session of its own, which the
    signal does not reach) are stopped and ``call`` is waited for, so that nothing writes after
    the exception goes on to the finally-blocks that remove the temporaries."""
    before = _descendants()
    outcome: dict = {}
    done = threading.Event()  # not Thread.join: interrupted, it can mark a running thread stopped

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the waiting thread
            outcome["error"] = error
        finally:
            done.set()

    threading.Thread(target=run, name="embdiag-kernel", daemon=True).start()
    try:
        done.wait()
    except BaseException:
        deadline = time.monotonic() + 60
        while not done.is_set() and time.monotonic() < deadline:
            _end(_descendants() - before)
            done.wait(0.5)
        raise
    if "error" in outcome:
        raise outcome.pop("error")
    return outcome["value"]
