"""Packet-level simulator of Jourjon, Lochin & Senac's (2008) DiffServ/AF testbed: one TFRC or gTFRC flow against a TCP aggregate.

Topology (Jourjon et al. 2008, section 5.1 and Fig. 3): the studied flow (A -> B) and an
aggregate of ``n_tcp`` greedy TCP flows (C -> D) share one bottleneck of
``capacity`` bit/s (1000 kbit/s). At the edge each of the two aggregates has its
own two-colour token-bucket marker (depth 10^4 bytes, rate = the aggregate's
target): a packet finding at least its size in tokens is IN (colour 0, green)
and takes them, otherwise it is OUT (colour 2, red; the kernel of
:mod:`qosbound.validation.markers`). The core queue is RIO with
(min_out, max_out, p_out, min_in, max_in, p_in) = (10, 20, 0.1, 20, 40, 0.02)
packets, EWMA weight 2^-9, a 50-packet buffer; IN packets read the average of IN
packets, OUT packets the average of all packets (the drop kernels of
:mod:`qosbound.validation.droppers`); each drop is an independent Bernoulli draw
with RED's probability (no inter-drop spacing), and a full buffer drops.

Delays: every flow has the same minimum RTT ``rtt`` (30 ms): the propagation
delay is ``rtt`` minus one packet's transmission time at the bottleneck, split
1/4 sender -> bottleneck, 1/4 bottleneck -> receiver, 1/2 back. Feedback and
ACKs are never lost. All packets have ``size`` bytes (1500 B by default: "the
packet size is fixed to 1500 bytes", section 5.1). Flows start at independent uniform times in
[0, 1 s). The studied flow's throughput is measured at the receiver over
[warmup, duration]; its loss event rate and RTT over the same window give the
equation's prediction X_calc(s, R, p) beside the measured rate.

The event loop is plain Python (heapq); a 60-second run of 21 flows takes a
fraction of a second. The random generator is passed in.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from qosbound.validation.droppers import RIO, colour_drop_prob, ewma_idle, update_averages
from qosbound.validation.markers import TWO_COLOUR, mark, new_state
from qosbound.validation.tcp_aimd import AimdSender
from qosbound.validation.tfrc_sender import TfrcReceiver, TfrcSender

__all__ = ["QstpConfig", "TokenBucket", "RunStats", "simulate", "replicate"]


@dataclass(frozen=True)
class QstpConfig:
    """One experiment. Rates in bit/s, sizes in bytes, times in seconds."""

    protocol: str = "gtfrc"  # "tfrc" or "gtfrc" for the studied flow
    target: float = 400e3  # g: the studied flow's target (its marker's rate), bit/s
    aggregate_target: float = 400e3  # the TCP aggregate's marker rate, bit/s
    n_tcp: int = 10
    capacity: float = 1000e3
    rtt: float = 0.030
    size: float = 1500.0  # bytes, section 5.1
    bucket: float = 1e4  # token-bucket depth, bytes
    rio: tuple = (10, 20, 0.1, 20, 40, 0.02)  # (min_out, max_out, p_out, min_in, max_in, p_in), packets
    weight: float = 2.0**-9  # EWMA weight
    buffer: int = 50  # packets
    duration: float = 60.0
    warmup: float = 15.0

    def __post_init__(self):
        if self.protocol not in ("tfrc", "gtfrc"):
            raise ValueError("protocol is 'tfrc' or 'gtfrc'")
        if self.n_tcp < 0 or self.capacity <= 0 or self.rtt <= 0 or self.size <= 0 or self.bucket < self.size:
            raise ValueError("invalid QSTP configuration")
        if not 0 <= self.warmup < self.duration:
            raise ValueError("warmup must lie in [0, duration)")
        mo, xo, po, mi, xi, pi = self.rio
        if not (0 <= mo < xo and 0 <= mi < xi and 0 <= po <= 1 and 0 <= pi <= 1):
            raise ValueError("RIO thresholds need min < max and probabilities in [0, 1]")
        if self.rtt <= self.size * 8 / self.capacity:
            raise ValueError("the RTT must exceed one packet's transmission time")


class TokenBucket:
    """Two-colour token-bucket marker: rate in bytes/s, depth in bytes, full at time 0.

    A thin holder of state for the shared kernel :func:`qosbound.validation.markers.mark`
    (two-colour kind): IN packets are green (0), OUT packets red (2).
    """

    def __init__(self, rate: float, depth: float):
        self.state = new_state("two-colour", 8.0 * rate, depth)

    def mark(self, size: float, now: float) -> int:
        """0 (IN) if the bucket holds ``size`` bytes of tokens (and take them), else 2 (OUT)."""
        return mark(self.state, TWO_COLOUR, now, size, 0, False)


@dataclass
class RunStats:
    """What one run measured over [warmup, duration]."""

    throughput: float  # studied flow, bit/s at the receiver
    aggregate: float  # TCP aggregate, bit/s
    loss_event_rate: float  # studied flow: loss events per packet sent
    loss_rate: float  # studied flow: packets lost per packet sent
    rtt: float  # studied flow: mean smoothed RTT estimate, s
    predicted: float  # X_calc(s, rtt, loss_event_rate) in bit/s (gTFRC: max with g); nan if no loss event
    in_fraction: float  # studied flow: share of its packets marked IN
    packets: int  # packets the studied flow sent in the window
    windows: np.ndarray = None  # studied flow's throughput in each whole 1-s window after warmup, bit/s
    extra: dict = field(default_factory=dict)


class _Net:
    def __init__(self, cfg: QstpConfig, rng: np.random.Generator):
        self.cfg = cfg
        self.rng = rng
        self.now = 0.0
        self._heap: list = []
        self._n = 0
        self.tx = cfg.size * 8.0 / cfg.capacity
        prop = cfg.rtt - self.tx
        self.d_in, self.d_out, self.d_back = prop / 4, prop / 4, prop / 2
        mo, xo, po, mi, xi, pi = cfg.rio
        self.min_th = np.array([mi, mo, mo], dtype=float)
        self.max_th = np.array([xi, xo, xo], dtype=float)
        self.max_p = np.array([pi, po, po], dtype=float)
        self.avgs = np.zeros(3)
        self.qcol = np.zeros(3)
        self.queue: list = []
        self.qhead = 0
        self.busy = False
        self.idle_since = 0.0
        self.markers = {}
        self.delivered: dict[int, float] = {}
        self.sent: dict[int, int] = {}
        self.sent_in: dict[int, int] = {}
        self.dropped: dict[int, int] = {}
        self.trace = None
        self.per_second = np.zeros(int(math.ceil(cfg.duration)) + 1)  # studied flow, bytes per 1-s window

    def at(self, t, fn, arg):
        self._n += 1
        heapq.heappush(self._heap, (t, self._n, fn, arg))

    def run(self, until: float):
        heap = self._heap
        while heap:
            t, _, fn, arg = heap[0]
            if t > until:
                break
            heapq.heappop(heap)
            self.now = t
            fn(arg)
        self.now = until

    # -- edge: marking --------------------------------------------------------------------------
    def transmit(self, flow, seq, epoch, t_send=None):
        colour = self.markers[flow.agg].mark(self.cfg.size, self.now)
        fid = flow.fid
        self.sent[fid] = self.sent.get(fid, 0) + 1
        if colour == 0:
            self.sent_in[fid] = self.sent_in.get(fid, 0) + 1
        self.at(self.now + self.d_in, self._arrive, (flow, seq, epoch, t_send, colour))

    # -- core: RIO queue and the bottleneck link ---------------------------------------------------
    def _arrive(self, pkt):
        flow, seq, epoch, t_send, colour = pkt
        if self.trace is not None:
            pkt = pkt + (len(self.trace["arrival"]),)
            tr = self.trace
            tr["fid"].append(flow.fid)
            tr["colour"].append(colour)
            tr["arrival"].append(self.now)
            tr["departure"].append(math.nan)
        qlen = len(self.queue) - self.qhead
        if qlen == 0 and not self.busy:
            m = (self.now - self.idle_since) / self.tx
            for k in range(3):
                self.avgs[k] = ewma_idle(self.avgs[k], self.cfg.weight, m)
        update_averages(self.avgs, self.qcol, self.cfg.weight)
        pd = colour_drop_prob(self.avgs, colour, self.min_th, self.max_th, self.max_p, RIO, False)
        if qlen >= self.cfg.buffer or (pd > 0.0 and self.rng.random() < pd):
            self.dropped[flow.fid] = self.dropped.get(flow.fid, 0) + 1
            if self.trace is not None:
                self.trace["dropped"].add(pkt[5])
            if hasattr(flow, "on_drop"):
                flow.on_drop(seq, epoch)
            return
        self.queue.append(pkt)
        self.qcol[colour] += 1
        if not self.busy:
            self._start_service()

    def _start_service(self):
        self.busy = True
        self.at(self.now + self.tx, self._depart, None)

    def _depart(self, _):
        pkt = self.queue[self.qhead]
        self.qhead += 1
        if self.qhead > 4096:
            del self.queue[: self.qhead]
            self.qhead = 0
        flow, seq, epoch, t_send, colour = pkt[:5]
        if self.trace is not None:
            self.trace["departure"][pkt[5]] = self.now
        self.qcol[colour] -= 1
        fid = flow.fid
        self.delivered[fid] = self.delivered.get(fid, 0.0) + self.cfg.size
        if fid == 0:
            k = int(self.now)
            if k < len(self.per_second):
                self.per_second[k] += self.cfg.size
        if isinstance(flow, AimdSender):
            self.at(self.now + self.d_out + self.d_back, _Ack(flow, seq, epoch), None)
        else:
            self.at(self.now + self.d_out, flow.receiver.on_packet_tuple, (seq, t_send, self.cfg.size))
        if len(self.queue) - self.qhead > 0:
            self._start_service()
        else:
            self.busy = False
            self.idle_since = self.now


class _Ack:
    __slots__ = ("flow", "seq", "epoch")

    def __init__(self, flow, seq, epoch):
        self.flow, self.seq, self.epoch = flow, seq, epoch

    def __call__(self, _):
        self.flow.on_ack(self.seq, self.epoch)


def simulate(cfg: QstpConfig, rng: np.random.Generator, trace: bool = False) -> RunStats:
    """One run of the testbed; returns the studied flow's and the aggregate's measured figures.

    With ``trace=True``, ``extra["trace"]`` holds every packet seen at the bottleneck as a
    pyarrow Table in the schema of :mod:`qosbound.validation.trace` (flow "flow0" is the studied
    flow, "tcp<i>" the aggregate's flows; class "AF1"; colour 0 IN, 2 OUT; departure = last bit
    on the bottleneck).
    """
    from qosbound.analytic.tfrc import tfrc_rate

    net = _Net(cfg, rng)
    if trace:
        net.trace = {"fid": [], "colour": [], "arrival": [], "departure": [], "dropped": set()}
    net.markers = {0: TokenBucket(cfg.target / 8.0, cfg.bucket),
                   1: TokenBucket(cfg.aggregate_target / 8.0, cfg.bucket)}
    starts = rng.uniform(0.0, 1.0, size=cfg.n_tcp + 1)
    g = cfg.target / 8.0 if cfg.protocol == "gtfrc" else None
    studied = TfrcSender(net, 0, cfg.size, float(starts[0]), target=g)
    studied.agg = 0
    receiver = TfrcReceiver(net, studied, net.d_back, cfg.rtt)
    receiver.on_packet_tuple = lambda a: receiver.on_packet(*a)
    studied.receiver = receiver
    tcps = []
    for i in range(cfg.n_tcp):
        f = AimdSender(net, i + 1, cfg.size, float(starts[i + 1]))
        f.agg = 1
        tcps.append(f)
    snap = {}

    def take(_):
        snap["delivered"] = dict(net.delivered)
        snap["sent"] = net.sent.get(0, 0)
        snap["sent_in"] = net.sent_in.get(0, 0)
        snap["events"] = receiver.loss_events
        snap["lost"] = receiver.lost
        snap["recv"] = receiver.received

    net.at(cfg.warmup, take, None)
    net.run(cfg.duration)
    span = cfg.duration - cfg.warmup
    d0 = snap.get("delivered", {})
    thr = 8.0 * (net.delivered.get(0, 0.0) - d0.get(0, 0.0)) / span
    agg = 8.0 * sum(net.delivered.get(i + 1, 0.0) - d0.get(i + 1, 0.0) for i in range(cfg.n_tcp)) / span
    packets = net.sent.get(0, 0) - snap.get("sent", 0)
    seen = (receiver.received - snap.get("recv", 0)) + (receiver.lost - snap.get("lost", 0))
    events = receiver.loss_events - snap.get("events", 0)
    p_ev = events / seen if seen > 0 else 0.0
    p_loss = (receiver.lost - snap.get("lost", 0)) / seen if seen > 0 else 0.0
    rs = [r for (t, r, _, _) in studied.samples if t >= cfg.warmup]
    R = float(np.mean(rs)) if rs else (studied.R or cfg.rtt)
    if p_ev > 0:
        pred = 8.0 * float(tfrc_rate(cfg.size, R, p_ev))
        if g is not None:
            pred = max(pred, cfg.target)
    else:
        pred = math.nan
    in_frac = (net.sent_in.get(0, 0) - snap.get("sent_in", 0)) / packets if packets else 0.0
    w = 8.0 * net.per_second[int(math.ceil(cfg.warmup)):int(math.floor(cfg.duration))]
    extra = {"tcp_timeouts": sum(f.timeouts for f in tcps), "tcp_reductions": sum(f.reductions for f in tcps),
             "drops_studied": net.dropped.get(0, 0)}
    if trace:
        extra["trace"] = _trace_table(net.trace, cfg.size)
    return RunStats(thr, agg, p_ev, p_loss, R, pred, in_frac, packets, w, extra)


def _trace_table(tr: dict, size: float):
    from qosbound.validation.trace import make_table

    n = len(tr["arrival"])
    dropped = np.zeros(n, dtype=bool)
    if tr["dropped"]:
        dropped[np.fromiter(tr["dropped"], dtype=np.int64)] = True
    fid = np.asarray(tr["fid"], dtype=np.int64)
    names = np.where(fid == 0, "flow0", np.char.add("tcp", fid.astype(str)))
    return make_table(flow=names, cls="AF1", size=np.full(n, int(size)), arrival=tr["arrival"],
                      departure=np.asarray(tr["departure"], dtype=float), dropped=dropped,
                      colour=np.asarray(tr["colour"], dtype=np.int8))


def replicate(cfg: QstpConfig, replications: int, seed: int, stream: tuple[int, ...] = ()) -> list[RunStats]:
    """Independent replications: generator streams spawned from one seed (and an optional stream key, e.g. the
    flow's index) by :func:`qosbound.validation.stats.replication_rngs`."""
    from qosbound.validation.stats import replication_rngs

    return [simulate(cfg, rng) for rng in replication_rngs(seed, replications, stream)]
