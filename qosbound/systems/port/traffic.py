"""What is offered to a port class (``classes[].traffic``): one stream, an aggregate of streams or calls, or a
saturated source, and its offered rate. Part of the port scenario schema (:mod:`qosbound.systems.port.schema`)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator, model_validator

from qosbound.scenario import PacketSize, Probability, Rate, Time
from qosbound.systems.base import Strict
from qosbound.systems.pq_txq.schema import BESize, EFStream

__all__ = ["Traffic", "offered_rate"]


class Traffic(Strict):
    """What is offered to one class. One stream: ``rate`` with ``size`` (or a ``sizes`` mix, or ``sizes:
    exponential`` of mean ``size``) and ``arrivals`` (``poisson``, ``cbr``, ``on-off``); or ``streams`` (a list,
    as ``pq_txq``'s EF aggregate); or ``calls`` identical CBR ``call`` streams with independent uniform phases;
    or ``saturated: true`` (always a packet waiting, sizes from ``size``/``sizes``). ``mix`` gives the fractions
    of packets arriving with each of the class's precedences (in their order)."""

    rate: Rate | None = Field(default=None, description="offered rate on the wire, bit/s")
    size: PacketSize | None = Field(default=None, description="packet size on the wire, bytes (the mean for "
                                    "exponential sizes)")
    sizes: list[BESize] | Literal["exponential", "fixed"] | None = Field(
        default=None, description="a size mix (list of size/p), or 'exponential' (mean 'size'), or 'fixed'")
    arrivals: Literal["poisson", "cbr", "on-off"] = "poisson"
    phase: Literal["random"] | Time = Field(default="random", description="CBR: time of the first packet, or "
                                            "'random' (uniform over one period)")
    on: Time | None = Field(default=None, description="on-off: mean on period, s (exponential)")
    off: Time | None = Field(default=None, description="on-off: mean off period, s (exponential)")
    streams: list[EFStream] | None = Field(default=None, description="an aggregate of streams")
    calls: int | None = Field(default=None, description="number of identical calls (CBR, random phases)")
    call: EFStream | None = Field(default=None, description="the per-call stream of 'calls'")
    saturated: bool | None = Field(default=None, description="the class always has a packet waiting")
    mix: list[Probability] | None = Field(default=None, description="fraction of packets arriving with each "
                                          "precedence of the class, in the order of 'precedences'")

    @field_validator("calls", mode="before")
    @classmethod
    def _calls(cls, v):
        if v is None:
            return v
        if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, float) and v.is_integer())) or v < 1:
            raise ValueError(f"the number of calls is a positive integer, got {v!r}")
        return int(v)

    @model_validator(mode="after")
    def _forms(self):
        aggregate = self.streams is not None or self.calls is not None or self.call is not None
        single = self.rate is not None
        forms = [n for n, on in (("rate", single), ("streams/calls", aggregate), ("saturated", bool(self.saturated)))
                 if on]
        if len(forms) != 1:
            raise ValueError("give exactly one of 'rate' (one stream), 'streams' or 'calls' with 'call' (an "
                             "aggregate), or 'saturated: true'; found " + (", ".join(forms) or "none"))
        if self.saturated is False:
            raise ValueError("saturated: false is the default; give a rate instead")
        sized = self.size is not None or isinstance(self.sizes, list)
        if aggregate:
            if self.calls is not None or self.call is not None:
                if self.calls is None or self.call is None:
                    raise ValueError("'calls' (how many) and 'call' (the per-call stream) go together")
                if self.streams is not None:
                    raise ValueError("give either 'streams' or 'calls', not both")
                if self.call.arrivals != "cbr" or self.call.phase != "random":
                    raise ValueError("a call is a CBR stream with a random phase (arrivals: cbr, phase: random)")
            elif not self.streams:
                raise ValueError("'streams' is empty")
            if sized or self.sizes is not None or self.arrivals != "poisson" or self.on is not None \
                    or self.off is not None or self.phase != "random":
                raise ValueError("the size and arrival law belong to each stream (or the call), not to the aggregate")
            return self
        if self.size is not None and isinstance(self.sizes, list):
            raise ValueError("give either 'size' (one size) or 'sizes' (a list of size/p), not both")
        if not sized:
            raise ValueError("give the packet size: 'size', or 'sizes' (a list of size/p pairs)")
        if isinstance(self.sizes, list):
            if not self.sizes:
                raise ValueError("'sizes' is empty")
            total = sum(s.p for s in self.sizes)
            if abs(total - 1.0) > 1e-9:
                raise ValueError(f"size probabilities sum to {total:.6g}, not 1")
        if self.saturated:
            if self.arrivals != "poisson" or self.on is not None or self.off is not None or self.phase != "random":
                raise ValueError("saturated traffic has no arrival process: leave out arrivals, on, off and phase")
            return self
        if not self.rate > 0:
            raise ValueError("the offered rate must be positive (leave the traffic out for an idle class)")
        if self.arrivals == "on-off":
            if self.on is None or self.off is None or not (self.on > 0 and self.off > 0):
                raise ValueError("on-off arrivals need positive mean 'on' and 'off' periods")
        elif self.on is not None or self.off is not None:
            raise ValueError("'on' and 'off' belong to on-off arrivals")
        if self.phase != "random":
            if self.arrivals != "cbr":
                raise ValueError("a phase is given only to a CBR stream")
            if self.phase < 0:
                raise ValueError("the phase is a time >= 0")
        return self

    @property
    def is_saturated(self) -> bool:
        return bool(self.saturated)


def offered_rate(t: Traffic | None) -> float:
    """Offered wire rate of a class's traffic, bit/s (0 for none; inf for saturated)."""
    if t is None:
        return 0.0
    if t.is_saturated:
        return math.inf
    if t.rate is not None:
        return float(t.rate)
    if t.calls is not None:
        return float(t.calls) * float(t.call.rate)
    return float(sum(s.rate for s in t.streams))
