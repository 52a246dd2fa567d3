"""AF benchmarks: Storm time and model size vs buffer size, and simulator throughput (figures and ratios).

Run: ``python benchmarks/bench_af.py``. Targets (issue 3): a 3-colour WRED queue of 64 packets built and
checked on Storm in <= 1 s; the simulator >= 3e6 packets/s with WRED + CBWFQ. Every figure is measured in
this run, side by side; the machine is shared, so single timings are noisy (best of three is printed).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from qosbound.analytic.red_queue import instantaneous
from qosbound.analytic.wred import Profile
from qosbound.models.af import check_wred


def _best(f, n=3):
    """(first-call time, best time, result): the first call includes parsing and any cold caches."""
    best = float("inf")
    first = None
    out = None
    for _ in range(n):
        t0 = time.perf_counter()
        out = f()
        dt = time.perf_counter() - t0
        first = dt if first is None else first
        best = min(best, dt)
    return first, best, out


def storm_vs_buffer():
    print("Storm (wred.prism, instantaneous average): build + check time and states vs buffer size")
    print(f"{'mode':<6}{'K':>5}{'states':>9}{'transitions':>13}{'first s':>10}{'Storm s':>10}{'SciPy s':>10}"
          f"{'Storm/SciPy':>13}")
    rows = []
    for mode, Ks in (("wred", (16, 32, 64, 128)), ("rio", (16, 32, 64)), ("nred", (16, 24, 32))):
        for K in Ks:
            prof = Profile(min_th=(K * 3 / 8, K / 4, K / 8), max_th=(K * 3 / 4, K * 5 / 8, K / 2), P_d=(3, 3, 3),
                           mode=mode)
            lam = np.array([1.0, 1.0, 1.0]) * K / 2
            mu = 1.2 * K
            t_first, t_storm, v = _best(lambda: check_wred(lam, mu, K, prof))
            _, t_scipy, _ = _best(lambda: instantaneous(lam, mu, K, prof), n=1 if mode != "wred" else 3)
            rows.append((mode, K, v.states, t_first))
            print(f"{mode:<6}{K:>5}{v.states:>9}{v.transitions:>13}{t_first:>10.3f}{t_storm:>10.3f}{t_scipy:>10.3f}"
                  f"{t_storm / max(t_scipy, 1e-9):>13.1f}")
    t64 = next(r[3] for r in rows if r[0] == "wred" and r[1] == 64)
    print(f"target: WRED K=64 built and checked in <= 1 s; first call {t64:.3f} s (ratio to target {t64:.2f})")


def simulator_rate():
    from qosbound.validation.af_sim import Config, simulate

    C = 2e6
    w = np.array([200e3, 400e3, 600e3, 800e3])
    loads = np.array([150e3, 128e3, 1039e3, 600e3])
    size = 1000.0
    src_cls = np.repeat(np.arange(4), 2)
    src_col = np.tile([0, 1], 4)
    cfg = Config(C=C, w=w, K=np.full(4, 64), min_th=np.tile([24.0, 16, 8], (4, 1)),
                 max_th=np.tile([48.0, 40, 32], (4, 1)), max_p=np.full((4, 3), 1 / 3), mode=np.zeros(4, int),
                 gentle=np.zeros(4, bool), alpha=np.full(4, 2.0 ** -9), src_cls=src_cls, src_colour=src_col,
                 src_rate=np.repeat(loads / (8 * size) / 2, 2), src_size=np.full(8, size),
                 src_expsize=np.ones(8, bool), src_cbr=np.zeros(8, bool), src_marker=np.full(8, -1),
                 src_aware=np.zeros(8, bool), marker_state=np.zeros((8, 7)))
    simulate(cfg, 10_000, 1)  # compile / load the cache
    n = 2_000_000
    _, t, _ = _best(lambda: simulate(cfg, n, 2))
    one = dataclasses.replace(cfg, w=w[:1], K=np.full(1, 64), min_th=cfg.min_th[:1], max_th=cfg.max_th[:1],
                              max_p=cfg.max_p[:1], mode=cfg.mode[:1], gentle=cfg.gentle[:1], alpha=cfg.alpha[:1],
                              src_cls=np.zeros(2, int), src_colour=np.array([0, 1]),
                              src_rate=np.array([0.45, 0.45]) * C / (8 * size), src_size=np.full(2, size),
                              src_expsize=np.ones(2, bool), src_cbr=np.zeros(2, bool), src_marker=np.full(2, -1),
                              src_aware=np.zeros(2, bool), marker_state=np.zeros((2, 7)))
    simulate(one, 10_000, 1)
    _, t1, _ = _best(lambda: simulate(one, n, 2))
    print("\nSimulator (numba, float EWMA WRED): arrivals per second of wall-clock time")
    print(f"  4 classes, WRED + CBWFQ (WFQ virtual time), 8 sources: {n / t:.3g} packets/s")
    print(f"  1 class, WRED only, 2 sources:                        {n / t1:.3g} packets/s")
    print(f"  CBWFQ cost ratio (1 class / 4 classes): {t1 / t:.2f}; target >= 3e6 packets/s, "
          f"ratio to target {n / t / 3e6:.2f}")


if __name__ == "__main__":
    storm_vs_buffer()
    simulator_rate()
