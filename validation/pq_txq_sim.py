"""Packet-level simulator of the EF priority queue + transmission queue (Ferrari, Pau & Raffaelli 2001, "Measurement Based Analysis of Delay in Priority Queueing").

Semantics (the same as :mod:`qosbound.systems.pq_txq` and the PRISM model; DESIGN.md,
"Priority queue + transmission queue"):

* time is continuous; the line is always busy, because best effort (BE) is
  saturated and the transmission queue (TxQ) always holds packets;
* a packet of ``size`` bytes occupies ``ceil(size/unit)`` units of the TxQ;
* when the last bit of the head packet leaves at time ``t`` its units are freed;
  then every EF arrival with arrival time ``<= t`` joins the priority queue (PQ),
  or is lost when the PQ already holds ``pq_cap`` packets; then the scheduler
  moves packets into the TxQ while fewer than ``Q_t`` units are occupied: the
  head EF packet if the PQ is non-empty, else a BE packet whose size is drawn
  i.i.d. from the BE size distribution;
* at time 0 the TxQ is filled with BE packets (drawn) and the PQ is empty;
* EF delay = departure of its last bit - its arrival.

EF arrival processes: ``poisson`` (exponential inter-arrival times, rate
``lam``), ``cbr`` (period ``1/lam``, first arrival at a uniform random phase in
one period), ``bernoulli`` (slotted: at each time ``k * tau``, k = 1, 2, ..., an
arrival with probability ``lam * tau``; ``tau = g*8/C`` where ``g`` is the gcd in
bytes of the EF size and all BE sizes).

Consequence used as a check: an EF packet's delay is a function of the state it
finds, ``D = W + (n + 1) * L_EF*8/C`` with ``W`` the remaining work in the TxQ at
its arrival and ``n`` the EF packets ahead of it in the PQ. Hence
``D <= (Q_t - 1)*T_u + L_max*8/C + pq_cap*L_EF*8/C`` (the TxQ accepts a packet
only while fewer than ``Q_t`` units are occupied, and a unit holds ``unit`` bytes).

Time inside the kernels is counted in ticks of ``g*8/C`` (one byte time when a
size is not a whole number of bytes), so with whole-byte sizes every departure
time is an exact integer number of ticks and Bernoulli delays are exact.

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

import math
from dataclasses import dataclass
from functools import reduce

import numba
import numpy as np
from numba import njit, prange

from qosbound.errors import EngineError, ScenarioError
from qosbound.results import Interval, Result
from qosbound.systems.base import ccdf_name, quantile_name
from qosbound.validation.stats import (hist_quantile, nice_bin_width, proportion_interval, proportion_se,
                                       replication_seeds, t_interval)

__all__ = ["Setup", "setup", "max_delay_bound", "run_replications", "replication_seeds", "Replications",
           "simulated_results", "simulate_trace", "reference_departures", "threads"]

ARRIVALS = {"poisson": 0, "cbr": 1, "bernoulli": 2}
MAX_BINS = 20_000  # histogram bins per replication
BOUND_MARGIN = 1.05  # bins cover the max-delay bound times this
_NEVER = np.int64(2**62)

# Indices into a replication's statistics vector.
S_ARRIVALS, S_LOST, S_DELAYS, S_SUM, S_SUMSQ, S_MAX, S_OVERFLOW, S_PACKETS, S_TIME = range(9)
N_STATS = 9


# --------------------------------------------------------------------------------------------- set-up

@dataclass(frozen=True)
class Setup:
    """A :class:`qosbound.systems.pq_txq.Params` reduced to the kernel's integers and ticks."""

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
    Q_t: int
    pq_cap: int
    bound: float  # max EF delay, s
    bin_width: float  # s
    bins: int


def max_delay_bound(p) -> float:
    """The largest EF delay the semantics allow, s: ``(Q_t-1)*T_u + L_max*8/C + pq_cap*L_EF*8/C``."""
    l_max = max(float(np.max(p.be_sizes)), float(p.ef_size))
    return (p.Q_t - 1) * p.unit * 8.0 / p.C + l_max * 8.0 / p.C + p.pq_cap * p.ef_size * 8.0 / p.C


def _whole(x: float) -> bool:
    return abs(x - round(x)) <= 1e-9 * max(1.0, abs(x)) and round(x) >= 1


def setup(p) -> Setup:
    """Check the parameters and convert them for the kernels (raises ScenarioError on bad input)."""
    if not p.C > 0:
        raise ScenarioError("link rate must be positive", field="link.rate")
    if p.rho >= 1:
        raise ScenarioError(f"EF utilisation {p.rho:.4g} >= 1: the priority queue is unstable",
                            field="traffic.EF.rate")
    if p.arrivals not in ARRIVALS:
        raise ScenarioError(f"unknown arrival process '{p.arrivals}'; expected poisson, cbr or bernoulli",
                            field="traffic.EF.arrivals")
    sizes = [float(p.ef_size)] + [float(s) for s in p.be_sizes]
    probs = np.asarray(p.be_probs, dtype=np.float64)
    if np.any(probs < 0) or np.any(probs > 1) or abs(probs.sum() - 1.0) > 1e-9:
        raise ScenarioError("BE size probabilities must lie in [0, 1] and sum to 1", field="traffic.BE.sizes")
    integral = all(_whole(s) for s in sizes)
    g = reduce(math.gcd, [int(round(s)) for s in sizes]) if integral else 1
    tick = g * 8.0 / p.C
    lam_tick = p.lam * tick
    p_slot = 0.0
    if p.arrivals == "bernoulli":
        if not integral:
            raise ScenarioError("Bernoulli arrivals are slotted on the gcd of the packet sizes, which needs "
                                "whole-byte sizes", field="traffic.EF.arrivals")
        p_slot = lam_tick
        if p_slot > 1.0:
            raise ScenarioError(f"Bernoulli arrival probability per slot lam*tau = {p_slot:.4g} > 1",
                                field="traffic.EF.rate")
    unit = float(p.unit)
    ef_units = int(math.ceil(p.ef_size / unit - 1e-12))
    be_units = np.ceil(np.asarray(p.be_sizes, dtype=np.float64) / unit - 1e-12).astype(np.int64)
    be_sizes = np.asarray(p.be_sizes, dtype=np.float64)
    cum = np.cumsum(probs)
    cum[-1] = 1.0
    bound = max_delay_bound(p)
    span = bound * BOUND_MARGIN
    width = nice_bin_width(span, MAX_BINS)
    bins = int(math.ceil(span / width)) + 1
    return Setup(tick=tick, integral=integral, arrivals=ARRIVALS[p.arrivals], lam_tick=lam_tick, p_slot=p_slot,
                 ef_size=float(p.ef_size), ef_ticks=p.ef_size / g, ef_units=ef_units, be_sizes=be_sizes,
                 be_ticks=be_sizes / g, be_units=be_units, be_cum=cum, Q_t=int(p.Q_t), pq_cap=int(p.pq_cap),
                 bound=bound, bin_width=width, bins=bins)


# --------------------------------------------------------------------------------------------- kernels

@njit(cache=True)
def _next_arrival(kind, lam_tick, p_slot, phase, k, prev):
    """Arrival time (ticks) of EF packet number k (0-based), given the previous one."""
    if kind == 0:
        return prev + np.random.exponential(1.0 / lam_tick)
    elif kind == 1:
        return phase + k / lam_tick
    else:
        return prev + np.float64(np.random.geometric(p_slot))


@njit(cache=True)
def _draw_be(cum):
    u = np.random.random()
    j = 0
    n = cum.shape[0]
    while j < n - 1 and u >= cum[j]:
        j += 1
    return j


@njit(cache=True)
def _simulate(seed, kind, lam_tick, p_slot, ef_ticks, ef_units, be_ticks, be_units, be_cum, Q_t, pq_cap,
              max_ef, warm, max_rows, width_ticks, thresholds,
              counts, bmin, bmax, above, stats,
              tr_cls, tr_size, tr_arr, tr_dep, tr_drop, tr_work, tr_ahead):
    """One replication. Statistics mode: ``max_ef`` EF arrivals, the first ``warm`` not counted, run until
    every accepted EF packet has left. Trace mode (``max_rows`` < 2^62): stop creating packets after
    ``max_rows`` rows, then drain; rows go to the ``tr_*`` arrays (cls 0 = EF, 1 = BE)."""
    np.random.seed(seed)
    tracing = max_rows < 4611686018427387904
    nbins = counts.shape[0]
    nthr = thresholds.shape[0]
    inv_width = 1.0 / width_ticks
    # TxQ ring buffer (at most Q_t packets: each takes >= 1 unit and entry needs occupied < Q_t).
    q_tx = np.empty(Q_t, np.float64)
    q_units = np.empty(Q_t, np.int64)
    q_arr = np.empty(Q_t, np.float64)  # EF arrival time, or -1 for BE
    q_row = np.empty(Q_t, np.int64)
    q_head = 0
    q_tail = 0
    q_n = 0
    occupied = 0
    # PQ ring buffer.
    p_arr = np.empty(pq_cap, np.float64)
    p_row = np.empty(pq_cap, np.int64)
    p_head = 0
    p_tail = 0
    p_n = 0
    rows = 0
    t = 0.0
    work = 0.0  # total transmission time in the TxQ from t on (ticks)
    ef_in = 0  # accepted EF packets not yet departed
    ef_gen = 0
    phase = 0.0
    if kind == 1:
        phase = np.random.random() / lam_tick
    next_arr = _next_arrival(kind, lam_tick, p_slot, phase, 0, 0.0)
    gen_done = max_ef <= 0
    lost_all = 0
    packets = 0
    n_arr = 0
    n_lost = 0
    n_del = 0
    s_sum = 0.0
    s_sq = 0.0
    s_max = 0.0
    overflow = 0
    first = True
    while first or q_n > 0:
        if first:
            first = False  # the initial fill below, at t = 0, with the PQ empty
        else:
            # The head packet's last bit leaves.
            tx = q_tx[q_head]
            t += tx
            work -= tx
            occupied -= q_units[q_head]
            a = q_arr[q_head]
            r = q_row[q_head]
            q_head += 1
            if q_head == Q_t:
                q_head = 0
            q_n -= 1
            packets += 1
            if tracing:
                tr_dep[r] = t
            if a >= 0.0:
                ef_in -= 1
                if not tracing and r >= warm:  # r is the EF sequence number in statistics mode
                    d = t - a
                    n_del += 1
                    s_sum += d
                    s_sq += d * d
                    if d > s_max:
                        s_max = d
                    b = np.int64(d * inv_width)
                    if b >= nbins:
                        overflow += 1
                    else:
                        counts[b] += 1
                        if d < bmin[b]:
                            bmin[b] = d
                        if d > bmax[b]:
                            bmax[b] = d
                    for i in range(nthr):
                        if d > thresholds[i]:
                            above[i] += 1
            # EF arrivals up to and including t join the PQ or are lost.
            while not gen_done and next_arr <= t and rows < max_rows:
                seq = ef_gen
                ef_gen += 1
                counted = (not tracing) and seq >= warm
                if counted:
                    n_arr += 1
                rid = rows if tracing else seq
                if tracing:
                    tr_cls[rows] = 0
                    tr_size[rows] = -1
                    tr_arr[rows] = next_arr
                    tr_work[rows] = work + (t - next_arr)  # the head left at t; work counts the rest
                    tr_ahead[rows] = p_n
                    rows += 1
                if p_n < pq_cap:
                    p_arr[p_tail] = next_arr
                    p_row[p_tail] = rid
                    p_tail += 1
                    if p_tail == pq_cap:
                        p_tail = 0
                    p_n += 1
                    ef_in += 1
                    if tracing:
                        tr_drop[rid] = False
                else:
                    lost_all += 1
                    if counted:
                        n_lost += 1
                    if tracing:
                        tr_drop[rid] = True
                        tr_dep[rid] = np.nan
                if ef_gen >= max_ef:
                    gen_done = True
                else:
                    next_arr = _next_arrival(kind, lam_tick, p_slot, phase, ef_gen, next_arr)
            if gen_done and not tracing and ef_in == 0:
                break
        # Refill: head EF first, else a fresh BE packet.
        while occupied < Q_t:
            if p_n > 0:
                q_tx[q_tail] = ef_ticks
                q_units[q_tail] = ef_units
                q_arr[q_tail] = p_arr[p_head]
                q_row[q_tail] = p_row[p_head]
                p_head += 1
                if p_head == pq_cap:
                    p_head = 0
                p_n -= 1
                occupied += ef_units
                work += ef_ticks
            elif rows < max_rows:
                j = _draw_be(be_cum)
                q_tx[q_tail] = be_ticks[j]
                q_units[q_tail] = be_units[j]
                q_arr[q_tail] = -1.0
                q_row[q_tail] = rows
                if tracing:
                    tr_cls[rows] = 1
                    tr_size[rows] = j
                    tr_arr[rows] = t
                    tr_drop[rows] = False
                rows += 1
                occupied += be_units[j]
                work += be_ticks[j]
            else:
                break
            q_tail += 1
            if q_tail == Q_t:
                q_tail = 0
            q_n += 1
    stats[S_ARRIVALS] = n_arr
    stats[S_LOST] = n_lost
    stats[S_DELAYS] = n_del
    stats[S_SUM] = s_sum
    stats[S_SUMSQ] = s_sq
    stats[S_MAX] = s_max
    stats[S_OVERFLOW] = overflow
    stats[S_PACKETS] = packets + lost_all
    stats[S_TIME] = t
    return rows


@njit(cache=True, parallel=True)
def _batch(seeds, kind, lam_tick, p_slot, ef_ticks, ef_units, be_ticks, be_units, be_cum, Q_t, pq_cap,
           max_ef, warm, width_ticks, thresholds, counts, bmin, bmax, above, stats):
    """Independent replications in parallel, one per seed; row r of each output array is replication r."""
    dummy_i8 = np.zeros(1, np.int8)
    dummy_i64 = np.zeros(1, np.int64)
    dummy_f = np.zeros(1, np.float64)
    dummy_b = np.zeros(1, np.bool_)
    for r in prange(seeds.shape[0]):
        _simulate(seeds[r], kind, lam_tick, p_slot, ef_ticks, ef_units, be_ticks, be_units, be_cum, Q_t, pq_cap,
                  max_ef, warm, _NEVER, width_ticks, thresholds, counts[r], bmin[r], bmax[r], above[r],
                  stats[r], dummy_i8, dummy_i64, dummy_f, dummy_f, dummy_b, dummy_f, dummy_i64)


# --------------------------------------------------------------------------------------------- wrappers

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


def _snap(x: np.ndarray) -> np.ndarray:
    """Put threshold values within rounding of an integer tick exactly on it (exact comparisons on lattices)."""
    r = np.round(x)
    return np.where(np.abs(x - r) <= 1e-9 * np.maximum(1.0, np.abs(x)), r, x)


def run_replications(p, packets: int, replications: int, seed: int, warmup: float = 0.01,
                     ccdf=(), batch: int | None = None, n_threads: int | None = None,
                     advance=None) -> Replications:
    """Run independent replications of ``packets`` EF arrivals each (the first ``warmup`` fraction not counted).

    ``batch`` replications run in parallel at a time (default: the thread count); ``advance(k)`` is called
    after each batch. ``n_threads`` sets numba's thread count for the run.
    """
    s = setup(p)
    if packets < 1 or replications < 1:
        raise ScenarioError("packets and replications must be positive", field="methods.simulated")
    if not 0 <= warmup < 1:
        raise ScenarioError("warm-up must be a fraction in [0, 1)", field="methods.simulated.warmup")
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
    width_ticks = s.bin_width / s.tick
    with threads(n_threads):
        step = batch or numba.get_num_threads()
        for lo in range(0, R, step):
            hi = min(R, lo + step)
            _batch(seeds[lo:hi], s.arrivals, s.lam_tick, s.p_slot, s.ef_ticks, s.ef_units, s.be_ticks,
                   s.be_units, s.be_cum, s.Q_t, s.pq_cap, int(packets), warm, width_ticks, thr,
                   counts[lo:hi], bmin[lo:hi], bmax[lo:hi], above[lo:hi], st[lo:hi])
            if advance is not None:
                advance(hi - lo)
    if st[:, S_OVERFLOW].sum() > 0:
        raise EngineError(f"simulator: {int(st[:, S_OVERFLOW].sum())} EF delay(s) above the maximum-delay bound "
                          f"{s.bound:.6g} s; the simulator and the bound disagree")
    st[:, S_SUM] *= s.tick
    st[:, S_SUMSQ] *= s.tick ** 2
    st[:, S_MAX] *= s.tick
    st[:, S_TIME] *= s.tick
    return Replications(s, seeds, counts, bmin * s.tick, bmax * s.tick, above, st, ccdf, int(packets), warmup)


def simulated_results(p, opts, ccdf: list[float], qs: list[float], progress) -> list[Result]:
    """Every simulated EF metric with a Student-t interval across independent replications.

    Metrics: ``EF.delay.mean``, ``EF.delay.pNN`` for each quantile, ``EF.delay.ccdf@D`` (among accepted
    EF packets) for each point, ``EF.delay.max`` (observed maximum over all replications; no interval)
    and ``EF.loss`` (fraction of EF arrivals lost).
    """
    advance = progress.task(f"simulating {opts.replications} x {opts.packets:,} EF packets", opts.replications)
    rep = run_replications(p, opts.packets, opts.replications, opts.seed, opts.warmup, ccdf, advance=advance)
    st = rep.stats
    n = st[:, S_DELAYS]
    s = rep.setup
    conf = opts.confidence
    R = opts.replications
    base = {"replications": R, "packets": opts.packets * R,
            "packets_per_replication": opts.packets, "seed": opts.seed, "warmup": opts.warmup,
            "arrivals": p.arrivals, "simulator": "qosbound.validation.pq_txq_sim",
            "seeding": "numpy SeedSequence(seed).spawn(replications)"}
    out: list[Result] = []

    def add(metric, unit, per_rep, estimator, **extra):
        e = t_interval(per_rep, conf)
        prov = dict(base, std_error=e.std_error, estimator=estimator, **extra)
        out.append(Result(metric, "simulated", e.mean, unit, e.interval(note=f"Student t over {R} replications"),
                          prov))

    def add_fraction(metric, k, n_per_rep, estimator, **extra):
        """A fraction: the replication t-interval, widened to the pooled Clopper-Pearson interval, with the
        standard error floored at the binomial one (with (k+1)/(N+2)), so rare events seen zero times
        still get an honest interval."""
        e = t_interval(k / n_per_rep, conf)
        K, N = int(k.sum()), int(n_per_rep.sum())
        lo, hi = proportion_interval(K, N, conf)
        se = max(e.std_error, proportion_se(K, N))
        prov = dict(base, std_error=se, estimator=estimator, events=K, trials=N, **extra)
        iv = Interval.ci(max(0.0, min(e.low, lo)), min(1.0, max(e.high, hi)), conf, se=se, dof=R - 1,
                         note=f"Student t over {R} replications, widened to the pooled Clopper-Pearson interval")
        out.append(Result(metric, "simulated", e.mean, "1", iv, prov))

    if np.all(n > 0):
        add("EF.delay.mean", "s", st[:, S_SUM] / n, "mean of per-replication sample means")
        for q in qs:
            per = [hist_quantile(rep.counts[r], 0.0, s.bin_width, q, rep.bin_min[r], rep.bin_max[r])
                   for r in range(R)]
            add(f"EF.delay.{quantile_name(q)}", "s", per, "mean of per-replication histogram quantiles "
                "(interpolated between the smallest and largest delay in the bin)", bin_width=s.bin_width)
        for i, d in enumerate(rep.ccdf):
            add_fraction(ccdf_name("EF.delay", float(d)), rep.above[:, i].astype(float), n,
                         "mean of per-replication fractions of accepted EF packets with delay > d (exact count)")
        mx = float(st[:, S_MAX].max())
        out.append(Result("EF.delay.max", "simulated", mx, "s",
                          Interval.lower_bound(mx, note="the largest delay observed over all replications: the "
                                                        "true maximum is at least this"),
                          dict(base, estimator="largest delay observed over all replications", bound=s.bound)))
        omitted = {}
    else:
        # no accepted EF packet in some replication: a delay statistic has no value there
        empty = int((n == 0).sum())
        omitted = {"EF.delay.*": f"{empty} of {R} replications delivered no EF packet (every one was lost at the "
                                 "PQ): the delay has no value; simulate more packets or check the load"}
    add_fraction("EF.loss", st[:, S_LOST], np.maximum(st[:, S_ARRIVALS], 1.0),
                 "mean of per-replication fractions of EF arrivals lost at the PQ",
                 **({"omitted": omitted} if omitted else {}))
    return out


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
    from qosbound.validation.trace import make_table

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
    seed32 = int(replication_seeds(seed, 1)[0])
    rows = _simulate(seed32, s.arrivals, s.lam_tick, s.p_slot, s.ef_ticks, s.ef_units, s.be_ticks, s.be_units,
                     s.be_cum, s.Q_t, s.pq_cap, _NEVER, 0, n, 1.0, np.zeros(0), np.zeros(1, np.int64),
                     np.zeros(1), np.zeros(1), np.zeros(0, np.int64), st, cls, size, arr, dep, drop, work, ahead)
    sl = slice(0, rows)
    cls, size, arr, dep, drop, work, ahead = cls[sl], size[sl], arr[sl], dep[sl], drop[sl], work[sl], ahead[sl]
    order = np.argsort(arr, kind="stable")
    cls, size, arr, dep, drop, work, ahead = (x[order] for x in (cls, size, arr, dep, drop, work, ahead))
    nbytes = np.where(cls == 0, s.ef_size, s.be_sizes[np.maximum(size, 0)])
    names = np.where(cls == 0, "EF", "BE")
    table = make_table(flow=names, cls=names, size=np.round(nbytes).astype(np.int64), arrival=arr * s.tick,
                       departure=np.where(drop, np.nan, dep * s.tick), dropped=drop)
    if with_state:
        return table, {"work": np.where(cls == 0, work * s.tick, np.nan), "ahead": np.where(cls == 0, ahead, -1)}
    return table


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
