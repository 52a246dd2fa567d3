"""The AF scenario schema: classes, droppers, markers, traffic, method options (``system: af``)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator, model_validator

from qosbound.errors import ScenarioError
from qosbound.scenario import PositiveInt, Probability, Rate, ScenarioBase, Size
from qosbound.systems.base import ClosedFormOptions as BaseClosedFormOptions
from qosbound.systems.base import (MAX_BUFFER, MAX_BURST, MAX_RATE, Link, MethodsBase, ModelOptionsBase, PacketSimOptions,
                                   Strict, check_range)

__all__ = ["MAX_AF_MODEL_STATES", "Threshold", "check_threshold", "Dropper", "AFClass", "Marker", "check_marker",
           "Traffic", "ClosedFormOptions", "ModelOptions", "SimOptions",
           "Methods", "OrderingOptions", "Scenario"]


# The value checks of the nested models below are made by ``Scenario._check`` (``_check_*``), where the full
# field path is known: every refusal is a ScenarioError naming the field (``admit`` reports it as the reason a
# trial value is infeasible).


class Threshold(Strict):
    min_th: float = Field(description="packets")
    max_th: float = Field(description="packets")
    P_d: float = Field(default=10.0, description="mark-probability denominator (>= 1)")


def check_threshold(t: Threshold, at: str) -> None:
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
        check_threshold(t, f"{at}.thresholds.{k}")


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



def check_marker(m: Marker, at: str) -> None:
    for name in ("cir", "pir"):
        check_range(getattr(m, name), 0.0, MAX_RATE, name.upper(), "bit/s", f"{at}.{name}")
    for name in ("cbs", "pbs", "ebs"):
        check_range(getattr(m, name), None, MAX_BURST, name.upper(), "B", f"{at}.{name}")
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
    check_range(t.rate, None, MAX_RATE, "offered rate", "bit/s", f"{at}.rate")
    check_range(t.size, None, 65535, "mean packet size", "B", f"{at}.size")
    if not t.rate >= 0:
        raise ScenarioError("offered rate must not be negative", field=f"{at}.rate")
    if not t.size > 0:
        raise ScenarioError("packet size must be positive", field=f"{at}.size")
    if t.mix is not None and t.marker is not None:
        raise ScenarioError("give either 'mix' (fixed colour fractions) or 'marker', not both", field=f"{at}.mix")
    if t.mix is not None and (len(t.mix) != 3 or abs(sum(t.mix) - 1) > 1e-9):
        raise ScenarioError("mix must be three fractions (green, yellow, red) summing to 1", field=f"{at}.mix")
    if t.marker is not None:
        check_marker(t.marker, f"{at}.marker")


class ClosedFormOptions(BaseClosedFormOptions):
    approximation: Literal["auto", "instantaneous", "fixed-average"] = "auto"


class ModelOptions(ModelOptionsBase):
    average: Literal["instantaneous", "ewma"] = "instantaneous"
    exact: bool = False
    max_states: float = Field(default=2e6, ge=1, description="budget on each class's chain (states, known before "
                              "building from the buffer): a larger chain is refused, or skipped when the scenario "
                              "merely enables the method; 2e6 states take a few seconds")


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
            check_range(c.buffer, 1, MAX_BUFFER, "a buffer of", "packets", f"classes.{name}.buffer")
            check_range(c.bandwidth, 0.0, MAX_RATE, "bandwidth", "bit/s", f"classes.{name}.bandwidth")
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


#: The default budget on an AF chain (``methods.model-checked.max_states``; states, estimated from the buffer
#: before building): a few seconds of Storm and of the direct solve on this class of machine; beyond it the closed
#: form and the simulator answer.
MAX_AF_MODEL_STATES = int(ModelOptions.model_fields["max_states"].default)
