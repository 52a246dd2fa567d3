"""A network by closed forms, per flow (:mod:`qosbound.systems.network.bounds`):

* ``F.delay.max`` -- the tightest of TFA, SFA and FIFO-LP, an upper bound on every delay of the flow (hence on its
  quantiles and mean); the analysis is named in the provenance with the per-hop decomposition;
* ``F.delay.max_tfa``, ``F.delay.max_sfa``, ``F.delay.max_lp`` -- each analysis's bound (upper bounds on
  ``F.delay.max``);
* ``F.hop.<port>.delay.max`` -- TFA's bound on the flow's delay at that port (arrival to last bit on the wire,
  the link's propagation not included), with its causes: the ring, the levels above, the DRR round, the burst;
* ``F.delay.jitter`` -- the bound less the least delay, an upper bound on the spread of the flow's delays;
* ``F.loss`` -- 0 as an upper bound where no hop can drop the flow's packets (tail drop only, the class's
  arrival curve within its queue limit at every hop);
* ``F.delay.mean``, ``F.delay.pNN`` -- the approximation of :mod:`qosbound.systems.network.approximation` (per-hop
  ring terms and Cobham waits, independent across hops, convolved), kind ``approximation`` with what it neglects
  and the error measured against the chained simulator as its range.
"""

from __future__ import annotations

import math

from qosbound.metric_names import quantile_name
from qosbound.results import Interval, Result
from qosbound.systems.network.approximation import MEASURED_RATIO, NEGLECTS, FlowApprox, approximate
from qosbound.systems.network.bounds import FlowBound, NetworkBounds, analyse
from qosbound.systems.network.elements import Network

__all__ = ["closed_form", "ASSUMPTIONS", "CITE_TFA", "CITE_SFA", "CITE_LP", "hop_text", "approx_text"]

ASSUMPTIONS = ("feed-forward routes; FIFO within each class and priority level (the port's semantics); store and "
               "forward, a packet arriving at the next port when its last bit does")
CITE_TFA = ("total flow analysis: per-hop bounds of qosbound.analytic.port / qosbound.analytic.drr with the flows' "
            "token buckets propagated (Le Boudec & Thiran, Network Calculus, 2001, Section 1.4.3; Schmitt & "
            "Zdarsky, The DISCO network calculator, 2006)")
CITE_LP = ("FIFO-LP: the FIFO residual family per hop (Le Boudec & Thiran 2001, Proposition 6.2.1), its parameters "
           "chosen by a linear programme (HiGHS) as in Lenzini, Mingozzi & Stea's least upper delay bound (2008), "
           "with one packet per hop after the first (Theorem 1.7.1); never above SFA (proof in "
           "qosbound.systems.network.fifo_lp)")
CITE_SFA = ("separated flow analysis: FIFO residual service per hop (Le Boudec & Thiran 2001, Section 6.2.2), "
            "concatenated (Theorem 1.4.6) with one packet per hop after the first (Theorem 2.1.3, Section 1.7), "
            "bursts paid once (Theorem 1.4.2); Bouillard, Boyer & Le Corronc, Deterministic Network Calculus, 2018, "
            "Chapter 7")


def _ms(x: float) -> str:
    return f"{x * 1e3:.4g} ms" if math.isfinite(x) else "unbounded"


def hop_text(fb: FlowBound) -> str:
    """'a->b 0.9 ms + 2 ms link; ...' for every hop."""
    return "; ".join(f"{h.port} {_ms(h.delay)} + {_ms(h.propagation)} link" for h in fb.hops)


def _hops_json(fb: FlowBound) -> list[dict]:
    return [{"port": h.port, "class": h.cls, "tfa_delay": h.delay, "causes": h.parts, "propagation": h.propagation,
             "arrival_curve": None if h.arrival is None else {"burst": h.arrival.burst, "rate": h.arrival.rate},
             "sfa_service": None if h.service is None else {"rate": h.service[0], "latency": h.service[1]},
             "loss_free": h.loss_free, **({"why": h.why} if h.why else {})} for h in fb.hops]


def approx_text(fa: FlowApprox) -> str:
    """'a->b ring 7.4 ms (at most 18 ms) + wait 0.63 ms (P 1, queueing load 100 % of 100 %) + 2 ms link; ...'."""
    return "; ".join(f"{h.port} ring {_ms(h.ring)} (at most {_ms(h.transmission + h.ring_cap)}) + wait "
                     f"{_ms(h.wait)} (P {h.busy:.3g}, queueing load {100 * h.queueing * h.load:.3g} % of "
                     f"{100 * h.load:.3g} %) + {_ms(h.propagation)} link" for h in fa.hops)


def _approx_results(fa: FlowApprox, quantiles: list[float]) -> list[Result]:
    """The flow's approximate mean and quantiles, each with the measured error as its range."""
    lo, hi = MEASURED_RATIO
    prov = {"analysis": "approximation", "assumptions": NEGLECTS,
            "source": "per hop: the ring term (qosbound.analytic.pq_txq) and Cobham's wait (qosbound.analytic."
                      "priority) with upstream pacing, an atom and an exponential tail (qosbound.analytic."
                      f"network_curves.wait_ccdf_expr); hops independent, convolved: {approx_text(fa)}",
            "hops": [{"port": h.port, "class": h.cls, "transmission": h.transmission, "ring": h.ring,
                      "ring_cap": h.ring_cap, "wait": h.wait, "wait_probability": h.busy, "load": h.load,
                      "queueing_share": h.queueing, "propagation": h.propagation} for h in fa.hops],
            "measured_ratio": list(MEASURED_RATIO)}
    note = (f"the range: approximation / simulated measured in [{lo:g}, {hi:g}] on the WAN example, a tandem and a "
            "random mesh (benchmarks/bench_network.py --approximation)")
    values = [(f"{fa.flow}.delay.mean", fa.mean)] + [
        (f"{fa.flow}.delay.{quantile_name(q)}", v) for q, v in zip(quantiles, fa.quantiles(quantiles))]
    return [Result(m, "closed-form", v, "s", Interval.approximation(v, NEGLECTS, low=v / hi, high=v / lo, note=note),
                   prov) for m, v in values]


def closed_form(net: Network, nb: NetworkBounds | None = None, quantiles: list[float] | None = None) -> list[Result]:
    """Every closed-form metric of every flow (module docstring); ``quantiles`` those the approximation gives."""
    nb = nb or analyse(net)
    approx = approximate(net, {n: fb.best for n, fb in nb.flows.items()})
    quantiles = list(quantiles or [])
    out: list[Result] = []
    omitted = {f"{n}.delay.[mp]*": f"no approximation: {fa.why}" for n, fa in approx.items() if fa.why}
    omitted.update({f"{f.name}.delay.*": f"no bound: TFA: {fb.why_tfa}; SFA: {fb.why_sfa}; FIFO-LP: {fb.why_lp}"
                    for f in net.flows
                    if (fb := nb.flows.get(f.name)) is not None and not math.isfinite(fb.best)})
    for f in net.flows:
        fb = nb.flows.get(f.name)
        if fb is None:
            continue
        n = f.name
        base = {"assumptions": ASSUMPTIONS, "tfa": fb.tfa, "sfa": fb.sfa, "lp": fb.lp, "binding_port": fb.binding,
                "hops": _hops_json(fb), **({"omitted": omitted} if omitted else {})}
        if math.isfinite(fb.best):
            out.append(Result(f"{n}.delay.max", "closed-form", fb.best, "s", Interval.upper_bound(fb.best),
                              dict(base, analysis=fb.analysis,
                                   source=f"{fb.analysis} (the tightest; TFA {_ms(fb.tfa)}, SFA {_ms(fb.sfa)}, FIFO-LP "
                                          f"{_ms(fb.lp)}); binding port {fb.binding}; per hop (TFA): {hop_text(fb)}"),
                              bounds=(f"{n}.delay.p*", f"{n}.delay.mean")))
            out.append(Result(f"{n}.delay.jitter", "closed-form", fb.best - fb.least, "s",
                              Interval.upper_bound(fb.best - fb.least),
                              dict(base, analysis=fb.analysis, least_delay=fb.least,
                                   source=f"{fb.analysis} bound {_ms(fb.best)} less the least delay {_ms(fb.least)} "
                                          "(transmissions of the smallest packet and the propagation delays)")))
        if math.isfinite(fb.tfa):
            out.append(Result(f"{n}.delay.max_tfa", "closed-form", fb.tfa, "s", Interval.upper_bound(fb.tfa),
                              dict(base, analysis="TFA", source=CITE_TFA), bounds=(f"{n}.delay.max",)))
        if math.isfinite(fb.sfa):
            R, T = fb.sfa_service
            out.append(Result(f"{n}.delay.max_sfa", "closed-form", fb.sfa, "s", Interval.upper_bound(fb.sfa),
                              dict(base, analysis="SFA", service_rate=R, service_latency=T,
                                   source=f"{CITE_SFA}; end-to-end service {R / 1e6:.6g} Mbit/s, latency {_ms(T)}"),
                              bounds=(f"{n}.delay.max",)))
        if math.isfinite(fb.lp):
            out.append(Result(f"{n}.delay.max_lp", "closed-form", fb.lp, "s", Interval.upper_bound(fb.lp),
                              dict(base, analysis="FIFO-LP", theta=list(fb.lp_theta),
                                   source=f"{CITE_LP}; per hop theta " +
                                          ", ".join(_ms(x) for x in fb.lp_theta)),
                              bounds=(f"{n}.delay.max",)))
        for h in fb.hops:
            if not math.isfinite(h.delay):
                continue
            causes = ", ".join(f"{k} {_ms(v)}" for k, v in h.parts.items())
            out.append(Result(f"{n}.hop.{h.port}.delay.max", "closed-form", h.delay, "s", Interval.upper_bound(h.delay),
                              {"analysis": "TFA", "class": h.cls, **({"omitted": omitted} if omitted else {}),
                               "source": f"class {h.cls}: {causes}; qosbound.analytic.port (proof in its docstring)"}))
        fa = approx.get(n)
        if fa is not None and not fa.why:
            out += _approx_results(fa, quantiles)
        if fb.loss_free:
            out.append(Result(f"{n}.loss", "closed-form", 0.0, "1", Interval.upper_bound(0.0),
                              {"source": "tail drop only and the class's arrival curve within its queue limit at every "
                                         "hop (qosbound.systems.network.bounds)"}))
    return out
