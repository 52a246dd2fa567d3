"""A dumbbell of TCP flows through a DiffServ bottleneck (numba event loop): qosbound's packet-level TCP simulator.

Topology: ``n`` senders -> router R1 -> bottleneck link (``rate`` bit/s, one-way delay
``delay``) -> router R2 -> ``n`` receivers; ACKs come back R2 -> R1 over a reverse bottleneck
(``rev_rate``, same delay). Flow ``i``'s access link adds ``access[i]`` seconds each way
(sender <-> R1); the receivers hang on R2 with no delay, so flow ``i``'s base RTT is
``2 (access[i] + delay)`` plus the data segment's and the ACK's transmission times. The TCP
ends are :mod:`qosbound.validation.tcp` (NewReno + SACK, RFC 6675 pipe; delayed ACKs).

Flows send their data R1 -> R2 (``direction`` 0, ACKs back R2 -> R1) or R2 -> R1 (``direction`` 1), so
data and ACKs may share both directions. Each bottleneck direction is one FIFO queue with a DiffServ
dropper, or a set of class queues (below):

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

Classes (``fwd_classes`` / ``rev_classes``, tuples of :class:`Class`): each class is its own queue with
its own dropper (a :class:`Queue`, as above); every flow's data goes to ``data_class`` of its direction
and its ACKs to ``ack_class`` of the other. A scheduler puts the next packet on the wire when the last
one has left (departure events): the highest ``priority`` level with a packet waiting is served (strict
priority, non-preemptive), and the classes of one level share by deficit round robin with quanta in
proportion to their ``weight`` (CBWFQ-like; Cisco's LLQ + CBWFQ is one policed priority class above
weighted ones). ``police`` drops a class's arrivals of that colour or above (behind the flow's marker:
an EF policer). A class queue holds only waiting packets, so its dropper sees what a FIFO's sees with
``uncounted=1``; a class link's departure sorts before other events at the same instant, as a FIFO's
packet that leaves at ``t`` is gone for an arrival at ``t``. With these, one class per direction gives
exactly the FIFO's results. Per-class counts (arrivals, drops, bytes sent) are in ``RunResult.classes``.

Node uplinks (``uplink_rate`` > 0): each flow's data segments first queue in its node's uplink
(``uplink_of``; a drop-tail FIFO of ``uplink_limit`` segments, departures computed at admission), then
take the access delay. Markers may be shared by a node's flows (``marker_of``) and meter colour-aware
(``marker_aware``: the flow's fixed colour is the pre-colour).

Open-loop sources (``udp``, tuple of :class:`Udp`): CBR, Poisson or on-off UDP packets generated at a bottleneck
queue (the source's access link is infinitely fast), offered to a class of either direction (or its FIFO) with a
fixed colour or their own marker, from ``start`` to ``stop``. Each source's packets generated in the window are
counted sent, dropped or delivered (``in_flight`` the rest at the end), and every delivered one's one-way delay is
kept (``RunResult.udp``, :class:`UdpStats`: loss, mean, percentiles, jitter). With no sources and no ``then``
chains the event loop draws the same random numbers and pushes the same events as without them: TCP-only results
are unchanged. ``n`` may be 0 when there are sources.

Client chains (``then``, ``think``): a flow whose ``starts`` is ``inf`` starts only when the flow naming it in
``then`` has delivered its whole file, after an exponential think time of mean ``think`` (0: at once): a client
fetching files one after another (HTTP/1.0, one connection per file), as WebStone's clients do.

Simplifications (besides those of :mod:`qosbound.validation.tcp`):

* Access links are infinitely fast (no serialization, no queue) unless node uplinks are set, and ACKs
  never queue there; otherwise only the two bottleneck directions queue. ns-3 runs 1 Gbit/s access
  links (12 us per 1500-byte packet).
* A class is policed only by colour (its flows' markers); there is no class-level token bucket (Cisco's
  LLQ polices the priority class only under congestion; here a marker polices it always).
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
is from its flow's start to when its last segment reached the receiver in order.

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

__all__ = ["Queue", "Marker", "Class", "Udp", "Dumbbell", "FlowStats", "ClassStats", "UdpStats", "RunResult",
           "simulate", "replicate", "HEADER"]

HEADER = 42  # PPP 2 + IPv4 20 + TCP 20 bytes

# event kinds (7: a class link's departure; 8: an open-loop packet generated at its queue; 9: delivered)
_START, _FWD_ARR, _RX_DATA, _REV_ARR, _RX_ACK, _RTO, _DELACK = range(7)
UDP_KINDS = {"cbr": 0, "poisson": 1, "onoff": 2}


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
class Class:
    """One class of a bottleneck direction: its own queue and dropper (a :class:`Queue`), served by the
    direction's scheduler.

    ``priority``: strict-priority level; a class of a higher level is served whenever it has a packet
    waiting (non-preemptive: the packet on the wire finishes first). Classes of the same level share the
    link by deficit round robin with quanta proportional to ``weight`` (the smallest weight of the level
    gets one ``quantum`` of bytes per round). ``police``: arrivals whose colour is ``police`` or above
    are dropped before the queue (an EF policer behind the flow's marker: ``police=1`` passes only green;
    3, the default, polices nothing). Drops of the policer count as queue drops.
    """

    name: str = "BE"
    queue: Queue = field(default_factory=Queue)
    priority: int = 0
    weight: float = 1.0
    police: int = 3
    quantum: float = 1502.0  # bytes per DRR round of the level's smallest weight


@dataclass(frozen=True)
class Udp:
    """An open-loop (UDP) source at one end of the bottleneck.

    ``kind``: ``"cbr"`` (one ``size``-byte packet every ``8 size / rate`` s from ``start``), ``"poisson"``
    (exponential gaps of mean ``8 size / rate``) or ``"onoff"`` (CBR at ``rate`` during exponential on periods
    of mean ``on`` s, silent for exponential off periods of mean ``off`` s; an on period starts with a packet;
    the mean rate is ``rate on / (on + off)``). ``size``: bytes on the wire (the bottleneck's packet size).
    Packets are generated until ``stop`` (default: the end of the run) and offered to the bottleneck queue of
    ``direction`` (0 R1 -> R2, 1 R2 -> R1), class ``cls`` of that direction's classes; their colour is the
    ``marker``'s (colour blind) or the fixed ``colour``. ``access``: one-way delay added after the bottleneck
    (the sender sits at the router, its access link at the far side is infinitely fast)."""

    kind: str = "cbr"
    rate: float = 64e3  # bit/s (the peak rate of an on-off source)
    size: int = 200  # bytes on the wire
    direction: int = 0
    cls: int = 0
    colour: int = 0
    marker: Marker | None = None
    start: float = 0.0
    stop: float = math.inf
    on: float = 0.352  # s, mean on period (onoff)
    off: float = 0.650  # s, mean off period (onoff)
    access: float = 0.0
    name: str = ""


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
    direction: tuple = (0,)  # per flow: 0 data R1 -> R2 (ACKs back R2 -> R1), 1 data R2 -> R1
    fwd_classes: tuple = ()  # Class per class of the R1 -> R2 direction; () = the one FIFO ``fwd``
    rev_classes: tuple = ()  # the same for R2 -> R1 (() = the one FIFO ``rev``)
    data_class: tuple = (0,)  # per flow: index of its data's class in its data direction's classes
    ack_class: tuple = (0,)  # per flow: index of its ACKs' class in the other direction's classes
    marker_of: tuple = ()  # per flow: index into ``marker`` of the data marker it shares (default: its own)
    marker_aware: bool = False  # data markers meter colour-aware, the flow's ``colour`` as pre-colour
    uplink_rate: float = 0.0  # bit/s of the senders' node uplinks (0: infinitely fast, no uplink queue)
    uplink_of: tuple = ()  # per flow: its sender's node (flows of one node share its uplink; default: own)
    uplink_limit: int = 1 << 30  # data segments an uplink holds (drop tail; default: unlimited)
    then: tuple = ()  # per flow: the flow that starts when this one's file has arrived (-1: none; default: none)
    think: float = 0.0  # s, mean exponential think time before a ``then`` flow starts (0: at once)
    udp: tuple = ()  # open-loop sources (:class:`Udp`), sharing the bottleneck queues with the TCP flows
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
    uplink_drops: np.ndarray = None  # data segments dropped by the full uplink of the flow's node


@dataclass
class ClassStats:
    """One class queue's counts over the measurement window (data and ACKs together)."""

    name: str
    arrivals: int  # packets offered (policed ones included)
    drops: int  # packets dropped by the policer, the dropper or the full buffer
    sent_bytes: float  # bytes that left on the wire
    sent: int  # packets that left on the wire
    rate: float  # bit/s: sent_bytes over the window


@dataclass
class UdpStats:
    """One open-loop source's packets generated in the measurement window: ``sent``, ``dropped`` (policer,
    dropper, full buffer), ``delivered``; ``in_flight`` still queued or on the link when the run ended (neither
    lost nor delivered). ``delays``: one-way delay (s, generation to the last bit at the receiver plus the
    link and access delays) of every delivered packet in the order they were sent."""

    name: str
    sent: int
    dropped: int
    delivered: int
    in_flight: int
    delays: np.ndarray
    window: float

    @property
    def loss(self) -> float:
        """Dropped over the packets whose fate is known (sent less those in flight at the end)."""
        done = self.sent - self.in_flight
        return self.dropped / done if done else 0.0

    @property
    def mean_delay(self) -> float:
        return float(self.delays.mean()) if self.delays.size else math.nan

    def percentile(self, q: float) -> float:
        """The ``q``-th percentile (0..100) of the one-way delay (s)."""
        return float(np.percentile(self.delays, q)) if self.delays.size else math.nan

    @property
    def jitter(self) -> float:
        """Mean absolute difference of the delays of consecutive delivered packets (s; IPDV, RFC 3393)."""
        return float(np.abs(np.diff(self.delays)).mean()) if self.delays.size > 1 else 0.0

    @property
    def throughput(self) -> float:
        """Bit/s delivered (wire bytes) over the window."""
        return math.nan if self.window <= 0 else float(self.delivered_bytes * 8.0 / self.window)

    delivered_bytes: float = 0.0
    times: np.ndarray = None  # s, generation time of each delivered packet (same order as ``delays``)


@dataclass
class RunResult:
    flows: FlowStats
    packets: int  # packets that entered the dumbbell (data at R1 + ACKs at R2), whole run
    events: int
    wall: float  # s of wall-clock time in the event loop
    window: float  # s measured
    classes: dict = field(default_factory=dict)  # (direction, class index) -> ClassStats (class queues only)
    udp: list = field(default_factory=list)  # UdpStats per open-loop source

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


def _classes(net: Dumbbell):
    """The class queues of both directions as flat arrays, classes sorted by falling priority within a
    direction (one level = a run of equal priorities), and each flow's data and ACK class as an index into
    them. Returns (dmode, dcls, acls, arrays..., order) where ``order[i]`` is the (direction, index) of
    internal class ``i``."""
    fdir = np.asarray(net.per_flow(net.direction, "direction"), np.int64)
    if ((fdir != 0) & (fdir != 1)).any():
        raise ValueError("direction: 0 (R1 -> R2) or 1 (R2 -> R1) per flow")
    dcls_u = np.asarray(net.per_flow(net.data_class, "data_class"), np.int64)
    acls_u = np.asarray(net.per_flow(net.ack_class, "ack_class"), np.int64)
    dmode = np.zeros(2, np.int64)
    order, levels, dir_lv = [], [], np.zeros((2, 2), np.int64)
    where = {}
    for d, classes in enumerate((net.fwd_classes, net.rev_classes)):
        classes = tuple(classes)
        dir_lv[d, 0] = len(levels)
        if classes:
            dmode[d] = 1
            for c in classes:
                if not isinstance(c, Class):
                    raise ValueError("fwd_classes / rev_classes hold Class objects")
                if not (c.weight > 0 and c.quantum > 0) or c.police not in (0, 1, 2, 3):
                    raise ValueError(f"class {c.name!r}: weight and quantum > 0, police 0..3")
            idx = sorted(range(len(classes)), key=lambda i: -classes[i].priority)
            for i in idx:
                if not levels or levels[-1][2] != d or classes[i].priority != classes[order[levels[-1][0]][1]].priority:
                    levels.append([len(order), len(order) + 1, d])
                else:
                    levels[-1][1] = len(order) + 1
                where[(d, i)] = len(order)
                order.append((d, i))
        dir_lv[d, 1] = len(levels)

    def glob(d, u, what):
        if dmode[d] == 0:
            return 0
        if (d, int(u)) not in where:
            raise ValueError(f"{what}: class {int(u)} does not exist in direction {d}")
        return where[(d, int(u))]

    dcls = np.array([glob(fdir[f], dcls_u[f], "data_class") for f in range(net.n)], np.int64)
    acls = np.array([glob(1 - fdir[f], acls_u[f], "ack_class") for f in range(net.n)], np.int64)
    cl = [(net.fwd_classes, net.rev_classes)[d][i] for d, i in order]
    qa = [_queue_arrays(c.queue) for c in cl]
    K = len(cl)
    cmin = np.array([q[0] for q in qa], float).reshape(K, 3)
    cmax = np.array([q[1] for q in qa], float).reshape(K, 3)
    cmaxp = np.array([q[2] for q in qa], float).reshape(K, 3)
    cqi = np.array([q[3] for q in qa], np.int64).reshape(K, 5)
    cqf = np.array([q[4] for q in qa], float).reshape(K, 2)
    cpol = np.array([c.police for c in cl], np.int64)
    cquant = np.zeros(K)
    lv_lo = np.array([lv[0] for lv in levels], np.int64)
    lv_hi = np.array([lv[1] for lv in levels], np.int64)
    for lo, hi in zip(lv_lo, lv_hi):
        wmin = min(cl[k].weight for k in range(lo, hi))
        for k in range(lo, hi):
            cquant[k] = cl[k].quantum * cl[k].weight / wmin
    ccap = max([c.queue.limit for c in cl], default=0) + 2
    return (fdir, dmode, dcls, acls, cmin, cmax, cmaxp, cqi, cqf, cpol, cquant, dir_lv, lv_lo, lv_hi, int(ccap)), \
        order, cl


def _markers(net: Dumbbell, markers, name, count=None):
    count = net.n if count is None else count
    ms = tuple(markers) + (None,) * (count - len(markers)) if len(markers) <= count else None
    if ms is None:
        raise ValueError(f"{name}: at most one marker per flow")
    kind = np.array([-1 if m is None else KINDS[m.kind] for m in ms], np.int64)
    st = np.zeros((count, 7))
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
def _red_drop(avgs, cnt_state, seen, col, full, minth, maxth, maxp, qi, alpha):
    """The dropper of one queue: update the averages (EWMA weight ``alpha``) from the per-colour counts
    ``seen`` the averages see, then decide for a ``col`` arrival (True: drop). ``full``: no room in the
    buffer (a drop, drawing no random number)."""
    update_averages(avgs, seen, alpha)
    if full:
        return True
    p = colour_drop_prob(avgs, col, minth, maxth, maxp, qi[1], qi[2] == 1)
    if qi[3] == 0:
        return p > 0.0 and np.random.random() < p
    # ns-3 RED ("wait"): cnt_state = [count, old]
    q_seen = seen[0] + seen[1] + seen[2]
    a = avgs[avg_index(qi[1], col)]
    if a >= minth[col] and q_seen > 1:
        cnt_state[0] += 1.0
        if p >= 1.0:
            cnt_state[0] = 0.0
            return True
        if cnt_state[1] == 0.0:
            cnt_state[1] = 1.0
            cnt_state[0] = 1.0
            return False
        cp = cnt_state[0] * p  # Floyd & Jacobson's uniformisation: 0 below 1, p / (2 - count p) below 2, then 1
        pa = 0.0 if cp < 1.0 else (p / (2.0 - cp) if cp < 2.0 else 1.0)
        if pa > 0.0 and np.random.random() <= pa:
            cnt_state[0] = 0.0
            return True
        return False
    cnt_state[1] = 0.0
    cnt_state[0] += 1.0
    return False


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
    waiting = n_sys - 1 if n_sys > 0 else 0
    if _red_drop(avgs, cnt_state, seen, col, waiting >= qi[0], minth, maxth, maxp, qi, qf[0]):
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
def _class_offer(t, pid, col, k, rate, cs, ch, cring, cmin, cmax, cmaxp, cqi, cqf, cpol, wire_k):
    """Offer packet ``pid`` (colour ``col``) to class ``k``'s queue; True when it is queued. A class queue
    holds its waiting packets only (the packet on the wire has left it): its dropper sees what a FIFO's
    sees with ``uncounted=1``, and its averages decay after the class was idle (queue empty, nothing of it
    on the wire) since its last departure."""
    if col >= cpol[k]:
        return False
    st = cs[k]
    n = ch[k, 1]
    if n == 0 and wire_k != k:
        idle = t - st[9]
        if idle > 0.0:
            m = math.floor(idle * rate / (8.0 * cqf[k, 1]))
            for j in range(3):
                st[3 + j] = ewma_idle(st[3 + j], cqf[k, 0], m)
    if _red_drop(st[3:6], st[6:8], st[0:3], col, n >= cqi[k, 0], cmin[k], cmax[k], cmaxp[k], cqi[k], cqf[k, 0]):
        return False
    cring[k, (ch[k, 0] + n) % cring.shape[1]] = pid
    ch[k, 1] = n + 1
    st[col] += 1.0
    return True


@njit(cache=True)
def _class_next(d, dir_lv, lv_lo, lv_hi, lv_cur, lv_fresh, ch, cring, cdef, cquant, p_size):
    """The scheduler of direction ``d``: the class whose head packet goes on the wire next (-1: nothing
    waits). Levels are served in order (strict priority); within a level, deficit round robin: the class
    whose turn it is adds its quantum once per turn and sends while its deficit covers the head packet."""
    for lv in range(dir_lv[d, 0], dir_lv[d, 1]):
        lo = lv_lo[lv]
        hi = lv_hi[lv]
        busy = False
        for k in range(lo, hi):
            if ch[k, 1] > 0:
                busy = True
                break
        if not busy:
            continue
        if hi - lo == 1:
            return lo
        while True:
            k = lv_cur[lv]
            if ch[k, 1] > 0:
                if lv_fresh[lv] == 0:
                    cdef[k] += cquant[k]
                    lv_fresh[lv] = 1
                size = p_size[cring[k, ch[k, 0]]]
                if cdef[k] >= size:
                    cdef[k] -= size
                    return k
            else:
                cdef[k] = 0.0
            lv_cur[lv] = lo if k + 1 == hi else k + 1
            lv_fresh[lv] = 0
    return -1


@njit(cache=True)
def _class_pop(k, ch, cring, cs, p_col):
    """Take class ``k``'s head packet off its queue."""
    pid = cring[k, ch[k, 0]]
    ch[k, 0] = (ch[k, 0] + 1) % cring.shape[1]
    ch[k, 1] -= 1
    cs[k, p_col[pid]] -= 1.0
    return pid


@njit(cache=True)
def _enqueue(heap, t, pid, size, c, d, k, inwin, dmode, fq_d, fq_r, fq_h, fq_s, fminth, fmaxth, fmaxp, fqi, fqf,
             rq_d, rq_r, rq_h, rq_s, rminth, rmaxth, rmaxp, rqi, rqf, rates, cs, ch, cring, cmin, cmax, cmaxp, cqi, cqf,
             cpol, wire, wire_k, p_size, p_col, cst):
    """Offer packet ``pid`` (``size`` bytes, colour ``c``) to direction ``d``'s bottleneck: its FIFO (returns the
    departure time, -1 when dropped) or its class ``k`` (returns -1 when dropped, -2 when queued; a packet that
    finds the link idle goes on the wire at once, its departure event pushed). Counts the class's arrivals and
    drops in the window."""
    if dmode[d] == 0:
        if d == 0:
            dep = _admit(t, size, c, fq_d, fq_r, fq_h, fq_s, fminth, fmaxth, fmaxp, fqi, fqf, rates[0])
        else:
            dep = _admit(t, size, c, rq_d, rq_r, rq_h, rq_s, rminth, rmaxth, rmaxp, rqi, rqf, rates[1])
        return dep if dep >= 0.0 else -1.0
    if inwin:
        cst[k, 0] += 1
    p_size[pid] = size
    p_col[pid] = c
    if not _class_offer(t, pid, c, k, rates[d], cs, ch, cring, cmin, cmax, cmaxp, cqi, cqf, cpol, wire_k[d]):
        if inwin:
            cst[k, 1] += 1
        return -1.0
    if wire[d] < 0:  # the link is idle: this packet goes on the wire now
        wire[d] = _class_pop(k, ch, cring, cs, p_col)
        wire_k[d] = k
        _push_departure(heap, t + 8.0 * size / rates[d], d)
    return -2.0


@njit(cache=True, inline="always")
def _deliver(heap, ctr, pid, t, is_ack, delay, acc):
    """A packet's last bit left the bottleneck at ``t``: a data segment reaches its receiver after the
    link's delay, an ACK its sender after the link's and the access delay."""
    if is_ack:
        _push(heap, ctr, t + delay + acc, 4, pid, 0)
    else:
        _push(heap, ctr, t + delay, 2, pid, 0)


@njit(cache=True)
def _push(heap, ctr, t, kind, a, b):
    heapq.heappush(heap, (t, ctr[0], kind, a, b))
    ctr[0] += 1


@njit(cache=True)
def _push_departure(heap, t, d):
    """A class link's departure event: it sorts before every other event at the same time (a FIFO's
    packet whose last bit leaves at ``t`` is gone for an arrival at ``t``)."""
    heapq.heappush(heap, (t, -1, 7, d, 0))


@njit(cache=True)
def _arm(heap, ctr, S, f):
    """Make sure a timer event is pending no later than the retransmission deadline (events at a later
    deadline re-arm themselves when they fire; an earlier deadline gets its own event)."""
    d = T.timer_to_arm(S, f)
    if d < np.inf:
        _push(heap, ctr, d, 5, f, 0)


@njit(cache=True)
def _alloc(free, nfree):
    if nfree[0] == 0:
        raise RuntimeError("packet pool exhausted")
    nfree[0] -= 1
    return free[nfree[0]]


@njit(cache=True, inline="always")
def _colour(kind, state, fixed, t, size, aware=False):
    """A packet's colour: its flow's marker (colour blind, or colour aware with the fixed colour as the
    pre-colour) when it has one, else the fixed colour."""
    return mark(state, kind, t, size, fixed if aware else 0, aware) if kind >= 0 else fixed


@njit(cache=True)
def _emit(heap, ctr, S, SB, TS, f, t, cand, out, p_f, p_s, free, nfree, access, up, ufree, utx, ulim, udrop,
          inwin):
    """Let flow ``f`` send what its window allows now (toward its bottleneck queue) and keep its timer armed.
    With uplinks (``utx`` > 0: one data segment's transmission time on them) the segments queue for the
    uplink ``up[f]`` of the flow's node (a drop-tail FIFO holding ``ulim`` segments) before the access delay."""
    k = T.send_batch(S, SB, TS, f, t, cand, out)
    for j in range(k):
        if utx > 0.0:
            g = up[f]
            if ufree[g] - t >= ulim * utx - 1e-12:
                if inwin:
                    udrop[f] += 1
                continue
        pid = _alloc(free, nfree)
        p_f[pid] = f
        p_s[pid] = out[j]
        if utx > 0.0:
            ufree[g] = max(t, ufree[g]) + utx
            _push(heap, ctr, ufree[g] + access[f], 1, pid, 0)
        else:
            _push(heap, ctr, t + access[f], 1, pid, 0)
    _arm(heap, ctr, S, f)


@njit(cache=True)
def _ack(heap, ctr, S, RB, f, trigger, t, p_f, p_s, p_ns, p_sack, free, nfree, sack_blocks):
    """The receiver of flow ``f`` sends an ACK now (cumulative ACK and SACK blocks) toward R2; the
    delayed-ACK timer is cancelled."""
    T.ack_sent(S, f)
    pid = _alloc(free, nfree)
    p_f[pid] = f
    p_s[pid] = int(S[f, T.RNXT])
    p_ns[pid] = T.build_sack(S, RB, f, trigger, p_sack[pid], sack_blocks)
    _push(heap, ctr, t, 3, pid, 0)


@njit(cache=True)
def _run(seed, S, SB, TS, RB, access, delay, rate, rrate, mss, starts, delack, sack_blocks,
         colour, mgroup, mkind, mstate, maware, acolour, akind, astate, loss, ack_loss,
         fminth, fmaxth, fmaxp, fqi, fqf, rminth, rmaxth, rmaxp, rqi, rqf, duration, w0, w1, pool,
         fdir, dmode, dcls, acls, cmin, cmax, cmaxp, cqi, cqf, cpol, cquant, dir_lv, lv_lo, lv_hi, ccap,
         up, utx, ulim, ukind, urate, usize, udir, ucls, ucol, umkind, umstate, ustart, ustop, uon, uoff, uacc,
         ust, urec, then, think, started):
    np.random.seed(seed)
    ufree = np.zeros(up.max() + 1 if up.shape[0] > 0 else 1)
    udrop = np.zeros(S.shape[0])
    n = S.shape[0]
    W = SB.shape[1]
    # packet pool: flow, seq/ack, nsack, sack blocks; for class queues also size, colour, ACK or data
    p_f = np.zeros(pool, np.int64)
    p_s = np.zeros(pool, np.int64)
    p_ns = np.zeros(pool, np.int64)
    p_sack = np.zeros((pool, 8), np.int64)
    p_size = np.zeros(pool)
    p_col = np.zeros(pool, np.int64)
    p_ack = np.zeros(pool, np.bool_)
    p_t = np.zeros(pool)  # generation time of an open-loop packet
    nu = ukind.shape[0]
    u_end = np.zeros(nu)  # end of an on-off source's current on period
    nrec = 0
    free = np.arange(pool - 1, -1, -1).astype(np.int64)
    nfree = np.array([pool], np.int64)
    fq_d, fq_r, fq_h, fq_s = _new_queue(fqi[0])
    rq_d, rq_r, rq_h, rq_s = _new_queue(rqi[0])
    # class queues (both directions): float state as a FIFO's, [head, count], rings of packet ids, deficits;
    # per direction the packet on the wire and its class; per level the class whose DRR turn it is
    K = cmin.shape[0]
    cs = np.zeros((K, 10))
    ch = np.zeros((K, 2), np.int64)
    cring = np.zeros((K, ccap), np.int64)
    cdef = np.zeros(K)
    lv_cur = lv_lo.copy()
    lv_fresh = np.zeros(lv_lo.shape[0], np.int64)
    wire = np.full(2, -1, np.int64)
    wire_k = np.full(2, -1, np.int64)
    rates = np.array([rate, rrate])
    # per class: arrivals, drops, bytes sent, packets sent (in the window)
    cst = np.zeros((K, 4))
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
        if starts[f] < np.inf:
            _push(heap, ctr, starts[f], 0, f, 0)
    for u in range(nu):
        if ustart[u] <= ustop[u]:
            if ukind[u] == 2:
                u_end[u] = ustart[u] + np.random.exponential(uon[u])
            _push(heap, ctr, ustart[u], 8, u, 0)
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
        if kind == 1 or kind == 3:  # a data segment reaches its bottleneck queue (1), or an ACK (3)
            pid = a
            f = p_f[pid]
            packets += 1
            is_ack = kind == 3
            if is_ack:
                d = 1 - fdir[f]
                nb = p_ns[pid]
                size = 42.0 + (8.0 * nb + 4.0 if nb > 0 else 0.0)
                c = _colour(akind[f], astate[f], acolour[f], t, size)
                if inwin:
                    st[f, 5] += 1
                lost = ack_loss > 0.0 and np.random.random() < ack_loss
            else:
                d = fdir[f]
                size = data_size
                g = mgroup[f]
                c = _colour(mkind[g], mstate[g], colour[f], t, data_size, maware)
                if inwin:
                    st[f, 2] += 1
                    col_arr[c] += 1
                lost = loss > 0.0 and np.random.random() < loss
                if lost and inwin:
                    st[f, 4] += 1
            ok = False
            if not lost:
                k = acls[f] if is_ack else dcls[f]
                p_ack[pid] = is_ack
                dep = _enqueue(heap, t, pid, size, c, d, k, inwin, dmode, fq_d, fq_r, fq_h, fq_s, fminth, fmaxth,
                               fmaxp, fqi, fqf, rq_d, rq_r, rq_h, rq_s, rminth, rmaxth, rmaxp, rqi, rqf, rates, cs, ch,
                               cring, cmin, cmax, cmaxp, cqi, cqf, cpol, wire, wire_k, p_size, p_col, cst)
                ok = dep != -1.0
                if dep >= 0.0:
                    _deliver(heap, ctr, pid, dep, is_ack, delay, access[f])
                if not ok and inwin:
                    if is_ack:
                        st[f, 6] += 1
                    else:
                        st[f, 3] += 1
                        col_drop[c] += 1
            elif is_ack and inwin:
                st[f, 6] += 1
            if not ok:
                free[nfree[0]] = pid
                nfree[0] += 1
        elif kind == 8:  # open-loop source a generates packet number ev[4] at its queue
            u = a
            gap = 8.0 * usize[u] / urate[u]
            nxt = ustart[u] + (ev[4] + 1) * gap if ukind[u] == 0 else t + (
                np.random.exponential(gap) if ukind[u] == 1 else gap)
            if ukind[u] == 2:
                while nxt >= u_end[u]:  # the on period ends: an off period, then the next on period
                    nxt = u_end[u] + np.random.exponential(uoff[u])
                    u_end[u] = nxt + np.random.exponential(uon[u])
            if nxt <= ustop[u]:
                _push(heap, ctr, nxt, 8, u, ev[4] + 1)
            packets += 1
            d = udir[u]
            size = usize[u]
            c = mark(umstate[u], umkind[u], t, size, 0, False) if umkind[u] >= 0 else ucol[u]
            if inwin:
                ust[u, 0] += 1
            pid = _alloc(free, nfree)
            p_f[pid] = n + u
            p_t[pid] = t
            p_ack[pid] = False
            dep = _enqueue(heap, t, pid, size, c, d, ucls[u], inwin, dmode, fq_d, fq_r, fq_h, fq_s, fminth, fmaxth,
                           fmaxp, fqi, fqf, rq_d, rq_r, rq_h, rq_s, rminth, rmaxth, rmaxp, rqi, rqf, rates, cs, ch,
                           cring, cmin, cmax, cmaxp, cqi, cqf, cpol, wire, wire_k, p_size, p_col, cst)
            ok = dep != -1.0
            if dep >= 0.0:
                _push(heap, ctr, dep + delay + uacc[u], 9, pid, 0)
            if not ok:
                if inwin:
                    ust[u, 1] += 1
                free[nfree[0]] = pid
                nfree[0] += 1
        elif kind == 9:  # an open-loop packet reaches its receiver
            pid = a
            u = p_f[pid] - n
            g = p_t[pid]
            if g >= w0 and g <= w1:
                ust[u, 2] += 1
                ust[u, 3] += usize[u]
                if nrec >= urec.shape[0]:
                    raise RuntimeError("open-loop delay record full")
                urec[nrec, 0] = u
                urec[nrec, 1] = g
                urec[nrec, 2] = t - g
                nrec += 1
            free[nfree[0]] = pid
            nfree[0] += 1
        elif kind == 7:  # the packet on direction a's wire has left; the scheduler picks the next
            d = a
            pid = wire[d]
            k = wire_k[d]
            if inwin:
                cst[k, 2] += p_size[pid]
                cst[k, 3] += 1
            if ch[k, 1] == 0:
                cs[k, 9] = t
            if p_f[pid] >= n:  # an open-loop packet
                _push(heap, ctr, t + delay + uacc[p_f[pid] - n], 9, pid, 0)
            else:
                _deliver(heap, ctr, pid, t, p_ack[pid], delay, access[p_f[pid]])
            k = _class_next(d, dir_lv, lv_lo, lv_hi, lv_cur, lv_fresh, ch, cring, cdef, cquant, p_size)
            if k < 0:
                wire[d] = -1
                wire_k[d] = -1
            else:
                pid = _class_pop(k, ch, cring, cs, p_col)
                wire[d] = pid
                wire_k[d] = k
                _push_departure(heap, t + 8.0 * p_size[pid] / rates[d], d)
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
                if then[f] >= 0:  # the next file of this client (after a think time)
                    _push(heap, ctr, t + (np.random.exponential(think) if think > 0.0 else 0.0), 0, then[f], 0)
            if ack_now == 0:
                gen = T.delack_start(S, f)
                if gen >= 0:
                    _push(heap, ctr, t + delack, 6, f, gen)
                continue
            # send an ACK now
            _ack(heap, ctr, S, RB, f, seq, t, p_f, p_s, p_ns, p_sack, free, nfree, sack_blocks)
        elif kind == 6:  # delayed-ACK timer
            f = a
            if not T.delack_due(S, f, ev[4]):
                continue
            _ack(heap, ctr, S, RB, f, -1, t, p_f, p_s, p_ns, p_sack, free, nfree, sack_blocks)
        elif kind == 4:  # ACK at the sender
            pid = a
            f = p_f[pid]
            if inwin:
                st[f, 7] += 1
            T.on_ack(S, SB, TS, f, t, p_s[pid], p_sack[pid], p_ns[pid], cand)
            free[nfree[0]] = pid
            nfree[0] += 1
            _emit(heap, ctr, S, SB, TS, f, t, cand, out, p_f, p_s, free, nfree, access, up, ufree, utx, ulim, udrop,
                  inwin)
        elif kind == 5:  # retransmission timer
            f = a
            due = T.on_timer(S, f, t)
            if due == 1:
                _push(heap, ctr, S[f, T.ARMED], 5, f, 0)
            if due != 2:
                continue
            T.on_timeout(S, SB, f, t, cand)
            _emit(heap, ctr, S, SB, TS, f, t, cand, out, p_f, p_s, free, nfree, access, up, ufree, utx, ulim, udrop,
                  inwin)
        else:  # start
            f = a
            started[f] = t
            _emit(heap, ctr, S, SB, TS, f, t, cand, out, p_f, p_s, free, nfree, access, up, ufree, utx, ulim, udrop,
                  inwin)
    for f in range(n):
        T._integrate(S, f, w1)
    return st, col_arr, col_drop, packets, events, cst, udrop, nrec, started


def simulate(net: Dumbbell, seed: int = 1) -> RunResult:
    """One run of the dumbbell (see the module docstring)."""
    n = net.n
    if n < (0 if net.udp else 1) or net.rate <= 0 or net.mss <= 0 or not 0 <= net.warmup < net.duration:
        raise ValueError("invalid dumbbell: n >= 1 (0 with open-loop sources), positive rate and mss, "
                         "0 <= warmup < duration")
    if not (0 <= net.loss < 1 and 0 <= net.ack_loss < 1):
        raise ValueError("loss probabilities lie in [0, 1)")
    rng = np.random.default_rng(seed)
    starts = np.asarray(net.starts if net.starts is not None else rng.uniform(0, net.start_spread, n), float)
    if starts.shape != (n,) or np.isnan(starts).any():
        raise ValueError("starts: one per flow (inf: started only by another flow's ``then``)")
    W = 1 << int(math.ceil(math.log2(2 * net.rwnd + 2)))
    files = np.asarray(net.per_flow(net.files, "files"), float)
    S, SB, TS, RB = T.new_state(n, W, init_cwnd=net.init_cwnd, rwnd=net.rwnd, min_rto=net.min_rto, files=files,
                                base_rtt=net.base_rtt(), window=(net.warmup, net.duration),
                                ssthresh_rule=net.ssthresh_rule)
    access = np.asarray(net.per_flow(net.access, "access"), float)
    if net.marker_of:
        mgroup = np.asarray(net.per_flow(net.marker_of, "marker_of"), np.int64)
        if (mgroup < 0).any() or (mgroup >= max(len(net.marker), 1)).any():
            raise ValueError("marker_of: an index into marker per flow")
        mkind, mstate = _markers(net, net.marker, "marker", max(len(net.marker), 1))
    else:
        mgroup = np.arange(n, dtype=np.int64)
        mkind, mstate = _markers(net, net.marker, "marker")
    akind, astate = _markers(net, net.ack_marker, "ack_marker")
    colour = np.asarray(net.per_flow(net.colour, "colour"), np.int64)
    acolour = np.asarray(net.per_flow(net.ack_colour, "ack_colour"), np.int64)
    if ((colour < 0) | (colour > 2) | (acolour < 0) | (acolour > 2)).any():
        raise ValueError("colours are 0, 1 or 2")
    fq = _queue_arrays(net.fwd)
    rq = _queue_arrays(net.rev)
    carr, order, cl = _classes(net)
    up = np.asarray(net.per_flow(net.uplink_of, "uplink_of") if net.uplink_of else range(n), np.int64)
    if net.uplink_rate < 0 or (up < 0).any():
        raise ValueError("uplink_rate >= 0; uplink_of: a node index >= 0 per flow")
    pool = n * (4 * net.rwnd + 16) + net.fwd.limit + net.rev.limit + 64 + sum(c.queue.limit + 1 for c in cl)
    ua = _udp_arrays(net, order)
    if net.udp:  # open-loop packets on the links (queues are counted above)
        pool += sum(int(math.ceil(u.rate * (net.delay + u.access) / (8.0 * u.size))) + 2 for u in net.udp)
    rrate = float(net.rev_rate or net.rate)
    seed32 = int(np.random.SeedSequence(seed).generate_state(1)[0])
    t0 = time.perf_counter()
    then = np.asarray(net.per_flow(net.then, "then") if net.then else (-1,) * n, np.int64)
    if ((then < -1) | (then >= n)).any() or net.think < 0:
        raise ValueError("then: -1 or a flow index per flow; think >= 0")
    started = np.where(np.isfinite(starts), starts, np.nan)
    st, col_arr, col_drop, packets, events, cst, udrop, nrec, started = _run(
        seed32, S, SB, TS, RB, access, float(net.delay), float(net.rate), rrate, int(net.mss), starts,
        float(net.delack), int(min(net.sack_blocks, 4)), colour, mgroup, mkind, mstate, bool(net.marker_aware),
        acolour, akind, astate, float(net.loss), float(net.ack_loss), *fq, *rq, float(net.duration),
        float(net.warmup), float(net.duration), int(pool), *carr, up,
        8.0 * (net.mss + HEADER) / net.uplink_rate if net.uplink_rate > 0 else 0.0, int(net.uplink_limit), *ua, then,
        float(net.think), started)
    wall = time.perf_counter() - t0
    win = net.duration - net.warmup
    bits = 8.0 * net.mss / win
    done = S[:, T.DONE_T]
    fs = FlowStats(goodput=st[:, 0] * bits, throughput=st[:, 1] * bits, arrivals=st[:, 2], drops=st[:, 3],
                   random_losses=st[:, 4], ack_sent=st[:, 5], ack_dropped=st[:, 6], ack_delivered=st[:, 7],
                   sent=S[:, T.N_SENT].copy(), retransmitted=S[:, T.N_RETX].copy(), timeouts=S[:, T.N_RTO].copy(),
                   recoveries=S[:, T.N_FR].copy(), cwnd_mean=S[:, T.CW_AREA] / win, cwnd_max=S[:, T.CW_MAX].copy(),
                   srtt=S[:, T.SRTT].copy(), completion=np.where(done >= 0, done - started, np.nan),
                   drops_by_colour=col_drop, arrivals_by_colour=col_arr, uplink_drops=udrop)
    cs = {order[i]: ClassStats(cl[i].name, int(cst[i, 0]), int(cst[i, 1]), float(cst[i, 2]), int(cst[i, 3]),
                               8.0 * float(cst[i, 2]) / win) for i in range(len(cl))}
    ust, urec = ua[-2], ua[-1][:nrec]
    us = []
    for u, src in enumerate(net.udp):
        mine = urec[urec[:, 0] == u]
        mine = mine[np.argsort(mine[:, 1], kind="stable")]
        us.append(UdpStats(src.name or f"udp{u}", int(ust[u, 0]), int(ust[u, 1]), int(ust[u, 2]),
                           int(ust[u, 0] - ust[u, 1] - ust[u, 2]), mine[:, 2].copy(), win, float(ust[u, 3]),
                           mine[:, 1].copy()))
    return RunResult(fs, int(packets), int(events), wall, win, cs, us)


def _udp_arrays(net: Dumbbell, order):
    """The open-loop sources as arrays for the event loop, each one's class as an index into the internal
    classes, and the empty statistics (per source: sent, dropped, delivered, bytes) and delay record."""
    where = {o: i for i, o in enumerate(order)}
    m = len(net.udp)
    ukind = np.zeros(m, np.int64)
    ucls = np.zeros(m, np.int64)
    f = np.zeros((9, m))  # rate, size, start, stop, on, off, access, direction, colour
    mk = np.full(m, -1, np.int64)
    ms = np.zeros((m, 7))
    cap = 16
    win = net.duration - net.warmup
    for i, u in enumerate(net.udp):
        if not isinstance(u, Udp):
            raise ValueError("udp holds Udp objects")
        if u.kind not in UDP_KINDS:
            raise ValueError(f"udp {i}: kind one of {sorted(UDP_KINDS)}")
        if not (u.rate > 0 and u.size > 0 and u.start >= 0 and u.access >= 0 and u.direction in (0, 1)
                and u.colour in (0, 1, 2) and (u.kind != "onoff" or (u.on > 0 and u.off > 0))):
            raise ValueError(f"udp {i}: rate and size > 0, start and access >= 0, direction 0 or 1, colour 0..2, "
                             "on and off > 0")
        ukind[i] = UDP_KINDS[u.kind]
        classes = (net.fwd_classes, net.rev_classes)[u.direction]
        if classes:
            if (u.direction, u.cls) not in where:
                raise ValueError(f"udp {i}: class {u.cls} does not exist in direction {u.direction}")
            ucls[i] = where[(u.direction, u.cls)]
        f[:, i] = (u.rate, u.size, u.start, min(u.stop, net.duration), u.on, u.off, u.access, u.direction, u.colour)
        if u.marker is not None:
            mk[i] = KINDS[u.marker.kind]
            ms[i] = u.marker.state()
        expect = u.rate * win / (8.0 * u.size)
        cap += int(expect + 10.0 * math.sqrt(expect) + 100) if u.kind == "poisson" else int(expect) + 2
    return (ukind, f[0].copy(), f[1].copy(), f[7].astype(np.int64), ucls, f[8].astype(np.int64), mk, ms, f[2].copy(),
            f[3].copy(), f[4].copy(), f[5].copy(), f[6].copy(), np.zeros((m, 4)), np.zeros((cap, 3)))


def replicate(net: Dumbbell, replications: int, seed: int = 1) -> list[RunResult]:
    """Independent replications (seeds derived from ``seed``; start times drawn per replication)."""
    seeds = np.random.SeedSequence(seed).generate_state(replications)
    return [simulate(net, int(s)) for s in seeds]
