"""Fixtures shared by test modules in different folders."""

from __future__ import annotations

import sys

import pytest


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
