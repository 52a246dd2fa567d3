"""A port's link, tx-ring and classes (``link``, ``txq``, ``classes[]``, ``scheduler``, ``shaper``): each class's
name, DSCPs and drop precedences, its priority level or weighted share, its queue, and the rates it reserves
and passes. Part of the port scenario schema (:mod:`qosbound.systems.port.schema`)."""

from __future__ import annotations

import math
import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from qosbound import dscp
from qosbound.errors import ScenarioError
from qosbound.scenario import PositiveInt, QuantityKind, Rate, Size, Time
from qosbound.systems.base import Link, Strict
from qosbound.systems.port.meters import Dropper, Marker, Police
from qosbound.systems.port.traffic import Traffic, offered_rate
from qosbound.systems.pq_txq.schema import TxQ
from qosbound.units import parse_quantity

__all__ = ["always_congested", "PortLink", "Ring", "Match", "TrafficClass", "Scheduler", "Shaper", "NotModelled",
           "DEFAULT_CLASS", "CLASS_NAME", "MAX_PRECEDENCES", "MAX_QUEUE", "MAX_CLASSES", "MAX_STREAMS",
           "parse_bandwidth", "precedences", "priority_reservation", "long_run_rate"]

#: The class every port has, declared or not (what routers do): it gets the unreserved rest of the link.
DEFAULT_CLASS = "class-default"
#: Class names: what router configurations allow (letters, digits, ``_ - . : / + @ % & * ! ~ ^ $ ? #``), at most
#: 100 characters; no spaces, quotes, brackets, commas, '=' or '|' (they separate fields of the command line,
#: the reports and Markdown tables), and no empty dotted segment (no leading, trailing or double dot), so a
#: metric or parameter path naming the class still reads back (:func:`qosbound.scenario.path_parts`).
_NAME_CHAR = r"[^\s\x00-\x1f\x7f\"'`,;|=\[\]{}()<>\\]"
CLASS_NAME = re.compile(rf"^(?!.*\.\.)(?!\.){_NAME_CHAR}{{1,100}}(?<!\.)$")
#: Most drop precedences one class tells apart: the RED-family droppers and markers have three colours.
MAX_PRECEDENCES = 3
#: Largest queue limit and ring, packets or units (the simulator keeps arrays of these sizes), and most classes
#: and streams (calls) of a port: beyond them a port is refused before anything is built.
MAX_QUEUE = 1_000_000
MAX_CLASSES = 64
MAX_STREAMS = 100_000


class PortLink(Link):
    """The output link: its line rate, and the propagation delay of the link after the port (for networks of
    ports; a port's own delay runs to the last bit on the wire and does not include it)."""

    delay: Time = Field(default=0.0, description="propagation delay of the link after the port, s (networks)")

    @field_validator("delay")
    @classmethod
    def _delay(cls, v):
        if not (v >= 0 and math.isfinite(v)):
            raise ValueError("the propagation delay is a time >= 0")
        return v


class Ring(TxQ):
    """The transmission ring behind the scheduler (``tx-ring-limit``): the scheduler hands it a packet whenever
    fewer than ``units`` units are occupied; a packet takes ``ceil(size / unit_size)`` units, all freed when its
    last bit leaves the wire. ``unit_size: packet`` makes every packet one unit (a ring counted in packets)."""

    unit_size: Size | Literal["packet"] = Field(default="packet", description="memory unit, bytes, or 'packet' "
                                                "(every packet takes one unit)")

    @field_validator("unit_size")
    @classmethod
    def _pos(cls, v):
        if v != "packet" and not v > 0:
            raise ValueError("unit size must be positive")
        return v

    @field_validator("units")
    @classmethod
    def _units(cls, v):
        if v > MAX_QUEUE:
            raise ValueError(f"a ring of {v} units: at most {MAX_QUEUE}")
        return v


class Match(Strict):
    """Reserved for configuration importers: classification by something other than DSCP. Recorded in the
    results' provenance; it changes no number (each class declares its own traffic)."""

    precedence: list[int] = Field(default_factory=list, description="IP precedence values 0-7")
    exp: list[int] = Field(default_factory=list, description="MPLS EXP / traffic-class values 0-7")
    cos: list[int] = Field(default_factory=list, description="802.1p CoS values 0-7")
    qos_group: list[int] = Field(default_factory=list, description="qos-group values set by an ingress policy")

    @model_validator(mode="after")
    def _ranges(self):
        for name, top in (("precedence", 7), ("exp", 7), ("cos", 7), ("qos_group", 1023)):
            for x in getattr(self, name):
                if not 0 <= x <= top:
                    raise ValueError(f"{name} value {x} is outside 0-{top}")
        return self


class TrafficClass(Strict):
    """One class of the port, in the order the policy lists it: either a strict-priority level or a weighted
    share, its queue, its drop policy, its meters, and what is offered to it."""

    name: str = Field(description="class name; heads its metrics (voice.delay.p99); dots, dashes, colons and "
                      "the other characters routers allow are accepted")
    dscp: list[str | int] = Field(default_factory=list, description="the DSCPs the class matches: names (EF, "
                                  "AF41, CS5, DF) or numbers 0-63, any number of them")
    precedences: list[str | int] | None = Field(default=None, description="its drop precedences: at most three "
                                                "DSCPs, green first, that droppers, markers, remarks and 'mix' "
                                                "tell apart (default: 'dscp' when it lists at most three; else "
                                                "the AF codepoints it matches of its first AF class, or its first "
                                                "DSCP)")
    match: Match | None = Field(default=None, description="reserved: classification by precedence, EXP, CoS or "
                                "qos-group (no effect on the numbers)")
    priority: PositiveInt | None = Field(default=None, description="strict-priority level (1 = served first)")
    police: Police | None = None
    bandwidth: Annotated[str, QuantityKind("probability")] | Rate | None = Field(
        default=None, description="weighted share: a rate, 'N %' of the link, or 'remaining N %' (of the link "
                                  "less the priority classes' rates); one form per port")
    queue_limit: PositiveInt = Field(default=64, description="packets the class queue holds (without a tx-ring "
                                     "the packet on the wire included)")
    dropper: Dropper = Field(default_factory=Dropper)
    marker: Marker | None = None
    traffic: Traffic | None = Field(default=None, description="the traffic offered to the class (none: idle)")

    @field_validator("queue_limit")
    @classmethod
    def _limit(cls, v):
        if v > MAX_QUEUE:
            raise ValueError(f"a queue of {v} packets: at most {MAX_QUEUE} (at a stable load that is unbounded in "
                             "effect)")
        return v

    @field_validator("dscp", "precedences", mode="before")
    @classmethod
    def _dscp(cls, v, info):
        if v is None and info.field_name == "precedences":
            return v
        if not isinstance(v, list):
            raise ValueError(f"{info.field_name} is a list of DSCP names or numbers")
        return [dscp.canonical(x) for x in v]


class Scheduler(Strict):
    """The weighted scheduler below the priority levels: deficit round robin (Shreedhar & Varghese 1996) with
    quanta in proportion to the classes' bandwidths; the class with the smallest bandwidth gets ``quantum``."""

    kind: Literal["drr"] = "drr"
    quantum: Size = Field(default=1500.0, description="DRR quantum of the class with the smallest bandwidth, "
                          "bytes (the others in proportion)")

    @field_validator("quantum")
    @classmethod
    def _q(cls, v):
        if not (v >= 40 and math.isfinite(v)):
            raise ValueError("the quantum must be at least 40 B (the smallest IP packet): a smaller one only makes "
                             "DRR turn more often")
        return v


class Shaper(Strict):
    """A parent shaper (``shape average`` over a child policy, a root ``tbf`` or htb class, a Junos
    ``shaping-rate``) as the port's server: the scheduler is served at ``link.rate`` -- the shaper's rate -- by a
    rate-latency server of latency ``Tc = Bc / rate`` (Cisco's interval shaper sends Bc per interval Tc). The
    bounds take it as a port at the shaper's rate holding ``bc`` more bytes of work
    (:mod:`qosbound.analytic.port`, the shaper); the simulator as a token bucket of depth ``bc`` refilled at the
    rate, gating the scheduler's output towards the ring, which drains at ``interface_rate``
    (:mod:`qosbound.validation.port_kernels`); the chains do not model it and refuse."""

    rate: Rate | None = Field(default=None, description="shaped rate, bit/s: the port's link.rate (the child's "
                              "percentages are of it); default link.rate")
    bc: Size | None = Field(default=None, description="committed burst per interval, bytes (default rate x tc)")
    tc: Time | None = Field(default=None, description="shaping interval, s (= bc / rate)")
    interface_rate: Rate | None = Field(default=None, description="the interface's line rate, bit/s, at which the "
                                        "ring drains (at least link.rate; default link.rate); the simulator's only")


class NotModelled(Strict):
    """Reserved: a construct of the source configuration the model leaves out."""

    item: str = Field(description="the construct, as the configuration writes it")
    where: str = Field(default="", description="file:line")
    effect: str = Field(default="", description="its effect on what is proved")


_PERCENT = re.compile(r"^\s*(remaining\s+)?([0-9.eE+-]+)\s*%\s*$", re.I)


def parse_bandwidth(v) -> tuple[str, float]:
    """``'20 %'`` -> ('percent', 0.2); ``'remaining 20 %'`` -> ('remaining', 0.2); a rate -> ('rate', bit/s)."""
    if isinstance(v, str):
        m = _PERCENT.match(v)
        if m:
            try:
                x = float(m.group(2)) / 100.0
            except ValueError:
                raise ScenarioError(f"cannot read {v!r} as a percentage") from None
            if not (0 < x <= 1):
                raise ScenarioError(f"{v!r}: a percentage must lie in (0, 100]")
            return ("remaining" if m.group(1) else "percent"), x
        if v.strip().lower().startswith("remaining"):
            raise ScenarioError(f"{v!r}: write 'remaining N %'")
    x = parse_quantity(v, "rate")
    if not x > 0:
        raise ScenarioError(f"a bandwidth must be positive, got {v!r}")
    return "rate", x



def precedences(c: TrafficClass) -> list[str]:
    """The class's drop precedences, green first: ``precedences`` as given; else its DSCPs when it matches at
    most three; else the AF codepoints it matches of the first AF class among its DSCPs (AFx1, AFx2, AFx3, in
    drop-precedence order), or, with none, its first DSCP; DF for a class matching none."""
    if c.precedences is not None:
        return list(c.precedences)
    if len(c.dscp) <= MAX_PRECEDENCES:
        return list(c.dscp) or ["DF"]
    first_af = next((d for d in c.dscp if dscp.af_drop_precedence(d) is not None), None)
    if first_af is None:
        return [c.dscp[0]]
    return sorted((d for d in c.dscp if d[:3] == first_af[:3] and dscp.af_drop_precedence(d) is not None),
                  key=dscp.af_drop_precedence)


def priority_reservation(c: TrafficClass) -> float:
    """The rate a priority class reserves (bit/s): its policer's committed rate, or, unpoliced, its offered rate."""
    if c.police is not None:
        return float(c.police.cir)
    return offered_rate(c.traffic)



def always_congested(saturated) -> bool:
    """Whether the port is congested, in a conditional policer's sense, at every arrival after time 0, given
    whether each of its classes is saturated: where one is. Proof (the simulator's rules, docs/port.md
    "Semantics" 2, 4, 7, 8): a saturated class always has a packet waiting, so the scheduler is never without
    one to hand the ring; it refills the ring at every departure while fewer than ``units`` units are occupied
    (without a ring, the link starts the next packet at once), and departures at an instant come before
    arrivals at it -- so at every arrival after the first fill the ring is full (the link busy); on a shaped
    port the packet is either in a full ring or held back by the shaper, which counts as congested too. Only
    arrivals at time 0, before the first fill, may find the port idle."""
    return any(saturated)


def long_run_rate(c: TrafficClass, congested: bool = False) -> float:
    """The long-run rate a class can pass its policer with, bit/s: its offered rate, capped by a policer whose
    dropped colours bound what passes -- green alone takes CIR tokens, green and yellow together PIR tokens
    (trTCM) or CIR tokens (srTCM: the excess bucket fills only from the committed one). A conditional policer
    caps it only on a port ``congested`` at every arrival (a saturated class on it:
    :func:`always_congested`)."""
    r = offered_rate(c.traffic)
    p = c.police
    if p is None or (p.conditional and not congested):
        return r
    conform, exceed, violate = (a.action == "drop" for a in p.actions())
    if p.kind == "two-colour":
        return min(r, p.cir) if exceed else r
    if p.kind == "srtcm":
        return min(r, p.cir) if violate else r
    if violate:
        return min(r, p.cir if exceed else p.pir)
    return r
