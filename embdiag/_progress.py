"""Progress of a long measurement: one line per finished step on stderr, with the seconds elapsed.

A study section's ``run(..., progress=True)`` reports through :class:`Steps`; ``embdiag chapter``
streams the executing kernel's stderr to the terminal, so the lines reach the user while the
chapter runs. Lines are plain text, one per step (no carriage returns), so they read the same in a
terminal, a log file and a notebook's stderr stream.
"""

from __future__ import annotations

import sys
import time

__all__ = ["Steps"]


class Steps:
    """Reports ``total`` steps of the measurement ``what``: :meth:`say` prints a line as it is,
    :meth:`done` the step just finished as ``"{what}: {i}/{total} {step} ({seconds} s)"``, the
    seconds counted from the reporter's creation. Disabled (``enabled=False``), it prints nothing.

    >>> steps = Steps("stress tests", 2, stream=sys.stdout, clock=iter([0.0, 1.25, 3.5]).__next__)
    >>> steps.done("contraction s=0.5")
    stress tests: 1/2 contraction s=0.5 (1.2 s)
    >>> steps.done("noise s=0.99")
    stress tests: 2/2 noise s=0.99 (3.5 s)
    """

    def __init__(self, what: str, total: int, *, enabled: bool = True, stream=None, clock=time.perf_counter):
        self.what, self.total, self.enabled = what, int(total), bool(enabled)
        self._stream, self._clock = stream, clock
        self._start, self._done = clock(), 0

    def say(self, line: str) -> None:
        """Print ``"{what}: {line}"``."""
        if self.enabled:
            print(f"{self.what}: {line}", file=self._stream or sys.stderr, flush=True)

    def done(self, step: str) -> None:
        """Count one finished ``step`` and print it with the seconds elapsed."""
        self._done += 1
        self.say(f"{self._done}/{self.total} {step} ({self._clock() - self._start:.1f} s)")
