"""The AF service: token-bucket markers, RED-family droppers per drop precedence, CBWFQ across classes.

Sources: Takeo & Tasaka (Takeo & Tasaka (2003): WRED with ``P_d`` and ``alpha = 2^-9``, Table I,
CBWFQ and Table V), Jourjon et al. (Jourjon et al. (2008): RIO and the two-colour bucket),
Koehler & Schaefer (Köhler & Schäfer (1999): trTCM, RIO, overlapped n-RED, Tables 3-6).

Semantics shared by the three methods (see DESIGN.md, "WRED"):

* A class ``X`` (e.g. ``AF1``) has a FIFO buffer of ``buffer`` packets (counting
  the packet on the wire), a dropper with per-precedence thresholds for
  ``X1`` (green), ``X2`` (yellow) and ``X3`` (red), and a CBWFQ bandwidth
  (its weight). Each class's packets arrive as a Poisson (or CBR) stream, coloured
  by fixed fractions (``mix``) or by a marker (``marker``).
* CBWFQ gives a backlogged class ``C w_i / sum of w over backlogged classes``
  (Takeo & Tasaka 2003, sec. II.B). ``service: guaranteed``: every method serves a class at
  exactly that share over the classes with traffic (the simulator gives each class
  its own server at that rate). ``service: max-min`` (default): the simulator runs
  real, work-conserving WFQ; the closed form and the model serve a class at its
  max-min rate with the other classes sending steadily at their mean rates, and
  say so in what their results neglect.
* Colour fractions: the droppers act per packet, so the queue models take
  per-colour *packet* rates; delivered throughput adds *bytes*. With variable
  sizes a token bucket passes small packets more readily, so the two differ
  (``X.colour.Xk`` is the packet fraction, ``X.colour.Xk.bytes`` the byte
  fraction; :func:`qosbound.analytic.markers.marker_fractions`). The closed form
  serves a class at the mean size of its *admitted* packets (a fixed point).
* The closed form and the model take Poisson arrivals with exponential sizes
  (mean ``size``); the simulator uses the configured laws.
* Every result says what kind of number it is: CBWFQ shares and fixed mixes are
  exact; a queue result is exact only where the model is the scenario (alpha = 1,
  WRED, Poisson input with exponential sizes, a fixed colour mix, guaranteed
  service or a lone class), otherwise an approximation naming what it neglects
  (:func:`neglects`); simulated results are confidence intervals at the
  scenario's ``confidence`` with their standard error and ``replications - 1``
  degrees of freedom.

Metrics per class ``X``: ``X.drop.X1``, ``X.drop.X2``, ``X.drop.X3`` (per-precedence
drop probability), ``X.drop`` (all colours), ``X.delay.mean`` and ``X.delay.X1``
... (mean delay of admitted packets), ``X.queue.mean`` (packets), ``X.rate``
(CBWFQ allocation, closed form), ``X.throughput`` (delivered bit/s),
``X.colour.X1`` ... (marker output fractions by packets), ``X.colour.X1.bytes`` ... (by bytes) and,
per CBWFQ case,
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
           "ordering_sweep", "class_inputs", "metric_names", "marking", "neglects"]


# The value checks of the nested models below are made by ``Scenario._check`` (``_check_*``), where the full
# field path is known: every refusal is a ScenarioError naming the field (``admit`` reports it as the reason a
# trial value is infeasible).


class Threshold(Strict):
    min_th: float = Field(description="packets")
    max_th: float = Field(description="packets")
    P_d: float = Field(default=10.0, description="mark-probability denominator (>= 1)")


def _check_threshold(t: Threshold, at: str) -> None:
    for name in ("min_th", "max_th", "P_d"):
        if not math.isfinite(getattr(t, name)):
            raise ScenarioError(f"{name} = {getattr(t, name)!r} is not a finite number", field=f"{at}.{name}")
    if t.min_th < 0:
        raise ScenarioError(f"min_th = {t.min_th:g} is negative", field=f"{at}.min_th")
    if t.min_th >= t.max_th:
        raise ScenarioError(f"thresholds out of order: min_th = {t.min_th:g} must be below max_th = {t.max_th:g}",
                            field=f"{at}.min_th")
    if t.P_d < 1:
        raise ScenarioError(f"P_d = {t.P_d:g} < 1 would give a drop probability above 1 below max_th",
                            field=f"{at}.P_d")


class Dropper(Strict):
    mode: Literal["wred", "rio", "nred"] = "wred"
    gentle: bool = False
    alpha: float | None = Field(default=None, description="EWMA weight; default 2^-exponent")
    exponent: PositiveInt = Field(default=9, description="alpha = 2^-exponent (Takeo & Tasaka 2003 default 9)")
    thresholds: dict[str, Threshold] = Field(description="per precedence: X1 (green), X2 (yellow), X3 (red)")

    @property
    def weight(self) -> float:
        return self.alpha if self.alpha is not None else 2.0 ** -self.exponent


def _check_dropper(d: Dropper, at: str) -> None:
    if d.alpha is not None and not (0 < d.alpha <= 1):
        raise ScenarioError(f"EWMA weight alpha = {d.alpha:g} is not in (0, 1]", field=f"{at}.alpha")
    if len(d.thresholds) != 3:
        raise ScenarioError("give thresholds for exactly three drop precedences (X1, X2, X3)",
                            field=f"{at}.thresholds")
    for k, t in d.thresholds.items():
        _check_threshold(t, f"{at}.thresholds.{k}")


class AFClass(Strict):
    bandwidth: Rate = Field(description="CBWFQ bandwidth (the class weight), bit/s")
    buffer: PositiveInt = Field(default=64, description="queue limit, packets")
    dropper: Dropper


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



def _check_marker(m: Marker, at: str) -> None:
    if not m.cir > 0:
        raise ScenarioError("CIR must be positive", field=f"{at}.cir")
    if not m.cbs > 0:
        raise ScenarioError("CBS must be positive", field=f"{at}.cbs")
    if m.kind == "trtcm":
        if m.pir is None or m.pbs is None:
            raise ScenarioError("trTCM needs pir and pbs", field=f"{at}.{'pir' if m.pir is None else 'pbs'}")
        if m.pir < m.cir:
            raise ScenarioError(f"trTCM needs PIR >= CIR (RFC 2698): PIR = {m.pir:g} bit/s < CIR = {m.cir:g} bit/s",
                                field=f"{at}.pir")
        if not m.pbs > 0:
            raise ScenarioError("PBS must be positive", field=f"{at}.pbs")
    if m.kind == "srtcm" and m.ebs is None:
        raise ScenarioError("srTCM needs ebs", field=f"{at}.ebs")
    if m.ebs is not None and m.ebs < 0:
        raise ScenarioError("EBS must not be negative", field=f"{at}.ebs")
    if len(m.precolour) != 3 or any(not x >= 0 for x in m.precolour) or abs(sum(m.precolour) - 1) > 1e-9:
        raise ScenarioError("precolour must be three non-negative fractions summing to 1", field=f"{at}.precolour")


class Traffic(Strict):
    rate: Rate = Field(description="offered rate, bit/s")
    size: Size = Field(default=1000.0, description="mean packet size, bytes")
    sizes: Literal["exponential", "fixed"] = "exponential"
    arrivals: Literal["poisson", "cbr"] = "poisson"
    mix: list[Probability] | None = Field(default=None, description="fractions of green, yellow, red")
    marker: Marker | None = None



def _check_traffic(t: Traffic, at: str) -> None:
    if not t.rate >= 0:
        raise ScenarioError("offered rate must not be negative", field=f"{at}.rate")
    if not t.size > 0:
        raise ScenarioError("packet size must be positive", field=f"{at}.size")
    if t.mix is not None and t.marker is not None:
        raise ScenarioError("give either 'mix' (fixed colour fractions) or 'marker', not both", field=f"{at}.mix")
    if t.mix is not None and (len(t.mix) != 3 or abs(sum(t.mix) - 1) > 1e-9):
        raise ScenarioError("mix must be three fractions (green, yellow, red) summing to 1", field=f"{at}.mix")
    if t.marker is not None:
        _check_marker(t.marker, f"{at}.marker")


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
        if not v or any((not isinstance(x, (int, float))) or not x > 0 or not math.isfinite(x) for x in v):
            raise ScenarioError("loads must be positive multiples of the configured load", field="ordering.loads")
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
            if not c.bandwidth >= 0:
                raise ScenarioError("bandwidth must not be negative", field=f"classes.{name}.bandwidth")
            _check_dropper(c.dropper, f"classes.{name}.dropper")
            keys = list(c.dropper.thresholds)
            want = [f"{name}{k}" for k in (1, 2, 3)]
            if sorted(keys) != want:
                raise ScenarioError(f"thresholds must be named {', '.join(want)}, got {', '.join(keys)}",
                                    field=f"classes.{name}.dropper.thresholds")
            mx = max(t.max_th for t in c.dropper.thresholds.values())
            if c.buffer < mx:
                raise ScenarioError(f"buffer of {c.buffer} packets is smaller than max_th = {mx:g}",
                                    field=f"classes.{name}.buffer")
        for name, t in self.traffic.items():
            if name not in self.classes:
                raise ScenarioError(f"traffic for undeclared class '{name}'", field=f"traffic.{name}")
            _check_traffic(t, f"traffic.{name}")
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
    """One class reduced to SI numbers for the queue models.

    ``lam`` holds per-colour *packet* rates (the droppers act per packet, so the queue models need packet
    fractions); ``colour_sizes`` the mean size of each colour's packets (a token bucket passes small
    packets more readily, so with variable sizes green packets are smaller than red ones), used for the
    delivered throughput in bytes.
    """

    name: str
    lam: np.ndarray  # (3,) packets/s per colour
    mu: float  # packets/s at the CBWFQ share
    share: float  # bit/s
    K: int
    profile: object  # qosbound.analytic.wred.Profile
    colour_fractions: np.ndarray  # (3,) packet fractions
    size: float
    byte_fractions: np.ndarray = None  # (3,) byte fractions
    colour_sizes: np.ndarray = None  # (3,) mean bytes per packet of each colour
    marking: object = None  # qosbound.analytic.markers.MarkerFractions


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
    """Packet colour fractions of a class's arrivals (the fixed mix, or the marker's long run) and their source."""
    f = marking(t)
    return np.asarray(f.packets, dtype=float), f.source


def colour_fraction_error(t: Traffic) -> np.ndarray:
    """Estimated error of :func:`colour_fractions` (zeros where they are exact or no estimate is known)."""
    return np.asarray(marking(t).error, dtype=float)


def marking(t: Traffic):
    """Colour fractions by packets and by bytes (:class:`qosbound.analytic.markers.MarkerFractions`)."""
    from qosbound.analytic.markers import MarkerFractions, marker_fractions

    if t.marker is None or t.rate <= 0:
        mix = (1.0, 0.0, 0.0) if (t.marker is not None or t.mix is None) else tuple(float(x) for x in t.mix)
        return MarkerFractions(mix, mix, (True,) * 3, (0.0,) * 3, "",
                               "fixed mix" if t.marker is None else "no traffic")
    m = t.marker
    second_rate = m.pir if m.kind == "trtcm" else None
    second_depth = m.pbs if m.kind == "trtcm" else (m.ebs if m.kind == "srtcm" else None)
    f = marker_fractions(m.kind, t.arrivals, t.sizes, float(t.rate), float(t.size), float(m.cir), float(m.cbs),
                         second_rate, second_depth, bool(m.aware), tuple(float(x) for x in m.precolour))
    src = {"trtcm": "RFC 2698", "srtcm": "RFC 2697", "two-colour": "token bucket (Jourjon et al. 2008)"}[m.kind]
    return type(f)(f.packets, f.bytes, f.exact, f.error, f.neglects, f"{src}: {f.source}")


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
        mk = marking(t)
        f = np.asarray(mk.packets, dtype=float)
        lam = f * t.rate / (8.0 * t.size)
        mu = shares[i] / (8.0 * t.size)
        if mu <= 0:
            raise ScenarioError(f"class {n} has traffic but a CBWFQ share of zero", field=f"classes.{n}.bandwidth")
        out.append(ClassInput(n, lam, mu, float(shares[i]), scn.classes[n].buffer, _profile(scn.classes[n], n),
                              f, t.size, np.asarray(mk.bytes, dtype=float), mk.mean_sizes(t.size), mk))
    return out


def metric_names(scn: Scenario) -> list[str]:
    out = []
    for n in scn.classes:
        out += [f"{n}.rate"] + [f"{n}.rate.{c}" for c in scn.cases]
        if n in scn.traffic and scn.traffic[n].rate > 0:
            out += [f"{n}.drop.{n}{k}" for k in (1, 2, 3)] + [f"{n}.drop", f"{n}.delay.mean"]
            out += [f"{n}.delay.{n}{k}" for k in (1, 2, 3)] + [f"{n}.queue.mean", f"{n}.throughput"]
            out += [f"{n}.colour.{n}{k}" for k in (1, 2, 3)] + [f"{n}.colour.{n}{k}.bytes" for k in (1, 2, 3)]
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
                        "X.delay.Xk, X.queue.mean, X.rate, X.throughput, X.colour.Xk (packet fraction), "
                        "X.colour.Xk.bytes (byte fraction)", field="metric")


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
    # Delivered bytes: each colour's admitted packets at that colour's mean size.
    sizes = ci.colour_sizes if ci.colour_sizes is not None else np.full(3, ci.size)
    thr = float(8.0 * (acc @ sizes))
    out.append(Result(f"{n}.throughput", method, thr, "bit/s", interval_fn("throughput", thr), prov))
    return out


def neglects(scn: Scenario, ci: ClassInput, approximation: str | None) -> list[str]:
    """What the queue model of class ``ci`` leaves out of the scenario's semantics (empty: it is exact).

    ``approximation`` is the closed form's treatment of the EWMA average (``instantaneous`` or
    ``fixed-average``); the model-checked chain is ``instantaneous`` unless it models the EWMA
    (``None`` then: no averaging term). The simulator runs the scenario's semantics themselves.
    """
    t = scn.traffic[ci.name]
    out = []
    if approximation == "fixed-average":
        out.append("EWMA averaging dynamics (the average held fixed at its stationary mean)")
    elif approximation == "instantaneous" and ci.profile.alpha < 1.0:
        out.append(f"EWMA averaging (alpha = {ci.profile.alpha:.3g} taken as 1: the average is the queue)")
    if ci.profile.mode != "wred":
        out.append("FIFO order of colours in the queue (the departing colour drawn in proportion to the "
                   "queue's composition)")
    if t.arrivals != "poisson" or t.sizes != "exponential":
        out.append(f"{t.arrivals} arrivals with {t.sizes} sizes (the model takes Poisson input with exponential "
                   "sizes)")
    if t.marker is not None:
        out.append("correlation of the marker's colours with arrival times and packet sizes (colours taken as "
                   "independent Poisson streams, every colour served at the class's mean size)")
    active = [n for n, tr in scn.traffic.items() if tr.rate > 0]
    if scn.service == "max-min" and len(active) > 1:
        out.append("the other classes' burstiness (the class is served at its max-min CBWFQ rate as if the others "
                   "sent steadily at their mean rates)")
    return out


def _solve_sized(ci: ClassInput, approx: str):
    """The queue solution with the service rate set by the mean size of the *admitted* packets.

    With variable sizes a marker makes colours differ in size (green small, red large) and the dropper
    removes mostly red, so admitted packets are smaller than offered ones and more of them fit the share.
    The service rate ``mu = share / (8 * mean admitted size)`` and the drops are solved together: the mean
    admitted size is a mixture of the colours' sizes, so ``mu`` lies between the rates of the largest and
    the smallest colour and Brent's method finds it. With colour-independent sizes ``mu`` is the class's
    ``share / (8 * size)``. Returns (solution, mu).
    """
    from scipy.optimize import brentq

    from qosbound.analytic.red_queue import solve

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
        approx = _approximation(scn, ci)
        sol, mu = _solve_sized(ci, approx)
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

        out += _queue_results(ci, sol.drop, sol.delay, sol.mean_queue, "closed-form", iv, prov)
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


#: Largest AF chain ``plan`` builds (states, estimated from the buffer before building): a few seconds of
#: Storm and of the direct solve on this class of machine; beyond it the closed form and the simulator answer.
MAX_AF_MODEL_STATES = 2_000_000


def model_states(K: int, mode: str, ewma: bool = False) -> int:
    """Upper estimate of the states of the AF chain for a buffer of ``K`` packets: ``(n)`` for WRED, ``(n, n0)``
    for RIO, ``(n, n0, n1)`` for n-RED (all with ``n0 + n1 <= n``), ``(n, a)`` for the EWMA model."""
    from math import comb

    K = int(K)
    if ewma:
        return (K + 1) ** 2
    return {"wred": K + 1, "rio": comb(K + 2, 2), "nred": comb(K + 3, 3)}.get(mode, comb(K + 3, 3))


def _model_checked(scn: Scenario, inputs: list[ClassInput], progress) -> list[Result]:
    from qosbound.analytic.red_queue import instantaneous
    from qosbound.errors import ResourceError
    from qosbound.models.af import check_wred, check_wred_ewma

    opts = scn.methods.model_checked
    out: list[Result] = []
    for ci in inputs:  # refuse before building anything
        ewma = opts.average == "ewma" and ci.profile.mode == "wred"
        n = model_states(ci.K, ci.profile.mode, ewma)
        if n > MAX_AF_MODEL_STATES:
            raise ResourceError(f"the {ci.profile.mode} model of class {ci.name} with a buffer of {ci.K:g} packets has "
                                f"about {n:.3g} states, above the budget of {MAX_AF_MODEL_STATES:.0e}: disable "
                                "model-checked for this scenario (the closed form and the simulator answer it) or "
                                "use a smaller buffer", field=f"classes.{ci.name}.buffer")
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
        # The chain is the scenario's semantics only where nothing is neglected (alpha = 1 or the EWMA modelled,
        # Poisson input with exponential sizes, ...); elsewhere its exact value is an approximation of the
        # scenario's, and says what it leaves out.
        neg = neglects(scn, ci, None if (opts.average == "ewma" and ci.profile.mode == "wred") else "instantaneous")

        def iv(k, v, neg=neg, ivs=ivs, note=note):
            v = float(v)
            if opts.exact:
                lo = hi = v
            else:
                key = "throughput_pk" if k == "throughput" else k
                lo, hi = ivs.get(key, (-math.inf, math.inf))
                if k == "throughput":
                    lo, hi = lo * 8.0 * ci.size, hi * 8.0 * ci.size
                lo, hi = min(lo, v), max(hi, v)
            if neg:
                return Interval.approximation(v, "; ".join(neg), note=f"{note}; the model's own value lies in "
                                                                       f"[{lo:.6g}, {hi:.6g}]")
            if opts.exact:
                return Interval.exact(v, note=note)
            return Interval.numerical(lo, hi, note=note + ("" if math.isfinite(hi - lo) else f"; no bound for {k}"))

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
    dedicated = None
    if scn.service == "guaranteed":
        from qosbound.analytic.cbwfq import allocate

        active = [1.0 if (n in scn.traffic and scn.traffic[n].rate > 0) else 0.0 for n in names]
        dedicated = allocate(scn.link.rate, [scn.classes[n].bandwidth for n in names], active)
        # Idle classes never send; give them a positive rate so the kernel's arrays stay well defined.
        dedicated = np.where(dedicated > 0, dedicated, scn.link.rate)
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
        src_aware=np.array([s[5] for s in src]), marker_state=np.array([s[6] for s in src]), dedicated=dedicated)


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
    level = float(o.confidence)
    out: list[Result] = []
    service = "own server at the guaranteed share" if scn.service == "guaranteed" else "WFQ virtual time"
    for ci in inputs:
        i = names.index(ci.name)
        n = ci.name

        def est(vals, metric, unit, extra=None, trials=None):
            v = np.asarray(vals, dtype=float)
            v = v[np.isfinite(v)]
            if len(v) < 2:
                return
            m = float(v.mean())
            dof = len(v) - 1
            se = float(v.std(ddof=1) / math.sqrt(len(v)))
            if trials:
                # A proportion over ``trials`` packets in all: its standard error is at least the binomial one
                # (drops cluster, they do not spread out more evenly than coin flips); with no event seen the
                # floor takes one event, so a rare-event estimate of 0 does not get a zero-width interval.
                p = min(max(m, 1.0 / trials), 1.0)
                se = max(se, math.sqrt(p * (1.0 - p) / trials))
            half = float(st.t.ppf(0.5 + level / 2.0, dof)) * se
            prov = {"source": f"qosbound.validation.af_sim (float EWMA, {service})", "seed": o.seed,
                    "packets": o.packets, "replications": int(len(v)), "std_error": se,
                    "alpha": ci.profile.alpha, "dropper": ci.profile.mode}
            if extra:
                prov.update(extra)
            lo, hi = m - half, m + half
            if metric_kind(metric) == "probability":  # only probabilities live in [0, 1]
                lo, hi = max(0.0, lo), min(1.0, hi)
            elif unit in ("s", "bit/s") or metric.endswith(".queue.mean"):  # non-negative quantities
                lo = max(0.0, lo)
            out.append(Result(metric, "simulated", m, unit, Interval.ci(lo, hi, level, se=se, dof=dof), prov))

        for k in range(3):
            if any(rp.arrivals[i, k] > 0 for rp in reps):
                est([rp.drops[i, k] / rp.arrivals[i, k] if rp.arrivals[i, k] > 0 else np.nan for rp in reps],
                    f"{n}.drop.{n}{k + 1}", "1", trials=float(sum(rp.arrivals[i, k] for rp in reps)))
        est([rp.drops[i].sum() / rp.arrivals[i].sum() for rp in reps], f"{n}.drop", "1",
            trials=float(sum(rp.arrivals[i].sum() for rp in reps)))
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
            est([rp.arrivals[i, k] / rp.arrivals[i].sum() for rp in reps], f"{n}.colour.{n}{k + 1}", "1",
                {"fraction": "packets"})
            est([rp.arrival_bytes[i, k] / rp.arrival_bytes[i].sum() for rp in reps], f"{n}.colour.{n}{k + 1}.bytes",
                "1", {"fraction": "bytes"})
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
    """Checks the generic agreement rule cannot express: the drop-precedence ordering per class and method
    (with the closed form's load sweep), and Storm against the direct SciPy solution of the same chain."""
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
            # RFC 2597 requires the drop precedences to be honoured: a property of the configuration judged on
            # each method's results, so it is an objective (kind "slo": a violation exits 1), not an agreement.
            out.append(Verdict("slo", f"{cls}: drop({cls}3) >= drop({cls}2) >= drop({cls}1) (RFC 2597)",
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
                           f"{cls}.drop", "model-checked vs SciPy", "agree" if ok else "disagree", worst, tol, "1",
                           tol - worst, f"largest difference over the three drop probabilities: {worst:.3g}"))
    # Simulated vs model-checked (and every other pair of methods) is the generic rule's
    # (qosbound.agreement.agreements), driven by each result's kind.
    return out


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
