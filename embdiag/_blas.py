"""Thread control for BLAS/LAPACK calls that do not scale to two threads.

Small LAPACK eigendecompositions and thin matrix products (probe iterations) run
faster, and far more predictably on a shared machine, with one BLAS thread: with two,
OpenBLAS threads spin-wait and contend (measured: a 768 x 768 ``eigh`` took 0.23 s on
one thread and 1.8-4.5 s on two while other processes were busy).
"""

from __future__ import annotations

from functools import lru_cache

from threadpoolctl import ThreadpoolController


@lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


def single_thread():
    """Context manager limiting BLAS libraries to one thread."""
    return _controller().limit(limits=1, user_api="blas")
