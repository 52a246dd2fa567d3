"""End-to-end delay bounds per flow over a feed-forward network of ports: total flow analysis (TFA), separated flow
analysis (SFA) and FIFO-LP (SFA over the FIFO residual family with its parameters chosen by a linear programme,
:mod:`qosbound.systems.network.fifo_lp`, never above SFA), the tightest the answer, with the per-hop
decomposition.

Assumptions (each is a property of the port system's semantics, not a simplification): the routes are
feed-forward (:func:`qosbound.systems.network.elements.network_of` refuses a cycle); every class of a port is
FIFO for its packets, and a priority level FIFO across its classes (the scheduler takes a level's heads in
arrival order, a class's queue is FIFO and so is the ring); a packet arrives at the next port when its last
bit does (store and forward), ``link.delay`` after its last bit left the wire.

**Per hop** (:func:`qosbound.systems.port.bounds.class_bounds`, proofs in :mod:`qosbound.analytic.port` and
:mod:`qosbound.analytic.drr`): a class's delay bound ``D`` and its rate-latency service ``(R, T)`` from arrival
to the last bit on the wire, given the arrival curve of the class's packets -- here the sum of the arrival
curves of the flows that cross it, each a token bucket.

**TFA** (Schmitt & Zdarsky 2006; Le Boudec & Thiran 2001, Section 1.4.3). The ports are taken in feed-forward
order. A flow's token bucket at its first port is its traffic's envelope (CBR calls, on-off at its peak;
Poisson and saturated traffic have none). After a hop of bound ``D`` it is ``(b + r D / 8, r)``
(:func:`qosbound.analytic.network_curves.shifted_burst`: the packets leaving in a window of ``t`` arrived in
one of ``t + D``); a flow without one leaves the port with the link's own bucket ``(L_max, C)`` (no two of its
packets' last bits are closer than their transmission times: at most ``L_max + C t / 8`` bytes in a closed
window of ``t``). The class bound at every hop is sound given these curves (each is an arrival curve of the
packets at that hop, by induction along the feed-forward order), so the flow's end-to-end delay is at most
the sum of its hops' bounds and its links' propagation delays. A class whose bound is infinite (a priority
level above it without an arrival curve) gives the flow none.

**SFA** (pay bursts only once; Le Boudec & Thiran 2001, Theorem 1.4.6 and Section 6.2.2; Bouillard, Boyer &
Le Corronc 2018, Chapter 7). At every hop the flow's class (its priority level) has the service ``(R, T)``
above and is FIFO; the other flows in it have the token bucket ``(b_x, r_x)`` of TFA at that hop, so the flow
alone has the FIFO residual service ``(R - r_x, T + 8 b_x / R)`` when ``r_x < R``. These concatenate into
``(min R_h, sum T_h)``, and the flow's delay is at most ``sum T_h + 8 (e + (K - 1) L) / min R_h`` (``e`` its
source bucket's burst against ``min R_h``, ``L`` its largest packet, ``K`` its hops) plus the propagation delays.
The ``K - 1`` packets: a port's guarantee is per packet (the proofs of :mod:`qosbound.analytic.port` bound the
last bit of a packet by ``s + T + 8 X / R``, ``X`` the bytes of its level or class arrived since ``s``, itself
included -- a guaranteed-rate node), which is the service curve ``(R, T)`` followed by a packetizer (LBT Theorem
2.1.3), and each packetizer but the last holds back at most one packet of the flow (LBT Section 1.7). The FIFO
residual applies to the service element (FIFO, as the node is). It needs the flow's own envelope and a finite
cross bucket at every hop.

**Least delay** of a packet of the flow: the transmission of its smallest packet at every hop plus the
propagation delays (a packet is on the wire ``8 L / C`` at each port) -- so ``max - min`` bounds the spread of
its delays (the jitter, ``delay.jitter``).

**No loss** (an upper bound of 0): at a hop where the class drops only at its queue limit (tail drop, no
policer) and ``alpha(D) / L_min <= queue_limit`` (``alpha`` the class's arrival curve, ``D`` its bound,
``L_min`` its smallest packet), no arrival finds the queue full: every packet present at an arrival at ``t``
arrived after ``t - D``, so at most ``alpha(D)`` bytes, ``alpha(D) / L_min`` packets, are present with it.
A flow with this at every hop loses nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from qosbound.analytic.curves import ArrivalCurve, TokenBucket
from qosbound.analytic.network_curves import fifo_residual, sfa_delay, shifted_burst
from qosbound.systems.network.elements import Network, bulk
from qosbound.systems.network.fifo_lp import MAX_HOPS, LPPath, solve, usable
from qosbound.systems.port.bounds import ClassBound, class_bounds

__all__ = ["HopBound", "FlowBound", "NetworkBounds", "analyse"]


@dataclass(frozen=True)
class HopBound:
    """A flow at one hop: ``delay`` the TFA bound of its class there (s, arrival to last bit on the wire),
    ``parts`` its causes (s), ``propagation`` the link after the port (s), ``arrival`` the flow's bucket at
    the hop, ``service`` its FIFO residual service (SFA; None when not available), ``why`` when unbounded."""

    port: str
    cls: str
    delay: float
    parts: dict
    propagation: float
    arrival: TokenBucket | None
    service: tuple[float, float] | None
    transmission: float
    loss_free: bool
    why: str = ""


@dataclass(frozen=True)
class FlowBound:
    """A flow's end-to-end bounds (s): ``tfa``, ``sfa``, ``lp`` (FIFO-LP, :mod:`.fifo_lp`; inf when not available,
    ``why_*`` says why), ``best`` the smallest and ``analysis`` its name; ``least`` the least delay; ``hops`` the
    decomposition; ``binding`` the port contributing most to the TFA bound (or the one without a bound)."""

    flow: str
    tfa: float
    sfa: float
    least: float
    hops: tuple[HopBound, ...]
    why_tfa: str = ""
    why_sfa: str = ""
    sfa_service: tuple[float, float] | None = None
    lp: float = math.inf
    why_lp: str = ""
    lp_theta: tuple = ()

    @property
    def best(self) -> float:
        """The answer: the bound of :attr:`analysis`."""
        return {"TFA": self.tfa, "SFA": self.sfa, "FIFO-LP": self.lp}[self.analysis]

    @property
    def analysis(self) -> str:
        """The tightest analysis: TFA on a tie with SFA; FIFO-LP only when below both by more than a relative 1e-9
        (it is never above SFA: a tie is SFA's, up to the rounding of two ways of summing)."""
        if self.lp < min(self.tfa, self.sfa) * (1.0 - 1e-9):
            return "FIFO-LP"
        return "SFA" if self.sfa < self.tfa else "TFA"

    @property
    def loss_free(self) -> bool:
        return all(h.loss_free for h in self.hops)

    @property
    def propagation(self) -> float:
        """The links' propagation delays along the path, s."""
        return sum(h.propagation for h in self.hops)

    @property
    def binding(self) -> str:
        """The port whose hop bound is infinite, else the one contributing most to the TFA bound."""
        for h in self.hops:
            if not math.isfinite(h.delay):
                return h.port
        return max(self.hops, key=lambda h: h.delay).port


@dataclass
class NetworkBounds:
    flows: dict = field(default_factory=dict)  # flow name -> FlowBound (saturated flows: none)
    classes: dict = field(default_factory=dict)  # port -> class -> ClassBound


def _sum(buckets: list[TokenBucket | None]) -> TokenBucket | None:
    if any(x is None for x in buckets):
        return None
    return TokenBucket(sum(x.burst for x in buckets), sum(x.rate for x in buckets))


def _less(total: float, own: float) -> float:
    """``total - own`` for a sum that includes ``own``, rounded up (a relative 1e-12 and never below 0): the
    other flows' share is never understated by the subtraction's rounding."""
    return max(total - own, 0.0) * (1.0 + 1e-12) + 1e-12 * abs(own)


def _curve(x: TokenBucket | None) -> ArrivalCurve | None:
    return None if x is None else ArrivalCurve((x,))


def analyse(net: Network) -> NetworkBounds:
    """TFA, SFA and FIFO-LP for every flow that is not saturated (module docstring)."""
    with bulk():
        return _analyse(net)


def _analyse(net: Network) -> NetworkBounds:
    out = NetworkBounds()
    st = _propagate(net, out)
    paths: dict[str, LPPath] = {}
    for f in net.flows:
        if not f.saturated:
            out.flows[f.name], paths[f.name] = _flow_bound(net, out, st, f)
    _fifo_lp(out, paths)
    return out


def _fifo_lp(out: NetworkBounds, paths: dict) -> None:
    """FIFO-LP (:mod:`.fifo_lp`) for every flow with SFA's inputs, as one programme; why not for the others."""
    names = [n for n, p in paths.items() if p is not None and usable(p)]
    for n, (bound, th) in zip(names, solve([paths[n] for n in names])):
        out.flows[n] = replace(out.flows[n], lp=bound + out.flows[n].propagation, lp_theta=tuple(float(x) for x in th))
    done = set(names)
    for n, fb in out.flows.items():
        p = paths.get(n)
        if n in done:
            continue
        if p is None:
            why = f"SFA's inputs are missing ({fb.why_sfa})"
        elif p.hops > MAX_HOPS:
            why = f"the path has {p.hops} hops, more than {MAX_HOPS}"
        else:
            why = "the flow's rate is above a hop's residual rate"
        out.flows[n] = replace(fb, why_lp=why)


@dataclass
class _Hops:
    """What the hop-by-hop pass leaves for the per-flow bounds: each flow's bucket at each hop, each hop's delay
    bound (with its parts and why it is infinite), whether each class is loss-free, and per port and FIFO group
    (a priority level, or a weighted class) the flows' buckets summed and how many flows have none -- so the cross
    traffic of one flow is the group less the flow (SFA)."""

    cur: dict = field(default_factory=dict)
    hop_delay: dict = field(default_factory=dict)
    loss_free: dict = field(default_factory=dict)
    groups: dict = field(default_factory=dict)
    group_of: dict = field(default_factory=dict)


def _propagate(net: Network, out: NetworkBounds) -> _Hops:
    """Port by port in feed-forward order: every class's bound (into ``out.classes``) on the flows' buckets there,
    and each flow's bucket at its next hop (its burst grown by the hop's delay bound; an infinite one: one
    largest packet at the line rate)."""
    st = _Hops()
    cur: dict[tuple[int, int], TokenBucket | None] = st.cur  # (flow, hop) -> the flow's bucket there
    for f in net.flows:
        env = f.envelope()
        cur[(f.index, 0)] = None if (env is None or f.saturated) else env.long_term()
    for p in net.order:
        port = net.ports[p]
        members: dict[str, list] = {}
        for k, h in net.at[p]:
            members.setdefault(net.flows[k].hops[h].cls, []).append((k, h))
        arrivals = {c: _curve(_sum([cur[m] for m in ms])) for c, ms in members.items()
                    if not port.cls(c).saturated}
        cb = class_bounds(port, arrivals)
        out.classes[p] = cb
        for c, ms in members.items():
            tc = port.cls(c)
            key = ("level", tc.priority) if tc.priority is not None else ("class", c)
            st.group_of[(p, c)] = key
            g = st.groups.setdefault((p, key), [0.0, 0.0, 0])
            for m in ms:
                x = cur[m]
                if x is None:
                    g[2] += 1
                else:
                    g[0] += x.burst
                    g[1] += x.rate
        for c, ms in members.items():
            b = cb.get(c)
            tc = port.cls(c)
            ok = False
            if b is not None and math.isfinite(b.delay) and b.arrival is not None and not tc.dropper.red \
                    and tc.police is None:
                ok = b.arrival.at(b.delay) / tc.smallest <= tc.queue_limit
            st.loss_free[(p, c)] = ok
            for k, h in ms:
                f = net.flows[k]
                D = b.delay if b is not None else math.inf
                why = "" if b is None or math.isfinite(D) else b.why
                if b is None:
                    why = f"class {c} is saturated at {p}"
                st.hop_delay[(k, h)] = (D, dict(b.parts) if b is not None else {}, why)
                if h + 1 < len(f.hops):
                    x = cur[(k, h)]
                    if x is not None and math.isfinite(D):
                        nxt = TokenBucket(shifted_burst(x.burst, x.rate, D), x.rate)
                    else:
                        nxt = TokenBucket(f.largest, port.rate)
                    cur[(k, h + 1)] = nxt
    return st


def _hop_service(st: _Hops, f, h: int, hop, b: ClassBound | None) -> tuple[tuple | None, str]:
    """The flow's residual service curve at one hop (its class's service less the cross traffic of its FIFO group),
    or why there is none."""
    if b is None or b.service is None:
        return None, f"class {hop.cls} at {hop.port} has no service curve ({b.why if b else 'saturated'})"
    burst, rate, missing = st.groups[(hop.port, st.group_of[(hop.port, hop.cls)])]
    own = st.cur[(f.index, h)]
    cross = None
    if missing - (own is None) == 0:
        cross = TokenBucket(_less(burst, own.burst if own else 0.0), _less(rate, own.rate if own else 0.0))
    if cross is None:
        return None, f"a flow sharing class {hop.cls} at {hop.port} has no arrival curve there"
    if cross.rate >= b.service.rate:
        return None, (f"the other flows of class {hop.cls} at {hop.port} may take its whole service rate "
                      f"({cross.rate:.6g} of {b.service.rate:.6g} bit/s)")
    return (*fifo_residual(b.service.rate, b.service.latency, cross.burst, cross.rate),
            (b.service.rate, b.service.latency, cross.burst, cross.rate)), ""


def _flow_bound(net: Network, out: NetworkBounds, st: _Hops, f) -> tuple[FlowBound, LPPath | None]:
    """A flow's end-to-end bounds: the sum of its hops' bounds (TFA) and the bound on the concatenation of its
    residual service curves (SFA), each with why it is infinite, and the least delay (transmissions and
    propagation)."""
    hops = []
    lp_in: list[tuple] = []
    R_min, T_sum, why_sfa = math.inf, 0.0, ""
    src = f.envelope()
    if src is None:
        why_sfa = "the flow has no arrival curve at its source (Poisson traffic)"
    for h, hop in enumerate(f.hops):
        port = net.ports[hop.port]
        D, parts, why = st.hop_delay[(f.index, h)]
        b: ClassBound | None = out.classes[hop.port].get(hop.cls)
        service = None
        if not why_sfa:
            got, why_sfa = _hop_service(st, f, h, hop, b)
            if got is not None:
                service = got[:2]
                lp_in.append(got[2])
                R_min = min(R_min, service[0])
                T_sum += service[1]
        hops.append(HopBound(hop.port, hop.cls, D, parts, port.delay, st.cur[(f.index, h)], service,
                             8.0 * f.smallest / port.rate, st.loss_free[(hop.port, hop.cls)], why))
    prop = sum(h.propagation for h in hops)
    tfa = sum(h.delay for h in hops) + prop
    why_tfa = next((f"{h.port}: {h.why}" for h in hops if not math.isfinite(h.delay)), "")
    sfa = math.inf
    sfa_service = None
    if not why_sfa:
        e = src.excess(R_min)
        if math.isinf(e):
            why_sfa = f"the flow's rate is above its end-to-end residual rate {R_min:.6g} bit/s"
        else:
            sfa = sfa_delay(T_sum, e, R_min, len(f.hops), f.largest) + prop
            sfa_service = (R_min, T_sum)
    least = sum(h.transmission for h in hops) + prop
    path = None
    if not why_sfa:
        R, T, bx, rx = zip(*lp_in)
        path = LPPath(R, T, bx, rx, tuple(src.excess(a - c) for a, c in zip(R, rx)), f.largest)
    return FlowBound(f.name, tfa, sfa, least, tuple(hops), why_tfa, why_sfa, sfa_service), path
