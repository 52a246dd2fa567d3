"""A dumbbell of TCP, TFRC and open-loop flows through a DiffServ bottleneck: qosbound's packet-level network engine.

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
weighted ones); with ``sharing="scfq"`` they share by self-clocked fair queueing instead (Golestani 1994: a
packet's finish tag is max(the tag in service, its class's last tag) + its transmission time / the class's share of
the level's weights; the smallest tag at the heads goes next, the lower class on a tie), which interleaves packets
as finely as the weights allow (DRR sends a quantum per turn). Either way a level is work conserving: an idle
class's share goes to the others (CBQ's borrowing). ``police`` drops a class's arrivals of that colour or above (behind the flow's marker:
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

TFRC flows (``tfrc``, tuple of :class:`Tfrc`): TFRC (RFC 5348) or gTFRC (target ``target``; Jourjon, Lochin &
Sénac 2008) senders at a node ``access`` seconds from their router, rate-paced packets of ``size`` bytes into a
class of their direction (colour fixed or from their own or a shared marker), their receivers at the far router.
The sender and receiver are :mod:`qosbound.validation.tfrc_sender`, with its feedback model per flow:
``"receiver"`` (RFC 5348: the receiver measures the loss event rate and the receive rate and reports once per RTT;
the report is a ``fb_size``-byte packet through the reverse bottleneck, queued and possibly lost there like an
ACK) or ``"sender"`` (immediate: the sender learns of each drop at once and of each delivered packet's RTT, its
forward delay plus the reverse path's propagation; no packet goes back). Per-flow figures are in
``RunResult.tfrc`` (:class:`TfrcStats`).

Client chains (``then``, ``think``): a flow whose ``starts`` is ``inf`` starts only when the flow naming it in
``then`` has delivered its whole file, after an exponential think time of mean ``think`` (0: at once): a client
fetching files one after another (HTTP/1.0, one connection per file), as WebStone's clients do.

Simplifications (besides those of :mod:`qosbound.validation.tcp`):

* Access links are infinitely fast (no serialization, no queue) unless node uplinks are set, and ACKs
  never queue there; otherwise only the two bottleneck directions queue. ns-3 runs 1 Gbit/s access
  links (12 us per 1500-byte packet).
* A class is policed only by colour (its flows' markers); there is no class-level token bucket (Cisco's
  LLQ polices the priority class only under congestion; here a marker polices it always).
* Data segments are ``mss + header`` bytes on the wire (``header`` 42 by default: PPP 2 + IPv4 20 + TCP 20,
  no timestamps); ACKs are ``header`` bytes plus the SACK option (4 + 8 per block, padded).
* Flows start at ``starts[i]`` (default: independent uniform in [0, ``start_spread``)) with no
  handshake (ns-3 spends one RTT on SYN / SYN-ACK first).
* No receive-window dynamics: ``rwnd`` segments is a fixed cap (the receiver's buffer is never
  the limit in ns-3's runs either: its buffers are set to the same size).

Measured over [``warmup``, ``duration``] (per flow): goodput = distinct payload bytes delivered in
order to the receiving application; throughput = payload bytes of every data segment that
reached the receiver (retransmissions and duplicates included); the bottleneck's data arrivals,
queue drops and random losses; ACKs sent, dropped and delivered; segments sent, retransmitted,
timeouts, fast recoveries (whole run, and in the window); the time-average and largest ``cwnd``; the
time-average ``srtt``. A finite file's completion time is from its flow's start to when its last segment reached
the receiver in order.

Packet record (``trace``: source names ``"tcp<i>"``, ``"tfrc<j>"`` or a TFRC flow's name, ``"udp<u>"`` or a
source's name, or ``"*"`` for all): one row per data packet of those sources (not ACKs or feedback) with its send
time, its arrival at the bottleneck queue, its departure (last bit on the wire; nan when dropped), and its arrival
at the receiver (``RunResult.trace``, :class:`PacketTrace`; :meth:`PacketTrace.table` gives the one trace schema).

Speed: the event loop (:mod:`qosbound.validation.dumbbell_loop`) is one numba function over an array heap; a
FIFO's departures are computed when a packet is admitted (no departure events), so a data segment costs two events
(arrival at R1, arrival at the receiver) and an ACK one (arrival at the sender: the receiver hands it to R2's queue
at once), with one pending delayed-ACK and retransmission timer event per flow. ``benchmarks/bench_tcp.py``
measures it beside ns-3 on the same dumbbell (docs/benchmarks.md).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from qosbound.validation import tcp as T
from qosbound.validation import tfrc_sender as TF
from qosbound.validation.droppers import MODES
from qosbound.validation.dumbbell_loop import PKT, run
from qosbound.validation.markers import KINDS, new_state

__all__ = ["Queue", "Marker", "Class", "Udp", "Tfrc", "Dumbbell", "FlowStats", "ClassStats", "UdpStats", "TfrcStats",
           "PacketTrace", "RunResult", "simulate", "replicate", "HEADER", "UDP_KINDS"]

HEADER = 42  # PPP 2 + IPv4 20 + TCP 20 bytes
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
    ``marker``'s (colour blind; an int shares entry ``marker`` of :attr:`Dumbbell.marker`, the one the TCP flows
    of that group meter through) or the fixed ``colour``. ``access``: one-way delay added after the bottleneck
    (the sender sits at the router, its access link at the far side is infinitely fast)."""

    kind: str = "cbr"
    rate: float = 64e3  # bit/s (the peak rate of an on-off source)
    size: int = 200  # bytes on the wire
    direction: int = 0
    cls: int = 0
    colour: int = 0
    marker: Marker | int | None = None
    start: float = 0.0
    stop: float = math.inf
    on: float = 0.352  # s, mean on period (onoff)
    off: float = 0.650  # s, mean off period (onoff)
    access: float = 0.0
    name: str = ""


@dataclass(frozen=True)
class Tfrc:
    """A TFRC (RFC 5348) or gTFRC (Jourjon, Lochin & Sénac 2008) flow: its sender ``access`` s from the router of its
    ``direction`` (0: R1, data R1 -> R2), its receiver at the far router.

    ``target``: gTFRC's g, bit/s (0: plain TFRC). ``size``: bytes on the wire per packet. ``feedback``:
    ``"receiver"`` (RFC 5348 reports, ``fb_size``-byte packets through the reverse bottleneck into class
    ``fb_class``) or ``"sender"`` (immediate; :mod:`qosbound.validation.tfrc_sender`). ``cls``: the data's class in
    its direction's classes; colour: the ``marker``'s (an int shares an entry of :attr:`Dumbbell.marker`) or the
    fixed ``colour``. ``max_rate``: a cap on the sending rate, bit/s (a codec's rate). ``header_rtt``: the receiver
    takes its RTT from the data packets' headers (RFC 5348 3.2.1) instead of the sender's current estimate."""

    target: float = 0.0
    size: int = 1500
    feedback: str = "receiver"
    direction: int = 0
    cls: int = 0
    fb_class: int = 0
    fb_size: int = 46  # PPP 2 + IPv4 20 + UDP 8 + RFC 5348 section 6.2's four 4-byte fields
    colour: int = 0
    marker: Marker | int | None = None
    access: float = 0.005
    start: float = 0.0
    max_rate: float = math.inf
    header_rtt: bool = False
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
    delack: float = 0.2  # s; 0: no delayed ACKs (every in-order segment acknowledged at once)
    sack_blocks: int = 4  # 4 fit the option space without timestamps
    ssthresh_rule: str = "rfc"  # or "ns3": halve the pipe at every reduction (qosbound.validation.tcp)
    rto_floor: str = "rto"  # or "rttvar": RTO = srtt + max(min_rto, 4 rttvar), as Linux (qosbound.validation.tcp)
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
    tfrc: tuple = ()  # TFRC / gTFRC flows (:class:`Tfrc`)
    header: int = HEADER  # bytes of a TCP segment's headers on the wire (an ACK's size without SACK)
    sharing: str = "drr"  # how the classes of one priority level share: "drr" or "scfq"
    trace: tuple = ()  # sources whose data packets are recorded ("tcp0", "tfrc0", "udp0", names, or "*")
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
        h = self.header
        return 2 * (acc + self.delay) + 8 * (self.mss + h) / self.rate + 8 * h / (self.rev_rate or self.rate)


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
    srtt_mean: np.ndarray = None  # s, time average of srtt over the window
    window_sent: np.ndarray = None  # segments sent (new and retransmitted) in the window
    window_retransmitted: np.ndarray = None
    window_timeouts: np.ndarray = None
    window_recoveries: np.ndarray = None


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
class TfrcStats:
    """One TFRC flow over the measurement window: packets ``sent``, ``arrivals`` at its bottleneck queue (``green``
    of them marked green), ``dropped`` there, ``random_losses`` before it, ``delivered`` to the receiver
    (``delivered_bytes`` on the wire); ``loss_events`` and the ``loss_event_rate`` (receiver feedback: events per
    packet the receiver accounted for, received or detected lost; sender model: events per packet sent); ``rtt``:
    the sender's RTT estimate averaged over its rate updates in the window (nan without one); ``updates``: those
    updates (feedbacks applied, or the sender model's once-per-RTT updates); ``rate`` and ``p``: the sender's
    allowed rate (bit/s) and loss event rate at the end."""

    name: str
    sent: int
    arrivals: int
    green: int
    dropped: int
    random_losses: int
    delivered: int
    delivered_bytes: float
    loss_events: int
    loss_event_rate: float
    rtt: float
    updates: int
    rate: float
    p: float
    window: float

    @property
    def throughput(self) -> float:
        """Bit/s delivered (wire bytes) over the window."""
        return float(self.delivered_bytes * 8.0 / self.window)

    @property
    def in_fraction(self) -> float:
        """Share of its arrivals marked green (IN)."""
        return self.green / self.arrivals if self.arrivals else 0.0


@dataclass
class PacketTrace:
    """The data packets of the traced sources (``Dumbbell.trace``), one row per packet in the order they were sent:
    ``source`` (name), ``direction``, ``cls`` (index in the direction's classes; -1 for a FIFO), ``colour``,
    ``size`` (bytes on the wire), ``sent`` (left its sender; an open-loop packet: generated at its queue),
    ``arrival`` at the bottleneck queue, ``departure`` (its last bit left the bottleneck), ``dropped`` (by the
    policer, the dropper, the full buffer or a random loss before the queue), ``received`` (at the receiver).
    Times in s; nan where the event did not happen before the run ended."""

    source: np.ndarray
    direction: np.ndarray
    cls: np.ndarray
    colour: np.ndarray
    size: np.ndarray
    sent: np.ndarray
    arrival: np.ndarray
    departure: np.ndarray
    dropped: np.ndarray
    received: np.ndarray

    def of(self, source: str) -> np.ndarray:
        """Boolean mask of one source's rows."""
        return self.source == source

    def table(self, class_names: dict | None = None):
        """The packets that reached the bottleneck as a pyarrow Table in the one trace schema
        (:mod:`qosbound.validation.trace`); ``class_names`` maps (direction, class index) to a name (default: "BE"
        for a FIFO, the index otherwise)."""
        from qosbound.validation.trace import make_table  # pyarrow is imported only for a table

        seen = np.isfinite(self.arrival)
        names = class_names or {}
        cls = np.array([names.get((int(d), int(k)), "BE" if k < 0 else str(int(k)))
                        for d, k in zip(self.direction[seen], self.cls[seen])], dtype=object)
        return make_table(flow=self.source[seen].astype(object), cls=cls if cls.size else "BE",
                          size=self.size[seen], arrival=self.arrival[seen], departure=self.departure[seen],
                          dropped=self.dropped[seen], colour=self.colour[seen])


@dataclass
class RunResult:
    flows: FlowStats
    packets: int  # packets that entered the dumbbell (data, ACKs and feedback at their queues), whole run
    events: int  # events taken from the event heap
    wall: float  # s of wall-clock time in the event loop
    window: float  # s measured
    classes: dict = field(default_factory=dict)  # (direction, class index) -> ClassStats (class queues only)
    udp: list = field(default_factory=list)  # UdpStats per open-loop source
    tfrc: list = field(default_factory=list)  # TfrcStats per TFRC flow
    trace: PacketTrace | None = None  # the packet record of ``Dumbbell.trace``
    cpu: float = math.nan  # CPU s of the thread in the event loop

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


def _queue_row(q: Queue):
    """One queue's dropper parameters: thresholds per colour, [limit, mode, gentle, count spacing, uncounted],
    [alpha, mean size]."""
    if q.mode not in MODES:
        raise ValueError(f"queue mode {q.mode!r}: one of {sorted(MODES)}")
    if q.spacing not in ("bernoulli", "count"):
        raise ValueError("spacing is 'bernoulli' or 'count'")
    return (np.asarray(q.min_th, float), np.asarray(q.max_th, float), np.asarray(q.max_p, float),
            np.array([q.limit, MODES[q.mode], int(q.gentle), int(q.spacing == "count"), q.uncounted], np.int64),
            np.array([q.alpha, q.mean_size]))


def _classes(net: Dumbbell):
    """The queues of both directions as flat arrays: rows 0 and 1 the FIFOs ``fwd`` and ``rev``, rows 2 + i the class
    queues, classes sorted by falling priority within a direction (one level = a run of equal priorities). Returns
    (queue parameters, scheduler arrays, class capacity, order, classes, index) where ``order[i]`` is the
    (direction, index) of internal class ``i`` and ``index`` maps (direction, index) back to ``i``."""
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
    cl = [(net.fwd_classes, net.rev_classes)[d][i] for d, i in order]
    rows = [_queue_row(net.fwd), _queue_row(net.rev)] + [_queue_row(c.queue) for c in cl]
    qp = (np.array([r[0] for r in rows], float).reshape(-1, 3), np.array([r[1] for r in rows], float).reshape(-1, 3),
          np.array([r[2] for r in rows], float).reshape(-1, 3), np.array([r[3] for r in rows], np.int64).reshape(-1, 5),
          np.array([r[4] for r in rows], float).reshape(-1, 2))
    K = len(cl)
    cquant, cshare = np.zeros(K), np.zeros(K)
    lv_lo = np.array([lv[0] for lv in levels], np.int64)
    lv_hi = np.array([lv[1] for lv in levels], np.int64)
    for lo, hi in zip(lv_lo, lv_hi):
        wmin = min(cl[k].weight for k in range(lo, hi))
        wsum = sum(cl[k].weight for k in range(lo, hi))
        for k in range(lo, hi):
            cquant[k] = cl[k].quantum * cl[k].weight / wmin
            cshare[k] = cl[k].weight / wsum
    sch = (dmode, np.array([c.police for c in cl], np.int64), cquant, cshare, dir_lv, lv_lo, lv_hi)
    ccap = max([c.queue.limit for c in cl], default=0) + 2
    return qp, sch, int(ccap), order, cl, where


def _class_of(where, dmode, d, u, what):
    """Internal index of class ``u`` of direction ``d`` (0 when the direction is one FIFO)."""
    if dmode[d] == 0:
        return 0
    if (d, int(u)) not in where:
        raise ValueError(f"{what}: class {int(u)} does not exist in direction {d}")
    return where[(d, int(u))]


class _MarkerTable:
    """Every marker of the run in one table (kinds, states); sources refer to rows (-1: a fixed colour)."""

    def __init__(self):
        self.kinds, self.states = [], []

    def add(self, m: Marker | None) -> int:
        if m is None:
            return -1
        if not isinstance(m, Marker):
            raise ValueError("a marker is a Marker (or, for an open-loop or TFRC source, the index of a shared one)")
        self.kinds.append(KINDS[m.kind])
        self.states.append(m.state())
        return len(self.kinds) - 1

    def arrays(self):
        return (np.array(self.kinds or [0], np.int64),
                np.array(self.states, float).reshape(-1, 7) if self.states else np.zeros((1, 7)))


def _markers(net: Dumbbell, table: _MarkerTable):
    """Rows of the TCP flows' data and ACK markers, and the rows ``Dumbbell.marker``'s entries got (for sources that
    share one)."""
    n = net.n
    if net.marker_of:
        groups = max(len(net.marker), 1)
        of = np.asarray(net.per_flow(net.marker_of, "marker_of"), np.int64)
        if (of < 0).any() or (of >= groups).any():
            raise ValueError("marker_of: an index into marker per flow")
    else:  # one marker per flow (with no TCP flow, the entries are there for other sources to share)
        groups, of = (n if n else len(net.marker)), np.arange(n, dtype=np.int64)
    if len(net.marker) > groups:
        raise ValueError("marker: at most one marker per flow")
    entries = tuple(net.marker) + (None,) * (groups - len(net.marker))
    rows = np.array([table.add(m) for m in entries], np.int64)
    dmark = rows[of] if n else np.zeros(0, np.int64)
    if len(net.ack_marker) > n:
        raise ValueError("ack_marker: at most one marker per flow")
    amark = np.array([table.add(m) for m in tuple(net.ack_marker) + (None,) * (n - len(net.ack_marker))], np.int64)
    return dmark, amark, rows


def _source_marker(m, table: _MarkerTable, shared, what):
    if isinstance(m, (int, np.integer)) and not isinstance(m, bool):
        if not 0 <= m < len(shared) or shared[m] < 0:
            raise ValueError(f"{what}: marker {m} is not an entry of the dumbbell's markers")
        return int(shared[m])
    return table.add(m)


def _udp_arrays(net: Dumbbell, where, dmode, table, shared, traced):
    """The open-loop sources as arrays for the event loop (each one's class as an internal index), and the empty
    statistics (per source: sent, dropped, delivered, bytes) and delay record."""
    m = len(net.udp)
    ukind = np.zeros(m, np.int64)
    ucls = np.zeros(m, np.int64)
    f = np.zeros((9, m))  # rate, size, start, stop, on, off, access, direction, colour
    mk = np.full(m, -1, np.int64)
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
        ucls[i] = _class_of(where, dmode, u.direction, u.cls, f"udp {i}")
        f[:, i] = (u.rate, u.size, u.start, min(u.stop, net.duration), u.on, u.off, u.access, u.direction, u.colour)
        mk[i] = _source_marker(u.marker, table, shared, f"udp {i}")
        expect = u.rate * win / (8.0 * u.size)
        cap += int(expect + 10.0 * math.sqrt(expect) + 100) if u.kind == "poisson" else int(expect) + 2
    return (ukind, f[0].copy(), f[1].copy(), f[7].astype(np.int64), ucls, f[8].astype(np.int64), mk, f[2].copy(),
            f[3].copy(), f[4].copy(), f[5].copy(), f[6].copy(), np.asarray(traced, bool)), np.zeros((m, 4)), \
        np.zeros((cap, 3))


def _tfrc_arrays(net: Dumbbell, where, dmode, table, shared, traced):
    """The TFRC flows as the kernels' state (:func:`qosbound.validation.tfrc_sender.new_state`) and arrays."""
    fl = tuple(net.tfrc)
    for i, x in enumerate(fl):
        if not isinstance(x, Tfrc):
            raise ValueError("tfrc holds Tfrc objects")
        if x.feedback not in TF.FEEDBACK:
            raise ValueError(f"tfrc {i}: feedback one of {sorted(TF.FEEDBACK)}")
        if not (x.size > 0 and x.fb_size > 0 and x.target >= 0 and x.max_rate > 0 and x.access >= 0 and x.start >= 0
                and x.direction in (0, 1) and x.colour in (0, 1, 2)):
            raise ValueError(f"tfrc {i}: size, fb_size and max_rate > 0; target, access and start >= 0; direction "
                             "0 or 1; colour 0..2")
    rrate = net.rev_rate or net.rate
    base = [2 * (x.access + net.delay) + 8 * x.size / (net.rate if x.direction == 0 else rrate)
            + 8 * x.fb_size / (rrate if x.direction == 0 else net.rate) for x in fl]
    Q, H = TF.new_state([float(x.size) for x in fl], [x.target / 8.0 for x in fl], [x.max_rate / 8.0 for x in fl],
                        base, [x.feedback for x in fl], [x.header_rtt for x in fl])
    ints = np.array([[x.direction, _class_of(where, dmode, x.direction, x.cls, f"tfrc {i}"),
                      _class_of(where, dmode, 1 - x.direction, x.fb_class, f"tfrc {i} fb_class"), x.colour,
                      _source_marker(x.marker, table, shared, f"tfrc {i}")] for i, x in enumerate(fl)],
                    np.int64).reshape(-1, 5)
    return (Q, H, np.array([x.access for x in fl], float), ints[:, 0].copy(), ints[:, 1].copy(), ints[:, 2].copy(),
            ints[:, 3].copy(), ints[:, 4].copy(), np.array([x.start for x in fl], float),
            np.array([x.fb_size for x in fl], float), np.asarray(traced, bool))


def _names(net: Dumbbell):
    """Every source's name: TCP flows ``tcp<i>``, TFRC flows and open-loop sources their name or ``tfrc<j>`` /
    ``udp<u>``."""
    return ([f"tcp{i}" for i in range(net.n)], [x.name or f"tfrc{j}" for j, x in enumerate(net.tfrc)],
            [u.name or f"udp{u_}" for u_, u in enumerate(net.udp)])


def _traced(net: Dumbbell, names):
    want = set(net.trace)
    every = "*" in want
    known = set().union(*map(set, names))
    if not every and not want <= known:
        raise ValueError(f"trace: unknown sources {sorted(want - known)} (known: tcp<i>, TFRC and UDP names, '*')")
    return [[every or x in want for x in group] for group in names]


def simulate(net: Dumbbell, seed: int = 1) -> RunResult:
    """One run of the dumbbell (see the module docstring)."""
    n = net.n
    if n < (0 if (net.udp or net.tfrc) else 1) or net.rate <= 0 or net.mss <= 0 or not 0 <= net.warmup < net.duration:
        raise ValueError("invalid dumbbell: n >= 1 (0 with open-loop or TFRC sources), positive rate and mss, "
                         "0 <= warmup < duration")
    if not (0 <= net.loss < 1 and 0 <= net.ack_loss < 1):
        raise ValueError("loss probabilities lie in [0, 1)")
    if net.sharing not in ("drr", "scfq") or net.header < 0:
        raise ValueError("sharing is 'drr' or 'scfq'; header >= 0")
    rng = np.random.default_rng(seed)
    starts = np.asarray(net.starts if net.starts is not None else rng.uniform(0, net.start_spread, n), float)
    if starts.shape != (n,) or np.isnan(starts).any():
        raise ValueError("starts: one per flow (inf: started only by another flow's ``then``)")
    W = 1 << int(math.ceil(math.log2(2 * net.rwnd + 2)))
    files = np.asarray(net.per_flow(net.files, "files"), float)
    S, SB, TS, RB = T.new_state(n, W, init_cwnd=net.init_cwnd, rwnd=net.rwnd, min_rto=net.min_rto, files=files,
                                base_rtt=net.base_rtt(), window=(net.warmup, net.duration),
                                ssthresh_rule=net.ssthresh_rule, rto_floor=net.rto_floor)
    access = np.asarray(net.per_flow(net.access, "access"), float)
    table = _MarkerTable()
    dmark, amark, shared = _markers(net, table)
    colour = np.asarray(net.per_flow(net.colour, "colour"), np.int64)
    acolour = np.asarray(net.per_flow(net.ack_colour, "ack_colour"), np.int64)
    if ((colour < 0) | (colour > 2) | (acolour < 0) | (acolour > 2)).any():
        raise ValueError("colours are 0, 1 or 2")
    fdir = np.asarray(net.per_flow(net.direction, "direction"), np.int64)
    if ((fdir != 0) & (fdir != 1)).any():
        raise ValueError("direction: 0 (R1 -> R2) or 1 (R2 -> R1) per flow")
    qp, sch, ccap, order, cl, where = _classes(net)
    dmode = sch[0]
    dcls_u = net.per_flow(net.data_class, "data_class")
    acls_u = net.per_flow(net.ack_class, "ack_class")
    dcls = np.array([_class_of(where, dmode, fdir[f], dcls_u[f], "data_class") for f in range(n)], np.int64)
    acls = np.array([_class_of(where, dmode, 1 - fdir[f], acls_u[f], "ack_class") for f in range(n)], np.int64)
    up = np.asarray(net.per_flow(net.uplink_of, "uplink_of") if net.uplink_of else range(n), np.int64)
    if net.uplink_rate < 0 or (up < 0).any():
        raise ValueError("uplink_rate >= 0; uplink_of: a node index >= 0 per flow")
    then = np.asarray(net.per_flow(net.then, "then") if net.then else (-1,) * n, np.int64)
    if ((then < -1) | (then >= n)).any() or net.think < 0:
        raise ValueError("then: -1 or a flow index per flow; think >= 0")
    names = _names(net)
    tr_tcp, tr_tfrc, tr_udp = _traced(net, names)
    ua, ust, urec = _udp_arrays(net, where, dmode, table, shared, tr_udp)
    ta = _tfrc_arrays(net, where, dmode, table, shared, tr_tfrc)
    rrate = float(net.rev_rate or net.rate)
    pool = n * (4 * net.rwnd + 16) + net.fwd.limit + net.rev.limit + 64 + sum(c.queue.limit + 1 for c in cl)
    # open-loop and TFRC packets on the links (their queues are counted above); TFRC sends at most about twice
    # what arrives, and a few feedbacks per RTT
    pool += sum(int(math.ceil(u.rate * (net.delay + u.access) / (8.0 * u.size))) + 2 for u in net.udp)
    pool += sum(int(math.ceil(2.0 * max(net.rate, rrate) * (net.delay + x.access + 1.0) / (8.0 * x.size))) + 64
                for x in net.tfrc)
    heap_cap = 2 * pool + 64 * (n + len(net.udp) + len(net.tfrc)) + 1024
    seed32 = int(np.random.SeedSequence(seed).generate_state(1)[0])
    started = np.where(np.isfinite(starts), starts, np.nan)
    nt = len(net.tfrc)
    out = (np.zeros((n, 8)), np.zeros(3), np.zeros(3), np.zeros((len(cl), 4)), np.zeros(n), ust, urec,
           np.zeros((nt, 9)), np.zeros((n, 4)), np.zeros((nt, 4)), started)
    fp = np.array([net.delay, net.rate, rrate, net.delack, net.loss, net.ack_loss, net.duration, net.warmup,
                   net.duration, 8.0 * (net.mss + net.header) / net.uplink_rate if net.uplink_rate > 0 else 0.0,
                   net.think, float(net.mss + net.header), float(net.header)], float)
    ip = np.array([min(net.sack_blocks, 4), int(net.marker_aware), pool, net.uplink_limit,
                   int(net.sharing == "scfq"), ccap, max(net.fwd.limit, net.rev.limit) + 2, heap_cap,
                   int(bool(net.trace))], np.int64)
    tcp = (S, SB, TS, RB, access, starts, colour, acolour, dmark, amark, fdir, dcls, acls, then, up,
           np.asarray(tr_tcp, bool))
    t0, c0 = time.perf_counter(), time.thread_time()
    packets, events, error, nrec_u, rec = run(seed32, fp, ip, tcp, table.arrays(), qp, sch, ua, ta, out)
    wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
    if error:
        raise RuntimeError(("packet pool exhausted", "event heap full", "open-loop delay record full")[error - 1])
    st, col_arr, col_drop, cst, udrop, ust, urec, tst, snap, tsnap, started = out
    win = net.duration - net.warmup
    bits = 8.0 * net.mss / win
    done = S[:, T.DONE_T]
    fs = FlowStats(goodput=st[:, 0] * bits, throughput=st[:, 1] * bits, arrivals=st[:, 2], drops=st[:, 3],
                   random_losses=st[:, 4], ack_sent=st[:, 5], ack_dropped=st[:, 6], ack_delivered=st[:, 7],
                   sent=S[:, T.N_SENT].copy(), retransmitted=S[:, T.N_RETX].copy(), timeouts=S[:, T.N_RTO].copy(),
                   recoveries=S[:, T.N_FR].copy(), cwnd_mean=S[:, T.CW_AREA] / win, cwnd_max=S[:, T.CW_MAX].copy(),
                   srtt=S[:, T.SRTT].copy(), completion=np.where(done >= 0, done - started, np.nan),
                   drops_by_colour=col_drop, arrivals_by_colour=col_arr, uplink_drops=udrop,
                   srtt_mean=S[:, T.RTT_AREA] / win, window_sent=S[:, T.N_SENT] - snap[:, 0],
                   window_retransmitted=S[:, T.N_RETX] - snap[:, 1], window_timeouts=S[:, T.N_RTO] - snap[:, 2],
                   window_recoveries=S[:, T.N_FR] - snap[:, 3])
    cs = {order[i]: ClassStats(cl[i].name, int(cst[i, 0]), int(cst[i, 1]), float(cst[i, 2]), int(cst[i, 3]),
                               8.0 * float(cst[i, 2]) / win) for i in range(len(cl))}
    urec = urec[:nrec_u]
    us = []
    for u, src in enumerate(net.udp):
        mine = urec[urec[:, 0] == u]
        mine = mine[np.argsort(mine[:, 1], kind="stable")]
        us.append(UdpStats(names[2][u], int(ust[u, 0]), int(ust[u, 1]), int(ust[u, 2]),
                           int(ust[u, 0] - ust[u, 1] - ust[u, 2]), mine[:, 2].copy(), win, float(ust[u, 3]),
                           mine[:, 1].copy()))
    Q = ta[0]
    ts = []
    for j in range(nt):
        events_w = Q[j, TF.N_EVENTS] - tsnap[j, 3]
        if Q[j, TF.MODE] == TF.FEEDBACK["receiver"]:
            seen = (Q[j, TF.N_RECV] - tsnap[j, 1]) + (Q[j, TF.N_LOST] - tsnap[j, 2])
        else:
            seen = Q[j, TF.N_SENT] - tsnap[j, 0]
        ts.append(TfrcStats(names[1][j], int(tst[j, 0]), int(tst[j, 1]), int(tst[j, 8]), int(tst[j, 2]),
                            int(tst[j, 3]), int(tst[j, 4]), float(tst[j, 5]), int(events_w),
                            float(events_w / seen) if seen > 0 else 0.0,
                            float(tst[j, 6] / tst[j, 7]) if tst[j, 7] > 0 else math.nan, int(tst[j, 7]),
                            8.0 * float(Q[j, TF.X]), float(Q[j, TF.P]), win))
    return RunResult(fs, int(packets), int(events), wall, win, cs, us, ts, _trace(rec, names, order) if net.trace else None,
                     cpu)


def _trace(rec, names, order) -> PacketTrace:
    """The packet record as a :class:`PacketTrace` (rows in send order; classes as indices in their direction)."""
    rec = rec[np.argsort(rec[:, 6], kind="stable")]
    cls = np.array([order[int(k)][1] if k >= 0 else -1 for k in rec[:, 3]], np.int64)
    ty, src = rec[:, 0].astype(np.int64), rec[:, 1].astype(np.int64)
    by_type = {PKT["tcp"]: names[0], PKT["tfrc"]: names[1], PKT["udp"]: names[2]}
    source = np.array([by_type[t][s] for t, s in zip(ty, src)], dtype=str) if len(rec) else np.zeros(0, str)
    return PacketTrace(source, rec[:, 2].astype(np.int64), cls, rec[:, 4].astype(np.int64),
                       rec[:, 5].astype(np.int64), rec[:, 6].copy(), rec[:, 7].copy(), rec[:, 8].copy(),
                       rec[:, 9] != 0, rec[:, 10].copy())


def replicate(net: Dumbbell, replications: int, seed: int = 1) -> list[RunResult]:
    """Independent replications (seeds derived from ``seed``; start times drawn per replication)."""
    seeds = np.random.SeedSequence(seed).generate_state(replications)
    return [simulate(net, int(s)) for s in seeds]
