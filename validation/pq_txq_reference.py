"""A plain-Python event loop of the PQ + TxQ semantics (:mod:`qosbound.validation.pq_txq_kernels`), driven by
given inputs: the slow, obviously-readable reference the compiled simulator is checked against in tests and
benchmarks."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["reference_departures"]


def reference_departures(p, ef_arrivals, be_sizes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A plain-Python event loop of the same semantics, driven by given inputs (for tests and benchmarks).

    ``ef_arrivals``: EF arrival times (s, non-decreasing); ``be_sizes``: the sizes (bytes) of the BE
    packets in the order the scheduler takes them (the first fill the TxQ at time 0). Returns
    ``(ef_departure, ef_dropped, be_departure)``; departures are NaN for dropped EF packets and for BE
    packets never taken. Stops creating BE packets when ``be_sizes`` runs out, then drains.
    """
    C, unit, Q_t, cap = float(p.C), float(p.unit), int(p.Q_t), int(p.pq_cap)
    ef_arrivals = list(map(float, ef_arrivals))
    be_sizes = list(map(float, be_sizes))
    ef_dep = [math.nan] * len(ef_arrivals)
    ef_drop = [False] * len(ef_arrivals)
    be_dep = [math.nan] * len(be_sizes)
    txq = []  # [kind, index, size]
    pq = []  # EF indices
    nxt_be = 0
    nxt_ef = 0
    now = 0.0

    def units(size):
        return math.ceil(size / unit - 1e-12)

    def refill():
        nonlocal nxt_be
        while sum(units(x[2]) for x in txq) < Q_t:
            if pq:
                txq.append(["EF", pq.pop(0), float(p.ef_size)])
            elif nxt_be < len(be_sizes):
                txq.append(["BE", nxt_be, be_sizes[nxt_be]])
                nxt_be += 1
            else:
                break

    refill()
    while txq:
        kind, i, size = txq.pop(0)
        now = now + size * 8.0 / C
        if kind == "EF":
            ef_dep[i] = now
        else:
            be_dep[i] = now
        while nxt_ef < len(ef_arrivals) and ef_arrivals[nxt_ef] <= now + 1e-12:
            if len(pq) < cap:
                pq.append(nxt_ef)
            else:
                ef_drop[nxt_ef] = True
            nxt_ef += 1
        refill()
    return np.array(ef_dep), np.array(ef_drop), np.array(be_dep)
