"""AF by closed form: CBWFQ shares, the RED-family queue per class (Takeo & Tasaka 2003), marker fractions."""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from qosbound.analytic.cbwfq import allocate
from qosbound.analytic.red_queue import solve
from qosbound.results import Interval, Result
from qosbound.systems.af.inputs import ClassInput, approximation, neglects, queue_results
from qosbound.systems.af.schema import Scenario

__all__ = ["closed_form", "solve_sized"]


def solve_sized(ci: ClassInput, approx: str):
    """The queue solution with the service rate set by the mean size of the *admitted* packets.

    With variable sizes a marker makes colours differ in size (green small, red large) and the dropper
    removes mostly red, so admitted packets are smaller than offered ones and more of them fit the share.
    The service rate ``mu = share / (8 * mean admitted size)`` and the drops are solved together: the mean
    admitted size is a mixture of the colours' sizes, so ``mu`` lies between the rates of the largest and
    the smallest colour and Brent's method finds it. With colour-independent sizes ``mu`` is the class's
    ``share / (8 * size)``. Returns (solution, mu).
    """
    sizes = ci.colour_sizes if ci.colour_sizes is not None else np.full(3, ci.size)
    used = sizes[ci.lam > 0]
    if used.size == 0 or np.allclose(used, ci.size, rtol=1e-9):
        return solve(ci.lam, ci.mu, ci.K, ci.profile, approx), ci.mu
    memo = {}

    def gap(mu):
        sol = memo[mu] = solve(ci.lam, mu, ci.K, ci.profile, approx)
        acc = ci.lam * (1.0 - sol.drop)
        if acc.sum() <= 0:
            return ci.mu - mu
        return ci.share / (8.0 * float(acc @ sizes / acc.sum())) - mu

    lo, hi = ci.share / (8.0 * float(used.max())), ci.share / (8.0 * float(used.min()))
    glo, ghi = gap(lo), gap(hi)
    if glo <= 0:
        return memo[lo], lo
    if ghi >= 0:
        return memo[hi], hi
    mu = brentq(gap, lo, hi, xtol=1e-12, rtol=1e-8, maxiter=60)
    return (memo[mu] if mu in memo else solve(ci.lam, mu, ci.K, ci.profile, approx)), mu


def closed_form(scn: Scenario, inputs: list[ClassInput]) -> list[Result]:
    out: list[Result] = []
    names = list(scn.classes)
    w = [scn.classes[n].bandwidth for n in names]
    backlogged = [1.0 if (n in scn.traffic and scn.traffic[n].rate > 0) else 0.0 for n in names]
    if sum(backlogged) > 0:
        shares = allocate(scn.link.rate, w, backlogged)
        for i, n in enumerate(names):
            out.append(Result(f"{n}.rate", "closed-form", float(shares[i]), "bit/s", Interval.exact(float(shares[i])),
                              {"formula": "C w_i / sum of w over backlogged classes",
                               "source": "Takeo & Tasaka 2003, sec. II.B (CBWFQ)"}))
    for case, members in scn.cases.items():
        sh = allocate(scn.link.rate, w, [1.0 if n in members else 0.0 for n in names])
        for i, n in enumerate(names):
            out.append(Result(f"{n}.rate.{case}", "closed-form", float(sh[i]), "bit/s", Interval.exact(float(sh[i])),
                              {"formula": "C w_i / sum of w over backlogged classes", "backlogged": members,
                               "source": "Takeo & Tasaka 2003, sec. II.B, Table V"}))
    for ci in inputs:
        approx = approximation(scn, ci)
        sol, mu = solve_sized(ci, approx)
        other = solve(ci.lam, mu, ci.K, ci.profile,
                      "fixed-average" if approx == "instantaneous" else "instantaneous") \
            if (ci.profile.mode == "wred" or ci.K <= 24) else None
        prov = {"formula": sol.method, "source": "Takeo & Tasaka 2003 sec. II.A (P(avr)); Kleinrock eq. 3.11",
                "module": "qosbound.analytic.red_queue", "service_rate_pps": mu, "share_bit_s": ci.share,
                "alpha": ci.profile.alpha, "dropper": ci.profile.mode}
        if other is not None:
            prov["other_approximation"] = {"method": other.method, "drop": [float(x) for x in other.drop],
                                           "mean_queue": other.mean_queue}

        gaps = neglects(scn, ci, approx)
        if ci.marking is not None and not all(ci.marking.exact):
            gaps.append(f"error of the marker's colour fractions ({ci.marking.neglects})")
        prov["neglects"] = gaps

        def iv(_k, v, gaps=gaps):
            return Interval.approximation(float(v), "; ".join(gaps)) if gaps else Interval.exact(float(v))

        out += queue_results(ci, sol.drop, sol.delay, sol.mean_queue, "closed-form", iv, prov)
        mk = ci.marking
        for k in range(3):
            for suffix, vals in (("", mk.packets), (".bytes", mk.bytes)):
                v = float(vals[k])
                if mk.exact[k]:
                    civ = Interval.exact(v)
                else:
                    e = float(mk.error[k]) if suffix == "" else 0.0
                    civ = Interval.approximation(v, mk.neglects, low=max(0.0, v - e), high=min(1.0, v + e))
                out.append(Result(f"{ci.name}.colour.{ci.name}{k + 1}{suffix}", "closed-form", v, "1", civ,
                                  {"formula": mk.source, "fraction": "bytes" if suffix else "packets"}))
    return out
