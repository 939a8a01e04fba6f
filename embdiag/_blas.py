"""Thread control for BLAS/LAPACK calls that do not scale to two threads.

Small LAPACK eigendecompositions and thin matrix products (probe iterations) run inside
:func:`single_thread`: on more threads, OpenBLAS threads spin-wait and contend, and the
time of such a call depends on the other processes' load (``benchmarks/bench_metrics.py``
times a 768 x 768 ``eigh`` both ways).
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
