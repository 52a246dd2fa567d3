"""The worst-case view of each class of a port: its arrival curve, the rate-latency service it gets to the
last bit on the wire, and the delay bound (the theorems and proofs of :mod:`qosbound.analytic.port` and
:mod:`qosbound.analytic.drr`, in the port's terms).

This is the piece networks of ports reuse: :func:`class_bounds` gives, per class, a :class:`ClassBound`
whose ``service`` is a rate-latency curve valid for the class's packets from their arrival at the port to
the last bit on the wire, and whose ``arrival`` is the curve of the packets entering its queue. A class
gets no bound (``delay`` infinite, ``why`` says which hypothesis fails) when a class above it has no arrival
curve (an unpoliced Poisson priority class can starve everything below it), or when it is saturated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from qosbound.analytic import port as nc
from qosbound.analytic.curves import ArrivalCurve, RateLatency
from qosbound.analytic.drr import drr_service
from qosbound.systems.port.elements import Port

__all__ = ["ClassBound", "class_bounds", "ring_terms"]


@dataclass(frozen=True)
class ClassBound:
    """One class's worst case. ``delay`` (s) bounds every delivered packet's delay; ``service`` is the class's
    rate-latency service from its arrival to the last bit on the wire (None with no bound); ``backlog`` bounds
    the bytes in its queue; ``parts`` decomposes ``delay`` (seconds per cause)."""

    name: str
    arrival: ArrivalCurve | None
    service: RateLatency | None
    delay: float
    backlog: float
    why: str = ""
    parts: dict = field(default_factory=dict)
    formula: str = ""


def ring_terms(port: Port) -> tuple[float, float]:
    """(V bytes, W_r s): the most work the ring holds, and the ring's work ahead of an admitted packet (a parent
    shaper's burst is added to ``V`` by :func:`class_bounds`)."""
    return nc.ring_work(port.Q_t, port.unit, port.rate, port.largest, port.phi)


def class_bounds(port: Port, arrivals: dict[str, ArrivalCurve | None] | None = None) -> dict[str, ClassBound]:
    """Every class with traffic: its :class:`ClassBound` (module docstring). ``arrivals`` replaces, for the
    classes it names, the traffic's own envelope by the given curve (None: none) -- a network's port, whose
    classes carry flows shaped upstream; a class's policer still adds its buckets."""
    curve = _arrival_of(arrivals)
    V_ring, W_r = ring_terms(port)
    V = nc.shaped_work(V_ring, port.shaper_burst)  # a parent shaper's burst adds to the ring's work
    out: dict[str, ClassBound] = {}
    above = _priority_bounds(port, curve, V, V_ring, out)
    if port.weighted:
        _weighted_bounds(port, curve, V, V_ring, W_r, above, out)
    return out


def _arrival_of(arrivals: dict[str, ArrivalCurve | None] | None):
    """The function giving a class's arrival curve: its traffic's own envelope, or the curve ``arrivals`` gives
    it met with its policer's buckets."""
    if arrivals:
        def curve(c) -> ArrivalCurve | None:
            if c.name not in arrivals:
                return c.arrival_curve()
            a = arrivals[c.name]
            pol = c.police.passed() if c.police is not None else None
            return pol if a is None else (a if pol is None else a.meet(pol))
    else:
        def curve(c) -> ArrivalCurve | None:
            return c.arrival_curve()
    return curve


@dataclass
class _Above:
    """What the priority levels above leave: their long-term burst (B) and rate (bit/s), the bytes they hold,
    and why no bound holds below them ('' when one does)."""

    sigma: float = 0.0
    rho: float = 0.0
    held: float = 0.0
    starved: str = ""


def _priority_bounds(port: Port, curve, V: float, V_ring: float, out: dict[str, ClassBound]) -> _Above:
    """The bounds of the priority levels, highest first, into ``out``; what they leave the levels below."""
    C = port.rate
    above = _Above()
    for k in port.levels:
        members = port.level(k)
        alpha = ArrivalCurve.total([curve(c) for c in members])
        held = sum(c.held for c in members)
        if not above.starved and above.rho >= C:
            above.starved = (f"the arrival curves of the priority levels above level {k} add up to {above.rho:.6g} "
                             "bit/s, the whole link: they prove no rate left below them")
        if above.starved:
            for c in members:
                out[c.name] = ClassBound(c.name, curve(c), None, math.inf, held, why=above.starved)
            continue
        R, T = nc.level_service(C, V, above.sigma, above.rho)
        e = alpha.excess(R) if alpha is not None else math.inf
        D = nc.level_delay(C, V, above.sigma, above.rho, e, held, above.held)
        own = min(e, held + above.held)
        parts = {"ring": 8.0 * V_ring / R, "higher levels": 8.0 * above.sigma / R, "own burst": 8.0 * own / R}
        if port.shaper_burst:
            parts["shaper"] = 8.0 * port.shaper_burst / R
        backlog = held if alpha is None else min(held, alpha.at(D))
        for c in members:
            out[c.name] = ClassBound(c.name, curve(c), RateLatency(R, T), D, backlog, parts=parts,
                                     formula="D_k = 8 (V + sigma_H + min(e_k, B_k + B_H)) / (C - rho_H)")
        if alpha is None:
            above.starved = (f"priority level {k} ({', '.join(c.name for c in members)}) has no arrival curve "
                             "(neither a policer that drops nor a CBR envelope): it can take the whole link in the "
                             "worst case")
            continue
        lt = alpha.long_term()
        above.sigma += lt.burst
        above.rho += lt.rate
        above.held += backlog
    return above


def _weighted_bounds(port: Port, curve, V: float, V_ring: float, W_r: float, above: _Above,
                     out: dict[str, ClassBound]) -> None:
    """The bounds of the weighted classes into ``out``: DRR over the rate-latency service the priority levels
    leave them."""
    C = port.rate
    weighted = port.weighted
    starved = above.starved
    if not starved and above.rho >= C:
        starved = (f"the priority levels' arrival curves add up to {above.rho:.6g} bit/s, the whole link: they prove "
                   "no rate left for the weighted classes")
    if starved:
        for c in weighted:
            out[c.name] = ClassBound(c.name, curve(c), None, math.inf, c.held, why=starved)
        return
    RW, TW = nc.weighted_aggregate(C, V, above.sigma, above.rho, above.held)
    agg = RateLatency(RW, TW)
    q = port.quanta()
    largest = [c.largest for c in weighted]
    for i, c in enumerate(weighted):
        if c.saturated:
            out[c.name] = ClassBound(c.name, None, None, math.inf, math.inf, why="a saturated class waits forever")
            continue
        s = drr_service(q, largest, i, agg)
        alpha = curve(c)
        e = alpha.excess(s.rate) if alpha is not None else math.inf
        D = nc.weighted_delay(s.latency, s.rate, C, W_r, e, c.smallest, c.largest, c.queue_limit)
        service = RateLatency(s.rate, s.latency + W_r + 8.0 * c.largest / C)
        backlog = c.held if alpha is None else min(c.held, alpha.at(D))
        parts = {"ring": 8.0 * V_ring / RW + W_r + 8.0 * c.largest / C,
                 "priority levels": 8.0 * (above.sigma + above.held) / RW,
                 "DRR round": s.latency - TW, "own burst": D - s.latency - W_r - 8.0 * c.largest / C}
        if port.shaper_burst:
            parts["shaper"] = 8.0 * port.shaper_burst / RW
        out[c.name] = ClassBound(c.name, alpha, service, D, backlog, parts=parts,
                                 formula="D_i = T_i + W_r + min(8 (e_i - L_min)/R_i + 8 L_min/C, "
                                         "8 (Q_i - 1) L_i/R_i + 8 L_i/C), (R_i, T_i) of DRR over (R_W, T_W)")
