"""The TSQ scenario schema: link, TSQ settings, PI AQM, flow groups, method options (``system: tsq``)."""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from qosbound.errors import ScenarioError
from qosbound.scenario import PacketSize, PositiveInt, Rate, ScenarioBase, Size, Time
from qosbound.systems.base import (MAX_BUFFER, MAX_RATE, MAX_TIME, Link, MethodsBase, ModelOptionsBase, Strict,
                                   TimedSimOptions, check_range)

__all__ = ["TSQConf", "PIConf", "FlowConf", "ModelOptions", "SimOptions", "Methods", "Metrics", "Scenario"]


class TSQConf(Strict):
    enabled: bool = True
    hint_bits: PositiveInt = 4
    latency: Time = 0.040

    @field_validator("latency")
    @classmethod
    def _pos(cls, v):
        if not (v > 0 and math.isfinite(v)):
            raise ScenarioError("the latency constant l must be positive and finite", field="tsq.latency")
        return check_range(v, 0.0, MAX_TIME, "the latency constant", "s", "tsq.latency")

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
        check_range(self.q_max, 1, MAX_BUFFER, "a buffer of", "packets", "aqm.q_max")
        if not 0 < self.q_ref < self.q_max:
            raise ScenarioError("need 0 < q_ref < q_max", field="aqm.q_ref")
        return self


class FlowConf(Strict):
    kind: Literal["tfrc", "cbr"]
    count: PositiveInt = 1
    rate: Rate = Field(description="cbr: sending rate; tfrc: maximum (codec or access) rate, bit/s")
    size: PacketSize = 1000.0
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
    max_states: float = Field(default=1e6, ge=1, description="budget on the slotted chains' states (q_max + 1, "
                              "known before building): a larger abstraction is refused, or skipped when the "
                              "scenario merely enables the method")


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
            check_range(f.rate, 0.0, MAX_RATE, "rate", "bit/s", f"flows.{name}.rate")
            for q in ("rtt", "one_way"):
                check_range(getattr(f, q), 0.0, MAX_TIME, q, "s", f"flows.{name}.{q}")
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
