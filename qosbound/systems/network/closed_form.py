"""A network by closed forms, per flow (:mod:`qosbound.systems.network.bounds`):

* ``F.delay.max`` -- the tighter of TFA and SFA, an upper bound on every delay of the flow (hence on its
  quantiles and mean); the analysis is named in the provenance with the per-hop decomposition;
* ``F.delay.max_tfa``, ``F.delay.max_sfa`` -- each analysis's bound (upper bounds on ``F.delay.max``);
* ``F.hop.<port>.delay.max`` -- TFA's bound on the flow's delay at that port (arrival to last bit on the wire,
  the link's propagation not included), with its causes: the ring, the levels above, the DRR round, the burst;
* ``F.delay.jitter`` -- the bound less the least delay, an upper bound on the spread of the flow's delays;
* ``F.loss`` -- 0 as an upper bound where no hop can drop the flow's packets (tail drop only, the class's
  arrival curve within its queue limit at every hop).
"""

from __future__ import annotations

import math

from qosbound.results import Interval, Result
from qosbound.systems.network.bounds import FlowBound, NetworkBounds, analyse
from qosbound.systems.network.elements import Network

__all__ = ["closed_form", "ASSUMPTIONS", "CITE_TFA", "CITE_SFA", "hop_text"]

ASSUMPTIONS = ("feed-forward routes; FIFO within each class and priority level (the port's semantics); store and "
               "forward, a packet arriving at the next port when its last bit does")
CITE_TFA = ("total flow analysis: per-hop bounds of qosbound.analytic.port / qosbound.analytic.drr with the flows' "
            "token buckets propagated (Le Boudec & Thiran, Network Calculus, 2001, Section 1.4.3; Schmitt & "
            "Zdarsky, The DISCO network calculator, 2006)")
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


def closed_form(net: Network, nb: NetworkBounds | None = None) -> list[Result]:
    """Every closed-form metric of every flow (module docstring)."""
    nb = nb or analyse(net)
    out: list[Result] = []
    omitted = {f"{f.name}.delay.*": f"no bound: TFA: {fb.why_tfa}; SFA: {fb.why_sfa}" for f in net.flows
               if (fb := nb.flows.get(f.name)) is not None and not math.isfinite(fb.best)}
    for f in net.flows:
        fb = nb.flows.get(f.name)
        if fb is None:
            continue
        n = f.name
        base = {"assumptions": ASSUMPTIONS, "tfa": fb.tfa, "sfa": fb.sfa, "binding_port": fb.binding,
                "hops": _hops_json(fb), **({"omitted": omitted} if omitted else {})}
        if math.isfinite(fb.best):
            cite = CITE_SFA if fb.analysis == "SFA" else CITE_TFA
            out.append(Result(f"{n}.delay.max", "closed-form", fb.best, "s", Interval.upper_bound(fb.best),
                              dict(base, analysis=fb.analysis,
                                   source=f"{fb.analysis} (the tighter; TFA {_ms(fb.tfa)}, SFA {_ms(fb.sfa)}); "
                                          f"binding port {fb.binding}; per hop (TFA): {hop_text(fb)}"),
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
        for h in fb.hops:
            if not math.isfinite(h.delay):
                continue
            causes = ", ".join(f"{k} {_ms(v)}" for k, v in h.parts.items())
            out.append(Result(f"{n}.hop.{h.port}.delay.max", "closed-form", h.delay, "s", Interval.upper_bound(h.delay),
                              {"analysis": "TFA", "class": h.cls, **({"omitted": omitted} if omitted else {}),
                               "source": f"class {h.cls}: {causes}; qosbound.analytic.port (proof in its docstring)"}))
        if fb.loss_free:
            out.append(Result(f"{n}.loss", "closed-form", 0.0, "1", Interval.upper_bound(0.0),
                              {"source": "tail drop only and the class's arrival curve within its queue limit at every "
                                         "hop (qosbound.systems.network.bounds)"}))
    return out
