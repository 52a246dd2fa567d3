"""Linux traffic control as written: qdiscs, classes and filters per device, each with its line.

Option values are resolved to SI (bit/s, bytes, seconds) by :mod:`qosbound.configs.tc_parse`, whatever the source
(a ``tc`` script or ``tc -j`` JSON)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from qosbound.configs.source import Source

__all__ = ["TcQdisc", "TcClass", "TcMatch", "TcFilter", "TcConfig", "handle_major"]


def handle_major(h: str) -> str:
    """``'1:'``, ``'1:0'``, ``'1'`` -> ``'1'``; ``'1:10'`` -> ``'1'``."""
    return str(h).split(":", 1)[0].lower().lstrip("0") or "0"


@dataclass
class TcQdisc:
    dev: str
    kind: str
    handle: str  # "1:" ("0:" for a kernel-assigned default)
    parent: str  # "root" or "1:10"
    options: dict[str, Any]
    source: Source
    text: str
    explicit: bool = True

    @property
    def major(self) -> str:
        return handle_major(self.handle)


@dataclass
class TcClass:
    dev: str
    kind: str
    classid: str  # "1:10"
    parent: str  # "1:" or "1:1"
    options: dict[str, Any]
    source: Source
    text: str


@dataclass(frozen=True)
class TcMatch:
    """One u32 selector: ``what`` is ``dsfield`` (the TOS byte) or another field (not modelled)."""

    what: str
    value: int
    mask: int


@dataclass
class TcFilter:
    dev: str
    parent: str
    prio: int
    kind: str
    flowid: str | None
    source: Source
    text: str
    matches: list[TcMatch] = field(default_factory=list)


@dataclass
class TcConfig:
    file: str
    format: str  # tc-script | tc-json
    qdiscs: list[TcQdisc] = field(default_factory=list)
    classes: list[TcClass] = field(default_factory=list)
    filters: list[TcFilter] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def devices(self) -> list[str]:
        out: list[str] = []
        for q in self.qdiscs:
            if q.dev not in out:
                out.append(q.dev)
        return out
