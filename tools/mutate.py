"""Mutation testing of embdiag.metrics and embdiag.interventions with mutmut (``make mutate``).

Each module is mutated on its own and its mutants are run against that module's own
test file only (``embdiag/metrics/stats.py`` against ``tests/metrics/test_stats.py``),
so a mutant counts as killed only when the module's tests notice it. Prints the kill
rate per module and lists the survivors; the configuration is ``[tool.mutmut]`` in
pyproject.toml. Not part of CI: it takes tens of minutes for all modules.

Usage: ``python tools/mutate.py [module ...] [--max-children N]`` (modules as
``metrics/stats``; default: every module of both packages). An interrupted run of a module
resumes where it stopped when started again with that module first.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("metrics", "interventions")
#: mutmut exit-code meaning (mutmut.stats.status_by_exit_code): what counts as killed.
KILLED = {"killed", "timeout", "caught by type check"}
#: Address-space cap for mutmut and its forked mutants: a mutant that breaks a chunk-size
#: rule (e.g. in retrieval's scan schedule) once grew to 14 GB on the 24 GB machine; under
#: the cap it fails with MemoryError, which counts as killed.
MEMORY_LIMIT = 8 << 30
SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def modules() -> list[str]:
    """Every module that computes a number, as ``package/name``: not ``__init__`` and not the
    chapters' ``*_figures`` modules (charts, tables and wording, checked by the executed
    chapters' nbval and browser tests rather than by mutants)."""
    return [f"{p}/{f.stem}" for p in PACKAGES for f in sorted((ROOT / "embdiag" / p).glob("*.py"))
            if f.name != "__init__.py" and not f.stem.endswith("_figures")]


def run_module(module: str, max_children: int) -> tuple[int, int, list[str]]:
    """Mutate one module, run its mutants against its own tests; return killed, total, survivors."""
    from mutmut.stats import status_by_exit_code

    package, name = module.split("/")
    marker = ROOT / "mutants" / ".embdiag-module"
    if not (marker.exists() and marker.read_text() == module):
        # Another module's test statistics must not be reused; the same module's verdicts are
        # kept, so an interrupted run resumes where it stopped (mutmut skips decided mutants).
        shutil.rmtree(ROOT / "mutants", ignore_errors=True)
        marker.parent.mkdir()
        marker.write_text(module)
    # One BLAS / OpenMP thread: mutmut forks every mutant from a server process, and a thread
    # pool that BLAS started before the fork deadlocks the child (reported as a timeout).
    env = {**os.environ, "PYTEST_ADDOPTS": f"-k test_{name}.py", "PYTHONPATH": "", **SINGLE_THREADED}
    subprocess.run([sys.executable, "-m", "mutmut", "run", f"embdiag.{package}.{name}.*",
                    "--max-children", str(max_children)], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL, preexec_fn=_limit_memory)
    meta = json.loads((ROOT / "mutants" / "embdiag" / package / f"{name}.py.meta").read_text())
    status = {k: status_by_exit_code[v] for k, v in meta["exit_code_by_key"].items() if v is not None}
    for key in sorted(k for k, s in status.items() if s == "timeout"):
        status[key] = recheck(key)
    survivors = sorted(k for k, s in status.items() if s not in KILLED)
    write_diffs(module, survivors, status)
    return len(status) - len(survivors), len(status), [f"{k} ({status[k]})" for k in survivors]


def write_diffs(module: str, survivors: list[str], status: dict[str, str]) -> Path:
    """Write every survivor's diff to ``mutation-survivors/<package>_<name>.diff`` (the next
    module's run replaces ``mutants/``, and ``mutmut show`` needs it)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    out = ROOT / "mutation-survivors" / f"{module.replace('/', '_')}.diff"
    out.parent.mkdir(exist_ok=True)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        text = "".join(f"# {k}: {status[k]}\n{get_diff_for_mutant(k, path=f'embdiag/{module}.py')}\n\n"
                       for k in survivors)
    finally:
        os.chdir(cwd)
    out.write_text(text)
    return out


def recheck(key: str) -> str:
    """Run a mutant that timed out under mutmut again, alone, in a fresh interpreter.

    mutmut forks each mutant from a server process that holds other threads; now and then a
    forked child deadlocks before its tests run and is reported as a timeout, which would count
    a surviving mutant as killed. Here the mutant's own tests (those mutmut recorded as covering
    its function) run in a new process under a generous wall-clock limit: a failure is
    ``killed``, a pass ``survived (timed out only under mutmut)``, and still running at the
    limit a real ``timeout``."""
    stats = json.loads((ROOT / "mutants" / "mutmut-stats.json").read_text())
    tests = sorted(stats["tests_by_mangled_function_name"].get(key.rsplit("__mutmut_", 1)[0], ()))
    if not tests:
        return "no tests"
    limit = max(60.0, 20 * sum(stats["duration_by_test"].get(t, 0.0) for t in tests))
    env = {**os.environ, "MUTANT_UNDER_TEST": key, "PYTHONPATH": "", **SINGLE_THREADED}
    env.pop("PYTEST_ADDOPTS", None)
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                              cwd=ROOT / "mutants", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=limit, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        return "timeout"
    return "survived (timed out only under mutmut)" if done.returncode == 0 else "killed"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", default=modules())
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    rows = []
    for module in args.modules:
        start = time.perf_counter()
        killed, total, survivors = run_module(module, args.max_children)
        rows.append((module, killed, total, time.perf_counter() - start))
        print(f"{module}: {killed}/{total} killed ({100 * killed / max(total, 1):.0f}%), "
              f"{rows[-1][3] / 60:.1f} min", flush=True)
        for s in survivors:
            print(f"    survived: {s}  (mutmut show {s.split()[0]})")
    print("\nkill rate per module")
    for module, killed, total, _ in rows:
        print(f"  {module:28s} {killed:4d}/{total:<4d} {100 * killed / max(total, 1):5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
