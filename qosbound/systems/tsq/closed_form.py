"""TSQ by closed form: the fluid operating point of PI with TFRC senders, and per-hint insertion (Claypool,
Kinicki & Kumar eq. (1)-(5))."""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from qosbound.analytic import tsq as A
from qosbound.analytic.quality import quality
from qosbound.analytic.tfrc import tfrc_rate
from qosbound.errors import ScenarioError
from qosbound.results import Interval, Result
from qosbound.systems.tsq.metrics import CF_NEGLECTS, add_group, app_assumption, bound_result
from qosbound.systems.tsq.schema import Scenario

__all__ = ["CF_NEGLECTS", "operating_point", "closed_form"]


def _mean_size(scn: Scenario) -> float:
    w = [(f.size, f.rate * f.count) for f in scn.flows.values()]
    return float(sum(s * r for s, r in w) / sum(r for _, r in w)) if w else 1000.0


def operating_point(scn: Scenario) -> dict:
    """PI equilibrium: queue at q_ref packets, AQM drop p* where the responsive flows just fill the link."""
    C = scn.link.rate
    size = _mean_size(scn)
    q0 = scn.aqm.q_ref * size * 8.0 / C
    cbr = sum(f.rate * f.count for f in scn.flows.values() if f.kind == "cbr")
    resp = [f for f in scn.flows.values() if f.kind == "tfrc"]

    def load(pp: float) -> float:
        tot = cbr * (1 - pp)
        for f in resp:
            x = 8.0 * float(tfrc_rate(f.size, f.rtt + q0, pp))
            tot += f.count * min(f.rate, x)
        return tot - C

    if not resp or load(1e-9) <= 0:
        return {"p": 0.0, "q": 0.0, "size": size, "congested": False}
    if load(1.0) > 0:
        raise ScenarioError(f"overloaded: even at AQM drop probability 1 the flows send {load(1.0) + C:.4g} bit/s "
                            f"into a {C:.4g} bit/s link, so PI has no operating point; raise link.rate or reduce "
                            "the flows", field="flows")
    p_star = brentq(load, 1e-9, 1.0, xtol=1e-14, rtol=1e-12)
    return {"p": float(p_star), "q": float(q0), "size": size, "congested": True}


def _per_hint_closed(scn: Scenario, name: str, op: dict, hints: list[int]) -> dict:
    f = scn.flows[name]
    C = scn.link.rate
    h = np.asarray(hints, dtype=float)
    bits = scn.tsq.hint_bits
    if scn.tsq.enabled:
        qp = A.insertion_delay(h, op["q"], bits)
        pp = A.adjusted_drop(op["q"], qp, op["p"], scn.tsq.latency) if op["congested"] else np.zeros_like(h)
    else:
        qp = np.full_like(h, op["q"])
        pp = np.full_like(h, op["p"])
    if f.kind == "tfrc":
        rate = np.where(pp > 0, 8.0 * tfrc_rate(f.size, f.rtt + qp, np.maximum(pp, 1e-12)), np.inf)
        rate = np.minimum(f.rate, rate)
    else:
        rate = f.rate * (1 - pp)
    one_way = f.one_way if f.one_way is not None else f.rtt / 2
    delay = one_way + qp + f.size * 8.0 / C
    size_bits = (f.file_size or 1.25e6) * 8.0
    qual = quality(f.app, delay, rate, size_bits if f.app == "file" else None)
    t_max = (scn.aqm.q_max + 1) * max(g.size for g in scn.flows.values()) * 8.0 / C
    bound = A.delay_bound(h, t_max, C, 0.0, C, bits) if scn.tsq.enabled else np.full_like(h, t_max)
    return {"delay": qp, "drop": pp, "rate": rate, "quality": qual, "bound": bound}


def closed_form(scn: Scenario) -> list[Result]:
    op = operating_point(scn)
    out: list[Result] = []
    prov = {"formula": "PI holds q_ref; TFRC rates fill the link (RFC 5348 eq., Claypool, Kinicki & Kumar eq. (5))",
            "source": "fluid operating point; analytic/tsq.py, analytic/tfrc.py",
            "q_ref_delay_s": op["q"], "congested": op["congested"]}
    approx = Interval.approximation(op["p"], neglects="queue and rate fluctuations: the fluid operating point")
    out.append(Result("tsq.aqm_drop", "closed-form", op["p"], "1", approx, prov))
    cap = float(A.cap_min_drop(1, op["q"], scn.tsq.latency, scn.tsq.hint_bits)) if op["q"] > 0 else 1.0
    out.append(Result("tsq.cap_min_drop", "closed-form", cap, "1", Interval.exact(cap),
                      {"formula": "p > ((l + d q/2^n)/(l + q))^2 at d = 1, q = q_ref delay",
                       "source": "analytic/tsq.py cap_p_expr (Claypool, Kinicki & Kumar eq. (3)-(5))"}))
    if op["congested"] and scn.tsq.enabled:
        H = 2 ** scn.tsq.hint_bits
        hs = np.arange(1, H + 1, dtype=float)
        qp = A.insertion_delay(hs, op["q"], scn.tsq.hint_bits)
        ratio = A.throughput_tsq(op["q"], qp, op["p"], scn.tsq.latency) / A.throughput(op["q"], op["p"],
                                                                                        scn.tsq.latency)
        gain = float(np.max(ratio) - 1.0)
    else:
        gain = 0.0
    out.append(Result("tsq.gain", "closed-form", gain, "1",
                      Interval.approximation(gain, neglects="queue fluctuations: the gain at the operating point "
                                                            "(q_ref delay, p*) only"),
                      {"formula": "max over hints of T'/T - 1 at the operating point (q_ref delay, p*)",
                       "source": "analytic/tsq.py throughput_tsq (Claypool, Kinicki & Kumar eq. (3)-(5)); 0 outside the cap region"}))
    for name, f in scn.flows.items():
        r = _per_hint_closed(scn, name, op, [f.hint])
        add_group(out, name, "closed-form", {k: float(v[0]) for k, v in r.items()}, {**prov, **app_assumption(f.app)},
                  CF_NEGLECTS)
        out.append(bound_result(name, float(r["bound"][0])))
    if scn.metrics.sweep:
        name = scn.metrics.sweep
        hints = scn.hints()
        r = _per_hint_closed(scn, name, op, hints)
        for i, h in enumerate(hints):
            add_group(out, f"{name}@h{h}", "closed-form", {k: float(v[i]) for k, v in r.items()},
                      {**prov, **app_assumption(scn.flows[name].app)}, CF_NEGLECTS)
            out.append(bound_result(f"{name}@h{h}", float(r["bound"][i])))
        best = hints[int(np.argmax(np.round(r["quality"], 12) - 1e-9 * np.arange(len(hints))))]
        out.append(Result(f"{name}.best_hint", "closed-form", float(best), "1",
                          Interval.approximation(float(best), neglects=CF_NEGLECTS),
                          {"formula": "argmax over hints of min(Q_d, Q_t)", "source": "Claypool, Kinicki & Kumar eq. (1)"}))
    return out
