"""Marker colour-fraction benchmarks: the slotted trTCM chain (fixed sizes) cold vs cached, and the finite-dam
solution (exponential sizes).

Run: ``python benchmarks/bench_markers.py [--quick]``. The trTCM of the koehler1999 example with fixed sizes
solves a chain of about a million states three times (Richardson extrapolation): minutes on one core. ``admit``
re-evaluates the scenario at every step, so the solution is cached by the marker's parameters
(:func:`qosbound.analytic.markers.marker_fractions`, an in-process ``functools.lru_cache``); the second call
costs a dictionary look-up. ``--quick`` uses a 25 kB / 35 kB bucket instead of the paper's 250 kB / 350 kB.
"""

from __future__ import annotations

import sys
import time

import _common  # noqa: F401  (one BLAS thread)

from qosbound.analytic.markers import dam_exponential, marker_fractions


def main(quick: bool) -> None:
    cbs, pbs = (25e3, 35e3) if quick else (250e3, 350e3)
    args = ("trtcm", "poisson", "fixed", 50e6, 1000.0, 10e6, cbs, 15e6, pbs)
    marker_fractions.cache_clear()
    t0 = time.perf_counter()
    f = marker_fractions(*args)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(1000):
        marker_fractions(*args)
    warm = (time.perf_counter() - t0) / 1000
    print(f"trTCM, Poisson, fixed 1000 B, CBS {cbs / 1e3:g} kB, PBS {pbs / 1e3:g} kB: first call {cold:.2f} s, "
          f"cached call {warm * 1e6:.1f} us ({cold / warm:.3g}x); fractions {[round(x, 4) for x in f.packets]}")
    dam_exponential.cache_clear()
    t0 = time.perf_counter()
    n = 0
    for rho in (0.1, 0.5, 0.9, 1.0, 1.5, 3.0, 10.0, 100.0):
        for depth in (2.0, 10.0, 100.0, 1000.0):
            dam_exponential(rho, depth)
            n += 1
    print(f"finite dam (exponential sizes), 50-digit mpmath: {(time.perf_counter() - t0) / n * 1e3:.2f} ms a solve")


if __name__ == "__main__":
    main("--quick" in sys.argv)
