"""Jourjon, Lochin & Sénac's (2008) QSTP test bed on the dumbbell: one studied flow (TCP, TFRC or gTFRC) against a TCP aggregate.

This module is the experiment's configuration: :class:`QstpConfig` (the paper's section 5.1 and Fig. 3) becomes a
:class:`qosbound.validation.dumbbell.Dumbbell`, which simulates it, and :func:`simulate` reads the figures the
paper plots back from the run. There is no network code here.

Topology: the studied flow (A -> B) and an aggregate of ``n_tcp`` greedy TCP flows (C -> D) share one bottleneck of
``capacity`` bit/s (1000 kbit/s); an optional UDP constant-bit-rate source (section 5.4) joins the aggregate's side.
Every flow has the same minimum RTT ``rtt`` (30 ms): the propagation delay is ``rtt`` minus one packet's
transmission time at the bottleneck, split 1/4 sender -> bottleneck (the dumbbell's access delay), 1/4 bottleneck ->
receiver (its link delay), 1/2 back (link delay plus access delay, on a reverse link of the same capacity that
serialises the ACKs and feedback; its load is a few per cent, so it never drops). Flows start at independent
uniform times in [0, 1 s).

Two bottleneck disciplines:

* ``scheduler="rio"`` (sections 5.2-5.3): at the edge each of the two aggregates has its own two-colour token-bucket
  marker (depth 10^4 bytes, rate = the aggregate's target; the UDP source shares the TCP aggregate's): a packet
  finding at least its size in tokens is IN (colour 0, green) and takes them, otherwise it is OUT (colour 2, red).
  The core queue is RIO with (min_out, max_out, p_out, min_in, max_in, p_in) = (10, 20, 0.1, 20, 40, 0.02)
  packets, EWMA weight 2^-9, a ``buffer`` of 50 packets in the system (the dumbbell's ``limit`` 49 waiting plus
  the one on the wire); IN packets read the average of IN packets, OUT packets the average of all packets, both
  counting the packet on the wire (``uncounted=0``); each drop is an independent Bernoulli draw with RED's
  probability (no inter-drop spacing).
* ``scheduler="cbq"`` (section 5.4, Fig. 7): class-based queueing in borrow mode, as two classes sharing the link by
  weight: the studied flow's class is guaranteed ``cbq_share`` of the capacity (300 kbit/s in the paper), every
  other packet (the TCP aggregate, the UDP source) is in the other class. Each class is a drop-tail FIFO of
  ``buffer`` waiting packets; the link serves the class whose head packet has the smallest self-clocked fair
  queueing finish tag (the dumbbell's ``sharing="scfq"``), so a backlogged class gets at least its share and an
  idle class's share goes to the other (borrowing). Markers do not act on drops here.

The ends: TCP (the aggregate, and the studied flow with ``protocol="tcp"``) is :mod:`qosbound.validation.tcp`
(NewReno with RFC 6675 SACK loss recovery, slow start from ``init_cwnd``, RFC 6298 RTO with backoff, at least
``min_rto`` -- the whole RTO as ns-2 and ns-3 do, or with ``rto_floor="rttvar"`` its variance term as the paper's
Linux end hosts do --, delayed ACKs, 4 SACK blocks); a segment is ``size`` bytes on the wire (40 bytes of IPv4 + TCP header),
an ACK 40 bytes plus the SACK option. TFRC / gTFRC is :mod:`qosbound.validation.tfrc_sender` with the receiver
feedback model (what QSTP implements: the receiver's "Create Feedback" module computes the loss event rate and
reports once per RTT, section 4), its reports 44-byte packets (IPv4 20 + UDP 8 + RFC 5348's 16 bytes) back over
the reverse link. UDP: constant bit rate, ``size``-byte packets, the rate piecewise constant in time
(``udp=((t0, rate0), (t1, rate1), ...)``, bit/s from each t_k on; rate 0 pauses it): one dumbbell CBR source per
piece, each stopping half a packet gap before the next piece starts. Its packets meter through the aggregate's
marker, or with ``udp_colour`` 0 (2) are all IN (OUT): e.g. an in-profile burst the network was not provisioned for.

Measured over [warmup, duration] (network level, as the paper's Figs. 4-7): the studied flow's throughput at the
receiver (wire bytes of every packet delivered, retransmissions included), the aggregate's (TCP and UDP), the loss
event rate and RTT of the studied flow (TCP: fast recoveries and timeouts per segment sent, and the time-average
smoothed RTT; TFRC: the receiver's loss events per packet it accounted for, and the sender's RTT estimate averaged
over its feedbacks), the equation's prediction at those p and R (TFRC: X_calc; gTFRC: max(X_calc, g); TCP:
Padhye et al. with b = 2 for delayed ACKs), and the studied flow's jitter: the mean absolute difference of
consecutive packets' one-way delays (sender to receiver; RFC 3393's IP delay variation), with its per-second
throughput sent and received and its packets dropped at the bottleneck per second (all, and the IN ones; by
arrival time) over the whole run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from qosbound.analytic.tfrc import tfrc_rate
from qosbound.validation.dumbbell import Class, Dumbbell, Marker, Queue, Tfrc, Udp
from qosbound.validation.dumbbell import simulate as run_dumbbell
from qosbound.validation.stats import replication_rngs
from qosbound.validation.trace import make_table

__all__ = ["QstpConfig", "RunStats", "dumbbell", "simulate", "replicate", "jitter", "PROTOCOLS", "TCP_HEADER",
           "FEEDBACK_SIZE"]

PROTOCOLS = ("tcp", "tfrc", "gtfrc")
TCP_HEADER = 40  # IPv4 20 + TCP 20 bytes: a segment carries size - 40 bytes of payload; an ACK is 40 bytes + SACK
FEEDBACK_SIZE = 44  # IPv4 20 + UDP 8 + RFC 5348 section 6.2's four 4-byte fields


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
    udp_colour: int = -1  # -1: the UDP packets meter through the aggregate's marker; 0: all IN, 2: all OUT (unmetered)
    init_cwnd: float = 2.0  # TCP initial window, segments (Linux of 2008: RFC 3390 gives 2-3 at 1460 B)
    min_rto: float = 0.2  # s (Linux)
    delack: float = 0.2  # s (RFC 1122's bound; Linux's delayed-ACK timer is 40-200 ms)
    rwnd: int = 64  # segments (the receiver's window: 96 kB)
    rto_floor: str = "rto"  # "rto": the whole RTO at least min_rto (ns-2, ns-3); "rttvar": srtt + max(min_rto, 4 rttvar) (Linux)

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
        if self.rto_floor not in ("rto", "rttvar"):
            raise ValueError("rto_floor is 'rto' (ns-2, ns-3) or 'rttvar' (Linux)")
        if self.udp_colour not in (-1, 0, 2):
            raise ValueError("udp_colour is -1 (the aggregate's marker), 0 (IN) or 2 (OUT)")
        if self.init_cwnd < 1 or self.min_rto <= 0 or self.delack <= 0 or self.rwnd < 2 or self.buffer < 2:
            raise ValueError("TCP: init_cwnd >= 1, positive min_rto and delack, rwnd >= 2; buffer >= 2")


@dataclass
class RunStats:
    """What one run measured over [warmup, duration]."""

    throughput: float  # studied flow, bit/s at the receiver
    aggregate: float  # TCP aggregate (and the UDP source), bit/s
    loss_event_rate: float  # studied flow: loss events per packet
    loss_rate: float  # studied flow: packets lost per packet sent
    rtt: float  # studied flow: mean RTT estimate, s
    predicted: float  # the equation at the simulated p and R in bit/s (see the module docstring); nan if no loss
    in_fraction: float  # studied flow: share of its packets marked IN
    packets: int  # packets the studied flow sent in the window
    windows: np.ndarray = None  # studied flow's throughput in each whole 1-s window after warmup, bit/s
    extra: dict = field(default_factory=dict)


def _udp_sources(cfg: QstpConfig) -> tuple:
    """The piecewise-constant UDP profile as one CBR source per piece with a positive rate."""
    out = []
    for k, (t0, r) in enumerate(cfg.udp):
        if r <= 0:
            continue
        stop = cfg.udp[k + 1][0] - 4.0 * cfg.size / r if k + 1 < len(cfg.udp) else math.inf
        colour = dict(marker=1) if cfg.udp_colour < 0 else dict(marker=None, colour=cfg.udp_colour)
        out.append(Udp("cbr", float(r), int(cfg.size), cls=1 if cfg.scheduler == "cbq" else 0, start=float(t0),
                       stop=stop, name="udp", **colour))
    return tuple(out)


def dumbbell(cfg: QstpConfig, starts: np.ndarray, trace: bool = False) -> Dumbbell:
    """The test bed as a dumbbell: the studied flow is TCP flow 0 (``protocol="tcp"``) or TFRC flow 0, the
    aggregate the other TCP flows; ``starts`` holds the studied flow's start time, then the aggregate's."""
    tx = cfg.size * 8.0 / cfg.capacity
    prop = cfg.rtt - tx
    studied_tcp = cfg.protocol == "tcp"
    n = cfg.n_tcp + (1 if studied_tcp else 0)
    markers = (Marker("two-colour", cfg.target, cfg.bucket), Marker("two-colour", cfg.aggregate_target, cfg.bucket))
    if cfg.scheduler == "cbq":
        drop_tail = Queue(limit=cfg.buffer, mean_size=cfg.size)
        classes = (Class("studied", drop_tail, weight=cfg.cbq_share), Class("rest", drop_tail, weight=1 - cfg.cbq_share))
        queues = dict(fwd_classes=classes, sharing="scfq")
    else:
        mo, xo, po, mi, xi, pi = cfg.rio
        queues = dict(fwd=Queue(limit=cfg.buffer - 1, mode="rio", min_th=(mi, mo, mo), max_th=(xi, xo, xo),
                                max_p=(pi, po, po), alpha=cfg.weight, uncounted=0, mean_size=cfg.size))
    tfrc = () if studied_tcp else (Tfrc(target=cfg.target if cfg.protocol == "gtfrc" else 0.0, size=int(cfg.size),
                                        feedback="receiver", fb_size=FEEDBACK_SIZE, marker=0, access=prop / 4,
                                        start=float(starts[0]), name="flow0"),)
    tcp_starts = starts if studied_tcp else starts[1:]
    studied = "tcp0" if studied_tcp else "flow0"
    return Dumbbell(n=n, rate=cfg.capacity, rev_rate=cfg.capacity, delay=prop / 4, access=(prop / 4,),
                    mss=int(cfg.size) - TCP_HEADER, header=TCP_HEADER, init_cwnd=cfg.init_cwnd, rwnd=cfg.rwnd,
                    min_rto=cfg.min_rto, delack=cfg.delack, starts=tuple(float(x) for x in tcp_starts),
                    rev=Queue(limit=1000), marker=markers, marker_of=(0,) + (1,) * cfg.n_tcp if studied_tcp else (1,),
                    data_class=(0,) + (1,) * cfg.n_tcp if studied_tcp else (1,), udp=_udp_sources(cfg), tfrc=tfrc,
                    trace=("*",) if trace else (studied, "udp") if cfg.udp else (studied,), duration=cfg.duration,
                    warmup=cfg.warmup, rto_floor=cfg.rto_floor, **queues)


def simulate(cfg: QstpConfig, rng: np.random.Generator, trace: bool = False) -> RunStats:
    """One run of the test bed; returns the studied flow's and the aggregate's measured figures.

    With ``trace=True``, ``extra["trace"]`` holds every data packet seen at the bottleneck as a pyarrow Table in the
    schema of :mod:`qosbound.validation.trace` (flow "flow0" is the studied flow, "tcp<i>" the aggregate's flows,
    "udp" the UDP source; class "AF1"; colour 0 IN, 2 OUT; departure = last bit on the bottleneck).
    """
    starts = rng.uniform(0.0, 1.0, size=cfg.n_tcp + 1)
    net = dumbbell(cfg, starts, trace)
    r = run_dumbbell(net, int(rng.integers(2**63 - 1)))
    span = cfg.duration - cfg.warmup
    studied_tcp = cfg.protocol == "tcp"
    wire = cfg.size / (cfg.size - TCP_HEADER)  # wire bytes per payload byte of a TCP segment
    fl = r.flows
    agg = slice(1, None) if studied_tcp else slice(None)
    name = "tcp0" if studied_tcp else "flow0"
    tr = r.trace
    udp_rx = tr.received[tr.of("udp")]  # the UDP packets delivered in the window, as the TCP segments are counted
    udp_bits = 8.0 * cfg.size * np.count_nonzero((udp_rx >= cfg.warmup) & (udp_rx <= cfg.duration))
    aggregate = float(fl.throughput[agg].sum() * wire + udp_bits / span)
    mine = tr.of(name)
    sent_t, rx_t = tr.sent[mine], tr.received[mine]
    if studied_tcp:
        thr = float(fl.throughput[0] * wire)
        packets = int(fl.window_sent[0])
        p_ev = float((fl.window_recoveries[0] + fl.window_timeouts[0]) / packets) if packets else 0.0
        p_loss = float((fl.drops[0] + fl.random_losses[0]) / packets) if packets else 0.0
        R = float(fl.srtt_mean[0])
        pred = 8.0 * float(tfrc_rate(cfg.size, R, p_ev, 2.0)) if p_ev > 0 else math.nan
        arr = tr.arrival[mine]
        inw = (arr >= cfg.warmup) & (arr <= cfg.duration)
        in_frac = float(np.mean(tr.colour[mine][inw] == 0)) if inw.any() else 0.0
    else:
        ts = r.tfrc[0]
        thr = ts.throughput
        packets = ts.sent
        p_ev = ts.loss_event_rate
        p_loss = (ts.dropped + ts.random_losses) / ts.sent if ts.sent else 0.0
        R = ts.rtt if math.isfinite(ts.rtt) else cfg.rtt
        if p_ev > 0:
            pred = 8.0 * float(tfrc_rate(cfg.size, R, p_ev))
            if cfg.protocol == "gtfrc":
                pred = max(pred, cfg.target)
        else:
            pred = math.nan
        in_frac = ts.in_fraction
    nsec = int(math.floor(cfg.duration))
    got = np.isfinite(rx_t)
    received = 8.0 * cfg.size * np.bincount(rx_t[got].astype(np.int64), minlength=nsec + 1)[:nsec]
    sent = 8.0 * cfg.size * np.bincount(sent_t.astype(np.int64), minlength=nsec + 1)[:nsec]
    delays = np.column_stack([rx_t[got], rx_t[got] - sent_t[got]]) if got.any() else np.zeros((0, 2))
    windows = received[int(math.ceil(cfg.warmup)):nsec]
    arrived = tr.arrival[mine]
    lost = tr.dropped[mine] & np.isfinite(arrived)
    lost_in = lost & (tr.colour[mine] == 0)
    dropped = np.bincount(arrived[lost].astype(np.int64), minlength=nsec + 1)[:nsec]
    dropped_in = np.bincount(arrived[lost_in].astype(np.int64), minlength=nsec + 1)[:nsec]
    extra = {"tcp_timeouts": int(fl.window_timeouts[agg].sum()), "tcp_fast_recoveries": int(fl.window_recoveries[agg].sum()),
             "tcp_timeouts_run": int(fl.timeouts[agg].sum()), "tcp_fast_recoveries_run": int(fl.recoveries[agg].sum()),
             "tcp_retransmitted_run": int(fl.retransmitted[agg].sum()), "tcp_drops": int(fl.drops[agg].sum()),
             "drops_studied": int(tr.dropped[mine].sum()),
             "received_per_second": received, "sent_per_second": sent, "delays": delays,
             "dropped_per_second": dropped, "dropped_in_per_second": dropped_in,
             "jitter": jitter(delays, cfg.warmup, cfg.duration)}
    if studied_tcp:
        extra.update(studied_fast_recoveries=int(fl.window_recoveries[0]), studied_timeouts=int(fl.window_timeouts[0]))
    if trace:
        extra["trace"] = _trace_table(r.trace, studied_tcp)
    return RunStats(thr, aggregate, p_ev, p_loss, R, pred, in_frac, packets, windows, extra)


def jitter(delays: np.ndarray, t0: float, t1: float) -> float:
    """Mean |d_i - d_(i-1)| of consecutive packets' one-way delays (RFC 3393 IPDV), s, over packets arriving
    in [t0, t1]; ``delays`` rows are (arrival time, delay). nan with fewer than two packets."""
    sel = delays[(delays[:, 0] >= t0) & (delays[:, 0] <= t1), 1] if len(delays) else delays
    return float(np.mean(np.abs(np.diff(sel)))) if len(sel) >= 2 else math.nan


def _trace_table(tr, studied_tcp: bool):
    """Every data packet at the bottleneck in arrival order, named as the paper's flows: "flow0" the studied flow,
    "tcp<i>" (i >= 1) the aggregate's, "udp" the UDP source; class "AF1"."""
    seen = np.isfinite(tr.arrival)
    order = np.argsort(tr.arrival[seen], kind="stable")
    src = tr.source[seen][order]
    if studied_tcp:
        names = np.array(["flow0" if s == "tcp0" else s for s in src], dtype=object)
    else:
        names = np.array([f"tcp{int(s[3:]) + 1}" if s.startswith("tcp") else s for s in src], dtype=object)
    return make_table(flow=names, cls="AF1", size=tr.size[seen][order], arrival=tr.arrival[seen][order],
                      departure=tr.departure[seen][order], dropped=tr.dropped[seen][order],
                      colour=tr.colour[seen][order].astype(np.int8))


def replicate(cfg: QstpConfig, replications: int, seed: int, stream: tuple[int, ...] = ()) -> list[RunStats]:
    """Independent replications: generator streams spawned from one seed (and an optional stream key, e.g. the
    flow's index) by :func:`qosbound.validation.stats.replication_rngs`."""
    return [simulate(cfg, rng) for rng in replication_rngs(seed, replications, stream)]
