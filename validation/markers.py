"""Token-bucket markers for the simulator (numba): srTCM (RFC 2697), trTCM (RFC 2698), two-colour bucket.

Token counts are bytes and grow continuously with time (RFC 2697/2698 add one
byte CIR times per second; the continuous form is its limit), capped at the
bucket depths; both buckets start full. Rates are bit/s, depths bytes.

A marker's state is a float64 array of length 7:
``[t_last, T1, T2, rate1, depth1, rate2, depth2]`` where for trTCM bucket 1 is
C (CIR, CBS) and bucket 2 is P (PIR, PBS); for srTCM bucket 1 is C (CIR, CBS)
and bucket 2 is E (filled by C's overflow, depth EBS, ``rate2`` unused); for
the two-colour bucket only bucket 1 is used. Colours: 0 green, 1 yellow, 2 red
(the two-colour bucket marks IN packets green and OUT packets red).

``mark(state, kind, t, size, pre, aware) -> colour`` with ``kind`` 0 trTCM,
1 srTCM, 2 two-colour; ``pre`` is the pre-colour used in colour-aware mode.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

__all__ = ["TRTCM", "SRTCM", "TWO_COLOUR", "KINDS", "new_state", "mark", "mark_stream"]

TRTCM = 0
SRTCM = 1
TWO_COLOUR = 2
KINDS = {"trtcm": TRTCM, "srtcm": SRTCM, "two-colour": TWO_COLOUR}


def new_state(kind: str, cir: float, cbs: float, pir_or_ebs: float = 0.0, pbs: float = 0.0) -> np.ndarray:
    """Initial state (buckets full at time 0). trTCM: (CIR, CBS, PIR, PBS); srTCM: (CIR, CBS, EBS)."""
    if kind == "trtcm":
        return np.array([0.0, cbs, pbs, cir, cbs, pir_or_ebs, pbs])
    if kind == "srtcm":
        return np.array([0.0, cbs, pir_or_ebs, cir, cbs, 0.0, pir_or_ebs])
    return np.array([0.0, cbs, 0.0, cir, cbs, 0.0, 0.0])


@njit(cache=True, error_model="numpy", _nrt=False)  # no reference counting: see validation/dumbbell_loop.py
def mark(state, kind, t, size, pre, aware):
    """Colour of a ``size``-byte packet arriving at ``t`` (updates ``state`` in place)."""
    dt = t - state[0]
    if dt < 0.0:
        dt = 0.0
    state[0] = t
    inc1 = state[3] / 8.0 * dt
    if kind == 1:  # srTCM: C fills first, its overflow goes to E
        room = state[4] - state[1]
        if inc1 <= room:
            state[1] += inc1
        else:
            state[1] = state[4]
            state[2] = min(state[6], state[2] + inc1 - room)
    else:
        state[1] = min(state[4], state[1] + inc1)
        if kind == 0:
            state[2] = min(state[6], state[2] + state[5] / 8.0 * dt)
    if not aware:
        pre = 0
    if kind == 0:
        if pre == 2 or state[2] < size:
            return 2
        if pre == 1 or state[1] < size:
            state[2] -= size
            return 1
        state[2] -= size
        state[1] -= size
        return 0
    if kind == 1:
        if pre == 0 and state[1] >= size:
            state[1] -= size
            return 0
        if pre <= 1 and state[2] >= size:
            state[2] -= size
            return 1
        return 2
    if pre == 0 and state[1] >= size:
        state[1] -= size
        return 0
    return 2


@njit(cache=True)
def _stream(state, kind, times, sizes, pre, aware):
    out = np.empty(times.shape[0], dtype=np.int8)
    for i in range(times.shape[0]):
        out[i] = mark(state, kind, times[i], sizes[i], pre[i], aware)
    return out


def mark_stream(kind: str, state: np.ndarray, times, sizes, pre=None, aware: bool = False) -> np.ndarray:
    """Colours of a whole packet stream (times in s, sizes in bytes)."""
    times = np.ascontiguousarray(times, dtype=np.float64)
    sizes = np.ascontiguousarray(np.broadcast_to(sizes, times.shape), dtype=np.float64)
    pre = np.zeros(times.shape, dtype=np.int64) if pre is None else np.ascontiguousarray(pre, dtype=np.int64)
    return _stream(state, KINDS[kind], times, sizes, pre, bool(aware))
