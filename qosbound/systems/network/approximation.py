"""An approximation of each flow's end-to-end delay distribution: per-hop waiting times of the port system's
mean-value forms, given an atom-and-exponential shape, taken independent across hops and convolved.

**At each hop** (port ``p``, the flow's class ``c`` there) a packet's delay is taken as ``S + X + W``:

* ``S`` -- its transmission, at the class's mean size;
* ``X`` -- the ring's work ahead of it once admitted: exponential with the mean ``T - S``, ``T`` the ring term of
  :func:`qosbound.analytic.pq_txq.txq_wait` (a full ring when a class of ``p`` is saturated there) or
  :func:`~qosbound.analytic.pq_txq.txq_wait_loaded` (the ring holding at most the mean backlog of the weighted
  classes), with the other classes' packets as the ring's occupants -- the port system's ``cobham_mean`` term
  (:mod:`qosbound.systems.port.closed_form`) -- and capped at ``W_r``, the most work the ring holds ahead of a
  packet (:func:`qosbound.systems.port.bounds.ring_terms`); none without a ring;
* ``W`` -- its wait before admission: Cobham's mean wait of its priority level (the weighted classes together the
  lowest level; :func:`qosbound.analytic.priority.cobham_wait`), 0 with probability ``1 - pi`` and otherwise
  exponential (:data:`qosbound.analytic.network_curves.wait_ccdf_expr`), ``pi`` the port's utilisation (1 when a
  class is saturated there).

**The rates at a hop** are every flow's long-run rate, its losses neglected; a saturated flow's is what the ports
before leave it (at its first port that port's rate less the other flows' there; further on what it brought, cut
to what each port leaves it), and its class is saturated (always backlogged) at its first port and wherever it
brings more than the port leaves it.

**Upstream pacing.** A port fed by one upstream port no faster than itself never queues (its packets arrive no
closer than their transmissions take; a packet waits at most the rest of one packet). So at each port the flows
are grouped by their *pacer*, the last port upstream on their path no faster than this one (a flow starting at
the port as one CBR stream is a group of its own: its clock paces it), and the load that
queues is the port's load less the largest group's: Cobham's waits take the port's real residual service
``R = sum lambda_i E[S_i^2] / 2`` but the priority levels' loads scaled by ``kappa = (rho - rho_g) / rho``
(``cobham_wait`` on the rates ``kappa lambda_i`` and second moments ``E[S_i^2] / kappa``), and the ring's
backlog is that of the scaled load. It is exact in two limits: a port whose traffic all comes from one pacer
(``kappa = 0``: the packet waits only for the one in service), and a port whose flows all start there
(``kappa = 1``: the port system's forms).

**End to end**: the hops' ``S`` and the links' propagation delays are added; the hops' ``X`` and ``W`` are
convolved as independent variables (on a grid of ``2^15`` cells: a quantile is the upper edge of its cell, within
one cell per part of the convolution's); the mean is the sum of the parts' means (a capped part's,
:data:`qosbound.analytic.network_curves.wait_capped_mean_expr`); a quantile is capped by the flow's proved bound
on its maximum (no delay exceeds it).

What it neglects (:data:`NEGLECTS`): the dependence of the hops (a packet delayed at one port arrives at the next
with the others it was queued with), the burst shaping by the upstream ports beyond the one pacer group, the
shape of each hop's waiting time and of the ring's work ahead (their exact atom and mean, an exponential tail),
the priority levels' and the flows' arrival laws (Cobham's Poisson arrivals;
superposed CBR calls are smoother), the DRR separation of the weighted classes (one FIFO level), the queue
limits and losses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.signal import fftconvolve

from qosbound.analytic.network_curves import wait_capped_mean, wait_ccdf
from qosbound.analytic.pq_txq import txq_wait, txq_wait_loaded
from qosbound.analytic.priority import cobham_wait, cobham_wait_saturated
from qosbound.errors import ScenarioError
from qosbound.systems.network.elements import Network
from qosbound.systems.port.bounds import ring_terms
from qosbound.systems.port.closed_form import unit_moments
from qosbound.systems.port.elements import SizeLaw

__all__ = ["HopApprox", "FlowApprox", "approximate", "NEGLECTS", "GRID_CELLS", "MEASURED_RATIO"]

#: What the approximation leaves out (every result's interval says it).
NEGLECTS = ("the dependence of the hops (their waits taken independent), the burst shaping by upstream ports beyond "
            "one pacer group per port, each hop's waiting-time law (an atom at 0 and an exponential tail with "
            "Cobham's mean; the ring's work ahead exponential with the ring term's mean), the arrival laws (taken "
            "Poisson), the DRR separation of the weighted classes, queue limits and losses")
#: Approximation / simulated, smallest and largest, over the mean, p99 and p99.9 of every flow of the WAN example,
#: a 4-hop tandem and a random mesh (``python benchmarks/bench_network.py --approximation``; docs/network.md).
MEASURED_RATIO = (0.68, 1.87)
#: Cells of the grid the hops' waits are convolved on.
GRID_CELLS = 2 ** 15
#: Smallest share of the load counted as queueing (Cobham's forms need positive rates).
_KAPPA_MIN = 1e-9


@dataclass(frozen=True)
class HopApprox:
    """A flow at one hop: ``transmission`` its own (s, at its mean size); ``ring`` its mean time in the ring after
    admission, the transmission included (s), of which the rest, ``ring - transmission``, varies (at most
    ``ring_cap`` s, the most work the ring holds ahead of a packet); ``wait`` its mean wait before admission (s),
    positive with probability ``busy``; ``load`` the port's utilisation and ``queueing`` the share of it that
    queues (``kappa``); ``propagation`` the link after (s)."""

    port: str
    cls: str
    transmission: float
    ring: float
    ring_cap: float
    wait: float
    busy: float
    load: float
    queueing: float
    propagation: float

    def parts(self) -> list[tuple[float, float, float]]:
        """The hop's random parts as (P(positive), mean s, cap s): the ring's work ahead, the wait."""
        out = []
        if self.ring > self.transmission and self.ring_cap > 0:
            out.append((1.0, self.ring - self.transmission, self.ring_cap))
        if self.wait > 0 and self.busy > 0:
            out.append((self.busy, self.wait, math.inf))
        return out


@dataclass(frozen=True)
class FlowApprox:
    """A flow's approximate end-to-end delay: its hops, or ``why`` there is none; ``cap`` the proved bound on its
    maximum (inf: none)."""

    flow: str
    hops: tuple[HopApprox, ...]
    cap: float = math.inf
    why: str = ""

    @property
    def fixed(self) -> float:
        """The deterministic part: the transmissions and the propagation delays, s."""
        return sum(h.transmission + h.propagation for h in self.hops)

    def law(self) -> tuple[np.ndarray, float]:
        """The hops' random parts convolved: (probability of each grid cell, the cell's width s); cell ``i`` holds
        the sums in ``[i, i + 1)`` cells up to one cell per part (module docstring)."""
        parts = [x for h in self.hops for x in h.parts()]
        if not parts:
            return np.ones(1), 0.0
        top = sum(min(40.0 * m / p, c) for p, m, c in parts)  # every tail below exp(-40) beyond it
        cell = top / GRID_CELLS
        x = np.arange(GRID_CELLS + 1) * cell
        pmf = np.ones(1)
        for p, m, c in parts:
            ccdf = np.where(x < c, wait_ccdf(p, m, x), 0.0)  # the mass beyond the cap falls in the cap's cell
            mass = -np.diff(ccdf)
            mass[0] += 1.0 - p
            pmf = np.clip(fftconvolve(pmf, mass)[:GRID_CELLS], 0.0, None)
        return pmf / pmf.sum(), cell

    @property
    def mean(self) -> float:
        """The mean of the law (each random part's mean below its cap), s."""
        return self.fixed + sum(wait_capped_mean(p, m, c) for h in self.hops for p, m, c in h.parts())

    def quantiles(self, qs: list[float]) -> list[float]:
        """The end-to-end delay's ``q``-quantiles (s), each capped by the proved maximum (module docstring)."""
        pmf, cell = self.law()
        cdf = np.cumsum(pmf)
        return [min(self.fixed + (int(np.searchsorted(cdf, q)) + 1) * cell, self.cap) for q in qs]


@dataclass(frozen=True)
class _Traffic:
    """A class at a port: packets/s, E[L] (B), E[L^2] (B^2), the sizes with their packet shares (for the ring's
    units), whether saturated there."""

    lam: float
    m1: float
    m2: float
    sizes: dict
    saturated: bool


def _long_run_rates(net: Network) -> tuple[dict[tuple[int, int], float], set]:
    """Each flow's long-run rate at each of its hops, bit/s: its offered rate; a saturated flow's, what the ports
    before leave it -- at its first port that port's rate less the other flows' there (shared among the saturated
    flows starting there), further on what it brought, cut to what the port leaves it beside the other flows (the
    saturated flows arriving there cut in proportion). Also the hops where a saturated flow keeps its class
    backlogged: its first, and every one where it brings more than the port leaves it (exactly as much, as where
    it crosses a port of its first port's rate, is left to the pacing groups)."""
    rates = {(f.index, h): f.offered for f in net.flows if not f.saturated for h in range(len(f.hops))}
    backlogged = set()
    for p in net.order:
        sat = [(k, h) for k, h in net.at[p] if net.flows[k].saturated]
        if not sat:
            continue
        room = max(net.ports[p].rate - sum(rates[m] for m in net.at[p] if m not in sat), 0.0)
        through = [m for m in sat if m[1] > 0]
        brought = sum(rates[m] for m in through)
        cut = min(1.0, room / brought) if brought > 0 else 1.0
        for m in through:
            rates[m] *= cut
        if through and brought > room * (1.0 + 1e-9):  # more than the port leaves it: it drops, always backlogged
            backlogged.update(through)
        first = [m for m in sat if m[1] == 0]
        for m in first:
            rates[m] = max(room - brought * cut, 0.0) / len(first)
            backlogged.add(m)
        for k, h in sat:
            if h + 1 < len(net.flows[k].hops):
                rates[(k, h + 1)] = rates[(k, h)]
    return rates, backlogged


def _law(f) -> SizeLaw:
    """The flow's size law; streams of different exponential laws: one exponential law of their mean."""
    if f.sizes is not None:
        return f.sizes
    pk = sum(s.packet_rate for s in f.streams)
    return SizeLaw((f.offered / (8.0 * pk),), (1.0,), exponential=True)


def _traffic(net: Network, p: str, rates: dict, backlogged: set) -> dict[str, _Traffic]:
    """The classes with flows at port ``p``."""
    acc: dict[str, list] = {}
    for k, h in net.at[p]:
        f = net.flows[k]
        law = _law(f)
        lam = rates[(k, h)] / (8.0 * law.mean)
        a = acc.setdefault(f.hops[h].cls, [0.0, 0.0, 0.0, {}, False])
        a[0] += lam
        a[1] += lam * law.mean
        a[2] += lam * law.second_moment
        for s, q in (zip(law.sizes, law.probs) if not law.exponential else ((law.mean, 1.0),)):
            a[3][s] = a[3].get(s, 0.0) + lam * q
        a[4] = a[4] or (k, h) in backlogged
    return {c: _Traffic(a[0], a[1] / a[0] if a[0] > 0 else 0.0, a[2] / a[0] if a[0] > 0 else 0.0, a[3], a[4])
            for c, a in acc.items() if a[0] > 0}


def _kappa(net: Network, p: str, rates: dict, load: float) -> float:
    """The share of port ``p``'s load that queues: less the largest group of flows sharing a pacer (module
    docstring): a group is the flows whose last port upstream no faster than ``p`` is the same, or one flow
    starting at ``p`` as one CBR stream (its packets arrive a period apart)."""
    C = net.ports[p].rate
    groups: dict[str, float] = {}
    for k, h in net.at[p]:
        f = net.flows[k]
        if h == 0 and len(f.streams) == 1 and f.streams[0].kind == "cbr" and f.streams[0].count == 1:
            groups[f.name] = rates[(k, h)] / C  # its own clock paces it
            continue
        for j in range(h - 1, -1, -1):
            if net.ports[f.hops[j].port].rate <= C:
                groups[f.hops[j].port] = groups.get(f.hops[j].port, 0.0) + rates[(k, h)] / C
                break
    if load <= 0:
        return 1.0
    return max((load - max(groups.values(), default=0.0)) / load, _KAPPA_MIN)


def _ring_mix(port, traffic: dict[str, _Traffic], own: set[str]) -> tuple[float, float, float] | None:
    """(E[k] units, E[k^2], E[L] B) of the packets of the classes not in ``own``, by packet rate; None: none."""
    mixed: dict[float, float] = {}
    for c, x in traffic.items():
        if c not in own:
            for s, q in x.sizes.items():
                mixed[s] = mixed.get(s, 0.0) + q
    return unit_moments(port, mixed)


def _port_terms(net: Network, p: str, rates: dict, backlogged: set) -> dict[str, tuple]:
    """Per class at port ``p``: (transmission s, ring term s, ring cap s, mean wait s, P(wait), load, kappa); raises
    ScenarioError when the
    forms do not apply (the text says why)."""
    port = net.ports[p]
    C = port.rate
    traffic = _traffic(net, p, rates, backlogged)
    levels = [[c.name for c in port.level(k) if c.name in traffic] for k in port.levels]
    levels = [lv for lv in levels if lv]
    weighted = [c.name for c in port.weighted if c.name in traffic]
    saturated = [c for c, x in traffic.items() if x.saturated]
    if any(port.cls(c).priority is not None for c in saturated):
        raise ScenarioError(f"a priority class is saturated at {p}")
    groups = levels + ([weighted] if weighted else [])
    lam = [sum(traffic[c].lam for c in g) for g in groups]
    m1 = [8.0 * sum(traffic[c].lam * traffic[c].m1 for c in g) / lg / C for g, lg in zip(groups, lam)]
    m2 = [64.0 * sum(traffic[c].lam * traffic[c].m2 for c in g) / lg / C ** 2 for g, lg in zip(groups, lam)]
    if saturated:
        load, kappa = 1.0, 1.0
        up = len(levels)
        waits = list(cobham_wait_saturated(lam[:up], m1[:up], m2[:up], m1[up], m2[up])) if up else []
        waits = [float(x) for x in waits] + [math.inf]
        low_queue = None
    else:
        load = float(sum(x * y for x, y in zip(lam, m1)))
        kappa = _kappa(net, p, rates, load)
        if kappa * load >= 1.0:
            raise ScenarioError(f"the load that queues at {p} is {kappa * load:.4g} of the link (>= 1)")
        waits = [float(x) for x in cobham_wait([kappa * x for x in lam], m1, [x / kappa for x in m2])]
        low_queue = lam[-1] * waits[-1] if weighted else 0.0
    out = {}
    for i, g in enumerate(groups):
        for c in g:
            if math.isinf(waits[i]):
                continue  # the saturated class (its flows have no delay metrics) or DRR beside it
            x = traffic[c]
            own = set(g) if port.cls(c).priority is not None else {c}
            mix = _ring_mix(port, traffic, own) if port.ring is not None else None
            if mix is None:
                ring = 8.0 * x.m1 / C
            else:
                Ek, Ek2, EL = mix
                args = (port.Q_t, Ek, Ek2, EL, C, lam[i], x.m1, port.units_of(x.m1))
                ring = txq_wait(*args) if low_queue is None else txq_wait_loaded(*args, kappa * low_queue)
            cap = ring_terms(port)[1] if port.ring is not None else 0.0
            out[c] = (8.0 * x.m1 / C, ring, cap, waits[i], 1.0 if saturated else min(load, 1.0), load, kappa)
    return out


def approximate(net: Network, caps: dict[str, float] | None = None) -> dict[str, FlowApprox]:
    """Every flow that is not saturated: its :class:`FlowApprox` (module docstring); ``caps`` the proved bounds
    on the flows' maxima (s) that cap the quantiles."""
    rates, backlogged = _long_run_rates(net)
    terms, why = {}, {}
    for p in net.order:
        try:
            terms[p] = _port_terms(net, p, rates, backlogged)
        except ScenarioError as e:
            why[p] = e.problem
    out = {}
    for f in net.flows:
        if f.saturated:
            continue
        cap = (caps or {}).get(f.name, math.inf)
        bad = next((f"{h.port}: {why[h.port]}" for h in f.hops if h.port in why), "")
        if not bad:
            bad = next((f"{h.port}: class {h.cls} shares DRR with a saturated class" for h in f.hops
                        if h.cls not in terms[h.port]), "")
        if bad:
            out[f.name] = FlowApprox(f.name, (), cap, bad)
            continue
        hops = tuple(HopApprox(h.port, h.cls, *terms[h.port][h.cls], net.ports[h.port].delay) for h in f.hops)
        out[f.name] = FlowApprox(f.name, hops, cap)
    return out
