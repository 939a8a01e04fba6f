"""papermill's logging, quieted where embdiag has already checked what it warns of."""

from __future__ import annotations

import contextlib
import logging


class _CheckedParameters(logging.Filter):
    """Drops papermill's "Passed unknown parameter" for parameters embdiag has checked: its
    pattern does not read annotations joined by ``|`` (``dims: list | None``)."""

    def __init__(self, names):
        super().__init__()
        self.messages = {f"Passed unknown parameter: {n}" for n in names}

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() not in self.messages


@contextlib.contextmanager
def checked_parameters(names):
    """Within: papermill does not warn of the parameters ``names`` (checked by embdiag)."""
    log = logging.getLogger("papermill")
    quiet = _CheckedParameters(names)
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)
