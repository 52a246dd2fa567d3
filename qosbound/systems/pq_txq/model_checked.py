"""The ``model-checked`` results of a ``pq_txq`` scenario by the exact PQ + TxQ chain (:mod:`qosbound.models.pq_txq`,
Storm): the model layer returns plain numbers and names a bad parameter by its attribute; here they become named
metrics (:class:`~qosbound.results.Result`: names, units, interval kinds, provenance) and the scenario's fields.
"""

from __future__ import annotations

import math

from qosbound.metric_names import ccdf_name, quantile_name
from qosbound.models.pq_txq import TINY, solve
from qosbound.results import Interval, Kind, Result
from qosbound.systems.curves import function_ccdf
from qosbound.systems.pq_txq.params import scenario_fields

__all__ = ["model_results", "rounding_neglects"]


def rounding_neglects(p, rendered) -> str:
    """What a chain with packet sizes rounded up to whole granules neglects (Interval.approximation's text).

    Why it is not a bound. Rounding makes every transmission at least as long, and the sample-path coupling that
    would make every delay at least as long (same arrival times, BE sizes by admission index) holds only while
    the two systems admit the same kinds. Its induction fails at the first departure where the slower system's
    PQ is not empty and the faster one's is: the slower one admits an EF packet where the other admits a BE one
    (saturated BE is not a fixed set of packets: the BE work admitted falls as the EF backlog rises), so from
    then on its ring can hold LESS work and its later departures come earlier. Longer EF transmissions alone
    LOWER the EF loss and p99 (``tests/models/test_pq_txq.py`` pins the case: 2 Mbit/s, ring of 4 x 1500 B, PQ
    4, EF 200 B Poisson at 800 kbit/s, BE 40 / 1500 B at 0.5 / 0.5: rounded to 24-byte granules the loss is
    0.1732, the exact chain's 0.1781; EF 200 B as 216 B alone gives 0.1717)."""
    g = rendered.granule
    sizes = [("EF", p.ef_size, rendered.ef_gran * g)] + [("BE", b, n * g) for b, n in zip(p.be_sizes, rendered.be_gran)]
    changed = ", ".join(f"{k} {a:g} B as {b:g} B" for k, a, b in sizes if abs(a - b) > 1e-9)
    return (f"the packet sizes rounded up to whole {rendered.granule}-byte granules ({changed}; raise "
            "methods.model-checked.max_granules to avoid it): not a bound either way -- longer transmissions "
            "let EF be admitted in place of BE more often, which can lower the work ahead and so the delay "
            "and loss (measured: EF loss 0.1732 against the exact 0.1781 on a 2 Mbit/s port, "
            "tests/models/test_pq_txq.py)")


def model_results(p, opts, ccdf_at: list[float], quantiles: list[float], progress) -> list[Result]:
    """EF delay metrics by model checking (method 'model-checked')."""
    with scenario_fields("methods.model-checked"):
        sol = solve(p, opts, ccdf_at, quantiles, progress)
    rendered, dd = sol.rendered, sol.dist
    little_rel = abs(sol.mean - sol.little_mean) / sol.mean
    note = ("exact (rational) stationary distribution" if opts.exact else
            f"direct sparse solve; a-posteriori bound: L1 error of the slot-state distribution <= {dd.tv_bound:.2g}"
            + (f", plus {rendered.truncated_mass:.2g} of arrival probability per slot left out (each outcome "
               f"< {TINY:g})" if rendered.truncated_mass else ""))
    prov = {"model": "models/templates/pq_txq.prism (rendered)", "engine": "storm", "states": sol.states,
            "transitions": sol.transitions, "seconds": round(sol.seconds, 4), "granule_bytes": rendered.granule,
            "slot_s": rendered.slot, "arrivals": rendered.arrivals,
            "construction": "stationary distribution of tick states x tagged-arrival delay",
            "error_bound_l1": dd.tv_bound, "truncated_arrival_mass": rendered.truncated_mass}
    neglects = rounding_neglects(p, rendered) if rendered.rounded else ""
    if rendered.rounded:
        prov["note"] = "sizes rounded up to whole granules: model results are approximations (not bounds)"

    def iv(v: float, key) -> tuple[float, Interval]:
        """(value, interval) of a model number: the numerical bracket of the direct solve (its exact value, or its
        error bound), or, when sizes were rounded up, an approximation of the scenario's value."""
        if opts.exact:
            lo = hi = v
        else:
            lo, hi = sol.bounds.get(key, (-math.inf, math.inf))
            lo, hi = min(lo, v), max(hi, v)
        if rendered.rounded:
            bracket = f"; the rounded chain's own value lies in [{lo:.9g}, {hi:.9g}]" if math.isfinite(hi - lo) else ""
            return v, Interval.approximation(v, neglects=neglects, note=note + bracket)
        if opts.exact:
            return v, Interval.exact(v, note=note)
        return v, Interval.numerical(lo, hi, note=note)

    source = {**prov, "source": f"Storm, {sol.states} states"}
    out = []
    v, i = iv(sol.mean, "mean")
    out.append(Result("EF.delay.mean", "model-checked", v, "s", i,
                      {**prov, "source": f"Storm, {sol.states} states; Little's law gives {sol.little_mean:.9g} s",
                       "little_law_mean": sol.little_mean, "little_law_rel_diff": little_rel},
                      curve=_model_curve(sol, opts, note, neglects)))
    for q in quantiles:
        v, i = iv(sol.quantiles[q], ("quantile", q))
        out.append(Result(f"EF.delay.{quantile_name(q)}", "model-checked", v, "s", i, dict(source)))
    for t in ccdf_at:
        v, i = iv(sol.ccdf[t], ("ccdf", t))
        out.append(Result(ccdf_name("EF.delay", t), "model-checked", v, "1", i, dict(source)))
    v, i = iv(sol.loss, "loss")
    out.append(Result("EF.loss", "model-checked", v, "1", i, dict(source)))
    return out


def _model_curve(sol, opts, note: str, neglects: str):
    """The model's whole EF delay CCDF (:func:`qosbound.systems.curves.function_ccdf`), of the kind its metrics
    have: exact, numerical with the solve's error bound, or an approximation when sizes were rounded up
    (``neglects``: :func:`rounding_neglects`; the rounded chain's error bound is not an interval on the
    scenario's curve, so none is drawn)."""
    dd, rendered = sol.dist, sol.rendered
    if rendered.rounded:
        return function_ccdf("EF.delay.ccdf", "model-checked", dd.ccdf, dd.support_max(), Kind.APPROXIMATION,
                             neglects=neglects, note="the stationary delay law of accepted EF packets of the chain "
                             f"with rounded sizes, at evenly spaced delays; {note}")
    if opts.exact:
        kind, brackets = Kind.EXACT, None
    else:
        kind = Kind.NUMERICAL

        def brackets(ts):
            b = dd.error_bounds([], ts, extra=rendered.truncated_mass)
            return [b.get(("ccdf", t), (0.0, 1.0)) for t in ts]
    return function_ccdf("EF.delay.ccdf", "model-checked", dd.ccdf, dd.support_max(), kind, brackets=brackets,
                         note=f"the stationary delay law of accepted EF packets at evenly spaced delays; {note}")

