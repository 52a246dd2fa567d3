"""The port as imported: vendor-neutral types between a vendor AST and the ``port`` scenario.

A :class:`Port` is one output interface with its policy: the link, the ring, the ordered :class:`QueueClass` es,
and a parent :class:`Shaper` when the policy is hierarchical. Every value is a :class:`~qosbound.configs.values.Field`
(value + the lines or the platform default behind it). :mod:`qosbound.configs.imported` turns a Port into the
``port`` scenario (the field names of the port system) with its provenance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qosbound.configs.formatting import rate_text
from qosbound.configs.source import Source
from qosbound.configs.values import Field
from qosbound.errors import ConfigError

__all__ = ["Bandwidth", "Police", "Threshold", "Dropper", "QueueClass", "Shaper", "Note", "Port", "MATCH_KINDS"]

#: Classification other than DSCP, by kind (the port scenario's ``classes[].match`` keys).
MATCH_KINDS = ("precedence", "exp", "cos", "qos_group")


@dataclass(frozen=True)
class Bandwidth:
    """A bandwidth class's share, in one of the port system's three forms: an absolute rate (bit/s), ``N %`` of the
    link, or ``remaining N %`` (of the link less the priority classes' policed rates)."""

    kind: str  # "rate" | "percent" | "remaining"
    amount: float

    def __str__(self) -> str:
        if self.kind == "rate":
            return rate_text(self.amount)
        n = f"{self.amount:.10g}"
        return f"{n} %" if self.kind == "percent" else f"remaining {n} %"


@dataclass
class Police:
    """A token-bucket policer on the class's arrivals: two-colour (``cir``/``cbs``), srTCM (with ``ebs``, RFC
    2697) or trTCM (with ``pir``/``pbs``, RFC 2698); each colour's action ``drop``, ``transmit`` or
    ``set-dscp DSCP`` (None: the port's default -- conform transmits, exceed drops, violate as exceed).
    ``conditional``: Cisco's priority policer that acts only when the port is congested."""

    cir: Field
    cbs: Field
    ebs: Field | None = None
    pir: Field | None = None
    pbs: Field | None = None
    conditional: Field | None = None
    conform: Field | None = None
    exceed: Field | None = None
    violate: Field | None = None

    def drop_rate(self) -> Field | None:
        """The rate above which it drops (what the class can carry at most), None when it never drops."""
        acts = [a.value if a is not None else d for a, d in ((self.conform, "transmit"), (self.exceed, "drop"))]
        violate = self.violate.value if self.violate is not None else acts[1]
        if acts[1] == "drop":
            return self.cir
        if violate == "drop":
            return self.pir if self.pir is not None else self.cir
        return None


@dataclass
class Threshold:
    """WRED thresholds of one drop precedence: packets, packets, mark-probability denominator."""

    min_th: Field
    max_th: Field
    P_d: Field


@dataclass
class Dropper:
    """An active queue manager per drop precedence (the ``af`` system's droppers): mode, EWMA exponent,
    thresholds keyed by DSCP name."""

    mode: Field
    thresholds: dict[str, Threshold]
    exponent: Field | None = None
    gentle: Field | None = None


@dataclass
class QueueClass:
    """One class of the port's scheduler: a strict-priority level or a bandwidth share, and its queue."""

    name: str
    source: Source
    dscp: Field | None = None
    priority: Field | None = None
    police: Police | None = None
    bandwidth: Field | None = None
    queue_limit: Field | None = None
    dropper: Dropper | None = None
    traffic: Field | None = None
    #: a policer on a bandwidth class: what the class can carry at most (used by the default traffic)
    rate_cap: Field | None = None
    #: match criteria as written (DSCP and others), each with its line, for the output's provenance
    matches: list[tuple[str, Source]] = field(default_factory=list)
    #: classification other than DSCP: kind (MATCH_KINDS) -> values, and the lines
    match: dict[str, set[int]] = field(default_factory=dict)
    match_sources: list[Source] = field(default_factory=list)

    @property
    def is_default(self) -> bool:
        return self.name == "class-default"


@dataclass
class Shaper:
    """A parent shaper serving the child policy: a rate-latency server of rate ``cir`` (bit/s) and latency
    ``Tc = Bc / CIR`` (the shaper releases up to Bc bits per interval Tc)."""

    cir: Field
    bc: Field  # bytes
    be: Field | None = None  # bytes
    parent_rate: Field | None = None

    @property
    def latency(self) -> float:
        return 8.0 * self.bc.value / self.cir.value


@dataclass(frozen=True)
class Note:
    """A construct that does not change the port's queueing (or is approximated): what it is and its effect on
    what the answers prove."""

    source: Source | None
    construct: str
    effect: str

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        return f"{where}{' '.join(self.construct.split())}: {self.effect}"


@dataclass
class Port:
    """One output interface with a queueing policy attached, as the configuration (and the platform) has it."""

    host: str
    interface: str
    direction: str
    format: str
    platform: str
    source: Source
    policy: str = ""
    link_rate: Field | None = None
    txq_units: Field | None = None
    txq_unit_size: Field | None = None
    classes: list[QueueClass] = field(default_factory=list)
    shaper: Shaper | None = None
    notes: list[Note] = field(default_factory=list)
    refusals: list[ConfigError] = field(default_factory=list)
    description: str = ""

    def note(self, source: Source | None, construct: str, effect: str) -> None:
        n = Note(source, construct, effect)
        if n not in self.notes:
            self.notes.append(n)

    def cls(self, name: str) -> QueueClass | None:
        return next((c for c in self.classes if c.name == name), None)


def settle_remarks(port: Port) -> None:
    """A policer's ``set-dscp D`` re-marks a packet that stays in its class's queue (neither MQC nor the other
    formats reclassify after the policer). D changes the port's queueing only through the class's WRED
    thresholds by DSCP; where the class has no WRED or does not match D, the action is ``transmit`` on this port
    (noted: D matters to the next hop)."""
    for qc in port.classes:
        if qc.police is None:
            continue
        mine = set(qc.dscp.value) if qc.dscp is not None else {"DF"}
        for colour in ("conform", "exceed", "violate"):
            act = getattr(qc.police, colour)
            if act is None or not str(act.value).startswith("set-dscp "):
                continue
            new = act.value.split(" ", 1)[1]
            if qc.dropper is not None and new in mine:
                continue
            why = "the class has no WRED" if qc.dropper is None else f"the class does not match {new}"
            setattr(qc.police, colour, act.derive("transmit", f"{act.value}: marking only on this port"))
            port.note(act.sources[0] if act.sources else qc.source, f"{colour} {act.value}",
                      f"marking only on this port: the re-marked packet stays in class {qc.name}'s queue and {why} "
                      f"to treat {new} apart; taken as transmit ({new} matters to the next hop)")
