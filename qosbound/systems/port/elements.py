"""A port's elements as types: :class:`Port`, :class:`TrafficClass`, :class:`Stream`, :class:`SizeLaw`,
:class:`Policer`, :class:`Marker`, :class:`Dropper` -- the scenario reduced to SI numbers, shared by the
closed forms, the model checking, the simulator set-up and (later) networks of ports.

:func:`port_of` builds a :class:`Port` from a validated scenario: it adds ``class-default`` when the file does
not declare it, turns every ``bandwidth`` form into a weight in bit/s, and resolves DSCPs to precedence
indices. Nothing here decides a method's answer; each method's module reads these types.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from qosbound.analytic.curves import ArrivalCurve, TokenBucket
from qosbound.analytic.drr import quanta
from qosbound.analytic.wred import Profile
from qosbound.errors import ScenarioError
from qosbound.scenario import MAX_PACKET_BYTES
from qosbound import dscp
from qosbound.systems.port.classes import always_congested
from qosbound.systems.port.schema import (DEFAULT_CLASS, Scenario, parse_bandwidth, precedences, priority_reservation,
                                          shaper_burst, shaper_line_rate)
from qosbound.systems.port.schema import Traffic as TrafficSpec
from qosbound.systems.port.schema import TrafficClass as ClassSpec

__all__ = ["SizeLaw", "Stream", "Policer", "Marker", "Dropper", "TrafficClass", "Ring", "Port", "port_of",
           "streams_of", "EXP_MIN_BYTES", "COLOURS"]

#: Exponential sizes are drawn at least this many bytes (as the af simulator does) and at most the largest IP
#: packet (:data:`qosbound.scenario.MAX_PACKET_BYTES`).
EXP_MIN_BYTES = 1.0
#: Colour names of the meters (indices 0, 1, 2).
COLOURS = ("green", "yellow", "red")


@dataclass(frozen=True)
class SizeLaw:
    """Packet sizes (bytes): a discrete law ``sizes``/``probs``, or an exponential law of mean ``sizes[0]``
    truncated to [1 B, 65535 B] (``exponential``)."""

    sizes: tuple[float, ...]
    probs: tuple[float, ...]
    exponential: bool = False

    @property
    def mean(self) -> float:
        if self.exponential:
            return self.sizes[0]
        return float(np.dot(self.sizes, self.probs))

    @property
    def second_moment(self) -> float:
        """E[L^2], bytes^2 (exponential: the untruncated law's 2 m^2)."""
        if self.exponential:
            return 2.0 * self.sizes[0] ** 2
        return float(np.dot(np.square(self.sizes), self.probs))

    @property
    def largest(self) -> float:
        return float(MAX_PACKET_BYTES) if self.exponential else max(self.sizes)

    @property
    def smallest(self) -> float:
        return EXP_MIN_BYTES if self.exponential else min(self.sizes)

    @staticmethod
    def mixture(laws: list["SizeLaw"], weights: list[float]) -> "SizeLaw | None":
        """The mixture of discrete laws with packet weights ``weights`` (None if one is exponential)."""
        if any(law.exponential for law in laws):
            return None
        acc: dict[float, float] = {}
        tot = float(sum(weights))
        for law, w in zip(laws, weights):
            for s, p in zip(law.sizes, law.probs):
                acc[s] = acc.get(s, 0.0) + w * p / tot
        keys = sorted(k for k, v in acc.items() if v > 0)
        return SizeLaw(tuple(keys), tuple(acc[k] for k in keys))


def _size_law(t) -> SizeLaw:
    if isinstance(t.sizes, list):
        keep = [s for s in t.sizes if s.p > 0]
        return SizeLaw(tuple(float(s.size) for s in keep), tuple(float(s.p) for s in keep))
    return SizeLaw((float(t.size),), (1.0,), exponential=t.sizes == "exponential")


@dataclass(frozen=True)
class Stream:
    """One source of packets of a class.

    ``poisson``: exponential inter-arrival times at ``rate / (8 E[L])`` packets/s. ``cbr``: one packet every
    ``8 E[L] / rate`` s, the first at ``phase`` (None: uniform over one period, independent per stream and
    replication). ``on-off``: a CBR clock at the peak rate ``rate (on + off) / on`` with a uniform random
    phase, gated by an alternating on/off process of exponential periods of means ``on`` and ``off`` started in
    its stationary state -- a packet is sent at each tick of the clock that falls in an on period, so the mean
    rate is ``rate`` exactly and no two packets are closer than one tick. ``saturated``: the class always has a
    packet, drawn when the scheduler takes one. ``count`` identical copies (calls), each its own phase.
    """

    kind: str
    rate: float  # bit/s, of one copy (0 for saturated)
    sizes: SizeLaw
    phase: float | None = None
    on: float = 0.0
    off: float = 0.0
    count: int = 1

    @property
    def packet_rate(self) -> float:
        """Packets/s of all copies."""
        return 0.0 if self.kind == "saturated" else self.count * self.rate / (8.0 * self.sizes.mean)

    @property
    def peak(self) -> float:
        """Bit/s while on (on-off), else the rate."""
        return self.rate * (self.on + self.off) / self.on if self.kind == "on-off" else self.rate

    def envelope(self) -> ArrivalCurve | None:
        """A token bucket the stream (all copies) conforms to whatever its phases, or None (Poisson, saturated).

        A clock of period ``P = 8 E[L] / peak`` sends at most one packet per tick, so at most ``1 + w / P``
        packets in a closed window of ``w`` s: at most ``L_max + peak L_max / E[L] w / 8`` bytes (exact for fixed
        sizes: ``(L, r)``); ``count`` copies add up whatever their phases."""
        if self.kind in ("poisson", "saturated"):
            return None
        L = self.sizes.largest
        return ArrivalCurve.bucket(self.count * L, self.count * self.peak * L / self.sizes.mean)


@dataclass(frozen=True)
class Policer:
    """A meter on a class's arrivals with an action per colour.

    ``kind`` is the meter of :mod:`qosbound.validation.markers` (``two-colour``, ``srtcm``, ``trtcm``; buckets
    full at time 0, refilled continuously, a packet conforms to a bucket holding at least its size). The
    actions are indexed by the meter's colour: green (conform), yellow (exceed), red (violate; for a
    two-colour meter red is exceed). Each is ``transmit``, ``drop`` or ``remark`` (to precedence ``remark[c]``
    of the class). ``conditional``: meter only under congestion (the ring full, or without a ring the link
    busy, when the packet arrives); otherwise the packet passes untouched and the buckets keep filling.
    ``congested``: the port is congested at every arrival after time 0, so a conditional policer meters every
    packet but those arriving at time 0 (:func:`qosbound.systems.port.classes.always_congested`).
    """

    kind: str
    cir: float
    cbs: float
    second_rate: float  # PIR (trTCM); 0 otherwise
    second_depth: float  # PBS (trTCM) or EBS (srTCM); 0 for two-colour
    conditional: bool
    actions: tuple[str, str, str]
    remark: tuple[int, int, int]
    congested: bool = False
    #: bytes that may arrive at one instant (one packet per stream, each at its largest): what may pass
    #: unmetered at time 0 on a congested port
    at_once: float = 0.0

    @property
    def metering(self) -> bool:
        """Whether every packet after time 0 is metered: always, or conditionally on a congested port."""
        return not self.conditional or self.congested

    def passed(self) -> ArrivalCurve | None:
        """Token buckets every packet that passes conforms to, or None when the policer proves none.

        Green packets take ``cbs``/``cir`` tokens; green and yellow take the peak bucket's (trTCM) or, srTCM,
        tokens of a committed bucket whose overflow alone fills the excess one (``cbs + ebs`` at ``cir``). A
        conditional policer may let anything through while the port is not congested: no bucket. On a port
        congested at every arrival after time 0 (``congested``) it meters every later packet, so what passes in
        any window is what the metered packets can (the buckets) plus the packets of time 0, which take no
        tokens: every depth grows by the bytes that may arrive at one instant (``at_once``)."""
        if not self.metering:
            return None
        extra = self.at_once if self.conditional else 0.0
        drop = [a == "drop" for a in self.actions]
        buckets = []
        if self.kind == "two-colour":
            if drop[2]:
                buckets.append(TokenBucket(self.cbs + extra, self.cir))
        elif self.kind == "srtcm":
            if drop[2]:
                buckets.append(TokenBucket(self.cbs + self.second_depth + extra, self.cir))
                if drop[1]:
                    buckets.append(TokenBucket(self.cbs + extra, self.cir))
        else:
            if drop[2]:
                buckets.append(TokenBucket(self.second_depth + extra, self.second_rate))
                if drop[1]:
                    buckets.append(TokenBucket(self.cbs + extra, self.cir))
        return ArrivalCurve(tuple(buckets)) if buckets else None


@dataclass(frozen=True)
class Marker:
    """A marker on a class's arrivals: the meter's colour becomes precedence ``to_precedence[colour]``;
    colour-aware (``aware``) it meters the packet's arriving precedence as its pre-colour."""

    kind: str
    cir: float
    cbs: float
    second_rate: float
    second_depth: float
    aware: bool
    to_precedence: tuple[int, int, int]


@dataclass(frozen=True)
class Dropper:
    """Tail drop at the queue limit, or a RED-family dropper (``mode`` wred / rio / nred, ``gentle``) with an
    EWMA average of weight ``alpha`` and per-precedence thresholds (packets) and denominators ``P_d``."""

    mode: str
    gentle: bool = False
    alpha: float = 1.0
    min_th: tuple[float, ...] = ()
    max_th: tuple[float, ...] = ()
    P_d: tuple[float, ...] = ()

    @property
    def red(self) -> bool:
        return self.mode != "tail"

    def profile(self) -> Profile:
        """The three-colour :class:`qosbound.analytic.wred.Profile` of the RED-family models (a class with fewer
        than three precedences repeats its last one in the unused colours, which carry no traffic)."""
        if not self.red:
            raise ScenarioError("a tail dropper has no RED profile", field="dropper")
        n = len(self.min_th)
        pad = lambda v: tuple(v[min(k, n - 1)] for k in range(3))  # noqa: E731
        return Profile(min_th=pad(self.min_th), max_th=pad(self.max_th), P_d=pad(self.P_d), alpha=self.alpha,
                       mode=self.mode, gentle=self.gentle)


@dataclass(frozen=True)
class TrafficClass:
    """One class of a port, resolved: its place in the scheduler (``priority`` level, or a DRR ``weight`` in
    bit/s), queue, meters, dropper, and streams; ``mix`` the fractions of its packets arriving with each
    precedence (DSCP)."""

    name: str
    index: int
    precedences: tuple[str, ...]
    priority: int | None
    weight: float
    queue_limit: int
    dropper: Dropper
    police: Policer | None = None
    marker: Marker | None = None
    streams: tuple[Stream, ...] = ()
    mix: tuple[float, ...] = (1.0,)
    implicit: bool = False  # class-default added because the file does not declare it
    spec: ClassSpec | None = field(default=None, repr=False, compare=False)

    @property
    def has_traffic(self) -> bool:
        return bool(self.streams)

    @property
    def saturated(self) -> bool:
        return any(s.kind == "saturated" for s in self.streams)

    @property
    def offered(self) -> float:
        """Offered rate, bit/s (inf when saturated)."""
        return math.inf if self.saturated else sum(s.count * s.rate for s in self.streams)

    @property
    def packet_rate(self) -> float:
        return sum(s.packet_rate for s in self.streams)

    def size_law(self) -> SizeLaw | None:
        """The law of the class's packet sizes (the streams' laws weighted by packet rates); None when a stream
        has exponential sizes and another a discrete law."""
        if len(self.streams) == 1:
            return self.streams[0].sizes
        return SizeLaw.mixture([s.sizes for s in self.streams], [s.packet_rate for s in self.streams])

    @property
    def mean_size(self) -> float:
        if self.saturated or len(self.streams) == 1:
            return self.streams[0].sizes.mean
        return sum(s.packet_rate * s.sizes.mean for s in self.streams) / self.packet_rate

    @property
    def largest(self) -> float:
        return max(s.sizes.largest for s in self.streams)

    @property
    def smallest(self) -> float:
        return min(s.sizes.smallest for s in self.streams)

    def envelope(self) -> ArrivalCurve | None:
        """The traffic's own arrival curve (every stream constrained: their sum), or None."""
        return ArrivalCurve.total(s.envelope() for s in self.streams)

    def arrival_curve(self) -> ArrivalCurve | None:
        """The arrival curve of the packets entering the class queue: the traffic's envelope and the buckets its
        policer proves, together (None when neither holds)."""
        env = self.envelope()
        pol = self.police.passed() if self.police is not None else None
        if env is None:
            return pol
        return env if pol is None else env.meet(pol)

    @property
    def long_run_rate(self) -> float:
        """The long-run rate into the queue, bit/s: the offered rate capped by the arrival curve's rate."""
        ac = self.arrival_curve()
        return self.offered if ac is None else min(self.offered, ac.rate)

    @property
    def held(self) -> float:
        """Most bytes the class queue holds: the queue limit times the largest packet."""
        return self.queue_limit * self.largest


@dataclass(frozen=True)
class Ring:
    """The tx-ring: ``units`` units of ``unit`` bytes; ``per_packet``: every packet one unit."""

    units: int
    unit: float
    per_packet: bool = False

    def units_of(self, size: float) -> int:
        return 1 if self.per_packet else int(math.ceil(size / self.unit - 1e-12))


@dataclass(frozen=True)
class Port:
    """A router output port: link rate ``rate`` (bit/s), propagation ``delay`` of the link after it (s), the
    tx-ring (None: none), the classes in the policy's order, the DRR quantum of the smallest weight (bytes)."""

    name: str
    rate: float
    ring: Ring | None
    classes: tuple[TrafficClass, ...]
    quantum: float
    delay: float = 0.0
    #: the parent shaper's burst Bc, bytes (0: no shaper; the port's ``rate`` is then the shaper's)
    shaper_burst: float = 0.0
    #: the rate the ring drains at, bit/s: the interface's under a parent shaper (0: ``rate``)
    line_rate: float = 0.0

    def cls(self, name: str) -> TrafficClass:
        for c in self.classes:
            if c.name == name:
                return c
        raise ScenarioError(f"the port has no class '{name}'", field="classes")

    @property
    def active(self) -> tuple[TrafficClass, ...]:
        """Classes with traffic."""
        return tuple(c for c in self.classes if c.has_traffic)

    @property
    def levels(self) -> list[int]:
        """The strict-priority levels with traffic, highest first."""
        return sorted({c.priority for c in self.active if c.priority is not None})

    def level(self, k: int) -> tuple[TrafficClass, ...]:
        return tuple(c for c in self.active if c.priority == k)

    @property
    def weighted(self) -> tuple[TrafficClass, ...]:
        """Classes with traffic under the weighted scheduler."""
        return tuple(c for c in self.active if c.priority is None)

    @property
    def largest(self) -> float:
        """The largest packet that can reach the ring, bytes."""
        return max((c.largest for c in self.active), default=1500.0)

    @property
    def Q_t(self) -> int:
        """Ring units (1 without a ring: the packet on the wire)."""
        return 1 if self.ring is None else self.ring.units

    @property
    def unit(self) -> float:
        """Unit size, bytes (the largest packet without a ring or with a per-packet ring)."""
        if self.ring is None or self.ring.per_packet:
            return self.largest
        return self.ring.unit

    def units_of(self, size: float) -> int:
        return 1 if self.ring is None else self.ring.units_of(size)

    @property
    def phi(self) -> float:
        """Largest fill fraction ``L / (ceil(L/u) u)`` of an occupied unit over the sizes that occur (1 when a
        size law is exponential: every fill is possible)."""
        u = self.unit
        best = 0.0
        for c in self.active:
            for s in c.streams:
                if s.sizes.exponential:
                    return 1.0
                for L in s.sizes.sizes:
                    best = max(best, L / (self.units_of(L) * u))
        return min(best, 1.0) if best > 0 else 1.0

    def quanta(self) -> np.ndarray:
        """DRR quanta of the weighted classes with traffic, in the order of :attr:`weighted`, bytes."""
        return quanta([c.weight for c in self.weighted], self.quantum)


def streams_of(t: TrafficSpec | None) -> tuple[Stream, ...]:
    """The streams a validated traffic section describes (none for None)."""
    if t is None:
        return ()
    if t.is_saturated:
        return (Stream("saturated", 0.0, _size_law(t)),)
    if t.rate is not None:
        phase = None if t.phase == "random" else float(t.phase)
        return (Stream(t.arrivals, float(t.rate), _size_law(t), phase, float(t.on or 0.0), float(t.off or 0.0)),)
    if t.calls is not None:
        c = t.call
        return (Stream("cbr", float(c.rate), SizeLaw((float(c.size),), (1.0,)), None, count=int(t.calls)),)
    out = []
    for s in t.streams:
        out.append(Stream(s.arrivals, float(s.rate), SizeLaw((float(s.size),), (1.0,)),
                          None if s.phase == "random" else float(s.phase)))
    return tuple(out)


def _policer(c: ClassSpec, prec: list[str]) -> Policer | None:
    p = c.police
    if p is None:
        return None
    conform, exceed, violate = p.actions()
    by_colour = (conform, exceed, exceed) if p.kind == "two-colour" else (conform, exceed, violate)
    second_rate = float(p.pir) if p.pir is not None else 0.0
    second_depth = float(p.pbs if p.pbs is not None else (p.ebs if p.ebs is not None else 0.0))
    return Policer(p.kind, float(p.cir), float(p.cbs), second_rate, second_depth, bool(p.conditional),
                   tuple(a.action for a in by_colour),
                   tuple(prec.index(a.dscp) if a.action == "remark" else -1 for a in by_colour))


def _marker(c: ClassSpec, prec: list[str]) -> Marker | None:
    m = c.marker
    if m is None:
        return None
    second_rate = float(m.pir) if m.kind == "trtcm" else 0.0
    second_depth = float(m.pbs if m.kind == "trtcm" else (m.ebs or 0.0) if m.kind == "srtcm" else 0.0)
    to = (0, 1, 2) if m.kind != "two-colour" else (0, len(prec) - 1, len(prec) - 1)
    return Marker(m.kind, float(m.cir), float(m.cbs), second_rate, second_depth, bool(m.aware), to)


def _dropper(c: ClassSpec, prec: list[str]) -> Dropper:
    d = c.dropper
    if d.mode == "tail":
        return Dropper("tail")
    th = {dscp.canonical(k): v for k, v in d.thresholds.items()}
    rows = [th[p] for p in prec]
    return Dropper(d.mode, bool(d.gentle), float(d.weight), tuple(float(t.min_th) for t in rows),
                   tuple(float(t.max_th) for t in rows), tuple(float(t.P_d) for t in rows))


def _weights(scn: Scenario, specs: list[ClassSpec]) -> dict[str, float]:
    """Each weighted class's bandwidth in bit/s; class-default without one gets the unreserved rest."""
    C = float(scn.link.rate)
    prio = sum(priority_reservation(c) for c in specs if c.priority is not None)
    out: dict[str, float] = {}
    form = None
    for c in specs:
        if c.bandwidth is None:
            continue
        form, v = parse_bandwidth(c.bandwidth)
        out[c.name] = v * C if form == "percent" else v * (C - prio) if form == "remaining" else v
    for c in specs:
        if c.priority is None and c.bandwidth is None:  # class-default, declared without a bandwidth or implicit
            if form == "remaining":
                rest = (1.0 - sum(parse_bandwidth(x.bandwidth)[1] for x in specs if x.bandwidth is not None)) \
                    * (C - prio)
            else:
                rest = C - prio - sum(out.values())
            rest = max(rest, 0.0)
            if rest <= 1e-9 * C and c.traffic is not None:
                raise ScenarioError("class-default has traffic but the other classes reserve the whole link: give it "
                                    "a bandwidth", field=f"classes.{c.name}.bandwidth")
            out[c.name] = rest
    return out


def port_of(scn: Scenario) -> Port:
    """The :class:`Port` a validated scenario describes (class-default added when not declared)."""
    specs = list(scn.classes)
    implicit = not any(c.name == DEFAULT_CLASS for c in specs)
    if implicit:
        specs.append(ClassSpec(name=DEFAULT_CLASS))
    weights = _weights(scn, specs)
    classes = []
    for i, c in enumerate(specs):
        prec = precedences(c)
        t = c.traffic
        mix = tuple(float(x) for x in t.mix) if (t is not None and t.mix is not None) else \
            tuple(1.0 if k == 0 else 0.0 for k in range(len(prec)))
        classes.append(TrafficClass(
            name=c.name, index=i, precedences=tuple(prec), priority=c.priority,
            weight=0.0 if c.priority is not None else weights[c.name], queue_limit=int(c.queue_limit),
            dropper=_dropper(c, prec), police=_policer(c, prec), marker=_marker(c, prec), streams=streams_of(t),
            mix=mix, implicit=implicit and c.name == DEFAULT_CLASS, spec=c))
    if always_congested(c.saturated for c in classes):
        classes = [replace(c, police=replace(c.police, congested=True,
                                             at_once=sum(s.count * s.sizes.largest for s in c.streams)))
                   if c.police is not None and c.police.conditional else c for c in classes]
    ring = None
    if scn.txq is not None:
        per_packet = scn.txq.unit_size == "packet"
        ring = Ring(int(scn.txq.units), 0.0 if per_packet else float(scn.txq.unit_size), per_packet)
    return Port(scn.name, float(scn.link.rate), ring, tuple(classes), float(scn.scheduler.quantum),
                float(scn.link.delay), shaper_burst(scn), shaper_line_rate(scn))
