"""Which packets a Cisco MQC class takes: the DSCPs of its class-map (first match, nested class-maps, negation),
its classification by precedence, EXP, CoS or qos-group, and the qos-group / traffic-class values the input
policies of the same router set (two-stage classification). :mod:`qosbound.configs.ios_semantics` builds the
port's classes on it.
"""

from __future__ import annotations

from qosbound import dscp
from qosbound.configs.defaults import default
from qosbound.configs.ios_ast import ClassMap, IosConfig, Match
from qosbound.configs.port import QueueClass
from qosbound.configs.source import Source
from qosbound.configs.values import Default
from qosbound.errors import ConfigError, ConfigRefused

__all__ = ["Classifier", "config_error", "QUEUEING"]

#: The policy-class commands that give a class a queue of its own.
QUEUEING = ("priority", "bandwidth", "queue_limit", "wred", "fair_queue", "shape")


def config_error(src: Source, construct: str, problem: str, refused: bool = False) -> ConfigError:
    """The error (``refused``: a construct the port model refuses) of one configuration line."""
    cls = ConfigRefused if refused else ConfigError
    return cls(problem, file=src.file, line=src.line, construct=construct)


class Classifier:
    """The classification of one configuration; built once, it first reads the input policies."""

    def __init__(self, cfg: IosConfig):
        self.cfg = cfg
        self.family = cfg.dialect
        self.groups: dict[tuple[str, str], tuple[set[int], list[Source], list[Default]]] = {}
        self.input_notes: list[tuple[Source, str, str]] = []
        self._ingress()

    def error(self, src: Source, construct: str, problem: str, refused: bool = False) -> ConfigError:
        return config_error(src, construct, problem, refused)

    def criterion(self, m: Match, notes: list, depth: int = 0) -> tuple[set[int] | None, list[Source], list[Default]]:
        """The DSCPs one match criterion selects (None: not expressible by DSCP), its lines, its assumptions."""
        src = [m.source]
        if m.kind == "dscp":
            out = set()
            for v in m.values:
                d = dscp.parse(v)
                if d is None:
                    raise self.error(m.source, m.text, f"'{v}' is not a DSCP")
                out.add(d)
            return out, src, []
        if m.kind == "precedence":
            out = set()
            for v in m.values:
                p = dscp.precedence_value(v)
                if p is None:
                    raise self.error(m.source, m.text, f"'{v}' is not an IP precedence (0-7)")
                out.update(dscp.precedence_dscps(p))
            return out, src, []
        if m.kind in ("mpls-exp", "cos"):
            out = set()
            for v in m.values:
                if not (v.isdigit() and 0 <= int(v) <= 7):
                    raise self.error(m.source, m.text, f"'{v}' is not an {'EXP' if m.kind == 'mpls-exp' else 'CoS'} "
                                                       "value (0-7)")
                out.update(dscp.precedence_dscps(int(v)))
            return out, src, [default(self.family, "exp_from_precedence")]
        if m.kind in ("qos-group", "traffic-class"):
            out, lines, defs = set(), list(src), []
            for v in m.values:
                hit = self.groups.get((m.kind, v))
                if hit is None:
                    notes.append((m.source, m.text, f"matches {m.kind} {v}, which no input policy of this "
                                                    "configuration sets: it selects no DSCP (give the class's "
                                                    "traffic by name in a traffic file)"))
                    continue
                out.update(hit[0])
                lines += hit[1]
                defs += [d for d in hit[2] if d not in defs]
            return out, lines, defs
        if m.kind == "any":
            return set(dscp.ALL), src, []
        if m.kind == "class-map":
            if depth > 8 or not m.values:
                raise self.error(m.source, m.text, "nested class-maps too deep (a cycle?)")
            cm = self.cfg.class_maps.get(m.values[0])
            if cm is None:
                raise self.error(m.source, m.text, f"class-map {m.values[0]} is not defined")
            d, lines, defs = self.class_map(cm, notes, depth + 1)
            return d, [*src, *lines], defs
        what = {"access-group": "an access-list match (addresses, ports)", "protocol": "an NBAR protocol match",
                "discard-class": "a discard-class match"}.get(m.kind, "a criterion other than DSCP")
        notes.append((m.source, m.text, f"not modelled: {what}; the port classifies by DSCP only (give the class's "
                                        "traffic by name in a traffic file)"))
        return None, src, []

    def class_map(self, cm: ClassMap, notes: list, depth: int = 0) -> tuple[set[int], list[Source], list[Default]]:
        """The DSCPs a class-map selects, the lines that decided it and the defaults assumed."""
        sets, lines, defs = [], [cm.source], []
        for m in cm.matches:
            d, ls, ds = self.criterion(m, notes, depth)
            lines += ls
            defs += [x for x in ds if x not in defs]
            if d is not None and m.negate:
                d = set(dscp.ALL) - d
            elif d is None and m.negate:
                continue
            sets.append(d)
        for text, s in cm.other:
            notes.append((s, text, f"ignored: unknown command in class-map {cm.name}"))
        known = [s for s in sets if s is not None]
        if cm.kind == "match-any":
            out = set().union(*known) if known else set()
        else:
            out = set(dscp.ALL)
            for s in known:
                out &= s
            if not known:
                out = set()
            if len(known) > 1 and not out:
                notes.append((cm.source, f"class-map match-all {cm.name}",
                              "its DSCP criteria have no value in common (a packet carries one DSCP): the class "
                              "matches no packet, as on the router (match-any was perhaps meant)"))
            if len(known) < len(sets) and known:
                notes.append((cm.source, f"class-map match-all {cm.name}",
                              "not modelled: the criteria other than DSCP narrow the class further; the port takes "
                              "every packet of its DSCPs"))
        return out, lines, defs

    def match_values(self, cm: ClassMap, qc: QueueClass, depth: int = 0) -> None:
        """The class's classification by precedence, EXP / traffic-class, CoS or qos-group (the port's
        ``match``), with the lines."""
        kinds = {"precedence": "precedence", "mpls-exp": "exp", "traffic-class": "exp", "cos": "cos",
                 "qos-group": "qos_group"}
        for m in cm.matches:
            if m.kind == "class-map" and m.values and depth < 8 and m.values[0] in self.cfg.class_maps:
                self.match_values(self.cfg.class_maps[m.values[0]], qc, depth + 1)
            elif m.kind in kinds and not m.negate:
                vals = {dscp.precedence_value(v) if m.kind == "precedence" else (int(v) if v.isdigit() else None)
                        for v in m.values}
                vals.discard(None)
                if vals:
                    qc.match.setdefault(kinds[m.kind], set()).update(vals)
                    qc.match_sources.append(m.source)

    def _ingress(self) -> None:
        """qos-group / traffic-class values the input policies set, with the DSCPs they set them for."""
        for itf in self.cfg.interfaces:
            for att in itf.policies:
                if att.direction != "input":
                    continue
                pm = self.cfg.policy_maps.get(att.policy)
                if pm is None:
                    self.input_notes.append((att.source, f"service-policy input {att.policy}",
                                             f"policy-map {att.policy} is not defined: the input policy is ignored"))
                    continue
                claimed: set[int] = set()
                for pc in pm.classes:
                    notes: list = []
                    defs: list = []
                    if pc.name == "class-default":
                        dscps, lines = set(dscp.ALL) - claimed, [pc.source]
                    else:
                        cm = self.cfg.class_maps.get(pc.name)
                        if cm is None:
                            self.input_notes.append((pc.source, f"class {pc.name}", f"class-map {pc.name} is not "
                                                     f"defined: class ignored in input policy {pm.name}"))
                            continue
                        d, lines, defs = self.class_map(cm, notes)
                        dscps = d - claimed
                    claimed |= dscps
                    for s in pc.sets:
                        if s.what in ("qos-group", "traffic-class"):
                            key = (s.what, s.value)
                            old = self.groups.get(key, (set(), [], []))
                            self.groups[key] = (old[0] | dscps, old[1] + lines + [s.source],
                                                old[2] + [x for x in defs if x not in old[2]])
                        elif s.what in ("dscp", "precedence"):
                            self.input_notes.append((s.source, s.text,
                                                     f"input marking on {itf.name}: the output classes see the new "
                                                     "value; traffic given by DSCP is taken as seen at the output"))
                        else:
                            self.input_notes.append((s.source, s.text, f"ignored: input marking on {itf.name} "
                                                                       "(marking only, no effect on DSCP queueing)"))
                    for p in pc.police:
                        self.input_notes.append((p.source, p.text,
                                                 f"not modelled: input policer on {itf.name} (class {pc.name}); what "
                                                 "it lets through is not used to limit the output classes' offered "
                                                 "traffic (taken from the traffic file or the defaults: conservative)"))
                    for k in QUEUEING:
                        if getattr(pc, k):
                            self.input_notes.append((pc.source, f"class {pc.name}",
                                                     f"not modelled: queueing in input policy {pm.name} on "
                                                     f"{itf.name}"))
                            break
