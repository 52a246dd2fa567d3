"""TSQ metric names and kinds, and the result builders the three methods share."""

from __future__ import annotations

import math

from qosbound.errors import ScenarioError
from qosbound.results import Interval, Result
from qosbound.systems.tsq.schema import Scenario
from qosbound.units import Kind
from qosbound.verdicts import default_slo_limit

__all__ = ["metric_names", "metric_kind", "slo_limit", "bound_result", "add_group", "CF_NEGLECTS", "GAIN_TOLERANCE",
           "MODEL_NEGLECTS", "MODEL_MAX_DROP"]

#: What the closed form neglects (DESIGN.md "TSQ").
CF_NEGLECTS = ("queue fluctuations: the fluid operating point (PI holds the queue at q_ref, TFRC rates at the mean "
               "RTT fill the link) and a backlog of hint-2^n packets (q' = d q/2^n)")
#: A model-checked relative gain at or below this counts as "no gain" (the MDP's LRA solver error).
GAIN_TOLERANCE = 1e-6
#: What the slotted models neglect relative to the scenario.
MODEL_NEGLECTS = ("the PI controller's integral action and the senders' dynamics: a slotted chain with a "
                  "proportional AQM and two Bernoulli sources, centred on (q_ref, p*)")
#: Largest AQM drop probability the slotted models can be centred on (two sources of probability 1/(2(1 - p*))).
MODEL_MAX_DROP = 0.5

#: Per-flow quantities every method reports (``<flow>.<quantity>``; the swept flow also per hint).
_GROUP = ("delay.mean", "delay.p99", "drop", "rate", "quality")
_QUANT = {"delay.mean": "time", "delay.max": "time", "delay.p99": "time", "delay.bound": "time", "drop": "probability",
          "rate": "rate", "quality": "probability", "best_hint": "count"}


def metric_kind(metric: str) -> Kind:
    if metric in ("tsq.aqm_drop", "tsq.cap_min_drop"):
        return "probability"
    if metric == "tsq.gain":
        return "count"
    head, _, rest = metric.partition(".")
    if head and rest in _QUANT:
        return _QUANT[rest]  # type: ignore[return-value]
    raise ScenarioError(f"unknown metric '{metric}' for a tsq scenario; known: <flow>.delay.mean, <flow>.drop, "
                        "<flow>.rate, <flow>.quality, <flow>@h<d>.delay.mean|delay.p99|delay.max|delay.bound|drop|rate|"
                        "quality, <flow>.best_hint, tsq.aqm_drop, tsq.cap_min_drop, tsq.gain", field="metric")


def slo_limit(scn: Scenario, slo) -> float:
    return default_slo_limit(metric_kind, slo)


def metric_names(scn: Scenario) -> list[str]:
    """The scenario's metrics: per flow group, per hint of the swept flow, and the AQM's."""
    out = ["tsq.aqm_drop", "tsq.cap_min_drop", "tsq.gain"]
    for name in scn.flows:
        out += [f"{name}.{q}" for q in _GROUP + ("delay.max", "delay.bound")]
    if scn.metrics.sweep:
        name = scn.metrics.sweep
        for h in scn.hints():
            out += [f"{name}@h{h}.{q}" for q in _GROUP + ("delay.max", "delay.bound")]
        out.append(f"{name}.best_hint")
    return out


def bound_result(prefix: str, b: float) -> Result:
    """The aging bound on a flow's queueing delay; it bounds every delay metric of the flow (mean, p99, max)."""
    return Result(f"{prefix}.delay.bound", "closed-form", b, "s", Interval.upper_bound(b),
                  {"formula": "D_q <= t_max (1 + d/2^n), t_max = 8 (q_max + 1) L / C",
                   "source": "analytic/tsq.py delay_bound (aging term of Claypool, Kinicki & Kumar eq. (2))"},
                  bounds=(f"{prefix}.delay.*",))


def app_assumption(app: str) -> dict:
    """Provenance naming the reading that is qosbound's own for ``app``: a video flow's throughput quality below
    160 kbit/s (the paper's formula there is lost; linear to 0 at 0 kbit/s is assumed)."""
    if app != "video":
        return {}
    return {"assumption": "video throughput quality below 160 kbit/s is assumed linear to 0 at 0 kbit/s "
                          "(not the paper's: its formula there is lost)"}


def add_group(out, prefix, method, vals, prov, neglects=None, ci=None, note=""):
    """One result per quantity in ``vals``: a CI where ``ci`` has the quantity (simulation), an observed maximum
    as a lower bound, else an approximation that neglects ``neglects``."""
    units = {"delay": ("delay.mean", "s"), "drop": ("drop", "1"), "rate": ("rate", "bit/s"),
             "quality": ("quality", "1"), "delay_max": ("delay.max", "s"), "p99": ("delay.p99", "s")}
    for key, (suffix, unit) in units.items():
        if key not in vals:
            continue
        v = float(vals[key])
        if not math.isfinite(v):
            continue
        if ci is not None and key in ci:
            e = ci[key]
            iv = Interval.ci(e.low, e.high, e.confidence, se=e.std_error, dof=e.n - 1, note=note)
            out.append(Result(f"{prefix}.{suffix}", method, v, unit, iv, {**prov, "replications": e.n}))
        elif key == "delay_max" and method == "simulated":
            out.append(Result(f"{prefix}.{suffix}", method, v, unit,
                              Interval.lower_bound(v, note="the largest delay observed"), dict(prov)))
        else:
            out.append(Result(f"{prefix}.{suffix}", method, v, unit,
                              Interval.approximation(v, neglects=neglects, note=note), dict(prov)))
