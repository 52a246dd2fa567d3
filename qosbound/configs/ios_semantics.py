"""The queueing meaning of a Cisco MQC configuration: one :class:`~qosbound.configs.port.Port` per interface with
an output ``service-policy``.

What each construct becomes (docs/configs.md lists them all):

* ``class`` of the attached policy (or of its child under a parent shaper) -> a class of the port, in the order
  priority levels, then bandwidth classes as written, then ``class-default`` (which always exists). A class
  takes the DSCPs its class-map matches that no earlier class took (MQC is first-match). ``match precedence n``,
  ``match mpls experimental topmost n`` and ``match cos n`` take the DSCPs of precedence n (EXP and CoS carried
  from the IP precedence: an assumed platform default); ``match qos-group n`` / ``match traffic-class n`` take
  the DSCPs that the input policies of the same router mark with that group (two-stage classification).
* ``priority`` -> ``priority: level`` (1 when no level is written); with a rate (``priority 2000``,
  ``priority percent 10``) its congestion-time policer -> ``police: {cir, cbs, conditional: true}``, the burst
  200 ms of the rate unless given. An explicit ``police`` in a priority class -> ``police`` (always active).
* ``bandwidth`` kbit/s / ``percent`` / ``remaining percent`` -> ``bandwidth`` in the same form;
  ``remaining ratio r`` -> ``remaining r / (sum of ratios) %`` (a class with no ratio counts 1).
* ``queue-limit`` -> ``queue_limit`` in packets (bytes and time converted with full-size packets, labelled);
  none -> the platform's default.
* ``random-detect`` -> a WRED dropper with thresholds per DSCP of the class (configured lines, else the
  platform's default table), ``exponential-weighting-constant`` -> ``exponent``.
* ``police`` -> the class's ``police``: two-colour, srTCM (``be`` or a violate action) or trTCM (``pir``), each
  colour's action ``drop``, ``transmit`` or ``set-dscp DSCP`` (``set-dscp-transmit``); other markings noted.
* Parent ``shape average`` over a child ``service-policy`` -> the child's server: ``link.rate`` is the shaper's
  CIR (the child's percentages are of it) and the shaper is a rate-latency server with latency Tc = Bc / CIR
  (the scenario's ``shaper``). A third level is refused.
* ``set`` in an output policy, ``fair-queue`` and the other constructs that do not change the port's queueing
  -> "not modelled" notes with their effect.
"""

from __future__ import annotations

import math

from qosbound import dscp
from qosbound.configs.defaults import default, default_field
from qosbound.configs.formatting import rate_text
from qosbound.configs.ios_ast import Interface, IosConfig, PolicyClass, PolicyMap
from qosbound.configs.ios_actions import CommandReader
from qosbound.configs.ios_classify import QUEUEING, Classifier
from qosbound.configs.port import Bandwidth, Police, Port, QueueClass, Shaper
from qosbound.configs.source import Source
from qosbound.configs.traffic import TrafficSpec
from qosbound.configs.values import Default, Field, given
from qosbound.errors import ConfigError

__all__ = ["ios_ports", "interface_rate", "line_rate"]

#: Constructs read but not modelled, with their effect on what the answers prove.
_NOT_MODELLED = {
    "compress": "not modelled: header compression changes packet sizes on the wire; sizes are taken as sent "
                "(delays over-estimated for compressed flows)",
    "account": "not modelled: per-packet overhead accounting; rates are taken without layer-2 overhead",
    "estimate": "ignored: bandwidth estimation (an admission aid, no queueing)",
    "queue-buffers": "not modelled: buffer carving; the class's queue limit applies",
    "trust": "ignored: trust (classification aid on switches)",
    "admit": "ignored: RSVP admission",
    "priority-level": "ignored: priority-level (IOS XR scheduling hint)",
}


def _dscp_field(values: set[int], sources: list[Source], defaults: list[Default], how: str = "") -> Field:
    names = [dscp.name(d) for d in sorted(values)]
    f = Field(names, tuple(sorted(set(sources))), None, how)
    if defaults:
        f = Field(names, tuple(sorted(set(sources))), defaults[0], how,
                  tuple(Field(None, (), d) for d in defaults[1:]))
    return f


def _with_parent(itf: Interface, cfg: IosConfig) -> list[Interface]:
    """The interface, then its physical interface when it is a sub-interface (whose settings it inherits)."""
    parent = cfg.interface(itf.parent_name) if itf.parent_name else None
    return [itf] if parent is None else [itf, parent]


def interface_rate(itf: Interface, cfg: IosConfig, traffic: TrafficSpec) -> Field | None:
    """An interface's rate: the traffic file, else ``bandwidth`` (the QoS reference rate), else ``speed``, else the
    nominal rate of its type (a labelled default); a sub-interface inherits its physical interface's."""
    r = traffic.link_rate(cfg.host, itf.name)
    if r is not None:
        return r
    for i in _with_parent(itf, cfg):
        if i.bandwidth is not None:
            return given(i.bandwidth[0], i.bandwidth[1], how="interface bandwidth (the QoS reference rate)")
    return line_rate(itf, cfg, traffic)


def line_rate(itf: Interface, cfg: IosConfig, traffic: TrafficSpec) -> Field | None:
    """The rate the interface's transmit ring drains at: the traffic file's, else ``speed`` (of the interface or
    of its physical interface), else the nominal rate of its type. ``bandwidth`` is not one: it is the reference
    IOS computes percentages from and changes no clock (a sub-interface's ``bandwidth 20000`` on a 100 Mbit/s
    port leaves the port at 100 Mbit/s)."""
    r = traffic.link_rate(cfg.host, itf.name)
    if r is not None:
        return r
    for i in _with_parent(itf, cfg):
        if i.speed is not None:
            return given(i.speed[0], i.speed[1])
    rates = default(cfg.dialect, "interface_rates")
    kind = "".join(ch for ch in itf.name.split(".")[0] if ch.isalpha() or ch == "-").rstrip("-")
    for name, value in sorted(rates.value.items(), key=lambda kv: -len(kv[0])):
        if kind.lower() == name.lower():
            return Field(float(value), (itf.source,), rates, f"nominal rate of a {name} interface")
    return None


class _Semantics(CommandReader):
    """The ports of one configuration: each interface's output policy resolved into a port's classes."""

    def __init__(self, cfg: IosConfig, traffic: TrafficSpec):
        self.cfg = cfg
        self.family = cfg.dialect
        self.traffic = traffic
        self.classifier = Classifier(cfg)
        self.input_notes = self.classifier.input_notes

    # -------------------------------------------------------------------------------------- policies

    def resolve(self, att, itf: Interface, port: Port):
        """(queueing policy, parent class with the shaper or None)."""
        pm = self.cfg.policy_maps.get(att.policy)
        if pm is None:
            raise self.error(att.source, f"service-policy output {att.policy}",
                             f"policy-map {att.policy} is not defined")
        parents = [c for c in pm.classes if c.child is not None]
        if not parents:
            shaped = [c for c in pm.classes if c.shape is not None]
            if len(shaped) == 1 and shaped[0].name == "class-default" and \
                    not any(getattr(c, k) for c in pm.classes if c is not shaped[0] for k in QUEUEING):
                return pm, shaped[0]  # a port shaper over one FIFO queue
            return pm, None
        if len(parents) > 1:
            raise self.error(parents[1].child[1], f"service-policy {parents[1].child[0]}",
                             "several child policies under one parent (a per-class hierarchy): the port model has "
                             "one scheduler under one shaper", refused=True)
        pc = parents[0]
        others = [c for c in pm.classes if c is not pc and any(getattr(c, k) for k in QUEUEING)]
        if others:
            raise self.error(others[0].source, f"class {others[0].name}",
                             f"parent policy {pm.name} queues in class {others[0].name} besides the shaped class "
                             f"{pc.name}: two-level scheduling is not modelled", refused=True)
        child = self.cfg.policy_maps.get(pc.child[0])
        if child is None:
            raise self.error(pc.child[1], f"service-policy {pc.child[0]}", f"policy-map {pc.child[0]} is not defined")
        for c in child.classes:
            if c.child is not None:
                raise self.error(c.child[1], f"service-policy {c.child[0]}",
                                 f"a third level of hierarchy ({pm.name} > {child.name} > {c.child[0]}): the port "
                                 "model has one shaper over one scheduler", refused=True)
        for k in ("priority", "bandwidth", "queue_limit", "wred", "fair_queue"):
            if getattr(pc, k):
                port.note(pc.source, f"class {pc.name} of {pm.name}", f"ignored: {k.replace('_', '-')} in the parent "
                                                                      "class (no sibling to share with)")
        for p in pc.police:
            port.note(p.source, p.text, "not modelled: a policer in the parent class (before the child's queues)")
        return child, pc

    def shaper(self, pc: PolicyClass, phys: Field | None, line: Field | None) -> Shaper:
        """The parent shaper: its rate (a percentage of ``phys``, the reference rate), Bc, Be, and the ``line``
        rate its ring drains at."""
        s = pc.shape
        cir = self.rate(s.rate, phys, s.source, s.text)
        if s.kind == "peak":
            pass
        if s.bc is not None:
            bc = self.nbytes(s.bc, cir, s.source, s.text)
        else:
            d = default(self.family, "shaper_tc")
            tc = d.value["below_320k"] if cir.value < 320e3 else d.value["from_320k"]
            bc = Field(cir.value * tc / 8.0, (), d, f"Tc = {tc:g} s at {rate_text(cir.value)}", (cir,))
        be = self.nbytes(s.be, cir, s.source, s.text) if s.be is not None else None
        if s.kind == "peak":
            extra = be.value if be is not None else bc.value
            cir = cir.derive(cir.value * (1 + extra / bc.value), "shape peak: Bc + Be per interval", bc)
        return Shaper(cir, bc, be, line)

    def port(self, itf: Interface, att) -> Port:
        cfg = self.cfg
        host = cfg.host or itf.source.file.rsplit("/", 1)[-1].split(".")[0]
        port = Port(host=host, interface=itf.name, direction="out", format=f"cisco-{self.family}",
                    platform=self.family, source=att.source, policy=att.policy)
        try:
            self._build(port, itf, att)
        except ConfigError as e:
            port.refusals.append(e)
        return port

    def _build(self, port: Port, itf: Interface, att) -> None:
        cfg, fam = self.cfg, self.family
        phys = interface_rate(itf, cfg, self.traffic)
        pm, parent = self.resolve(att, itf, port)
        line = line_rate(itf, cfg, self.traffic) or phys
        shaper = self.shaper(parent, phys, line) if parent is not None and parent.shape is not None else None
        if shaper is not None:
            port.shaper = shaper
            port.link_rate = shaper.cir
            if phys is not None and shaper.cir.value > phys.value:
                port.note(parent.shape.source, parent.shape.text, f"the shaper's rate is above the interface's "
                                                                  f"{rate_text(phys.value)}: the port runs at the "
                                                                  "shaper's rate as configured")
        else:
            if phys is None:
                raise self.error(itf.source, f"interface {itf.name}",
                                 "the interface's rate is unknown (no bandwidth or speed, and its type gives none): "
                                 f"give it in a traffic file (interfaces: {{'{cfg.host}:{itf.name}': "
                                 "{rate: ...}})")
            port.link_rate = phys
        if itf.shutdown is not None:
            port.note(itf.shutdown, "shutdown", "the interface is shut down: its port is imported as configured")
        base = port.link_rate
        for text, s in pm.other:
            port.note(s, text, f"ignored: unknown command in policy-map {pm.name}")
        self.classes(port, pm, base, parent)
        self.ring(port, itf, line)
        for s, text, effect in self.input_notes:
            port.note(s, text, effect)
        for text, s in itf.other:
            port.note(s, text, "not modelled: interface-level queueing outside MQC (the service-policy governs)")

    def ring(self, port: Port, itf: Interface, line: Field | None) -> None:
        """The transmit ring: ``tx-ring-limit`` (of the interface or its physical interface), else the platform's
        typical size for the ``line`` rate."""
        parent = self.cfg.interface(itf.parent_name) if itf.parent_name else None
        ring = itf.tx_ring or (parent.tx_ring if parent is not None else None)
        rows = default(self.family, "tx_ring")
        size = Field("packet", (), rows, "one packet per ring entry")
        if ring is not None:
            port.txq_units = given(ring[0], ring[1])
        else:
            speed = (line or port.link_rate).value
            units = next(r["units"] for r in rows.value if speed <= float(r["up_to"]))
            port.txq_units = Field(units, (), rows, f"ring of a {rate_text(speed)} interface")
        port.txq_unit_size = size

    def classes(self, port: Port, pm: PolicyMap, base: Field, parent: PolicyClass | None) -> None:
        """The port's classes from policy ``pm`` (served at ``base``): each queueing class with its matches,
        priority, policer, bandwidth, queue and dropper; an implicit class-default; the reservations checked."""
        fam = self.family
        claimed: set[int] = set()
        out: list[QueueClass] = []
        notes: list = []
        ratios: dict[str, Field] = {}
        forms: dict[str, tuple[str, Source]] = {}
        reserved: list[tuple[float, Source, str]] = []
        queued: list[tuple[QueueClass, PolicyClass]] = []
        for pc in pm.classes:
            qc = self._matched(pc, claimed, notes)
            if qc is None:
                continue
            self._priority(qc, pc, base, reserved)
            self._policers(qc, pc, base, port, notes, reserved)
            self._bandwidth(qc, pc, pm, base, forms, ratios, reserved)
            self._class_notes(qc, pc, parent, notes)
            out.append(qc)
            queued.append((qc, pc))
        if not any(c.is_default for c in out):
            qc = QueueClass("class-default", pm.source)
            qc.matches.append(("everything no other class takes (implicit class-default)", pm.source))
            ratios.setdefault("class-default", None)
            notes.append((pm.source, f"policy-map {pm.name}", "class-default not declared: it exists on the router "
                                                             "with the platform's defaults"))
            out.append(qc)
        self._ratios(out, ratios, fam)
        self._check_reserved(port, pm, base, reserved)
        # queue limits and WRED thresholds given in time need each class's guaranteed service rate, which needs
        # every reservation and every remaining share of the policy
        guaranteed = self._guaranteed_rates(out, base, reserved)
        for qc, pc in queued:
            self._queue(qc, pc, base, guaranteed[qc.name], port, notes)
        for qc in out:
            if qc.queue_limit is None:
                qc.queue_limit = self._default_queue(qc, base, guaranteed[qc.name])
        prio = sorted((c for c in out if c.priority is not None), key=lambda c: c.priority.value)
        rest = [c for c in out if c.priority is None and not c.is_default]
        port.classes = prio + rest + [c for c in out if c.is_default]
        for s, text, effect in notes:
            port.note(s, text, effect)

    def _matched(self, pc: PolicyClass, claimed: set[int], notes: list) -> QueueClass | None:
        """The class of ``pc`` with what it matches: the DSCPs of its class-map no earlier class took (added to
        ``claimed``); None for a class without a queueing action (its packets stay in class-default)."""
        queueing = any(getattr(pc, k) for k in QUEUEING) or pc.name == "class-default"
        if pc.name == "class-default":
            qc = QueueClass("class-default", pc.source)
            qc.matches.append(("everything no other class takes", pc.source))
            return qc
        cm = self.cfg.class_maps.get(pc.name)
        if cm is None:
            raise self.error(pc.source, f"class {pc.name}", f"class-map {pc.name} is not defined")
        dscps, lines, defs = self.classifier.class_map(cm, notes)
        taken = dscps & claimed
        if taken:
            notes.append((pc.source, f"class {pc.name}", f"DSCPs {', '.join(dscp.name(d) for d in sorted(taken))}"
                          " are taken by an earlier class (MQC is first-match)"))
        mine = dscps - claimed
        if not queueing:
            notes.append((pc.source, f"class {pc.name}", "no queueing action: its packets share "
                          "class-default's queue (its policers and markings are listed)"))
            for p in pc.police:
                notes.append((p.source, p.text, f"not modelled: policer of class {pc.name}, which has no queue "
                                                "of its own"))
            for s in pc.sets:
                notes.append((s.source, s.text, "ignored: marking only (output policy)"))
            return None
        claimed |= mine
        qc = QueueClass(pc.name, pc.source)
        qc.dscp = _dscp_field(mine, lines, defs)
        qc.matches += [(m.text, m.source) for m in cm.matches]
        self.classifier.match_values(cm, qc)
        return qc

    def _priority(self, qc: QueueClass, pc: PolicyClass, base: Field, reserved: list) -> None:
        """``priority [level] [rate]``: the class's level and, with a rate, its congestion-time policer."""
        if pc.priority is None:
            return
        pr = pc.priority
        qc.priority = given(pr.level or 1, pr.source)
        if pc.bandwidth is not None:
            raise self.error(pc.bandwidth.source, pc.bandwidth.text, "bandwidth in a priority class "
                                                                    "(IOS accepts one of the two)")
        if pr.rate is not None:
            cir = self.rate(pr.rate, base, pr.source, pr.text)
            if pr.burst is not None:
                cbs = given(pr.burst.value, pr.source)
            else:
                d = default(self.family, "priority_burst_time")
                cbs = Field(cir.value * d.value / 8.0, (), d, f"{d.value:g} s of {rate_text(cir.value)}",
                            (cir,))
            qc.police = Police(cir, cbs, conditional=given(True, pr.source,
                                                           how="priority's policer acts under congestion"))
            reserved.append((cir.value, pr.source, pr.text))

    def _policers(self, qc: QueueClass, pc: PolicyClass, base: Field, port: Port, notes: list,
                  reserved: list) -> None:
        """An explicit ``police`` (the first; a second is noted): always active, replacing priority's."""
        polices = list(pc.police)
        if len(polices) > 1:
            for p in polices[1:]:
                notes.append((p.source, p.text, "not modelled: a second policer in the class"))
        if polices:
            police = self.policer(polices[0], base, port, qc.name)
            if qc.priority is not None and qc.police is not None:
                notes.append((polices[0].source, polices[0].text, "the explicit policer replaces priority's "
                              "congestion-time policer"))
                reserved[:] = [r for r in reserved if r[1] != pc.priority.source]
            if qc.priority is not None:
                police.conditional = given(False, polices[0].source, how="an explicit police is always active")
                reserved.append((police.cir.value, polices[0].source, polices[0].text))
            qc.police = police
            qc.rate_cap = police.drop_rate()

    def _bandwidth(self, qc: QueueClass, pc: PolicyClass, pm: PolicyMap, base: Field, forms: dict, ratios: dict,
                   reserved: list) -> None:
        """``bandwidth`` in one form per policy (rate, percent or remaining); remaining ratios are resolved
        later (:meth:`_ratios`)."""
        if pc.bandwidth_also is not None:
            a = pc.bandwidth_also
            raise self.error(a.source, a.text, f"class {pc.name} has a minimum bandwidth and a remaining share "
                                               f"('{pc.bandwidth.text}' at line {pc.bandwidth.source.line}): the port "
                                               "has one bandwidth per class, so this two-part guarantee is not "
                                               "modelled", refused=True)
        if pc.bandwidth is not None:
            b = pc.bandwidth
            form = {"rate": "rate", "percent": "percent", "remaining-percent": "remaining",
                    "remaining-ratio": "remaining"}[b.kind]
            for other_form, (osrc_text, osrc) in forms.items():
                if other_form != form:
                    raise self.error(b.source, b.text, f"mixes bandwidth forms in policy {pm.name}: "
                                                       f"'{osrc_text}' at line {osrc.line} is another form "
                                                       "(one form per policy)")
            forms.setdefault(form, (b.text, b.source))
            if b.kind == "rate":
                qc.bandwidth = given(Bandwidth("rate", b.value), b.source)
                reserved.append((b.value, b.source, b.text))
            elif b.kind == "percent":
                qc.bandwidth = given(Bandwidth("percent", b.value), b.source)
                reserved.append((base.value * b.value / 100.0, b.source, b.text))
            elif b.kind == "remaining-percent":
                qc.bandwidth = given(Bandwidth("remaining", b.value), b.source)
            else:
                ratios[qc.name] = given(b.value, b.source)
        elif qc.priority is None:
            ratios.setdefault(qc.name, None)

    def _queue(self, qc: QueueClass, pc: PolicyClass, base: Field, guaranteed: Field, port: Port,
               notes: list) -> None:
        """The class's queue limit (``queue-limit`` in packets, else the platform's default) and WRED dropper;
        sizes in time are taken at the class's ``guaranteed`` service rate."""
        if pc.queue_limit is not None:
            q = pc.queue_limit
            qc.queue_limit = self.packets(q.size, guaranteed, q.source, q.text)
            if q.size.kind != "packets":
                notes.append((q.source, q.text, "approximated: a byte or time queue limit counted in full-size "
                                                "packets (with smaller packets the router's queue holds more)"))
        else:
            qc.queue_limit = self._default_queue(qc, base, guaranteed)
        if pc.wred is not None:
            # class-default's traffic is taken as unmarked (DF): its drop precedence
            keys = [dscp.parse(n) for n in qc.dscp.value] if qc.dscp is not None else [0]
            if not keys:
                notes.append((pc.wred.source, pc.wred.text, "ignored: WRED in a class that matches no DSCP"))
            else:
                qc.dropper = self.dropper(pc.wred, keys, guaranteed, port, qc.queue_limit)

    def _class_notes(self, qc: QueueClass, pc: PolicyClass, parent: PolicyClass | None, notes: list) -> None:
        """The class's commands that do not change its queueing: fair-queue, a per-class shaper, markings, others."""
        if pc.fair_queue is not None:
            notes.append((pc.fair_queue, "fair-queue", "not modelled: per-flow fair queueing inside the class; "
                          "the class is one FIFO queue (a light flow's delay is over-estimated)"))
        if pc.shape is not None and pc is not parent:
            notes.append((pc.shape.source, pc.shape.text, f"not modelled: a per-class shaper in class {qc.name}: "
                          "the router serves it no faster than the shaper, the port model may serve it faster "
                          "(its bounds are then not upper bounds)"))
        for s in pc.sets:
            notes.append((s.source, s.text, "ignored: marking only (output policy)"))
        for text, s, effect in pc.other:
            word = text.split()[0].lower()
            notes.append((s, text, effect or _NOT_MODELLED.get(word, "ignored: unknown command")))

    def _check_reserved(self, port: Port, pm: PolicyMap, base: Field, reserved: list) -> None:
        """Refuse priority and bandwidth reservations above the port's rate, and remaining percentages above
        100 %."""
        total = sum(r[0] for r in reserved)
        if total > base.value * (1 + 1e-9):
            lines = ", ".join(f"line {r[1].line} ({r[2]})" for r in reserved)
            raise self.error(reserved[-1][1], reserved[-1][2],
                             f"priority and bandwidth reserve {rate_text(total)}, more than the "
                             f"{rate_text(base.value)} of the {'shaper' if port.shaper else 'interface'} "
                             f"({total / base.value:.0%}): {lines}")
        rem = [(pc.bandwidth.value, pc.bandwidth.source, pc.bandwidth.text) for pc in pm.classes
               if pc.bandwidth is not None and pc.bandwidth.kind == "remaining-percent"]
        if sum(a for a, _, _ in rem) > 100 + 1e-9:
            lines = ", ".join(f"line {s.line} ({t})" for _, s, t in rem)
            raise self.error(rem[-1][1], rem[-1][2], f"bandwidth remaining percentages add up to "
                             f"{sum(a for a, _, _ in rem):g} % (at most 100 %): {lines}")

    def _ratios(self, out: list[QueueClass], ratios: dict[str, Field | None], fam: str) -> None:
        """``bandwidth remaining ratio`` -> ``remaining N %`` over the classes that share the excess."""
        if not any(v is not None for v in ratios.values()):
            return
        d = default(fam, "remaining_ratio")
        fields = {n: (v if v is not None else Field(d.value, (), d)) for n, v in ratios.items()}
        total = sum(f.value for f in fields.values())
        for c in out:
            if c.name in fields:
                f = fields[c.name]
                others = tuple(v for n, v in fields.items() if n != c.name)
                c.bandwidth = f.derive(Bandwidth("remaining", 100.0 * f.value / total),
                                       f"remaining ratio {f.value:g} of {total:g}", *others)

    def _guaranteed_rates(self, out: list[QueueClass], base: Field, reserved: list) -> dict[str, Field]:
        """Each class's guaranteed service rate, the rate at which a time-based size becomes bytes: a priority
        class's policer rate (the port's rate without one); for the others, Cisco's "guaranteed service rate" (IOS
        XR Modular QoS Command Reference, queue-limit): the class's minimum bandwidth plus its remaining share of
        the unallocated rate (the port's rate less every priority and bandwidth reservation). A class without a
        remaining share takes an equal part of what the stated remaining percentages leave (as Cisco's example
        there computes it); the excess that idle classes leave is not counted (it is not guaranteed)."""
        unalloc_v = max(0.0, base.value - sum(r[0] for r in reserved))
        unalloc = base.derive(unalloc_v, f"{rate_text(base.value)} less the priority and bandwidth reservations",
                              given(sum(r[0] for r in reserved), *(r[1] for r in reserved)))
        sharing = [c for c in out if c.priority is None]
        stated = [c for c in sharing if c.bandwidth is not None and c.bandwidth.value.kind == "remaining"]
        rest = [c for c in sharing if c not in stated]
        left = max(0.0, 100.0 - sum(c.bandwidth.value.amount for c in stated))
        out_rates: dict[str, Field] = {}
        for c in out:
            if c.priority is not None:
                out_rates[c.name] = c.police.cir if c.police is not None else base
                continue
            if c in stated:
                pct, why = c.bandwidth.value.amount, "its remaining share"
            else:
                pct, why = left / len(rest), f"an equal part of the {left:g} % no remaining percentage takes"
            minimum = 0.0
            if c.bandwidth is not None and c.bandwidth.value.kind == "rate":
                minimum = c.bandwidth.value.amount
            elif c.bandwidth is not None and c.bandwidth.value.kind == "percent":
                minimum = base.value * c.bandwidth.value.amount / 100.0
            v = minimum + unalloc_v * pct / 100.0
            inputs = (unalloc,) + ((c.bandwidth,) if c.bandwidth is not None else ())
            out_rates[c.name] = unalloc.derive(v, f"guaranteed service rate: {rate_text(minimum)} + {pct:.4g} % "
                                                  f"({why}) of the unallocated {rate_text(unalloc_v)}", *inputs[1:])
        return out_rates

    def _default_queue(self, qc: QueueClass, base: Field, guaranteed: Field | None) -> Field:
        fam = self.family
        if fam == "ios-xr":
            d = default(fam, "queue_limit_time")
            t = d.value["priority"] if qc.priority is not None else d.value["bandwidth"]
            rate = base if qc.priority is not None or guaranteed is None else guaranteed
            size = default(fam, "packet_size")
            n = max(1, math.floor(rate.value * t / 8.0 / size.value))
            return Field(n, (), d, f"{t * 1e3:g} ms of {rate_text(rate.value)} in {size.value} B packets",
                         (rate, Field(size.value, (), size)))
        return default_field(fam, "queue_limit")


def ios_ports(cfg: IosConfig, traffic: TrafficSpec) -> tuple[list[Port], list[str]]:
    """One port per interface with an output policy (refusals recorded on the port), and file-level notes
    (policies never attached, input-only interfaces)."""
    sem = _Semantics(cfg, traffic)
    ports, notes = [], []
    attached = set()
    for itf in cfg.interfaces:
        for att in itf.policies:
            attached.add(att.policy)
            if att.direction == "output":
                ports.append(sem.port(itf, att))
            else:
                notes.append(f"{att.source}: service-policy input {att.policy} on {itf.name}: no queues of its own "
                             "(its markings and policers are applied to the output ports' classification and notes)")
    for name, pm in cfg.policy_maps.items():
        children = {c.child[0] for c in pm.classes if c.child}
        attached |= children if name in attached else set()
    for name, pm in cfg.policy_maps.items():
        if name not in attached:
            notes.append(f"{pm.source}: policy-map {name}: never attached to an interface (not imported)")
    for n in cfg.notes:
        notes.append(str(n))
    return ports, notes
