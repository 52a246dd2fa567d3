"""A plain-Python event loop of the PQ + TxQ semantics (:mod:`qosbound.validation.pq_txq_kernels`), driven by
given inputs: the slow, obviously-readable reference the compiled simulator is checked against in tests and
benchmarks."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["reference_departures"]


def reference_departures(p, ef_arrivals, be_sizes, be_arrivals=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A plain-Python event loop of the same semantics, driven by given inputs (for tests and benchmarks).

    ``ef_arrivals``: EF arrival times (s, non-decreasing); ``be_sizes``: the sizes (bytes) of the BE
    packets in the order the scheduler takes them (the first fill the TxQ at time 0). Returns
    ``(ef_departure, ef_dropped, be_departure)``; departures are NaN for dropped EF packets and for BE
    packets never taken. Stops creating BE packets when ``be_sizes`` runs out, then drains.

    With ``be_arrivals`` (s, non-decreasing, one per BE size) best effort is not saturated: BE packet ``i``
    arrives at ``be_arrivals[i]`` and waits in a FIFO BE queue; the line idles when every queue is empty, and
    an arrival finding fewer than ``Q_t`` units occupied enters the TxQ at once (at a departure instant, after
    the departure).
    """
    if be_arrivals is not None:
        return _departures_be_load(p, ef_arrivals, be_sizes, be_arrivals)
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


def _departures_be_load(p, ef_arrivals, be_sizes, be_arrivals):
    """:func:`reference_departures` with BE arrivals: an event loop over departures and arrivals."""
    C, unit, Q_t, cap = float(p.C), float(p.unit), int(p.Q_t), int(p.pq_cap)
    ef_arrivals = [float(x) for x in ef_arrivals]
    be_arrivals = [float(x) for x in be_arrivals]
    be_sizes = [float(x) for x in be_sizes]
    if len(be_arrivals) != len(be_sizes):
        raise ValueError("one BE arrival time per BE size")
    ef_dep = [math.nan] * len(ef_arrivals)
    ef_drop = [False] * len(ef_arrivals)
    be_dep = [math.nan] * len(be_sizes)
    txq = []  # [kind, index, size]
    pq = []  # EF indices
    beq = []  # BE indices
    nxt_be = nxt_ef = 0
    start = 0.0  # when the head packet began (or begins) transmission

    def occupied():
        return sum(math.ceil(x[2] / unit - 1e-12) for x in txq)

    def arrive(now):
        nonlocal nxt_ef, nxt_be
        while nxt_ef < len(ef_arrivals) and ef_arrivals[nxt_ef] <= now:
            if len(pq) < cap:
                pq.append(nxt_ef)
            else:
                ef_drop[nxt_ef] = True
            nxt_ef += 1
        while nxt_be < len(be_arrivals) and be_arrivals[nxt_be] <= now:
            beq.append(nxt_be)
            nxt_be += 1

    def refill():
        while occupied() < Q_t and (pq or beq):
            if pq:
                txq.append(["EF", pq.pop(0), float(p.ef_size)])
            else:
                i = beq.pop(0)
                txq.append(["BE", i, be_sizes[i]])

    while True:
        dep = start + txq[0][2] * 8.0 / C if txq else math.inf
        nxt = min(ef_arrivals[nxt_ef] if nxt_ef < len(ef_arrivals) else math.inf,
                  be_arrivals[nxt_be] if nxt_be < len(be_arrivals) else math.inf)
        if occupied() < Q_t and nxt < dep:
            if not txq:
                start = nxt
            arrive(nxt)
        elif txq:
            kind, i, size = txq.pop(0)
            start = dep
            if kind == "EF":
                ef_dep[i] = dep
            else:
                be_dep[i] = dep
            arrive(dep)
        else:
            break
        refill()
    return np.array(ef_dep), np.array(ef_drop), np.array(be_dep)
