"""The AF service: token-bucket markers, RED-family droppers per drop precedence, CBWFQ across classes.

Sources: Takeo & Tasaka (seed 000: WRED with ``P_d`` and ``alpha = 2^-9``, Table I,
CBWFQ and Table V), Jourjon et al. (seed 003: RIO and the two-colour bucket),
Koehler & Schaefer (seed 004: trTCM, RIO, overlapped n-RED, Tables 3-6).

Semantics shared by the three methods (see DESIGN.md, "WRED"):

* A class ``X`` (e.g. ``AF1``) has a FIFO buffer of ``buffer`` packets (counting
  the packet on the wire), a dropper with per-precedence thresholds for
  ``X1`` (green), ``X2`` (yellow) and ``X3`` (red), and a CBWFQ bandwidth
  (its weight). Each class's packets arrive as a Poisson (or CBR) stream, coloured
  by fixed fractions (``mix``) or by a marker (``marker``).
* CBWFQ gives a backlogged class ``C w_i / sum of w over backlogged classes``
  (seed 000, sec. II.B). The closed form and the model serve each class at its
  share when every class with traffic is backlogged -- the conservative case;
  the simulator runs real WFQ, so it gives a class more when others idle.
* The closed form and the model take packet sizes exponential (mean ``size``);
  the simulator uses the configured size law.

Metrics per class ``X``: ``X.drop.X1``, ``X.drop.X2``, ``X.drop.X3`` (per-precedence
drop probability), ``X.drop`` (all colours), ``X.delay.mean`` and ``X.delay.X1``
... (mean delay of admitted packets), ``X.queue.mean`` (packets), ``X.rate``
(CBWFQ allocation, closed form), ``X.throughput`` (delivered bit/s),
``X.colour.X1`` ... (marker output fractions) and, per CBWFQ case,
``X.rate.<case>``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from qosbound.errors import ScenarioError
from qosbound.results import Interval, Result, Verdict
from qosbound.scenario import PositiveInt, Probability, Rate, ScenarioBase, Size
from qosbound.systems.base import default_methods, Link, ClosedFormOptions as BaseClosedFormOptions
from qosbound.systems.base import MethodsBase, ModelOptionsBase, PacketSimOptions, Strict
from qosbound.units import Kind
from qosbound.verdicts import default_slo_limit

__all__ = ["Scenario", "evaluate", "metric_kind", "slo_limit", "default_methods", "agreements",
           "ordering_sweep", "class_inputs", "metric_names"]


class Threshold(Strict):
    min_th: float = Field(description="packets")
    max_th: float = Field(description="packets")
    P_d: float = Field(default=10.0, description="mark-probability denominator (>= 1)")

    @model_validator(mode="after")
    def _check(self):
        if not (math.isfinite(self.min_th) and math.isfinite(self.max_th) and math.isfinite(self.P_d)):
            raise ValueError("thresholds and P_d must be finite numbers")
        if self.min_th < 0:
            raise ValueError(f"min_th = {self.min_th:g} is negative")
        if self.min_th >= self.max_th:
            raise ValueError(f"thresholds out of order: min_th = {self.min_th:g} must be below "
                             f"max_th = {self.max_th:g}")
        if self.P_d < 1:
            raise ValueError(f"P_d = {self.P_d:g} < 1 would give a drop probability above 1 below max_th")
        return self


class Dropper(Strict):
    mode: Literal["wred", "rio", "nred"] = "wred"
    gentle: bool = False
    alpha: float | None = Field(default=None, description="EWMA weight; default 2^-exponent")
    exponent: PositiveInt = Field(default=9, description="alpha = 2^-exponent (seed 000 default 9)")
    thresholds: dict[str, Threshold] = Field(description="per precedence: X1 (green), X2 (yellow), X3 (red)")

    @model_validator(mode="after")
    def _check(self):
        if self.alpha is not None and not (0 < self.alpha <= 1):
            raise ValueError(f"EWMA weight alpha = {self.alpha:g} is not in (0, 1]")
        if len(self.thresholds) != 3:
            raise ValueError("give thresholds for exactly three drop precedences (X1, X2, X3)")
        return self

    @property
    def weight(self) -> float:
        return self.alpha if self.alpha is not None else 2.0 ** -self.exponent


class AFClass(Strict):
    bandwidth: Rate = Field(description="CBWFQ bandwidth (the class weight), bit/s")
    buffer: PositiveInt = Field(default=64, description="queue limit, packets")
    dropper: Dropper

    @field_validator("bandwidth")
    @classmethod
    def _bw(cls, v):
        if v < 0:
            raise ValueError("bandwidth must not be negative")
        return v


class Marker(Strict):
    kind: Literal["trtcm", "srtcm", "two-colour"]
    cir: Rate
    cbs: Size
    pir: Rate | None = Field(default=None, description="trTCM peak rate")
    pbs: Size | None = Field(default=None, description="trTCM peak burst")
    ebs: Size | None = Field(default=None, description="srTCM excess burst")
    aware: bool = False
    precolour: list[float] = Field(default_factory=lambda: [1.0, 0.0, 0.0],
                                   description="colour-aware: input fractions green, yellow, red")

    @model_validator(mode="after")
    def _check(self):
        if self.cir <= 0 or self.cbs <= 0:
            raise ValueError("CIR and CBS must be positive")
        if self.kind == "trtcm":
            if self.pir is None or self.pbs is None:
                raise ValueError("trTCM needs pir and pbs")
            if self.pir < self.cir:
                raise ValueError("trTCM needs PIR >= CIR (RFC 2698)")
        if self.kind == "srtcm" and self.ebs is None:
            raise ValueError("srTCM needs ebs")
        if len(self.precolour) != 3 or any(x < 0 for x in self.precolour) or abs(sum(self.precolour) - 1) > 1e-9:
            raise ValueError("precolour must be three non-negative fractions summing to 1")
        return self


class Traffic(Strict):
    rate: Rate = Field(description="offered rate, bit/s")
    size: Size = Field(default=1000.0, description="mean packet size, bytes")
    sizes: Literal["exponential", "fixed"] = "exponential"
    arrivals: Literal["poisson", "cbr"] = "poisson"
    mix: list[Probability] | None = Field(default=None, description="fractions of green, yellow, red")
    marker: Marker | None = None

    @model_validator(mode="after")
    def _check(self):
        if self.rate < 0:
            raise ValueError("offered rate must not be negative")
        if self.size <= 0:
            raise ValueError("packet size must be positive")
        if self.mix is not None and self.marker is not None:
            raise ValueError("give either 'mix' (fixed colour fractions) or 'marker', not both")
        if self.mix is not None and (len(self.mix) != 3 or abs(sum(self.mix) - 1) > 1e-9):
            raise ValueError("mix must be three fractions (green, yellow, red) summing to 1")
        return self


class ClosedFormOptions(BaseClosedFormOptions):
    approximation: Literal["auto", "instantaneous", "fixed-average"] = "auto"


class ModelOptions(ModelOptionsBase):
    average: Literal["instantaneous", "ewma"] = "instantaneous"
    exact: bool = False


class SimOptions(PacketSimOptions):
    packets: PositiveInt = 400_000
    replications: PositiveInt = 6
    warmup: float = 0.1


class Methods(MethodsBase):
    closed_form: ClosedFormOptions = Field(default_factory=ClosedFormOptions, alias="closed-form")
    model_checked: ModelOptions = Field(default_factory=ModelOptions, alias="model-checked")
    simulated: SimOptions = Field(default_factory=SimOptions)


class OrderingOptions(Strict):
    enabled: bool = True
    loads: list[float] = Field(default_factory=lambda: [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0],
                               description="multiples of the configured offered load swept by verify")

    @field_validator("loads")
    @classmethod
    def _pos(cls, v):
        if not v or any((not isinstance(x, (int, float))) or x <= 0 for x in v):
            raise ValueError("loads must be positive multiples of the configured load")
        return sorted(float(x) for x in v)


class Scenario(ScenarioBase):
    system: Literal["af"]
    link: Link
    classes: dict[str, AFClass]
    traffic: dict[str, Traffic]
    cases: dict[str, list[str]] = Field(default_factory=dict,
                                        description="CBWFQ cases: name -> list of backlogged classes")
    service: Literal["max-min", "guaranteed"] = Field(
        default="max-min", description="service rate of a class's queue: greedy max-min (work-conserving) or "
                                       "its guaranteed share only")
    ordering: OrderingOptions = Field(default_factory=OrderingOptions)
    methods: Methods = Field(default_factory=Methods)

    @model_validator(mode="after")
    def _check(self):
        if not self.classes:
            raise ScenarioError("declare at least one class", field="classes")
        for name, c in self.classes.items():
            keys = list(c.dropper.thresholds)
            want = [f"{name}{k}" for k in (1, 2, 3)]
            if sorted(keys) != want:
                raise ScenarioError(f"thresholds must be named {', '.join(want)}, got {', '.join(keys)}",
                                    field=f"classes.{name}.dropper.thresholds")
            mx = max(t.max_th for t in c.dropper.thresholds.values())
            if c.buffer < mx:
                raise ScenarioError(f"buffer of {c.buffer} packets is smaller than max_th = {mx:g}",
                                    field=f"classes.{name}.buffer")
        for name in self.traffic:
            if name not in self.classes:
                raise ScenarioError(f"traffic for undeclared class '{name}'", field=f"traffic.{name}")
        active = [n for n, t in self.traffic.items() if t.rate > 0]
        if active and sum(self.classes[n].bandwidth for n in active) <= 0:
            raise ScenarioError("the bandwidths (CBWFQ weights) of the classes with traffic sum to zero",
                                field="classes")
        for case, members in self.cases.items():
            for m in members:
                if m not in self.classes:
                    raise ScenarioError(f"case '{case}' names undeclared class '{m}'", field=f"cases.{case}")
            if not members or sum(self.classes[m].bandwidth for m in members) <= 0:
                raise ScenarioError("the weights of the backlogged classes sum to zero", field=f"cases.{case}")
        return self


@dataclass(frozen=True)
class ClassInput:
    """One class reduced to SI numbers for the queue models."""

    name: str
    lam: np.ndarray  # (3,) packets/s per colour
    mu: float  # packets/s at the CBWFQ share
    share: float  # bit/s
    K: int
    profile: object  # qosbound.analytic.wred.Profile
    colour_fractions: np.ndarray
    size: float


def _profile(c: AFClass, name: str):
    from qosbound.analytic.wred import Profile

    th = [c.dropper.thresholds[f"{name}{k}"] for k in (1, 2, 3)]
    try:
        return Profile(min_th=tuple(t.min_th for t in th), max_th=tuple(t.max_th for t in th),
                       P_d=tuple(t.P_d for t in th), alpha=c.dropper.weight, mode=c.dropper.mode,
                       gentle=c.dropper.gentle)
    except ScenarioError as e:
        raise e.located(prefix=f"classes.{name}") from None


def colour_fractions(t: Traffic) -> tuple[np.ndarray, str]:
    """Colour fractions of a class's arrivals: the fixed mix, or the marker's long-run fractions.

    Poisson arrivals of fixed-size packets use the numerical Poisson solution
    (:func:`qosbound.analytic.markers.poisson_fractions`); other inputs use the smooth-input (CBR) closed forms.
    """
    return _colour_fractions(t)[:2]


def colour_fraction_error(t: Traffic) -> np.ndarray:
    """Estimated error of :func:`colour_fractions` (zeros where they are exact)."""
    return _colour_fractions(t)[2]


def _colour_fractions(t: Traffic):
    zero = np.zeros(3)
    if t.marker is None:
        mix = t.mix if t.mix is not None else [1.0, 0.0, 0.0]
        return np.asarray(mix, dtype=float), "fixed mix", zero
    from qosbound.analytic.markers import cbr_fractions, poisson_fractions

    m = t.marker
    if t.rate <= 0:
        return np.array([1.0, 0.0, 0.0]), "no traffic", zero
    src = {"trtcm": "RFC 2698", "srtcm": "RFC 2697", "two-colour": "seed 003 token bucket"}[m.kind]
    if t.arrivals == "poisson" and t.sizes == "fixed":
        if m.kind == "trtcm":
            f, err = poisson_fractions("trtcm", t.rate, t.size, m.cir, m.cbs, m.pbs, pir=m.pir, aware=m.aware,
                                       pre=tuple(m.precolour))
        else:
            # A two-colour bucket is srTCM's C bucket alone: C never depends on E, so IN = srTCM green.
            ebs = m.ebs if m.kind == "srtcm" else t.size
            f, err = poisson_fractions("srtcm", t.rate, t.size, m.cir, m.cbs, ebs,
                                       aware=m.aware and m.kind == "srtcm", pre=tuple(m.precolour))
            if m.kind == "two-colour":
                f, err = np.array([f[0], 0.0, f[1] + f[2]]), np.array([err[0], 0.0, err[0]])
        return f, f"{src} long-run fractions (Poisson input, slotted-chain limit), qosbound.analytic.markers", err
    second = m.pir if m.kind == "trtcm" else None
    f = cbr_fractions(m.kind, t.rate, m.cir, second, aware=m.aware, pre=m.precolour)
    return f, f"{src} long-run fractions (smooth input), qosbound.analytic.markers", zero


def class_inputs(scn: Scenario) -> list[ClassInput]:
    from qosbound.analytic.cbwfq import allocate, service_rates

    names = list(scn.classes)
    backlogged = [1.0 if (n in scn.traffic and scn.traffic[n].rate > 0) else 0.0 for n in names]
    out = []
    if sum(backlogged) == 0:
        return out
    weights = [scn.classes[n].bandwidth for n in names]
    if scn.service == "guaranteed":
        shares = allocate(scn.link.rate, weights, backlogged)
    else:
        shares = service_rates(scn.link.rate, weights,
                               [scn.traffic[n].rate if n in scn.traffic else 0.0 for n in names])
    for i, n in enumerate(names):
        if not backlogged[i]:
            continue
        t = scn.traffic[n]
        f, _ = colour_fractions(t)
        lam = f * t.rate / (8.0 * t.size)
        mu = shares[i] / (8.0 * t.size)
        if mu <= 0:
            raise ScenarioError(f"class {n} has traffic but a CBWFQ share of zero", field=f"classes.{n}.bandwidth")
        out.append(ClassInput(n, lam, mu, float(shares[i]), scn.classes[n].buffer, _profile(scn.classes[n], n),
                              f, t.size))
    return out


def metric_names(scn: Scenario) -> list[str]:
    out = []
    for n in scn.classes:
        out += [f"{n}.rate"] + [f"{n}.rate.{c}" for c in scn.cases]
        if n in scn.traffic and scn.traffic[n].rate > 0:
            out += [f"{n}.drop.{n}{k}" for k in (1, 2, 3)] + [f"{n}.drop", f"{n}.delay.mean"]
            out += [f"{n}.delay.{n}{k}" for k in (1, 2, 3)] + [f"{n}.queue.mean", f"{n}.throughput"]
            out += [f"{n}.colour.{n}{k}" for k in (1, 2, 3)]
    return out


def metric_kind(metric: str) -> Kind:
    parts = metric.split(".")
    if len(parts) >= 2:
        q = parts[1]
        if q == "drop" or q == "colour":
            return "probability"
        if q == "delay":
            return "time"
        if q == "queue":
            return "count"
        if q in ("rate", "throughput"):
            return "rate"
    raise ScenarioError(f"unknown metric '{metric}' for an af scenario; known: X.drop.Xk, X.drop, X.delay.mean, "
                        "X.delay.Xk, X.queue.mean, X.rate, X.throughput, X.colour.Xk", field="metric")


def slo_limit(scn: Scenario, slo) -> float:
    return default_slo_limit(metric_kind, slo)


def _approximation(scn: Scenario, ci: ClassInput) -> str:
    a = scn.methods.closed_form.approximation
    if a != "auto":
        return a
    return "fixed-average" if ci.profile.alpha <= 1.0 / 64 else "instantaneous"


def _queue_results(ci: ClassInput, drop, delay, L, method, interval_fn, prov) -> list[Result]:
    n = ci.name
    out = []
    lam = ci.lam
    tot = lam.sum()
    for k in range(3):
        out.append(Result(f"{n}.drop.{n}{k + 1}", method, float(drop[k]), "1", interval_fn(f"drop{k}", drop[k]),
                          prov))
    dall = float(lam @ drop / tot) if tot > 0 else 0.0
    out.append(Result(f"{n}.drop", method, dall, "1", interval_fn("dropall", dall), prov))
    acc = lam * (1 - drop)
    thr_pk = float(acc.sum())
    mean_delay = float(acc @ delay / thr_pk) if thr_pk > 0 else 0.0
    out.append(Result(f"{n}.delay.mean", method, mean_delay, "s", interval_fn("delay", mean_delay), prov))
    for k in range(3):
        if lam[k] > 0:
            out.append(Result(f"{n}.delay.{n}{k + 1}", method, float(delay[k]), "s",
                              interval_fn(f"delay{k}", delay[k]), prov))
    out.append(Result(f"{n}.queue.mean", method, float(L), "1", interval_fn("queue", L), prov))
    out.append(Result(f"{n}.throughput", method, thr_pk * 8.0 * ci.size, "bit/s",
                      interval_fn("throughput", thr_pk * 8.0 * ci.size), prov))
    return out


def _closed_form(scn: Scenario, inputs: list[ClassInput]) -> list[Result]:
    from qosbound.analytic.cbwfq import allocate
    from qosbound.analytic.red_queue import solve

    out: list[Result] = []
    names = list(scn.classes)
    w = [scn.classes[n].bandwidth for n in names]
    backlogged = [1.0 if (n in scn.traffic and scn.traffic[n].rate > 0) else 0.0 for n in names]
    if sum(backlogged) > 0:
        shares = allocate(scn.link.rate, w, backlogged)
        for i, n in enumerate(names):
            out.append(Result(f"{n}.rate", "closed-form", float(shares[i]), "bit/s", Interval(shares[i], shares[i], "exact"),
                              {"formula": "C w_i / sum of w over backlogged classes",
                               "source": "Takeo & Tasaka 2003, sec. II.B (CBWFQ)"}))
    for case, members in scn.cases.items():
        sh = allocate(scn.link.rate, w, [1.0 if n in members else 0.0 for n in names])
        for i, n in enumerate(names):
            out.append(Result(f"{n}.rate.{case}", "closed-form", float(sh[i]), "bit/s", Interval(sh[i], sh[i], "exact"),
                              {"formula": "C w_i / sum of w over backlogged classes", "backlogged": members,
                               "source": "Takeo & Tasaka 2003, sec. II.B, Table V"}))
    for ci in inputs:
        approx = _approximation(scn, ci)
        sol = solve(ci.lam, ci.mu, ci.K, ci.profile, approx)
        other = solve(ci.lam, ci.mu, ci.K, ci.profile,
                      "fixed-average" if approx == "instantaneous" else "instantaneous") \
            if (ci.profile.mode == "wred" or ci.K <= 24) else None
        prov = {"formula": sol.method, "source": "Takeo & Tasaka 2003 sec. II.A (P(avr)); Kleinrock eq. 3.11",
                "module": "qosbound.analytic.red_queue", "service_rate_pps": ci.mu, "share_bit_s": ci.share,
                "alpha": ci.profile.alpha, "dropper": ci.profile.mode}
        if other is not None:
            prov["other_approximation"] = {"method": other.method, "drop": [float(x) for x in other.drop],
                                           "mean_queue": other.mean_queue}

        def iv(_k, v):
            return Interval(float(v), float(v), "exact")

        out += _queue_results(ci, sol.drop, sol.delay, sol.mean_queue, "closed-form", iv, prov)
        t = scn.traffic[ci.name]
        _, src = colour_fractions(t)
        err = colour_fraction_error(t)
        for k in range(3):
            v = float(ci.colour_fractions[k])
            iv = Interval(v, v, "exact") if err[k] == 0 else \
                Interval(max(0.0, v - float(err[k])), min(1.0, v + float(err[k])), "discretisation error")
            out.append(Result(f"{ci.name}.colour.{ci.name}{k + 1}", "closed-form", v, "1", iv, {"formula": src}))
    return out


def _model_checked(scn: Scenario, inputs: list[ClassInput], progress) -> list[Result]:
    from qosbound.analytic.red_queue import instantaneous
    from qosbound.models.af import check_wred, check_wred_ewma

    opts = scn.methods.model_checked
    out: list[Result] = []
    adv = progress.task("model checking (Storm)", len(inputs))
    for ci in inputs:
        if opts.average == "ewma" and ci.profile.mode == "wred":
            mv = check_wred_ewma(ci.lam, ci.mu, ci.K, ci.profile, precision=opts.precision, exact=opts.exact)
            same = None
        else:
            mv = check_wred(ci.lam, ci.mu, ci.K, ci.profile, precision=opts.precision, exact=opts.exact)
            same = instantaneous(ci.lam, ci.mu, ci.K, ci.profile) if (ci.profile.mode == "wred" or ci.K <= 52) \
                else None
        prov = {"model": mv.model, "properties": "drop0..2, queue, sys0..2 (R{..}=? [ S ])",
                "states": mv.states, "transitions": mv.transitions, "seconds": round(mv.seconds, 4),
                "source": f"{mv.model} ({mv.states} states)", "misordered_states_reachable": mv.misordered}
        if same is not None:
            prov["direct_solution"] = {"drop": [float(x) for x in same.drop], "mean_queue": same.mean_queue}
        ivs = mv.intervals
        note = ("exact (rational) solution" if opts.exact else
                "direct sparse solve of the CTMC; a-posteriori bracket (any v: min(f + Qv) <= pi f <= max(f + Qv))")

        def iv(k, v):
            v = float(v)
            if opts.exact:
                return Interval.exact(v, note=note)
            key = "throughput_pk" if k == "throughput" else k
            if key not in ivs:
                return Interval.numerical(-math.inf, math.inf, note=note + f"; no bound for {k}")
            lo, hi = ivs[key]
            if k == "throughput":
                lo, hi = lo * 8.0 * ci.size, hi * 8.0 * ci.size
            return Interval.numerical(min(lo, v), max(hi, v), note=note)

        delay = np.where(ci.lam > 0, mv.delay, 0.0)
        out += _queue_results(ci, mv.drop, delay, mv.mean_queue, "model-checked", iv, prov)
        adv(1)
    return out


def sim_config(scn: Scenario, load: float = 1.0):
    """The simulator's arrays for this scenario (offered loads scaled by ``load``)."""
    from qosbound.validation.af_sim import Config
    from qosbound.validation.droppers import MODES
    from qosbound.validation.markers import KINDS, new_state

    names = list(scn.classes)
    profs = [_profile(scn.classes[n], n) for n in names]
    src = []
    for i, n in enumerate(names):
        t = scn.traffic.get(n)
        if t is None or t.rate <= 0:
            continue
        pps = load * t.rate / (8.0 * t.size)
        if t.marker is not None:
            m = t.marker
            second = m.pir if m.kind == "trtcm" else (m.ebs or 0.0)
            depth2 = m.pbs if m.kind == "trtcm" else 0.0
            st = new_state(m.kind, m.cir, m.cbs, second, depth2 or 0.0)
            pre = m.precolour
            if m.aware:  # one source per pre-colour
                for c in range(3):
                    if pre[c] > 0:
                        src.append((i, c, pps * pre[c], t, KINDS[m.kind], True, st.copy()))
            else:
                src.append((i, 0, pps, t, KINDS[m.kind], False, st))
        else:
            mix = t.mix if t.mix is not None else [1.0, 0.0, 0.0]
            for c in range(3):
                if mix[c] > 0:
                    src.append((i, c, pps * mix[c], t, -1, False, np.zeros(7)))
    if not src:
        raise ScenarioError("no class has traffic to simulate", field="traffic")
    return Config(
        C=scn.link.rate, w=np.array([max(scn.classes[n].bandwidth, 1e-9) for n in names]),
        K=np.array([scn.classes[n].buffer for n in names]),
        min_th=np.array([p.min_th for p in profs]), max_th=np.array([p.max_th for p in profs]),
        max_p=np.array([p.max_p for p in profs]), mode=np.array([MODES[p.mode] for p in profs]),
        gentle=np.array([p.gentle for p in profs]), alpha=np.array([p.alpha for p in profs]),
        src_cls=np.array([s[0] for s in src]), src_colour=np.array([s[1] for s in src]),
        src_rate=np.array([s[2] for s in src]), src_size=np.array([s[3].size for s in src]),
        src_expsize=np.array([s[3].sizes == "exponential" for s in src]),
        src_cbr=np.array([s[3].arrivals == "cbr" for s in src]), src_marker=np.array([s[4] for s in src]),
        src_aware=np.array([s[5] for s in src]), marker_state=np.array([s[6] for s in src]))


def _simulated(scn: Scenario, inputs: list[ClassInput], progress) -> list[Result]:
    from scipy import stats as st

    from qosbound.validation.af_sim import replicate

    o = scn.methods.simulated
    cfg = sim_config(scn)
    warm = int(o.warmup * o.packets)
    adv = progress.task("simulating", o.replications)
    reps = []
    for r in range(o.replications):
        reps += replicate(cfg, o.packets, 1, o.seed + 7919 * r, warm)
        adv(1)
    names = list(scn.classes)
    R = len(reps)
    tq = st.t.ppf(0.5 + o.confidence / 2, R - 1)
    out: list[Result] = []
    for ci in inputs:
        i = names.index(ci.name)
        n = ci.name

        def est(vals, metric, unit, extra=None):
            v = np.asarray(vals, dtype=float)
            ok = np.isfinite(v)
            v = v[ok]
            if len(v) < 2:
                return
            m = float(v.mean())
            se = float(v.std(ddof=1) / math.sqrt(len(v)))
            prov = {"source": "qosbound.validation.af_sim (float EWMA, WFQ virtual time)", "seed": o.seed,
                    "packets": o.packets, "replications": int(len(v)), "std_error": se,
                    "alpha": ci.profile.alpha, "dropper": ci.profile.mode}
            if extra:
                prov.update(extra)
            lo, hi = max(0.0, m - tq * se), m + tq * se
            if unit == "1":
                hi = min(hi, 1.0)
            out.append(Result(metric, "simulated", m, unit, Interval(lo, hi, f"{o.confidence:.0%} CI"), prov))

        for k in range(3):
            if any(rp.arrivals[i, k] > 0 for rp in reps):
                est([rp.drops[i, k] / rp.arrivals[i, k] if rp.arrivals[i, k] > 0 else np.nan for rp in reps],
                    f"{n}.drop.{n}{k + 1}", "1")
        est([rp.drops[i].sum() / rp.arrivals[i].sum() for rp in reps], f"{n}.drop", "1")
        est([rp.delay_sum[i].sum() / rp.delivered[i].sum() if rp.delivered[i].sum() > 0 else np.nan for rp in reps],
            f"{n}.delay.mean", "s")
        for k in range(3):
            if ci.lam[k] > 0 or any(rp.delivered[i, k] > 0 for rp in reps):
                est([rp.delay_sum[i, k] / rp.delivered[i, k] if rp.delivered[i, k] > 0 else np.nan for rp in reps],
                    f"{n}.delay.{n}{k + 1}", "s")
        est([rp.queue_area[i] / rp.duration for rp in reps], f"{n}.queue.mean", "1",
            {"mean_ewma_average": float(np.mean([rp.avg_sum[i, 2] / max(rp.arrivals[i].sum(), 1) for rp in reps]))})
        est([rp.bits[i] / rp.duration for rp in reps], f"{n}.throughput", "bit/s")
        for k in range(3):
            est([rp.arrivals[i, k] / rp.arrivals[i].sum() for rp in reps], f"{n}.colour.{n}{k + 1}", "1")
    return out


def evaluate(scn: Scenario, methods: list[str], progress) -> list[Result]:
    """Every metric by every requested method."""
    inputs = class_inputs(scn)
    out: list[Result] = []
    for method in methods:
        if method == "closed-form":
            out += _closed_form(scn, inputs)
        elif method == "model-checked":
            out += _model_checked(scn, inputs, progress)
        elif method == "simulated":
            out += _simulated(scn, inputs, progress)
        else:
            raise ScenarioError(f"method '{method}' is not available for af scenarios", field="methods")
    return out


def _ordering_values(results: list[Result], cls: str, method: str):
    by = {r.metric: r for r in results if r.method == method}
    rs = [by.get(f"{cls}.drop.{cls}{k}") for k in (1, 2, 3)]
    return rs if all(r is not None for r in rs) else None


def ordering_sweep(scn: Scenario, cls: str, loads: list[float]) -> tuple[float | None, list[tuple[float, list]]]:
    """Per-precedence drop probabilities (closed form) at multiples of the offered load of ``cls``.

    Returns the first load multiple where drop(X3) >= drop(X2) >= drop(X1) fails (None if it never does)
    and the sweep. RIO and n-RED with a buffer over 40 packets use the fixed-average approximation here.
    """
    from qosbound.analytic.red_queue import solve

    ci = next(c for c in class_inputs(scn) if c.name == cls)
    approx = _approximation(scn, ci)
    if approx == "instantaneous" and ci.profile.mode != "wred" and ci.K > 40:
        approx = "fixed-average"
    first = None
    sweep = []
    for x in loads:
        sol = solve(ci.lam * x, ci.mu, ci.K, ci.profile, approx)
        d = sol.drop
        sweep.append((x, [float(v) for v in d]))
        if first is None and not (d[2] >= d[1] - 1e-9 and d[1] >= d[0] - 1e-9):
            first = x
    return first, sweep


def agreements(scn: Scenario, results: list[Result]) -> list[Verdict]:
    """Precedence ordering per class and method, Storm vs the direct solution, simulation vs model when exact."""
    out: list[Verdict] = []
    methods = sorted({r.method for r in results})
    for cls in scn.classes:
        for method in methods:
            rs = _ordering_values(results, cls, method)
            if rs is None:
                continue
            d = [r.value for r in rs]
            slack = 1e-9
            if method in ("simulated", "ns-3", "trace"):
                se = [float(r.provenance.get("std_error", 0.0)) for r in rs]
                slack = 3.0 * max(se)
            ok = d[2] >= d[1] - slack and d[1] >= d[0] - slack
            margin = min(d[2] - d[1], d[1] - d[0])
            detail = ""
            if method == "closed-form" and scn.ordering.enabled:
                first, _ = ordering_sweep(scn, cls, scn.ordering.loads)
                detail = (f"load sweep x{scn.ordering.loads[0]:g}..x{scn.ordering.loads[-1]:g}: "
                          + ("ordering holds at every load" if first is None else f"first breaks at x{first:g} load"))
            out.append(Verdict("agreement", f"{cls}: drop({cls}3) >= drop({cls}2) >= drop({cls}1)",
                               f"{cls}.drop", method, "holds" if ok else "violated",
                               d[2], d[0], "1", margin,
                               (detail + ("; " if detail and not ok else "")
                                + ("" if ok else f"drops {d[0]:.4g}, {d[1]:.4g}, {d[2]:.4g}")).strip()))
    # Storm against the direct SciPy solution of the same chain, one verdict per class.
    for cls in scn.classes:
        rs = [r for r in results if r.method == "model-checked" and r.metric.startswith(f"{cls}.drop.")
              and "direct_solution" in r.provenance]
        if not rs:
            continue
        diffs = [abs(r.value - r.provenance["direct_solution"]["drop"][int(r.metric[-1]) - 1]) for r in rs]
        worst = max(diffs)
        tol = 1e-5  # the engine's float route: errors up to ~2e-6 absolute measured on these chains
        ok = worst <= tol
        out.append(Verdict("agreement", f"{cls}: Storm equals the direct SciPy solution of the same chain",
                           f"{cls}.drop", "model-checked vs SciPy", "holds" if ok else "disagree", worst, tol, "1",
                           tol - worst, f"largest difference over the three drop probabilities: {worst:.3g}"))
    # Simulation vs model: only where the model describes the simulated system exactly.
    from scipy import stats

    exact_cases = _exact_classes(scn)
    by = {(r.metric, r.method): r for r in results}
    checks = [r for r in results if r.method == "simulated" and r.metric.split(".")[0] in exact_cases
              and (r.metric, "model-checked") in by and r.provenance.get("std_error") is not None]
    for r in checks:
        m = by[(r.metric, "model-checked")]
        se = float(r.provenance["std_error"])
        dof = max(int(r.provenance.get("replications", 2)) - 1, 1)
        t = stats.t.ppf(1 - 0.01 / (2 * len(checks)), dof)
        half = t * se + 1e-6 * max(1.0, abs(m.value))
        ok = abs(r.value - m.value) <= half
        out.append(Verdict("agreement", "simulated estimate agrees with model-checked value (family-wise 99 %)",
                           r.metric, "simulated vs model-checked", "holds" if ok else "disagree", r.value, m.value,
                           r.unit, half - abs(r.value - m.value),
                           "" if ok else f"|{r.value:.6g} - {m.value:.6g}| > {half:.3g}"))
    return out


def _exact_classes(scn: Scenario) -> set[str]:
    """Classes for which the instantaneous-average chain is the simulated system itself.

    That needs alpha = 1, Poisson arrivals with exponential sizes, fixed colour mixes, WRED (the chain of
    RIO / n-RED approximates FIFO composition), and the class alone on the link (so its CBWFQ share is the
    link rate whenever it is backlogged).
    """
    active = [n for n, t in scn.traffic.items() if t.rate > 0]
    if len(active) != 1 or scn.methods.model_checked.average != "instantaneous":
        return set()
    n = active[0]
    t = scn.traffic[n]
    c = scn.classes[n]
    if c.dropper.weight == 1.0 and t.arrivals == "poisson" and t.sizes == "exponential" and t.marker is None \
            and c.dropper.mode == "wred":
        return {n}
    return set()


def render_models(scn: Scenario, out_dir) -> list:
    """Write one PRISM model per AF class with its constants filled in, and the property file
    (``qosbound model render``). The files in models/ leave the constants undefined; these set them."""
    import re
    from pathlib import Path

    from qosbound.models.af import wred_constants
    from qosbound.models.engine import MODELS_DIR

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    opts = scn.methods.model_checked
    for ci in class_inputs(scn):
        ewma = opts.average == "ewma" and ci.profile.mode == "wred"
        stem = "wred_ewma" if ewma else "wred"
        consts = wred_constants(ci.lam, ci.mu, ci.K, ci.profile, ewma=ewma)
        text = (MODELS_DIR / f"{stem}.prism").read_text()
        for name, value in consts.items():
            text, n = re.subn(rf"^const (int|double) {name};", lambda m: f"const {m.group(1)} {name} = {value!r};",
                              text, count=1, flags=re.M)
            if n != 1:
                raise ScenarioError(f"model {stem}.prism has no undefined constant '{name}'", field="methods")
        text = f"// Rendered by qosbound for scenario {scn.name}, class {ci.name}.\n" + text
        mp = out / f"{scn.name}_{ci.name}.prism"
        mp.write_text(text)
        pp = out / f"{scn.name}_{ci.name}.props"
        pp.write_text((MODELS_DIR / f"{stem}.props").read_text())
        written += [mp, pp]
    return written
