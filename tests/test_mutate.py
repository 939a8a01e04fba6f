"""``tools/mutate.py`` reads the equivalent mutants that a test module documents."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("mutate", ROOT / "tools" / "mutate.py")
mutate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutate)

MODULE = """
def topk(): pass
def _scan(): pass
class Probe:
    def fit(self): pass
    def _path(self): pass
"""

TESTS = '''"""Tests.

Equivalent mutants
------------------
Intro naming ``topk`` 99 outside the list: not counted.

- ``topk`` 3, 5 (block 8193, ``max(2, k)``), 7-9 (bounds): time only; 12 and 14 (``/``).
  Prose naming ``_scan`` without numbers changes nothing: 1e-12 is no mutant.
- Selection in ``_scan``: 41, 42 (flags). 50 (``m >= k``).
- ``Probe.fit`` 2; ``Probe`` (class) ``_path`` 8, 10.

Another group (a sub-heading):

- ``_scan`` 60.

Timeouts: ``topk`` 70 (a hang).
"""
'''


def test_documented_reads_lists_ranges_and_methods(tmp_path):
    (tmp_path / "m.py").write_text(MODULE)
    (tmp_path / "t.py").write_text(TESTS)
    assert mutate.documented(tmp_path / "t.py", tmp_path / "m.py") == {
        "x_topk": {3, 5, 7, 8, 9, 12, 14},
        "x__scan": {41, 42, 50, 60},
        "xǁProbeǁfit": {2},
        "xǁProbeǁ_path": {8, 10},
    }


def test_documented_numbers_of_this_project_are_mutants_of_their_function():
    # every documented function exists in its module (a renamed function would leave its
    # equivalents unaccounted for)
    for test in sorted((ROOT / "tests").glob("*/test_*.py")):
        source = ROOT / "embdiag" / test.parent.name / f"{test.stem[5:]}.py"
        if source.exists():
            for function, numbers in mutate.documented(test, source).items():
                assert numbers and min(numbers) >= 1, (test.name, function)


def test_each_run_replaces_its_modules_row_of_the_figures(tmp_path, monkeypatch):
    monkeypatch.setattr(mutate, "RESULTS", tmp_path / "MUTATION.md")
    monkeypatch.setattr(mutate, "_code_version", lambda: "abc1234")
    mutate.record("metrics/stats", 10, 12, 1, 1, ["x_f 3"])
    mutate.record("interventions/identities", 278, 280, 2, 0, [])
    mutate.record("metrics/stats", 11, 12, 1, 0, [], code="def5678")  # the version its run started from
    rows = [line for line in (tmp_path / "MUTATION.md").read_text().splitlines() if line.startswith("| `")]
    assert rows == [
        "| `interventions/identities` | 278/280 (99.3%) | 2 | 0 | none | abc1234 |",
        "| `metrics/stats` | 11/12 (91.7%) | 1 | 0 | none | def5678 |",
    ]
