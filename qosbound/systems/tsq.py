"""TSQ over a PI AQM (Claypool, Kinicki & Kumar): per-hint delay, drop, throughput and application quality, three ways.

Semantics: DESIGN.md "TSQ" and :mod:`qosbound.analytic.tsq`. A scenario names a
bottleneck link, the TSQ settings (hint bits, latency constant ``l``), the PI
AQM (Hollot et al. 2001; the seed's constants by default), and flow groups:
``tfrc`` (responsive, equation-based; a "TCP-friendly CBR" audio source is
``tfrc`` with ``rate`` its codec rate) or ``cbr`` (unresponsive), each with a
delay hint, packet size, propagation RTT and an application (audio, video or
file) for the quality functions of Claypool, Kinicki & Kumar section 2.

Methods:

* ``closed-form`` -- the fluid operating point: PI holds the queue at ``q_ref``
  packets; the responsive flows' TFRC rates at the RTT ``rtt + q_ref`` delay
  fill the link, which fixes the AQM drop ``p*``; a hint-d packet of the swept
  flow gets ``q' = d q/2^n`` (analytic/tsq.py) and ``p'`` from eq. (5); its
  rate is TFRC at (``rtt + q'``, ``p'``) capped at its codec rate. Kind
  approximation (it neglects queue fluctuations). Plus the per-hint worst-case
  queueing delay bound (a finite buffer of ``q_max + 1`` packets and the aging
  term: ``t_max (1 + d/2^n)``; an upper bound on every delay metric of the
  flow), and the cap threshold (exact).
* ``model-checked`` -- Storm on models/tsq_hint.prism per hint (delay and drop
  in the slotted abstraction centred on ``(q_ref, p*)``, with the scenario's
  2^n hints) and, with ``mdp: true``, models/tsq.prism: the best long-run
  square-root-law throughput over per-packet hint choices relative to FIFO
  (metric ``tsq.gain``; Claypool, Kinicki & Kumar claims <= 0). Kind approximation: the
  abstraction replaces PI by a proportional AQM and the senders by Bernoulli
  sources (the solver's precision is in the note).
* ``simulated`` -- validation/tsq_sim.py, independent replications, Student-t
  intervals at ``methods.simulated.confidence`` with their standard error and
  degrees of freedom; the observed maximum delay is a lower bound.

Agreement: the generic rule (:mod:`qosbound.agreement`) compares every pair of
methods; :func:`agreements` adds what it cannot express: the insertion point
of the model against the closed form's ``q' = d q/2^n``, the delay bound
against the simulated maximum (a bound against an observed maximum) and the
MDP's gain against the cap region.

Metrics: ``<group>.delay.mean`` and ``.delay.p99`` (queueing delay, s),
``<group>.drop``, ``<group>.rate`` (bit/s per flow), ``<group>.quality``; the
swept flow per hint as ``<flow>@h<d>.delay.mean|delay.p99|delay.max|delay.bound|drop|rate|quality``;
``<flow>.best_hint``; ``tsq.aqm_drop``, ``tsq.cap_min_drop``, ``tsq.gain``.
"""

from __future__ import annotations

import math
import re
from typing import Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from qosbound.errors import ScenarioError
from qosbound.results import Interval, Result, Verdict
from qosbound.scenario import PositiveInt, Rate, ScenarioBase, Size, Time
from qosbound.systems.base import default_methods, Link, MethodsBase, ModelOptionsBase, Strict, TimedSimOptions
from qosbound.units import Kind
from qosbound.verdicts import default_slo_limit

__all__ = ["Scenario", "evaluate", "metric_kind", "slo_limit", "default_methods", "agreements", "admit",
           "operating_point", "GAIN_TOLERANCE"]

#: A model-checked relative gain at or below this counts as "no gain" (the MDP's LRA solver error).
GAIN_TOLERANCE = 1e-6

#: What the closed form neglects (DESIGN.md "TSQ").
CF_NEGLECTS = ("queue fluctuations: the fluid operating point (PI holds the queue at q_ref, TFRC rates at the mean "
               "RTT fill the link) and a backlog of hint-2^n packets (q' = d q/2^n)")
#: What the slotted models neglect relative to the scenario.
MODEL_NEGLECTS = ("the PI controller's integral action and the senders' dynamics: a slotted chain with a "
                  "proportional AQM and two Bernoulli sources, centred on (q_ref, p*)")
#: Largest AQM drop probability the slotted models can be centred on (two sources of probability 1/(2(1 - p*))).
MODEL_MAX_DROP = 0.5


class TSQConf(Strict):
    enabled: bool = True
    hint_bits: PositiveInt = 4
    latency: Time = 0.040

    @field_validator("latency")
    @classmethod
    def _pos(cls, v):
        if not (v > 0 and math.isfinite(v)):
            raise ScenarioError("the latency constant l must be positive and finite", field="tsq.latency")
        return v

    @field_validator("hint_bits")
    @classmethod
    def _bits(cls, v):
        if v > 8:
            raise ScenarioError("at most 8 hint bits are supported", field="tsq.hint_bits")
        return v


class PIConf(Strict):
    kind: Literal["pi"] = "pi"
    a: float = 1.822e-5
    b: float = 1.816e-5
    sampling: float = Field(default=170.0, description="sampling frequency, Hz")
    q_ref: float = Field(default=200.0, description="target queue, packets")
    q_max: PositiveInt = Field(default=800, description="buffer, packets")

    @model_validator(mode="after")
    def _check(self):
        for name in ("a", "b"):
            if not (getattr(self, name) > 0 and math.isfinite(getattr(self, name))):
                raise ScenarioError("PI gains a and b must be positive and finite", field=f"aqm.{name}")
        if self.a <= self.b:
            raise ScenarioError("PI needs a > b (positive integral gain)", field="aqm.b")
        if not (self.sampling > 0 and math.isfinite(self.sampling)):
            raise ScenarioError("the sampling frequency must be positive and finite", field="aqm.sampling")
        if not 0 < self.q_ref < self.q_max:
            raise ScenarioError("need 0 < q_ref < q_max", field="aqm.q_ref")
        return self


class FlowConf(Strict):
    kind: Literal["tfrc", "cbr"]
    count: PositiveInt = 1
    rate: Rate = Field(description="cbr: sending rate; tfrc: maximum (codec or access) rate, bit/s")
    size: Size = 1000.0
    hint: int = 16
    rtt: Time = 0.3
    one_way: Time | None = Field(default=None, description="one-way propagation delay for quality (default rtt/2)")
    app: Literal["audio", "video", "file"] = "file"
    file_size: Size | None = Field(default=None, description="file size for file-transfer quality, bytes")

    @model_validator(mode="after")
    def _check(self):
        # positivity is checked in Scenario._check, which knows the flow's name
        if self.app == "file" and self.file_size is None:
            self.file_size = 1.25e6  # 10 Mbit, Claypool, Kinicki & Kumar section 2.3.2's example
        return self


class ModelOptions(ModelOptionsBase):
    mdp: bool = True


class SimOptions(TimedSimOptions):
    pass


class Methods(MethodsBase):
    model_checked: ModelOptions = Field(default_factory=ModelOptions, alias="model-checked")
    simulated: SimOptions = Field(default_factory=SimOptions)


class Metrics(Strict):
    sweep: str | None = Field(default=None, description="flow group (count 1) whose hint is swept")
    hints: list[int] | None = None


class Scenario(ScenarioBase):
    system: Literal["tsq"]
    link: Link
    tsq: TSQConf = Field(default_factory=TSQConf)
    aqm: PIConf = Field(default_factory=PIConf)
    flows: dict[str, FlowConf]
    metrics: Metrics = Field(default_factory=Metrics)
    methods: Methods = Field(default_factory=Methods)

    @model_validator(mode="after")
    def _check(self):
        H = 2 ** self.tsq.hint_bits
        if not self.flows:
            raise ScenarioError("at least one flow group is needed", field="flows")
        for name, f in self.flows.items():
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
                raise ScenarioError("flow names are letters, digits and '_'", field=f"flows.{name}")
            if not 1 <= f.hint <= H:
                raise ScenarioError(f"hint {f.hint} is outside 1..{H}", field=f"flows.{name}.hint")
            for q in ("rate", "size", "rtt", "one_way", "file_size"):
                v = getattr(f, q)
                if v is not None and not (v > 0 and math.isfinite(v)):
                    raise ScenarioError(f"{q} must be positive and finite", field=f"flows.{name}.{q}")
        cbr = sum(f.rate * f.count for f in self.flows.values() if f.kind == "cbr")
        if cbr >= self.link.rate:
            raise ScenarioError(f"unresponsive (cbr) load {cbr:.4g} bit/s >= link rate: no stable operating point",
                                field="flows")
        if self.metrics.sweep is not None:
            f = self.flows.get(self.metrics.sweep)
            if f is None:
                raise ScenarioError(f"no flow group '{self.metrics.sweep}'", field="metrics.sweep")
            if f.count != 1:
                raise ScenarioError("the swept flow group must have count 1", field="metrics.sweep")
        if self.metrics.hints is not None:
            for h in self.metrics.hints:
                if not isinstance(h, int) or not 1 <= h <= H:
                    raise ScenarioError(f"hint {h!r} is outside 1..{H}", field="metrics.hints")
        return self

    def hints(self) -> list[int]:
        return list(self.metrics.hints) if self.metrics.hints else list(range(1, 2 ** self.tsq.hint_bits + 1))


# ---------------------------------------------------------------------------------------------
# metric names and kinds

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


# ---------------------------------------------------------------------------------------------
# closed form: the fluid operating point


def _mean_size(scn: Scenario) -> float:
    w = [(f.size, f.rate * f.count) for f in scn.flows.values()]
    return float(sum(s * r for s, r in w) / sum(r for _, r in w)) if w else 1000.0


def operating_point(scn: Scenario) -> dict:
    """PI equilibrium: queue at q_ref packets, AQM drop p* where the responsive flows just fill the link."""
    from scipy.optimize import brentq

    from qosbound.analytic.tfrc import tfrc_rate

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
    from qosbound.analytic import tsq as A
    from qosbound.analytic.quality import quality
    from qosbound.analytic.tfrc import tfrc_rate

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


def _closed_form(scn: Scenario) -> list[Result]:
    from qosbound.analytic import tsq as A

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
        _add_group(out, name, "closed-form", {k: float(v[0]) for k, v in r.items()}, prov, CF_NEGLECTS)
        out.append(_bound_result(name, float(r["bound"][0])))
    if scn.metrics.sweep:
        name = scn.metrics.sweep
        hints = scn.hints()
        r = _per_hint_closed(scn, name, op, hints)
        for i, h in enumerate(hints):
            _add_group(out, f"{name}@h{h}", "closed-form", {k: float(v[i]) for k, v in r.items()}, prov,
                       CF_NEGLECTS)
            out.append(_bound_result(f"{name}@h{h}", float(r["bound"][i])))
        best = hints[int(np.argmax(np.round(r["quality"], 12) - 1e-9 * np.arange(len(hints))))]
        out.append(Result(f"{name}.best_hint", "closed-form", float(best), "1",
                          Interval.approximation(float(best), neglects=CF_NEGLECTS),
                          {"formula": "argmax over hints of min(Q_d, Q_t)", "source": "Claypool, Kinicki & Kumar eq. (1)"}))
    return out


def _bound_result(prefix: str, b: float) -> Result:
    """The aging bound on a flow's queueing delay; it bounds every delay metric of the flow (mean, p99, max)."""
    return Result(f"{prefix}.delay.bound", "closed-form", b, "s", Interval.upper_bound(b),
                  {"formula": "D_q <= t_max (1 + d/2^n), t_max = 8 (q_max + 1) L / C",
                   "source": "analytic/tsq.py delay_bound (aging term of Claypool, Kinicki & Kumar eq. (2))"},
                  bounds=(f"{prefix}.delay.*",))


def _add_group(out, prefix, method, vals, prov, neglects=None, ci=None, note=""):
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


# ---------------------------------------------------------------------------------------------
# model checking


def _abstraction(scn: Scenario):
    """The slotted abstraction of the scenario's operating point, with the scenario's 2^n hints."""
    from qosbound.models import tsq as M

    op = operating_point(scn)
    if not op["congested"]:
        raise ScenarioError("the responsive flows do not congest the link, so the AQM drop p* is 0 and the TSQ "
                            "models (centred on p* > 0) do not apply; use the closed-form or simulated method",
                            field="flows")
    if op["p"] >= MODEL_MAX_DROP:
        raise ScenarioError(f"overloaded: the flows need an AQM drop probability p* = {op['p']:.3g} to fit the "
                            f"link; the slotted TSQ models hold only p* < {MODEL_MAX_DROP:g}; raise link.rate, "
                            "reduce the flows, or use the closed-form or simulated method", field="flows")
    return M.abstraction(scn.link.rate, op["size"], scn.aqm.q_max, scn.aqm.q_ref, op["p"], scn.tsq.latency,
                         bits=scn.tsq.hint_bits)


def _model_checked(scn: Scenario, opts: ModelOptions, progress) -> list[Result]:
    from qosbound.models import tsq as M

    ab = _abstraction(scn)
    out: list[Result] = []
    note = f"Storm, solver precision {opts.precision:g} (of the abstraction)"
    names = []
    if scn.metrics.sweep:
        names = [(f"{scn.metrics.sweep}@h{h}", h) for h in scn.hints()]
    names += [(n, f.hint) for n, f in scn.flows.items()]
    tick = progress.task("Storm: per-hint DTMC", len(names) + (1 if opts.mdp else 0))
    cache: dict[int, object] = {}
    for prefix, h in names:
        if not scn.tsq.enabled:
            h = ab.H
        if h not in cache:
            cache[h] = M.hint_values(ab, h, opts.precision)
        r = cache[h]
        v = r.values
        prov = {"model": "models/tsq_hint.prism", "property": "acc_delay / accepted; mean_drop",
                "constants": {**ab.constants(), "d": h}, "states": r.states, "transitions": r.transitions,
                "slot_s": ab.slot, "source": "slotted abstraction centred on (q_ref, p*)", "hint": h,
                "hints": ab.H, "mean_qdelay_slots": v["mean_qdelay"], "mean_tail_slots": v["mean_tail"]}
        out.append(Result(f"{prefix}.drop", "model-checked", v["mean_drop"], "1",
                          Interval.approximation(v["mean_drop"], neglects=MODEL_NEGLECTS, note=note), prov))
        if v["accepted"] <= 1e-12:
            # every packet of this hint is dropped (p' = 1 wherever the chain goes): no delay to report
            tick()
            continue
        delay = v["acc_delay"] / v["accepted"] * ab.slot
        out.append(Result(f"{prefix}.delay.mean", "model-checked", delay, "s",
                          Interval.approximation(delay, neglects=MODEL_NEGLECTS, note=note), prov))
        if ("p99", h) not in cache:
            dl, pr, _ = M.hint_distribution(ab, h)
            cache[("p99", h)] = float(dl[np.searchsorted(np.cumsum(pr), 0.99 - 1e-12)]) * ab.slot
        p99 = cache[("p99", h)]
        out.append(Result(f"{prefix}.delay.p99", "model-checked", p99, "s",
                          Interval.approximation(p99, neglects=MODEL_NEGLECTS, note=note),
                          {**prov, "property": "Storm steady state pushed through q' (accepted packets)"}))
        tick()
    if opts.mdp:
        g = M.no_gain(ab, opts.precision)
        prov = {"model": "models/tsq.prism, one action per hint (models/tsq.py flat_mdp_text)",
                "property": 'R{"sqrt_law"}max=? [ LRA ] / FIFO LRA - 1',
                "constants": ab.mdp_constants(), "states": g["states"], "transitions": g["transitions"],
                "max": g["max"], "fifo": g["fifo"], "capped_reachable": g["capped_reachable"],
                "tolerance": GAIN_TOLERANCE, "hints": ab.H, "direct_max": g["direct_max"],
                "solver_rel_error": g["solver_rel_error"]}
        out.append(Result("tsq.gain", "model-checked", g["gain"], "1",
                          Interval.approximation(g["gain"], neglects=MODEL_NEGLECTS,
                                                 note=f"{note}; |gain| <= {GAIN_TOLERANCE:g} counts as no gain"),
                          prov))
        tick()
    return out


# ---------------------------------------------------------------------------------------------
# simulation


def _sim_flows(scn: Scenario, override: tuple[str, int] | None = None):
    from qosbound.validation.tsq_sim import Flow

    flows, groups = [], []
    for name, f in scn.flows.items():
        hint = f.hint if override is None or override[0] != name else override[1]
        for i in range(f.count):
            flows.append(Flow(f"{name}{i}" if f.count > 1 else name, f.kind, f.rate, int(round(f.size)), hint, f.rtt))
            groups.append(name)
    return tuple(flows), np.asarray(groups)


def _sim_group_stats(scn, out, groups, name, warmup) -> dict:
    from qosbound.analytic.quality import quality
    from qosbound.validation.tsq_sim import flow_stats

    f = scn.flows[name]
    idx = np.flatnonzero(groups == name)
    st = [flow_stats(out, int(i), warmup) for i in idx]
    sel = np.isin(out.flow, idx) & ~out.dropped & np.isfinite(out.departure) & (out.arrival >= warmup)
    delivered = np.bincount(out.flow[sel], minlength=len(out.names))[idx]
    # delays are over delivered packets: a flow that delivered nothing has no delay (NaN, not 0 s)
    delay = float(np.mean([s["delay_mean"] for s, n in zip(st, delivered) if n])) if delivered.any() else math.nan
    waits = out.departure[sel] - out.arrival[sel] - out.size[sel] * 8.0 / out.capacity
    p99 = float(np.quantile(waits, 0.99)) if waits.size else math.nan
    rate = float(np.mean([s["throughput"] for s in st]))
    drop = float(np.mean([s["drop"] for s in st]))
    dmax = float(np.max([s["delay_max"] for s, n in zip(st, delivered) if n])) if delivered.any() else math.nan
    one_way = f.one_way if f.one_way is not None else f.rtt / 2
    size_bits = (f.file_size or 1.25e6) * 8.0
    q = float(quality(f.app, one_way + (delay if delivered.any() else 0.0) + f.size * 8.0 / scn.link.rate, rate,
                      size_bits if f.app == "file" else None))  # nothing delivered: throughput quality 0
    return {"delay": delay, "rate": rate, "drop": drop, "quality": q, "delay_max": dmax, "p99": p99}


def _sim_config(scn: Scenario, flows):
    """The simulator's configuration; refuses (ScenarioError naming the duration) a run too large to record."""
    from qosbound.validation.pi_aqm import PIParams
    from qosbound.validation.tsq_sim import SimConfig, check_budget

    a, opts = scn.aqm, scn.methods.simulated
    cfg = SimConfig(scn.link.rate, flows, opts.duration, PIParams(a.a, a.b, a.sampling, a.q_ref, a.q_max),
                    scn.tsq.latency, scn.tsq.hint_bits, scn.tsq.enabled)
    check_budget(cfg, field="methods.simulated.duration")
    return cfg


def _run_reps(scn: Scenario, opts: SimOptions, override, names, tick):
    from qosbound.validation.tsq_sim import simulate

    flows, groups = _sim_flows(scn, override)
    cfg = _sim_config(scn, flows)
    per = {n: [] for n in names}
    pbar = []
    npk = 0
    for r in range(opts.replications):
        out = simulate(cfg, seed=opts.seed + 7919 * r + (override[1] if override else 0) * 104729)
        npk += len(out.arrival)
        for n in names:
            per[n].append(_sim_group_stats(scn, out, groups, n, opts.warmup))
        k0 = int(len(out.p_trace) * opts.warmup / opts.duration)
        pbar.append(float(out.p_trace[k0:].mean()) if len(out.p_trace) > k0 else 0.0)
        tick()
    return per, pbar, npk


def _summarise(per_list: list[dict], confidence: float):
    """Means over replications with their Student-t estimates (validation/stats.py) at ``confidence``."""
    from qosbound.validation.stats import t_interval

    vals, ci = {}, {}
    for key in ("delay", "rate", "drop", "quality", "p99"):
        x = [d[key] for d in per_list if math.isfinite(d[key])]
        if len(x) < len(per_list):
            continue  # some replication delivered nothing: no delay estimate over all replications
        e = t_interval(x, confidence)
        vals[key], ci[key] = e.mean, e
    dmax = [d["delay_max"] for d in per_list if math.isfinite(d["delay_max"])]
    if dmax:
        vals["delay_max"] = max(dmax)
    return vals, ci


def _simulated(scn: Scenario, opts: SimOptions, progress) -> list[Result]:
    out: list[Result] = []
    names = list(scn.flows)
    hints = scn.hints() if scn.metrics.sweep else []
    tick = progress.task("simulating TSQ + PI", opts.replications * (1 + len(hints)))
    per, pbar, npk = _run_reps(scn, opts, None, names, tick)
    prov = {"source": "validation/tsq_sim.py (treap TSQ over PI, TFRC and CBR senders)", "seed": opts.seed,
            "packets": npk, "duration_s": opts.duration, "warmup_s": opts.warmup}
    from qosbound.validation.stats import t_interval

    e = t_interval(pbar, opts.confidence)
    out.append(Result("tsq.aqm_drop", "simulated", e.mean, "1",
                      Interval.ci(e.low, e.high, e.confidence, se=e.std_error, dof=e.n - 1),
                      {**prov, "replications": e.n}))
    for n in names:
        vals, ci = _summarise(per[n], opts.confidence)
        _add_group(out, n, "simulated", vals, prov, ci=ci)
    if hints:
        name = scn.metrics.sweep
        quals = []
        for h in hints:
            if h == scn.flows[name].hint:
                p1 = per[name]
            else:
                p1 = _run_reps(scn, opts, (name, h), [name], tick)[0][name]
            vals, ci = _summarise(p1, opts.confidence)
            quals.append(vals["quality"])
            _add_group(out, f"{name}@h{h}", "simulated", vals, {**prov, "hint": h}, ci=ci)
        best = hints[int(np.argmax(np.asarray(quals) - 1e-9 * np.arange(len(hints))))]
        out.append(Result(f"{name}.best_hint", "simulated", float(best), "1",
                          Interval.approximation(float(best), neglects="sampling error: the argmax of the "
                                                                       "estimated mean qualities"),
                          {**prov, "formula": "argmax over hints of the mean quality min(Q_d, Q_t)"}))
    return out


# ---------------------------------------------------------------------------------------------


def evaluate(scn: Scenario, methods: list[str], progress) -> list[Result]:
    """Every metric by every requested method."""
    out: list[Result] = []
    for method in methods:
        if method == "closed-form":
            out += _closed_form(scn)
        elif method == "model-checked":
            out += _model_checked(scn, scn.methods.model_checked, progress)
        elif method == "simulated":
            out += _simulated(scn, scn.methods.simulated, progress)
        else:
            raise ScenarioError(f"method '{method}' is not available for tsq scenarios", field="methods")
    return out


def agreements(scn: Scenario, results: list[Result]) -> list[Verdict]:
    """The TSQ checks the generic rule (qosbound.agreement) cannot express.

    * The model's insertion point against the closed form's ``q' = d q/2^n``: in the model a hint-d packet
      finding k packets gets ``q' = ceil(d k/2^n)`` slots, so its mean satisfies
      ``d/2^n <= E[q']/E[k] < d/2^n + 1/E[k]`` exactly (the ceiling adds less than one slot). A model built
      for another number of hints than the scenario's fails this.
    * The aging bound against the simulated maximum delay (an upper bound against an observed maximum, a
      lower bound: the generic rule compares bounds with estimates only).
    * The MDP's throughput gain occurs only where the cap ``p' = 1`` is reachable (Claypool, Kinicki & Kumar eq. (5)).
    """
    by = {(r.metric, r.method): r for r in results}
    out: list[Verdict] = []
    H = 2 ** scn.tsq.hint_bits
    for (metric, method), r in sorted(by.items()):
        if method != "model-checked" or not metric.endswith(".delay.mean") or not scn.tsq.enabled:
            continue
        cf = by.get((metric, "closed-form"))
        pv = r.provenance
        tail, ins, d = pv.get("mean_tail_slots"), pv.get("mean_qdelay_slots"), pv.get("hint")
        if cf is None or tail is None or ins is None or d is None or tail <= 0:
            continue
        ratio, lo, hi = ins / tail, d / H, d / H + 1.0 / tail
        slack = 1e-9 * max(1.0, hi)
        ok = lo - slack <= ratio < hi + slack
        detail = (f"model E[q']/E[k] = {ins:.6g}/{tail:.6g} slots = {ratio:.6g}; closed form q'/q = d/2^n = "
                  f"{d}/{H}; the model's rounding (ceil, < 1 slot) allows [{lo:.6g}, {hi:.6g})")
        if not ok:
            detail += f" -- the model inserts as if with {pv.get('hints')} hints, the scenario has {H}"
        out.append(Verdict("agreement", f"insertion point q'/q = d/2^n ({metric[: -len('.delay.mean')]})", metric,
                           "closed-form vs model-checked", "agree" if ok else "disagree", ratio, d / H, "1",
                           min(ratio - lo, hi - ratio), detail))
    for (metric, method), r in sorted(by.items()):
        if method != "simulated" or not metric.endswith(".delay.max"):
            continue
        b = by.get((metric[: -len(".max")] + ".bound", "closed-form"))
        if b is None:
            continue
        ok = r.value <= b.value * (1 + 1e-9)
        out.append(Verdict("agreement", f"aging bound >= simulated maximum ({metric[:-10]})", metric,
                           "closed-form vs simulated", "agree" if ok else "disagree", r.value, b.value, "s",
                           b.value - r.value, "closed-form upper bound against the largest simulated delay"))
    g = by.get(("tsq.gain", "model-checked"))
    if g is not None:
        gain = g.value > GAIN_TOLERANCE
        capped = bool(g.provenance.get("capped_reachable"))
        ok = (not gain) or capped
        out.append(Verdict("agreement", "a throughput gain occurs only where the cap p' = 1 is reachable",
                           "tsq.gain", "model-checked vs closed-form", "agree" if ok else "disagree", g.value,
                           GAIN_TOLERANCE, "1", GAIN_TOLERANCE - g.value if not capped else None,
                           "" if ok else "the MDP finds a gain outside the closed-form cap region"))
    return out


def admit(scn: Scenario, parameter: str, *, direction: str = "largest", method: str | None = None,
          lo: float | None = None, hi: float | None = None, progress=None):
    """``--vary flows.<name>.hint``: the hint that maximises the flow's quality (Claypool, Kinicki & Kumar section 4.2).

    Every hint in 1..2^n (within ``--min``/``--max``) is evaluated by ``method`` (default: simulated when
    enabled, else closed-form); ties go to the larger hint (less cutting in line).
    """
    from qosbound.admit import AdmitResult
    from qosbound.progress import QUIET
    from qosbound.scenario import build

    m = re.fullmatch(r"flows\.([A-Za-z][A-Za-z0-9_]*)\.hint", parameter)
    if not m or m.group(1) not in scn.flows:
        raise ScenarioError("tsq scenarios can vary flows.<name>.hint (the hint maximising quality)",
                            file=scn.path, field=parameter)
    name = m.group(1)
    if scn.flows[name].count != 1:
        raise ScenarioError("the varied flow group must have count 1", file=scn.path, field=parameter)
    methods = default_methods(scn)
    if method is None:
        method = "simulated" if "simulated" in methods else "closed-form"
    if method not in ("simulated", "closed-form"):
        raise ScenarioError("hint selection uses the simulated or closed-form method", file=scn.path, field="method")
    H = 2 ** scn.tsq.hint_bits
    hints = [h for h in range(1, H + 1) if (lo is None or h >= lo) and (hi is None or h <= hi)]
    if not hints:
        raise ScenarioError("no hint in the given range", file=scn.path, field=parameter)
    raw = scn.raw
    raw.setdefault("metrics", {})
    raw["metrics"] = {**raw["metrics"], "sweep": name, "hints": hints}
    trial = build(raw, scn.path)
    results = evaluate(trial, [method], progress or QUIET)
    by = {r.metric: r for r in results}
    q = {h: by[f"{name}@h{h}.quality"].value for h in hints}
    # the flow's own SLOs, judged on each hint's results (<name>.X read as <name>@h<d>.X)
    own = [slo for slo in trial.slos if slo.metric.startswith(f"{name}.") and slo.metric != f"{name}.best_hint"]
    feasible, failing = [], {}
    for h in hints:
        bad = []
        for slo in own:
            r = by.get(f"{name}@h{h}." + slo.metric[len(name) + 1:])
            if r is None:
                continue
            lim = slo_limit(trial, slo)
            if (slo.bound == "max" and r.value > lim) or (slo.bound == "min" and r.value < lim):
                bad.append(slo.title())
        if bad:
            failing[h] = bad
        else:
            feasible.append(h)
    history = [(float(h), float(q[h])) for h in hints]
    if not feasible:
        return AdmitResult(parameter, "quality-maximising", None, "1", method, f"{name}.quality", len(hints),
                           history, "no hint meets the flow's SLOs")
    best = max(feasible, key=lambda h: (round(q[h], 9), h))
    note = f"quality {q[best]:.4f} at hint {best}"
    if failing:
        note += f"; hints failing an SLO: {', '.join(str(h) for h in sorted(failing))}"
    return AdmitResult(parameter, "quality-maximising", float(best), "1", method, f"{name}.quality", len(hints),
                       history, note)


def render_models(scn: Scenario, out_dir) -> list:
    """Write the scenario's PRISM files (``qosbound model render``): the fixed-hint DTMC, then the MDP.

    The sizing constants are filled in from the scenario's operating point (see models/tsq.py,
    ``abstraction``); the DTMC's hint is the swept flow's (else the first flow's) configured hint.
    """
    from pathlib import Path

    from qosbound.models import tsq as M

    ab = _abstraction(scn)
    flow = scn.metrics.sweep or next(iter(scn.flows))
    consts = {**ab.mdp_constants(), "d": scn.flows[flow].hint}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for src, props in ((M.HINT_MODEL, M.HINT_PROPS), (M.MDP_MODEL, M.MDP_PROPS)):
        text = src.read_text(encoding="utf-8")
        for k, v in consts.items():
            text = re.sub(rf"^const (int|double) {k};", lambda m, k=k, v=v: f"const {m.group(1)} {k} = {v!r};",
                          text, flags=re.M)
        header = f"// Rendered by qosbound for scenario '{scn.name}' (constants from its operating point).\n"
        p = out / f"{scn.name}_{src.stem}.prism"
        p.write_text(header + text, encoding="utf-8")
        q = out / f"{scn.name}_{src.stem}.props"
        q.write_text(props.read_text(encoding="utf-8"), encoding="utf-8")
        written += [p, q]
    return written


def simulate_trace(scn: Scenario, packets: int, seed: int):
    """One simulated run as a per-packet trace for ``qosbound validate --simulate``.

    The run lasts ``methods.simulated.duration`` (``packets`` is not used: TSQ runs are timed). Flow names are
    the scenario's flow groups (``bulk`` for ``bulk0..bulk98``), so trace metrics match the scenario's. Trace
    delays are sojourn times (arrival to last bit); the scenario's delay metrics are queueing delays, smaller
    by one packet transmission time.
    """
    import pyarrow as pa

    from qosbound.validation.tsq_sim import simulate, to_trace

    flows, groups = _sim_flows(scn)
    cfg = _sim_config(scn, flows)
    out = simulate(cfg, seed=seed)
    table = to_trace(out)
    group_of = np.asarray(groups, dtype=object)[out.flow]
    return table.set_column(table.schema.get_field_index("flow"), "flow", pa.array(group_of.astype(str)))
