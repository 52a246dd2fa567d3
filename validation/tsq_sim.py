"""Packet simulator of one TSQ bottleneck over a PI AQM (Claypool, Kinicki & Kumar), in numba.

Mechanics (the same semantics as :mod:`qosbound.analytic.tsq`; the weight,
the drop adjustment, the PI update and the TFRC equation are the SymPy forms
compiled for numba, not re-typed):

* One link of capacity ``C`` bit/s, work conserving, non-preemptive. The
  waiting packets are kept in a treap (a randomised balanced search tree)
  keyed by (weight, arrival number) whose nodes also hold the bytes of their
  subtree, so insertion, removal of the head and "bytes ahead of a weight" all
  cost O(log q) expected (Claypool, Kinicki & Kumar section 3.2 asks for O(log q), e.g. skip lists).
* On arrival at ``t``: backlog ``B`` = bytes waiting + bytes left of the packet on
  the wire; ``t_d = 8B/C``; ``w = d t_d/2^n + t``; ``q'`` = (bytes ahead of ``w``
  + bytes left on the wire)*8/C; ``p' = min(1, ((l+t_d)/(l+q'))^2 p)`` with ``p``
  the PI controller's current output; the packet is dropped with probability
  ``p'``, or when ``q_max`` packets already wait (tail drop); otherwise inserted.
* PI samples the number of waiting packets at ``hz`` (see :mod:`.pi_aqm`).
* Flows: ``cbr`` (unresponsive, fixed rate), ``tcp`` (below) and ``tfrc`` (responsive, equation-based): the one
  TFRC sender model of :mod:`qosbound.validation.tfrc_sender` with its ``"sender"`` (immediate) feedback model,
  the one the TSQ paper's simulations imply: the sender knows of a drop when it happens (a drop more than one R
  after the current loss event's start opens a new one; the first halves the rate), keeps RFC 5348's loss
  history itself, and once per R at a send time sets its rate to
  ``min(max_rate, max(s/64 s, X_TFRC(s, R, p_e)))`` (before the first loss event it doubles each R, slow
  start), starting from 4 packets per base RTT. ``R`` is the flow's propagation RTT plus a smoothed queueing
  delay of its own packets (each packet's propagation RTT + queueing + transmission time, when it goes on the
  wire, as its RTT sample). A TCP-friendly CBR source (the seed's audio flow) is ``tfrc`` with ``max_rate``
  its codec rate.
* Packet spacing: each flow sends at its current rate, each gap uniform in
  [0.5, 1.5] times the mean gap (to break phase locking).
* ``tcp`` flows: bulk transfers driven by the TCP kernels of :mod:`qosbound.validation.tcp`
  (NewReno with RFC 6675 SACK recovery, delayed ACKs, RTO with backoff; see that module for what
  is modelled). A segment is ``size`` bytes on the wire (segment granularity; no header
  accounting). The flow's propagation RTT is split as the paper's topology (50 ms sender -> R1,
  50 ms R1 -> R2, 50 ms R2 -> receiver, 150 ms back; :data:`TCP_PATH`): a segment sent at ``t``
  reaches the router at ``t + rtt/6``, leaves it when TSQ serves it, reaches the receiver
  ``rtt/3`` later; its ACK returns ``rtt/2`` later over an **uncongested reverse path** (no queue,
  no loss, no transmission time). Receive window ``tcp_rwnd`` segments (64), initial window
  ``tcp_init_cwnd`` (2), minimum RTO ``tcp_min_rto`` (200 ms), delayed-ACK timer ``tcp_delack``
  (200 ms; 0 acknowledges every segment at once), start times uniform in
  ``[0, tcp_start_spread)`` (1 s); no handshake. The router sees a TCP segment exactly as any
  other packet (hint, TSQ insertion, PI drop). Events of the TCP ends (segments reaching the
  router or the receiver, ACKs, timers) sit in one binary heap beside the CBR/TFRC senders' heap;
  the result does not change for runs without TCP flows (same random draws). Per-flow TCP
  counters (timeouts, fast recoveries, segments sent and retransmitted, srtt, time-average cwnd)
  come back in ``SimOutput.tcp``. Speed: ``benchmarks/bench_tsq_tcp.py``.

Every packet is recorded (flow, hint, size, arrival, departure, dropped, and
the router's ``t_d``, ``q'``, ``p'``); :func:`to_trace` writes the one trace schema.
Because every packet is kept in memory, :func:`simulate` first estimates the
run's packets and memory (:func:`estimate`) and refuses, with one line saying
the estimate and what to do, a run above :data:`MEMORY_BUDGET` bytes.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numba
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)
import numpy as np

from qosbound.analytic import tsq as A
from qosbound.errors import ScenarioError
from qosbound.validation import tcp as T
from qosbound.validation import tfrc_sender as TF
from qosbound.validation.pi_aqm import PIParams, pi_kernel
from qosbound.validation.trace import make_table

__all__ = ["Flow", "SimConfig", "SimOutput", "simulate", "to_trace", "treap_kernels", "flow_stats", "estimate",
           "check_budget", "MEMORY_BUDGET", "BYTES_PER_PACKET", "BYTES_PER_SAMPLE"]

_NIL = 0  # node 0 is the empty tree

#: Flow kinds, in the kernel's numbering (0, 1, 2).
KINDS = ("cbr", "tfrc", "tcp")
#: Where a TCP flow's propagation RTT lies (the paper's topology: 50 ms sender -> R1, 50 ms R1 -> R2, 50 ms
#: R2 -> receiver, 150 ms back): sender to router, router to receiver, receiver back to the sender.
TCP_PATH = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 2.0)

#: Memory one replication may use for its per-packet records and PI samples, bytes.
MEMORY_BUDGET = 2 * 1024**3
#: Bytes per recorded packet: the kernel's eight arrays (53 B) and the output's hint and size (6 B), rounded up.
BYTES_PER_PACKET = 64
#: Bytes per PI sample (output probability and queue length).
BYTES_PER_SAMPLE = 16


@dataclass(frozen=True)
class Flow:
    """One sender: ``kind`` 'cbr', 'tfrc' or 'tcp'; ``rate`` (cbr) or ``max_rate`` (tfrc) in bit/s (a tcp flow's
    rate is only its access link's, used to size the run); size in bytes (a tcp flow's segment on the wire)."""

    name: str
    kind: str
    rate: float
    size: int = 1000
    hint: int = 16
    rtt: float = 0.3  # propagation round-trip time, s

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ScenarioError(f"flow kind must be one of {', '.join(KINDS)}, got {self.kind!r}",
                                field=f"{self.name}.kind")
        if not (self.rate > 0 and self.size > 0 and self.rtt > 0):
            raise ScenarioError("flow rate, size and RTT must be positive", field=self.name)


@dataclass(frozen=True)
class SimConfig:
    capacity: float  # bit/s
    flows: tuple[Flow, ...]
    duration: float  # s of simulated time
    pi: PIParams = field(default_factory=PIParams)
    latency: float = 0.040  # TSQ's l, s
    bits: int = 4  # hint bits n
    tsq: bool = True  # False: every packet joins the tail with p' = p (PI alone)
    max_packets: int = 50_000_000
    # TCP flows (kind 'tcp'; see the module docstring)
    tcp_rwnd: int = 64  # receive window, segments
    tcp_init_cwnd: float = 2.0  # segments
    tcp_min_rto: float = 0.2  # s
    tcp_delack: float = 0.2  # s; 0: every segment acknowledged at once
    tcp_start_spread: float = 1.0  # s: start times uniform in [0, spread)


@dataclass
class SimOutput:
    flow: np.ndarray
    hint: np.ndarray
    size: np.ndarray
    arrival: np.ndarray
    departure: np.ndarray  # NaN when dropped
    dropped: np.ndarray
    t_d: np.ndarray
    q_ins: np.ndarray
    p_adj: np.ndarray
    p_trace: np.ndarray  # PI output at each sample
    q_trace: np.ndarray  # waiting packets at each sample
    names: tuple[str, ...]
    capacity: float
    duration: float
    tcp: dict | None = None  # per-flow TCP counters (timeouts, recoveries, retransmissions, srtt), tcp flows only


# The treap: parallel arrays, node 0 the empty tree.
@numba.njit(cache=True)
def _new_tree(cap):
    # one row per node (columns are strided views), so a node's fields share cache lines
    fl = np.zeros((cap + 1, 2))
    it = np.zeros((cap + 1, 6), dtype=np.int64)
    kw = fl[:, 0]
    pr = fl[:, 1]
    ks = it[:, 0]
    lc = it[:, 1]
    rc = it[:, 2]
    nb = it[:, 3]
    sb = it[:, 4]
    pay = it[:, 5]
    free = np.arange(cap, 0, -1).astype(np.int64)  # stack of free node ids
    st = np.zeros(3, dtype=np.int64)  # root, free count, nodes in use
    st[1] = cap
    return kw, ks, pr, lc, rc, nb, sb, pay, free, st

@numba.njit(cache=True, inline="always")
def _less(kw, ks, i, w, s):
    return kw[i] < w or (kw[i] == w and ks[i] < s)

@numba.njit(cache=True)
def _bytes_before(kw, ks, lc, rc, nb, sb, st, w, s):
    acc = 0
    x = st[0]
    while x != _NIL:
        if _less(kw, ks, x, w, s):
            acc += sb[lc[x]] + nb[x]
            x = rc[x]
        else:
            x = lc[x]
    return acc

@numba.njit(cache=True)
def _insert(kw, ks, pr, lc, rc, nb, sb, pay, free, st, w, s, nbytes, payload, path):
    st[1] -= 1
    x = free[st[1]]
    kw[x] = w
    ks[x] = s
    pr[x] = np.random.random()
    lc[x] = _NIL
    rc[x] = _NIL
    nb[x] = nbytes
    sb[x] = nbytes
    pay[x] = payload
    st[2] += 1
    # descend, adding the bytes to every ancestor
    depth = 0
    y = st[0]
    while y != _NIL:
        path[depth] = y
        depth += 1
        sb[y] += nbytes
        if _less(kw, ks, y, w, s):
            y = rc[y]
        else:
            y = lc[y]
    if depth == 0:
        st[0] = x
        return x
    par = path[depth - 1]
    if _less(kw, ks, par, w, s):
        rc[par] = x
    else:
        lc[par] = x
    # rotate up while the heap order on priorities is violated
    while depth > 0 and pr[x] < pr[path[depth - 1]]:
        par = path[depth - 1]
        if lc[par] == x:
            lc[par] = rc[x]
            rc[x] = par
        else:
            rc[par] = lc[x]
            lc[x] = par
        sb[par] = nb[par] + sb[lc[par]] + sb[rc[par]]
        sb[x] = nb[x] + sb[lc[x]] + sb[rc[x]]
        depth -= 1
        if depth == 0:
            st[0] = x
        else:
            g = path[depth - 1]
            if lc[g] == par:
                lc[g] = x
            else:
                rc[g] = x
    return x

@numba.njit(cache=True)
def _pop_min(kw, ks, lc, rc, nb, sb, pay, free, st):
    x = st[0]
    par = _NIL
    while lc[x] != _NIL:
        par = x
        x = lc[x]
    b = nb[x]
    y = st[0]
    while y != x:  # the left spine above the minimum loses its bytes
        sb[y] -= b
        y = lc[y]
    if par == _NIL:
        st[0] = rc[x]
    else:
        lc[par] = rc[x]
    free[st[1]] = x
    st[1] += 1
    st[2] -= 1
    return pay[x], b


def treap_kernels():
    """numba treap over parallel arrays: ``(new_tree, insert, pop_min, bytes_before)``."""
    return _new_tree, _insert, _pop_min, _bytes_before


# The SymPy forms (the weight, p'_uncapped; the clamped PI update), compiled. Lambdified code has no source file,
# so these are not cached on disk themselves: they are compiled into (and cached with) the cached kernels below
# that call them, as validation/droppers.py does. numba's cache is keyed on this file: after an edit of the forms
# in analytic/tsq.py alone, clear NUMBA_CACHE_DIR (a fresh checkout or an installed wheel starts without one).
_wfun, _pfun, _ = A.numba_functions()
_pistep = pi_kernel()


@numba.njit(cache=True)
def _sift_down(ht, hf, i):
    m = ht.shape[0]
    while True:
        lft = 2 * i + 1
        if lft >= m:
            return
        c = lft
        if lft + 1 < m and ht[lft + 1] < ht[lft]:
            c = lft + 1
        if ht[c] < ht[i]:
            ht[c], ht[i] = ht[i], ht[c]
            hf[c], hf[i] = hf[i], hf[c]
            i = c
        else:
            return

@numba.njit(cache=True, inline="always")
def _push(heap, ctr, t, k, a, b):
    heapq.heappush(heap, (float(t), ctr[0], np.int64(k), np.int64(a), np.int64(b)))
    ctr[0] += 1

@numba.njit(cache=True)
def _tcp_emit(heap, ctr, S, SB, TS, f, t, cand, out, ing):
    """Flow ``f`` sends what its window allows now (each segment reaches the router ``ing[f]`` later)."""
    k = T.send_batch(S, SB, TS, f, t, cand, out)
    for j in range(k):
        _push(heap, ctr, t + ing[f], 1, f, out[j])
    d = T.timer_to_arm(S, f)
    if d < np.inf:
        _push(heap, ctr, d, 5, f, 0)

@numba.njit(cache=True)
def _tcp_ack(heap, ctr, S, RB, f, trigger, t, back, a_s, a_ns, a_sack, free, nfree):
    """The receiver of flow ``f`` acknowledges now; the ACK reaches the sender ``back[f]`` later."""
    T.ack_sent(S, f)
    if nfree[0] == 0:
        raise RuntimeError("ACK pool exhausted")
    nfree[0] -= 1
    pid = free[nfree[0]]
    a_s[pid] = int(S[f, T.RNXT])
    a_ns[pid] = T.build_sack(S, RB, f, trigger, a_sack[pid], 4)
    _push(heap, ctr, t + back[f], 4, pid, f)

@numba.njit(cache=True)
def _run_kernel(net, flows, pi, tcp, tfrc):
    # the arguments, grouped: the bottleneck and the run; per-flow arrays; the PI controller; the TCP ends
    # (state, path delays, delayed ACKs, start spread, ACK pool); the TFRC senders' state
    C, duration, lat, nbits, tsq, cap, seed = net
    kind, rate, size, hint, rtt0 = flows
    a, b, hz, q_ref, q_max = pi
    S, SB, TS, RB, ing, fwd, back, delack, start_spread, pool = tcp
    Q, H = tfrc
    np.random.seed(seed)
    F = kind.shape[0]
    kw, ks, pr, lc, rc, nb, sb, pay, free, st = _new_tree(q_max + 1)
    path = np.zeros(512, dtype=np.int64)
    o_flow = np.empty(cap, dtype=np.int32)
    o_arr = np.empty(cap)
    o_dep = np.full(cap, np.nan)
    o_drop = np.zeros(cap, dtype=np.bool_)
    o_td = np.empty(cap)
    o_qi = np.empty(cap)
    o_pp = np.empty(cap)
    o_seq = np.zeros(cap, dtype=np.int64)
    ns = int(duration * hz) + 2
    p_tr = np.zeros(ns)
    q_tr = np.zeros(ns)
    X = np.empty(F)  # bit/s (a TFRC flow's: 8 x its sender's X)
    ht = np.empty(F)
    hf = np.empty(F, dtype=np.int64)
    # TCP: the event heap (time, order, kind, a, b), the ACK pool and the sender's work arrays
    W = SB.shape[1]
    cand = np.zeros(W, np.int64)
    outb = np.zeros(W, np.int64)
    a_s, a_ns, a_sack, a_free, a_nfree = pool
    heap = [(0.0, np.int64(0), np.int64(0), np.int64(0), np.int64(0))]
    heapq.heappop(heap)
    ctr = np.zeros(1, np.int64)
    for f in range(F):
        if kind[f] == 2:
            X[f] = rate[f]
            ht[f] = 1e300
            _push(heap, ctr, np.random.random() * start_spread, 0, f, 0)
        else:
            if kind[f] == 0:
                X[f] = rate[f]
            else:
                TF.start(Q, f, 0.0)
                X[f] = 8.0 * Q[f, TF.X]
            ht[f] = np.random.random() * 8.0 * size[f] / X[f]
        hf[f] = f
    for i in range((F - 2) // 2, -1, -1):
        _sift_down(ht, hf, i)
    p = 0.0
    q_old = 0.0
    k_s = 0
    dt_s = 1.0 / hz
    next_sample = dt_s
    busy = False
    tx_end = 0.0
    cur = -1
    n = 0
    t_end = duration
    while True:
        t_ev = heap[0][0] if len(heap) > 0 else 1e300
        t_arr = min(ht[0], t_ev)
        t_dep = tx_end if busy else 1e300
        if t_dep <= next_sample and t_dep <= t_arr:
            o_dep[cur] = tx_end
            g = o_flow[cur]
            if kind[g] == 2:  # the segment travels on to its receiver
                _push(heap, ctr, tx_end + fwd[g], 2, g, o_seq[cur])
            busy = False
            if st[2] > 0:
                pid, nbytes = _pop_min(kw, ks, lc, rc, nb, sb, pay, free, st)
                qd = tx_end - o_arr[pid]
                g = o_flow[pid]
                if kind[g] == 1:
                    TF.rtt_sample(Q, g, rtt0[g] + qd + nbytes * 8.0 / C)
                tx_end = tx_end + nbytes * 8.0 / C
                cur = pid
                busy = True
            continue
        if next_sample < t_dep and next_sample <= t_arr:
            qn = float(st[2])
            p = _pistep(p, qn, q_old, q_ref, a, b)
            q_old = qn
            if k_s < ns:
                p_tr[k_s] = p
                q_tr[k_s] = qn
                k_s += 1
            next_sample += dt_s
            continue
        if t_arr > duration:
            break
        from_ht = ht[0] <= t_ev
        seq = 0
        if from_ht:
            f = hf[0]
            t = t_arr
        else:
            ev = heapq.heappop(heap)
            t = ev[0]
            ek = ev[2]
            if ek == 1:  # a TCP segment reaches the router
                f = ev[3]
                seq = ev[4]
            elif ek == 2:  # a TCP segment reaches its receiver
                f = ev[3]
                ack_now, delivered = T.on_data(S, RB, f, ev[4])
                if ack_now == 1 or delack <= 0.0:
                    _tcp_ack(heap, ctr, S, RB, f, ev[4], t, back, a_s, a_ns, a_sack, a_free, a_nfree)
                else:
                    gen = T.delack_start(S, f)
                    if gen >= 0:
                        _push(heap, ctr, t + delack, 6, f, gen)
                continue
            elif ek == 4:  # an ACK reaches its sender
                pid = ev[3]
                f = ev[4]
                T.on_ack(S, SB, TS, f, t, a_s[pid], a_sack[pid], a_ns[pid], cand)
                a_free[a_nfree[0]] = pid
                a_nfree[0] += 1
                _tcp_emit(heap, ctr, S, SB, TS, f, t, cand, outb, ing)
                continue
            elif ek == 5:  # retransmission timer
                f = ev[3]
                due = T.on_timer(S, f, t)
                if due == 1:
                    _push(heap, ctr, S[f, T.ARMED], 5, f, 0)
                if due != 2:
                    continue
                T.on_timeout(S, SB, f, t, cand)
                _tcp_emit(heap, ctr, S, SB, TS, f, t, cand, outb, ing)
                continue
            elif ek == 6:  # delayed-ACK timer
                f = ev[3]
                if not T.delack_due(S, f, ev[4]):
                    continue
                _tcp_ack(heap, ctr, S, RB, f, -1, t, back, a_s, a_ns, a_sack, a_free, a_nfree)
                continue
            else:  # start
                f = ev[3]
                _tcp_emit(heap, ctr, S, SB, TS, f, t, cand, outb, ing)
                continue
        if n >= cap:
            t_end = t
            break
        s = size[f]
        resid = (tx_end - t) * C if busy else 0.0
        td = (8.0 * sb[st[0]] + resid) / C
        if tsq:
            w = _wfun(float(hint[f]), td, t, float(nbits))
            qi = (8.0 * _bytes_before(kw, ks, lc, rc, nb, sb, st, w, n) + resid) / C
            pp = min(1.0, _pfun(td, qi, p, lat))
        else:
            w = t
            qi = td
            pp = p
        o_flow[n] = f
        o_arr[n] = t
        o_td[n] = td
        o_qi[n] = qi
        o_pp[n] = pp
        o_seq[n] = seq
        if kind[f] == 1:
            TF.on_send(Q, f, t)
        if st[2] >= q_max or np.random.random() < pp:
            o_drop[n] = True
            if kind[f] == 1:
                TF.on_drop(Q, H, f, t)
                X[f] = 8.0 * Q[f, TF.X]
        elif not busy:
            busy = True
            cur = n
            tx_end = t + s * 8.0 / C
            if kind[f] == 1:
                TF.rtt_sample(Q, f, rtt0[f] + s * 8.0 / C)
        else:
            _insert(kw, ks, pr, lc, rc, nb, sb, pay, free, st, w, n, s, n, path)
        n += 1
        if not from_ht:
            continue
        if kind[f] == 1 and TF.rate_due(Q, H, f, t):
            X[f] = 8.0 * Q[f, TF.X]
        ht[0] = t + 8.0 * s / X[f] * (0.5 + np.random.random())
        _sift_down(ht, hf, 0)
    return (o_flow[:n], o_arr[:n], o_dep[:n], o_drop[:n], o_td[:n], o_qi[:n], o_pp[:n], p_tr[:k_s],
            q_tr[:k_s], t_end)


def _rates(cfg: SimConfig) -> tuple[float, float]:
    """Upper estimates of recorded packets per second and bytes per simulated second."""
    cbr = sum(f.rate for f in cfg.flows if f.kind == "cbr")
    smin = min(f.size for f in cfg.flows)
    packets = (3.0 * cfg.capacity + cbr) / (8.0 * smin)
    return packets, packets * BYTES_PER_PACKET + cfg.pi.hz * BYTES_PER_SAMPLE


def estimate(cfg: SimConfig) -> tuple[float, float]:
    """Upper estimate of one replication's recorded packets and memory in bytes, before running it.

    Arrivals are at most ~3 times the link rate in packets of the smallest size (TFRC senders cannot send
    much faster than the link drains for long; CBR sources add their rate), plus 10 000; PI samples at ``hz``.
    """
    _validate(cfg)
    pps, bps = _rates(cfg)
    return cfg.duration * pps + 10_000, cfg.duration * bps + 10_000 * BYTES_PER_PACKET


def check_budget(cfg: SimConfig, field: str = "duration", budget: int = MEMORY_BUDGET) -> None:
    """Refuse, as a ScenarioError naming ``field``, a run whose estimated memory exceeds ``budget`` bytes or whose
    packets exceed ``cfg.max_packets`` (the kernel's record capacity)."""
    packets, mem = estimate(cfg)
    if mem > budget or packets > cfg.max_packets:
        pps, bps = _rates(cfg)
        longest = min((budget - 10_000 * BYTES_PER_PACKET) / bps, (cfg.max_packets - 10_000) / pps)
        raise ScenarioError(f"a {cfg.duration:.4g} s TSQ run is estimated at {packets:.3g} packet records and "
                            f"{mem / 1024**3:.3g} GiB per replication, above the limits ({cfg.max_packets:.3g} "
                            f"packets, {budget / 1024**3:.3g} GiB); simulate at most {longest:.4g} s "
                            "(more replications instead of a longer run)", field=field)


def _validate(cfg: SimConfig) -> None:
    if not cfg.flows:
        raise ScenarioError("at least one flow is needed", field="flows")
    if not (cfg.capacity > 0 and np.isfinite(cfg.capacity)):
        raise ScenarioError("the link capacity must be positive and finite", field="capacity")
    if not (cfg.duration > 0 and np.isfinite(cfg.duration)):
        raise ScenarioError("the duration must be positive and finite", field="duration")
    if not (cfg.pi.hz > 0 and np.isfinite(cfg.pi.hz)):
        raise ScenarioError("the PI sampling frequency must be positive and finite", field="pi.hz")
    if any(f.kind == "tcp" for f in cfg.flows) and not (
            1 <= cfg.tcp_rwnd <= 4096 and cfg.tcp_init_cwnd >= 1 and cfg.tcp_min_rto > 0 and cfg.tcp_delack >= 0
            and cfg.tcp_start_spread >= 0):
        raise ScenarioError("TCP needs 1 <= rwnd <= 4096 segments, an initial window >= 1, a positive minimum RTO "
                            "and non-negative delayed-ACK time and start spread", field="tcp")
    for f in cfg.flows:
        if not 1 <= f.hint <= 2 ** cfg.bits:
            raise ScenarioError(f"hint {f.hint} is outside 1..{2 ** cfg.bits}", field=f"{f.name}.hint")


def simulate(cfg: SimConfig, seed: int = 1) -> SimOutput:
    """Run one replication; the seed fixes numba's generator inside the run (no global state leaks).

    Refuses (ScenarioError) a run whose estimated memory exceeds :data:`MEMORY_BUDGET` (see :func:`estimate`).
    """
    check_budget(cfg)

    flows = cfg.flows
    kind = np.array([KINDS.index(f.kind) for f in flows], dtype=np.int64)
    rate = np.array([f.rate for f in flows], dtype=np.float64)
    size = np.array([f.size for f in flows], dtype=np.int64)
    hint = np.array([f.hint for f in flows], dtype=np.int64)
    rtt0 = np.array([f.rtt for f in flows], dtype=np.float64)
    cap = int(estimate(cfg)[0])
    pi = cfg.pi
    tcp = kind == 2
    W = 1 << int(np.ceil(np.log2(2 * cfg.tcp_rwnd + 2))) if tcp.any() else 2
    S, SB, TS, RB = T.new_state(len(flows), W, init_cwnd=cfg.tcp_init_cwnd, rwnd=cfg.tcp_rwnd,
                                min_rto=cfg.tcp_min_rto, files=np.full(len(flows), -1.0), base_rtt=rtt0,
                                window=(0.0, cfg.duration))
    ing, fwd, back = (rtt0 * x for x in TCP_PATH)
    npool = int(tcp.sum()) * (2 * cfg.tcp_rwnd + 16) + 16  # ACKs in flight: cumulative ACK, SACK blocks, free list
    pool = (np.zeros(npool, np.int64), np.zeros(npool, np.int64), np.zeros((npool, 8), np.int64),
            np.arange(npool)[::-1].copy(), np.array([npool], np.int64))
    # every flow has a row of TFRC state; the TFRC flows use theirs (sender feedback model, X_max = the flow's rate)
    Q, H = TF.new_state(size.astype(float), np.zeros(len(flows)), rate / 8.0, rtt0, ["sender"] * len(flows))
    out = _run_kernel((float(cfg.capacity), float(cfg.duration), float(cfg.latency), int(cfg.bits), bool(cfg.tsq), cap,
                     int(seed)),
                    (kind, rate, size, hint, rtt0),
                    (float(pi.a), float(pi.b), float(pi.hz), float(pi.q_ref), int(pi.q_max)),
                    (S, SB, TS, RB, ing, fwd, back, float(cfg.tcp_delack), float(cfg.tcp_start_spread), pool),
                    (Q, H))
    fl, arr, dep, drop, td, qi, pp, p_tr, q_tr, t_end = out
    counters = None
    if tcp.any():
        idx = np.flatnonzero(tcp)
        counters = {"flows": idx, "timeouts": S[idx, T.N_RTO].copy(), "recoveries": S[idx, T.N_FR].copy(),
                    "sent": S[idx, T.N_SENT].copy(), "retransmitted": S[idx, T.N_RETX].copy(),
                    "srtt": S[idx, T.SRTT].copy(), "cwnd_mean": S[idx, T.CW_AREA] / cfg.duration}
    return SimOutput(flow=fl, hint=hint[fl].astype(np.int16), size=size[fl].astype(np.int32), arrival=arr,
                     departure=dep, dropped=drop, t_d=td, q_ins=qi, p_adj=pp, p_trace=p_tr, q_trace=q_tr,
                     names=tuple(f.name for f in flows), capacity=float(cfg.capacity), duration=float(t_end),
                     tcp=counters)


def to_trace(out: SimOutput, cls: str = "BE"):
    """The run as a table in the one trace schema (:mod:`qosbound.validation.trace`)."""
    names = np.asarray(out.names, dtype=object)[out.flow]
    return make_table(flow=names, cls=cls, size=out.size, arrival=out.arrival, departure=out.departure,
                      dropped=out.dropped, hint=out.hint)


def flow_stats(out: SimOutput, flow_index: int, warmup: float = 0.0) -> dict:
    """Per-flow statistics after ``warmup`` s: mean queueing delay (s), drop fraction, throughput (bit/s)."""
    sel = (out.flow == flow_index) & (out.arrival >= warmup)
    done = sel & ~out.dropped & np.isfinite(out.departure)
    span = out.duration - warmup
    if span <= 0:
        raise ScenarioError(f"the warm-up {warmup:g} s is not shorter than the run ({out.duration:g} s)",
                            field="warmup")
    qd = out.departure[done] - out.arrival[done] - out.size[done] * 8.0 / out.capacity
    n = int(sel.sum())
    return {
        "packets": n,
        "delay_mean": float(qd.mean()) if qd.size else 0.0,
        "delay_max": float(qd.max()) if qd.size else 0.0,
        "drop": float(out.dropped[sel].mean()) if n else 0.0,
        "throughput": float(out.size[done].sum()) * 8.0 / span,
        "p_adj_mean": float(out.p_adj[sel].mean()) if n else 0.0,
    }
