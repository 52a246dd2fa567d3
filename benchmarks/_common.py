"""Shared set-up of the single-core benchmarks: one BLAS thread, and a best-of timer."""

from __future__ import annotations

import os
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_v, "1")


def best_of(repeat: int, fn) -> float:
    """Smallest wall-clock time of ``repeat`` calls, s."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
