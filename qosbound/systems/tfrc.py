"""TFRC / gTFRC flows over a DiffServ/AF class (Jourjon, Lochin & Senac 2008, "Design, Implementation and Evaluation of a QoS-aware Transport Protocol"; RFC 5348).

A scenario declares flows (``flows.<name>``) with their protocol (``tfrc`` or
``gtfrc``), packet size, RTT, loss event rate and (for gTFRC, or for the SLO)
target rate; optionally the AF testbed they cross (``network``: bottleneck
capacity, competing TCP aggregate and its marker rate, RIO parameters), which
the simulator uses.

Closed form (:mod:`qosbound.analytic.tfrc`): ``<flow>.rate`` is X_calc for TFRC and
max(X_calc, g), capped by the bottleneck when one is given, for gTFRC (no receive
cap: a steady-state question); ``<flow>.rate.tfrc`` is X_calc;
``<flow>.loss.max_friendly`` the largest loss event rate at which g is still
TCP-friendly; ``<flow>.rtt.max_friendly`` the largest RTT at which it is;
``<flow>.friendliness`` the ratio X_gTFRC / X_TFRC.

Simulated (:mod:`qosbound.validation.qstp_sim`): each flow in turn is the studied
flow on the testbed; ``<flow>.rate`` is its measured throughput (95 % CI over
replications), ``<flow>.loss`` its loss event rate and ``<flow>.rtt`` its RTT.

An SLO may compare a rate with the flow's own target: ``{metric: flow1.rate, min: target}``.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from qosbound.errors import ScenarioError
from qosbound.results import Interval, Result, Verdict
from qosbound.scenario import PacketSize, PositiveInt, Probability, Rate, ScenarioBase, Size, Time
from qosbound.systems.base import (MAX_BURST, MAX_RATE, MAX_TIME, MIN_RATE, MethodsBase, Strict, TimedSimOptions,
                                   check_range, default_methods)
from qosbound.systems.capabilities import generic_admit, no_models, no_ns3, no_plot_delays
from qosbound.understood import Echo, Inputs
from qosbound.units import Kind, format_quantity
from qosbound.validation.stats import replication_rngs, t_interval
from qosbound.verdicts import default_slo_limit

__all__ = ["Scenario", "evaluate", "metric_names", "metric_kind", "slo_limit", "agreements", "default_methods",
           "simulate_trace", "ns3_trace", "plot_delays", "render_models", "admit", "understood_inputs"]


class Flow(Strict):
    protocol: Literal["tfrc", "gtfrc"] = "gtfrc"
    size: PacketSize = Field(default=1000.0, description="packet size s, bytes (at most 65535 B, an IP packet)")
    rtt: Time = Field(description="round-trip time R, s")
    loss: Probability = Field(description="loss event rate p in (0, 1]")
    target: Rate | None = Field(default=None, description="gTFRC target g (the AF class's rate), bit/s")
    b: float = 1.0
    t_rto: Time | None = Field(default=None, description="TCP retransmission timeout (default 4 R)")

    @field_validator("size", "rtt", "b")
    @classmethod
    def _pos(cls, v):
        if not v > 0:
            raise ValueError("must be positive")
        return v

    @field_validator("rtt", "t_rto")
    @classmethod
    def _time_range(cls, v):
        return check_range(v, 0.0, MAX_TIME, "a time of", "s")

    @field_validator("t_rto", "target")
    @classmethod
    def _pos_opt(cls, v):
        if v is not None and not v > 0:
            raise ValueError("must be positive")
        return v

    @field_validator("loss")
    @classmethod
    def _loss(cls, v):
        if not 0 < v <= 1:
            raise ValueError("the loss event rate must lie in (0, 1] (p = 0 is slow start: no equation rate)")
        return v

    @model_validator(mode="after")
    def _target(self):
        if self.protocol == "gtfrc" and self.target is None:
            raise ValueError("a gTFRC flow needs a target rate")
        return self


class Network(Strict):
    capacity: Rate = Field(default=1000e3, description="bottleneck, bit/s")
    tcp_flows: int = Field(default=10, description="TCP flows in the competing aggregate")
    aggregate_target: Rate = Field(default=400e3, description="the aggregate's marker rate, bit/s")
    bucket: Size = Field(default=1e4, description="token-bucket depth, bytes")
    rio: list[float] = Field(default_factory=lambda: [10, 20, 0.1, 20, 40, 0.02],
                             description="(min_out, max_out, p_out, min_in, max_in, p_in), packets")
    buffer: PositiveInt = 50

    @model_validator(mode="after")
    def _check(self):
        if self.capacity <= 0:
            raise ScenarioError("the bottleneck capacity must be positive", field="network.capacity")
        check_range(self.capacity, MIN_RATE, MAX_RATE, "the bottleneck capacity", "bit/s", "network.capacity")
        check_range(self.bucket, None, MAX_BURST, "the token bucket's depth", "B", "network.bucket")
        if not 0 <= self.tcp_flows <= 200:
            raise ScenarioError("between 0 and 200 TCP flows", field="network.tcp_flows")
        if len(self.rio) != 6:
            raise ScenarioError("give six RIO numbers (min_out, max_out, p_out, min_in, max_in, p_in)",
                                field="network.rio")
        if not all(math.isfinite(x) for x in self.rio):
            raise ScenarioError("RIO numbers must be finite", field="network.rio")
        mo, xo, po, mi, xi, pi = self.rio
        if not (0 <= mo < xo and 0 <= mi < xi):
            raise ScenarioError("RIO needs min_th < max_th for both colours", field="network.rio")
        if not (0 <= po <= 1 and 0 <= pi <= 1):
            raise ScenarioError("RIO drop probabilities must lie in [0, 1]", field="network.rio")
        if not (self.bucket > 0 and math.isfinite(self.bucket)):
            raise ScenarioError("the token bucket's depth must be positive and finite", field="network.bucket")
        if self.aggregate_target <= 0 or self.aggregate_target >= self.capacity:
            raise ScenarioError("the aggregate's target must be positive and below the capacity",
                                field="network.aggregate_target")
        return self


class SimOptions(TimedSimOptions):
    replications: PositiveInt = 4
    warmup: Time = 15.0


class Methods(MethodsBase):
    simulated: SimOptions | None = None


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


class Scenario(ScenarioBase):
    system: Literal["tfrc"]
    flows: dict[str, Flow]
    network: Network | None = None
    methods: Methods = Field(default_factory=Methods)

    @model_validator(mode="after")
    def _check(self):
        if not self.flows:
            raise ScenarioError("declare at least one flow", field="flows")
        for name, f in self.flows.items():
            if not _NAME.match(name):
                raise ScenarioError("a flow name is letters, digits, '_' or '-' (no dots)", field=f"flows.{name}")
            if self.network is not None:
                if f.target is not None and f.target + self.network.aggregate_target > self.network.capacity:
                    raise ScenarioError("the AF reservations (flow target + aggregate target) exceed the "
                                        "bottleneck capacity", field=f"flows.{name}.target")
                if f.rtt <= f.size * 8 / self.network.capacity:
                    raise ScenarioError("the RTT must exceed one packet's transmission time at the bottleneck",
                                        field=f"flows.{name}.rtt")
        if self.methods.simulated is not None and self.methods.simulated.enabled and self.network is None:
            raise ScenarioError("the simulated method needs a 'network' section", field="methods.simulated")
        return self


_STATS = {"rate": "rate", "rate.tfrc": "rate", "loss.max_friendly": "probability", "rtt.max_friendly": "time",
          "friendliness": "count", "loss": "probability", "rtt": "time", "throughput": "rate"}


def metric_names(scn: Scenario) -> list[str]:
    """Per flow: the rate (model or simulated) and the delivered throughput a packet trace measures."""
    return [m for name in scn.flows for m in (f"{name}.rate", f"{name}.throughput")]


def metric_kind(metric: str) -> Kind:
    flow, _, stat = metric.partition(".")
    if stat in _STATS:
        return _STATS[stat]
    raise ScenarioError(f"unknown metric '{metric}' for a tfrc scenario; known: <flow>.rate, <flow>.rate.tfrc, "
                        "<flow>.loss.max_friendly, <flow>.rtt.max_friendly, <flow>.friendliness, <flow>.loss, "
                        "<flow>.rtt, <flow>.throughput (trace)", field="metric")


def slo_limit(scn: Scenario, slo) -> float:
    """SLO limit in SI; ``target`` (a string) stands for the metric's flow's target rate."""
    flow, _, _ = slo.metric.partition(".")
    if flow not in scn.flows:
        raise ScenarioError(f"no flow named '{flow}' (flows: {', '.join(scn.flows)})")
    kind = metric_kind(slo.metric)
    if isinstance(slo.raw_limit, str) and slo.raw_limit.strip() == "target":
        if kind != "rate":
            raise ScenarioError("'target' is a rate: use it with a rate metric")
        t = scn.flows[flow].target
        if t is None:
            raise ScenarioError(f"flow '{flow}' has no target rate")
        return t
    return default_slo_limit(metric_kind, slo)


def understood_inputs(scn: Scenario) -> Inputs:
    """The flows as the equations see them (packet size, RTT, loss event rate, target, RTO) and, when given, the
    testbed: bottleneck capacity, the competing aggregate's target (share of the bottleneck) and bucket."""
    net = scn.network
    e = Echo(scn, net.capacity if net is not None else None, of="the bottleneck")
    if net is not None:
        e.quantity("network.capacity", net.capacity, "rate")
        e.quantity("network.tcp_flows", net.tcp_flows, "count", noun="TCP flows")
        e.quantity("network.aggregate_target", net.aggregate_target, "rate", share=True)
        e.quantity("network.bucket", net.bucket, "size")
    for n, f in scn.flows.items():
        e.text(f"flows.{n}.protocol", f.protocol)
        e.quantity(f"flows.{n}.size", f.size, "size")
        e.quantity(f"flows.{n}.rtt", f.rtt, "time")
        e.quantity(f"flows.{n}.loss", f.loss, "probability", note="loss event rate")
        if f.target is not None:
            e.quantity(f"flows.{n}.target", f.target, "rate", share=net is not None)
        e.quantity(f"flows.{n}.t_rto", f.t_rto if f.t_rto is not None else 4 * f.rtt, "time",
                   note="" if f.t_rto is not None else "4 R")
    return e.done()


#: What the closed-form rate leaves out when it stands for the rate a flow gets in a network.
_RATE_NEGLECTS = ("the loss event rate and RTT the network produces (the equation is evaluated at the declared "
                  "p and R), the rate's oscillation around the equation and the receive-rate cap")


def _bracket_root(f, x: float, what: str) -> Interval:
    """A true interval for the root ``x`` of a decreasing ``f`` (``f(x) = 0``): widen [x(1-d), x(1+d)] until
    ``f`` changes sign across it (an a-posteriori bracket, not the solver's tolerance)."""
    d = 1e-12
    while d < 1e-3:
        lo, hi = x * (1 - d), min(x * (1 + d), 1.0)
        if f(lo) >= 0 >= f(hi):
            return Interval.numerical(lo, hi, note=f"{what}: the equation changes sign across this bracket")
        d *= 10
    return Interval.approximation(x, neglects=f"{what}: no sign change found within 0.1 % (solver tolerance)")


def _finite(x: float, what: str, flow: str, unit: str = "bit/s") -> float:
    """``x`` when finite; an over- or underflow from extreme inputs (a rate of inf bit/s) is refused at the flow."""
    if not math.isfinite(x):
        raise ScenarioError(f"{what} = {x} {unit}: the packet size, RTT, loss rate and target are outside the range "
                            "the TFRC equation can be evaluated in floating point", field=f"flows.{flow}")
    return x


def _closed_form(scn: Scenario) -> list[Result]:
    out = []
    for name in scn.flows:
        try:
            out += _closed_form_flow(scn, name)
        except ScenarioError as e:  # the equations name their parameter ('loss'): say which flow's it is
            if e.file is None and not (e.field or "").startswith("flows."):
                raise e.located(prefix=f"flows.{name}") from None
            raise
    return out


def _closed_form_flow(scn: Scenario, only: str) -> list[Result]:
    # costly (SymPy closed forms, about 1 s): loaded when a TFRC scenario is evaluated, not when systems load
    from qosbound.analytic import tfrc as T

    out = []
    eq = "RFC 5348 section 3.1; Jourjon, Lochin & Senac 2008, eq. (1)"
    for name, f in [(only, scn.flows[only])]:
        rto_text = "4R" if f.t_rto is None else f"{f.t_rto:g} s"
        base = {"s": f.size, "R": f.rtt, "p": f.loss, "b": f.b, "t_RTO": rto_text}
        xc = _finite(8.0 * float(T.tfrc_rate(f.size, f.rtt, f.loss, f.b, f.t_rto)), "X_calc", name)
        out.append(Result(f"{name}.rate.tfrc", "closed-form", xc, "bit/s",
                          Interval.exact(xc, note="the TFRC equation X_calc at the declared p and R"),
                          {"formula": "X = s/(R sqrt(2bp/3) + t_RTO 3 sqrt(3bp/8) p (1+32p^2))", "source": eq, **base}))
        if f.protocol == "gtfrc":
            x = _finite(8.0 * float(T.gtfrc_rate(f.size, f.rtt, f.loss, f.target / 8.0, None, f.b, f.t_rto)),
                        "X_gTFRC", name)
            src = "Jourjon et al. 2008 eq. (2): max(X_calc, g), floor s/64 (RFC 5348 4.3); no receive cap"
        else:
            x = xc
            src = eq
        if scn.network is not None and x > scn.network.capacity:
            x = scn.network.capacity
            src += "; capped at the bottleneck capacity"
        out.append(Result(f"{name}.rate", "closed-form", x, "bit/s",
                          Interval.approximation(x, neglects=_RATE_NEGLECTS,
                                                 note="the sender's equation rate at the declared p and R"),
                          {"formula": "gTFRC" if f.protocol == "gtfrc" else "TFRC", "source": src, **base}))
        if f.target is not None:
            g = f.target / 8.0
            pm = _finite(float(T.max_loss_for_target(f.size, f.rtt, g, f.b, f.t_rto)), "p_max", name, "")
            if pm < 1.0:
                iv = _bracket_root(lambda q: float(T.tfrc_rate(f.size, f.rtt, q, f.b, f.t_rto)) - g, pm,
                                   "X_calc(p) = g")
            else:
                iv = Interval.exact(pm, note="X_calc(1) >= g: every loss event rate is TCP-friendly at g")
            out.append(Result(f"{name}.loss.max_friendly", "closed-form", pm, "1", iv,
                              {"formula": "largest p with X_calc(p) >= g (SciPy Newton in sqrt(p))", "source": eq,
                               **base}))
            if f.t_rto is None:
                rm = _finite(float(T.max_rtt_for_target(f.size, f.loss, g, f.b)), "R_max", name, "s")
                out.append(Result(f"{name}.rtt.max_friendly", "closed-form", rm, "s",
                                  Interval.exact(rm, note="R = s/(g K(p)), a closed form"),
                                  {"formula": "R = s/(g K(p)) with t_RTO = 4R (SymPy solve)", "source": eq, **base}))
            ratio = _finite(float(T.friendliness_ratio(f.size, f.rtt, f.loss, g, f.b, f.t_rto)), "X_gTFRC / X_TFRC",
                            name, "")
            out.append(Result(f"{name}.friendliness", "closed-form", ratio, "1", Interval.exact(ratio),
                              {"formula": "X_gTFRC / X_TFRC = max(X_calc, g) / X_calc",
                               "source": "Jourjon et al. 2008, eq. (2)", **base}))
    return out


def _config(scn: Scenario, f: Flow):
    # costly (the dumbbell's numba kernels and the TFRC equation, about 2 s): loaded only to simulate
    from qosbound.validation.qstp_sim import QstpConfig

    net, opt = scn.network, scn.methods.simulated or SimOptions()
    target = f.target if f.target is not None else net.capacity - net.aggregate_target
    try:
        return QstpConfig(protocol=f.protocol, target=target, aggregate_target=net.aggregate_target,
                          n_tcp=net.tcp_flows, capacity=net.capacity, rtt=f.rtt, size=f.size, bucket=net.bucket,
                          rio=tuple(net.rio), buffer=net.buffer, duration=opt.duration, warmup=opt.warmup)
    except ValueError as e:
        raise ScenarioError(str(e), field="network") from None


def _simulated(scn: Scenario, progress) -> list[Result]:
    # costly (the dumbbell's numba kernels and the TFRC equation, about 2 s): loaded only to simulate
    from qosbound.validation.qstp_sim import replicate

    opt = scn.methods.simulated
    net = scn.network
    out = []
    advance = progress.task("tfrc: simulating", len(scn.flows))
    for k, (name, f) in enumerate(scn.flows.items()):
        runs = replicate(_config(scn, f), opt.replications, opt.seed, stream=(k,))
        prov = {"simulator": "qosbound.validation.qstp_sim", "seed": opt.seed, "stream": k,
                "seeding": "numpy SeedSequence(seed, spawn_key=(flow index,)).spawn(replications)",
                "replications": opt.replications, "duration_s": opt.duration, "warmup_s": opt.warmup,
                "packets": int(sum(r.packets for r in runs)), "tcp_flows": net.tcp_flows}
        for metric, vals, unit in ((f"{name}.rate", [r.throughput for r in runs], "bit/s"),
                                   (f"{name}.loss", [r.loss_event_rate for r in runs], "1"),
                                   (f"{name}.rtt", [r.rtt for r in runs], "s")):
            est = t_interval(vals, opt.confidence)
            extra = {"per_replication": [float(v) for v in vals]}
            if metric.endswith(".rate"):
                extra["equation_at_simulated_p_R"] = [float(r.predicted) for r in runs]
            out.append(Result(metric, "simulated", est.mean, unit,
                              est.interval(note=f"Student t over {opt.replications} replications"),
                              {**prov, "std_error": est.std_error, **extra}))
        advance()
    return out


def evaluate(scn: Scenario, methods: list[str], progress) -> list[Result]:
    out: list[Result] = []
    for m in methods:
        if m == "closed-form":
            out += _closed_form(scn)
        elif m == "simulated":
            if scn.network is None:
                raise ScenarioError("the simulated method needs a 'network' section", field="network")
            if scn.methods.simulated is None:
                scn.methods.simulated = SimOptions()
            out += _simulated(scn, progress)
        else:
            raise ScenarioError(f"method '{m}' is not available for tfrc scenarios", field="methods")
    return out


def agreements(scn: Scenario, results: list[Result]) -> list[Verdict]:
    """The one check the generic rule cannot express: the simulated rate against the TFRC equation evaluated at
    the loss event rate and RTT the same replications measured (a paired comparison per replication).

    The equation is a steady-state approximation of the sender's rate, so a gap is reported with status
    ``approximate`` and its size, never as a contradiction; ``agree`` when the paired Student-t interval (at the
    scenario's confidence) of the gap contains 0. The closed-form rate at the declared p and R is compared with
    the simulated rate by :func:`qosbound.agreement.agreements` (an approximation), and whether gTFRC holds its
    target is an SLO (``{metric: flow.rate, min: target}``), not a check between methods."""
    out = []
    conf = scn.methods.simulated.confidence if scn.methods.simulated is not None else 0.95
    for r in results:
        if r.method != "simulated" or not r.metric.endswith(".rate"):
            continue
        pred = r.provenance.get("equation_at_simulated_p_R") or []
        sim = r.provenance.get("per_replication") or []
        pairs = [(x, y) for x, y in zip(sim, pred) if math.isfinite(y)]
        if len(pairs) < 2:
            continue
        diff = t_interval([x - y for x, y in pairs], conf)
        eq = sum(y for _, y in pairs) / len(pairs)
        ok = diff.low <= 0.0 <= diff.high
        rel = abs(diff.mean) / eq if eq else math.inf
        detail = (f"simulated - equation = {format_quantity(diff.mean, 'bit/s')} ({rel:.1%}), "
                  f"{diff.interval().label()} [{format_quantity(diff.low, 'bit/s')}, "
                  f"{format_quantity(diff.high, 'bit/s')}] over {len(pairs)} paired replications; the equation "
                  "neglects the rate's oscillation and the receive-rate cap")
        out.append(Verdict("agreement", f"simulated {r.metric} vs the TFRC equation at the simulated p and R",
                           r.metric, "simulated vs closed-form", "agree" if ok else "approximate", r.value, eq,
                           "bit/s", -max(0.0, diff.low, -diff.high), detail,
                           result_kind=f"{r.interval.label()} vs approximation"))
    return out


def simulate_trace(scn: Scenario, packets: int, seed: int):
    """The studied flows' packets at the bottleneck, one simulated test bed per flow, as one trace
    (``qosbound validate --simulate``); ``packets`` is not used (runs are timed). Competing TCP packets are
    left out: the metrics concern the studied flows."""
    # optional and costly: pyarrow, and the dumbbell's numba kernels (about 2 s), loaded only for a trace
    import pyarrow as pa
    import pyarrow.compute as pc

    from qosbound.validation.qstp_sim import simulate  # costly: the dumbbell's numba kernels

    if scn.network is None:
        raise ScenarioError("simulation needs a 'network' section", field="network")
    parts = []
    for k, (name, f) in enumerate(scn.flows.items()):
        # the first replication of the simulated method's flow k: same seeding, same run
        run = simulate(_config(scn, f), replication_rngs(seed, 1, stream=(k,))[0], trace=True)
        t = run.extra["trace"]
        t = t.filter(pc.equal(t["flow"], "flow0"))
        parts.append(t.set_column(t.schema.get_field_index("flow"), "flow", pa.array([name] * t.num_rows)))
    return pa.concat_tables(parts)


# The hooks TFRC has no capability for (see qosbound.systems.System).
ns3_trace = no_ns3("tfrc")
render_models = no_models("tfrc")
plot_delays = no_plot_delays
admit = generic_admit
