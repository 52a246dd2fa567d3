"""The MQC configuration as written: class-maps, policy-maps and interfaces of Cisco IOS, IOS XE and IOS XR, each
command with its :class:`~qosbound.configs.source.Source`. Values are as the configuration states them (units
resolved to SI: bit/s, bytes, seconds); their queueing meaning is given by :mod:`qosbound.configs.ios_semantics`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qosbound.configs.port import Note
from qosbound.configs.source import Source

__all__ = ["Match", "ClassMap", "Rate", "Burst", "Action", "PoliceCmd", "PriorityCmd", "BandwidthCmd",
           "QueueLimitCmd", "WredThreshold", "WredCmd", "ShapeCmd", "SetCmd", "PolicyClass", "PolicyMap",
           "Attachment", "Interface", "IosConfig"]


@dataclass
class Match:
    """``match [not] KIND VALUES``; kind: dscp, precedence, mpls-exp, cos, qos-group, traffic-class,
    discard-class, access-group, class-map, any, protocol, other."""

    kind: str
    values: list[str]
    source: Source
    text: str
    negate: bool = False


@dataclass
class ClassMap:
    name: str
    kind: str  # "match-all" (IOS default) | "match-any"
    source: Source
    matches: list[Match] = field(default_factory=list)
    other: list[tuple[str, Source]] = field(default_factory=list)


@dataclass(frozen=True)
class Rate:
    """A rate as written: ``bps`` (value in bit/s), ``percent`` (of the parent rate), ``pps`` (packets/s),
    ``per-thousand``/``per-million``."""

    kind: str
    value: float


@dataclass(frozen=True)
class Burst:
    """A burst or a queue size as written: ``bytes``, ``bits``, ``ms``, ``us``, ``packets``, or ``percent`` (a WRED
    threshold as a share of the class's queue limit)."""

    kind: str
    value: float


@dataclass
class Action:
    """A policer action: transmit, drop, set-dscp, set-prec, set-qos-group, set-cos, set-exp, set-discard-class,
    set-other."""

    kind: str
    value: str | None
    source: Source
    text: str


@dataclass
class PoliceCmd:
    source: Source
    text: str
    cir: Rate | None = None
    bc: Burst | None = None
    pir: Rate | None = None
    be: Burst | None = None
    conform: list[Action] = field(default_factory=list)
    exceed: list[Action] = field(default_factory=list)
    violate: list[Action] = field(default_factory=list)
    #: lines of the command's parts (the actions' own lines in the multi-line form)
    lines: list[Source] = field(default_factory=list)
    other: list[tuple[str, Source]] = field(default_factory=list)


@dataclass
class PriorityCmd:
    source: Source
    text: str
    level: int | None = None
    rate: Rate | None = None
    burst: Burst | None = None


@dataclass
class BandwidthCmd:
    """kind: ``rate`` (value bit/s), ``percent``, ``remaining-percent``, ``remaining-ratio``."""

    source: Source
    text: str
    kind: str
    value: float


@dataclass
class QueueLimitCmd:
    source: Source
    text: str
    size: Burst


@dataclass
class WredThreshold:
    value: str  # the DSCP / precedence / discard-class / EXP / CoS value as written, or "*" for every packet
    min_th: Burst
    max_th: Burst
    mpd: float | None
    source: Source
    text: str


@dataclass
class WredCmd:
    """``random-detect`` and its per-value lines in one class."""

    source: Source
    text: str
    basis: str = "precedence"  # precedence | dscp | discard-class | cos | exp
    thresholds: list[WredThreshold] = field(default_factory=list)
    exponent: tuple[int, Source] | None = None
    ecn: Source | None = None


@dataclass
class ShapeCmd:
    source: Source
    text: str
    kind: str  # average | peak
    rate: Rate
    bc: Burst | None = None
    be: Burst | None = None


@dataclass
class SetCmd:
    """``set WHAT VALUE`` (marking): what is dscp, precedence, cos, qos-group, mpls-exp, discard-class,
    traffic-class, other."""

    what: str
    value: str
    source: Source
    text: str


@dataclass
class PolicyClass:
    name: str
    source: Source
    priority: PriorityCmd | None = None
    bandwidth: BandwidthCmd | None = None
    #: IOS XR: a second bandwidth command of the other kind (minimum and remaining share in one class)
    bandwidth_also: BandwidthCmd | None = None
    police: list[PoliceCmd] = field(default_factory=list)
    queue_limit: QueueLimitCmd | None = None
    wred: WredCmd | None = None
    fair_queue: Source | None = None
    shape: ShapeCmd | None = None
    child: tuple[str, Source] | None = None
    sets: list[SetCmd] = field(default_factory=list)
    #: commands read but not modelled, or not known: (text, line, effect; '' when unknown)
    other: list[tuple[str, Source, str]] = field(default_factory=list)


@dataclass
class PolicyMap:
    name: str
    source: Source
    classes: list[PolicyClass] = field(default_factory=list)
    other: list[tuple[str, Source]] = field(default_factory=list)


@dataclass
class Attachment:
    direction: str  # input | output
    policy: str
    source: Source


@dataclass
class Interface:
    name: str
    source: Source
    bandwidth: tuple[float, Source] | None = None  # bit/s
    speed: tuple[float, Source] | None = None  # bit/s
    tx_ring: tuple[int, Source] | None = None
    policies: list[Attachment] = field(default_factory=list)
    shutdown: Source | None = None
    other: list[tuple[str, Source]] = field(default_factory=list)

    @property
    def parent_name(self) -> str | None:
        """``Gi0/0.100`` -> ``Gi0/0`` (a sub-interface's physical interface)."""
        return self.name.split(".", 1)[0] if "." in self.name else None


@dataclass
class IosConfig:
    file: str
    dialect: str  # ios | ios-xe | ios-xr
    hostname: tuple[str, Source] | None = None
    class_maps: dict[str, ClassMap] = field(default_factory=dict)
    policy_maps: dict[str, PolicyMap] = field(default_factory=dict)
    interfaces: list[Interface] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)

    @property
    def host(self) -> str:
        return self.hostname[0] if self.hostname else ""

    def interface(self, name: str) -> Interface | None:
        return next((i for i in self.interfaces if i.name == name), None)
