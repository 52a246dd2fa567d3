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
from typing import Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from qosbound.errors import ResourceError, ScenarioError
from qosbound.params import Params
from qosbound.results import Result, Verdict
from qosbound.scenario import PacketSize, PositiveInt, Probability, Rate, ScenarioBase, Size, Time
from qosbound.systems.base import (Link, MethodsBase, ModelOptionsBase, PacketSimOptions, Strict, ccdf_name,
                                   default_methods, parse_quantile_name, quantile_name)
from qosbound.systems.capabilities import generic_admit
from qosbound.units import Kind, parse_quantity
from qosbound.verdicts import default_slo_limit

__all__ = ["Scenario", "Params", "params", "evaluate", "metric_kind", "slo_limit", "agreements",
           "default_methods", "metric_names", "simulate_trace", "ns3_trace", "plot_delays", "render_models", "admit"]


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


class EFTraffic(Strict):
    rate: Rate = Field(description="EF wire rate, bit/s")
    size: PacketSize = Field(description="EF packet size on the wire, bytes")
    arrivals: Literal["poisson", "cbr", "bernoulli"] = "poisson"
    burst: Size | None = Field(default=None, description="token-bucket depth for the worst-case bound, bytes")

    @field_validator("rate", "size")
    @classmethod
    def _pos(cls, v):
        if v <= 0:
            raise ValueError("must be positive")
        return v


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
        rho = self.traffic.EF.rate / self.link.rate
        if rho >= 1:
            raise ScenarioError(f"EF utilisation rate/link = {rho:.4g} >= 1: the priority queue is unstable",
                                field="traffic.EF.rate")
        be = self.traffic.BE
        if be.rate is not None:
            total = rho + be.rate / self.link.rate
            if total >= 1:
                raise ScenarioError(f"total utilisation (EF + BE rate)/link = {total:.4g} >= 1: the unbounded BE "
                                    "queue is unstable; lower the BE rate, or use saturated: true for the worst "
                                    "case", field="traffic.BE.rate")
        if self.traffic.EF.burst is not None and self.traffic.EF.burst < self.traffic.EF.size:
            raise ScenarioError("token-bucket depth must hold at least one EF packet", field="traffic.EF.burst")
        return self


def params(scn: Scenario) -> Params:
    ef = scn.traffic.EF
    sizes, probs = scn.traffic.BE.distribution()
    burst = ef.burst if ef.burst is not None else (ef.size if ef.arrivals == "cbr" else scn.pq.capacity * ef.size)
    return Params(C=scn.link.rate, Q_t=scn.txq.units, unit=scn.txq.unit_size, pq_cap=scn.pq.capacity,
                  ef_size=ef.size, ef_rate=ef.rate, lam=ef.rate / (8.0 * ef.size), arrivals=ef.arrivals,
                  be_sizes=sizes, be_probs=probs, burst=burst, be_rate=scn.traffic.BE.rate)


#: The metrics with a fixed name and their kinds (the quantiles and CCDF points are named by the scenario);
#: ``EF.delay.cobham_mean`` is an approximation reported beside the mean, not a metric a trace measures.
_FIXED: dict[str, Kind] = {"EF.delay.mean": "time", "EF.delay.worst_case_mean": "time", "EF.delay.max": "time",
                           "EF.loss": "probability", "EF.delay.cobham_mean": "time"}


def metric_names(scn: Scenario) -> list[str]:
    m = ["EF.delay.mean"] + [f"EF.delay.{quantile_name(q)}" for q in scn.metrics.quantiles]
    m += [ccdf_name("EF.delay", d) for d in scn.metrics.ccdf_at]
    m += [n for n in _FIXED if n not in m and n != "EF.delay.cobham_mean"]
    return m


def metric_kind(metric: str) -> Kind:
    if metric in _FIXED:
        return _FIXED[metric]
    stat = metric[len("EF.delay."):] if metric.startswith("EF.delay.") else None
    if stat is not None and stat.startswith("ccdf@"):
        return "probability"
    if stat is not None and parse_quantile_name(stat) is not None:
        return "time"
    raise ScenarioError(f"unknown metric '{metric}' for a pq_txq scenario; known: EF.delay.pNN, "
                        f"EF.delay.ccdf@<time>, {', '.join(_FIXED)}", field="metric")


def slo_limit(scn: Scenario, slo) -> float:
    return default_slo_limit(metric_kind, slo)


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
    if "model-checked" in methods:
        check_model_size(scn)
    ccdf, qs = _requested_metrics(scn, [s.metric for s in scn.slos])
    out: list[Result] = []
    for method in methods:
        if method == "closed-form":
            from qosbound.analytic.pq_txq import closed_form_results

            out += closed_form_results(p)
        elif method == "model-checked":
            from qosbound.systems.pq_txq_adapter import model_results

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
    sizes rounded up to granules upper bounds."""
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


#: Admission varies any parameter by the generic search (:func:`qosbound.admit.admit`).
admit = generic_admit


#: Largest PQ capacity the PRISM model is built for: the Poisson rendering writes O(capacity^2) terms.
MAX_MODEL_PQ = 10_000


class ModelUnsupported(ResourceError):
    """The PRISM model does not cover the scenario (best effort with a load). A :class:`ResourceError`, so a
    run that merely enables ``model-checked`` skips it with this reason, as it skips a model above its budget;
    asked for by name it is refused as bad input (exit 2), not as an exhausted resource."""

    exit_code = ScenarioError.exit_code


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
    n = scn.pq.capacity
    if n > MAX_MODEL_PQ:
        terms = (n + 1) ** 2 if scn.traffic.EF.arrivals == "poisson" else n + 1
        raise ResourceError(f"a PQ of {n:g} packets gives a PRISM model of more than {n + 1:.3g} "
                            f"states and about {terms:.3g} terms to render; the model is built for PQs of at most "
                            f"{MAX_MODEL_PQ} packets: disable model-checked (the closed forms and the simulator "
                            "handle this PQ) or use a smaller capacity", field="pq.capacity")
    opts = scn.methods.model_checked
    from qosbound.systems.pq_txq_adapter import scenario_fields

    with scenario_fields("methods.model-checked"):
        states, kinds = predicted_states(params(scn), opts)
    if states > opts.max_states:
        raise ResourceError(f"the exact PQ + TxQ chain would have up to {states:.3g} states (Q_t = {scn.txq.units} "
                            f"units, {kinds} packet kinds, PQ of {n} packets; it grows exponentially with Q_t), above "
                            f"the budget of {opts.max_states:.3g}: the closed forms and the simulator answer at any "
                            "size; raise methods.model-checked.max_states (or --max-states) to build it anyway",
                            field="methods.model-checked.max_states")


def render_models(scn: Scenario, out_dir) -> list:
    """Write the scenario's PRISM model and property file (``qosbound model render``)."""
    from qosbound.systems.pq_txq_adapter import render, write_files

    check_model_size(scn)
    rendered = render(params(scn), scn.methods.model_checked, scn.name)
    return list(write_files(rendered, out_dir))
