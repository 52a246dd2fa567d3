"""The port scenario schema (``system: port``): a link, an optional tx-ring, and an ordered list of classes.

Field names are the interface (configuration importers and networks of ports write them): extend, do not
rename. The meaning of every field, and the semantics the three methods share, are in
:mod:`qosbound.systems.port` and ``docs/port.md``; this module only reads and checks the file. Every refusal
is a :class:`~qosbound.errors.ScenarioError` naming the field by its dotted path, a class addressed by its
``name`` (``classes.voice.police.cir``), the form ``admit``, ``sweep`` and ``tune`` use.

Reserved for configuration importers (accepted, checked for shape, carried into the results' provenance,
without effect on any number):

* ``provenance`` -- field path -> ``file:line`` of the configuration line it came from;
* ``assumed`` -- field path -> why a platform default was assumed (e.g. ``"IOS-XE default WRED thresholds"``);
* ``not_modelled`` -- constructs of the configuration the model leaves out, each with its effect;
* ``classes[].match`` -- classification by something other than DSCP (IP precedence, MPLS EXP, CoS,
  qos-group). Each class declares its own traffic, so classification changes no number.

A class's ``dscp`` lists every DSCP it matches (any number: a class matching IP precedence 5 matches eight);
its ``precedences`` -- at most three of them, the drop precedences the droppers and markers tell apart, green
first -- default to the ``dscp`` list itself when that has at most three entries (:func:`precedences`).

Class names are what routers allow (letters, digits and most punctuation: ``VOICE.RTP``, ``AF4:video``,
``q/1``); a name heads its metrics (``VOICE.RTP.delay.p99``) and addresses its parameters
(``classes.VOICE.RTP.police.cir``), both read against the port's own class names (the longest that fits), or
quoted (``classes."VOICE.RTP".police.cir``) -- :func:`qosbound.scenario.path_parts`.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from qosbound.errors import ScenarioError
from qosbound.scenario import PacketSize, PositiveInt, Probability, QuantityKind, Rate, ScenarioBase, Size, Time
from qosbound.systems.af.schema import ClosedFormOptions as AFClosedFormOptions
from qosbound.systems.af.schema import Marker as AFMarker
from qosbound.systems.af.schema import Threshold, check_marker, check_threshold
from qosbound.systems.base import (MAX_BURST, MAX_RATE, MAX_TIME, Link, MethodsBase, PacketSimOptions, Strict,
                                   check_range)
from qosbound import dscp
from qosbound.systems.pq_txq.schema import BESize, EFStream
from qosbound.systems.pq_txq.schema import ModelOptions as PQModelOptions
from qosbound.systems.pq_txq.schema import TxQ
from qosbound.units import format_exact, parse_quantity

__all__ = ["PortLink", "Ring", "Action", "Police", "Marker", "Dropper", "Traffic", "Match", "TrafficClass",
           "Scheduler", "Shaper", "NotModelled", "Metrics", "ClosedFormOptions", "ModelOptions", "SimOptions",
           "Methods", "Scenario",
           "DEFAULT_CLASS", "CLASS_NAME", "MAX_PRECEDENCES", "MAX_QUEUE", "MAX_CLASSES", "MAX_STREAMS",
           "parse_bandwidth", "parse_action", "precedences",
           "check_port", "priority_reservation", "offered_rate", "long_run_rate", "split_metric",
           "check_slo_classes"]

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


def parse_action(v) -> tuple[str, str | None]:
    """A policer action: ``drop``, ``transmit``, or a remark ``set-dscp AF32`` / ``{set-dscp: AF32}`` (the packet
    is transmitted with the new DSCP, Cisco's ``set-dscp-transmit``). Returns (action, canonical DSCP or None)."""
    if isinstance(v, dict):
        if len(v) != 1 or next(iter(v)) not in ("set-dscp", "set-dscp-transmit"):
            raise ValueError("a remark action is {set-dscp: DSCP}")
        return "remark", dscp.canonical(next(iter(v.values())))
    if isinstance(v, str):
        text = v.strip()
        low = text.lower()
        if low in ("drop", "transmit"):
            return low, None
        for head in ("set-dscp-transmit", "set-dscp"):
            if low.startswith(head + " "):
                return "remark", dscp.canonical(text[len(head):].strip())
    raise ValueError(f"{v!r} is not a policer action: drop, transmit, or set-dscp DSCP")


class Action(Strict):
    """One policer action after validation."""

    action: Literal["drop", "transmit", "remark"]
    dscp: str | None = None


def _action(v):
    if isinstance(v, Action):
        return v
    a, d = parse_action(v)
    return Action(action=a, dscp=d)


class Police(Strict):
    """A policer on the class's arrivals, before its queue. One bucket (``cir``, ``cbs``): conform or exceed;
    ``ebs`` adds srTCM's excess bucket (RFC 2697) and ``pir``/``pbs`` make it trTCM (RFC 2698): conform,
    exceed or violate. Each colour's action is ``drop``, ``transmit`` or ``set-dscp DSCP`` (a precedence of the
    class)."""

    cir: Rate = Field(description="committed information rate, bit/s")
    cbs: Size = Field(description="committed burst, bytes")
    ebs: Size | None = Field(default=None, description="srTCM excess burst, bytes (single rate, three colours)")
    pir: Rate | None = Field(default=None, description="trTCM peak rate, bit/s (two rates, three colours)")
    pbs: Size | None = Field(default=None, description="trTCM peak burst, bytes")
    conditional: bool = Field(default=False, description="Cisco's priority policer: meters only under congestion "
                              "(the tx-ring full, or without a ring the link busy, at the arrival); default: "
                              "always, the choice the delay bounds can use")
    conform: Action = Field(default_factory=lambda: Action(action="transmit"), description="drop, transmit or "
                            "set-dscp DSCP")
    exceed: Action = Field(default_factory=lambda: Action(action="drop"), description="drop, transmit or "
                           "set-dscp DSCP")
    violate: Action | None = Field(default=None, description="drop, transmit or set-dscp DSCP (default: the "
                                   "exceed action)")

    @field_validator("conform", "exceed", "violate", mode="before")
    @classmethod
    def _act(cls, v):
        return None if v is None else _action(v)

    @property
    def kind(self) -> str:
        """The meter: ``trtcm``, ``srtcm`` or ``two-colour``."""
        return "trtcm" if self.pir is not None else "srtcm" if self.ebs is not None else "two-colour"

    def actions(self) -> tuple[Action, Action, Action]:
        """(conform, exceed, violate) actions; two-colour meters never violate."""
        return self.conform, self.exceed, self.violate or self.exceed


class Marker(AFMarker):
    """A marker on the class's arrivals (srTCM / trTCM / two-colour, colour-blind or colour-aware), as ``af``
    has it: green, yellow and red become the class's first, second and third precedence (a two-colour marker's
    red the last). Colour-aware, the pre-colour is the precedence the traffic arrives with (its ``mix``)."""


class Dropper(Strict):
    """The class queue's drop policy: ``tail`` (drop at the queue limit only) or a RED-family dropper with
    thresholds per precedence of the class (as ``af`` has it: ``wred`` one average, ``rio`` and ``nred``
    averages over precedences, ``gentle`` RED). Thresholds may also be given for DSCPs of the class that are
    not among its precedences: no packet reaches the queue with those, so they change nothing. Thresholds
    above the queue limit are accepted, as IOS accepts them: the average never exceeds the packets the queue
    holds, so the queue limit drops first -- a ``max_th`` above it means the drop probability never reaches
    ``1 / P_d`` before the queue is full, a ``min_th`` at or above it means RED never drops (tail drop only)."""

    mode: Literal["tail", "wred", "rio", "nred"] = "tail"
    gentle: bool = False
    alpha: float | None = Field(default=None, description="EWMA weight; default 2^-exponent")
    exponent: PositiveInt = Field(default=9, description="alpha = 2^-exponent (Cisco's default 9)")
    thresholds: dict[str, Threshold] = Field(default_factory=dict, description="per precedence (DSCP) of the "
                                             "class: min_th, max_th (packets; above the queue limit the limit "
                                             "drops first), P_d (mark-probability denominator)")

    @property
    def weight(self) -> float:
        return self.alpha if self.alpha is not None else 2.0 ** -self.exponent


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
    (:mod:`qosbound.analytic.port`, the shaper); the simulator and the chains do not model it and refuse."""

    rate: Rate | None = Field(default=None, description="shaped rate, bit/s: the port's link.rate (the child's "
                              "percentages are of it); default link.rate")
    bc: Size | None = Field(default=None, description="committed burst per interval, bytes (default rate x tc)")
    tc: Time | None = Field(default=None, description="shaping interval, s (= bc / rate)")


class NotModelled(Strict):
    """Reserved: a construct of the source configuration the model leaves out."""

    item: str = Field(description="the construct, as the configuration writes it")
    where: str = Field(default="", description="file:line")
    effect: str = Field(default="", description="its effect on what is proved")


class Metrics(Strict):
    ccdf_at: list[Time] = Field(default_factory=list, description="delay CCDF points reported per class")
    quantiles: list[float] = Field(default_factory=lambda: [0.99, 0.999], description="delay quantiles reported "
                                   "per class")

    @field_validator("ccdf_at")
    @classmethod
    def _pos(cls, v):
        if any(not d > 0 for d in v):
            raise ValueError("CCDF points must be positive times")
        return v

    @field_validator("quantiles")
    @classmethod
    def _q(cls, v):
        for q in v:
            if not isinstance(q, (int, float)) or not 0 < q < 1:
                raise ValueError(f"quantile {q!r} is not in (0, 1)")
        return v


class ModelOptions(PQModelOptions):
    """Model checking per class: the top priority level on pq_txq's chains, each weighted class's dropper
    chain on af's (``average`` as af's)."""

    average: Literal["instantaneous", "ewma"] = "instantaneous"


class SimOptions(PacketSimOptions):
    """Independent replications of ``packets`` packets entering the port (arrivals of every class, and the
    packets saturated classes hand the scheduler); ``warmup`` is a fraction of them."""

    packets: PositiveInt = 2_000_000


class ClosedFormOptions(AFClosedFormOptions):
    """Closed forms: ``approximation`` is how the weighted classes' RED-family queues treat the EWMA average
    (as ``af``'s)."""


class Methods(MethodsBase):
    closed_form: ClosedFormOptions = Field(default_factory=ClosedFormOptions, alias="closed-form")
    model_checked: ModelOptions = Field(default_factory=ModelOptions, alias="model-checked")
    simulated: SimOptions = Field(default_factory=SimOptions)


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


class Scenario(ScenarioBase):
    system: Literal["port"]
    link: PortLink
    txq: Ring | None = Field(default=None, description="the tx-ring (absent: none; the scheduler hands the wire "
                             "one packet at a time)")
    classes: list[TrafficClass] = Field(description="the classes, in the policy's order; class-default is added "
                                        "when not declared")
    scheduler: Scheduler = Field(default_factory=Scheduler)
    shaper: Shaper | None = Field(default=None, description="a parent shaper serving the classes at link.rate "
                                  "with a burst bc (closed forms only)")
    provenance: dict[str, str] = Field(default_factory=dict, description="reserved: field path -> file:line")
    assumed: dict[str, str] = Field(default_factory=dict, description="reserved: field path -> the platform "
                                    "default assumed there")
    not_modelled: list[NotModelled] = Field(default_factory=list, description="reserved: constructs left out")
    metrics: Metrics = Field(default_factory=Metrics)
    methods: Methods = Field(default_factory=Methods)

    @model_validator(mode="after")
    def _check(self):
        check_port(self)
        check_slo_classes(self)
        return self


#: What follows the class name in a port metric (the class name itself may hold dots: ``VOICE.RTP.delay.p99``).
_SUFFIX = re.compile(r"\.(?P<q>delay\.(?P<stat>mean|max|worst_case_mean|cobham_mean|p[0-9.eE+-]+|ccdf@.+)"
                     r"|loss(?:\.police|\.queue)?|drop\.[^.]+|throughput|rate|aggregation_degree)$")


def split_metric(metric: str, names=None) -> tuple[str, str]:
    """(class name, quantity) of a port metric: ``'VOICE.RTP.delay.p99'`` -> ``('VOICE.RTP', 'delay.p99')``.
    With the port's class ``names``, the class is the longest of them the metric starts with; without, what
    precedes the longest quantity the grammar knows. ScenarioError for a metric that fits neither."""
    if names is not None:
        for n in sorted(names, key=len, reverse=True):
            if metric.startswith(n + ".") and _SUFFIX.fullmatch("." + metric[len(n) + 1:]):
                return n, metric[len(n) + 1:]
    else:
        for m in _SUFFIX.finditer(metric):  # the first match leaves the longest quantity
            if m.start() > 0:
                return metric[:m.start()], m.group("q")
    raise ScenarioError(f"unknown metric '{metric}' for a port scenario; known per class X: X.delay.mean, "
                        "X.delay.pNN, X.delay.ccdf@<time>, X.delay.max, X.loss, X.loss.police, X.loss.queue, "
                        "X.drop.<DSCP>, X.throughput, X.rate", field="metric")


def check_slo_classes(scn) -> None:
    """Every SLO names a class of the port (its name read with dots and all: :func:`split_metric`); a
    ScenarioError naming the SLO otherwise."""
    names = [c.name for c in scn.classes] + ["class-default"]
    for i, slo in enumerate(scn.slos):
        try:
            split_metric(slo.metric, names)
        except ScenarioError:
            try:
                cls, _ = split_metric(slo.metric)
            except ScenarioError as e:
                raise ScenarioError(e.problem, field=f"slos[{i}].metric") from None
            raise ScenarioError(f"the port has no class '{cls}' (it has {', '.join(names[:-1])})",
                                field=f"slos[{i}].metric") from None


def _at(c: TrafficClass, field: str = "") -> str:
    return f"classes.{c.name}" + (f".{field}" if field else "")


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


def check_port(scn: Scenario) -> None:
    """Every check across fields; the first failure raises a ScenarioError naming the field."""
    if not scn.classes:
        raise ScenarioError("declare at least one class", field="classes")
    if len(scn.classes) > MAX_CLASSES:
        raise ScenarioError(f"{len(scn.classes)} classes: at most {MAX_CLASSES}", field="classes")
    seen: dict[str, str] = {}
    names = set()
    for c in scn.classes:
        if not CLASS_NAME.match(c.name):
            raise ScenarioError(f"class name {c.name!r}: at most 100 letters, digits and punctuation, without "
                                "spaces, quotes, brackets, ',', ';', '=', '|', a leading or trailing '.' or '..' "
                                "(it heads metric names such as voice.delay.p99)", field="classes")
        if c.name in names:
            raise ScenarioError(f"two classes are named {c.name!r}", field="classes")
        names.add(c.name)
        for d in c.dscp:
            if d in seen and seen[d] != c.name:
                raise ScenarioError(f"DSCP {d} is matched by classes {seen[d]} and {c.name}: a packet must belong "
                                    "to one class", field=_at(c, "dscp"))
            seen[d] = c.name
    for c in scn.classes:
        if not c.dscp and c.precedences:  # a class matching no DSCP (class-default) takes the ones left
            taken = [d for d in c.precedences if d in seen]
            if taken:
                raise ScenarioError(f"precedence {taken[0]} is a DSCP class {seen[taken[0]]} matches: a packet must "
                                    "belong to one class", field=_at(c, "precedences"))
        _check_class(scn, c)
    forms = {parse_bandwidth(c.bandwidth)[0] for c in scn.classes if c.bandwidth is not None}
    if len(forms) > 1:
        raise ScenarioError(f"bandwidths mix the forms {', '.join(sorted(forms))}: a port uses one form (rates, "
                            "'N %', or 'remaining N %'), as routers require", field="classes")
    _check_ranges(scn)
    _check_shaper(scn)
    levels = sorted({c.priority for c in scn.classes if c.priority is not None})
    _check_rates(scn, forms.pop() if forms else None, levels)
    _check_times(scn)


def shaper_burst(scn: Scenario) -> float:
    """The parent shaper's burst Bc, bytes: ``bc``, else ``rate x tc``; 0 without a shaper."""
    sh = scn.shaper
    if sh is None:
        return 0.0
    if sh.bc is not None:
        return float(sh.bc)
    return float(scn.link.rate) * float(sh.tc) / 8.0


def _check_shaper(scn: Scenario) -> None:
    """The shaper's rate is the port's (``link.rate``: the child policy's percentages are of it), its burst is
    given by ``bc`` or ``tc``, and the two agree when both are (within 1 %, as configurations round them)."""
    sh = scn.shaper
    if sh is None:
        return
    C = float(scn.link.rate)
    if sh.rate is not None and abs(float(sh.rate) - C) > 1e-9 * C:
        raise ScenarioError(f"the shaper's rate ({format_exact(float(sh.rate), 'rate')}) differs from link.rate "
                            f"({format_exact(C, 'rate')}): link.rate is the rate the shaper serves the classes at (the "
                            "interface's own rate does not enter the port)", field="shaper.rate")
    if sh.bc is None and sh.tc is None:
        raise ScenarioError("give the shaper's burst: bc (bytes per interval) or tc (the interval)", field="shaper")
    if sh.bc is not None:
        check_range(sh.bc, 1.0, MAX_BURST, "shaper burst", "B", "shaper.bc")
        if sh.tc is not None and abs(8.0 * float(sh.bc) / C - float(sh.tc)) > 0.01 * float(sh.tc):
            raise ScenarioError(f"bc = {sh.bc:g} B at {format_exact(C, 'rate')} is an interval of "
                                f"{8.0 * float(sh.bc) / C:.6g} s, not tc = {sh.tc:g} s", field="shaper.tc")
    else:
        check_range(sh.tc, None, MAX_TIME, "shaping interval", "s", "shaper.tc")


#: The smallest packet a port takes, bytes (an exponential size law is drawn at least this large).
MIN_PACKET = 1.0


def _check_ranges(scn: Scenario) -> None:
    """Every number in its physical range (qosbound.systems.base): rates up to 1 Pbit/s, bursts up to 1e12 B,
    times up to 1e6 s, packets and ring units from 1 B to the largest IP packet."""
    check_range(scn.link.delay, None, MAX_TIME, "propagation delay", "s", "link.delay")
    if scn.txq is not None and scn.txq.unit_size != "packet":
        check_range(scn.txq.unit_size, MIN_PACKET, 65535.0, "unit size", "B", "txq.unit_size")
    check_range(scn.scheduler.quantum, None, MAX_BURST, "quantum", "B", "scheduler.quantum")
    for c in scn.classes:
        at = _at(c)
        p = c.police
        if p is not None:
            for name in ("cir", "pir"):
                check_range(getattr(p, name), 0.0, MAX_RATE, name.upper(), "bit/s", f"{at}.police.{name}")
            for name in ("cbs", "pbs", "ebs"):
                check_range(getattr(p, name), None, MAX_BURST, name.upper(), "B", f"{at}.police.{name}")
        if c.marker is not None:
            for name in ("cir", "pir"):
                check_range(getattr(c.marker, name), 0.0, MAX_RATE, name.upper(), "bit/s", f"{at}.marker.{name}")
            for name in ("cbs", "pbs", "ebs"):
                check_range(getattr(c.marker, name), None, MAX_BURST, name.upper(), "B", f"{at}.marker.{name}")
        if c.bandwidth is not None and not isinstance(c.bandwidth, str):
            check_range(float(c.bandwidth), 0.0, MAX_RATE, "bandwidth", "bit/s", f"{at}.bandwidth")
        t = c.traffic
        if t is None:
            continue
        check_range(t.rate, 0.0, MAX_RATE, "rate", "bit/s", f"{at}.traffic.rate")
        for name in ("on", "off"):
            check_range(getattr(t, name), None, MAX_TIME, f"{name} period", "s", f"{at}.traffic.{name}")
        if t.phase != "random":
            check_range(t.phase, None, MAX_TIME, "phase", "s", f"{at}.traffic.phase")
        check_range(t.size, MIN_PACKET, 65535.0, "packet size", "B", f"{at}.traffic.size")
        for k, sz in enumerate(t.sizes if isinstance(t.sizes, list) else []):
            check_range(sz.size, MIN_PACKET, 65535.0, "packet size", "B", f"{at}.traffic.sizes.{k}.size")
        streams = [("call", t.call)] if t.call is not None else \
            [(f"streams.{k}", x) for k, x in enumerate(t.streams or [])]
        for where, x in streams:
            check_range(x.rate, 0.0, MAX_RATE, "rate", "bit/s", f"{at}.traffic.{where}.rate")
            check_range(x.size, MIN_PACKET, 65535.0, "packet size", "B", f"{at}.traffic.{where}.size")
            if x.phase != "random":
                check_range(x.phase, None, MAX_TIME, "phase", "s", f"{at}.traffic.{where}.phase")


def _check_times(scn: Scenario) -> None:
    """Streams within the simulator's arrays, and transmission times that are normal floating-point numbers
    (a 1e-300 bit/s link or a 1e300 bit/s one would over- or underflow every formula)."""
    streams = 0
    for c in scn.classes:
        t = c.traffic
        if t is not None:
            streams += t.calls if t.calls is not None else len(t.streams or [1])
    if streams > MAX_STREAMS:
        raise ScenarioError(f"{streams} streams (calls count one each): at most {MAX_STREAMS}", field="classes")
    C = scn.link.rate
    for L in (1.0, 65535.0):
        x = 8.0 * L / C
        if not (math.isfinite(x) and 1e-15 <= x <= 1e6):
            raise ScenarioError(f"a line rate of {C:g} bit/s gives a {L:g}-byte packet a transmission time of {x:g} s, "
                                "outside the range the methods evaluate", field="link.rate")


def _check_class(scn: Scenario, c: TrafficClass) -> None:
    default = c.name == DEFAULT_CLASS
    if c.priority is not None and c.bandwidth is not None:
        raise ScenarioError("give either 'priority' (a strict-priority level) or 'bandwidth' (a weighted share), "
                            "not both", field=_at(c, "bandwidth"))
    if c.priority is None and c.bandwidth is None and not default:
        raise ScenarioError("give 'priority: N' (a strict-priority level) or 'bandwidth' (a rate, 'N %' or "
                            "'remaining N %')", field=_at(c))
    if default and c.priority is not None:
        raise ScenarioError("class-default is served by the weighted scheduler: give it a bandwidth (or none: "
                            "the unreserved rest)", field=_at(c, "priority"))
    if c.bandwidth is not None:
        try:
            parse_bandwidth(c.bandwidth)
        except ScenarioError as e:
            raise ScenarioError(e.problem, field=_at(c, "bandwidth")) from None
    for what, codes in (("dscp", c.dscp), ("precedences", c.precedences or [])):
        twice = [d for k, d in enumerate(codes) if d in codes[:k]]
        if twice:
            raise ScenarioError(f"DSCP {twice[0]} is listed twice", field=_at(c, what))
    prec = precedences(c)
    if not prec or len(prec) > MAX_PRECEDENCES:
        raise ScenarioError(f"{len(prec)} precedences: a class tells apart one to {MAX_PRECEDENCES} drop "
                            "precedences (the droppers' and markers' colours); its 'dscp' may list any number of "
                            "DSCPs", field=_at(c, "precedences"))
    if c.dscp:
        strays = [d for d in prec if d not in c.dscp]
        if strays:
            raise ScenarioError(f"precedence {strays[0]} is not one of the DSCPs the class matches "
                                f"({', '.join(c.dscp)})", field=_at(c, "precedences"))
    t = c.traffic
    if t is not None:
        if t.is_saturated and c.priority is not None:
            raise ScenarioError("a saturated priority class would starve every class below it: give it a rate",
                                field=_at(c, "traffic.saturated"))
        if t.mix is not None:
            if len(t.mix) != len(prec) or abs(sum(t.mix) - 1.0) > 1e-9:
                raise ScenarioError(f"mix gives the fractions of the class's {len(prec)} precedence(s) "
                                    f"({', '.join(prec)}): {len(prec)} numbers summing to 1",
                                    field=_at(c, "traffic.mix"))
    d = c.dropper
    if d.alpha is not None and not (0 < d.alpha <= 1):
        raise ScenarioError(f"EWMA weight alpha = {d.alpha:g} is not in (0, 1]", field=_at(c, "dropper.alpha"))
    if d.mode == "tail":
        if d.thresholds:
            raise ScenarioError("thresholds belong to a RED-family dropper (mode: wred, rio or nred)",
                                field=_at(c, "dropper.thresholds"))
    else:
        keys = {}
        for k, th in d.thresholds.items():
            try:
                name = dscp.canonical(k)
            except ValueError as e:
                raise ScenarioError(str(e), field=_at(c, f"dropper.thresholds.{k}")) from None
            if name not in prec and name not in c.dscp:
                raise ScenarioError(f"{k} is not one of the class's DSCPs ({', '.join(c.dscp or prec)})",
                                    field=_at(c, f"dropper.thresholds.{k}"))
            check_threshold(th, _at(c, f"dropper.thresholds.{k}"))
            keys[name] = th
        missing = [p for p in prec if p not in keys]
        if missing:
            raise ScenarioError(f"give thresholds for every precedence of the class: {', '.join(missing)} missing",
                                field=_at(c, "dropper.thresholds"))
    if c.marker is not None:
        m = c.marker
        check_marker(m, _at(c, "marker"))
        if m.precolour != [1.0, 0.0, 0.0]:
            raise ScenarioError("a port's colour-aware marker takes the pre-colour from the traffic's 'mix'",
                                field=_at(c, "marker.precolour"))
        need = 2 if m.kind == "two-colour" else 3
        if len(prec) < need:
            raise ScenarioError(f"a {m.kind} marker colours packets with {need} precedences of the class (green, "
                                f"{'yellow, ' if need == 3 else ''}red, in the order of its precedences); the class "
                                f"has {len(prec)}", field=_at(c, "marker"))
    if c.police is not None:
        _check_police(c)


def _check_police(c: TrafficClass) -> None:
    p = c.police
    at = _at(c, "police")
    if not p.cir > 0:
        raise ScenarioError("CIR must be positive", field=f"{at}.cir")
    if not p.cbs > 0:
        raise ScenarioError("CBS must be positive", field=f"{at}.cbs")
    if (p.pir is None) != (p.pbs is None):
        raise ScenarioError("a two-rate policer needs both pir and pbs",
                            field=f"{at}.{'pbs' if p.pbs is None else 'pir'}")
    if p.pir is not None and p.ebs is not None:
        raise ScenarioError("give ebs (single rate, srTCM) or pir/pbs (two rates, trTCM), not both", field=f"{at}.ebs")
    if p.pir is not None and p.pir < p.cir:
        raise ScenarioError(f"PIR must be at least CIR (RFC 2698): PIR = {p.pir:g} bit/s < CIR = {p.cir:g} bit/s",
                            field=f"{at}.pir")
    for what in ("pbs", "ebs"):
        v = getattr(p, what)
        if v is not None and not v > 0:
            raise ScenarioError(f"{what.upper()} must be positive", field=f"{at}.{what}")
    if p.kind == "two-colour" and p.violate is not None:
        raise ScenarioError("a single-rate two-colour policer never violates: give ebs or pir/pbs for a "
                            "violate action", field=f"{at}.violate")
    prec = precedences(c)
    for name, a in zip(("conform", "exceed", "violate"), p.actions()):
        if a.action == "remark" and a.dscp not in prec:
            raise ScenarioError(f"set-dscp {a.dscp}: the packet stays in this class, so its new DSCP must be one of "
                                f"the class's precedences ({', '.join(prec)})", field=f"{at}.{name}")


def priority_reservation(c: TrafficClass) -> float:
    """The rate a priority class reserves (bit/s): its policer's committed rate, or, unpoliced, its offered rate."""
    if c.police is not None:
        return float(c.police.cir)
    return offered_rate(c.traffic)


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


def _check_rates(scn: Scenario, form: str | None, levels: list[int]) -> None:
    C = scn.link.rate
    prio = [c for c in scn.classes if c.priority is not None]
    reserved = sum(priority_reservation(c) for c in prio)
    shares = [(c, parse_bandwidth(c.bandwidth)) for c in scn.classes if c.bandwidth is not None]
    if form in ("rate", "percent"):
        total = reserved + sum(v * (C if f == "percent" else 1.0) for _, (f, v) in shares)
        if total > C * (1 + 1e-9):
            raise ScenarioError(f"the priority classes' rates ({reserved:.6g} bit/s) and the bandwidths "
                                f"({total - reserved:.6g} bit/s) add up to {total / C:.4g} of the link: at most 100 %",
                                field="classes")
    elif form == "remaining":
        total = sum(v for _, (_, v) in shares)
        if total > 1 + 1e-9:
            raise ScenarioError(f"the remaining percentages add up to {100 * total:.6g} %: at most 100 %",
                                field="classes")
    if reserved >= C and any(c.bandwidth is not None or (c.traffic is not None and c.priority is None)
                             for c in scn.classes):
        raise ScenarioError(f"the priority classes reserve {reserved:.6g} bit/s, the whole {C:.6g} bit/s link: "
                            "nothing is left for the weighted classes", field="classes")
    for lv in levels:
        # the levels above and this one must leave the link a positive rate in the long run: their long-term
        # rates (policed or offered) stay below the link
        upto = [c for c in prio if c.priority <= lv]
        long_run = sum(long_run_rate(c) for c in upto)
        if long_run >= C:
            where = [c for c in upto if c.priority == lv][0]
            raise ScenarioError(f"priority levels 1..{lv} take {long_run:.6g} bit/s in the long run, at least the "
                                f"link's {C:.6g} bit/s: the level-{lv} queue is unstable", field=_at(where, "traffic"))


def long_run_rate(c: TrafficClass) -> float:
    """The long-run rate a class can pass its policer with, bit/s: its offered rate, capped by a policer (not
    conditional) whose dropped colours bound what passes -- green alone takes CIR tokens, green and yellow
    together PIR tokens (trTCM) or CIR tokens (srTCM: the excess bucket fills only from the committed one)."""
    r = offered_rate(c.traffic)
    p = c.police
    if p is None or p.conditional:
        return r
    conform, exceed, violate = (a.action == "drop" for a in p.actions())
    if p.kind == "two-colour":
        return min(r, p.cir) if exceed else r
    if p.kind == "srtcm":
        return min(r, p.cir) if violate else r
    if violate:
        return min(r, p.cir if exceed else p.pir)
    return r
