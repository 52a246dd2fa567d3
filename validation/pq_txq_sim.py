"""Packet-level simulator of the EF priority queue + transmission queue (Ferrari, Pau & Raffaelli 2001, "Measurement Based Analysis of Delay in Priority Queueing"): set-up and runs.

The semantics and the compiled loops are in :mod:`qosbound.validation.pq_txq_kernels`;
this module checks a :class:`qosbound.systems.pq_txq.params.Params`, converts it to the kernels'
integers and ticks (:func:`setup`), runs independent replications
(:func:`run_replications`, plain per-replication arrays) or one per-packet trace
(:func:`simulate_trace`). The system layer names the estimates as metrics
(:func:`qosbound.systems.pq_txq.simulated.simulated_results`).

Consequence used as a check: an EF packet's delay is a function of the state it
finds, ``D = W + (n + 1) * L_EF*8/C`` with ``W`` the remaining work in the TxQ at
its arrival and ``n`` the EF packets ahead of it in the PQ. Hence
``D <= (Q_t - 1)*T_u + L_max*8/C + pq_cap*L_EF*8/C`` (the TxQ accepts a packet
only while fewer than ``Q_t`` units are occupied, and a unit holds ``unit`` bytes).

With CBR arrivals whose period is commensurate with the tick, the arrival
phase relative to the lattice of departure times never changes, so a single
replication does not average over phases: each replication draws its own phase,
and the spread between replications (hence the interval) is much wider than with
Poisson arrivals. Use more replications rather than longer ones for CBR.

Statistics are streamed: per replication, a histogram of EF delays in fixed bins
(with the minimum and maximum seen in each bin) covering the maximum-delay bound
plus 5 %, the sum and sum of squares of delays, the maximum, the counts of
arrivals, losses and delays above each requested CCDF point. Memory does not grow
with the packet count. Replications run in parallel (numba ``prange``); each one
seeds numba's generator at its start, so results do not depend on the thread count.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections import OrderedDict
from dataclasses import dataclass
from functools import reduce

import numba
import numpy as np

from qosbound.errors import EngineError, ScenarioError
from qosbound.validation.pq_txq_kernels import (ARRIVALS, N_SSTATS, N_STATS, NEVER, SS_SUM, S_ARRIVALS, S_DELAYS, S_LOST, S_MAX,
                                                S_OVERFLOW, S_PACKETS, S_SUM, S_SUMSQ, S_TIME, simulate_batch,
                                                simulate_one)
from qosbound.validation.stats import nice_bin_width, replication_seeds
from qosbound.validation.trace import make_table

__all__ = ["Setup", "setup", "max_delay_bound", "run_replications", "Replications", "simulate_trace", "threads",
           "S_ARRIVALS", "S_LOST", "S_DELAYS", "S_SUM", "S_SUMSQ", "S_MAX", "S_OVERFLOW", "S_PACKETS", "S_TIME",
           "N_STATS"]

MAX_BINS = 20_000  # histogram bins per replication
BOUND_MARGIN = 1.05  # bins cover the max-delay bound times this


# --------------------------------------------------------------------------------------------- set-up

@dataclass(frozen=True)
class Setup:
    """A :class:`qosbound.systems.pq_txq.params.Params` reduced to the kernel's integers and ticks."""

    tick: float  # s per tick
    integral: bool  # every size is a whole number of ticks
    arrivals: int  # ARRIVALS code
    lam_tick: float  # EF arrivals per tick
    p_slot: float  # Bernoulli arrival probability per slot (slot = 1 tick)
    ef_size: float  # bytes
    ef_ticks: float
    ef_units: int
    be_sizes: np.ndarray  # bytes
    be_ticks: np.ndarray
    be_units: np.ndarray
    be_cum: np.ndarray  # cumulative probabilities, last = 1
    be_lam_tick: float  # BE packet arrivals per tick; 0: saturated best effort
    Q_t: int
    pq_cap: int
    bound: float  # max EF delay, s
    bin_width: float  # s
    bins: int
    s_kind: np.ndarray  # per EF stream: 0 Poisson, 1 CBR (one entry for a single stream)
    s_rate: np.ndarray  # per EF stream: arrivals per tick
    s_phase: np.ndarray  # per EF stream: first CBR arrival, ticks; < 0 random


def max_delay_bound(p) -> float:
    """The largest EF delay the semantics allow, s: ``(Q_t-1)*T_u + L_max*8/C + pq_cap*L_EF*8/C``."""
    l_max = max(float(np.max(p.be_sizes)), float(p.ef_size))
    return (p.Q_t - 1) * p.unit * 8.0 / p.C + l_max * 8.0 / p.C + p.pq_cap * p.ef_size * 8.0 / p.C


def _whole(x: float) -> bool:
    return abs(x - round(x)) <= 1e-9 * max(1.0, abs(x)) and round(x) >= 1


def setup(p) -> Setup:
    """Check the parameters and convert them for the kernels (raises ScenarioError on bad input, naming the
    attribute of ``p`` at fault)."""
    if not p.C > 0:
        raise ScenarioError("link rate must be positive", field="C")
    if p.rho >= 1:
        raise ScenarioError(f"EF utilisation {p.rho:.4g} >= 1: the priority queue is unstable",
                            field="ef_rate")
    streams = tuple(getattr(p, "ef_streams", ()))
    if p.arrivals not in ARRIVALS or (p.arrivals == "aggregate" and not streams):
        raise ScenarioError(f"unknown arrival process '{p.arrivals}'; expected poisson, cbr or bernoulli",
                            field="arrivals")
    sizes = [float(p.ef_size)] + [float(s) for s in p.be_sizes]
    probs = np.asarray(p.be_probs, dtype=np.float64)
    if np.any(probs < 0) or np.any(probs > 1) or abs(probs.sum() - 1.0) > 1e-9:
        raise ScenarioError("BE size probabilities must lie in [0, 1] and sum to 1", field="be_probs")
    integral = all(_whole(s) for s in sizes)
    g = reduce(math.gcd, [int(round(s)) for s in sizes]) if integral else 1
    tick = g * 8.0 / p.C
    lam_tick = p.lam * tick
    p_slot = 0.0
    if p.arrivals == "bernoulli":
        if not integral:
            raise ScenarioError("Bernoulli arrivals are slotted on the gcd of the packet sizes, which needs "
                                "whole-byte sizes", field="arrivals")
        p_slot = lam_tick
        if p_slot > 1.0:
            raise ScenarioError(f"Bernoulli arrival probability per slot lam*tau = {p_slot:.4g} > 1",
                                field="ef_rate")
    unit = float(p.unit)
    ef_units = int(math.ceil(p.ef_size / unit - 1e-12))
    be_units = np.ceil(np.asarray(p.be_sizes, dtype=np.float64) / unit - 1e-12).astype(np.int64)
    be_sizes = np.asarray(p.be_sizes, dtype=np.float64)
    cum = np.cumsum(probs)
    cum[-1] = 1.0
    be_lam_tick = 0.0
    if getattr(p, "be_rate", None) is not None:
        if not p.be_rate > 0:
            raise ScenarioError("BE rate must be positive", field="be_rate")
        if p.rho + p.be_rate / p.C >= 1:
            raise ScenarioError(f"total utilisation {p.rho + p.be_rate / p.C:.4g} >= 1: the BE queue is unstable",
                                field="be_rate")
        be_lam_tick = p.be_rate / (8.0 * float(probs @ np.asarray(p.be_sizes, dtype=np.float64))) * tick
    arrivals = ARRIVALS[p.arrivals]
    if len(streams) > 1 or p.arrivals == "aggregate":
        # the superposition, stream by stream (several Poisson streams too: each keeps its own statistics)
        if any(k not in ("cbr", "poisson") for _, k, _ in streams):
            raise ScenarioError("aggregate EF streams are cbr or poisson", field="arrivals")
        arrivals = ARRIVALS["aggregate"]
        s_kind = np.array([1 if k == "cbr" else 0 for _, k, _ in streams], np.int64)
        s_rate = np.array([r / (8.0 * p.ef_size) * tick for r, _, _ in streams], np.float64)
        s_phase = np.array([ph / tick if ph >= 0 else -1.0 for _, _, ph in streams], np.float64)
    else:
        s_kind = np.array([1 if p.arrivals == "cbr" else 0], np.int64)
        s_rate, s_phase = np.array([lam_tick]), np.array([-1.0])
    bound = max_delay_bound(p)
    span = bound * BOUND_MARGIN
    width = nice_bin_width(span, MAX_BINS)
    bins = int(math.ceil(span / width)) + 1
    return Setup(tick=tick, integral=integral, arrivals=arrivals, lam_tick=lam_tick, p_slot=p_slot,
                 ef_size=float(p.ef_size), ef_ticks=p.ef_size / g, ef_units=ef_units, be_sizes=be_sizes,
                 be_ticks=be_sizes / g, be_units=be_units, be_cum=cum, be_lam_tick=be_lam_tick, Q_t=int(p.Q_t),
                 pq_cap=int(p.pq_cap), bound=bound, bin_width=width, bins=bins, s_kind=s_kind, s_rate=s_rate,
                 s_phase=s_phase)


# --------------------------------------------------------------------------------------------- runs

class threads:
    """Context manager running numba's parallel loops on ``n`` threads (``None``: leave as is)."""

    def __init__(self, n: int | None):
        self.n = n
        self.old = None

    def __enter__(self):
        if self.n is not None:
            self.old = numba.get_num_threads()
            numba.set_num_threads(max(1, min(int(self.n), numba.config.NUMBA_NUM_THREADS)))
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            numba.set_num_threads(self.old)
        return False


@dataclass
class Replications:
    """Raw per-replication output, delays in seconds."""

    setup: Setup
    seeds: np.ndarray
    counts: np.ndarray  # (R, bins)
    bin_min: np.ndarray  # (R, bins), s; +inf where empty
    bin_max: np.ndarray  # (R, bins), s; -inf where empty
    above: np.ndarray  # (R, len(ccdf)): delays > each CCDF point
    stats: np.ndarray  # (R, N_STATS); delay sums in s, s^2; time in s
    ccdf: np.ndarray  # the CCDF points, s
    packets: int
    warmup: float
    sstats: np.ndarray | None = None  # (R, streams, N_SSTATS): per EF stream arrivals, losses, delays, delay sum (s)


def _snap(x: np.ndarray) -> np.ndarray:
    """Put threshold values within rounding of an integer tick exactly on it (exact comparisons on lattices)."""
    r = np.round(x)
    return np.where(np.abs(x - r) <= 1e-9 * np.maximum(1.0, np.abs(x)), r, x)


#: Replications already run, by their inputs (see :func:`run_replications`): the last few runs only.
_KEPT: OrderedDict = OrderedDict()
_KEEP = 2


def _inputs_key(s: Setup, packets: int, warm: int, thr: np.ndarray, seed: int) -> str:
    """A digest of everything a replication's output depends on, its seed aside."""
    h = hashlib.sha256()
    for f in dataclasses.fields(s):
        v = getattr(s, f.name)
        h.update(f.name.encode())
        h.update(np.asarray(v).tobytes() if isinstance(v, np.ndarray) else repr(v).encode())
    h.update(repr((int(packets), int(warm), int(seed))).encode())
    h.update(np.asarray(thr, np.float64).tobytes())
    return h.hexdigest()


def run_replications(p, packets: int, replications: int, seed: int, warmup: float = 0.01,
                     ccdf=(), batch: int | None = None, n_threads: int | None = None,
                     advance=None) -> Replications:
    """Run independent replications of ``packets`` EF arrivals each (the first ``warmup`` fraction not counted).

    ``batch`` replications run in parallel at a time (default: the thread count); ``advance(k)`` is called
    after each batch. ``n_threads`` sets numba's thread count for the run.

    Replication ``r`` of a seed is the same whatever the number of replications (its seed is the ``r``-th
    spawned from the scenario seed), so a run that asks for more replications of inputs just run (an
    admission search's sequential looks: 2, then 4, then 8) reuses the ones it has and runs only the new ones;
    the output is the one a single run of that many replications gives.
    """
    s = setup(p)
    if packets < 1:
        raise ScenarioError("packets must be positive", field="packets")
    if replications < 1:
        raise ScenarioError("replications must be positive", field="replications")
    if not 0 <= warmup < 1:
        raise ScenarioError("warm-up must be a fraction in [0, 1)", field="warmup")
    warm = int(warmup * packets)
    ccdf = np.asarray(list(ccdf), dtype=np.float64)
    thr = _snap(ccdf / s.tick) if s.integral else ccdf / s.tick
    seeds = replication_seeds(seed, replications)
    R, B = replications, s.bins
    counts = np.zeros((R, B), np.int64)
    bmin = np.full((R, B), np.inf)
    bmax = np.full((R, B), -np.inf)
    above = np.zeros((R, ccdf.size), np.int64)
    st = np.zeros((R, N_STATS), np.float64)
    sst = np.zeros((R, s.s_kind.shape[0], N_SSTATS), np.float64)
    outputs = (counts, bmin, bmax, above, st, sst)
    key = _inputs_key(s, packets, warm, thr, seed)
    kept = _KEPT.get(key)
    done = 0
    if kept is not None:
        done = min(R, kept[0].shape[0])
        for out, old in zip(outputs, kept):
            out[:done] = old[:done]
        if advance is not None and done:
            advance(done)
    width_ticks = s.bin_width / s.tick
    with threads(n_threads):
        step = batch or numba.get_num_threads()
        for lo in range(done, R, step):
            hi = min(R, lo + step)
            simulate_batch(seeds[lo:hi], s.arrivals, s.lam_tick, s.p_slot, s.ef_ticks, s.ef_units, s.be_ticks,
                   s.be_units, s.be_cum, s.be_lam_tick, s.Q_t, s.pq_cap, int(packets), warm, width_ticks, thr,
                   counts[lo:hi], bmin[lo:hi], bmax[lo:hi], above[lo:hi], st[lo:hi],
                   s.s_kind, s.s_rate, s.s_phase, sst[lo:hi])
            if advance is not None:
                advance(hi - lo)
    if kept is None or R > kept[0].shape[0]:
        _KEPT[key] = tuple(x.copy() for x in outputs)
    _KEPT.move_to_end(key)
    while len(_KEPT) > _KEEP:
        _KEPT.popitem(last=False)
    if st[:, S_OVERFLOW].sum() > 0:
        raise EngineError(f"simulator: {int(st[:, S_OVERFLOW].sum())} EF delay(s) above the maximum-delay bound "
                          f"{s.bound:.6g} s; the simulator and the bound disagree")
    st[:, S_SUM] *= s.tick
    st[:, S_SUMSQ] *= s.tick ** 2
    st[:, S_MAX] *= s.tick
    st[:, S_TIME] *= s.tick
    sst[:, :, SS_SUM] *= s.tick
    return Replications(s, seeds, counts, bmin * s.tick, bmax * s.tick, above, st, ccdf, int(packets), warmup, sst)


def simulate_trace(p, packets: int, seed: int, *, with_state: bool = False):
    """Simulate ``packets`` packets (EF arrivals and BE packets together) and return the per-packet trace.

    The result is a pyarrow Table in :mod:`qosbound.validation.trace`'s schema (flow and cls "EF" or
    "BE"; a BE packet's arrival is the time it entered the TxQ), sorted by arrival; write it with
    :func:`qosbound.validation.trace.write_trace`. No packet is created after the ``packets``-th; the
    ones present then are drained, so every accepted packet has a departure.

    With ``with_state=True`` also return a dict of NumPy arrays aligned with the table's rows:
    ``work`` (remaining TxQ work found by an EF arrival, s; NaN for BE) and ``ahead`` (EF packets
    ahead of it in the PQ; -1 for BE).
    """
    s = setup(p)
    if packets < 1:
        raise ScenarioError("a trace needs at least one packet", field="packets")
    n = int(packets)
    cls = np.zeros(n, np.int8)
    size = np.zeros(n, np.int64)
    arr = np.zeros(n, np.float64)
    dep = np.full(n, np.nan)
    drop = np.zeros(n, np.bool_)
    work = np.full(n, np.nan)
    ahead = np.full(n, -1, np.int64)
    st = np.zeros(N_STATS, np.float64)
    stream = np.zeros(n, np.int64)
    seed32 = int(replication_seeds(seed, 1)[0])
    rows = simulate_one(seed32, s.arrivals, s.lam_tick, s.p_slot, s.ef_ticks, s.ef_units, s.be_ticks, s.be_units,
                     s.be_cum, s.be_lam_tick, s.Q_t, s.pq_cap, NEVER, 0, n, 1.0, np.zeros(0), np.zeros(1, np.int64),
                     np.zeros(1), np.zeros(1), np.zeros(0, np.int64), st, cls, size, arr, dep, drop, work, ahead,
                     s.s_kind, s.s_rate, s.s_phase, np.zeros((s.s_kind.shape[0], N_SSTATS)), stream)
    sl = slice(0, rows)
    cols = (cls, size, arr, dep, drop, work, ahead, stream)
    cls, size, arr, dep, drop, work, ahead, stream = (x[sl] for x in cols)
    order = np.argsort(arr, kind="stable")
    cls, size, arr, dep, drop, work, ahead, stream = (x[order] for x in (cls, size, arr, dep, drop, work, ahead,
                                                                         stream))
    nbytes = np.where(cls == 0, s.ef_size, s.be_sizes[np.maximum(size, 0)])
    names = np.where(cls == 0, "EF", "BE")
    flows = names
    if s.arrivals == ARRIVALS["aggregate"]:  # the EF stream as the flow: EF.s1, EF.s2, ...
        flows = np.where(cls == 0, np.char.add("EF.s", (stream + 1).astype(str)), "BE")
    table = make_table(flow=flows, cls=names, size=np.round(nbytes).astype(np.int64), arrival=arr * s.tick,
                       departure=np.where(drop, np.nan, dep * s.tick), dropped=drop)
    if with_state:
        return table, {"work": np.where(cls == 0, work * s.tick, np.nan), "ahead": np.where(cls == 0, ahead, -1)}
    return table
