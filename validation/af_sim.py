"""AF port simulator (numba): markers -> per-class WRED / RIO / n-RED droppers -> CBWFQ (WFQ virtual time).

Semantics (the same as :mod:`qosbound.analytic.red_queue` and ``models/wred.prism``):

* Sources are Poisson or CBR packet streams of fixed or exponential sizes,
  each feeding one class with a fixed colour or through its own marker
  (:mod:`qosbound.validation.markers`, colour-blind or colour-aware).
* Each class has a FIFO buffer of ``K`` packets, counting the one on the wire.
  On every arrival the class's three cumulative averages are updated with a
  true floating-point EWMA, ``avg <- (1 - alpha) avg + alpha q`` (Takeo & Tasaka 2003),
  where ``q`` counts the packets queued at the arrival; the colour's drop
  probability comes from :func:`qosbound.validation.droppers.colour_drop_prob`
  (the one implementation every simulator uses). An arrival to a full buffer is dropped.
* CBWFQ: WFQ (Parekh & Gallager) across classes with weights ``w_i``. GPS
  virtual time advances at ``C / sum of weights of GPS-backlogged classes``; an
  admitted packet gets the finish tag ``max(V, F_last) + 8 L / w_i``; when the
  link frees, the head packet with the smallest finish tag is sent.
* ``service: guaranteed`` (``Config.dedicated``): each class is served by its own server at its guaranteed
  CBWFQ share ``C w_i / sum of w over the classes with traffic``, never more (not work-conserving), the
  semantics the closed form and the model use for that setting.
* Delay is from arrival to the last bit on the wire.

The first ``warmup`` arrivals are not measured. Replications use independent
seeds; estimates are means over replications with Student-t intervals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

from qosbound.validation.droppers import colour_drop_prob, update_averages
from qosbound.validation.markers import mark
from qosbound.validation.trace import make_table

__all__ = ["Config", "SimStats", "simulate", "replicate", "trace_table"]


@dataclass
class Config:
    """Arrays describing one AF port (see the module docstring)."""

    C: float  # link rate, bit/s
    w: np.ndarray  # (m,) CBWFQ weights (bit/s)
    K: np.ndarray  # (m,) buffers, packets
    min_th: np.ndarray  # (m, 3) packets
    max_th: np.ndarray  # (m, 3) packets
    max_p: np.ndarray  # (m, 3) = 1/P_d
    mode: np.ndarray  # (m,) 0 WRED, 1 RIO, 2 n-RED
    gentle: np.ndarray  # (m,) bool
    alpha: np.ndarray  # (m,) EWMA weight
    src_cls: np.ndarray  # (n,) class index
    src_colour: np.ndarray  # (n,) fixed or pre-colour
    src_rate: np.ndarray  # (n,) packets/s
    src_size: np.ndarray  # (n,) bytes (mean for exponential)
    src_expsize: np.ndarray  # (n,) bool
    src_cbr: np.ndarray  # (n,) bool
    src_marker: np.ndarray  # (n,) -1 none, else marker kind
    src_aware: np.ndarray  # (n,) bool
    marker_state: np.ndarray  # (n, 7)
    dedicated: np.ndarray | None = None  # (m,) bit/s: each class its own server at this rate (None: WFQ)


@dataclass
class SimStats:
    """Per-(class, colour) counts and sums of one replication."""

    arrivals: np.ndarray
    drops: np.ndarray
    delay_sum: np.ndarray
    delivered: np.ndarray
    queue_area: np.ndarray
    bits: np.ndarray
    avg_sum: np.ndarray
    duration: float
    packets: int
    arrival_bytes: np.ndarray = None  # (m, 3) bytes offered per class and colour (measured arrivals)


@njit(cache=True)
def _advance(V, tV, t, F_last, w, C):
    """Advance GPS virtual time from tV to t."""
    m = w.shape[0]
    while tV < t:
        W = 0.0
        vmin = np.inf
        for i in range(m):
            if F_last[i] > V:
                W += w[i]
                if F_last[i] < vmin:
                    vmin = F_last[i]
        if W == 0.0:
            return V, t
        dt = (vmin - V) * W / C
        if tV + dt <= t:
            V = vmin
            tV += dt
        else:
            V += (t - tV) * C / W
            tV = t
    return V, tV


@njit(cache=True)
def _run(C, w, K, min_th, max_th, max_p, mode, gentle, alpha, src_cls, src_colour, src_rate, src_size,
         src_expsize, src_cbr, src_marker, src_aware, mstate, n_packets, warmup, seed, n_trace,
         tr_cls, tr_col, tr_size, tr_arr, tr_dep, tr_drop, dedicated):
    np.random.seed(seed)
    m = w.shape[0]
    ns = src_cls.shape[0]
    cap = 1
    for i in range(m):
        if K[i] > cap:
            cap = K[i]
    q_arr = np.zeros((m, cap))
    q_size = np.zeros((m, cap))
    q_col = np.zeros((m, cap), dtype=np.int64)
    q_F = np.zeros((m, cap))
    q_id = np.full((m, cap), -1, dtype=np.int64)
    q_meas = np.zeros((m, cap), dtype=np.bool_)
    head = np.zeros(m, dtype=np.int64)
    cnt = np.zeros(m, dtype=np.int64)
    qcol = np.zeros((m, 3))
    avgs = np.zeros((m, 3))
    F_last = np.zeros(m)
    arrivals = np.zeros((m, 3))
    drops = np.zeros((m, 3))
    dsum = np.zeros((m, 3))
    dcnt = np.zeros((m, 3))
    area = np.zeros(m)
    bits = np.zeros(m)
    avg_sum = np.zeros((m, 3))
    abytes = np.zeros((m, 3))
    nxt = np.empty(ns)
    for s in range(ns):
        if src_cbr[s]:
            nxt[s] = np.random.random() / src_rate[s]
        else:
            nxt[s] = -math.log(1.0 - np.random.random()) / src_rate[s]
    V = 0.0
    tV = 0.0
    t = 0.0
    t_prev = 0.0
    t_warm = -1.0
    busy = False
    serving = -1
    dep = np.inf
    guaranteed = dedicated.shape[0] == m
    dep_c = np.full(m, np.inf)  # guaranteed service: each class's own departure time
    n = 0
    ntr = 0
    while n < n_packets:
        s = 0
        ta = nxt[0]
        for j in range(1, ns):
            if nxt[j] < ta:
                ta = nxt[j]
                s = j
        if guaranteed:
            busy = False
            dep = np.inf
            for k in range(m):
                if dep_c[k] < dep:
                    dep = dep_c[k]
                    serving = k
                    busy = True
        if busy and dep <= ta:
            t = dep
            if t_warm >= 0.0:
                for i in range(m):
                    area[i] += cnt[i] * (t - t_prev)
            t_prev = t
            i = serving
            h = head[i]
            c = q_col[i, h]
            if q_meas[i, h]:
                dsum[i, c] += t - q_arr[i, h]
                dcnt[i, c] += 1.0
            if t_warm >= 0.0:
                bits[i] += 8.0 * q_size[i, h]
            if q_id[i, h] >= 0:
                tr_dep[q_id[i, h]] = t
            head[i] = (h + 1) % cap
            cnt[i] -= 1
            qcol[i, c] -= 1.0
            busy = False
            dep = np.inf
            if guaranteed:
                dep_c[i] = t + 8.0 * q_size[i, head[i]] / dedicated[i] if cnt[i] > 0 else np.inf
                continue
            best = -1
            bF = np.inf
            for k in range(m):
                if cnt[k] > 0 and q_F[k, head[k]] < bF:
                    bF = q_F[k, head[k]]
                    best = k
            if best >= 0:
                busy = True
                serving = best
                dep = t + 8.0 * q_size[best, head[best]] / C
            continue
        t = ta
        if t_warm >= 0.0:
            for i in range(m):
                area[i] += cnt[i] * (t - t_prev)
        t_prev = t
        V, tV = _advance(V, tV, t, F_last, w, C)
        n += 1
        measured = n > warmup
        if measured and t_warm < 0.0:
            t_warm = t
        i = src_cls[s]
        if src_expsize[s]:
            size = -math.log(1.0 - np.random.random()) * src_size[s]
            if size < 1.0:
                size = 1.0
        else:
            size = src_size[s]
        if src_marker[s] >= 0:
            c = mark(mstate[s], src_marker[s], t, size, src_colour[s], src_aware[s])
        else:
            c = src_colour[s]
        update_averages(avgs[i], qcol[i], alpha[i])
        drop = cnt[i] >= K[i]
        if not drop:
            p = colour_drop_prob(avgs[i], c, min_th[i], max_th[i], max_p[i], mode[i], gentle[i])
            if p > 0.0 and np.random.random() < p:
                drop = True
        pid = -1
        if measured:
            arrivals[i, c] += 1.0
            abytes[i, c] += size
            for k in range(3):
                avg_sum[i, k] += avgs[i, k]
            if drop:
                drops[i, c] += 1.0
            if ntr < n_trace:
                pid = ntr
                tr_cls[ntr] = i
                tr_col[ntr] = c
                tr_size[ntr] = size
                tr_arr[ntr] = t
                tr_dep[ntr] = np.nan
                tr_drop[ntr] = drop
                ntr += 1
        if not drop:
            F = max(V, F_last[i]) + 8.0 * size / w[i]
            F_last[i] = F
            pos = (head[i] + cnt[i]) % cap
            q_arr[i, pos] = t
            q_size[i, pos] = size
            q_col[i, pos] = c
            q_F[i, pos] = F
            q_id[i, pos] = pid
            q_meas[i, pos] = measured
            cnt[i] += 1
            qcol[i, c] += 1.0
            if guaranteed:
                if cnt[i] == 1:
                    dep_c[i] = t + 8.0 * size / dedicated[i]
            elif not busy:
                busy = True
                serving = i
                dep = t + 8.0 * size / C
        if src_cbr[s]:
            nxt[s] = t + 1.0 / src_rate[s]
        else:
            nxt[s] = t - math.log(1.0 - np.random.random()) / src_rate[s]
    return arrivals, drops, dsum, dcnt, area, bits, avg_sum, t - max(t_warm, 0.0), ntr, abytes


def simulate(cfg: Config, packets: int, seed: int, warmup: int = 0, n_trace: int = 0):
    """One replication; returns :class:`SimStats` and, when ``n_trace`` > 0, the trace arrays."""
    tr = (np.zeros(n_trace, np.int64), np.zeros(n_trace, np.int64), np.zeros(n_trace), np.zeros(n_trace),
          np.full(n_trace, np.nan), np.zeros(n_trace, np.bool_))
    ms = cfg.marker_state.copy()
    out = _run(float(cfg.C), cfg.w.astype(float), cfg.K.astype(np.int64), cfg.min_th.astype(float),
               cfg.max_th.astype(float), cfg.max_p.astype(float), cfg.mode.astype(np.int64),
               cfg.gentle.astype(np.bool_), cfg.alpha.astype(float), cfg.src_cls.astype(np.int64),
               cfg.src_colour.astype(np.int64), cfg.src_rate.astype(float), cfg.src_size.astype(float),
               cfg.src_expsize.astype(np.bool_), cfg.src_cbr.astype(np.bool_), cfg.src_marker.astype(np.int64),
               cfg.src_aware.astype(np.bool_), ms, int(packets), int(warmup), int(seed), int(n_trace), *tr,
               np.zeros(0) if cfg.dedicated is None else np.asarray(cfg.dedicated, dtype=float))
    arrivals, drops, dsum, dcnt, area, bits, avg_sum, dur, ntr, abytes = out
    st = SimStats(arrivals, drops, dsum, dcnt, area, bits, avg_sum, float(dur), int(packets - warmup), abytes)
    if n_trace:
        return st, tuple(a[:ntr] for a in tr)
    return st


def replicate(cfg: Config, packets: int, replications: int, seed: int, warmup: int, progress=None):
    """Independent replications (seeds ``seed``, ``seed+1``, ...)."""
    out = []
    for r in range(replications):
        out.append(simulate(cfg, packets, seed + 7919 * r, warmup))
        if progress is not None:
            progress.advance(1)
    return out


def trace_table(cfg: Config, packets: int, seed: int, class_names: list[str], flow_names: list[str] | None = None):
    """Simulate ``packets`` arrivals and return them as a trace in :mod:`qosbound.validation.trace`'s schema."""
    _, (cls, col, size, arr, dep, drop) = simulate(cfg, packets, seed, 0, n_trace=packets)
    names = np.asarray(class_names, dtype=object)[cls]
    return make_table(flow=names if flow_names is None else np.asarray(flow_names, dtype=object)[cls],
                      cls=names, colour=col, size=np.maximum(np.round(size), 1), arrival=arr, departure=dep,
                      dropped=drop)
