"""The chained network simulator: every port is the port kernel (:func:`qosbound.validation.port_kernels.run_port`)
in feed mode, run once per replication in a feed-forward order of the ports, each fed the packets its upstream
ports sent (their departure, the last bit on the wire, plus the link's propagation delay) and those the flows
starting there generate.

Semantics (the port's, :mod:`qosbound.validation.port_kernels`, at every port; here what the chaining adds):

* **Sources** at a flow's first port, on ``[0, H)`` s: Poisson (exponential gaps from 0), CBR (one packet every
  ``8 E[L] / rate`` s from a phase uniform over one period unless given; ``calls`` copies with independent
  phases), on-off (a CBR clock at the peak rate with a uniform phase, its ticks kept while an alternating
  process of exponential on and off periods, started in its stationary state, is on); sizes drawn per packet
  from the flow's law (exponential: at least 1 B, at most 65535 B). A **saturated** flow is its class's
  saturated traffic at its first port (it must be alone in that class there) until ``H``; the packets that port
  sends go on along its path as any other.
* **Forwarding.** A packet leaving port ``p`` at ``d`` (its last bit on the wire) arrives at the next port of
  its path at ``d + delay_p``; a packet dropped at a port goes no further. Packets arriving at one port at the
  same instant are fed in the order of the flows crossing it (then their own order).
* **End-to-end delay** of a delivered packet: its departure from its last port plus that link's propagation
  delay, less its arrival at its first port. Packets whose first arrival lies in the first ``warmup`` or the last
  ``cooldown`` fraction of ``[0, H)`` are forwarded (they load the ports) but not counted.
* **Replications** are independent: replication ``r`` uses the ``r``-th of ``SeedSequence(seed).spawn(R)``,
  spawned again into one Generator per flow's sources and one per port.
* **Independent sub-networks.** The ports linked by flows fall into connected components (:func:`components`);
  no packet of one reaches another, and each flow and port draws from its own generator, so a component simulated
  alone (``simulate(..., flows=...)``) makes the same draws and gives its flows the same samples as the whole run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numba import njit

from qosbound.errors import ScenarioError
from qosbound.validation.port_kernels import N_CS, N_G, run_port
from qosbound.validation.port_sim import PortConfig
from qosbound.validation.stats import seed_sequences, spawned_generators

__all__ = ["SourceSpec", "FlowSpec", "NetworkConfig", "FlowSample", "simulate", "join", "components", "generate",
           "sorted_stream", "POISSON", "CBR", "ON_OFF", "SATURATED"]

POISSON, CBR, ON_OFF, SATURATED = 0, 1, 2, 3
_EMPTY_I = np.zeros(0, np.int64)
_EMPTY_F = np.zeros(0, np.float64)


@dataclass(frozen=True)
class SourceSpec:
    """One stream of a flow: ``kind``, ``rate`` (bit/s per copy; the mean for on-off), ``count`` copies, sizes
    (bytes) with their probabilities or ``exponential`` of mean ``sizes[0]``, ``phase`` (s; None: random),
    ``on``/``off`` mean periods (s)."""

    kind: int
    rate: float
    sizes: tuple
    probs: tuple
    exponential: bool = False
    count: int = 1
    phase: float | None = None
    on: float = 0.0
    off: float = 0.0

    @cached_property
    def mean(self) -> float:
        return self.sizes[0] if self.exponential else float(np.dot(self.sizes, self.probs))

    @cached_property
    def law(self) -> tuple[np.ndarray, np.ndarray]:
        """The sizes (B) and their cumulative probabilities, normalised as ``Generator.choice`` normalises them
        (the probabilities divided by their sum, cumulated, divided by the last cumulated value)."""
        p = np.asarray(self.probs, float) / np.sum(self.probs)
        cdf = p.cumsum()
        cdf /= cdf[-1]
        return np.asarray(self.sizes, float), cdf


@dataclass(frozen=True)
class FlowSpec:
    """A flow: its hops as (port index, class index, precedence index) and its sources at the first hop."""

    ports: tuple
    classes: tuple
    precs: tuple
    sources: tuple
    saturated: bool = False


@dataclass
class NetworkConfig:
    """Ports in a feed-forward order (each a :class:`PortConfig`, a saturated flow's class saturated at its first
    port), the propagation delay after each (s), and the flows."""

    ports: list
    prop: np.ndarray
    flows: list
    members: list = field(default_factory=list)  # per port: (flow, hop) pairs, filled by check()

    def check(self) -> None:
        P = len(self.ports)
        self.members = [[] for _ in range(P)]
        for k, f in enumerate(self.flows):
            for h, p in enumerate(f.ports):
                if h > 0 and not self.order_ok(f.ports[h - 1], p):
                    raise ScenarioError(f"flow {k}: port {p} comes before port {f.ports[h - 1]} in the order given: "
                                        "the ports must be in a feed-forward order", field="flows")
                self.members[p].append((k, h))

    @staticmethod
    def order_ok(a: int, b: int) -> bool:
        return a < b


@dataclass
class FlowSample:
    """Per replication and flow: the counted packets' end-to-end delays (s, delivered ones), how many were
    counted and lost, the delivered bytes, each hop's largest delay (s), the counted window (s), and how many
    counted packets each hop dropped."""

    delays: list
    sent: np.ndarray
    lost: np.ndarray
    bytes: np.ndarray
    hop_max: np.ndarray  # (R, hops)
    window: float
    hop_lost: np.ndarray | None = None  # (R, hops): counted packets dropped at each hop


def _sizes(rng, s: SourceSpec, n: int) -> np.ndarray:
    if s.exponential:
        return np.clip(rng.exponential(s.sizes[0], n), 1.0, 65535.0)
    if len(s.sizes) == 1:
        return np.full(n, float(s.sizes[0]))
    # rng.choice(sizes, n, p=probs / sum(probs)) without its per-call checks of p: the same draws (one uniform per
    # packet, the first cumulative probability above it; tests/validation/test_network_sim.py checks the identity)
    sizes, cdf = s.law
    return sizes[cdf.searchsorted(rng.random(n), side="right")]


def _clock(rng, period: float, H: float, phase: float | None) -> np.ndarray:
    ph = rng.random() * period if phase is None else phase
    n = int(math.ceil((H - ph) / period)) if ph < H else 0
    return ph + period * np.arange(max(n, 0), dtype=np.float64)


def _one_size(s: SourceSpec) -> bool:
    return not s.exponential and len(s.sizes) == 1


def _clocks_merged(rng, period: float, H: float, phase: float | None, count: int) -> np.ndarray:
    """``count`` clocks of one period on ``[0, H)`` merged in time order, the same times as ``count`` calls of
    :func:`_clock` (the phases drawn in the same order): sorted by phase, the ``j``-th ticks of all the clocks lie
    in ``[j period, (j + 1) period)``, so row ``j`` after row ``j - 1`` is the time order (ties: by clock)."""
    ph = rng.random(count) * period if phase is None else np.full(count, float(phase))
    return _grid(ph[np.argsort(ph, kind="stable")], float(period), float(H))


@njit(cache=True, nogil=True)
def _grid(ph, period, H):
    """The ticks ``ph[i] + j period < H`` of clocks with sorted phases ``ph``, row ``j`` after row ``j - 1`` and
    within a row by clock (:func:`_clocks_merged`)."""
    count = ph.shape[0]
    n = np.zeros(count, np.int64)
    rows = 0
    total = 0
    for i in range(count):
        if ph[i] < H:
            n[i] = np.int64(np.ceil((H - ph[i]) / period))
        rows = max(rows, n[i])
        total += n[i]
    out = np.empty(total)
    o = 0
    for j in range(rows):
        jf = np.float64(j)
        for i in range(count):
            if j < n[i]:
                out[o] = ph[i] + period * jf
                o += 1
    return out


def sorted_stream(s: SourceSpec) -> bool:
    """Whether :func:`generate` returns the stream's times sorted (all but CBR copies of several sizes)."""
    return not (s.kind == CBR and s.count > 1 and not _one_size(s))


def generate(rng, s: SourceSpec, H: float) -> tuple[np.ndarray, np.ndarray]:
    """(arrival times s, sizes B) of one stream (all its copies) on ``[0, H)``; sorted unless
    :func:`sorted_stream` says otherwise (CBR copies of several sizes: unsorted across copies)."""
    pkts = s.rate / (8.0 * s.mean)  # packets/s of one copy
    if s.kind == POISSON:
        out, t0 = [], 0.0
        while True:
            n = int(pkts * (H - t0) + 6.0 * math.sqrt(pkts * (H - t0) + 1.0) + 16)
            t = t0 + np.cumsum(rng.exponential(1.0 / pkts, n))
            out.append(t[t < H])
            if t[-1] >= H:
                break
            t0 = float(t[-1])
        times = np.concatenate(out)
    elif s.kind == CBR and s.count > 1 and _one_size(s):
        times = _clocks_merged(rng, 1.0 / pkts, H, s.phase, s.count)
    elif s.kind == CBR:
        times = np.concatenate([_clock(rng, 1.0 / pkts, H, s.phase) for _ in range(s.count)])
    elif s.kind == ON_OFF:
        peak = pkts * (s.on + s.off) / s.on
        ticks = _clock(rng, 1.0 / peak, H, None)
        on = rng.random() < s.on / (s.on + s.off)
        bounds, t, state = [], 0.0, on
        t = rng.exponential(s.on if state else s.off)
        bounds.append(t)
        while t < H:
            state = not state
            t += rng.exponential(s.on if state else s.off)
            bounds.append(t)
        idx = np.searchsorted(np.asarray(bounds), ticks, side="right")
        keep = (idx % 2 == 0) == on
        times = ticks[keep]
    else:
        raise ScenarioError("a saturated flow has no source times", field="traffic")
    return times, _sizes(rng, s, times.shape[0])


def _source(rng, f: FlowSpec, H: float) -> tuple[np.ndarray, np.ndarray]:
    ts, ss = [], []
    for s in f.sources:
        t, z = generate(rng, s, H)
        ts.append(t)
        ss.append(z)
    if len(ts) == 1 and sorted_stream(f.sources[0]):
        return ts[0], ss[0]
    t = np.concatenate(ts) if ts else _EMPTY_F
    z = np.concatenate(ss) if ss else _EMPTY_F
    o = np.argsort(t, kind="stable")
    return t[o], z[o]


def _trace_rows(buf: dict | None, rows: int) -> tuple:
    """The kernel's six trace arrays for ``rows`` rows (departures NaN, drops False): views of the buffers in
    ``buf``, grown when too small and reused across the ports and replications of a run (fresh memory's page faults
    cost as much as filling it)."""
    if buf is None:
        buf = {}
    if buf.get("rows", -1) < rows:
        size = max(rows, int(1.25 * buf.get("rows", 0)))
        buf.update(rows=size, arrays=(np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size),
                                      np.zeros(size), np.empty(size), np.empty(size, np.bool_)))
    tr = tuple(a[:rows] for a in buf["arrays"])
    tr[4].fill(np.nan)
    tr[5].fill(False)
    return tr


def _port_trace(rng, cfg: PortConfig, t: np.ndarray, cls: np.ndarray, size: np.ndarray, prec: np.ndarray,
                H: float, extra: int, buf: dict | None = None):
    """The port fed the packets (t s sorted; cls, size, prec); ``extra`` rows for its saturated class's packets;
    ``buf`` the run's reusable trace buffers. Returns the kernel's trace arrays (ticks; views of ``buf``, valid
    until the next call) and the number of rows written."""
    tick = cfg.tick
    rows_max = t.shape[0] + extra
    tr = _trace_rows(buf, rows_max)
    m = cfg.classes
    # a fed port keeps no delay statistics: its histograms are never written, so one bin each is enough
    out = (np.zeros((m, N_CS)), np.zeros((m, 3, 2)), np.zeros((m, 1), np.int64), np.zeros((m, 1)), np.zeros((m, 1)),
           np.zeros((m, 0), np.int64), np.zeros(N_G))
    args = list(cfg.args())
    # no sources: the feed is every arrival (src_cls .. src_off are the 13th to 19th arrays)
    args[12:19] = [_EMPTY_I, _EMPTY_I, _EMPTY_F, _EMPTY_I, _EMPTY_F, _EMPTY_F, _EMPTY_F]
    rows = run_port(rng, cfg.Q_t, float(cfg.unit), bool(cfg.per_packet), bool(cfg.incl_ring), 0, 0,
                    np.int64(rows_max), *args, _EMPTY_F, *out, *tr, t / tick, cls, size, prec, H / tick)
    return tr, rows


def _saturated_rows(tr, n: int, rows: int, tick: float) -> tuple:
    """The saturated class's rows (after the ``n`` fed ones) as (admission s, departure s, size B)."""
    return tr[3][n:rows] * tick, tr[4][n:rows] * tick, tr[2][n:rows].copy()


def _run_port(rng, cfg: PortConfig, t: np.ndarray, cls: np.ndarray, size: np.ndarray, prec: np.ndarray,
              H: float, extra: int, buf: dict | None = None):
    """The port fed the packets (t s sorted; cls, size, prec); ``extra`` rows for its saturated class's packets;
    ``buf`` the run's reusable trace buffers. Returns (departures s of the fed packets, NaN when dropped; the
    saturated rows as (arr, dep, size)), arrays of their own."""
    n = t.shape[0]
    tr, rows = _port_trace(rng, cfg, t, cls, size, prec, H, extra, buf)
    dep = np.where(tr[5][:n], np.nan, tr[4][:n] * cfg.tick)
    return dep, _saturated_rows(tr, n, rows, cfg.tick)


@njit(cache=True, nogil=True)
def _gather(order, t, z, off, cls_of, prec_of):
    """The fed packets of one port in the order ``order`` (a permutation of the concatenation ``t`` (s), ``z``
    (B) of its flows' segments, segment ``j`` being ``off[j] .. off[j + 1]`` of class ``cls_of[j]`` and
    precedence ``prec_of[j]``): their times, classes, sizes and precedences."""
    n = t.shape[0]
    seg = np.empty(n, np.int64)
    for j in range(off.shape[0] - 1):
        seg[off[j]:off[j + 1]] = j
    ts = np.empty(n)
    cs = np.empty(n, np.int64)
    zs = np.empty(n)
    ps = np.empty(n, np.int64)
    for o in range(n):
        i = order[o]
        ts[o] = t[i]
        zs[o] = z[i]
        j = seg[i]
        cs[o] = cls_of[j]
        ps[o] = prec_of[j]
    return ts, cs, zs, ps


@njit(cache=True, nogil=True)
def _unmerge(order, tr_dep, tr_drop, tick, prop, t, off, w_lo, w_hi):
    """The port's departures back in concatenation order (s, NaN when dropped), the
    arrivals at the next port (departure + ``prop``), and per segment: its drops and its largest delay over the
    packet range ``w_lo[j] .. w_hi[j]`` (offsets within the segment; -inf when the range is empty or the segment
    lost a packet). ``order``: the arrival order, as for :func:`_gather`."""
    n = order.shape[0]
    dep = np.empty(n)
    nxt = np.empty(n)
    for o in range(n):
        i = order[o]
        if tr_drop[o]:
            dep[i] = np.nan
            nxt[i] = np.nan
        else:
            d = tr_dep[o] * tick
            dep[i] = d
            nxt[i] = d + prop
    S = off.shape[0] - 1
    lost = np.zeros(S, np.int64)
    hmax = np.full(S, -np.inf)
    for j in range(S):
        for i in range(off[j], off[j + 1]):
            if dep[i] != dep[i]:
                lost[j] += 1
        if lost[j] == 0 and w_hi[j] > w_lo[j]:
            m = -np.inf
            first = True
            for i in range(off[j] + w_lo[j], off[j] + w_hi[j]):
                x = dep[i] - t[i]
                if first or x > m:
                    m = x
                    first = False
            hmax[j] = m
    return dep, nxt, lost, hmax


def components(net: NetworkConfig) -> list[list[int]]:
    """The flows of each independent sub-network: connected components of the ports, two ports joined when a flow
    crosses both (each component's flows in index order; components in the order of their first flow)."""
    net.check()
    parent = list(range(len(net.ports)))

    def root(p):
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p
    for f in net.flows:
        for a, b in zip(f.ports, f.ports[1:]):
            parent[root(a)] = root(b)
    groups: dict[int, list[int]] = {}
    for k, f in enumerate(net.flows):
        groups.setdefault(root(f.ports[0]), []).append(k)
    return list(groups.values())


def _closed(net: NetworkConfig, flows) -> set:
    """The ports ``flows`` cross, checked to carry no other flow (a union of :func:`components`)."""
    keep = set(flows)
    ports = {p for k in keep for p in net.flows[k].ports}
    for p in sorted(ports):
        other = [k for k, _ in net.members[p] if k not in keep]
        if other:
            raise ScenarioError(f"flows {sorted(keep)} are not a sub-network of their own: port {p} also carries "
                                f"flow {other[0]}", field="flows")
    return ports


def simulate(net: NetworkConfig, H: float, replications: int, seed: int, warmup: float = 0.05,
             cooldown: float = 0.05, advance=None, only: list[int] | None = None,
             flows: list[int] | None = None) -> tuple[FlowSample, int]:
    """``replications`` runs of ``H`` simulated seconds; per flow its :class:`FlowSample`, and the packet-hops
    simulated (module docstring). ``only``: run just these replications (indices into the ``replications``
    seed sequences of ``seed``), in that order -- each is the same run as in the whole, so parts run apart and
    joined by :func:`join` in index order are the whole run exactly. ``flows``: simulate just these flows and the
    ports they cross, which must carry no other flow (one or more of :func:`components`); their samples are the
    whole run's, the other flows' are empty (nothing counted, no delays)."""
    net.check()
    ports = None if flows is None else _closed(net, flows)
    P = len(net.ports)
    F = len(net.flows)
    lo, hi = warmup * H, (1.0 - cooldown) * H
    seqs = seed_sequences(seed, replications)
    if only is not None:
        seqs = [seqs[i] for i in only]
    R = len(seqs)
    samples = [FlowSample([], np.zeros(R), np.zeros(R), np.zeros(R), np.zeros((R, len(f.ports))), hi - lo,
                          np.zeros((R, len(f.ports))))
               for f in net.flows]
    sat_at = {}
    for k, f in enumerate(net.flows):
        if f.saturated:
            sat_at[(f.ports[0], f.classes[0])] = k
    plans = [None if ports is not None and p not in ports else _PortPlan.of(net, p, sat_at, H) for p in range(P)]
    hops_total = 0
    buf: dict = {}
    for r, seq in enumerate(seqs):
        rngs = spawned_generators(seq, F + P)  # those of seq.spawn(F + P), computed together
        packets = _Packets.drawn(net, rngs, H, lo, hi, flows)
        for p in range(P):
            if ports is not None and p not in ports:
                continue
            hops_total += _pass_port(net, p, packets, rngs[F + p], H, (lo, hi), plans[p], samples, r, buf)
        _tally(net, packets, samples, r, lo, hi)
        if advance is not None:
            advance(1)
    return samples, hops_total


def join(parts: list[list[FlowSample]]) -> list[FlowSample]:
    """The per-flow samples of replications run apart (each part from :func:`simulate` with ``only``), as one
    sample, the parts' replications in the order given."""
    out = []
    for k, first in enumerate(parts[0]):
        each = [p[k] for p in parts]
        out.append(FlowSample([d for s in each for d in s.delays], np.concatenate([s.sent for s in each]),
                              np.concatenate([s.lost for s in each]), np.concatenate([s.bytes for s in each]),
                              np.concatenate([s.hop_max for s in each]), first.window,
                              np.concatenate([s.hop_lost for s in each])))
    return out


@dataclass
class _Packets:
    """One replication's packets per flow: first arrival times, sizes, whether each is still alive, and its
    arrival time at the next port (None for a saturated flow before its first port); whether none is lost yet
    (the arrays then pass between ports as they are, without gathering the live ones), and the counted window as
    an index range (the first arrivals are sorted) or, when they are not sorted, as a mask."""

    t_first: list
    t_cur: list
    size: list
    alive: list
    intact: list
    window: list

    @classmethod
    def drawn(cls, net: NetworkConfig, rngs, H: float, lo: float, hi: float, flows=None) -> _Packets:
        """Every flow's source packets, flow ``k`` drawing from ``rngs[k]`` (``flows`` given: those flows' only,
        the others none)."""
        F = len(net.flows)
        out = cls([None] * F, [None] * F, [None] * F, [None] * F, [True] * F, [None] * F)
        keep = None if flows is None else set(flows)
        for k, f in enumerate(net.flows):
            if keep is not None and k not in keep:  # not simulated: no packets
                out.start(k, _EMPTY_F, _EMPTY_F, np.zeros(0, np.bool_), _EMPTY_F, lo, hi)
                continue
            if not f.saturated:
                t, z = _source(rngs[k], f, H)
                out.start(k, t, z, np.ones(t.shape[0], np.bool_), t, lo, hi)  # t_cur copied before a write
        return out

    def start(self, k: int, t_first, size, alive, t_cur, lo: float, hi: float) -> None:
        """Flow ``k``'s packets from their first arrivals on."""
        self.t_first[k], self.size[k], self.alive[k], self.t_cur[k] = t_first, size, alive, t_cur
        self.intact[k] = bool(alive.all())
        ordered, a, b = _window(t_first, lo, hi)
        self.window[k] = (int(a), int(b)) if ordered else (t_first >= lo) & (t_first < hi)

    def counted(self, k: int) -> np.ndarray:
        """Flow ``k``'s counted packets as a mask."""
        w = self.window[k]
        if isinstance(w, tuple):
            m = np.zeros(self.t_first[k].shape[0], np.bool_)
            m[w[0]:w[1]] = True
            return m
        return w


@dataclass
class _PortPlan:
    """What a port's pass needs that no replication changes: its fed members (flow, hop) in order (a saturated
    flow's first hop left out), their classes and precedences, its saturated flows as (class, flow), the trace
    rows kept for their packets, and each member flow's number of hops."""

    members: list
    cls_of: np.ndarray
    prec_of: np.ndarray
    sat_here: list
    extra: int
    hops: list  # each member flow's number of hops

    @classmethod
    def of(cls, net: NetworkConfig, p: int, sat_at: dict, H: float) -> _PortPlan:
        cfg = net.ports[p]
        members = [(k, h) for k, h in net.members[p] if not (net.flows[k].saturated and h == 0)]
        sat_here = [(c, k) for (pp, c), k in sat_at.items() if pp == p]
        extra = 0
        if sat_here:
            smallest = min(min(s.sizes) if not s.exponential else 1.0 for _, k in sat_here
                           for s in net.flows[k].sources)
            extra = int(H * cfg.C / 8.0 / smallest) + cfg.Q_t + 16
        return cls(members, np.asarray([net.flows[k].classes[h] for k, h in members], np.int64),
                   np.asarray([net.flows[k].precs[h] for k, h in members], np.int64), sat_here, extra,
                   [len(net.flows[k].ports) for k, _ in members])


def _pass_port(net: NetworkConfig, p: int, flows: _Packets, rng, H: float, window: tuple[float, float],
               plan: _PortPlan, samples: list, r: int, buf: dict) -> int:
    """Port ``p`` serves the live packets of its flows in arrival order: each hop's losses and largest delay
    within the window, the survivors' arrival at the next port; a saturated flow's packets start here. Returns
    the packet-hops simulated. A flow that has lost no packet passes its arrays whole (no gathering); the flows'
    packets are put in arrival order (:func:`_gather`) and their departures back (:func:`_unmerge`) in compiled
    loops."""
    lo, hi = window
    cfg = net.ports[p]
    S = len(plan.members)
    ts, zs, idxs = [], [], []
    off = np.zeros(S + 1, np.int64)
    w_lo = np.zeros(S, np.int64)
    w_hi = np.zeros(S, np.int64)
    for j, (k, h) in enumerate(plan.members):
        if flows.intact[k]:
            idx = None
            ts.append(flows.t_cur[k])
            zs.append(flows.size[k])
            w = flows.window[k]
            if isinstance(w, tuple):
                w_lo[j], w_hi[j] = w
        else:
            idx = np.flatnonzero(flows.alive[k])
            ts.append(flows.t_cur[k][idx])
            zs.append(flows.size[k][idx])
        idxs.append(idx)
        off[j + 1] = off[j] + ts[-1].shape[0]
    t = np.concatenate(ts) if ts else _EMPTY_F
    z = np.concatenate(zs) if zs else _EMPTY_F
    order = np.argsort(t, kind="stable")
    t_s, cls, z_s, pr = _gather(order, t, z, off, plan.cls_of, plan.prec_of)
    n = t.shape[0]
    tr, rows = _port_trace(rng, cfg, t_s, cls, z_s, pr, H, plan.extra, buf)
    dep, nxt, lost_of, hmax_of = _unmerge(order, tr[4][:n], tr[5][:n], cfg.tick, float(net.prop[p]), t, off,
                                          w_lo, w_hi)
    sat = _saturated_rows(tr, n, rows, cfg.tick)
    for j, (k, h) in enumerate(plan.members):
        a, b = off[j], off[j + 1]
        idx = idxs[j]
        w = flows.window[k]
        if idx is None and lost_of[j] == 0 and isinstance(w, tuple):  # every packet on: slices, no masks
            if w[1] > w[0]:
                samples[k].hop_max[r, h] = max(samples[k].hop_max[r, h], float(hmax_of[j]))
            # a view of the port's array while the flow goes on; its own array after its last port (so that no
            # port's whole array outlives the replication's other flows)
            flows.t_cur[k] = nxt[a:b] if h + 1 < plan.hops[j] else nxt[a:b].copy()
            continue
        d = dep[a:b]
        arr = t[a:b]
        ok = ~np.isnan(d)
        counted = flows.counted(k) if idx is None else flows.counted(k)[idx]
        samples[k].hop_lost[r, h] += np.count_nonzero(counted & ~ok)
        cnt = counted & ok
        if cnt.any():
            samples[k].hop_max[r, h] = max(samples[k].hop_max[r, h], float(np.max(d[cnt] - arr[cnt])))
        if idx is None:
            idx = np.arange(b - a)
        flows.alive[k][idx[~ok]] = False
        flows.intact[k] = False
        if flows.t_cur[k] is flows.t_first[k]:  # the first arrivals stay as they are
            flows.t_cur[k] = flows.t_cur[k].copy()
        flows.t_cur[k][idx[ok]] = nxt[a:b][ok]
    for c, k in plan.sat_here:  # the saturated flow's packets, from their admission at its first port
        arr, d, zz = sat
        keep = ~np.isnan(d)
        flows.start(k, arr, zz, keep.copy(), np.where(keep, d + net.prop[p], np.nan), lo, hi)
    return n + sat[0].shape[0]


@njit(cache=True, nogil=True)
def _window(t, lo, hi):
    """Whether ``t`` is sorted and, if so, the index range of its times in ``[lo, hi)``."""
    for i in range(1, t.shape[0]):
        if not (t[i] >= t[i - 1]):
            return False, 0, 0
    return True, np.searchsorted(t, lo, "left"), np.searchsorted(t, hi, "left")


def _tally(net: NetworkConfig, flows: _Packets, samples: list, r: int, lo: float, hi: float) -> None:
    """Replication ``r``'s end-to-end counts per flow: packets sent and lost within the window, bytes delivered,
    and the delivered packets' delays (a counted window that is an index range read as slices)."""
    for k in range(len(net.flows)):
        s = samples[k]
        w = flows.window[k]
        if isinstance(w, tuple):
            a, b = w
            s.sent[r] = b - a
            if flows.intact[k]:
                s.lost[r] = 0
                s.bytes[r] = flows.size[k][a:b].sum()
                s.delays.append(flows.t_cur[k][a:b] - flows.t_first[k][a:b])
            else:
                ok = flows.alive[k][a:b]
                s.lost[r] = (b - a) - np.count_nonzero(ok)
                s.bytes[r] = flows.size[k][a:b][ok].sum()
                s.delays.append(flows.t_cur[k][a:b][ok] - flows.t_first[k][a:b][ok])
            continue
        cnt = w
        ok = cnt & flows.alive[k]
        s.sent[r] = cnt.sum()
        s.lost[r] = (cnt & ~flows.alive[k]).sum()
        s.bytes[r] = flows.size[k][ok].sum()
        s.delays.append(flows.t_cur[k][ok] - flows.t_first[k][ok])
