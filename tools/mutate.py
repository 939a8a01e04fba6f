"""Mutation testing of embdiag.metrics and embdiag.interventions with mutmut (``make mutate``).

Each module is mutated on its own and its mutants are run against that module's own test file
only (``embdiag/metrics/stats.py`` against ``tests/metrics/test_stats.py``: mutmut's selection of
its tests, then the whole file for every survivor and timeout), so a mutant counts as killed only
when the module's tests notice it. A surviving mutant with no behavioural effect counts as
accounted for only when the test module's docstring lists it under "Equivalent mutants" with the
reason (format: :func:`documented`). Prints per module the kill rate, the documented
equivalents, every undocumented survivor and documented numbers that no longer survive; writes
the survivors' diffs to ``mutation-survivors/`` and each module's figures to its row of
``tests/MUTATION.md``. The configuration is ``[tool.mutmut]`` in pyproject.toml. Not part of
CI: it takes tens of minutes for all modules.

Usage: ``python tools/mutate.py [module ...] [--max-children N]`` (modules as
``metrics/stats``; default: every module of both packages). An interrupted run of a module
resumes where it stopped when started again with that module first.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
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
    """Every module that computes a number, as ``package/name``: not ``__init__`` (the chapters'
    figures, tables and wording live in ``embdiag/paper/chapters``, checked by the executed
    chapters' nbval and browser tests rather than by mutants)."""
    return [
        f"{p}/{f.stem}"
        for p in PACKAGES
        for f in sorted((ROOT / "embdiag" / p).glob("*.py"))
        if f.name != "__init__.py"
    ]


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
    subprocess.run(
        [sys.executable, "-m", "mutmut", "run", f"embdiag.{package}.{name}.*", "--max-children", str(max_children)],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        preexec_fn=_limit_memory,
    )
    meta = json.loads((ROOT / "mutants" / "embdiag" / package / f"{name}.py.meta").read_text())
    status = {k: status_by_exit_code[v] for k, v in meta["exit_code_by_key"].items() if v is not None}
    # mutmut runs a mutant against the tests it saw call the function; a test that reads a
    # module-scoped fixture calls it only while the fixture is built (in the first such test),
    # so every mutant that survived, or timed out, runs again against the module's whole file.
    again = sorted(k for k, s in status.items() if s not in KILLED or s == "timeout")
    with ThreadPoolExecutor(max_children) as pool:
        for key, verdict in zip(again, pool.map(lambda k: recheck(k, test_file(module), status[k]), again)):
            status[key] = verdict
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
        text = "".join(
            f"# {k}: {status[k]}\n{get_diff_for_mutant(k, path=f'embdiag/{module}.py')}\n\n" for k in survivors
        )
    finally:
        os.chdir(cwd)
    out.write_text(text)
    return out


_SPAN = re.compile(r"``([^`]+)``")
_LIST = r"\s*(\d+(?:\s*-\s*\d+)?(?:\s*(?:,|and|, and)\s*\d+(?:\s*-\s*\d+)?)*)(?![\w*-]|\.\d)"
_RUN = re.compile(r"(?<=[:;.])" + _LIST)  # a list at the start of a clause
_LEAD = re.compile(_LIST)  # a list right after the function's name


def _without_parentheses(text: str) -> str:
    out, depth = [], 0
    for ch in text:
        depth += ch == "("
        out.append(" " if depth else ch)
        depth -= ch == ")" and depth > 0
    return "".join(out)


def _numbers(run: str) -> set[int]:
    found = set()
    for part in re.split(r"\s*(?:,|and)\s*", run.strip()):
        lo, _, hi = part.partition("-")
        if lo.strip():
            found |= set(range(int(lo), int(hi or lo) + 1))
    return found


def documented(test_file: Path, module_file: Path) -> dict[str, set[int]]:
    """Mutant numbers per mangled function (``x_topk``, ``xǁLinearProbeǁfit``) that the test
    module's docstring lists under "Equivalent mutants".

    Format (one bullet per reason): a function or method named in double back-quotes
    (``topk``, ``LinearProbe.fit``, or a class followed by its methods' names) directly
    followed by its mutant numbers or a colon, then mutant numbers as comma-separated lists or
    ranges (``41, 42, 118-123``) at the start of a clause (after the name, ``:``, ``;`` or
    ``.``). Parenthesized text is commentary; a name not followed by a number or colon is prose.
    """
    doc = ast.get_docstring(ast.parse(test_file.read_text())) or ""
    section = doc.partition("Equivalent mutants")[2]
    # the list runs to the first paragraph that is neither a bullet nor a sub-heading ("...:")
    section = re.split(r"\n\s*\n(?!- |\s|[^\n]*:\n)", section.partition("\n- ")[1] + section.partition("\n- ")[2])[0]
    tree = ast.parse(module_file.read_text())
    functions = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    methods = {
        c.name: {n.name for n in c.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for c in tree.body
        if isinstance(c, ast.ClassDef)
    }
    found: dict[str, set[int]] = {}
    for bullet in re.split(r"\n- ", section):
        current, cls = None, None
        text = _without_parentheses(bullet)
        pos = 0
        for span in list(_SPAN.finditer(text)) + [None]:
            end = span.start() if span else len(text)
            if current:
                lead = _LEAD.match(text, pos, end)
                if lead and pos:
                    found.setdefault(current, set()).update(_numbers(lead.group(1)))
                for run in _RUN.finditer(text, pos, end):
                    found.setdefault(current, set()).update(_numbers(run.group(1)))
            if span is None:
                break
            name = span.group(1)
            pos = span.end()
            owner, _, method = name.rpartition(".")
            listed = re.match(r"\s*[\d:]", text[pos:])  # a name in prose (no list after it) is skipped
            if name in methods:
                current, cls = None, name
            elif not listed:
                continue
            elif name in functions:
                current, cls = f"x_{name}", None
            elif owner in methods and method in methods[owner]:
                current, cls = f"xǁ{owner}ǁ{method}", owner
            elif cls and name in methods[cls]:
                current = f"xǁ{cls}ǁ{name}"
            # any other code span (an expression) keeps the current function
    return found


def recheck(key: str, tests: Path, before: str) -> str:
    """Run one mutant again, alone, in a fresh interpreter, against the module's whole test file.

    Two reasons: mutmut selects the tests it recorded as calling the mutated function, which
    misses every test but the first that reads a module-scoped fixture; and mutmut forks each
    mutant from a server process that holds other threads, so now and then a forked child
    deadlocks before its tests run and is reported as a timeout. Here a failure is ``killed``,
    a pass ``survived`` (``survived (timed out only under mutmut)`` after a timeout), and still
    running at a generous wall-clock limit a real ``timeout``."""
    stats = json.loads((ROOT / "mutants" / "mutmut-stats.json").read_text())
    name = tests.stem
    own = sum(d for t, d in stats["duration_by_test"].items() if f"{name}.py::" in t)
    limit = max(120.0, 20 * own)
    env = {**os.environ, "MUTANT_UNDER_TEST": key, "PYTHONPATH": "", **SINGLE_THREADED}
    env.pop("PYTEST_ADDOPTS", None)
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-x",
                "-q",
                "-p",
                "no:cacheprovider",
                "-m",
                "not slow",
                str(tests.relative_to(ROOT)),
            ],
            cwd=ROOT / "mutants",
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=limit,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        return "timeout"
    if done.returncode != 0:
        return "killed"
    return "survived (timed out only under mutmut)" if before == "timeout" else "survived"


def test_file(module: str) -> Path:
    package, name = module.split("/")
    return ROOT / "tests" / package / f"test_{name}.py"


def classify(module: str, survivors: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Split survivors into those the test module documents as equivalent and the rest; also
    return documented numbers that did not survive (stale: killed now, or renumbered)."""
    listed = documented(test_file(module), ROOT / "embdiag" / f"{module}.py")
    equivalent, undocumented, seen = [], [], set()
    for s in survivors:
        function, _, number = s.split()[0].rsplit(".", 1)[1].rpartition("__mutmut_")
        seen.add((function, int(number)))
        (equivalent if int(number) in listed.get(function, ()) else undocumented).append(s)
    stale = [f"{f} {n}" for f, ns in sorted(listed.items()) for n in sorted(ns) if (f, n) not in seen]
    return equivalent, undocumented, stale


RESULTS = ROOT / "tests" / "MUTATION.md"
_HEAD = """# Mutation testing: the figures

Written by `make mutate` (tools/mutate.py), one row per module as last run; not typed by hand.
Each mutant runs against its module's own test file (the whole file for every survivor and
timeout); *equivalent* counts the survivors that the test module's docstring documents, under
"Equivalent mutants", with the reason. *Stale* lists documented numbers that no longer survive.

| module | killed | equivalent (documented) | undocumented survivors | stale | code |
|---|---|---|---|---|---|
"""


def _code_version() -> str:
    """The commit the mutants were made from, marked when embdiag/ or tests/ differ from it."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    changed = ["git", "status", "--porcelain", "--", "embdiag", "tests", ":!tests/MUTATION.md"]
    dirty = subprocess.run(changed, cwd=ROOT, capture_output=True, text=True)
    return (head.stdout.strip() or "unknown") + (" + uncommitted changes" if dirty.stdout.strip() else "")


def record(
    module: str, killed: int, total: int, equivalent: int, undocumented: int, stale: list[str], code: str | None = None
) -> None:
    """Replace ``module``'s row of :data:`RESULTS` (rows sorted by module); ``code``: the version the
    mutants were made from (:func:`_code_version` when the run started; default: now)."""
    rows = {}
    if RESULTS.exists():
        for line in RESULTS.read_text().splitlines():
            if line.startswith("| `"):
                rows[line.split("`")[1]] = line
    rows[module] = (
        f"| `{module}` | {killed}/{total} ({100 * killed / max(total, 1):.1f}%) | {equivalent} | {undocumented} | "
        f"{', '.join(stale) or 'none'} | {code or _code_version()} |"
    )
    RESULTS.write_text(_HEAD + "\n".join(rows[m] for m in sorted(rows)) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", default=modules())
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    rows = []
    for module in args.modules:
        start = time.perf_counter()
        code = _code_version()  # the mutants are copies of the tree as it is now; edits made meanwhile are not
        killed, total, survivors = run_module(module, args.max_children)
        equivalent, undocumented, stale = classify(module, survivors)
        rows.append((module, killed, len(equivalent), total))
        record(module, killed, total, len(equivalent), len(undocumented), stale, code)
        print(
            f"{module}: {killed}/{total} killed ({100 * killed / max(total, 1):.1f}%), "
            f"{len(equivalent)} documented equivalent, {len(undocumented)} undocumented survivor(s), "
            f"{(time.perf_counter() - start) / 60:.1f} min",
            flush=True,
        )
        for s in undocumented:
            print(f"    survived: {s}  (mutmut show {s.split()[0]})")
        if stale:
            print(f"    documented as equivalent but not surviving (stale numbers?): {', '.join(stale)}")
    print("\nkill rate per module (accounted = killed + documented equivalents, see tests/<package>/test_<module>.py)")
    print(f"  {'module':28s} {'killed':>10s} {'':>6s} {'equiv.':>6s} {'accounted':>9s}")
    for module, killed, equivalent, total in rows:
        print(
            f"  {module:28s} {killed:4d}/{total:<5d} {100 * killed / max(total, 1):5.1f}% {equivalent:6d} "
            f"{100 * (killed + equivalent) / max(total, 1):8.1f}%"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
