"""The port by closed forms, per class.

* ``X.delay.max`` -- the worst-case delay of :mod:`qosbound.systems.port.bounds` (proved in
  :mod:`qosbound.analytic.port` and :mod:`qosbound.analytic.drr`): an upper bound, hence also on every
  quantile and on the mean of the class.
* ``X.delay.worst_case_mean`` (top priority level) -- Ferrari, Pau & Raffaelli 2001, eq. (7), with the
  level's utilisation: an upper bound on the level's mean delay by the argument of
  :mod:`qosbound.analytic.pq_txq` (Poisson, CBR or an aggregate of them; not for on-off).
* ``X.delay.cobham_mean`` (priority levels) -- Cobham's M/G/1 non-preemptive priority mean wait (Cobham
  1954; Bertsekas & Gallager sec. 3.5.3) with the levels as classes and the weighted classes together as the
  lowest (saturated when one of them is), plus the ring term of :mod:`qosbound.analytic.pq_txq` (the mean
  time in the ring after admission, a mean-value fixed point; the other classes' packets as the ring's
  "best effort"): an approximation. For a port with one priority class over one saturated class it is
  ``pq_txq``'s ``EF.delay.cobham_mean`` exactly.
* Weighted classes: ``X.rate`` (the DRR allocation, ``C_W w_i / sum w`` over the classes with traffic, ``C_W``
  the link less the priority levels' long-run rates); ``X.throughput`` (their long-run max-min allocation);
  and the AF queue of Takeo & Tasaka (``af``'s closed forms, :mod:`qosbound.analytic.red_queue`: drops per
  precedence, mean delay) on the class's residual service -- its max-min rate over the link less the
  priority levels, as ``af`` serves a class at its max-min CBWFQ rate. With no priority traffic and no
  ring, ``af``'s numbers exactly.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from qosbound.analytic import cbr_loss, ef_bound, ferrari, priority
from qosbound.analytic.cbwfq import maxmin, service_rates
from qosbound.analytic.markers import marker_fractions
from qosbound.analytic.pq_txq import aggregation_degree_exact, txq_wait, txq_wait_loaded
from qosbound.analytic.wred import Profile
from qosbound.errors import ScenarioError
from qosbound.systems.pq_txq.params import Params
from qosbound.results import Interval, Result
from qosbound.systems.af.closed_form import solve_sized
from qosbound.systems.af.inputs import ClassInput
from qosbound.systems.port.bounds import class_bounds
from qosbound.systems.port.elements import Port, TrafficClass

__all__ = ["closed_form", "allocation", "residual_rate", "queue_inputs", "approximation_of", "tail_profile",
           "queue_neglects", "class_queue_results"]


#: What the approximations leave out of a shaped port (the bounds include it: qosbound.analytic.port).
SHAPER_NEGLECT = ("; the parent shaper's bursts (the port served steadily at the shaper's rate; under a faster "
                  "interface the ring holding at most the packet admitted before)")


#: Below this probability that the shaper holds traffic back, the approximations take its bucket as never empty.
HOLD_NEGLIGIBLE = 1e-3


def shaper_hold_probability(port: Port) -> float:
    """An approximation of the long-run probability that a parent shaper holds traffic back: its token deficit
    (``bc`` less the tokens) is the workload of a queue served at the shaper's rate ``C`` and fed by every
    packet, and the shaper holds a packet back when that workload would pass ``bc``. With the traffic taken as
    compound Poisson (each stream at its long-run packet rate and size law), the Cramer-Lundberg approximation
    of the workload's tail (Asmussen, Applied Probability and Queues, 2003, XIII.5) gives
    ``P(W > bc) ~ rho exp(-s bc)``, ``s > 0`` solving ``sum_i lam_i (E[exp(s L_i)] - 1) = s C / 8``. 1 with a
    saturated class or at ``rho >= 1``; CBR streams are smoother than Poisson (over-estimated), on-off streams
    burstier (under-estimated)."""
    C, bc = port.rate, port.shaper_burst
    if any(c.saturated for c in port.active):
        return 1.0
    parts = []  # (packet rate, sizes, probs) of every stream
    for c in port.active:
        for st in c.streams:
            rate = st.rate * st.count
            law = st.sizes
            sizes = np.array(law.sizes if not law.exponential else (law.sizes[0],), float)
            probs = np.array(law.probs if not law.exponential else (1.0,), float)
            parts.append((rate / (8.0 * float(sizes @ probs)), sizes, probs, law.exponential))
    rho = sum(lam * float(sz @ pr) * 8.0 for lam, sz, pr, _ in parts) / C
    if rho >= 1.0:
        return 1.0
    if rho <= 0.0:
        return 0.0

    def excess(x):  # sum lam (E[e^{xL}] - 1) - x C / 8, negative just above 0 and increasing past its minimum
        tot = -x * C / 8.0
        for lam, sz, pr, exp_law in parts:
            if exp_law:
                m = float(sz[0])
                if x * m >= 1.0:
                    return math.inf
                tot += lam * (1.0 / (1.0 - x * m) - 1.0)
            else:
                with np.errstate(over="ignore"):
                    tot += lam * (float(pr @ np.exp(np.minimum(x * sz, 700.0))) - 1.0)
        return tot

    hi = 1.0 / max(float(sz.max()) for _, sz, _, _ in parts)
    while excess(hi) < 0.0:
        hi *= 2.0
    lo = 0.0
    for _ in range(200):  # bisection between the root's two sides: excess(lo) <= 0 < excess(hi)
        mid = 0.5 * (lo + hi)
        if excess(mid) <= 0.0:
            lo = mid
        else:
            hi = mid
    return float(min(1.0, rho * math.exp(-hi * bc)))


def approximation_view(port: Port) -> tuple[Port, str]:
    """The port the approximations serve, and what that neglects of its parent shaper (``"; ..."``, or empty
    without a shaper). A shaper that holds traffic back with probability below :data:`HOLD_NEGLIGIBLE`
    (:func:`shaper_hold_probability`) is taken as absent: the port served at its interface's rate (a deep
    bucket under a load below the shaper's rate is hardly ever empty, and then every packet passes at once).
    Otherwise the port is served steadily at the shaper's rate (a saturated port: the bucket is always empty)."""
    if not port.shaper_burst:
        return port, ""
    p = shaper_hold_probability(port)
    if p < HOLD_NEGLIGIBLE and port.line_rate > port.rate:
        view = replace(port, rate=port.line_rate, shaper_burst=0.0, line_rate=0.0)
        return view, (f"; the parent shaper (its bucket of {port.shaper_burst:.6g} B taken never empty: the "
                      f"shaper holds traffic back with probability about {p:.2g}; the port served at the "
                      "interface's rate)")
    return port, SHAPER_NEGLECT


def tail_profile(K: int) -> Profile:
    """A RED profile that never drops below the queue limit: tail drop as the RED-family models take it
    (the instantaneous solution is then the M/M/1/K queue)."""
    th = (K - 0.5, K - 0.5, K - 0.5)
    return Profile(min_th=th, max_th=(float(K),) * 3, P_d=(1.0, 1.0, 1.0), alpha=1.0, mode="wred")


def residual_rate(port: Port) -> float:
    """The link less the priority levels' long-run rates, bit/s (what the weighted classes share)."""
    return port.rate - sum(c.long_run_rate for c in port.active if c.priority is not None)


def allocation(port: Port) -> tuple[np.ndarray, np.ndarray, float]:
    """(guaranteed shares, max-min throughputs, residual rate) of the weighted classes with traffic, bit/s:
    ``C_W w_i / sum w``, and the weighted max-min allocation of ``C_W`` to their offered rates (saturated:
    unbounded)."""
    w = port.weighted
    CW = residual_rate(port)
    weights = np.array([c.weight for c in w])
    shares = CW * weights / weights.sum()
    demand = np.array([2.0 * port.rate if c.saturated else c.offered for c in w])
    return shares, maxmin(CW, weights, demand), CW


def _cbr_or_poisson(c: TrafficClass) -> tuple[str, str] | None:
    """(arrivals, sizes) for the marker and queue formulas when the class is one Poisson or CBR stream of a
    fixed or exponential size law, else None."""
    if len(c.streams) != 1 or c.streams[0].count != 1:
        return None
    s = c.streams[0]
    if s.kind not in ("poisson", "cbr"):
        return None
    if s.sizes.exponential:
        return s.kind, "exponential"
    return (s.kind, "fixed") if len(s.sizes.sizes) == 1 else None


def _fractions(kind, spec, rate, size, cir, cbs, second_rate, second_depth, aware, pre):
    arrivals, sizes = spec
    return marker_fractions(kind, arrivals, sizes, float(rate), float(size), float(cir), float(cbs),
                            second_rate if kind == "trtcm" else None,
                            second_depth if kind != "two-colour" else None, bool(aware), tuple(pre))


def queue_inputs(port: Port, c: TrafficClass, mu_share: float) -> tuple[ClassInput, float, list[str]]:
    """The af queue's input for a weighted class: per-precedence packet rates into the queue (after marker and
    policer), its service rate at ``mu_share`` bit/s, its profile; the policer's loss; what it neglects."""
    gaps: list[str] = []
    L = c.mean_size
    lam_tot = c.offered / (8.0 * L)
    spec = _cbr_or_poisson(c)
    mix = np.zeros(3)
    mix[:len(c.mix)] = c.mix
    prec_packets = mix.copy()
    prec_bytes = mix.copy()
    marking = None
    if c.marker is not None:
        mk = c.marker
        if spec is None:
            spec = ("poisson", "exponential")
            gaps.append("the class's arrival law in the marker's colour fractions (taken as Poisson with "
                        "exponential sizes of the mean size)")
        pre = tuple(mix) if mk.aware else (1.0, 0.0, 0.0)
        f = _fractions(mk.kind, spec, c.offered, L, mk.cir, mk.cbs, mk.second_rate, mk.second_depth, mk.aware, pre)
        marking = f
        prec_packets = np.zeros(3)
        prec_bytes = np.zeros(3)
        for colour in range(3):
            prec_packets[mk.to_precedence[colour]] += f.packets[colour]
            prec_bytes[mk.to_precedence[colour]] += f.bytes[colour]
        if not all(f.exact):
            gaps.append(f"error of the marker's colour fractions ({f.neglects})")
    police_loss = 0.0
    if c.police is not None:
        p = c.police
        pspec = spec or ("poisson", "exponential")
        if spec is None:
            gaps.append("the class's arrival law in the policer's colour fractions (taken as Poisson with "
                        "exponential sizes of the mean size)")
        f = _fractions(p.kind, pspec, c.offered, L, p.cir, p.cbs, p.second_rate, p.second_depth, False,
                       (1.0, 0.0, 0.0))
        if not all(f.exact):
            gaps.append(f"error of the policer's colour fractions ({f.neglects})")
        moved = np.zeros(3)
        for colour in range(3):
            share = f.packets[colour]
            if share <= 0:
                continue
            act = p.actions[colour]
            if act == "drop":
                police_loss += share
            elif act == "remark":
                moved[p.remark[colour]] += share
            else:
                moved += share * prec_packets
        if not p.metering:
            gaps.append("the conditional policer (taken as always metering)")
        gaps.append("the correlation of the policer's colour with the packet's precedence (taken independent)")
        prec_packets = moved  # fractions of the offered packets reaching the queue, per precedence
        prec_bytes = prec_packets.copy()
    lam = lam_tot * prec_packets
    frac = prec_packets / prec_packets.sum() if prec_packets.sum() > 0 else prec_packets
    prof = c.dropper.profile() if c.dropper.red else tail_profile(c.queue_limit)
    sizes = marking.mean_sizes(L) if marking is not None else np.full(3, L)
    ci = ClassInput(c.name, lam, mu_share / (8.0 * L), mu_share, int(c.queue_limit), prof, frac, L,
                    prec_bytes / prec_bytes.sum() if prec_bytes.sum() > 0 else prec_bytes,
                    np.asarray(sizes, dtype=float), marking)
    return ci, police_loss, gaps


def approximation_of(port: Port, c: TrafficClass, setting: str) -> str:
    """How the closed form treats the EWMA average (af's rule): fixed average for small weights, else the
    instantaneous queue; tail drop is always the instantaneous (M/M/1/K) queue."""
    if not c.dropper.red:
        return "instantaneous"
    if setting != "auto":
        return setting
    return "fixed-average" if c.dropper.alpha <= 1.0 / 64 else "instantaneous"


def queue_neglects(port: Port, c: TrafficClass, approx: str | None) -> list[str]:
    """What the af queue of class ``c`` leaves out of the port's semantics (empty: it is exact)."""
    out = []
    if c.dropper.red:
        if approx == "fixed-average":
            out.append("EWMA averaging dynamics (the average held fixed at its stationary mean)")
        elif approx == "instantaneous" and c.dropper.alpha < 1.0:
            out.append(f"EWMA averaging (alpha = {c.dropper.alpha:.3g} taken as 1: the average is the queue)")
        if c.dropper.mode != "wred":
            out.append("FIFO order of colours in the queue (the departing colour drawn in proportion to the "
                       "queue's composition)")
    s = c.streams[0]
    if len(c.streams) > 1 or s.count > 1 or s.kind != "poisson" or not s.sizes.exponential:
        out.append("the class's arrival law and sizes (the queue takes Poisson input with exponential sizes of "
                   "the mean size)")
    if c.marker is not None:
        out.append("correlation of the marker's colours with arrival times and packet sizes (colours taken as "
                   "independent Poisson streams, every colour served at the class's mean size)")
    if len(port.weighted) > 1:
        out.append("the other classes' burstiness (the class is served at its max-min DRR rate as if the others "
                   "sent steadily at their mean rates)")
    if any(x.priority is not None for x in port.active):
        out.append("the priority levels' burstiness (the link less their long-run rates taken as a steady "
                   "residual rate)")
    if port.ring is not None:
        out.append("the tx-ring (admission to the ring taken as the class's exponential service)")
    if port.shaper_burst:
        out.append(approximation_view(port)[1][2:])
    return out


def class_queue_results(port: Port, c: TrafficClass, method: str, drop, delay, mean_queue, police_loss: float,
                        ci: ClassInput, interval_fn, prov: dict) -> list[Result]:
    """The port's names for one weighted class's queue solution (per-precedence drops, losses, mean delay,
    throughput); ``interval_fn(key, value)`` gives each result's interval. With a ring the mean delay adds the
    ring term (:func:`weighted_ring_term`: the queue's service is the admission to the ring)."""
    n = c.name
    out = []
    lam = ci.lam
    tot = float(lam.sum())
    for k, p in enumerate(c.precedences):  # every precedence: the drop a packet of it would see (as af reports)
        out.append(Result(f"{n}.drop.{p}", method, float(drop[k]), "1", interval_fn(f"drop{k}", drop[k]), prov))
    lq = float(lam @ drop / tot) if tot > 0 else 0.0
    out.append(Result(f"{n}.loss.queue", method, lq * (1.0 - police_loss), "1",
                      interval_fn("dropall", lq * (1.0 - police_loss)), prov))
    loss = police_loss + (1.0 - police_loss) * lq
    out.append(Result(f"{n}.loss", method, loss, "1", interval_fn("dropall", loss), prov))
    acc = lam * (1 - np.asarray(drop))
    thr_pk = float(acc.sum())
    mean_delay = float(acc @ np.asarray(delay) / thr_pk) if thr_pk > 0 else 0.0
    T = weighted_ring_term(port, c)
    dprov = prov if T is None else dict(prov, ring_term_s=T)
    out.append(Result(f"{n}.delay.mean", method, mean_delay + (T or 0.0), "s",
                      interval_fn("delay", mean_delay) if T is None else
                      Interval.approximation(mean_delay + T, neglects=_neglects_of(interval_fn("delay", mean_delay))
                                             + "; the ring's time as a mean-value fixed point"), dprov))
    sizes = ci.colour_sizes if ci.colour_sizes is not None else np.full(3, ci.size)
    thr = float(8.0 * (acc @ sizes))
    out.append(Result(f"{n}.throughput", method, thr, "bit/s", interval_fn("throughput", thr), prov))
    return out


def _bound_results(port: Port) -> list[Result]:
    out = []
    for name, b in class_bounds(port).items():
        if not math.isfinite(b.delay):
            continue
        c = port.cls(name)
        prov = {"formula": b.formula, "source": "qosbound.analytic.port (proof in its docstring)"
                + ("; qosbound.analytic.drr (Boyer, Stea & Sofack 2012)" if c.priority is None else ""),
                "service_rate_bit_s": b.service.rate, "service_latency_s": b.service.latency,
                "arrival_curve": [[k.burst, k.rate] for k in b.arrival.buckets] if b.arrival else None,
                "backlog_bound_bytes": b.backlog, "decomposition_s": b.parts}
        note = (f"worst case of every delivered {name} packet: "
                + ", ".join(f"{k} {v * 1e3:.4g} ms" for k, v in b.parts.items()))
        out.append(Result(f"{name}.delay.max", "closed-form", b.delay, "s", Interval.upper_bound(b.delay, note=note),
                          prov, bounds=(f"{name}.delay.p*", f"{name}.delay.mean")))
    return out


def long_run_rates(port: Port) -> dict[str, float]:
    """Each class's long-run rate through the ring, bit/s: a priority class's (capped by its policer), a
    weighted class's max-min allocation."""
    _, thr, _ = allocation(port) if port.weighted else (None, np.zeros(0), None)
    rates = {x.name: x.long_run_rate for x in port.active if x.priority is not None}
    rates.update({x.name: float(t) for x, t in zip(port.weighted, thr)})
    return rates


def ring_mix(port: Port, c: TrafficClass) -> tuple[float, float, float] | None:
    """(E[k], E[k^2] in units, E[L] in bytes) of the packets of every class but ``c``'s level (by long-run packet
    rate; weighted classes at their max-min allocation): the ring's "best effort" seen by ``c``. None when a
    law is exponential or no other class has traffic."""
    rates = long_run_rates(port)
    mixed: dict[float, float] = {}
    for x in port.active:
        if x.name == c.name or (c.priority is not None and x.priority == c.priority):
            continue
        law = x.size_law()
        if law is None or law.exponential:
            return None
        pk = rates[x.name] / (8.0 * x.mean_size)
        for s, p in zip(law.sizes, law.probs):
            mixed[s] = mixed.get(s, 0.0) + pk * p
    return unit_moments(port, mixed)


def unit_moments(port: Port, mixed: dict[float, float]) -> tuple[float, float, float] | None:
    """(E[k], E[k^2] in ring units, E[L] in bytes) of packet sizes ``mixed`` (bytes -> weight, any scale) on
    ``port``'s ring; None when the weights sum to nothing."""
    tot = sum(mixed.values())
    if tot <= 0:
        return None
    bs = np.array(sorted(mixed))
    bp = np.array([mixed[s] for s in bs]) / tot
    kb = np.array([port.units_of(s) for s in bs], dtype=float)
    return float(bp @ kb), float(bp @ kb ** 2), float(bp @ bs)


def ring_term(port: Port, c: TrafficClass, lam: float, low_queue: float | None) -> float | None:
    """The mean time a packet of ``c`` spends in the ring after its admission, its transmission included (s):
    :func:`qosbound.analytic.pq_txq.txq_wait` with the other classes as the ring's best effort
    (:func:`ring_mix`); with ``low_queue`` (the mean backlog below, packets) its loaded form. None without a
    ring or without a mix."""
    if port.ring is None:
        return None
    if port.line_rate > port.rate:
        return paced_ring_term(port, c)
    mix = ring_mix(port, c)
    if mix is None:
        return None
    Ek, Ek2, EL = mix
    L = c.mean_size
    if low_queue is None:
        return txq_wait(port.Q_t, Ek, Ek2, EL, port.rate, lam, L, port.units_of(L))
    return txq_wait_loaded(port.Q_t, Ek, Ek2, EL, port.rate, lam, L, port.units_of(L), low_queue)


def paced_ring_term(port: Port, c: TrafficClass) -> float:
    """The ring term of a port whose parent shaper is slower than its interface (s): the shaper paces the ring's
    admissions at its rate ``C`` while the ring drains at the interface's ``C_line > C``.

    Steadily (the bucket empty, as on a port kept busy), a packet of ``L`` bytes passes the shaper ``8 L / C``
    after the one before it (its own tokens), which left the wire ``8 L' / C_line`` after its own admission; so
    it finds the ring empty unless ``L' / C_line > L / C``, and then waits out the rest of that one packet. The
    term is ``8 L / C_line + E[(8 L' / C_line - 8 L / C)^+]`` over ``c``'s sizes ``L`` and the port's packets
    ``L'`` by long-run packet rate. What it neglects: the bucket's bursts (after an idle spell the shaper passes
    up to ``bc`` bytes at once and the ring queues them), and chains of more than one packet ahead. Without it
    the ring would be taken full and drained at the shaper's rate -- the steady state of an unshaped port, not
    of this one (on examples/configs/branch-iosxe.cfg, a 100 Mbit/s shaper on a 1 Gbit/s interface, that gave a
    15 ms ring term against a simulated mean delay of 0.08 ms)."""
    C, C_line = port.rate, port.line_rate
    own = c.size_law()
    sizes, probs = (own.sizes, own.probs) if own is not None and not own.exponential else ((c.mean_size,), (1.0,))
    rates = long_run_rates(port)
    ahead: dict[float, float] = {}
    for x in port.active:
        law = x.size_law()
        pairs = zip(law.sizes, law.probs) if law is not None and not law.exponential else [(x.mean_size, 1.0)]
        for s_, p_ in pairs:
            ahead[s_] = ahead.get(s_, 0.0) + rates[x.name] / (8.0 * x.mean_size) * p_
    total = sum(ahead.values())
    T = 0.0
    for L, p in zip(sizes, probs):
        wait = sum(w * max(8.0 * Lp / C_line - 8.0 * L / C, 0.0) for Lp, w in ahead.items()) / total \
            if total > 0 else 0.0
        T += p * (8.0 * L / C_line + wait)
    return T


def _cobham(port: Port):
    """Cobham's mean waits with the priority levels as classes 1..K and the weighted classes together as the
    lowest: (waits per level, the lowest class's mean queue in packets or None when it is saturated, the form);
    None when the queue is unstable or a level has no traffic model."""
    C = port.rate
    lam, m1, m2 = [], [], []
    for k in port.levels:
        members = port.level(k)
        pk = [x.long_run_rate / (8.0 * x.mean_size) for x in members]
        lam.append(sum(pk))
        m1.append(8.0 * sum(p * x.mean_size for p, x in zip(pk, members)) / sum(pk) / C)
        m2.append(64.0 * sum(p * _m2(x) for p, x in zip(pk, members)) / sum(pk) / C ** 2)
    w = port.weighted
    if not w:
        if not lam:
            return None
        return [float(x) for x in priority.cobham_wait(lam, m1, m2)], 0.0, "no weighted traffic"
    _, thr, _ = allocation(port)
    pk_w = np.array([t / (8.0 * c.mean_size) for c, t in zip(w, thr)])
    s1 = 8.0 * float(pk_w @ [c.mean_size for c in w] / pk_w.sum()) / C
    s2 = 64.0 * float(pk_w @ [_m2(c) for c in w] / pk_w.sum()) / C ** 2
    if any(c.saturated for c in w):
        if not lam:
            return [], None, "saturated weighted classes"
        return [float(x) for x in priority.cobham_wait_saturated(lam, m1, m2, s1, s2)], None, \
            "saturated weighted classes"
    lam_w = float(sum(c.packet_rate for c in w))
    waits = [float(x) for x in priority.cobham_wait(lam + [lam_w], m1 + [s1], m2 + [s2])]
    return waits[:-1], lam_w * waits[-1], "weighted classes with their loads"


def _priority_means(port: Port) -> list[Result]:
    """Cobham's mean per priority level plus the ring term; eq. (7) and the aggregation degree for level 1."""
    out = []
    levels = port.levels
    if not levels:
        return out
    shaped = port.shaper_burst
    port, shaper_note = approximation_view(port)
    C = port.rate
    u = port.unit
    try:
        cob = _cobham(port)
    except ScenarioError:  # unstable at the long-run rates: no approximation
        cob = None
    for i, k in enumerate(levels if cob is not None else []):
        waits, low, form = cob
        members = port.level(k)
        if any(x.size_law() is None for x in members) or (port.ring is not None and ring_mix(port, members[0]) is None):
            continue
        lam_k = sum(x.long_run_rate / (8.0 * x.mean_size) for x in members)
        W = waits[i]
        T = _ring_or_own(port, members[0], lam_k, low, members[0].mean_size)
        M = W + T
        for c in members:
            out.append(Result(
                f"{c.name}.delay.cobham_mean", "closed-form", M, "s",
                Interval.approximation(M, neglects="the ring dynamics beyond a mean-value fixed point for the time "
                                                   "in it, the queue limits, and the arrival law (taken Poisson)"
                                                   + shaper_note),
                {"formula": "W_k + T, W_k Cobham's non-preemptive priority wait (levels as classes, the weighted "
                            f"classes the lowest: {form}), T the ring term of qosbound.analytic.pq_txq",
                 "source": "Cobham 1954; Bertsekas & Gallager, Data Networks, sec. 3.5.3; ring term approximate",
                 "W_k": W, "T_ring": T, "level": k},
                estimates=f"{c.name}.delay.mean"))
    top = port.level(levels[0])
    # eq. (7) counts the ring's units at line rate; a parent shaper's wait for its interval is not in it
    if not shaped and all(s.kind in ("poisson", "cbr") for c in top for s in c.streams):
        k_max = max(port.units_of(L) for x in port.active for law in [x.size_law()] if law is not None
                    for L in (law.sizes if not law.exponential else (law.largest,)))
        rho = sum(c.long_run_rate for c in top) / C
        T_u = 8.0 * u / C
        Wm = float(ferrari.w(k_max, rho, port.Q_t, T_u))
        for c in top:
            out.append(Result(
                f"{c.name}.delay.worst_case_mean", "closed-form", Wm, "s",
                Interval.upper_bound(Wm, note="Ferrari et al.'s worst case of the mean delay of the top level: the "
                                              "maximum residual service k*T_u in Cobham's formula and Q_t+k-1 full "
                                              "ring units"),
                {"formula": ferrari.eq7_text, "source": "Ferrari et al. 2001, eq. (7)", "k": k_max, "rho": rho,
                 "Q_t": port.Q_t, "T_u": T_u,
                 "note": "an upper bound on the mean by the argument of qosbound.analytic.pq_txq (whatever the "
                         "classes below do); not a bound on the maximum delay"},
                bounds=(f"{c.name}.delay.mean",)))
    for c in port.active:
        if c.priority is not None and (len(c.streams) > 1 or c.streams[0].count > 1):
            rates = [s.rate for s in c.streams for _ in range(s.count)]
            A, text = aggregation_degree_exact(rates)
            out.append(Result(f"{c.name}.aggregation_degree", "closed-form", float(A), "1",
                              Interval.exact(float(A), note=f"A = {text} in rational arithmetic"),
                              {"formula": "A = 1 - l_max/L_BA", "source": "Ferrari et al. 2001, eq. (1)", "A": text}))
    return out


def weighted_ring_term(port: Port, c: TrafficClass) -> float | None:
    """The ring term of a weighted class (:func:`ring_term`, loaded by Cobham's lowest-class queue when no class
    is saturated), or None without a ring."""
    if port.ring is None:
        return None
    try:
        cob = _cobham(port)
    except ScenarioError:
        return None
    return None if cob is None else ring_term(port, c, c.packet_rate, cob[1])


def _neglects_of(iv: Interval) -> str:
    return iv.neglects or "nothing else"


def _ring_or_own(port: Port, c: TrafficClass, lam: float, low_queue: float | None, L: float) -> float:
    """The ring term, or without a ring the packet's own transmission (at the interface's rate)."""
    T = ring_term(port, c, lam, low_queue)
    return 8.0 * L / max(port.rate, port.line_rate) if T is None else T


def _m2(c: TrafficClass) -> float:
    """E[L^2] of a class's packets (bytes^2), by packet rate over its streams."""
    if len(c.streams) == 1:
        return c.streams[0].sizes.second_moment
    return sum(s.packet_rate * s.sizes.second_moment for s in c.streams) / c.packet_rate


def _weighted_results(port: Port, setting: str) -> list[Result]:
    out = []
    w = port.weighted
    if not w:
        return out
    shares, thr, CW = allocation(port)
    prio = any(c.priority is not None for c in port.active)
    for c in port.classes:  # a declared weighted class without traffic is allocated nothing
        if c.priority is None and not c.has_traffic and not c.implicit:
            out.append(Result(f"{c.name}.rate", "closed-form", 0.0, "bit/s", Interval.exact(0.0),
                              {"formula": "a class without traffic is never backlogged"}))
    for c, sh, t in zip(w, shares, thr):
        note = ("the priority levels taken at their long-run rates (their losses neglected)" if prio else "")
        # a shaper's long-run rate is its rate: the DRR shares are unchanged by its bursts
        iv = (Interval.approximation(float(sh), neglects=note) if prio else Interval.exact(float(sh)))
        out.append(Result(f"{c.name}.rate", "closed-form", float(sh), "bit/s", iv,
                          {"formula": "C_W w_i / sum of w over the classes with traffic (DRR quanta in proportion)",
                           "source": "Takeo & Tasaka 2003, sec. II.B (CBWFQ); Shreedhar & Varghese 1996 (DRR)",
                           "residual_rate_bit_s": CW}))
        if c.saturated:
            neg = "the other classes' burstiness and losses (weighted max-min of their mean rates)"
            out.append(Result(f"{c.name}.throughput", "closed-form", float(t), "bit/s",
                              Interval.approximation(float(t), neglects=neg),
                              {"formula": "weighted max-min allocation of C_W to the offered rates",
                               "source": "qosbound.analytic.cbwfq.maxmin", "residual_rate_bit_s": CW}))
    view, _ = approximation_view(port)
    if view is not port:  # the queues served at the interface's rate (the shaper taken as never holding back)
        w = view.weighted
        CW = allocation(view)[2]
    demand = np.array([2.0 * CW if c.saturated else c.offered for c in w])
    rates = service_rates(CW, [c.weight for c in w], demand)
    for c, mu_share in zip(w, rates):
        if c.saturated:
            continue
        ci, police_loss, gaps = queue_inputs(view, c, float(mu_share))
        approx = approximation_of(view, c, setting)
        sol, mu = solve_sized(ci, approx)
        gaps = gaps + queue_neglects(port, c, approx)
        prov = {"formula": sol.method, "source": "Takeo & Tasaka 2003 sec. II.A (P(avr)); Kleinrock eq. 3.11",
                "module": "qosbound.analytic.red_queue", "service_rate_pps": mu, "share_bit_s": ci.share,
                "alpha": ci.profile.alpha, "dropper": c.dropper.mode, "neglects": gaps}

        def iv(_k, v, gaps=gaps):
            return Interval.approximation(float(v), "; ".join(gaps)) if gaps else Interval.exact(float(v))

        out += class_queue_results(view, c, "closed-form", sol.drop, sol.delay, sol.mean_queue, police_loss, ci, iv,
                                   prov)
    return out


def cbr_calls_params(port: Port) -> tuple[TrafficClass, Params] | None:
    """The port as the PQ + TxQ system of :mod:`qosbound.analytic.cbr_loss`, when its derivation covers it: the
    highest priority level is one class of identical CBR calls (one packet size, uniform random phases, no
    policer or marker, tail drop at its queue limit ``K``), with ``rho < 1``. Whenever that class has a packet
    queued only it enters the ring (strict priority), which is all the derivation asks of the rest of the port;
    the rest enters only through the largest packet and the ring's fill fraction, as best effort does. None when
    the port is not of that shape."""
    if not port.levels:
        return None
    top = port.level(port.levels[0])
    if len(top) != 1:
        return None
    c = top[0]
    law = c.size_law()
    if (c.police is not None or c.marker is not None or c.dropper.red or law is None or law.exponential
            or len(set(law.sizes)) != 1):
        return None
    if any(s.kind != "cbr" or s.phase is not None for s in c.streams) or len({s.rate for s in c.streams}) != 1:
        return None
    others = [x.largest for x in port.active if x is not c]
    if any(not math.isfinite(L) for L in others):
        return None
    L = float(law.sizes[0])
    one = c.streams[0].rate
    streams = tuple((one, "cbr", -1.0) for s in c.streams for _ in range(s.count))
    p = Params(C=port.rate, Q_t=port.Q_t, unit=port.unit, pq_cap=c.queue_limit, ef_size=L, ef_rate=c.offered,
               lam=c.packet_rate, arrivals="cbr" if len(streams) == 1 else "aggregate",
               be_sizes=np.array(others or [L], dtype=float), be_probs=np.full(len(others or [L]), 1.0 / len(others or [L])),
               burst=L, ef_streams=streams if len(streams) > 1 else ())
    return (c, p) if cbr_loss.applies(p) else None


def _cbr_loss_results(port: Port) -> list[Result]:
    """``<class>.loss.cbr_bound`` of the top priority class where :func:`cbr_calls_params` applies."""
    found = cbr_calls_params(port)
    if found is None:
        return []
    c, p = found
    V = ef_bound.txq_work(p.Q_t, p.unit, p.C, port.largest, port.phi)
    return [cbr_loss.loss_result(p, float(V), cls=c.name)]


def _priority_police_results(port: Port) -> list[Result]:
    """``X.loss.police`` of each priority class whose policer meters every packet (not conditional, or
    conditional on a port congested at every arrival: :func:`~qosbound.systems.port.classes.always_congested`,
    where only the packets of time 0, none in the long run, pass unmetered). The policer meets the packets
    before the queue, so nothing behind it changes what it drops.

    * One CBR or Poisson stream of one size (or exponential sizes): the long-run fraction of its packets in
      the colours the policer drops, from the meter's colour fractions (:mod:`qosbound.analytic.markers`),
      exact or an approximation saying what it neglects -- as for a weighted class's policer.
    * Any other traffic of one packet size (many calls, several streams): a **lower bound**, reported where it
      is positive. Proof: every packet that passes conforms to the policer's buckets
      (:meth:`~qosbound.systems.port.elements.Policer.passed`), so the bytes passed in ``[0, t]`` are at most
      ``b + R t`` for the bucket of the smallest rate ``R`` (the class's long-run rate cap); the class offers
      ``r t`` in the long run, so the fraction dropped is at least ``1 - R / r`` -- of the bytes, and of the
      packets since they are all one size. It holds for any arrival law (Le Boudec & Thiran, Network
      Calculus, 2001, Section 1.2: the token-bucket constraint); where the traffic is below the cap it says
      nothing (0), and nothing is reported."""
    out = []
    for c in port.active:
        p = c.police
        if c.priority is None or p is None or not p.metering:
            continue
        spec = _cbr_or_poisson(c)
        prov = {"source": "qosbound.analytic.markers", "policer": p.kind, "conditional": p.conditional}
        if spec is None:
            law = c.size_law()
            if law is None or law.exponential or len(law.sizes) != 1:
                continue
            low = 1.0 - c.long_run_rate / c.offered
            if low <= 0.0:
                continue
            out.append(Result(f"{c.name}.loss.police", "closed-form", float(low), "1",
                              Interval.lower_bound(float(low)),
                              {**prov, "formula": "1 - R / r: the bytes a token bucket of rate R lets pass, of "
                                                  "the offered r (one packet size)",
                               "cap_bit_s": c.long_run_rate, "offered_bit_s": c.offered}))
            continue
        f = _fractions(p.kind, spec, c.offered, c.mean_size, p.cir, p.cbs, p.second_rate, p.second_depth, False,
                       (1.0, 0.0, 0.0))
        gaps = [] if all(f.exact) else [f"error of the policer's colour fractions ({f.neglects})"]
        loss = float(sum(f.packets[k] for k in range(3) if p.actions[k] == "drop"))
        iv = Interval.approximation(loss, "; ".join(gaps)) if gaps else Interval.exact(loss)
        out.append(Result(f"{c.name}.loss.police", "closed-form", loss, "1", iv,
                          {**prov, "formula": "the packets of the colours the policer drops, of its long-run "
                                              "colour fractions", "neglects": gaps}))
    return out


def closed_form(port: Port, setting: str = "auto") -> list[Result]:
    """Every closed-form result of the port (module docstring)."""
    return (_bound_results(port) + _priority_means(port) + _cbr_loss_results(port)
            + _priority_police_results(port) + _weighted_results(port, setting))

