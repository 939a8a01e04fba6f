"""How the book runs a chapter in a Jupyter kernel with papermill: quietly, and so that SIGTERM
stops its kernel.

:func:`run_notebook` is the one call of ``papermill.execute_notebook`` (the book's pipeline);
:func:`checked_parameters` quiets papermill's logging where embdiag has already checked what it
warns of."""

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


def run_notebook(notebook, output, parameters: dict, cwd, *, stderr=None):
    """Execute ``notebook`` (a path or a notebook) with papermill into ``output`` (a path, or None)
    with ``parameters`` (checked by embdiag, so papermill does not warn of them), working in
    ``cwd``, without progress bars or kernel chatter, the kernel's stderr to ``stderr`` (None:
    dropped); in a worker thread (:func:`embdiag._atomic.in_worker`), so that SIGTERM stops the
    kernel too. Returns the executed notebook; raises papermill's ``PapermillExecutionError``."""
    import papermill

    from .._atomic import in_worker

    with checked_parameters(parameters):
        return in_worker(
            lambda: papermill.execute_notebook(
                notebook,
                output,
                parameters=parameters,
                cwd=str(cwd),
                kernel_name="python3",
                progress_bar=False,
                log_output=False,
                stderr_file=stderr,
                extra_arguments=["--log-level=CRITICAL"],  # kernel start-up and shutdown chatter
            )
        )
