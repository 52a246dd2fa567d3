"""The network simulator's sources, every flow of a replication drawn in one compiled call (:func:`draw_flows`):
the same packets, bit for bit, as :func:`qosbound.validation.network_sim.generate` drawing each flow's streams from
its own ``Generator(PCG64(child))`` -- the same draws in the same order from the same generator
(:mod:`qosbound.validation.pcg64`), the same arithmetic on them.

Per flow, its streams one after the other; per stream its arrival times, then its sizes (one draw per packet, none
for a single size); then the flow's packets in time order (a stable sort of its streams' packets, unless it has
one stream whose times come out sorted). Per stream kind (``pkts`` packets/s of one copy, ``H`` the horizon):

* **Poisson**: chunks of ``n = int(pkts (H - t0) + 6 sqrt(pkts (H - t0) + 1) + 16)`` exponential gaps of mean
  ``1 / pkts``, every one drawn, cumulated from ``t0`` (0, then the chunk's last time), the times below ``H`` kept,
  until a chunk ends at or beyond ``H``;
* **CBR**: each copy a clock ``phase + j / pkts < H`` (phase: one uniform draw times the period, unless given);
  copies of one size merged in time order (phases drawn first, the clocks' ``j``-th ticks row after row, within a
  row by phase, ties by copy), copies of several sizes one after the other (the flow's sort orders them);
* **on-off**: a clock at the peak rate ``pkts (on + off) / on`` with a uniform phase; then whether the source
  starts on (a uniform below ``on / (on + off)``) and the exponential periods from 0 until one ends at or beyond
  ``H``; a tick is kept when the number of period ends at or before it is even and the source started on, or odd
  and it started off;
* **sizes**: exponential (``scale`` the mean, clipped to [1, 65535] B), a single size (no draw), or the first
  cumulative probability above a uniform draw (``Generator.choice``'s draw).

``tests/validation/test_network_sources.py`` checks each kind against :func:`~qosbound.validation.network_sim.generate`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

from qosbound.validation.pcg64 import exponential, random, seeded

__all__ = ["POISSON", "CBR", "ON_OFF", "SATURATED", "draw_flows"]

POISSON, CBR, ON_OFF, SATURATED = 0, 1, 2, 3


@njit(cache=True)
def _room(a, need):
    """``a``, or a copy of it at least ``need`` long (doubling)."""
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True)
def _clock(st, T, pos, period, H, phase):
    """One CBR clock's ticks ``ph + j period < H`` written from ``T[pos]`` (``ph`` drawn when ``phase`` is NaN);
    returns (T, the position after them)."""
    ph = random(st) * period if phase != phase else phase
    n = np.int64(np.ceil((H - ph) / period)) if ph < H else 0
    if n < 0:
        n = 0
    T = _room(T, pos + n)
    for j in range(n):
        T[pos + j] = ph + period * np.float64(j)
    return T, pos + n


@njit(cache=True)
def _times(st, T, pos, kind, pkts, count, phase, one_size, on, off, H):
    """One stream's arrival times written from ``T[pos]`` (module docstring); returns (T, the position after)."""
    if kind == POISSON:
        scale = 1.0 / pkts
        t0 = 0.0
        while True:
            n = int(pkts * (H - t0) + 6.0 * math.sqrt(pkts * (H - t0) + 1.0) + 16)
            T = _room(T, pos + n)
            c = 0.0
            last = 0.0
            for i in range(n):
                c += exponential(st, scale)
                t = t0 + c
                if t < H:
                    T[pos] = t
                    pos += 1
                last = t
            if last >= H:
                break
            t0 = last
        return T, pos
    if kind == CBR and count > 1 and one_size:
        period = 1.0 / pkts
        ph = np.empty(count)
        for i in range(count):
            ph[i] = random(st) * period if phase != phase else phase
        ph = ph[np.argsort(ph, kind="mergesort")]
        n = np.zeros(count, np.int64)
        rows = 0
        total = 0
        for i in range(count):
            if ph[i] < H:
                n[i] = np.int64(np.ceil((H - ph[i]) / period))
            rows = max(rows, n[i])
            total += n[i]
        T = _room(T, pos + total)
        for j in range(rows):
            jf = np.float64(j)
            for i in range(count):
                if j < n[i]:
                    T[pos] = ph[i] + period * jf
                    pos += 1
        return T, pos
    if kind == CBR:
        for _ in range(count):
            T, pos = _clock(st, T, pos, 1.0 / pkts, H, phase)
        return T, pos
    # on-off
    peak = pkts * (on + off) / on
    start = pos
    T, end = _clock(st, T, pos, 1.0 / peak, H, np.nan)
    first_on = random(st) < on / (on + off)
    state = first_on
    t = exponential(st, on if state else off)
    ends = 1  # period ends at or before the current tick, counted as the ticks go by
    keep = pos
    for i in range(start, end):
        x = T[i]
        while t <= x:  # the ends at or before x: draw periods until one ends after it (or beyond H)
            if t >= H:
                break
            state = not state
            t += exponential(st, on if state else off)
            ends += 1
        # the period ends seen so far, less the one still after x
        before = ends - 1 if t > x else ends
        if (before % 2 == 0) == first_on:
            T[keep] = x
            keep += 1
    while t < H:  # the periods after the last tick, drawn as the whole process is
        state = not state
        t += exponential(st, on if state else off)
    return T, keep


@njit(cache=True)
def _sizes(st, Z, pos, n, law_sizes, law_cum, lo, nl, exp_law):
    """The sizes of ``n`` packets written from ``Z[pos]`` (module docstring); returns Z."""
    Z = _room(Z, pos + n)
    if exp_law:
        m = law_sizes[lo]
        for i in range(n):
            x = exponential(st, m)
            Z[pos + i] = 1.0 if x < 1.0 else (65535.0 if x > 65535.0 else x)
    elif nl == 1:
        Z[pos:pos + n] = law_sizes[lo]
    else:
        for i in range(n):
            u = random(st)
            j = 0
            while j < nl and law_cum[lo + j] <= u:
                j += 1
            Z[pos + i] = law_sizes[lo + j]
    return Z


@njit(cache=True)
def draw_flows(words, draw, src_off, kind, pkts, count, phase, one_size, on, off, law_off, law_n, law_exp,
               law_sizes, law_cum, sorted_src, H, reserve, T, Z, TC):
    """Every flow's packets on ``[0, H)`` (module docstring): flow ``k`` (if ``draw[k]``) from the PCG64 seeded by
    ``words[k]``, its streams ``src_off[k] .. src_off[k + 1]`` (per stream: ``kind``, ``pkts`` packets/s of a copy,
    ``count`` copies, ``phase`` s or NaN for random, ``one_size``, ``on``/``off`` s, its size law
    ``law_sizes[law_off .. law_off + law_n]`` with cumulative probabilities ``law_cum``, ``law_exp`` exponential,
    ``sorted_src`` whether its times come out sorted). Written into ``T`` (times, s), ``Z`` (sizes, B) and ``TC`` (the
    times again), grown when too short; after the drawn packets ``reserve[k]`` rows for each flow that has some (a
    saturated flow's, empty). Returns (T, Z, TC, start, n): flow ``k``'s packets are ``start[k] .. start[k] +
    n[k]``."""
    F = words.shape[0]
    start = np.zeros(F, np.int64)
    n = np.zeros(F, np.int64)
    pos = 0
    for k in range(F):
        start[k] = pos
        if draw[k]:
            st = seeded(words[k])
            for s in range(src_off[k], src_off[k + 1]):
                a = pos
                T, pos = _times(st, T, pos, kind[s], pkts[s], count[s], phase[s], one_size[s], on[s], off[s], H)
                Z = _sizes(st, Z, a, pos - a, law_sizes, law_cum, law_off[s], law_n[s], law_exp[s])
            a = start[k]
            if not (src_off[k + 1] - src_off[k] == 1 and sorted_src[src_off[k]]) and pos > a:
                o = np.argsort(T[a:pos], kind="mergesort")
                T[a:pos] = T[a:pos][o]
                Z[a:pos] = Z[a:pos][o]
        n[k] = pos - start[k]
    drawn = pos
    for k in range(F):
        if reserve[k] > 0:
            start[k] = pos
            pos += reserve[k]
    T = _room(T, pos)
    Z = _room(Z, pos)
    TC = _room(TC, pos)
    TC[:drawn] = T[:drawn]
    return T, Z, TC, start, n
