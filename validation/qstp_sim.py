"""Packet-level simulator of Jourjon, Lochin & Senac's (2008) test bed: one studied flow (TCP, TFRC or gTFRC) against a TCP aggregate.

Topology (Jourjon et al. 2008, section 5.1 and Fig. 3): the studied flow (A -> B) and an
aggregate of ``n_tcp`` greedy TCP flows (C -> D) share one bottleneck of ``capacity`` bit/s
(1000 kbit/s); an optional UDP constant-bit-rate source (section 5.4) joins the aggregate's side.

Two bottleneck disciplines:

* ``scheduler="rio"`` (sections 5.2-5.3): at the edge each of the two aggregates has its own
  two-colour token-bucket marker (depth 10^4 bytes, rate = the aggregate's target): a packet
  finding at least its size in tokens is IN (colour 0, green) and takes them, otherwise it is OUT
  (colour 2, red; the kernel of :mod:`qosbound.validation.markers`). The core queue is RIO with
  (min_out, max_out, p_out, min_in, max_in, p_in) = (10, 20, 0.1, 20, 40, 0.02) packets, EWMA
  weight 2^-9, a 50-packet buffer; IN packets read the average of IN packets, OUT packets the
  average of all packets (the drop kernels of :mod:`qosbound.validation.droppers`); each drop is
  an independent Bernoulli draw with RED's probability (no inter-drop spacing), and a full buffer
  drops.
* ``scheduler="cbq"`` (section 5.4, Fig. 7): class-based queueing in borrow mode, as two classes
  sharing the link by weight: the studied flow's class is guaranteed ``cbq_share`` of the capacity
  (300 kbit/s in the paper), every other packet (the TCP aggregate, the UDP source) is in the
  other class. Each class is a drop-tail FIFO of ``buffer`` packets; the link serves the class
  whose head packet has the smallest self-clocked fair-queueing finish tag (Golestani's SCFQ: tag
  = max(the tag in service, the class's last tag) + size / (share x capacity)), so a backlogged
  class gets at least its share and an idle class's share goes to the other (borrowing; the
  link is never idle while a packet waits). Markers are not used.

The ends:

* TCP (the aggregate, and the studied flow with ``protocol="tcp"``): the kernels of
  :mod:`qosbound.validation.tcp` -- NewReno with RFC 6675 SACK loss recovery, slow start from
  ``init_cwnd``, RFC 6298 RTO with exponential backoff (at least ``min_rto``), a receiver with
  delayed ACKs (every second segment or ``delack`` seconds) carrying up to 4 SACK blocks. Every
  segment is ``size`` bytes on the wire (payload ``size - 40``); ACKs (40 bytes plus the SACK
  option) come back over a reverse link of the same capacity (a FIFO that serialises them; its
  load is a few per cent, so it never drops).
* TFRC / gTFRC: :mod:`qosbound.validation.tfrc_sender` (RFC 5348; gTFRC's floor at g). Its feedback
  takes the reverse-path delay and is never lost.
* UDP: constant bit rate, ``size``-byte packets, the rate piecewise constant in time
  (``udp=((t0, rate0), (t1, rate1), ...)``, bit/s from each t_k on; rate 0 pauses it).

Delays: every flow has the same minimum RTT ``rtt`` (30 ms): the propagation delay is ``rtt``
minus one packet's transmission time at the bottleneck, split 1/4 sender -> bottleneck, 1/4
bottleneck -> receiver, 1/2 back (a TCP ACK adds its own transmission time on the reverse link).
Flows start at independent uniform times in [0, 1 s).

Measured over [warmup, duration] (network level, as the paper's Fig. 4-7): the studied flow's
throughput at the receiver (bits of every packet delivered, retransmissions included), the
aggregate's, the loss event rate and RTT of the studied flow (TCP: fast recoveries and timeouts
per segment sent, and the mean smoothed RTT), the equation's prediction at those p and R (TFRC:
X_calc; gTFRC: max(X_calc, g); TCP: Padhye et al. with b = 2 for delayed ACKs), and the
studied flow's jitter: the mean absolute difference of consecutive packets' one-way delays
(sender to receiver; RFC 3393's IP delay variation), with its per-second throughput sent and
received over the whole run.

The event loop is plain Python (heapq) and calls the numba TCP kernels; a 60-second run of 21 flows
at 1000 kbit/s takes about a second (``benchmarks/bench_tfrc.py``). The random generator is passed in.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from qosbound.validation import tcp as T
from qosbound.validation.droppers import RIO, colour_drop_prob, ewma_idle, update_averages
from qosbound.validation.markers import TWO_COLOUR, mark, new_state
from qosbound.validation.tfrc_sender import TfrcReceiver, TfrcSender

__all__ = ["QstpConfig", "TokenBucket", "RunStats", "simulate", "replicate", "jitter", "PROTOCOLS", "TCP_HEADER"]

PROTOCOLS = ("tcp", "tfrc", "gtfrc")
TCP_HEADER = 40  # IPv4 20 + TCP 20 bytes: a segment carries size - 40 bytes of payload; an ACK is 40 bytes + SACK


@dataclass(frozen=True)
class QstpConfig:
    """One experiment. Rates in bit/s, sizes in bytes, times in seconds."""

    protocol: str = "gtfrc"  # "tcp", "tfrc" or "gtfrc" for the studied flow
    target: float = 400e3  # g: the studied flow's target (its marker's rate), bit/s
    aggregate_target: float = 400e3  # the TCP aggregate's marker rate, bit/s
    n_tcp: int = 10
    capacity: float = 1000e3
    rtt: float = 0.030
    size: float = 1500.0  # bytes, section 5.1
    bucket: float = 1e4  # token-bucket depth, bytes
    rio: tuple = (10, 20, 0.1, 20, 40, 0.02)  # (min_out, max_out, p_out, min_in, max_in, p_in), packets
    weight: float = 2.0**-9  # EWMA weight
    buffer: int = 50  # packets (per class with cbq)
    duration: float = 60.0
    warmup: float = 15.0
    scheduler: str = "rio"  # "rio" (one RIO queue) or "cbq" (two classes, section 5.4)
    cbq_share: float = 0.3  # cbq: the studied flow's class's guaranteed share of the capacity
    udp: tuple = ()  # ((t0, rate0), ...): a UDP CBR source in the aggregate's class, bit/s from t_k on
    init_cwnd: float = 2.0  # TCP initial window, segments (Linux of 2008: RFC 3390 gives 2-3 at 1460 B)
    min_rto: float = 0.2  # s (Linux)
    delack: float = 0.2  # s (RFC 1122's bound; Linux's delayed-ACK timer is 40-200 ms)
    rwnd: int = 64  # segments (the receiver's window: 96 kB)

    def __post_init__(self):
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol is one of {', '.join(PROTOCOLS)}")
        if self.n_tcp < 0 or self.capacity <= 0 or self.rtt <= 0 or self.size <= TCP_HEADER or self.bucket < self.size:
            raise ValueError("invalid QSTP configuration")
        if not 0 <= self.warmup < self.duration:
            raise ValueError("warmup must lie in [0, duration)")
        mo, xo, po, mi, xi, pi = self.rio
        if not (0 <= mo < xo and 0 <= mi < xi and 0 <= po <= 1 and 0 <= pi <= 1):
            raise ValueError("RIO thresholds need min < max and probabilities in [0, 1]")
        if self.rtt <= self.size * 8 / self.capacity:
            raise ValueError("the RTT must exceed one packet's transmission time")
        if self.scheduler not in ("rio", "cbq"):
            raise ValueError("scheduler is 'rio' or 'cbq'")
        if not 0 < self.cbq_share < 1:
            raise ValueError("cbq_share lies in (0, 1)")
        if any(r < 0 or t < 0 for t, r in self.udp) or list(self.udp) != sorted(self.udp):
            raise ValueError("udp: (time, rate) pairs in increasing time, non-negative rates")
        if self.init_cwnd < 1 or self.min_rto <= 0 or self.delack <= 0 or self.rwnd < 2:
            raise ValueError("TCP: init_cwnd >= 1, positive min_rto and delack, rwnd >= 2")


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
    aggregate: float  # TCP aggregate (and the UDP source), bit/s
    loss_event_rate: float  # studied flow: loss events per packet sent
    loss_rate: float  # studied flow: packets lost per packet sent
    rtt: float  # studied flow: mean smoothed RTT estimate, s
    predicted: float  # the equation at the simulated p and R in bit/s (see the module docstring); nan if no loss
    in_fraction: float  # studied flow: share of its packets marked IN
    packets: int  # packets the studied flow sent in the window
    windows: np.ndarray = None  # studied flow's throughput in each whole 1-s window after warmup, bit/s
    extra: dict = field(default_factory=dict)


class _Tcp:
    """One TCP connection: its row ``k`` in the kernels' arrays, its flow id and its aggregate."""

    __slots__ = ("fid", "agg", "k")

    def __init__(self, fid, agg, k):
        self.fid, self.agg, self.k = fid, agg, k


class _Udp:
    __slots__ = ("fid", "agg", "seq")

    def __init__(self, fid, agg):
        self.fid, self.agg, self.seq = fid, agg, 0


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
        self.cbq = cfg.scheduler == "cbq"
        self.queues = ([], []) if self.cbq else ([],)
        self.qheads = [0, 0]
        self.share = (cfg.cbq_share, 1.0 - cfg.cbq_share)
        self.last_tag = [0.0, 0.0]
        self.vtime = 0.0
        self.in_service = None
        self.idle_since = 0.0
        self.rev_free = 0.0
        self.markers = {}
        self.delivered: dict[int, float] = {}
        self.sent: dict[int, int] = {}
        self.sent_in: dict[int, int] = {}
        self.dropped: dict[int, int] = {}
        self.trace = None
        nsec = int(math.ceil(cfg.duration)) + 1
        self.per_second = np.zeros(nsec)  # studied flow, bytes received per 1-s window
        self.sent_per_second = np.zeros(nsec)  # studied flow, bytes sent per 1-s window
        self.delays: list = []  # studied flow: (arrival time at the receiver, one-way delay)
        self.tcp = None  # kernels' arrays, set by simulate

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
        if fid == 0:
            k = int(self.now)
            if k < len(self.sent_per_second):
                self.sent_per_second[k] += self.cfg.size
        self.at(self.now + self.d_in, self._arrive, (flow, seq, epoch, self.now, colour))

    # -- core: the bottleneck's queue(s) and link ------------------------------------------------
    def _waiting(self, c):
        return len(self.queues[c]) - self.qheads[c]

    def _arrive(self, pkt):
        flow, seq, epoch, t_send, colour = pkt
        if self.trace is not None:
            pkt = pkt + (len(self.trace["arrival"]),)
            tr = self.trace
            tr["fid"].append(flow.fid)
            tr["colour"].append(colour)
            tr["arrival"].append(self.now)
            tr["departure"].append(math.nan)
        busy = self.in_service is not None
        if self.cbq:
            c = 0 if flow.fid == 0 else 1
            drop = self._waiting(c) >= self.cfg.buffer
        else:
            c = 0
            qlen = self._waiting(0) + busy
            if qlen == 0:
                m = (self.now - self.idle_since) / self.tx
                for k in range(3):
                    self.avgs[k] = ewma_idle(self.avgs[k], self.cfg.weight, m)
            update_averages(self.avgs, self.qcol, self.cfg.weight)
            pd = colour_drop_prob(self.avgs, colour, self.min_th, self.max_th, self.max_p, RIO, False)
            drop = qlen >= self.cfg.buffer or (pd > 0.0 and self.rng.random() < pd)
        if drop:
            self.dropped[flow.fid] = self.dropped.get(flow.fid, 0) + 1
            if self.trace is not None:
                self.trace["dropped"].add(pkt[5])
            return
        if self.cbq:
            # SCFQ finish tag: the class's share of the link is its weight
            tag = max(self.vtime, self.last_tag[c]) + self.tx / self.share[c]
            self.last_tag[c] = tag
            pkt = (tag, pkt)
        self.queues[c].append(pkt)
        self.qcol[colour] += 1
        if not busy:
            self._start_service()

    def _pop(self, c):
        q = self.queues[c]
        pkt = q[self.qheads[c]]
        self.qheads[c] += 1
        if self.qheads[c] > 4096:
            del q[: self.qheads[c]]
            self.qheads[c] = 0
        return pkt

    def _start_service(self):
        if self.cbq:
            heads = [self.queues[c][self.qheads[c]][0] if self._waiting(c) else math.inf for c in (0, 1)]
            c = 0 if heads[0] <= heads[1] else 1
            tag, pkt = self._pop(c)
            self.vtime = tag
        else:
            pkt = self._pop(0)
        self.in_service = pkt
        self.at(self.now + self.tx, self._depart, None)

    def _depart(self, _):
        pkt = self.in_service
        self.in_service = None
        flow, seq, epoch, t_send, colour = pkt[:5]
        if self.trace is not None:
            self.trace["departure"][pkt[5]] = self.now
        self.qcol[colour] -= 1
        fid = flow.fid
        size = self.cfg.size
        self.delivered[fid] = self.delivered.get(fid, 0.0) + size
        if fid == 0:
            k = int(self.now)
            if k < len(self.per_second):
                self.per_second[k] += size
            self.delays.append((self.now + self.d_out, self.now + self.d_out - t_send))
        if isinstance(flow, _Tcp):
            self.at(self.now + self.d_out, self._tcp_data, (flow, seq))
        elif not isinstance(flow, _Udp):
            self.at(self.now + self.d_out, flow.receiver.on_packet_tuple, (seq, t_send, size))
        if any(self._waiting(c) for c in range(len(self.queues))):
            self._start_service()
        else:
            self.idle_since = self.now

    # -- TCP ends (kernels of qosbound.validation.tcp) --------------------------------------------
    def _tcp_emit(self, flow):
        S, SB, TS, RB, cand, out, sack = self.tcp
        k = flow.k
        n = T.send_batch(S, SB, TS, k, self.now, cand, out)
        for j in range(n):
            self.transmit(flow, int(out[j]), 0)
        d = T.timer_to_arm(S, k)
        if d < math.inf:
            self.at(d, self._tcp_timer, (flow, d))

    def _tcp_start(self, flow):
        self._tcp_emit(flow)

    def _tcp_timer(self, arg):
        flow, t = arg
        S, SB, TS, RB, cand, out, sack = self.tcp
        k = flow.k
        due = T.on_timer(S, k, t)  # the event fires at its time: t == self.now
        if due == 1:
            d = S[k, T.ARMED]
            self.at(d, self._tcp_timer, (flow, d))
        if due != 2:
            return
        T.on_timeout(S, SB, k, self.now, cand)
        self._tcp_emit(flow)

    def _tcp_data(self, arg):
        flow, seq = arg
        S, SB, TS, RB, cand, out, sack = self.tcp
        k = flow.k
        ack_now, _ = T.on_data(S, RB, k, seq)
        if ack_now:
            self._tcp_ack(flow, seq)
        else:
            gen = T.delack_start(S, k)
            if gen >= 0:
                self.at(self.now + self.cfg.delack, self._tcp_delack, (flow, gen))

    def _tcp_delack(self, arg):
        flow, gen = arg
        S = self.tcp[0]
        if T.delack_due(S, flow.k, gen):
            self._tcp_ack(flow, -1)

    def _tcp_ack(self, flow, trigger):
        """The receiver acknowledges now: cumulative ACK and SACK blocks over the reverse link."""
        S, SB, TS, RB, cand, out, sack = self.tcp
        k = flow.k
        T.ack_sent(S, k)
        blocks = np.zeros(8, np.int64)
        nb = int(T.build_sack(S, RB, k, trigger, blocks, 4))
        size = TCP_HEADER + (8 * nb + 4 if nb else 0)
        dep = max(self.now, self.rev_free) + 8.0 * size / self.cfg.capacity
        self.rev_free = dep
        self.at(dep + self.d_back, self._tcp_on_ack, (flow, int(S[k, T.RNXT]), blocks, nb))

    def _tcp_on_ack(self, arg):
        flow, ack, blocks, nb = arg
        S, SB, TS, RB, cand, out, sack = self.tcp
        T.on_ack(S, SB, TS, flow.k, self.now, ack, blocks, nb, cand)
        self._tcp_emit(flow)

    # -- UDP constant-bit-rate source --------------------------------------------------------------
    def _udp_send(self, flow):
        rate = 0.0
        nxt = math.inf
        for t, r in self.cfg.udp:
            if t <= self.now + 1e-12:
                rate = r
            elif nxt == math.inf:
                nxt = t
        if rate > 0:
            self.transmit(flow, flow.seq, 0)
            flow.seq += 1
            self.at(min(self.now + 8.0 * self.cfg.size / rate, nxt), self._udp_send, flow)
        elif nxt < math.inf:
            self.at(nxt, self._udp_send, flow)


def _tcp_state(cfg: QstpConfig, n: int):
    W = 1 << int(math.ceil(math.log2(2 * cfg.rwnd + 2)))
    S, SB, TS, RB = T.new_state(n, W, init_cwnd=cfg.init_cwnd, rwnd=cfg.rwnd, min_rto=cfg.min_rto,
                                files=np.full(n, -1.0), base_rtt=np.full(n, cfg.rtt),
                                window=(cfg.warmup, cfg.duration))
    return S, SB, TS, RB, np.zeros(W, np.int64), np.zeros(W, np.int64), np.zeros(8, np.int64)


def simulate(cfg: QstpConfig, rng: np.random.Generator, trace: bool = False) -> RunStats:
    """One run of the test bed; returns the studied flow's and the aggregate's measured figures.

    With ``trace=True``, ``extra["trace"]`` holds every packet seen at the bottleneck as a
    pyarrow Table in the schema of :mod:`qosbound.validation.trace` (flow "flow0" is the studied
    flow, "tcp<i>" the aggregate's flows, "udp" the UDP source; class "AF1"; colour 0 IN, 2 OUT;
    departure = last bit on the bottleneck).
    """
    from qosbound.analytic.tfrc import tfrc_rate

    net = _Net(cfg, rng)
    if trace:
        net.trace = {"fid": [], "colour": [], "arrival": [], "departure": [], "dropped": set()}
    net.markers = {0: TokenBucket(cfg.target / 8.0, cfg.bucket),
                   1: TokenBucket(cfg.aggregate_target / 8.0, cfg.bucket)}
    starts = rng.uniform(0.0, 1.0, size=cfg.n_tcp + 1)
    studied_tcp = cfg.protocol == "tcp"
    net.tcp = _tcp_state(cfg, cfg.n_tcp + 1)  # row 0: the studied flow when it is TCP
    g = cfg.target / 8.0 if cfg.protocol == "gtfrc" else None
    receiver = None
    if studied_tcp:
        studied = _Tcp(0, 0, 0)
        net.at(float(starts[0]), net._tcp_start, studied)
    else:
        studied = TfrcSender(net, 0, cfg.size, float(starts[0]), target=g)
        studied.agg = 0
        receiver = TfrcReceiver(net, studied, net.d_back, cfg.rtt)
        receiver.on_packet_tuple = lambda a: receiver.on_packet(*a)
        studied.receiver = receiver
    for i in range(cfg.n_tcp):
        net.at(float(starts[i + 1]), net._tcp_start, _Tcp(i + 1, 1, i + 1))
    if cfg.udp:
        net.at(cfg.udp[0][0], net._udp_send, _Udp(cfg.n_tcp + 1, 1))
    S = net.tcp[0]
    snap = {}

    def take(_):
        snap["delivered"] = dict(net.delivered)
        snap["sent"] = net.sent.get(0, 0)
        snap["sent_in"] = net.sent_in.get(0, 0)
        snap["dropped"] = net.dropped.get(0, 0)
        snap["tcp"] = S[:, [T.N_FR, T.N_RTO, T.N_SENT]].copy()
        if receiver is not None:
            snap["events"], snap["lost"], snap["recv"] = receiver.loss_events, receiver.lost, receiver.received

    net.at(cfg.warmup, take, None)
    srtt = []
    if studied_tcp:
        def sample_srtt(_):
            if net.now >= cfg.warmup:
                srtt.append(S[0, T.SRTT])
            net.at(net.now + 0.1, sample_srtt, None)

        net.at(cfg.warmup, sample_srtt, None)
    net.run(cfg.duration)
    span = cfg.duration - cfg.warmup
    d0 = snap.get("delivered", {})
    thr = 8.0 * (net.delivered.get(0, 0.0) - d0.get(0, 0.0)) / span
    agg = 8.0 * sum(v - d0.get(f, 0.0) for f, v in net.delivered.items() if f != 0) / span
    packets = net.sent.get(0, 0) - snap.get("sent", 0)
    tcp_delta = S[:, [T.N_FR, T.N_RTO, T.N_SENT]] - snap["tcp"]
    if studied_tcp:
        fr, rto, sent = tcp_delta[0]
        p_ev = (fr + rto) / sent if sent > 0 else 0.0
        p_loss = (net.dropped.get(0, 0) - snap.get("dropped", 0)) / packets if packets else 0.0
        R = float(np.mean(srtt)) if srtt else cfg.rtt
        pred = 8.0 * float(tfrc_rate(cfg.size, R, p_ev, 2.0)) if p_ev > 0 else math.nan
    else:
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
    agg_rows = slice(1, None)
    d = np.array(net.delays) if net.delays else np.zeros((0, 2))
    extra = {"tcp_timeouts": int(tcp_delta[agg_rows, 1].sum()), "tcp_fast_recoveries": int(tcp_delta[agg_rows, 0].sum()),
             "tcp_timeouts_run": int(S[agg_rows, T.N_RTO].sum()),
             "tcp_fast_recoveries_run": int(S[agg_rows, T.N_FR].sum()),
             "tcp_retransmitted_run": int(S[agg_rows, T.N_RETX].sum()),
             "drops_studied": net.dropped.get(0, 0),
             "received_per_second": 8.0 * net.per_second[:int(math.floor(cfg.duration))],
             "sent_per_second": 8.0 * net.sent_per_second[:int(math.floor(cfg.duration))],
             "delays": d,
             "jitter": jitter(d, cfg.warmup, cfg.duration)}
    if studied_tcp:
        extra.update(studied_fast_recoveries=int(tcp_delta[0, 0]), studied_timeouts=int(tcp_delta[0, 1]))
    if trace:
        extra["trace"] = _trace_table(net.trace, cfg.size, cfg.n_tcp)
    return RunStats(thr, agg, p_ev, p_loss, R, pred, in_frac, packets, w, extra)


def jitter(delays: np.ndarray, t0: float, t1: float) -> float:
    """Mean |d_i - d_(i-1)| of consecutive packets' one-way delays (RFC 3393 IPDV), s, over packets arriving
    in [t0, t1]; ``delays`` rows are (arrival time, delay). nan with fewer than two packets."""
    sel = delays[(delays[:, 0] >= t0) & (delays[:, 0] <= t1), 1] if len(delays) else delays
    return float(np.mean(np.abs(np.diff(sel)))) if len(sel) >= 2 else math.nan


def _trace_table(tr: dict, size: float, n_tcp: int):
    from qosbound.validation.trace import make_table

    n = len(tr["arrival"])
    dropped = np.zeros(n, dtype=bool)
    if tr["dropped"]:
        dropped[np.fromiter(tr["dropped"], dtype=np.int64)] = True
    fid = np.asarray(tr["fid"], dtype=np.int64)
    names = np.where(fid == 0, "flow0", np.where(fid > n_tcp, "udp", np.char.add("tcp", fid.astype(str))))
    return make_table(flow=names, cls="AF1", size=np.full(n, int(size)), arrival=tr["arrival"],
                      departure=np.asarray(tr["departure"], dtype=float), dropped=dropped,
                      colour=np.asarray(tr["colour"], dtype=np.int8))


def replicate(cfg: QstpConfig, replications: int, seed: int, stream: tuple[int, ...] = ()) -> list[RunStats]:
    """Independent replications: generator streams spawned from one seed (and an optional stream key, e.g. the
    flow's index) by :func:`qosbound.validation.stats.replication_rngs`."""
    from qosbound.validation.stats import replication_rngs

    return [simulate(cfg, rng) for rng in replication_rngs(seed, replications, stream)]
