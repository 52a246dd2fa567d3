"""The traffic file: what is offered to each imported port's classes, in the ``port`` system's terms.

Configurations say how a router queues, not what it is offered. A traffic file (``--traffic T.yaml``) gives it,
and the rate of interfaces whose configuration states none::

    interfaces:                      # per interface: "HOST:INTERFACE" or "INTERFACE" (any host)
      "branch1:GigabitEthernet0/0/1.100":
        rate: 50 Mbit/s              # the interface's line rate (when the configuration does not state it)
        classes:
          VOICE: {calls: 20, call: {rate: 80 kbit/s, size: 200 B, arrivals: cbr}}
    classes:                         # by class name, on every port that has the class
      VIDEO: {rate: 20 Mbit/s, size: 1200 B, arrivals: poisson}
    dscp:                            # by DSCP: the class that matches it on each port
      AF31: {rate: 10 Mbit/s, size: 576 B, arrivals: poisson}

Each traffic entry is written into the port scenario's ``traffic`` as given (the port system validates it).
The most specific entry wins: interface + class, then class, then DSCP. Without an entry the import states its
default (:func:`default_traffic`): a priority class offered its policer's rate (the worst case the router admits),
a bandwidth class saturated; a strict-priority class without a policer has no such bound and needs an entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from qosbound.configs.defaults import default_field
from qosbound import dscp
from qosbound.configs.formatting import rate_text, size_text
from qosbound.configs.port import Port, QueueClass
from qosbound.configs.source import Source
from qosbound.configs.values import Field, given
from qosbound.errors import ConfigError, ScenarioError
from qosbound.inputs import check_input_file
from qosbound.units import parse_quantity

__all__ = ["TrafficSpec", "InterfaceTraffic", "load_traffic", "apply_traffic", "default_traffic"]

MAX_TRAFFIC_BYTES = 16 * 2**20


@dataclass
class InterfaceTraffic:
    rate: Field | None = None
    classes: dict[str, tuple[Any, Source]] = field(default_factory=dict)


@dataclass
class TrafficSpec:
    """A parsed traffic file (empty when none is given)."""

    file: str | None = None
    interfaces: dict[str, InterfaceTraffic] = field(default_factory=dict)
    classes: dict[str, tuple[Any, Source]] = field(default_factory=dict)
    dscp: dict[int, tuple[Any, Source]] = field(default_factory=dict)

    def interface(self, host: str, interface: str) -> InterfaceTraffic | None:
        return self.interfaces.get(f"{host}:{interface}") or self.interfaces.get(interface)

    def link_rate(self, host: str, interface: str) -> Field | None:
        """The interface's rate from the traffic file, if it gives one (for a sub-interface, its parent's)."""
        for name in (interface, interface.split(".", 1)[0]):
            it = self.interface(host, name)
            if it is not None and it.rate is not None:
                return it.rate
        return None

    def for_class(self, host: str, interface: str, c: QueueClass) -> Field | None:
        it = self.interface(host, interface)
        if it is not None and c.name in it.classes:
            value, src = it.classes[c.name]
            return given(value, src)
        if c.name in self.classes:
            value, src = self.classes[c.name]
            return given(value, src)
        dscps = [dscp.parse(d) for d in (c.dscp.value if c.dscp is not None else [])]
        hits = [d for d in dscps if d in self.dscp]
        if len(hits) > 1:
            srcs = [self.dscp[d][1] for d in hits]
            raise ConfigError(f"DSCPs {', '.join(dscp.name(d) for d in hits)} of the traffic file all fall into "
                              f"class {c.name} of {host} {interface}: give that class's traffic by its name",
                              file=srcs[0].file, line=srcs[0].line)
        if hits:
            value, src = self.dscp[hits[0]]
            return given(value, src)
        return None


def _lines(node, path=()) -> dict[tuple, int]:
    """Line (1-based) of every mapping key of a composed YAML document, by key path."""
    out: dict[tuple, int] = {}
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = (*path, str(k.value))
            out[key] = k.start_mark.line + 1
            out.update(_lines(v, key))
    return out


def load_traffic(path: str | Path) -> TrafficSpec:
    """Read a traffic file (see the module docstring); errors name the file, the line and the field."""
    name = str(path)

    def bad(problem: str, line: int | None = None, fld: str | None = None) -> ConfigError:
        return ConfigError(problem, file=name, line=line, field=fld)

    check_input_file(path, "traffic file", lambda p: bad(p), max_bytes=MAX_TRAFFIC_BYTES)
    try:
        text = Path(path).read_text(encoding="utf-8")
        doc = yaml.safe_load(text)
        lines = _lines(yaml.compose(text)) if doc else {}
    except UnicodeDecodeError:
        raise bad("not UTF-8 text") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise bad(f"not valid YAML: {getattr(e, 'problem', e)}", mark.line + 1 if mark else None) from None
    except OSError as e:
        raise bad(f"cannot read: {e.strerror}") from None
    spec = TrafficSpec(file=name)
    if doc is None:
        return spec
    if not isinstance(doc, dict):
        raise bad("expected a mapping with 'interfaces', 'classes' and/or 'dscp'")
    unknown = set(doc) - {"interfaces", "classes", "dscp", "description"}
    if unknown:
        k = sorted(map(str, unknown))[0]
        raise bad("unknown section; expected interfaces, classes or dscp", lines.get((k,)), k)

    def src(*key) -> Source:
        return Source(name, lines.get(tuple(map(str, key)), 1))

    def entries(section: dict | None, at: tuple) -> dict[str, tuple[Any, Source]]:
        if section is None:
            return {}
        if not isinstance(section, dict):
            raise bad("expected a mapping of class name -> traffic", lines.get(at), ".".join(at))
        out = {}
        for k, v in section.items():
            if not isinstance(v, dict):
                raise bad("a class's traffic must be a mapping (e.g. {rate: 10 Mbit/s, arrivals: poisson})",
                          lines.get((*at, str(k))), ".".join((*at, str(k))))
            out[str(k)] = (v, src(*at, k))
        return out

    spec.classes = entries(doc.get("classes"), ("classes",))
    for k, v in entries(doc.get("dscp"), ("dscp",)).items():
        d = dscp.parse(k)
        if d is None:
            raise bad(f"'{k}' is not a DSCP (a name such as EF or AF31, or 0-63)", v[1].line, f"dscp.{k}")
        spec.dscp[d] = v
    itfs = doc.get("interfaces") or {}
    if not isinstance(itfs, dict):
        raise bad("expected a mapping of interface -> {rate, classes}", lines.get(("interfaces",)), "interfaces")
    for k, v in itfs.items():
        at = ("interfaces", str(k))
        if not isinstance(v, dict) or set(v) - {"rate", "classes"}:
            raise bad("an interface entry is a mapping with 'rate' and/or 'classes'", lines.get(at), ".".join(at))
        it = InterfaceTraffic()
        if "rate" in v:
            try:
                r = parse_quantity(v["rate"], "rate", field=f"interfaces.{k}.rate")
            except ScenarioError as e:
                raise bad(e.problem, lines.get((*at, "rate")), e.field) from None
            if not r > 0:
                raise bad("the interface rate must be positive", lines.get((*at, "rate")), f"interfaces.{k}.rate")
            it.rate = given(r, src(*at, "rate"))
        it.classes = entries(v.get("classes"), (*at, "classes"))
        spec.interfaces[str(k)] = it
    return spec


def default_traffic(port: Port, c: QueueClass) -> Field:
    """What a class is offered when the traffic file does not say (the import's stated default).

    A priority class: its policer's rate, Poisson, full-size packets -- the most the router lets through.
    A bandwidth class (or class-default): saturated with full-size packets -- or, when a policer caps it, offered
    the policer's rate. A strict-priority class without a policer is refused: the router admits any rate.
    """
    size = default_field(port.platform, "default_traffic_size")
    if c.priority is not None:
        if c.police is None:
            raise ConfigError(f"class {c.name} is strict priority without a policer: the router admits any rate "
                              f"into it; give its traffic in a traffic file (--traffic)",
                              file=c.source.file, line=c.source.line, construct=f"class {c.name}")
        cir = c.police.cir
        return cir.derive({"rate": rate_text(cir.value), "size": size_text(size.value), "arrivals": "poisson"},
                          "default: the policer's rate, Poisson, full-size packets", size)
    if c.rate_cap is not None:
        return c.rate_cap.derive({"rate": rate_text(c.rate_cap.value), "size": size_text(size.value),
                                  "arrivals": "poisson"}, "default: the class's policer rate, Poisson", size)
    return size.derive({"saturated": True, "sizes": [{"size": size_text(size.value), "p": 1}]},
                       "default: saturated with full-size packets")


def apply_traffic(port: Port, spec: TrafficSpec) -> None:
    """Give every class its traffic: the traffic file's entry, else the default (with a note saying so)."""
    defaulted = []
    for c in port.classes:
        t = spec.for_class(port.host, port.interface, c)
        if t is None:
            t = default_traffic(port, c)
            defaulted.append(c.name)
        c.traffic = t
    if defaulted:
        port.note(None, "traffic", f"no traffic given for {', '.join(defaulted)}: the import's default applies "
                                   f"(priority classes at their policer rate, bandwidth classes saturated)")
