"""The scenario file of a ``pq_txq`` system: the link, the transmission queue (TxQ), the priority queue (PQ), the EF
and BE traffic, the methods' options and the metrics asked for (semantics: :mod:`qosbound.systems.pq_txq`)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from qosbound.errors import ScenarioError
from qosbound.scenario import PacketSize, PositiveInt, Probability, Rate, ScenarioBase, Size, Time
from qosbound.systems.base import (Link, MethodsBase, ModelOptionsBase, PacketSimOptions, Strict, check_ccdf_points,
                                   check_quantiles)
from qosbound.units import format_quantity

__all__ = ["TxQ", "PQ", "EFStream", "EFTraffic", "BESize", "BETraffic", "Traffic", "ModelOptions", "SimOptions",
           "Methods", "Metrics", "Scenario"]


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
        return check_ccdf_points(v)

    @field_validator("quantiles")
    @classmethod
    def _q(cls, v):
        return check_quantiles(v)


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
