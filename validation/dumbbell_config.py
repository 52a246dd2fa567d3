"""The dumbbell network as data: its queues, markers, classes, open-loop and TFRC sources, and the :class:`Dumbbell`
itself (topology, TCP ends, flows, measurement window).

What these parameters mean, and what the simulator does with them, is told in :mod:`qosbound.validation.dumbbell`;
:mod:`qosbound.validation.dumbbell_arrays` turns a :class:`Dumbbell` into the event loop's arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from qosbound.validation.markers import new_state

__all__ = ["Queue", "Marker", "Class", "Udp", "Tfrc", "Dumbbell", "HEADER", "UDP_KINDS"]

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
    uplink_aqm: bool = False  # uplinks run the bottleneck's droppers, markers at the nodes (dumbbell docstring)
    ack_uplink_of: tuple = ()  # per flow: the node uplink its receiver's ACKs take (-1 none; only with uplink_aqm)
    then: tuple = ()  # per flow: the flow that starts when this one's file has arrived (-1: none; default: none)
    think: float = 0.0  # s, mean exponential think time before a ``then`` flow starts (0: at once)
    udp: tuple = ()  # open-loop sources (:class:`Udp`), sharing the bottleneck queues with the TCP flows
    tfrc: tuple = ()  # TFRC / gTFRC flows (:class:`Tfrc`)
    header: int = HEADER  # bytes of a TCP segment's headers on the wire (an ACK's size without SACK)
    sharing: str = "drr"  # how the classes of one priority level share: "drr" or "scfq"
    handshake: bool = False  # a connection opens with SYN / SYN-ACK, then the client's request (dumbbell docstring)
    request: int = 300  # bytes of the HTTP request (payload; on the wire with ``header`` bytes more)
    syn_rto: float = 1.0  # s, the initial RTO of the SYN and the request (RFC 6298 2.1), doubled at each timeout
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
