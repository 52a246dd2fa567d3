"""Strict-priority EF queue feeding a finite FIFO transmission queue (Ferrari, Pau & Raffaelli 2001, "Measurement Based Analysis of Delay in Priority Queueing").

Semantics (shared by the closed forms, the PRISM model and the simulator; see
DESIGN.md): a packet of ``size`` bytes occupies ``ceil(size/unit)`` units of the
transmission queue (TxQ). Whenever fewer than ``Q_t`` units are occupied the
scheduler moves one packet into the TxQ -- the head EF packet if one waits in the
priority queue (PQ), else a best-effort (BE) packet, whose size is drawn from the
BE size distribution (saturated BE always has a packet; see below for a load). All units of a
packet are released when its last bit leaves the wire; the TxQ is FIFO at line
rate. EF delay runs from arrival to the last bit on the wire. The PQ holds at
most ``pq.capacity`` EF packets; an EF packet arriving to a full PQ is lost.

Best effort with a load (``traffic.BE.rate``, bit/s, instead of ``saturated:
true``): BE packets arrive as a Poisson process of rate ``rate / (8 E[L])`` with
i.i.d. sizes from the size mix and wait in an unbounded FIFO BE queue; the
total utilisation ``(EF rate + BE rate) / link`` must be below 1. The scheduler
refills the TxQ from the PQ first, else from the BE queue when it is non-empty;
when both are empty the TxQ may empty and the line idles. An arrival that finds
fewer than ``Q_t`` units occupied enters the TxQ at once (an arrival at the
instant of a departure is handled after the departure). Saturated best effort
(the default) is the worst case of Ferrari et al.; the closed forms and the
simulator answer for a load, the PRISM model does not (its slot-start chain is
exact only while the line never idles): ``model-checked`` is skipped with the
reason when the scenario merely enables it, and refused (exit 2) when asked for.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from qosbound.errors import SKIPPABLE, MethodNotApplicable, ResourceError, ScenarioError
from qosbound.params import Params
from qosbound.results import Result, Verdict
from qosbound.scenario import PacketSize, PositiveInt, Probability, Rate, ScenarioBase, Size, Time
from qosbound.systems.base import (Link, MethodsBase, ModelOptionsBase, PacketSimOptions, Strict, ccdf_name,
                                   default_methods, parse_quantile_name, quantile_name)
from qosbound.systems.capabilities import generic_admit
from qosbound.understood import Echo, Inputs
from qosbound.units import Kind, format_quantity, parse_quantity
from qosbound.verdicts import default_slo_limit

__all__ = ["Scenario", "Params", "params", "evaluate", "metric_kind", "slo_limit", "agreements",
           "default_methods", "metric_names", "model_route", "simulate_trace", "ns3_trace", "plot_delays",
           "render_models", "admit", "understood_inputs"]


class TxQ(Strict):
    units: PositiveInt = Field(description="Q_t: the scheduler refills while fewer than Q_t units are occupied")
    unit_size: Size = Field(default=512.0, description="memory unit, bytes")

    @field_validator("unit_size")
    @classmethod
    def _pos(cls, v):
        if v <= 0:
            raise ValueError("unit size must be positive")
        return v


class PQ(Strict):
    capacity: PositiveInt = Field(default=10, description="priority queue size, packets")


class EFStream(Strict):
    """One EF micro-flow of an aggregate (Ferrari et al. 2001, section V)."""

    rate: Rate = Field(description="stream wire rate, bit/s")
    size: PacketSize = Field(description="packet size on the wire, bytes")
    arrivals: Literal["poisson", "cbr"] = "cbr"
    phase: Literal["random"] | Time = Field(default="random", description="CBR: time of the first packet, or "
                                            "'random' (uniform over one period, independent per stream)")

    @field_validator("rate", "size")
    @classmethod
    def _pos(cls, v):
        if v <= 0:
            raise ValueError("must be positive")
        return v

    @model_validator(mode="after")
    def _phase(self):
        if self.phase != "random":
            if self.arrivals != "cbr":
                raise ValueError("a phase is given only to a CBR stream")
            if self.phase < 0:
                raise ValueError("the phase is a time >= 0")
        return self


class EFTraffic(Strict):
    """EF traffic: one stream (``rate``, ``size``, ``arrivals``), a list of ``streams``, or ``calls`` identical CBR
    streams of the per-call stream ``call`` with independent uniform phases. After validation ``rate`` is the
    aggregate rate and ``size`` the (common) packet size in every form."""

    rate: Rate | None = Field(default=None, description="EF wire rate, bit/s (the aggregate's, for streams/calls)")
    size: PacketSize | None = Field(default=None, description="EF packet size on the wire, bytes")
    arrivals: Literal["poisson", "cbr", "bernoulli"] = "poisson"
    burst: Size | None = Field(default=None, description="token-bucket depth for the worst-case bound, bytes")
    streams: list[EFStream] | None = Field(default=None, description="an aggregate of EF streams")
    calls: int | None = Field(default=None, description="number of identical calls (CBR, random phases)")
    call: EFStream | None = Field(default=None, description="the per-call stream of 'calls'")

    @field_validator("rate", "size")
    @classmethod
    def _pos(cls, v):
        if v is not None and v <= 0:
            raise ValueError("must be positive")
        return v

    @field_validator("calls", mode="before")
    @classmethod
    def _calls(cls, v):
        if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, float) and v.is_integer())) or v < 1:
            raise ValueError(f"the number of calls is a positive integer, got {v!r}")
        return int(v)

    @model_validator(mode="after")
    def _forms(self):
        single = self.rate is not None or self.size is not None
        forms = [n for n, on in (("rate/size", single), ("streams", self.streams is not None),
                                 ("calls", self.calls is not None or self.call is not None)) if on]
        if len(forms) != 1:
            raise ValueError("give exactly one of 'rate' and 'size' (one stream), 'streams' (a list) or 'calls' with "
                             f"'call' (identical calls); found {', '.join(forms) or 'none'}")
        if single:
            if self.rate is None or self.size is None:
                raise ValueError("a single EF stream needs both 'rate' and 'size'")
            return self
        if self.calls is not None or self.call is not None:
            if self.calls is None or self.call is None:
                raise ValueError("'calls' (how many) and 'call' (the per-call stream) go together")
            if self.call.arrivals != "cbr" or self.call.phase != "random":
                raise ValueError("a call is a CBR stream with a random phase (arrivals: cbr, phase: random)")
            each = [self.call]
        else:
            if not self.streams:
                raise ValueError("'streams' is empty")
            each = self.streams
        sizes = {s.size for s in each}
        if len(sizes) > 1:
            raise ValueError(f"the EF streams have different packet sizes ({', '.join(f'{x:g} B' for x in sorted(sizes))});"
                             " the PQ + TxQ semantics here take one EF size: split them into equal sizes")
        if self.arrivals != "poisson":  # the single-stream field: meaningless here, refuse rather than ignore
            raise ValueError("'arrivals' belongs to each stream (or the call), not to the aggregate")
        total = sum(s.rate for s in each) * (self.calls or 1)
        object.__setattr__(self, "rate", total)
        object.__setattr__(self, "size", each[0].size)
        return self

    def stream_list(self) -> list[EFStream]:
        """The streams of an aggregate ([] for the single-stream form); ``calls`` expand to that many streams."""
        if self.calls is not None:
            return [self.call] * self.calls
        return list(self.streams or [])


class BESize(Strict):
    size: PacketSize
    p: Probability

    @field_validator("size")
    @classmethod
    def _pos(cls, v):
        if v <= 0:
            raise ValueError("packet size must be positive")
        return v


class BETraffic(Strict):
    saturated: bool | None = Field(default=None, description="best effort always has a packet (the worst case of "
                                   "Ferrari et al. 2001); the default when no rate is given")
    rate: Rate | None = Field(default=None, description="offered BE load, bit/s: Poisson packet arrivals with "
                              "i.i.d. sizes from the size mix, waiting in an unbounded FIFO BE queue")
    size: PacketSize | None = None
    sizes: list[BESize] | None = None

    @field_validator("rate")
    @classmethod
    def _rate(cls, v):
        if v is not None and not v > 0:
            raise ValueError("BE rate must be positive (for no load at all, leave best effort out of the rate: a "
                             "tiny rate; for the worst case, saturated: true)")
        return v

    @model_validator(mode="after")
    def _check(self):
        if self.rate is not None:
            if self.saturated:
                raise ValueError("give either 'saturated: true' or a BE 'rate' (a load), not both")
        elif self.saturated is False:
            raise ValueError("saturated: false needs a BE load: give 'rate' (bit/s, Poisson arrivals of the size "
                             "mix), or set saturated: true")
        if (self.size is None) == (self.sizes is None):
            raise ValueError("give exactly one of 'size' (a fixed size) or 'sizes' (a list of size/p pairs)")
        if self.size is not None and self.size <= 0:
            raise ValueError("packet size must be positive")
        if self.sizes is not None:
            if len(self.sizes) == 0:
                raise ValueError("'sizes' is empty")
            total = sum(s.p for s in self.sizes)
            if abs(total - 1.0) > 1e-9:
                raise ValueError(f"size probabilities sum to {total:.6g}, not 1")
        return self

    @property
    def is_saturated(self) -> bool:
        """True unless a BE load (``rate``) is given."""
        return self.rate is None

    def distribution(self) -> tuple[np.ndarray, np.ndarray]:
        if self.size is not None:
            return np.array([self.size]), np.array([1.0])
        sizes = np.array([s.size for s in self.sizes])
        probs = np.array([s.p for s in self.sizes])
        keep = probs > 0
        return sizes[keep], probs[keep]


class Traffic(Strict):
    EF: EFTraffic
    BE: BETraffic


class ModelOptions(ModelOptionsBase):
    engine: Literal["storm", "prism"] = "storm"
    exact: bool = False
    granule: Size | Literal["auto"] = "auto"
    max_granules: PositiveInt = 64
    max_states: float = Field(default=1e6, ge=1, description="budget on the PQ + TxQ chain's states (its upper "
                              "bound, known before building): a larger chain is refused, or skipped when the "
                              "scenario merely enables the method; 1e6 states build and solve in about a minute")


class SimOptions(PacketSimOptions):
    @field_validator("packets", mode="before")
    @classmethod
    def _pk(cls, v):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        return v


class Methods(MethodsBase):
    model_checked: ModelOptions = Field(default_factory=ModelOptions, alias="model-checked")
    simulated: SimOptions = Field(default_factory=SimOptions)


class Metrics(Strict):
    ccdf_at: list[Time] = Field(default_factory=lambda: [5e-3, 10e-3, 15e-3])
    quantiles: list[float] = Field(default_factory=lambda: [0.99])

    @field_validator("ccdf_at")
    @classmethod
    def _pos(cls, v):
        for d in v:
            if d <= 0:
                raise ValueError("CCDF points must be positive times")
        return v

    @field_validator("quantiles")
    @classmethod
    def _q(cls, v):
        for q in v:
            if not isinstance(q, (int, float)) or not 0 < q < 1:
                raise ValueError(f"quantile {q!r} is not in (0, 1)")
        return v


class Scenario(ScenarioBase):
    system: Literal["pq_txq"]
    link: Link
    txq: TxQ
    pq: PQ = Field(default_factory=PQ)
    traffic: Traffic
    methods: Methods = Field(default_factory=Methods)
    metrics: Metrics = Field(default_factory=Metrics)

    @model_validator(mode="after")
    def _stable(self):
        ef = self.traffic.EF
        rho = ef.rate / self.link.rate
        if rho >= 1:
            form = "calls" if ef.calls is not None else "streams" if ef.streams is not None else "rate"
            what = {"calls": f"{ef.calls} calls x {_q(ef.call.rate)}" if ef.calls else "",
                    "streams": f"the {len(ef.streams or [])} streams' total {_q(ef.rate)}",
                    "rate": f"{_q(ef.rate)}"}[form]
            raise ScenarioError(f"EF utilisation {what} / link {_q(self.link.rate)} = {rho:.4g} >= 1: the "
                                "priority queue is unstable", field=f"traffic.EF.{form}")
        be = self.traffic.BE
        if be.rate is not None:
            total = rho + be.rate / self.link.rate
            if total >= 1:
                raise ScenarioError(f"total utilisation (EF {_q(ef.rate)} + BE {_q(be.rate)}) / link "
                                    f"{_q(self.link.rate)} = {total:.4g} >= 1: the unbounded BE "
                                    "queue is unstable; lower the BE rate, or use saturated: true for the worst "
                                    "case", field="traffic.BE.rate")
        if self.traffic.EF.burst is not None and self.traffic.EF.burst < self.traffic.EF.size:
            raise ScenarioError("token-bucket depth must hold at least one EF packet", field="traffic.EF.burst")
        return self


def _q(rate: float) -> str:
    return format_quantity(rate, "bit/s", digits=6)


def params(scn: Scenario) -> Params:
    ef = scn.traffic.EF
    sizes, probs = scn.traffic.BE.distribution()
    streams = tuple((s.rate, s.arrivals, -1.0 if s.phase == "random" else float(s.phase)) for s in ef.stream_list())
    arrivals = ef.arrivals
    if streams:
        if all(k == "poisson" for _, k, _ in streams):
            arrivals = "poisson"  # independent Poisson streams merge exactly into one
        elif len(streams) == 1 and streams[0][2] < 0:
            arrivals = "cbr"  # one random-phase CBR stream: the single-stream form
        else:
            arrivals = "aggregate"
    n_cbr = len(streams) if streams and all(k == "cbr" for _, k, _ in streams) else (1 if arrivals == "cbr" else 0)
    burst = ef.burst if ef.burst is not None else (n_cbr * ef.size if n_cbr else scn.pq.capacity * ef.size)
    return Params(C=scn.link.rate, Q_t=scn.txq.units, unit=scn.txq.unit_size, pq_cap=scn.pq.capacity,
                  ef_size=ef.size, ef_rate=ef.rate, lam=ef.rate / (8.0 * ef.size), arrivals=arrivals,
                  be_sizes=sizes, be_probs=probs, burst=burst, be_rate=scn.traffic.BE.rate, ef_streams=streams)


#: The metrics with a fixed name and their kinds (the quantiles and CCDF points are named by the scenario);
#: ``EF.delay.cobham_mean`` is an approximation reported beside the mean, ``EF.loss.cbr_bound`` a bound reported
#: beside the loss: not metrics a trace measures.
_FIXED: dict[str, Kind] = {"EF.delay.mean": "time", "EF.delay.worst_case_mean": "time", "EF.delay.max": "time",
                           "EF.loss": "probability", "EF.delay.cobham_mean": "time",
                           "EF.loss.cbr_bound": "probability"}
#: Reported beside another metric (an approximation of it, or a bound on it), not a metric of their own.
_BESIDE = ("EF.delay.cobham_mean", "EF.loss.cbr_bound")


def stream_prefix(i: int) -> str:
    """The metric prefix of EF stream ``i`` (0-based) of an aggregate: 'EF.s1', 'EF.s2', ..."""
    return f"EF.s{i + 1}"


def per_stream(p: Params) -> bool:
    """Whether per-stream metrics are reported: an aggregate whose streams are not all alike (identical streams
    with independent random phases are exchangeable: each one's statistics are the aggregate's)."""
    return len(set(p.ef_streams)) > 1 or (len(p.ef_streams) > 1 and p.ef_streams[0][2] >= 0)


#: Per-stream metrics (``EF.s<i>.<stat>``) and their kinds, by the simulator.
_STREAM: dict[str, Kind] = {"delay.mean": "time", "loss": "probability"}


def metric_names(scn: Scenario) -> list[str]:
    m = ["EF.delay.mean"] + [f"EF.delay.{quantile_name(q)}" for q in scn.metrics.quantiles]
    m += [ccdf_name("EF.delay", d) for d in scn.metrics.ccdf_at]
    m += [n for n in _FIXED if n not in m and n not in _BESIDE]
    ef = scn.traffic.EF
    if ef.streams is not None or ef.calls is not None:
        m.append("EF.aggregation_degree")
        p = params(scn)
        if per_stream(p):
            m += [f"{stream_prefix(i)}.{stat}" for i in range(len(p.ef_streams)) for stat in _STREAM]
    return m


def metric_kind(metric: str) -> Kind:
    if metric in _FIXED:
        return _FIXED[metric]
    if metric == "EF.aggregation_degree":
        return "probability"
    parts = metric.split(".", 2)
    if len(parts) == 3 and parts[0] == "EF" and parts[1][:1] == "s" and parts[1][1:].isdigit() \
            and parts[2] in _STREAM:
        return _STREAM[parts[2]]
    stat = metric[len("EF.delay."):] if metric.startswith("EF.delay.") else None
    if stat is not None and stat.startswith("ccdf@"):
        return "probability"
    if stat is not None and parse_quantile_name(stat) is not None:
        return "time"
    raise ScenarioError(f"unknown metric '{metric}' for a pq_txq scenario; known: EF.delay.pNN, "
                        f"EF.delay.ccdf@<time>, {', '.join(_FIXED)}, and for EF aggregates "
                        "EF.aggregation_degree, EF.s<i>.delay.mean, EF.s<i>.loss", field="metric")


def slo_limit(scn: Scenario, slo) -> float:
    return default_slo_limit(metric_kind, slo)


def understood_inputs(scn: Scenario) -> Inputs:
    """The port as the methods see it: link, ring, PQ, each EF stream's rate and share of the link, the BE load
    and size mix, and the total utilisation."""
    link, unit = scn.link.rate, scn.txq.unit_size

    def ring(size: float) -> str:
        n = math.ceil(size / unit)
        return f"{n} ring unit{'s' if n != 1 else ''}"

    e = Echo(scn, link).quantity("link.rate", link, "rate")
    e.quantity("txq.units", scn.txq.units, "count", noun="units", note="the scheduler refills while fewer are "
                                                                        "occupied")
    e.quantity("txq.unit_size", unit, "size")
    e.quantity("pq.capacity", scn.pq.capacity, "count", noun="EF packets")
    ef = scn.traffic.EF
    arrivals = {"poisson": "Poisson", "cbr": "CBR", "bernoulli": "Bernoulli"}
    if ef.calls is not None:
        e.quantity("traffic.EF.calls", ef.calls, "count", noun="calls", note="identical CBR streams, random phases")
        e.quantity("traffic.EF.call.rate", ef.call.rate, "rate", share=True)
        e.quantity("traffic.EF.total", ef.rate, "rate", share=True, path=None)
        e.quantity("traffic.EF.call.size", ef.size, "size", note=ring(ef.size))
    elif ef.streams is not None:
        for i, st in enumerate(ef.streams):
            e.quantity(f"traffic.EF.streams.{i}.rate", st.rate, "rate", share=True, note=arrivals[st.arrivals])
        e.quantity("traffic.EF.total", ef.rate, "rate", share=True, path=None)
        e.quantity("traffic.EF.streams.0.size", ef.size, "size", note=f"every stream; {ring(ef.size)}")
    else:
        e.quantity("traffic.EF.rate", ef.rate, "rate", share=True, note=f"{arrivals[ef.arrivals]} arrivals")
        e.quantity("traffic.EF.size", ef.size, "size", note=ring(ef.size))
    be = scn.traffic.BE
    if be.is_saturated:
        e.text("traffic.BE", "saturated", note="always a packet waiting: the worst case")
    else:
        e.quantity("traffic.BE.rate", be.rate, "rate", share=True, note="Poisson packets of the size mix")
    if be.size is not None:
        e.quantity("traffic.BE.size", be.size, "size", note=ring(be.size))
    else:
        for i, x in enumerate(be.sizes):
            e.quantity(f"traffic.BE.sizes.{i}.size", x.size, "size", note=f"p = {x.p:.6g}; {ring(x.size)}")
    e.quantity("utilisation", (ef.rate + (be.rate or 0.0)) / link, "probability", path=None, percent=True,
               note="EF + BE" if be.rate is not None else "EF; saturated BE fills the rest")
    return e.done()


def _requested_metrics(scn: Scenario, extra: list[str]) -> tuple[list[float], list[float]]:
    """CCDF points and quantiles from the metrics section plus any SLO metrics."""
    ccdf = list(scn.metrics.ccdf_at)
    qs = list(scn.metrics.quantiles)
    for name in extra:
        stat = name.split(".", 2)[-1]
        if stat.startswith("ccdf@"):
            d = parse_quantity(stat[5:], "time", field="metric")
            if not any(abs(d - x) <= 1e-12 for x in ccdf):
                ccdf.append(d)
        q = parse_quantile_name(stat)
        if q is not None and not any(abs(q - x) < 1e-12 for x in qs):
            qs.append(q)
    return ccdf, qs


def evaluate(scn: Scenario, methods: list[str], progress) -> list[Result]:
    """Every metric by every requested method."""
    from qosbound.analytic.pq_txq import check_range

    p = params(scn)
    check_range(p)
    route = model_route(scn) if "model-checked" in methods else None
    ccdf, qs = _requested_metrics(scn, [s.metric for s in scn.slos])
    out: list[Result] = []
    for method in methods:
        if method == "closed-form":
            from qosbound.analytic.pq_txq import closed_form_results

            out += closed_form_results(p)
        elif method == "model-checked":
            from qosbound.systems.pq_txq_adapter import model_results
            from qosbound.systems.pq_txq_ring_results import ring_results

            if route[0] == "ring":
                out += ring_results(p, scn.methods.model_checked, ccdf, qs, progress, route[1])
            else:
                out += model_results(p, scn.methods.model_checked, ccdf, qs, progress)
        elif method == "simulated":
            from qosbound.systems.pq_txq_adapter import simulated_results

            out += simulated_results(p, scn.methods.simulated, ccdf, qs, progress)
        else:
            raise ScenarioError(f"method '{method}' is not available for pq_txq scenarios", field="methods")
    return out


def agreements(scn: Scenario, results: list[Result]) -> list[Verdict]:
    """No system-specific checks: every relation between the methods is carried by the results' kinds and
    :func:`qosbound.agreement.agreements` judges them -- eq. (7) is an upper bound on ``EF.delay.mean``; the
    max-delay bound, when it applies (CBR EF, or the PQ capacity binding the burst), an upper bound on
    ``EF.delay.max``, every quantile and the mean (otherwise an approximation); Cobham's mean an approximation
    of ``EF.delay.mean``; a simulated or traced maximum a lower bound on ``EF.delay.max``; model results with
    sizes rounded up to granules approximations (:func:`qosbound.systems.pq_txq_adapter.rounding_neglects`)."""
    return []


def simulate_trace(scn: Scenario, packets: int, seed: int):
    """A per-packet trace of the packet simulator (``qosbound validate --simulate``)."""
    from qosbound.systems.pq_txq_adapter import simulate_trace as sim

    return sim(params(scn), packets, seed)


#: ns-3's BE band (packets) for a BE load: the scenario's BE queue is unbounded.
NS3_BE_BAND = 100_000


def ns3_trace(scn: Scenario, ef_packets: int):
    """A per-packet trace of the ns-3 counterpart (``qosbound validate --ns3``), with what it models."""
    from qosbound.validation import ns3_runner

    p = params(scn)
    cfg = ns3_runner.pq_config_from_params(p, duration=ef_packets / p.lam, seed=int(scn.methods.simulated.seed))
    be = "saturated BE (offered at 1.2 x the link, 64-packet BE band)"
    if not p.be_saturated:
        # the BE load as Poisson packets of the mix, and a BE band large enough to stand for the unbounded queue
        cfg = dataclasses.replace(cfg, be_load=p.rho_be, be_capacity=NS3_BE_BAND)
        be = f"BE offered at {p.rho_be:.4g} of the link, Poisson, BE band of {NS3_BE_BAND} packets"
    table, info = ns3_runner.run_pq(cfg)
    info.update(kind="ns-3", device_queue_packets=cfg.device_queue, duration=cfg.duration,
                semantics=f"device queue {cfg.device_queue} packets + 1 on the wire = Q_t {p.Q_t} units of one "
                          f"packet each; {be}")
    return table, info


def plot_delays(scn: Scenario) -> float | None:
    """The delay range (s) worth plotting: the max-delay bound (a plot grid, not a claim)."""
    from qosbound.validation.pq_txq_sim import max_delay_bound

    return float(max_delay_bound(params(scn)))


def admit(scn: Scenario, parameter: str, *, direction=None, method=None, lo=None, hi=None, progress=None):
    """Admission varies any parameter by the generic search (:func:`qosbound.admit.admit`). One exception: when
    the search would pick ``model-checked`` by default and that is answered by the ring method WITHOUT its upper
    bound (its smallest process above its budget) -- by the ring-count chain alone, an approximation that came out
    below the simulated delay and loss in every case measured -- the search runs on the simulator (else the
    closed forms) with a note, as it does when the exact chain is skipped; asked for by ``--method
    model-checked`` the approximation is used. Where the bound is computed the SLOs are judged on it (a
    conservative model-checked search), and that is the default; so it is where the chain is exact."""
    methods = default_methods(scn)
    if method is not None or "model-checked" not in methods:
        return generic_admit(scn, parameter)
    try:
        route = model_route(scn)[0]
    except SKIPPABLE:
        return generic_admit(scn, parameter)  # the generic search falls back with the reason
    from qosbound.systems.pq_txq_ring_results import conservative

    fallback = next((m for m in ("simulated", "closed-form") if m in methods), None)
    if route != "ring" or fallback is None or conservative(params(scn), scn.methods.model_checked):
        return generic_admit(scn, parameter)
    from qosbound.admit import admit as search

    res = search(scn, parameter, direction=direction, method=fallback, lo=lo, hi=hi, progress=progress)
    res.notes.insert(0, "model-checked skipped: it would answer by the ring-count chain without its upper bound "
                        "(its MDP is above the budget), an approximation that underestimates delay and loss "
                        f"(docs/pq_txq.md); searching with {fallback} (--method model-checked uses the "
                        "approximation)")
    return res


#: Where the state count of a chain far above any budget stops (:func:`check_model_size` then says "more than").
STATE_COUNT_CAP = 10**400
#: Largest PQ capacity the PRISM model is built for: the Poisson rendering writes O(capacity^2) terms.
MAX_MODEL_PQ = 10_000


class ModelUnsupported(MethodNotApplicable):
    """The PRISM model does not cover the scenario (best effort with a load): a run that merely enables
    ``model-checked`` skips it with this reason, as it skips a model above its budget; asked for by name it is
    refused as bad input (exit 2)."""


def _big(n: int) -> str:
    """An integer in the ``.3g`` form, also beyond the range of a float (a bound such as 3^8000)."""
    if n < 1e300:
        return f"{float(n):.3g}"
    digits = str(n)
    return f"{float(digits[:4]) / 1000:.3g}e+{len(digits) - 1}"


def check_model_size(scn: Scenario) -> None:
    """Refuse, before rendering, a PRISM model too large to write or build (ResourceError, with the estimate),
    or one that does not cover the scenario (:class:`ModelUnsupported`: best effort with a load).

    The state count is the upper bound of :mod:`qosbound.models.pq_txq_size`, computed from the scenario's
    numbers in microseconds; the budget is ``methods.model-checked.max_states``."""
    from qosbound.models.pq_txq_size import predicted_states

    if not scn.traffic.BE.is_saturated:
        raise ModelUnsupported("the PRISM model covers saturated best effort only (its slot-start chain is exact "
                               "only while the line never idles); with a BE load the closed forms and the "
                               "simulator answer", field="traffic.BE.rate")
    refuse_aggregate_model(params(scn))
    n = scn.pq.capacity
    if n > MAX_MODEL_PQ:
        terms = (n + 1) ** 2 if scn.traffic.EF.arrivals == "poisson" else n + 1
        raise ResourceError(f"a PQ of {n:g} packets gives a PRISM model of more than {n + 1:.3g} "
                            f"states and about {terms:.3g} terms to render; the model is built for PQs of at most "
                            f"{MAX_MODEL_PQ} packets: disable model-checked (the closed forms and the simulator "
                            "handle this PQ) or use a smaller capacity", field="pq.capacity")
    opts = scn.methods.model_checked
    from qosbound.systems.pq_txq_adapter import scenario_fields

    cap = max(STATE_COUNT_CAP, int(opts.max_states) * 10**6)  # beyond it the count says only "more than"
    with scenario_fields("methods.model-checked"):
        states, kinds = predicted_states(params(scn), opts, cap)
    if states > opts.max_states:
        size = f"more than {_big(cap)}" if states > cap else f"up to {_big(states)}"
        raise ResourceError(f"the exact PQ + TxQ chain would have {size} states (Q_t = {scn.txq.units} "
                            f"units, {kinds} packet kinds, PQ of {n} packets; it grows exponentially with Q_t), above "
                            f"the budget of {opts.max_states:.3g}: the closed forms and the simulator answer at any "
                            "size; raise methods.model-checked.max_states (or --max-states) to build it anyway",
                            field="methods.model-checked.max_states")


def rounding(scn: Scenario) -> str:
    """Why the exact chain would not be exact: its packet sizes rounded up to a coarser granule ('' if not)."""
    from qosbound.models.pq_txq_render import layout
    from qosbound.systems.pq_txq_adapter import scenario_fields

    opts = scn.methods.model_checked
    if opts.granule != "auto":
        return ""
    with scenario_fields("methods.model-checked"):
        lay = layout(params(scn), opts)
    if not lay.rounded:
        return ""
    return (f"the exact chain would round the packet sizes up to whole {lay.granule}-byte granules (more than "
            f"max_granules = {opts.max_granules} per packet at their gcd), which is neither exact nor a bound")


def ring_covers(scn: Scenario) -> bool:
    """Whether the ring method answers the scenario within the model budget."""
    from qosbound.models import pq_txq_ring

    p = params(scn)
    return (pq_txq_ring.why_not(p) is None and pq_txq_ring.lattice_points(p) <= pq_txq_ring.MAX_LATTICE
            and pq_txq_ring.chain_states(p) <= scn.methods.model_checked.max_states)


def model_route(scn: Scenario) -> tuple[str, str]:
    """Which chain answers ``model-checked``: ``("exact", "")`` when the exact PQ + TxQ chain fits the budget
    (:func:`check_model_size`) without rounding packet sizes, ``("ring", why)`` when it would round them (not a
    bound) and the ring method covers the scenario (it works on the exact lattice), else ``("ring", why)`` when the ring method (:mod:`qosbound.models.pq_txq_ring`:
    a tx-ring whose every packet takes one unit, saturated BE, Poisson EF) covers the scenario within the same
    budget, ``why`` the exact chain's refusal. Otherwise the exact chain's ResourceError, with the reason the
    ring method does not answer either (a ModelUnsupported passes unchanged)."""
    from qosbound.models import pq_txq_ring

    try:
        check_model_size(scn)
        rounded = rounding(scn)
        if rounded and ring_covers(scn):
            return "ring", rounded
        return "exact", ""
    except ResourceError as e:  # (a ModelUnsupported is not one: it passes unchanged)
        p = params(scn)
        why = pq_txq_ring.why_not(p)
        n = pq_txq_ring.chain_states(p)
        budget = scn.methods.model_checked.max_states
        if why is None and pq_txq_ring.lattice_points(p) > pq_txq_ring.MAX_LATTICE:
            why = (f"its delay lattice of {pq_txq_ring.lattice_points(p):.3g} points (the gcd of the packet sizes "
                   f"as the step) is above {pq_txq_ring.MAX_LATTICE:.3g}")
        if why is None and n <= budget:
            return "ring", e.problem
        why = why or f"its chain of {n:.3g} states is above the budget too"
        raise ResourceError(f"{e.problem}. The scalable ring method does not answer either: {why}",
                            field=e.field) from None


def refuse_aggregate_model(p: Params) -> None:
    """The PRISM model has one EF arrival process: several Poisson streams merge into one exactly (and are
    modelled), but an aggregate with CBR streams would need a credit counter per stream -- the state space
    multiplied by the product of their credit ranges -- and is refused (a ResourceError: skipped with this reason
    when the scenario merely enables the model, exit 4 when it is asked for by name) rather than answered by a
    single stream of the aggregate rate, which is a different arrival process."""
    if p.arrivals != "aggregate":
        return
    n = len(p.ef_streams)
    what = (f"{n} EF streams with CBR among them" if n > 1 else "a CBR EF stream with a given phase")
    raise ResourceError(f"{what} need a CBR credit counter per stream (the chain's states multiply by "
                     "each stream's credit range) and the model has one EF stream; the closed forms and the "
                     "simulator answer this aggregate (a Poisson approximation of it would neglect the CBR "
                     "streams' smoothness)", field="traffic.EF")


def render_models(scn: Scenario, out_dir) -> list:
    """Write the scenario's PRISM model and property file (``qosbound model render``)."""
    from qosbound.systems.pq_txq_adapter import render, write_files

    check_model_size(scn)
    rendered = render(params(scn), scn.methods.model_checked, scn.name)
    return list(write_files(rendered, out_dir))
