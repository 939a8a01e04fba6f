"""The pinned float path: one instruction-set level for every chapter, report and sweep.

numpy, PyTorch (ATen), oneDNN, MKL, OpenBLAS and FAISS each pick their kernels for the CPU they
find, and kernels of different widths round float sums differently: the same chapter run
on an AVX-512 and on an AVX2 machine differs in the last bits, and sometimes in a
sentence. Like MKL's conditional numerical reproducibility mode (``MKL_CBWR``), the
project declares one level, :data:`LEVEL` (x86-64-v3: AVX2 and FMA, which every x86-64
CPU since 2013-2015 has), and runs chapter execution on it: the variables of
:data:`PINNED` cap every library at AVX2 kernels and at :data:`THREADS` threads (a float
sum split over more threads rounds differently). Any x86-64 machine with AVX2 then
re-executes the book byte for byte.

The ``embdiag`` command re-executes itself with these variables (:func:`ensure`), so
its papermill kernels, sweep workers and Ray tasks (:func:`environment`) inherit them;
``EMBDIAG_FLOAT_PATH=native`` turns the pin off (each library's fastest kernels; numbers
then agree with the book within the tolerance of :mod:`embdiag.paper.reproduce`, not
byte for byte). On other architectures (ARM) and x86-64 CPUs without AVX2 there is no
pinned level and the native path runs. ``python -m embdiag.floatpath CMD ...`` runs any
command on the pinned path (``make test`` does).
"""

from __future__ import annotations

import os
import platform
import sys
from functools import lru_cache
from pathlib import Path

__all__ = ["LEVEL", "THREADS", "PINNED", "SWITCH", "supported", "wanted", "environment", "current", "ensure", "main"]

#: The declared instruction-set level of the pinned path.
LEVEL = "x86-64-v3"
#: Threads of every BLAS/OpenMP pool on the pinned path (the project's reference machines have 2 cores).
THREADS = 2
#: What the pinned path sets: kernels capped at AVX2 in numpy, ATen, oneDNN, MKL, OpenBLAS and FAISS;
#: :data:`THREADS` threads in each pool.
PINNED = {
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_CBWR": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "OPENBLAS_CORETYPE": "Haswell",
    "FAISS_SIMD_LEVEL": "AVX2",
    "OMP_NUM_THREADS": str(THREADS),
    "OPENBLAS_NUM_THREADS": str(THREADS),
    "MKL_NUM_THREADS": str(THREADS),
}
#: ``pinned`` (default) or ``native`` (no pin: each library's own choice of kernels and threads).
SWITCH = "EMBDIAG_FLOAT_PATH"
_CHOICES = ("pinned", "native")


@lru_cache(maxsize=1)
def supported() -> bool:
    """Whether this machine can run the pinned level: x86-64 with AVX2 and FMA."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):  # not Linux: ask numpy (imported only here)
        from numpy._core._multiarray_umath import __cpu_features__ as features

        return bool(features.get("AVX2") and features.get("FMA3"))
    return {"avx2", "fma"} <= set(flags.split(":", 1)[1].split())


def wanted(env=None) -> bool:
    """Whether ``env`` (default ``os.environ``) asks for the pinned path (:data:`SWITCH`); a
    value other than ``pinned`` or ``native`` raises ``ValueError`` naming the variable."""
    value = (os.environ if env is None else env).get(SWITCH, "pinned").strip().lower() or "pinned"
    if value not in _CHOICES:
        raise ValueError(f"{SWITCH}: expected one of {_CHOICES}, got {value!r}")
    return value == "pinned"


def environment(env=None) -> dict:
    """``env`` (default ``os.environ``) with :data:`PINNED` set, when the pin is wanted and
    :func:`supported`; otherwise unchanged. A copy: ``env`` itself is not modified."""
    out = dict(os.environ if env is None else env)
    if wanted(out) and supported():
        out.update(PINNED)
    return out


def current(env=None) -> str:
    """The float path of a process started with ``env`` (default: this one's): :data:`LEVEL`
    when every pinned variable is set, else ``native <machine>``."""
    env = os.environ if env is None else env
    if supported() and all(env.get(k) == v for k, v in PINNED.items()):
        return LEVEL
    return f"native {platform.machine().lower() or 'unknown'}"


def ensure(module: str | None = None, argv=None) -> None:
    """Re-execute this process as ``python -m <module> argv`` (default: the module run with
    ``-m``, and this process's arguments) on the pinned path, unless it already runs on it,
    the pin is turned off, or the machine has no pinned level. Call it first in a command's
    ``main``: the libraries read these variables when they load."""
    if environment() == dict(os.environ):
        return
    if module is None:
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        if spec is None:
            raise RuntimeError("ensure: name the module to run again (this process was not started with -m)")
        module = spec.name.removesuffix(".__main__")
    args = sys.argv[1:] if argv is None else list(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", module, *args], environment())


def main(argv=None) -> int:
    """``python -m embdiag.floatpath CMD ...``: run CMD on the pinned path (print it without CMD)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        env = environment()
        print(current(env))
        for key in PINNED:
            print(f"{key}={env.get(key, '')}")
        return 0
    sys.stdout.flush()
    try:
        os.execvpe(argv[0], argv, environment())
    except OSError as e:
        print(f"embdiag.floatpath: cannot run {argv[0]!r}: {e.strerror}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
