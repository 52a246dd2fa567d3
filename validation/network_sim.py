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
  admits from its class go on along its path as any other.
* **Forwarding.** A packet leaving port ``p`` at ``d`` (its last bit on the wire) arrives at the next port of
  its path at ``d + delay_p``; a packet dropped at a port goes no further. Packets arriving at one port at the
  same instant are fed in the order of the flows crossing it (then their own order).
* **End-to-end delay** of a delivered packet: its departure from its last port plus that link's propagation
  delay, less its arrival at its first port. Packets whose first arrival lies in the first ``warmup`` or the last
  ``cooldown`` fraction of ``[0, H)`` are forwarded (they load the ports) but not counted.
* **Replications** are independent: replication ``r`` uses the ``r``-th of ``SeedSequence(seed).spawn(R)``,
  spawned again into one generator per flow's sources (child ``k`` for flow ``k``) and one per port (child
  ``F + p``), each ``Generator(PCG64(child))`` or its compiled copy (:mod:`qosbound.validation.pcg64`, the same
  draws); every port's meters and policers start each replication with full buckets.
* **Independent sub-networks.** The ports linked by flows fall into connected components (:func:`components`);
  no packet of one reaches another, and each flow and port draws from its own generator, so a component simulated
  alone (``simulate(..., flows=...)``) makes the same draws and gives its flows the same samples as the whole run.

**Implementation.** A replication is three kinds of compiled calls on flat arrays: every flow's sources drawn at once
(:mod:`qosbound.validation.network_sources`), one pass per port and the end-to-end tally
(:mod:`qosbound.validation.network_pass`). :func:`generate` is the same sources in NumPy, stream by stream from a
Generator: the readable statement of what the compiled drawing does (``tests/validation/test_network_sources.py``
holds them equal, bit for bit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

from qosbound.errors import ScenarioError
from qosbound.validation.port_kernels import N_CS, N_G, run_port
from qosbound.validation.port_sim import PortConfig
from qosbound.validation.network_pass import port_pass, tally
from qosbound.validation.network_sources import CBR, ON_OFF, POISSON, SATURATED, draw_flows
from qosbound.validation.stats import seed_sequences, spawned_words

__all__ = ["SourceSpec", "FlowSpec", "NetworkConfig", "FlowSample", "simulate", "join", "components", "generate",
           "sorted_stream", "POISSON", "CBR", "ON_OFF", "SATURATED"]

_EMPTY_I = np.zeros(0, np.int64)
_EMPTY_F = np.zeros(0, np.float64)
_MK_KIND, _PO_KIND = 19, 23  # positions in PortConfig.args() of mk_kind (mk_state follows) and po_kind (po_state)


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
    """A flow's packets (times s, sizes B) in time order: its streams drawn one after another from ``rng``, merged by
    a stable sort unless it has one stream that comes out sorted."""
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
             flows: list[int] | None = None) -> tuple[list[FlowSample], int]:
    """``replications`` runs of ``H`` simulated seconds; per flow its :class:`FlowSample`, and the packet-hops
    simulated (module docstring). ``only``: run just these replications (indices into the ``replications``
    seed sequences of ``seed``), in that order -- each is the same run as in the whole, so parts run apart and
    joined by :func:`join` in index order are the whole run exactly. ``flows``: simulate just these flows and the
    ports they cross, which must carry no other flow (one or more of :func:`components`); their samples are the
    whole run's, the other flows' are empty (nothing counted, no delays).

    A replication is three kinds of compiled calls (:mod:`qosbound.validation.network_sources`,
    :mod:`qosbound.validation.network_pass`): every flow's sources drawn at once, one pass per port, the tally."""
    net.check()
    ports = None if flows is None else _closed(net, flows)
    P = len(net.ports)
    F = len(net.flows)
    lo, hi = warmup * H, (1.0 - cooldown) * H
    seqs = seed_sequences(seed, replications)
    if only is not None:
        seqs = [seqs[i] for i in only]
    R = len(seqs)
    run = _Run.of(net, H, flows, ports)
    sent, lost, nbytes = np.zeros((R, F)), np.zeros((R, F)), np.zeros((R, F))
    hop_max, hop_lost = np.zeros((R, run.hops)), np.zeros((R, run.hops))
    delays: list[list] = [[] for _ in range(F)]
    hops_total = 0
    for r, seq in enumerate(seqs):
        words = spawned_words(seq, F + P)  # flow k's sources draw from child k, port p from child F + p
        run.T, run.Z, run.TC, start, count = draw_flows(words[:F], *run.sources, H, run.reserve, run.T, run.Z, run.TC)
        flat = (start, count, run.T, run.Z, run.TC)
        for p in run.order:
            pl = run.plans[p]
            port = pl.fresh()
            while True:
                done = port_pass(words[F + p], *port, pl.mem_k, pl.hk_of, pl.cls_of, pl.prec_of, pl.sat_k,
                                 pl.sat_c, pl.extra, pl.tick, pl.prop, H, lo, hi, *flat, hop_max[r], hop_lost[r],
                                 lost[r], *run.work)
                if done >= 0:
                    break
                run.grow(-done - 1 + pl.extra)
            hops_total += done
        D, doff = tally(*flat, lo, hi, sent[r], lost[r], nbytes[r])
        for k in run.inexact:  # sizes that are not whole bytes: summed as NumPy sums them
            a, c = start[k], count[k]
            keep = (run.T[a:a + c] >= lo) & (run.T[a:a + c] < hi)
            nbytes[r, k] = run.Z[a:a + c][keep].sum()
        for k in range(F):
            delays[k].append(D[doff[k]:doff[k + 1]])
        if advance is not None:
            advance(1)
    samples = [FlowSample(delays[k], sent[:, k].copy(), lost[:, k].copy(), nbytes[:, k].copy(),
                          hop_max[:, run.hoff[k]:run.hoff[k + 1]].copy(), hi - lo,
                          hop_lost[:, run.hoff[k]:run.hoff[k + 1]].copy()) for k in range(F)]
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


def _whole_bytes(x: float) -> bool:
    return float(x).is_integer()


@dataclass
class _PortPlan:
    """What a port's pass needs that no replication changes: the kernel's configuration (``port``: ``Q_t``,
    ``unit``, ``per_packet``, ``incl_ring``, its 35 arrays without sources, no shaper), its fed members (flow, hop)
    in order (a saturated flow's first hop left out) as their flows, their hops' indices in the flat per-hop arrays,
    their classes and precedences, the saturated flows that start there, the trace rows kept for their packets,
    its tick and propagation delay. The saturated flows there each take the rows of their class (``sat_c``).
    :meth:`fresh` gives the configuration for one replication: its meters' and policers' buckets full at time 0 (the
    kernel updates them in place, so each replication gets copies of the configured state)."""

    port: tuple
    mem_k: np.ndarray
    hk_of: np.ndarray
    cls_of: np.ndarray
    prec_of: np.ndarray
    sat_k: np.ndarray
    sat_c: np.ndarray
    extra: int
    tick: float
    prop: float

    def fresh(self) -> tuple:
        """The kernel's configuration for one replication: the marker and policer states (the 21st and 25th arrays)
        copied when the port meters anything."""
        args = self.port[4]
        if not (np.any(args[_MK_KIND] >= 0) or np.any(args[_PO_KIND] >= 0)):
            return self.port
        args = list(args)
        args[_MK_KIND + 1] = args[_MK_KIND + 1].copy()
        args[_PO_KIND + 1] = args[_PO_KIND + 1].copy()
        return self.port[:4] + (tuple(args),) + self.port[5:]

    @classmethod
    def of(cls, net: NetworkConfig, p: int, sat_at: dict, H: float, hoff: np.ndarray) -> _PortPlan:
        cfg = net.ports[p]
        members = [(k, h) for k, h in net.members[p] if not (net.flows[k].saturated and h == 0)]
        sat_here = [k for (pp, c), k in sat_at.items() if pp == p]
        sat_cls = [c for (pp, c), k in sat_at.items() if pp == p]
        extra = 0
        if sat_here:
            smallest = min(min(s.sizes) if not s.exponential else 1.0 for k in sat_here for s in net.flows[k].sources)
            extra = int(H * cfg.C / 8.0 / smallest) + cfg.Q_t + 16
        args = list(cfg.args())
        # no sources: the feed is every arrival (src_cls .. src_off are the 13th to 19th arrays)
        args[12:19] = [_EMPTY_I, _EMPTY_I, _EMPTY_F, _EMPTY_I, _EMPTY_F, _EMPTY_F, _EMPTY_F]
        port = (cfg.Q_t, float(cfg.unit), bool(cfg.per_packet), bool(cfg.incl_ring), tuple(args), None)
        return cls(port, np.asarray([k for k, _ in members], np.int64),
                   np.asarray([hoff[k] + h for k, h in members], np.int64),
                   np.asarray([net.flows[k].classes[h] for k, h in members], np.int64),
                   np.asarray([net.flows[k].precs[h] for k, h in members], np.int64),
                   np.asarray(sat_here, np.int64), np.asarray(sat_cls, np.int64), extra, cfg.tick, float(net.prop[p]))


@dataclass
class _Run:
    """A run's fixed parts: the flows' source tables for :func:`draw_flows`, the ports to pass in order with their
    plans, each flow's first hop in the flat per-hop arrays (``hoff``), the rows each saturated flow keeps for its
    packets, the flows whose sizes are not whole bytes (``inexact``), and the arrays every replication reuses: the
    packets' (``T``, ``Z``, ``TC``: first arrivals, sizes, current arrivals) and the passes' work and trace arrays."""

    sources: tuple
    order: list
    plans: dict
    hoff: np.ndarray
    hops: int
    reserve: np.ndarray
    inexact: list
    T: np.ndarray
    Z: np.ndarray
    TC: np.ndarray
    work: tuple = ()

    @classmethod
    def of(cls, net: NetworkConfig, H: float, flows, ports) -> _Run:
        F = len(net.flows)
        keep = set(range(F)) if flows is None else set(flows)
        sat_at = {(f.ports[0], f.classes[0]): k for k, f in enumerate(net.flows) if f.saturated}
        hoff = np.concatenate([[0], np.cumsum([len(f.ports) for f in net.flows])]).astype(np.int64)
        order = [p for p in range(len(net.ports)) if ports is None or p in ports]
        plans = {p: _PortPlan.of(net, p, sat_at, H, hoff) for p in order}
        reserve = np.zeros(F, np.int64)
        for pl in plans.values():
            for k in pl.sat_k:
                reserve[k] = pl.extra if k in keep else 0
        draw = np.array([k in keep and not f.saturated for k, f in enumerate(net.flows)], np.bool_)
        srcs = [s for f in net.flows for s in f.sources if not f.saturated]
        src_off = np.concatenate([[0], np.cumsum([0 if f.saturated else len(f.sources) for f in net.flows])])
        laws = [s.law if not s.exponential else (np.asarray(s.sizes[:1], float), np.ones(1)) for s in srcs]
        law_n = np.array([len(z) for z, _ in laws], np.int64)
        law_off = np.concatenate([[0], np.cumsum(law_n)[:-1]]).astype(np.int64) if srcs else _EMPTY_I
        cat = (lambda xs: np.concatenate(xs) if xs else _EMPTY_F)
        pkts = np.array([s.rate / (8.0 * s.mean) for s in srcs], float)
        counts = np.array([s.count for s in srcs], np.int64)
        sources = (draw, src_off.astype(np.int64), np.array([s.kind for s in srcs], np.int64), pkts, counts,
                   np.array([np.nan if s.phase is None else float(s.phase) for s in srcs], float),
                   np.array([_one_size(s) for s in srcs], np.bool_), np.array([s.on for s in srcs], float),
                   np.array([s.off for s in srcs], float), law_off, law_n,
                   np.array([s.exponential for s in srcs], np.bool_), cat([z for z, _ in laws]),
                   cat([c for _, c in laws]), np.array([sorted_stream(s) for s in srcs], np.bool_))
        # a first guess of a replication's packets (the arrays grow when it is short)
        guess = int(float(np.dot(pkts, counts)) * H * 1.05 + reserve.sum()) + 1024
        inexact = [k for k, f in enumerate(net.flows) if k in keep and any(
            s.exponential or not all(_whole_bytes(z) for z in s.sizes) for s in f.sources)]
        run = cls(sources, order, plans, hoff, int(hoff[-1]), reserve, inexact, np.empty(guess), np.empty(guess),
                  np.empty(guess))
        run.grow(1024)
        return run

    def grow(self, rows: int) -> None:
        """Work and trace arrays for ``rows`` rows at least (a quarter more than asked)."""
        if self.work and self.work[2][0].shape[0] >= rows:
            return
        size = int(1.25 * rows)
        self.work = (np.zeros((5, size), np.int64), np.zeros((3, size)),
                     (np.zeros(size, np.int64), np.zeros(size, np.int64), np.zeros(size), np.zeros(size),
                      np.empty(size), np.zeros(size, np.bool_)))
