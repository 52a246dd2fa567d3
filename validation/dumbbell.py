"""A dumbbell of TCP flows through a DiffServ bottleneck (numba event loop): qosbound's packet-level TCP simulator.

Topology: ``n`` senders -> router R1 -> bottleneck link (``rate`` bit/s, one-way delay
``delay``) -> router R2 -> ``n`` receivers; ACKs come back R2 -> R1 over a reverse bottleneck
(``rev_rate``, same delay). Flow ``i``'s access link adds ``access[i]`` seconds each way
(sender <-> R1); the receivers hang on R2 with no delay, so flow ``i``'s base RTT is
``2 (access[i] + delay)`` plus the data segment's and the ACK's transmission times. The TCP
ends are :mod:`qosbound.validation.tcp` (NewReno + SACK, RFC 6675 pipe; delayed ACKs).

Each bottleneck direction is one FIFO queue with a DiffServ dropper:

* Colours: a packet gets its colour (0 green, 1 yellow, 2 red) from its flow's marker
  (:func:`qosbound.validation.markers.mark`: trTCM, srTCM or a two-colour token bucket, colour
  blind, one marker per flow and direction) or a fixed colour. ACKs have their own colour or
  marker (``ack_colour``, ``ack_marker``), so they can be classified apart from the data.
* Dropper: the averages and drop curves of :mod:`qosbound.validation.droppers` (``WRED``, ``RIO``
  or ``NRED`` sharing of the three cumulative averages, per-colour ``min_th``, ``max_th``,
  ``max_p``, gentle or not, EWMA weight ``alpha``), updated on every arrival; an arrival that finds
  ``limit`` packets waiting is dropped. The queue the average sees counts the waiting packets,
  less ``uncounted`` of them (1 = only the packet on the wire is excluded; ns-3's ``RedQueueDisc``
  behind a one-packet device queue does not see 2). After an idle period the averages decay by
  ``(1 - alpha)^m``, ``m`` = idle time x link rate / (8 ``mean_size``) (Floyd & Jacobson; ns-3).
* Drop decision: ``spacing="bernoulli"`` draws each arrival independently with the curve's
  probability (qosbound's AF simulator); ``spacing="count"`` is Floyd & Jacobson's uniformised
  RED as ns-3 runs it ("wait" variant): no early drop while one packet or fewer waits, none for the
  first arrival above ``min_th``, then ``p_a = 0`` while ``count p_b < 1``, ``p_b / (2 - count p_b)``
  while ``< 2``, else 1, ``count`` = arrivals since the last early drop (one count per queue).
* Random loss ``loss`` (forward, data) and ``ack_loss`` (reverse) drop a packet independently
  before the queue (a lossy link), for experiments with a known loss rate.

Simplifications (besides those of :mod:`qosbound.validation.tcp`):

* Access links are infinitely fast (no serialization, no queue); only the two bottleneck
  directions queue. ns-3 runs 1 Gbit/s access links (12 us per 1500-byte packet).
* Data segments are ``mss + header`` bytes on the wire (``header`` 42: PPP 2 + IPv4 20 + TCP 20,
  no timestamps); ACKs are ``header`` bytes plus the SACK option (4 + 8 per block, padded).
* Flows start at ``starts[i]`` (default: independent uniform in [0, ``start_spread``)) with no
  handshake (ns-3 spends one RTT on SYN / SYN-ACK first).
* No receive-window dynamics: ``rwnd`` segments is a fixed cap (the receiver's buffer is never
  the limit in ns-3's runs either: its buffers are set to the same size).

Measured over [``warmup``, ``duration``] (per flow): goodput = distinct payload bytes delivered in
order to the receiving application; throughput = payload bytes of every data segment that
reached the receiver (retransmissions and duplicates included); the bottleneck's data arrivals,
queue drops and random losses; ACKs sent, dropped and delivered; segments sent, retransmitted,
timeouts, fast recoveries; the time-average and largest ``cwnd``. A finite file's completion time
is when its last segment reached the receiver in order.

Speed: the event loop is one numba function with a binary heap; a FIFO's departures are computed
when a packet is admitted (no departure events), so a data segment costs two events (arrival at
R1, arrival at the receiver) and an ACK two (arrival at R2, arrival at the sender). About 1e6
packets per second on one core (``benchmarks/bench_tcp.py``: 1.09e6, 141 times ns-3's rate on the
same dumbbell).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from qosbound.validation import tcp as T
from qosbound.validation.droppers import MODES, avg_index, colour_drop_prob, ewma_idle, update_averages
from qosbound.validation.markers import KINDS, mark, new_state

__all__ = ["Queue", "Marker", "Dumbbell", "FlowStats", "RunResult", "simulate", "replicate", "HEADER"]

HEADER = 42  # PPP 2 + IPv4 20 + TCP 20 bytes

# event kinds
_START, _FWD_ARR, _RX_DATA, _REV_ARR, _RX_ACK, _RTO, _DELACK = range(7)


@dataclass(frozen=True)
class Queue:
    """One bottleneck direction's queue: limit (packets), dropper (per-colour thresholds in packets)."""

    limit: int = 100
    mode: str = "wred"  # wred, rio, nred
    min_th: tuple = (1e9, 1e9, 1e9)  # default: no early drop (drop tail)
    max_th: tuple = (2e9, 2e9, 2e9)
    max_p: tuple = (0.1, 0.1, 0.1)
    alpha: float = 0.002
    gentle: bool = False
    spacing: str = "bernoulli"  # or "count" (ns-3 RED)
    uncounted: int = 1  # packets in the system the average does not see (1: the one on the wire)
    mean_size: float = 1502.0  # bytes, for the idle decay

    @staticmethod
    def red(min_th, max_th, max_p, alpha=0.002, limit=100, **kw) -> "Queue":
        """One-colour RED (every colour the same curve)."""
        return Queue(limit=limit, mode="wred", min_th=(min_th,) * 3, max_th=(max_th,) * 3, max_p=(max_p,) * 3,
                     alpha=alpha, **kw)


@dataclass(frozen=True)
class Marker:
    """A token-bucket marker (rates bit/s, depths bytes): kind trtcm (cir, cbs, pir, pbs), srtcm (cir, cbs, ebs,
    0), two-colour (cir, cbs)."""

    kind: str
    cir: float
    cbs: float
    pir_or_ebs: float = 0.0
    pbs: float = 0.0

    def state(self):
        return new_state(self.kind, self.cir, self.cbs, self.pir_or_ebs, self.pbs)


@dataclass(frozen=True)
class Dumbbell:
    """The network and the flows (SI units: bit/s, s, bytes)."""

    n: int = 2
    rate: float = 10e6
    rev_rate: float | None = None  # default: rate
    delay: float = 0.005  # bottleneck one-way propagation delay
    access: tuple = (0.005,)  # per-flow one-way access delay (one value: all flows)
    mss: int = 1460
    init_cwnd: float = 10.0
    rwnd: int = 512  # segments
    min_rto: float = 0.2
    delack: float = 0.2  # s
    sack_blocks: int = 4  # 4 fit the option space without timestamps
    ssthresh_rule: str = "rfc"  # or "ns3": halve the pipe at every reduction (qosbound.validation.tcp)
    files: tuple = (-1,)  # segments per flow (-1: bulk); one value: all flows
    starts: tuple | None = None
    start_spread: float = 1.0
    fwd: Queue = field(default_factory=lambda: Queue.red(5, 15, 0.1))
    rev: Queue = field(default_factory=lambda: Queue(limit=1000))
    colour: tuple = (0,)  # fixed data colour per flow (used when the flow has no marker)
    marker: tuple = ()  # per-flow data Marker or None
    ack_colour: tuple = (0,)
    ack_marker: tuple = ()
    loss: float = 0.0
    ack_loss: float = 0.0
    duration: float = 30.0
    warmup: float = 5.0

    def per_flow(self, v, name):
        v = tuple(v)
        if len(v) == 1:
            return v * self.n
        if len(v) != self.n:
            raise ValueError(f"{name}: one value or one per flow ({self.n})")
        return v

    def base_rtt(self):
        acc = np.asarray(self.per_flow(self.access, "access"), dtype=float)
        return 2 * (acc + self.delay) + 8 * (self.mss + HEADER) / self.rate + 8 * HEADER / (self.rev_rate or self.rate)


@dataclass
class FlowStats:
    """Per-flow measurements (arrays over flows) over the measurement window."""

    goodput: np.ndarray  # bit/s
    throughput: np.ndarray  # bit/s
    arrivals: np.ndarray  # data packets arriving at the bottleneck
    drops: np.ndarray  # data packets dropped by the queue
    random_losses: np.ndarray
    ack_sent: np.ndarray
    ack_dropped: np.ndarray
    ack_delivered: np.ndarray
    sent: np.ndarray
    retransmitted: np.ndarray
    timeouts: np.ndarray  # whole run
    recoveries: np.ndarray  # whole run
    cwnd_mean: np.ndarray  # segments, time average
    cwnd_max: np.ndarray
    srtt: np.ndarray  # s, at the end
    completion: np.ndarray  # s, finite files (nan: not finished)
    drops_by_colour: np.ndarray  # (3,) forward drops per colour
    arrivals_by_colour: np.ndarray  # (3,)


@dataclass
class RunResult:
    flows: FlowStats
    packets: int  # packets that entered the dumbbell (data at R1 + ACKs at R2), whole run
    events: int
    wall: float  # s of wall-clock time in the event loop
    window: float  # s measured

    @property
    def loss_rate(self) -> float:
        a = self.flows.arrivals.sum()
        return float((self.flows.drops.sum() + self.flows.random_losses.sum()) / a) if a else 0.0

    @property
    def goodput(self) -> float:
        return float(self.flows.goodput.sum())

    @property
    def throughput(self) -> float:
        return float(self.flows.throughput.sum())


def _queue_arrays(q: Queue):
    if q.mode not in MODES:
        raise ValueError(f"queue mode {q.mode!r}: one of {sorted(MODES)}")
    if q.spacing not in ("bernoulli", "count"):
        raise ValueError("spacing is 'bernoulli' or 'count'")
    return (np.asarray(q.min_th, float), np.asarray(q.max_th, float), np.asarray(q.max_p, float),
            np.array([q.limit, MODES[q.mode], int(q.gentle), int(q.spacing == "count"), q.uncounted], np.int64),
            np.array([q.alpha, q.mean_size]))


def _markers(net: Dumbbell, markers, name):
    ms = tuple(markers) + (None,) * (net.n - len(markers)) if len(markers) <= net.n else None
    if ms is None:
        raise ValueError(f"{name}: at most one marker per flow")
    kind = np.array([-1 if m is None else KINDS[m.kind] for m in ms], np.int64)
    st = np.zeros((net.n, 7))
    for i, m in enumerate(ms):
        if m is not None:
            st[i] = m.state()
    return kind, st


@njit(cache=True)
def _new_queue(limit):
    """A queue's state: rings of departure times and colours, [head, count], and the float state
    [packets per colour (3), averages (3), RED count, RED old, last departure, idle since]."""
    return np.zeros(limit + 2), np.zeros(limit + 2, np.int64), np.zeros(2, np.int64), np.zeros(10)


@njit(cache=True)
def _admit(t, size, col, qd, qring, qh, qs, minth, maxth, maxp, qi, qf, rate):
    """Offer one packet to a FIFO queue (state from :func:`_new_queue`). Returns its departure time, or -1
    when the dropper or the full buffer drops it."""
    cap = qring.shape[0]
    qcol = qs[0:3]
    avgs = qs[3:6]
    cnt_state = qs[6:8]
    qhead = qh[0:1]
    qcnt = qh[1:2]
    qlast = qs[8:9]
    qidle = qs[9:10]
    # packets whose last bit left before t are gone
    while qcnt[0] > 0 and qd[qhead[0]] <= t:
        qcol[qring[qhead[0]]] -= 1.0
        qhead[0] = (qhead[0] + 1) % cap
        qcnt[0] -= 1
    n_sys = qcnt[0]
    if n_sys == 0:
        # idle since the last departure: decay the averages (ns-3 / Floyd & Jacobson)
        idle = t - qidle[0]
        if idle > 0.0:
            m = math.floor(idle * rate / (8.0 * qf[1]))
            for k in range(3):
                avgs[k] = ewma_idle(avgs[k], qf[0], m)
    # what the averages see: waiting packets less the uncounted ones, taken from the head
    seen = np.zeros(3)
    for k in range(3):
        seen[k] = qcol[k]
    skip = qi[4]
    j = qhead[0]
    for _ in range(min(skip, n_sys)):
        seen[qring[j]] -= 1.0
        j = (j + 1) % cap
    update_averages(avgs, seen, qf[0])
    waiting = n_sys - 1 if n_sys > 0 else 0
    drop = waiting >= qi[0]
    if not drop:
        p = colour_drop_prob(avgs, col, minth, maxth, maxp, qi[1], qi[2] == 1)
        if qi[3] == 0:
            if p > 0.0 and np.random.random() < p:
                drop = True
        else:
            # ns-3 RED ("wait"): cnt_state = [count, old]
            q_seen = seen[0] + seen[1] + seen[2]
            a = avgs[avg_index(qi[1], col)]
            if a >= minth[col] and q_seen > 1:
                cnt_state[0] += 1.0
                if p >= 1.0:
                    drop = True
                    cnt_state[0] = 0.0
                elif cnt_state[1] == 0.0:
                    cnt_state[1] = 1.0
                    cnt_state[0] = 1.0
                else:
                    c = cnt_state[0]
                    if c * p < 1.0:
                        pa = 0.0
                    elif c * p < 2.0:
                        pa = p / (2.0 - c * p)
                    else:
                        pa = 1.0
                    if pa > 0.0 and np.random.random() <= pa:
                        drop = True
                        cnt_state[0] = 0.0
            else:
                cnt_state[1] = 0.0
                cnt_state[0] += 1.0
    if drop:
        return -1.0
    start = t if n_sys == 0 else max(t, qlast[0])
    dep = start + 8.0 * size / rate
    qlast[0] = dep
    qidle[0] = dep
    pos = (qhead[0] + qcnt[0]) % cap
    qd[pos] = dep
    qring[pos] = col
    qcnt[0] += 1
    qcol[col] += 1.0
    return dep


@njit(cache=True)
def _push(heap, ctr, t, kind, a, b):
    heapq.heappush(heap, (t, ctr[0], kind, a, b))
    ctr[0] += 1


@njit(cache=True)
def _arm(heap, ctr, S, f):
    """Make sure a timer event is pending no later than the retransmission deadline (events at a later
    deadline re-arm themselves when they fire; an earlier deadline gets its own event)."""
    d = S[f, T.DEADLINE]
    if d < S[f, T.ARMED]:
        S[f, T.ARMED] = d
        _push(heap, ctr, d, 5, f, 0)


@njit(cache=True)
def _alloc(free, nfree):
    if nfree[0] == 0:
        raise RuntimeError("packet pool exhausted")
    nfree[0] -= 1
    return free[nfree[0]]


@njit(cache=True, inline="always")
def _colour(kind, state, fixed, t, size):
    """A packet's colour: its flow's marker (colour blind) when it has one, else the fixed colour."""
    return mark(state, kind, t, size, 0, False) if kind >= 0 else fixed


@njit(cache=True)
def _emit(heap, ctr, S, SB, TS, f, t, cand, out, p_f, p_s, free, nfree, access):
    """Let flow ``f`` send what its window allows now (toward R1) and keep its timer armed."""
    k = T.send_batch(S, SB, TS, f, t, cand, out)
    for j in range(k):
        pid = _alloc(free, nfree)
        p_f[pid] = f
        p_s[pid] = out[j]
        _push(heap, ctr, t + access[f], 1, pid, 0)
    _arm(heap, ctr, S, f)


@njit(cache=True)
def _ack(heap, ctr, S, RB, f, trigger, t, p_f, p_s, p_ns, p_sack, free, nfree, sack_blocks):
    """The receiver of flow ``f`` sends an ACK now (cumulative ACK and SACK blocks) toward R2; the
    delayed-ACK timer is cancelled."""
    S[f, T.PEND] = 0
    S[f, T.DA_ON] = 0.0
    S[f, T.DA_GEN] += 1
    pid = _alloc(free, nfree)
    p_f[pid] = f
    p_s[pid] = int(S[f, T.RNXT])
    p_ns[pid] = T.build_sack(S, RB, f, trigger, p_sack[pid], sack_blocks)
    _push(heap, ctr, t, 3, pid, 0)


@njit(cache=True)
def _run(seed, S, SB, TS, RB, access, delay, rate, rrate, mss, starts, delack, sack_blocks,
         colour, mkind, mstate, acolour, akind, astate, loss, ack_loss,
         fminth, fmaxth, fmaxp, fqi, fqf, rminth, rmaxth, rmaxp, rqi, rqf, duration, w0, w1, pool):
    np.random.seed(seed)
    n = S.shape[0]
    W = SB.shape[1]
    # packet pool: flow, seq/ack, nsack, sack blocks
    p_f = np.zeros(pool, np.int64)
    p_s = np.zeros(pool, np.int64)
    p_ns = np.zeros(pool, np.int64)
    p_sack = np.zeros((pool, 8), np.int64)
    free = np.arange(pool - 1, -1, -1).astype(np.int64)
    nfree = np.array([pool], np.int64)
    fq_d, fq_r, fq_h, fq_s = _new_queue(fqi[0])
    rq_d, rq_r, rq_h, rq_s = _new_queue(rqi[0])
    # statistics (per flow): 0 goodput segs, 1 throughput segs, 2 arrivals, 3 drops, 4 random losses,
    # 5 acks sent, 6 acks dropped, 7 acks delivered
    st = np.zeros((n, 8))
    col_arr = np.zeros(3)
    col_drop = np.zeros(3)
    cand = np.zeros(W, np.int64)
    out = np.zeros(W, np.int64)
    data_size = float(mss + 42)
    heap = [(0.0, 0, 0, 0, 0)]
    heapq.heappop(heap)
    ctr = np.zeros(1, np.int64)
    for f in range(n):
        _push(heap, ctr, starts[f], 0, f, 0)
    packets = 0
    events = 0
    while len(heap) > 0:
        ev = heapq.heappop(heap)
        t = ev[0]
        if t > duration:
            break
        events += 1
        kind = ev[2]
        a = ev[3]
        inwin = t >= w0 and t <= w1
        if kind == 1:  # data segment reaches R1's bottleneck queue
            pid = a
            f = p_f[pid]
            packets += 1
            c = _colour(mkind[f], mstate[f], colour[f], t, data_size)
            if inwin:
                st[f, 2] += 1
                col_arr[c] += 1
            if loss > 0.0 and np.random.random() < loss:
                if inwin:
                    st[f, 4] += 1
                free[nfree[0]] = pid
                nfree[0] += 1
                continue
            dep = _admit(t, data_size, c, fq_d, fq_r, fq_h, fq_s, fminth, fmaxth, fmaxp, fqi, fqf, rate)
            if dep < 0.0:
                if inwin:
                    st[f, 3] += 1
                    col_drop[c] += 1
                free[nfree[0]] = pid
                nfree[0] += 1
                continue
            _push(heap, ctr, dep + delay, 2, pid, 0)
        elif kind == 2:  # data segment at the receiver
            pid = a
            f = p_f[pid]
            seq = p_s[pid]
            free[nfree[0]] = pid
            nfree[0] += 1
            ack_now, delivered = T.on_data(S, RB, f, seq)
            if inwin:
                st[f, 1] += 1
                st[f, 0] += delivered
            if S[f, T.FILE] >= 0 and S[f, T.DONE_T] < 0 and S[f, T.RNXT] >= S[f, T.FILE]:
                S[f, T.DONE_T] = t
            if ack_now == 0:
                if S[f, T.DA_ON] == 0.0:
                    S[f, T.DA_ON] = 1.0
                    S[f, T.DA_GEN] += 1
                    _push(heap, ctr, t + delack, 6, f, int(S[f, T.DA_GEN]))
                continue
            # send an ACK now
            _ack(heap, ctr, S, RB, f, seq, t, p_f, p_s, p_ns, p_sack, free, nfree, sack_blocks)
        elif kind == 6:  # delayed-ACK timer
            f = a
            if ev[4] != int(S[f, T.DA_GEN]) or S[f, T.DA_ON] == 0.0:
                continue
            _ack(heap, ctr, S, RB, f, -1, t, p_f, p_s, p_ns, p_sack, free, nfree, sack_blocks)
        elif kind == 3:  # ACK reaches R2's reverse queue
            pid = a
            f = p_f[pid]
            packets += 1
            nb = p_ns[pid]
            size = 42.0 + (8.0 * nb + 4.0 if nb > 0 else 0.0)
            c = _colour(akind[f], astate[f], acolour[f], t, size)
            if inwin:
                st[f, 5] += 1
            if ack_loss > 0.0 and np.random.random() < ack_loss:
                dep = -1.0
            else:
                dep = _admit(t, size, c, rq_d, rq_r, rq_h, rq_s, rminth, rmaxth, rmaxp, rqi, rqf, rrate)
            if dep < 0.0:
                if inwin:
                    st[f, 6] += 1
                free[nfree[0]] = pid
                nfree[0] += 1
                continue
            _push(heap, ctr, dep + delay + access[f], 4, pid, 0)
        elif kind == 4:  # ACK at the sender
            pid = a
            f = p_f[pid]
            if inwin:
                st[f, 7] += 1
            T.on_ack(S, SB, TS, f, t, p_s[pid], p_sack[pid], p_ns[pid], cand)
            free[nfree[0]] = pid
            nfree[0] += 1
            _emit(heap, ctr, S, SB, TS, f, t, cand, out, p_f, p_s, free, nfree, access)
        elif kind == 5:  # retransmission timer
            f = a
            if t != S[f, T.ARMED]:
                continue  # superseded by an earlier deadline
            S[f, T.ARMED] = np.inf
            if S[f, T.DEADLINE] == np.inf:
                continue
            if t < S[f, T.DEADLINE] - 1e-12:
                _arm(heap, ctr, S, f)
                continue
            T.on_timeout(S, SB, f, t, cand)
            _emit(heap, ctr, S, SB, TS, f, t, cand, out, p_f, p_s, free, nfree, access)
        else:  # start
            f = a
            _emit(heap, ctr, S, SB, TS, f, t, cand, out, p_f, p_s, free, nfree, access)
    for f in range(n):
        T._integrate(S, f, w1)
    return st, col_arr, col_drop, packets, events


def simulate(net: Dumbbell, seed: int = 1) -> RunResult:
    """One run of the dumbbell (see the module docstring)."""
    n = net.n
    if n < 1 or net.rate <= 0 or net.mss <= 0 or not 0 <= net.warmup < net.duration:
        raise ValueError("invalid dumbbell: n >= 1, positive rate and mss, 0 <= warmup < duration")
    if not (0 <= net.loss < 1 and 0 <= net.ack_loss < 1):
        raise ValueError("loss probabilities lie in [0, 1)")
    rng = np.random.default_rng(seed)
    starts = np.asarray(net.starts if net.starts is not None else rng.uniform(0, net.start_spread, n), float)
    if starts.shape != (n,):
        raise ValueError("starts: one per flow")
    W = 1 << int(math.ceil(math.log2(2 * net.rwnd + 2)))
    files = np.asarray(net.per_flow(net.files, "files"), float)
    S, SB, TS, RB = T.new_state(n, W, init_cwnd=net.init_cwnd, rwnd=net.rwnd, min_rto=net.min_rto, files=files,
                                base_rtt=net.base_rtt(), window=(net.warmup, net.duration),
                                ssthresh_rule=net.ssthresh_rule)
    access = np.asarray(net.per_flow(net.access, "access"), float)
    mkind, mstate = _markers(net, net.marker, "marker")
    akind, astate = _markers(net, net.ack_marker, "ack_marker")
    colour = np.asarray(net.per_flow(net.colour, "colour"), np.int64)
    acolour = np.asarray(net.per_flow(net.ack_colour, "ack_colour"), np.int64)
    if ((colour < 0) | (colour > 2) | (acolour < 0) | (acolour > 2)).any():
        raise ValueError("colours are 0, 1 or 2")
    fq = _queue_arrays(net.fwd)
    rq = _queue_arrays(net.rev)
    pool = n * (4 * net.rwnd + 16) + net.fwd.limit + net.rev.limit + 64
    rrate = float(net.rev_rate or net.rate)
    seed32 = int(np.random.SeedSequence(seed).generate_state(1)[0])
    t0 = time.perf_counter()
    st, col_arr, col_drop, packets, events = _run(
        seed32, S, SB, TS, RB, access, float(net.delay), float(net.rate), rrate, int(net.mss), starts,
        float(net.delack), int(min(net.sack_blocks, 4)), colour, mkind, mstate, acolour, akind, astate,
        float(net.loss), float(net.ack_loss), *fq, *rq, float(net.duration), float(net.warmup),
        float(net.duration), int(pool))
    wall = time.perf_counter() - t0
    win = net.duration - net.warmup
    bits = 8.0 * net.mss / win
    done = S[:, T.DONE_T]
    fs = FlowStats(goodput=st[:, 0] * bits, throughput=st[:, 1] * bits, arrivals=st[:, 2], drops=st[:, 3],
                   random_losses=st[:, 4], ack_sent=st[:, 5], ack_dropped=st[:, 6], ack_delivered=st[:, 7],
                   sent=S[:, T.N_SENT].copy(), retransmitted=S[:, T.N_RETX].copy(), timeouts=S[:, T.N_RTO].copy(),
                   recoveries=S[:, T.N_FR].copy(), cwnd_mean=S[:, T.CW_AREA] / win, cwnd_max=S[:, T.CW_MAX].copy(),
                   srtt=S[:, T.SRTT].copy(), completion=np.where(done >= 0, done - starts, np.nan),
                   drops_by_colour=col_drop, arrivals_by_colour=col_arr)
    return RunResult(fs, int(packets), int(events), wall, win)


def replicate(net: Dumbbell, replications: int, seed: int = 1) -> list[RunResult]:
    """Independent replications (seeds derived from ``seed``; start times drawn per replication)."""
    seeds = np.random.SeedSequence(seed).generate_state(replications)
    return [simulate(net, int(s)) for s in seeds]
