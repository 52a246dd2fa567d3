"""An imported port: the ``port`` scenario (a plain dict in the port system's field names) and its origin.

:class:`ImportedPort` is what :func:`qosbound.configs.load_configs` returns and what ``qosbound import`` writes.
The scenario holds the port system's queueing fields; the origin -- the line behind every field, the platform
defaults assumed with their citations, the constructs not modelled and their effect, the parent shaper -- is
written in the fields the port scenario reserves for importers (``source``, ``provenance``, ``assumed``,
``not_modelled``, ``shaper``, ``classes[].match``). The object keeps more: the defaults as records, the shaper's
provenance and interface rate, each class's match criteria as written, the refusals.

Field paths in ``provenance`` name classes by name: ``classes.voice.police.cir``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from qosbound.configs.formatting import number, rate_text, size_text, time_text
from qosbound.configs.port import Dropper, Police, Port, QueueClass
from qosbound.configs.values import Field
from qosbound.errors import ConfigError

__all__ = ["ImportedPort", "import_port", "port_name", "ORIGIN_FIELDS"]

#: The port scenario's fields an import writes besides the queueing ones (reserved for importers).
ORIGIN_FIELDS = ("source", "shaper", "provenance", "assumed", "not_modelled")


@dataclass
class ImportedPort:
    """One output port imported from a configuration: the scenario and where each of its values came from."""

    name: str
    file: str
    host: str
    interface: str
    direction: str
    format: str
    platform: str
    policy: str
    scenario: dict
    #: field path -> "file:line[, file:line...]" or "assumed <platform> default <key>"
    provenance: dict[str, str] = field(default_factory=dict)
    #: every platform default used: field, value, platform, key, meaning, citation
    assumptions: list[dict] = field(default_factory=list)
    #: "file:line: construct: effect on what is proved"
    not_modelled: list[str] = field(default_factory=list)
    #: the same as the port scenario writes them: {item, where, effect}
    notes: list[dict] = field(default_factory=list)
    #: constructs that cannot be modelled honestly (the port is then not written)
    refusals: list[ConfigError] = field(default_factory=list)
    #: the parent shaper as a rate-latency server (None for a flat policy)
    shaper: dict | None = None
    #: class -> its match criteria as written, with their lines
    matches: dict[str, list[str]] = field(default_factory=dict)

    def origin(self) -> dict:
        """Where the port comes from, in the fields the port scenario reserves for importers: ``source`` (file,
        format, host, interface, policy), ``provenance`` (field path -> lines), ``assumed`` (field path -> the
        platform default and its citation), ``not_modelled`` (item, where, effect), ``shaper``."""
        out: dict[str, Any] = {"source": f"{self.file} ({self.format}): {self.host} {self.interface}, "
                                         f"{self.direction}put policy {self.policy}"}
        if self.shaper:
            out["shaper"] = {"rate": self.shaper["cir"], "bc": self.shaper["bc"], "tc": self.shaper["latency"]}
            if "interface_rate" in self.shaper:  # the ring drains at the interface's rate, not the shaper's
                out["shaper"]["interface_rate"] = self.shaper["interface_rate"]
        out["provenance"] = self.provenance
        assumed: dict[str, str] = {}
        for a in self.assumptions:
            text = f"{a['platform']} default {a['default']}: {a['meaning']} [{a['citation']}]"
            assumed[a["field"]] = f"{assumed[a['field']]}; {text}" if a["field"] in assumed else text
        out["assumed"] = assumed
        out["not_modelled"] = self.notes
        return out

    def document(self) -> dict:
        """The scenario with its origin: what ``qosbound import`` writes (every key a field of the port
        scenario)."""
        return {**self.scenario, **self.origin()}

    def lines_for(self, path: str) -> str:
        """The configuration lines (or default) behind a field, e.g. ``lines_for('classes.voice.police.cir')``."""
        return self.provenance.get(path, "")


class _Writer:
    """Collects the scenario's values with their provenance and assumptions, path by path."""

    def __init__(self):
        self.provenance: dict[str, str] = {}
        self.assumptions: list[dict] = []

    def put(self, path: str, f: Field, text: Any) -> Any:
        self.provenance[path] = f.provenance()
        for d in f.all_defaults():
            self.assumptions.append({"field": path, "value": text,
                                     "platform": d.platform, "default": d.key, "meaning": d.meaning,
                                     "citation": d.citation})
        if f.derivation:
            self.provenance[path] += f" ({f.derivation})"
        return text


def _police(w: _Writer, at: str, p: Police) -> dict:
    out = {"cir": w.put(f"{at}.cir", p.cir, rate_text(p.cir.value)),
           "cbs": w.put(f"{at}.cbs", p.cbs, size_text(p.cbs.value))}
    if p.ebs is not None:
        out["ebs"] = w.put(f"{at}.ebs", p.ebs, size_text(p.ebs.value))
    if p.pir is not None:
        out["pir"] = w.put(f"{at}.pir", p.pir, rate_text(p.pir.value))
    if p.pbs is not None:
        out["pbs"] = w.put(f"{at}.pbs", p.pbs, size_text(p.pbs.value))
    if p.conditional is not None:
        out["conditional"] = w.put(f"{at}.conditional", p.conditional, bool(p.conditional.value))
    for k in ("conform", "exceed", "violate"):
        a = getattr(p, k)
        if a is not None:
            out[k] = w.put(f"{at}.{k}", a, a.value)
    return out


def _dropper(w: _Writer, at: str, d: Dropper) -> dict:
    out: dict[str, Any] = {"mode": w.put(f"{at}.mode", d.mode, d.mode.value)}
    if d.gentle is not None:
        out["gentle"] = w.put(f"{at}.gentle", d.gentle, bool(d.gentle.value))
    if d.exponent is not None:
        out["exponent"] = w.put(f"{at}.exponent", d.exponent, number(d.exponent.value))
    th = {}
    for key, t in d.thresholds.items():
        p = f"{at}.thresholds.{key}"
        th[key] = {"min_th": w.put(f"{p}.min_th", t.min_th, number(t.min_th.value)),
                   "max_th": w.put(f"{p}.max_th", t.max_th, number(t.max_th.value)),
                   "P_d": w.put(f"{p}.P_d", t.P_d, number(t.P_d.value))}
    out["thresholds"] = th
    return out


def _class(w: _Writer, c: QueueClass) -> dict:
    at = f"classes.{c.name}"
    w.provenance[f"{at}.name"] = str(c.source)
    out: dict[str, Any] = {"name": c.name}
    if c.dscp is not None:
        out["dscp"] = w.put(f"{at}.dscp", c.dscp, list(c.dscp.value))
    if c.match:
        out["match"] = {k: sorted(v) for k, v in c.match.items()}
        for k in c.match:
            w.provenance[f"{at}.match.{k}"] = ", ".join(str(x) for x in sorted(set(c.match_sources)))
    if c.priority is not None:
        out["priority"] = w.put(f"{at}.priority", c.priority, number(c.priority.value))
    if c.police is not None:
        out["police"] = _police(w, f"{at}.police", c.police)
    if c.bandwidth is not None:
        out["bandwidth"] = w.put(f"{at}.bandwidth", c.bandwidth, str(c.bandwidth.value))
    if c.queue_limit is not None:
        out["queue_limit"] = w.put(f"{at}.queue_limit", c.queue_limit, number(c.queue_limit.value))
    if c.dropper is not None:
        out["dropper"] = _dropper(w, f"{at}.dropper", c.dropper)
    if c.traffic is not None:
        out["traffic"] = w.put(f"{at}.traffic", c.traffic, c.traffic.value)
    return out


def port_name(host: str, interface: str, direction: str) -> str:
    """``<host>_<interface>_<direction>`` with characters unsafe in file names replaced by '-'."""
    def safe(s: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", s).strip("-") or "x"

    return f"{safe(host)}_{safe(interface)}_{direction}"


def import_port(port: Port) -> ImportedPort:
    """The scenario of one port, with the provenance of every field, the defaults assumed and the notes."""
    w = _Writer()
    name = port_name(port.host, port.interface, port.direction)
    scn: dict[str, Any] = {"name": name, "system": "port",
                           "description": port.description or
                           f"{port.host} {port.interface} output policy {port.policy} (imported from "
                           f"{port.source.file}, {port.format})"}
    if port.link_rate is not None:
        scn["link"] = {"rate": w.put("link.rate", port.link_rate, rate_text(port.link_rate.value))}
    if port.txq_units is not None and port.txq_unit_size is not None:
        scn["txq"] = {"units": w.put("txq.units", port.txq_units, number(port.txq_units.value)),
                      "unit_size": w.put("txq.unit_size", port.txq_unit_size,
                                         "packet" if port.txq_unit_size.value == "packet"
                                         else size_text(port.txq_unit_size.value))}
    scn["classes"] = [_class(w, c) for c in port.classes]
    shaper = None
    if port.shaper is not None:
        s = port.shaper
        shaper = {"cir": rate_text(s.cir.value), "bc": size_text(s.bc.value),
                  "latency": time_text(s.latency), "service": "rate-latency: rate cir, latency Tc = Bc / CIR",
                  "provenance": {"cir": s.cir.provenance(), "bc": s.bc.provenance()}}
        if s.be is not None:
            shaper["be"] = size_text(s.be.value)
            shaper["provenance"]["be"] = s.be.provenance()
        if s.parent_rate is not None:
            shaper["interface_rate"] = rate_text(s.parent_rate.value)
            shaper["provenance"]["interface_rate"] = s.parent_rate.provenance()
        for k, at in (("cir", "rate"), ("bc", "bc"), ("be", "be")):
            f = getattr(s, k)
            if f is not None:
                w.put(f"shaper.{at}", f, shaper.get(k))
        if s.parent_rate is not None:  # the ring drains at the interface's rate, not the shaper's
            w.put("shaper.interface_rate", s.parent_rate, shaper["interface_rate"])
        src = s.cir.sources[0] if s.cir.sources else None
        port.note(src, f"parent shaper at {shaper['cir']}, Bc {shaper['bc']}",
                  "modelled by the closed-form bounds (the port at the shaper's rate, its burst Bc added to the work "
                  "ahead: a rate-latency server of latency Tc) and by the simulator (a token bucket of depth Bc "
                  "refilled at the shaper's rate, between the scheduler and the tx-ring); model checking and ns-3 "
                  "do not model it and are not run on this port")
    matches = {c.name: [f"{text} ({src})" for text, src in c.matches] for c in port.classes if c.matches}
    return ImportedPort(name=name, file=port.source.file, host=port.host, interface=port.interface,
                        direction=port.direction, format=port.format, platform=port.platform, policy=port.policy,
                        scenario=scn, provenance=w.provenance, assumptions=w.assumptions,
                        not_modelled=[str(n) for n in port.notes],
                        notes=[{"item": " ".join(n.construct.split()), "where": str(n.source) if n.source else "",
                                "effect": n.effect} for n in port.notes],
                        refusals=list(port.refusals), shaper=shaper,
                        matches=matches)
