"""What one run of the dumbbell measured (:class:`RunResult` and its per-flow, per-class, per-source parts), and
how it is read out of the event loop's arrays (:func:`read_out`).

The figures' definitions (the measurement window, goodput against throughput, what a loss event rate counts) are in
:mod:`qosbound.validation.dumbbell`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from qosbound.validation import tcp as T
from qosbound.validation import tfrc_sender as TF
from qosbound.validation.dumbbell_config import Dumbbell
from qosbound.validation.dumbbell_loop import HS_DROPS, HS_EST, HS_RETX, PKT
from qosbound.validation.trace import make_table

__all__ = ["FlowStats", "ClassStats", "UdpStats", "TfrcStats", "PacketTrace", "RunResult", "read_out",
           "packet_trace"]

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
    uplink_drops: np.ndarray = None  # data segments dropped by the full uplink of the flow's node (or its dropper)
    # with ``Dumbbell.uplink_aqm`` (window): per flow and colour (as the node's marker coloured them) the data segments
    # offered to and dropped by the node's uplink, and the ACKs dropped by the uplink of the receiver's node
    uplink_arrivals_by_colour: np.ndarray = None
    uplink_drops_by_colour: np.ndarray = None
    ack_uplink_drops: np.ndarray = None
    srtt_mean: np.ndarray = None  # s, time average of srtt over the window
    window_sent: np.ndarray = None  # segments sent (new and retransmitted) in the window
    window_retransmitted: np.ndarray = None
    window_timeouts: np.ndarray = None
    window_recoveries: np.ndarray = None
    # with ``Dumbbell.handshake`` (whole run): when the SYN-ACK reached the client (s from the flow's start; nan: not
    # established), the SYN and request retransmissions, and the handshake segments dropped (queue or random loss)
    established: np.ndarray = None
    handshake_retransmissions: np.ndarray = None
    handshake_drops: np.ndarray = None


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


def read_out(net: Dumbbell, inputs, layout, returned, wall: float, cpu: float) -> RunResult:
    """The :class:`RunResult` of a finished run: ``inputs`` and ``layout`` as
    :func:`qosbound.validation.dumbbell_arrays.kernel_inputs` built them (the kernel filled ``inputs.out`` and the
    TCP and TFRC state in place), ``returned`` what :func:`qosbound.validation.dumbbell_loop.run` returned,
    ``wall`` and ``cpu`` the seconds it took."""
    packets, events, error, nrec_u, rec = returned
    order, cl, names = layout.order, layout.classes, layout.names
    S = inputs.tcp[0]
    Q = inputs.tfrc[0]
    nt = Q.shape[0]
    st, col_arr, col_drop, cst, udrop, ust, urec, tst, snap, tsnap, started = inputs.out
    win = net.duration - net.warmup
    bits = 8.0 * net.mss / win
    done = S[:, T.DONE_T]
    fs = FlowStats(goodput=st[:, 0] * bits, throughput=st[:, 1] * bits, arrivals=st[:, 2], drops=st[:, 3],
                   random_losses=st[:, 4], ack_sent=st[:, 5], ack_dropped=st[:, 6], ack_delivered=st[:, 7],
                   sent=S[:, T.N_SENT].copy(), retransmitted=S[:, T.N_RETX].copy(), timeouts=S[:, T.N_RTO].copy(),
                   recoveries=S[:, T.N_FR].copy(), cwnd_mean=S[:, T.CW_AREA] / win, cwnd_max=S[:, T.CW_MAX].copy(),
                   srtt=S[:, T.SRTT].copy(), completion=np.where(done >= 0, done - started, np.nan),
                   drops_by_colour=col_drop, arrivals_by_colour=col_arr, uplink_drops=udrop[:, 0].copy(),
                   srtt_mean=S[:, T.RTT_AREA] / win, window_sent=S[:, T.N_SENT] - snap[:, 0],
                   window_retransmitted=S[:, T.N_RETX] - snap[:, 1], window_timeouts=S[:, T.N_RTO] - snap[:, 2],
                   window_recoveries=S[:, T.N_FR] - snap[:, 3])
    if net.uplink_aqm:
        fs.uplink_arrivals_by_colour = udrop[:, 1:4].copy()
        fs.uplink_drops_by_colour = udrop[:, 4:7].copy()
        fs.ack_uplink_drops = udrop[:, 7].copy()
    if net.handshake:
        hs = inputs.tcp[-1]
        fs.established = hs[:, HS_EST] - started
        fs.handshake_retransmissions = hs[:, HS_RETX].copy()
        fs.handshake_drops = hs[:, HS_DROPS].copy()
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
    ts = [_tfrc_stats(Q, tst, tsnap, j, names[1][j], win) for j in range(nt)]
    trace = packet_trace(rec, names, order) if net.trace else None
    return RunResult(fs, int(packets), int(events), wall, win, cs, us, ts, trace, cpu)


def _tfrc_stats(Q, tst, tsnap, j, name, win) -> TfrcStats:
    """TFRC flow ``j``'s figures from its state ``Q`` and the loop's counters (``tst``; ``tsnap`` at the window's
    start)."""
    events_w = Q[j, TF.N_EVENTS] - tsnap[j, 3]
    if Q[j, TF.MODE] == TF.FEEDBACK["receiver"]:
        seen = (Q[j, TF.N_RECV] - tsnap[j, 1]) + (Q[j, TF.N_LOST] - tsnap[j, 2])
    else:
        seen = Q[j, TF.N_SENT] - tsnap[j, 0]
    return TfrcStats(name, int(tst[j, 0]), int(tst[j, 1]), int(tst[j, 8]), int(tst[j, 2]),
                     int(tst[j, 3]), int(tst[j, 4]), float(tst[j, 5]), int(events_w),
                     float(events_w / seen) if seen > 0 else 0.0,
                     float(tst[j, 6] / tst[j, 7]) if tst[j, 7] > 0 else math.nan, int(tst[j, 7]),
                     8.0 * float(Q[j, TF.X]), float(Q[j, TF.P]), win)


def packet_trace(rec, names, order) -> PacketTrace:
    """The packet record as a :class:`PacketTrace` (rows in send order; classes as indices in their direction)."""
    rec = rec[np.argsort(rec[:, 6], kind="stable")]
    cls = np.array([order[int(k)][1] if k >= 0 else -1 for k in rec[:, 3]], np.int64)
    ty, src = rec[:, 0].astype(np.int64), rec[:, 1].astype(np.int64)
    by_type = {PKT["tcp"]: names[0], PKT["tfrc"]: names[1], PKT["udp"]: names[2]}
    source = np.array([by_type[t][s] for t, s in zip(ty, src)], dtype=str) if len(rec) else np.zeros(0, str)
    return PacketTrace(source, rec[:, 2].astype(np.int64), cls, rec[:, 4].astype(np.int64),
                       rec[:, 5].astype(np.int64), rec[:, 6].copy(), rec[:, 7].copy(), rec[:, 8].copy(),
                       rec[:, 9] != 0, rec[:, 10].copy())
