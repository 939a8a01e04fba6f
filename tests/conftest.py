"""Fixtures shared by test modules in different folders, and the float path of the tests.

Kernels and processes that the tests start run on the pinned float path
(:mod:`embdiag.floatpath`), as ``embdiag book`` does. nbval compares the committed chapters
exactly; on a machine whose float path is not the one they were executed on (an ARM
machine, x86-64 without AVX2, ``EMBDIAG_FLOAT_PATH=native``) its cells are skipped and
tests/paper/test_chapters_agree.py compares every chapter within tolerance instead.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

import pandas as pd
import pytest

from embdiag import floatpath

os.environ.update(floatpath.environment())


def pytest_collection_modifyitems(config, items):
    nbval = [item for item in items if ".ipynb::" in item.nodeid]
    if not nbval:
        return
    from embdiag.paper.pipeline import committed_float_paths

    here, committed = floatpath.current(), committed_float_paths()
    if committed == {here}:
        return
    skip = pytest.mark.skip(
        reason=f"the chapters were executed on the float path {sorted(map(str, committed))}, "
        f"this machine runs {here!r}: tests/paper/test_chapters_agree.py compares them "
        "within tolerance"
    )
    for item in nbval:
        item.add_marker(skip)


def _resident_kib(path) -> int:
    """Resident KiB of this process's mappings of ``path``."""
    total, inside = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if len(head) >= 5 and "-" in head[0] and ":" in head[3]:  # a mapping's header line
                inside = line.rstrip().endswith(str(path))
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


@pytest.fixture
def resident_kib():
    """``resident_kib(path)``: resident KiB of this process's memory maps of a file (from
    /proc/self/smaps: Linux only, skipped elsewhere)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc/self/smaps")
    return _resident_kib


@pytest.fixture(autouse=True)
def _measured_afresh(monkeypatch):
    """Every test measures afresh (the book's disk memo, :mod:`embdiag._memo`, is off): a test that
    patches or counts a measurement must not read a kept result. tests/test_memo.py turns it on;
    nbval's chapters (outside tests/) run with it, as ``embdiag book`` does."""
    monkeypatch.setenv("EMBDIAG_MEMO", "off")


#: condition -> (variance, accuracy, P@10) of every seed in :func:`training_records`.
TRAINING_PLAN = {
    "Untrained (step 0)": (5.0, 0.80, 0.60),
    "EMA reference": (100.0, 0.92, 0.90),
    "Contracted control": (1e-5, 0.91, 0.70),
    "SIGReg + stop-gradient": (200.0, 0.85, 0.80),
}


def _training_records(changes=None, seeds=range(5)) -> pd.DataFrame:
    from embdiag.training.conditions import CONDITIONS
    from embdiag.training.inputs import ATTRIBUTES
    from embdiag.training.sweep import UNTRAINED

    plan = {**TRAINING_PLAN, **(changes or {})}
    rows = []
    for name in [UNTRAINED] + [c.name for c in CONDITIONS]:
        var, acc, p10 = plan.get(name, (50.0, 0.85, 0.80))
        for s in seeds:
            row = {
                "condition": name,
                "seed": s,
                "status": "ok",
                "total_variance": var * (1 + 0.01 * s),
                "mean_cosine": 0.5,
                "rankme": 10.0 + s,
                "participation_ratio": 3.0,
            }
            for a in ATTRIBUTES:
                row.update(
                    {
                        f"{a} accuracy": acc + 0.001 * s,
                        f"{a} BA": acc - 0.1,
                        f"{a} P@10": p10 + 0.002 * s,
                        f"{a} majority": 0.5,
                        f"{a} random P@10": 0.4,
                    }
                )
            rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture
def training_records():
    """``training_records(changes=None, seeds=range(5))``: one record per condition and seed with
    known answers: :data:`TRAINING_PLAN` (``changes`` replaces conditions' entries; others get
    variance 50, accuracy 0.85, P@10 0.80), plus a small seed-dependent jitter."""
    return _training_records


COMPRESSION_ATTRIBUTES = ("weather", "scene", "timeofday")
#: The native representation's six shares (3 BA, 3 P@k) in :func:`compression_tables`.
COMPRESSION_NATIVE = [0.60, 0.70, 0.80, 0.50, 0.60, 0.70]


def _compression_table(values: dict, k: int = 10, overlap=None) -> pd.DataFrame:
    rows = []
    for rep, six in values.items():
        method, dim = (rep.rsplit(" ", 1)[0], int(rep.rsplit(" ", 1)[1]))
        row = {"representation": rep, "method": method, "dim": dim}
        row.update({f"{a} BA": v for a, v in zip(COMPRESSION_ATTRIBUTES, six[:3])})
        row.update({f"{a} P@{k}": v for a, v in zip(COMPRESSION_ATTRIBUTES, six[3:])})
        row[f"overlap@{k}"] = 1.0 if overlap is None else overlap.get(rep, 1.0)
        rows.append(row)
    return pd.DataFrame(rows)


def _compression_grid(mrl128_weather_ba=0.52, k=10) -> pd.DataFrame:
    return _compression_table(
        {
            "native 768": COMPRESSION_NATIVE,
            "MRL 512": [0.60, 0.70, 0.80, 0.50, 0.60, 0.71],
            "PCA 512": [0.59, 0.69, 0.79, 0.49, 0.59, 0.72],
            "MRL 256": [0.59, 0.70, 0.80, 0.50, 0.60, 0.70],
            "PCA 256": [0.58, 0.71, 0.79, 0.49, 0.59, 0.69],
            "MRL 128": [mrl128_weather_ba, 0.69, 0.79, 0.49, 0.59, 0.72],
            "PCA 128": [0.60, 0.70, 0.80, 0.50, 0.60, 0.71],
        },
        k=k,
    )


def _compression_centring(centred=0.9, uncentred=1.0, k=10) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "representation": ["native", "PCA uncentred 768", "PCA 768", "native minus training mean"],
            f"overlap@{k}": [1.0, uncentred, centred, centred],
            f"changed@{k}": [0, 0, 0.4, 0.4],
            f"overlap@{k} with centred cosine": [centred, centred, 1.0, 1.0],
            "max |Δ cosine|": [0.0, 1e-15, 0.5, 0.5],
            **{f"{a} P@{k}": [0.5] * 4 for a in COMPRESSION_ATTRIBUTES},
        }
    )


@pytest.fixture
def compression_tables():
    """Compression tables with known answers: ``table({representation: six shares (3 BA, 3
    P@k)}, k, overlap)`` a grid-shaped table; ``grid(mrl128_weather_ba, k)`` the study's
    dimensions, MRL 128 losing on weather BA; ``centring(centred, uncentred, k)`` a centring
    table; ``native`` the native row's six shares."""
    return SimpleNamespace(
        table=_compression_table, grid=_compression_grid, centring=_compression_centring, native=COMPRESSION_NATIVE
    )
