"""An event queue for numba event loops: a binary min-heap over three parallel arrays.

An event is a time (float64, seconds), a key (int64) that orders events of the same time, and a payload (int64)
packing ``kind | a << 4 | b << 32`` (kind < 16, 0 <= a < 2^28, 0 <= b < 2^31). A simulator gives each pushed event
the next value of a counter as its key, so events of equal time leave in the order they were pushed, and may give
a class of events negative keys to put them first (as :mod:`qosbound.validation.dumbbell_loop` does for link
departures).

Why not ``heapq`` on a list of tuples: in numba that list is reference counted on every access and a pop of an
empty list may raise, which makes every kernel calling it pay for error propagation; these functions never raise.
``hn = [count, overflow]``: a push into a full heap is not stored and sets ``overflow``, which the caller checks.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

__all__ = ["new_heap", "push", "pop", "pack", "KIND_MASK", "A_MASK"]

KIND_MASK = 15
A_MASK = (1 << 28) - 1


def new_heap(capacity: int):
    """Empty heap arrays ``(times, keys, payloads, hn)`` for at most ``capacity`` pending events."""
    return np.empty(capacity), np.empty(capacity, np.int64), np.empty(capacity, np.int64), np.zeros(2, np.int64)


@njit(cache=True, inline="always", _nrt=False)
def pack(kind, a, b):
    """The payload of an event: ``kind`` (< 16), ``a`` (< 2^28), ``b`` (< 2^31)."""
    return kind | (a << 4) | (b << 32)


@njit(cache=True, error_model="numpy", _nrt=False)
def push(ht, hk, hv, hn, t, key, v):
    """Insert event (t, key, payload v). Sets ``hn[1]`` and drops the event when the heap is full."""
    i = hn[0]
    if i >= ht.shape[0]:
        hn[1] = 1
        return
    hn[0] = i + 1
    while i > 0:
        p = (i - 1) >> 1
        tp = ht[p]
        if tp < t or (tp == t and hk[p] < key):
            break
        ht[i] = tp
        hk[i] = hk[p]
        hv[i] = hv[p]
        i = p
    ht[i] = t
    hk[i] = key
    hv[i] = v


@njit(cache=True, error_model="numpy", _nrt=False)
def pop(ht, hk, hv, hn):
    """Remove and return the earliest event ``(t, key, payload)`` (the caller checks ``hn[0] > 0`` first)."""
    t0 = ht[0]
    k0 = hk[0]
    v0 = hv[0]
    n = hn[0] - 1
    hn[0] = n
    t = ht[n]
    k = hk[n]
    v = hv[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        c2 = c + 1
        if c2 < n and (ht[c2] < ht[c] or (ht[c2] == ht[c] and hk[c2] < hk[c])):
            c = c2
        tc = ht[c]
        if t < tc or (t == tc and k < hk[c]):
            break
        ht[i] = tc
        hk[i] = hk[c]
        hv[i] = hv[c]
        i = c
    if n > 0:
        ht[i] = t
        hk[i] = k
        hv[i] = v
    return t0, k0, v0
