"""The queueing meaning of Junos ``class-of-service``: one :class:`~qosbound.configs.port.Port` per interface (or
logical unit) with a scheduler map, given directly or by an output traffic-control profile.

* forwarding classes in the scheduler map -> the port's classes; the one that takes unclassified packets (queue 0,
  ``best-effort`` by default) is ``class-default``; a class's DSCPs are the code points the classifiers in use
  (``classifiers dscp|exp|ieee-802.1``, applied on units; the Junos default classifier when none is) map to it;
* scheduler ``priority strict-high`` -> priority level 1 (policed only by ``transmit-rate ... rate-limit`` /
  ``exact``); ``high`` -> priority level 2 with a congestion-time policer at its transmit rate (approximated: Junos
  serves the excess at low priority instead of dropping it); ``medium-high`` / ``medium-low`` / ``low`` ->
  bandwidth classes with their ``transmit-rate`` (``percent``, a rate, or ``remainder``: the share the others
  leave, split equally);
* ``buffer-size percent`` / ``temporal`` -> ``queue_limit`` (a share of the port's delay buffer in full-size
  packets; none: the transmit-rate's percentage);
* ``drop-profile-map loss-priority L protocol any drop-profile P`` with the classifiers' loss priorities -> WRED
  thresholds per DSCP (fill levels in % of the queue; a profile that is not one straight ramp is approximated by
  its chord, noted);
* interface ``shaping-rate`` -> the parent shaper.
"""

from __future__ import annotations

import math
import re

from qosbound.configs.defaults import default, default_field
from qosbound import dscp
from qosbound.configs.formatting import rate_text
from qosbound.configs.junos_tree import JunosSyntaxError, Statement, parse_curly, parse_set
from qosbound.configs.port import Bandwidth, Dropper, Police, Port, QueueClass, Shaper, Threshold
from qosbound.configs.source import ConfigText, Source
from qosbound.configs.traffic import TrafficSpec
from qosbound.configs.values import Field, given
from qosbound.errors import ConfigError

__all__ = ["junos_ports", "junos_rate"]

_DSCP_ALIASES = {"be": 0, "nc1": 48, "nc2": 56}
_LOSS = ("low", "medium-low", "medium-high", "high")


def junos_rate(text: str) -> float | None:
    """``10m`` -> 1e7 bit/s; ``100k``; ``1g``; a bare number is bit/s."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)", text.lower())
    if not m:
        return None
    return float(m.group(1)) * {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]


def _code_point(kind: str, cp: str) -> list[int] | None:
    """DSCPs a classifier code point stands for (EXP and 802.1p by their precedence)."""
    if kind in ("dscp", "dscp-ipv6"):
        if re.fullmatch(r"[01]{6}", cp):
            return [int(cp, 2)]
        v = _DSCP_ALIASES.get(cp.lower(), dscp.parse(cp))
        return [v] if v is not None else None
    if re.fullmatch(r"[01]{3}", cp):
        return dscp.precedence_dscps(int(cp, 2))
    alias = {"be": 0, "be1": 1, "ef": 2, "ef1": 3, "af11": 4, "af12": 5, "nc1": 6, "nc2": 7}.get(cp.lower())
    return dscp.precedence_dscps(alias) if alias is not None else None


def _number(word: str, src: Source, path: tuple[str, ...]) -> float:
    """A number of a class-of-service statement, or an error naming its line."""
    try:
        v = float(word)
    except ValueError:
        v = math.nan
    if not math.isfinite(v):
        raise ConfigError(f"expected a number, got '{word}'", file=src.file, line=src.line,
                          construct="class-of-service " + " ".join(path))
    return v


class _Cos:
    """The class-of-service statements gathered by object."""

    def __init__(self, cfg: ConfigText, statements: list[Statement]):
        self.cfg = cfg
        self.notes: list[tuple[Source, str, str]] = []
        self.host = ""
        self.fcs: dict[str, tuple[int, Source]] = {}
        self.classifiers: dict[tuple[str, str], list[tuple[str, str, str, Source]]] = {}
        self.imports: dict[tuple[str, str], tuple[str, Source]] = {}
        #: user code-point aliases: (type, name) -> bits
        self.aliases: dict[tuple[str, str], str] = {}
        self.schedulers: dict[str, dict] = {}
        self.profiles: dict[str, dict] = {}
        self.smaps: dict[str, list[tuple[str, str, Source]]] = {}
        self.tcps: dict[str, dict] = {}
        self.itfs: dict[str, dict] = {}
        self.speeds: dict[str, tuple[float, Source]] = {}
        for s in statements:
            src = cfg.at(s.line)
            if s.inactive:
                if s.starts("class-of-service"):
                    self.notes.append((src, " ".join(s.path), "ignored: inactive"))
                continue
            p = s.path
            if p[:2] == ("system", "host-name") and len(p) > 2:
                self.host = p[2]
            elif p[:1] == ("interfaces",) and len(p) > 3 and p[2] == "speed":
                r = junos_rate(p[3])
                if r:
                    self.speeds[p[1]] = (r, src)
            elif p[:1] == ("class-of-service",) and len(p) > 1:
                self.cos(p[1:], src)
            elif p[:1] == ("groups",) and "class-of-service" in p:
                self.notes.append((src, " ".join(p), "not modelled: configuration groups are not expanded"))

    def cos(self, p: tuple[str, ...], src: Source) -> None:
        """One ``class-of-service`` statement (``p`` without that word), filed by the object it configures."""
        text = "class-of-service " + " ".join(p)
        head = p[0]
        if head == "forwarding-classes" and len(p) >= 3:
            if p[1] == "class" and len(p) >= 5 and p[3] == "queue-num":
                self.fcs[p[2]] = (int(_number(p[4], src, p)), src)
            elif p[1] == "queue" and len(p) >= 4:
                self.fcs[p[3]] = (int(_number(p[2], src, p)), src)
        elif head == "classifiers" and len(p) >= 8 and p[3] == "forwarding-class":
            self.classifier(p, src)
        elif head == "classifiers" and len(p) == 5 and p[3] == "import":
            # the code points this classifier does not name follow the imported one (or the default classifier)
            self.imports[(p[1], p[2])] = (p[4], src)
            self.classifiers.setdefault((p[1], p[2]), [])
        elif head == "schedulers" and len(p) >= 3:
            self.scheduler(p, src, text)
        elif head == "drop-profiles" and len(p) >= 4:
            self.drop_profile(p, src)
        elif head == "scheduler-maps" and len(p) >= 6 and p[2] == "forwarding-class" and p[4] == "scheduler":
            self.smaps.setdefault(p[1], []).append((p[3], p[5], src))
        elif head == "traffic-control-profiles" and len(p) >= 4:
            t = self.tcps.setdefault(p[1], {"source": src})
            if p[2] in ("scheduler-map", "shaping-rate"):
                t[p[2]] = (p[3:], src)
            elif p[2] in ("guaranteed-rate", "delay-buffer-rate"):
                self.notes.append((src, text, "not modelled: the delay buffer is taken as 100 ms of the shaping "
                                              "rate (Junos bases it on delay-buffer-rate, else guaranteed-rate): "
                                              "buffer-size percentages are then of another rate; the guaranteed "
                                              "rate among the port's units is not modelled (one unit per port)"))
            else:  # excess-rate, overhead-accounting, adjust-minimum, ...
                self.notes.append((src, text, "not modelled: traffic-control profile statement"))
        elif head == "interfaces" and len(p) >= 3:
            self.interface(p, src, text)
        elif head == "code-point-aliases" and len(p) >= 4:
            self.aliases[(p[1], p[2])] = p[3]  # code-point-aliases dscp NAME BITS
        elif head in ("rewrite-rules", "host-outbound-traffic", "system-defaults"):
            pass
        else:
            self.notes.append((src, text, "ignored: not a queueing statement"))

    def classifier(self, p: tuple[str, ...], src: Source) -> None:
        """``classifiers TYPE NAME forwarding-class FC loss-priority LP code-points CP``."""
        kind, name, fc = p[1], p[2], p[4]
        lp = p[6] if p[5] == "loss-priority" else "low"
        if "code-points" in p:
            cp = p[p.index("code-points") + 1] if p.index("code-points") + 1 < len(p) else None
            if cp is not None:
                self.classifiers.setdefault((kind, name), []).append((fc, lp, cp, src))

    def scheduler(self, p: tuple[str, ...], src: Source, text: str) -> None:
        """``schedulers NAME ...``: transmit rate, buffer size, priority, drop-profile map; the rest kept as text."""
        sch = self.schedulers.setdefault(p[1], {"source": src, "dpm": [], "other": []})
        k = p[2]
        if k == "transmit-rate" and len(p) >= 4:
            if p[3] in ("rate-limit", "exact"):  # `transmit-rate { percent 20; rate-limit; }`: its own statement
                sch["transmit_extra"] = sch.get("transmit_extra", ()) + (p[3],)
                if "transmit" in sch:
                    kind, val, tsrc, extra = sch["transmit"]
                    sch["transmit"] = (kind, val, tsrc, tuple(extra) + (p[3],))
            elif p[3] == "percent" and len(p) >= 5:
                sch["transmit"] = ("percent", _number(p[4], src, p), src, p[5:] + sch.get("transmit_extra", ()))
            elif p[3] == "remainder":
                sch["transmit"] = ("remainder", None, src, p[4:] + sch.get("transmit_extra", ()))
            else:
                r = junos_rate(p[3])
                if r is None:
                    raise ConfigError(f"cannot read the rate '{p[3]}'", file=src.file, line=src.line,
                                      construct=text)
                sch["transmit"] = ("rate", r, src, p[4:] + sch.get("transmit_extra", ()))
        elif k == "buffer-size" and len(p) >= 4:
            if p[3] == "percent" and len(p) >= 5:
                sch["buffer"] = ("percent", _number(p[4], src, p), src)
            elif p[3] == "temporal" and len(p) >= 5:
                sch["buffer"] = ("temporal", float(junos_rate(p[4]) or 0), src)
            elif p[3] == "remainder":
                sch["buffer"] = ("remainder", None, src)
        elif k == "priority" and len(p) >= 4:
            sch["priority"] = (p[3], src)
        elif k == "drop-profile-map" and "drop-profile" in p:
            lp = p[p.index("loss-priority") + 1] if "loss-priority" in p else "any"
            proto = p[p.index("protocol") + 1] if "protocol" in p else "any"
            sch["dpm"].append((lp, proto, p[p.index("drop-profile") + 1], src))
        else:  # excess-rate, excess-priority, shaping-rate, adjust-minimum, ecn, ...
            sch["other"].append((text, src))

    def drop_profile(self, p: tuple[str, ...], src: Source) -> None:
        """``drop-profiles NAME [interpolate] fill-level F drop-probability P``."""
        dp = self.profiles.setdefault(p[1], {"source": src, "interpolate": False, "fill": [], "prob": []})
        q = p[2:]
        if q[0] == "interpolate":
            dp["interpolate"] = True
            q = q[1:]
        if len(q) >= 2 and q[0] == "fill-level":
            dp["fill"].append((_number(q[1], src, p), src))
            if len(q) >= 4 and q[2] == "drop-probability":
                dp["prob"].append((_number(q[3], src, p), src))
        elif len(q) >= 2 and q[0] == "drop-probability":
            dp["prob"].append((_number(q[1], src, p), src))

    def interface(self, p: tuple[str, ...], src: Source, text: str) -> None:
        """``interfaces NAME [unit N] ...``: the scheduler map, traffic-control profile, shaping rate, classifiers."""
        name = p[1]
        rest = p[2:]
        if rest[0] == "unit" and len(rest) >= 3:
            name, rest = f"{p[1]}.{rest[1]}", rest[2:]
        it = self.itfs.setdefault(name, {"source": src, "classifiers": []})
        if rest[0] in ("scheduler-map", "output-traffic-control-profile", "shaping-rate") and len(rest) >= 2:
            it[rest[0]] = (rest[1:], src)
        elif rest[0] == "classifiers" and len(rest) >= 3:
            it["classifiers"].append((rest[1], rest[2], src))
        elif rest[0] in ("rewrite-rules", "forwarding-class", "loss-priority-maps"):
            pass
        else:
            self.notes.append((src, text, "ignored: interface class-of-service statement not modelled"))


class _Ports:
    def __init__(self, cos: _Cos, fmt_name: str, traffic: TrafficSpec, host: str):
        self.cos, self.fmt, self.traffic, self.host = cos, fmt_name, traffic, host

    def err(self, src: Source, text: str, problem: str) -> ConfigError:
        return ConfigError(problem, file=src.file, line=src.line, construct=text)

    def classification(self, egress: str) -> tuple[dict[int, tuple[str, str, Source]], Field | None]:
        """DSCP -> (forwarding class, loss priority, line) for the traffic leaving ``egress``: the classifiers
        applied on the router's other interfaces (where that traffic arrives); all defined ones when none is
        applied; the Junos default classifier when none is defined."""
        cos = self.cos
        phys = egress.split(".")[0]
        used = {(k, n) for name, it in cos.itfs.items() if name.split(".")[0] != phys
                for k, n, _ in it["classifiers"]}
        keys = [k for k in cos.classifiers if k in used] or list(cos.classifiers)
        for k, n, s in ((k, n, s) for it in cos.itfs.values() for k, n, s in it["classifiers"]):
            if (k, n) not in cos.classifiers and n not in ("default", "dscp-default", "exp-default",
                                                           "ieee8021p-default", "ipprec-compatibility"):
                cos.notes.append((s, f"classifiers {k} {n}", f"classifier {n} is not defined: ignored"))
        out: dict[int, tuple[str, str, Source]] = {}
        dflt = None
        self.by_precedence: dict[str, dict[str, set[int]]] = {}
        for key in sorted(keys, key=lambda k: k[0] not in ("dscp", "dscp-ipv6")):
            for fc, lp, cp, src in cos.classifiers[key]:
                ds = _code_point(key[0], cos.aliases.get((key[0], cp), cp))
                if ds is None:
                    raise self.err(src, f"code-points {cp}", f"'{cp}' is not a {key[0]} code point")
                if key[0] not in ("dscp", "dscp-ipv6"):
                    kind = "exp" if key[0] in ("exp", "inet-precedence") else "cos"
                    kind = "precedence" if key[0] == "inet-precedence" else kind
                    self.by_precedence.setdefault(fc, {}).setdefault(kind, set()).add(ds[0] // 8)
                for d in ds:
                    out.setdefault(d, (fc, lp, src))
        for key in keys:
            self.imported(key, out)
        if not keys:
            d = default("junos", "classifier_dscp")
            dflt = Field(d.value, (), d)
            for name, fc in d.value.items():
                out[dscp.parse(name)] = (fc, "low", None)
        return out, dflt

    def imported(self, key: tuple[str, str], out: dict[int, tuple[str, str, Source]]) -> None:
        """``classifiers dscp NAME import default`` (or ``import OTHER``): the DSCPs NAME does not name take the
        default classifier's forwarding class -- the configured class on the default class's queue, as Junos
        renames queues -- or OTHER's. Only DSCP classifiers import DSCPs; other types are noted."""
        cos = self.cos
        if key not in cos.imports:
            return
        target, src = cos.imports[key]
        if key[0] not in ("dscp", "dscp-ipv6"):
            cos.notes.append((src, f"classifiers {key[0]} {key[1]} import {target}", "not modelled: the imported "
                              "code points of a non-DSCP classifier (the class takes only the values listed)"))
            return
        if target == "default":
            d = default("junos", "classifier_dscp")
            by_queue = {q: fc for fc, (q, _) in cos.fcs.items()}
            dflt_queue = default("junos", "forwarding_classes").value
            for name, fc in d.value.items():
                q = dflt_queue.get(fc)
                out.setdefault(dscp.parse(name), (by_queue.get(q, fc), "low", src))
            return
        other = cos.classifiers.get((key[0], target))
        if other is None:
            raise self.err(src, f"import {target}", f"classifier {target} is not defined")
        for fc, lp, cp, osrc in other:
            for d in _code_point(key[0], cos.aliases.get((key[0], cp), cp)) or []:
                out.setdefault(d, (fc, lp, osrc))

    def port(self, name: str, it: dict) -> Port | None:
        cos = self.cos
        smap = it.get("scheduler-map")
        shaping = it.get("shaping-rate")
        tcp_src = None
        if "output-traffic-control-profile" in it:
            tname, tsrc = it["output-traffic-control-profile"][0][0], it["output-traffic-control-profile"][1]
            tcp = cos.tcps.get(tname)
            if tcp is None:
                port = Port(self.host, name, "out", self.fmt, "junos", tsrc)
                port.refusals.append(self.err(tsrc, f"output-traffic-control-profile {tname}",
                                              f"traffic-control profile {tname} is not defined"))
                return port
            smap = tcp.get("scheduler-map", smap)
            shaping = tcp.get("shaping-rate", shaping)
            tcp_src = tsrc
        if smap is None:
            return None
        mname, msrc = smap[0][0], smap[1]
        port = Port(self.host, name, "out", self.fmt, "junos", tcp_src or msrc, policy=f"scheduler-map {mname}")
        phys_it = cos.itfs.get(name.split(".")[0]) if "." in name else None
        if shaping is None and phys_it is not None:
            # a shaping rate on the physical interface (or its traffic-control profile) shapes every unit's
            # traffic: the unit's queues drain at it
            shaping = phys_it.get("shaping-rate")
            ptcp = phys_it.get("output-traffic-control-profile")
            if shaping is None and ptcp is not None and ptcp[0][0] in cos.tcps:
                shaping = cos.tcps[ptcp[0][0]].get("shaping-rate")
            units = [n for n in cos.itfs if n.startswith(name.split(".")[0] + ".") and n != name]
            if shaping is not None and units:
                port.note(shaping[1], "shaping-rate " + " ".join(shaping[0]), "approximated: the physical "
                          f"interface's shaper is shared with {', '.join(units)}; this port is modelled as if it "
                          "had the shaper alone")
        try:
            self.build(port, name, mname, msrc, shaping)
        except ConfigError as e:
            port.refusals.append(e)
        return port

    def build(self, port: Port, name: str, mname: str, msrc: Source, shaping) -> None:
        """The classes of ``port`` from scheduler map ``mname``: its rate, one class per forwarding class the map
        schedules (matches, service, queue, dropper), the bandwidth shares, and a class-default."""
        cos = self.cos
        entries = cos.smaps.get(mname)
        if entries is None:
            raise self.err(msrc, f"scheduler-map {mname}", f"scheduler-map {mname} is not defined")
        self.rate(port, name, msrc, shaping)
        base = port.link_rate
        dscp_map, dflt_cls = self.classification(name)
        fc_queue = {fc: q for fc, (q, _) in cos.fcs.items()}
        for fc, q in default("junos", "forwarding_classes").value.items():
            fc_queue.setdefault(fc, q)
        default_fc = next((fc for fc, q in fc_queue.items() if q == 0), "best-effort")
        classes: list[QueueClass] = []
        percents: list[tuple[float, Source, str]] = []
        remainders: list[QueueClass] = []
        sized: list[tuple] = []
        for fc, sname, esrc in entries:
            sch = cos.schedulers.get(sname)
            if sch is None:
                raise self.err(esrc, f"scheduler {sname}", f"scheduler {sname} is not defined")
            is_default = fc == default_fc
            qc = QueueClass("class-default" if is_default else fc, esrc)
            mine = self.matches(port, qc, fc, esrc, is_default, dscp_map, dflt_cls)
            tr, rate_f = self.service(port, qc, fc, sname, sch, base, percents, remainders)
            for text, osrc in sch["other"]:
                port.note(osrc, text, "not modelled: " + ("excess-bandwidth sharing" if "excess" in text else
                                                          "scheduler statement"))
            sized.append((qc, sch, rate_f, tr, mine if not is_default else [0], fc))
            classes.append(qc)
        self.shares(classes, percents, remainders, base)
        self.buffers(port, sized, base)
        for qc, sch, _, _, dscps, fc in sized:
            self.dropper(port, qc, sch, dscps, dscp_map, fc)
        if not any(c.is_default for c in classes):
            qc = QueueClass("class-default", msrc)
            qc.matches.append((f"forwarding class {default_fc} (no scheduler in {mname})", msrc))
            qc.queue_limit = default_field("junos", "delay_buffer").derive(1, "no buffer: 1 packet")
            port.note(msrc, f"scheduler-map {mname}", f"forwarding class {default_fc} (unclassified packets) has no "
                                                      "scheduler in the map: modelled as a class-default with the "
                                                      "unreserved rate")
            total = default_field("junos", "delay_buffer").derive(
                default_field("junos", "delay_buffer").value * base.value / 8.0, "the delay buffer", base)
            qc.queue_limit = self.packets(self.buffer_bytes({}, None, base, ("remainder", None, None, []), qc, total))
            classes.append(qc)
        prio = sorted((c for c in classes if c.priority is not None), key=lambda c: c.priority.value)
        port.classes = prio + [c for c in classes if c.priority is None and not c.is_default] + \
            [c for c in classes if c.is_default]
        for s, text, eff in cos.notes:
            port.note(s, text, eff)

    def rate(self, port: Port, name: str, msrc: Source, shaping) -> None:
        """The port's rate: its shaping rate (a shaper on the physical rate), else the physical rate (the traffic
        file's, the interface's speed, or the nominal rate its name gives)."""
        cos = self.cos
        phys = self.traffic.link_rate(self.host, name)
        if phys is None:
            phys_name = name.split(".")[0]
            if phys_name in cos.speeds:
                r, s = cos.speeds[phys_name]
                phys = given(r, s)
            else:
                rates = default("junos", "interface_rates")
                pre = phys_name.split("-")[0]
                if pre in rates.value:
                    phys = Field(float(rates.value[pre]), (msrc,), rates, f"nominal rate of a {pre}- interface")
        if shaping is not None:
            words, ssrc = shaping
            if words[0] == "percent" and len(words) > 1:
                if phys is None:
                    raise self.err(ssrc, "shaping-rate percent", "a percentage of an interface of unknown rate")
                cir = phys.derive(phys.value * float(words[1]) / 100, f"{words[1]} % of {rate_text(phys.value)}",
                                  given(float(words[1]), ssrc))
            else:
                r = junos_rate(words[0])
                if r is None:
                    raise self.err(ssrc, "shaping-rate " + " ".join(words), "cannot read the shaping rate")
                cir = given(r, ssrc)
            if "burst-size" in words and words.index("burst-size") + 1 < len(words):
                bc = given(junos_rate(words[words.index("burst-size") + 1]) or 0.0, ssrc)
            else:
                d = default("junos", "shaper_tc")
                bc = Field(cir.value * d.value["from_320k"] / 8.0, (), d, "Tc x rate", (cir,))
            port.shaper = Shaper(cir, bc, None, phys)
            port.link_rate = cir
        elif phys is not None:
            port.link_rate = phys
        else:
            raise self.err(msrc, f"interfaces {name}", f"the rate of {name} is unknown (no speed, no shaping-rate, "
                                                       "its name gives none): give it in a traffic file")

    def matches(self, port: Port, qc: QueueClass, fc: str, esrc: Source, is_default: bool, dscp_map: dict,
                dflt_cls: Field | None) -> list[int]:
        """What ``qc`` (forwarding class ``fc``) matches: its DSCPs from the classifiers in use (or every
        unclassified packet for the class-default); returns those DSCPs."""
        mine = sorted(d for d, (f, _, _) in dscp_map.items() if f == fc)
        srcs = sorted({s for d, (f, _, s) in dscp_map.items() if f == fc and s is not None})
        if is_default:
            qc.matches.append((f"forwarding class {fc}: every packet no classifier entry names", esrc))
            port.note(esrc, f"forwarding-class {fc}", "is the port's class-default (it takes unclassified "
                                                      "packets)")
        else:
            assumed = dflt_cls.default if dflt_cls else (
                default("junos", "exp_from_precedence") if fc in self.by_precedence else None)
            qc.dscp = Field([dscp.name(d) for d in mine], tuple(srcs) or (esrc,), assumed)
            for kind, vals in self.by_precedence.get(fc, {}).items():
                qc.match.setdefault(kind, set()).update(vals)
                qc.match_sources += list(srcs)
            qc.matches.append((f"forwarding class {fc}", esrc))
            if not mine:
                port.note(esrc, f"forwarding-class {fc}", "no classifier in use maps a code point to it: it "
                                                          "receives no DSCP (give its traffic by name)")
        return mine

    def service(self, port: Port, qc: QueueClass, fc: str, sname: str, sch: dict, base: Field,
                percents: list, remainders: list) -> tuple[tuple, Field | None]:
        """How scheduler ``sname`` serves ``qc``: strict or high priority (with its policer), or a bandwidth class
        (percent, rate or remainder); appends to ``percents`` and ``remainders``; returns (transmit, its rate)."""
        pr = sch.get("priority")
        tr = sch.get("transmit")
        if tr is None:
            d = default("junos", "transmit_rate_remainder")
            tr = ("remainder", None, None, [])
            port.note(sch["source"], f"scheduler {sname}", "no transmit-rate: shares the remainder "
                                                           f"({d.citation})")
        kind, val, tsrc, extra = tr
        rate_f = None
        if kind == "percent":
            rate_f = base.derive(base.value * val / 100, f"{val:g} % of {rate_text(base.value)}",
                                 given(val, tsrc))
        elif kind == "rate":
            rate_f = given(val, tsrc)
        level = pr[0] if pr else "low"
        if level in ("strict-high", "high"):
            qc.priority = given(1 if level == "strict-high" else 2, pr[1])
            if rate_f is not None and (level == "high" or any(x in ("exact", "rate-limit") for x in extra)):
                d = default("junos", "rate_limit_burst_time")
                cbs = Field(rate_f.value * d.value / 8.0, (), d, "10 ms of the rate", (rate_f,))
                cond = level == "high" and not any(x in ("exact", "rate-limit") for x in extra)
                qc.police = Police(rate_f, cbs, conditional=given(cond, tsrc))
                qc.rate_cap = rate_f
                if cond:
                    port.note(pr[1], f"priority high ({fc})", "approximated: a high-priority queue above its "
                              "transmit rate is served in the excess region (not dropped); modelled as a "
                              "congestion-time policer at the transmit rate")
                if any(x == "exact" for x in extra):
                    port.note(tsrc, "transmit-rate exact", "approximated: exact shapes (queues) rather than "
                                                           "polices; the output is bounded alike")
            if rate_f is not None:
                percents.append((rate_f.value / base.value * 100, tsrc, f"transmit-rate ({fc})"))
        else:
            if pr is not None and level != "low":
                port.note(pr[1], f"priority {level} ({fc})", "not modelled: the order of medium/low queues in "
                          "the guaranteed region; served as a bandwidth class with its transmit rate")
            if kind == "percent":
                qc.bandwidth = given(Bandwidth("percent", val), tsrc)
                percents.append((val, tsrc, f"transmit-rate percent {val:g} ({fc})"))
            elif kind == "rate":
                qc.bandwidth = given(Bandwidth("rate", val), tsrc)
                percents.append((val / base.value * 100, tsrc, f"transmit-rate ({fc})"))
            else:
                remainders.append(qc)
            if any(x in ("exact", "rate-limit") for x in extra) and rate_f is not None:
                d = default("junos", "rate_limit_burst_time")
                qc.police = Police(rate_f, Field(rate_f.value * d.value / 8.0, (), d, "10 ms of the rate",
                                                 (rate_f,)))
                qc.rate_cap = rate_f
                if "exact" in extra:
                    port.note(tsrc, "transmit-rate exact", f"approximated: {fc} is shaped to its transmit rate "
                              "(queued, not dropped); modelled as a policer at that rate")
        return tr, rate_f

    def shares(self, classes: list[QueueClass], percents: list, remainders: list[QueueClass], base: Field) -> None:
        """Refuse transmit rates above 100 %; split the rest among the remainder classes; percent and absolute
        rates together become rates of the port."""
        total = sum(p for p, _, _ in percents)
        if total > 100 + 1e-9:
            lines = ", ".join(f"line {s.line} ({t})" for _, s, t in percents)
            raise self.err(percents[-1][1], percents[-1][2], f"transmit rates add up to {total:g} % of "
                                                             f"{rate_text(base.value)}: {lines}")
        if remainders:
            share = (100 - total) / len(remainders)
            for qc in remainders:
                inputs = tuple(given(p, s) for p, s, _ in percents)
                qc.bandwidth = Field(Bandwidth("percent", share), (qc.source,), None,
                                     f"remainder: (100 - {total:g}) % / {len(remainders)}", inputs)
        forms = {c.bandwidth.value.kind for c in classes if c.bandwidth is not None}
        if len(forms) > 1:  # percent and absolute rates: all as rates of the port
            for c in classes:
                if c.bandwidth is not None and c.bandwidth.value.kind == "percent":
                    pct = c.bandwidth.value.amount
                    c.bandwidth = c.bandwidth.derive(Bandwidth("rate", base.value * pct / 100),
                                                     f"{pct:g} % of {rate_text(base.value)}", base)

    def buffers(self, port: Port, sized: list[tuple], base: Field) -> None:
        """Each class's queue limit from its scheduler's buffer: the stated ones first, then ``buffer-size
        remainder`` -- the share of the port's delay buffer the others leave, split equally (Juniper,
        buffer-size: "remainder: remaining buffer available"); a scheduler without buffer-size takes its transmit
        rate's share (for ``transmit-rate remainder``, the share :meth:`shares` gave it)."""
        dbuf = default_field("junos", "delay_buffer")
        total = dbuf.derive(dbuf.value * base.value / 8.0, f"{dbuf.value:g} s at {rate_text(base.value)}", base)
        stated, rest = [], []
        for qc, sch, rate_f, tr, _, _ in sized:
            buf = sch.get("buffer")
            if buf is not None and buf[0] == "remainder":
                rest.append((qc, buf))
            else:
                nb = self.buffer_bytes(sch, rate_f, base, tr, qc, total)
                stated.append(nb)
                qc.queue_limit = self.packets(nb)
        if not rest:
            return
        used = sum(nb.value for nb in stated)
        if used > total.value * (1 + 1e-9):
            port.note(rest[0][1][2], "buffer-size remainder", f"the other schedulers' buffers take "
                      f"{100 * used / total.value:.4g} % of the delay buffer: nothing remains (1 packet assumed)")
        each = max(0.0, total.value - used) / len(rest)
        for qc, buf in rest:
            nb = total.derive(each, f"buffer-size remainder: ({100 * (1 - used / total.value):.4g} % of the delay "
                                    f"buffer the others leave) / {len(rest)}", given(None, buf[2]), *stated)
            qc.queue_limit = self.packets(nb)

    @staticmethod
    def packets(nb: Field) -> Field:
        size = default_field("junos", "packet_size")
        return nb.derive(max(1, math.floor(nb.value / size.value)), f"{nb.value:g} B in {size.value} B packets", size)

    def buffer_bytes(self, sch: dict, rate_f: Field | None, base: Field, tr, qc: QueueClass, total: Field) -> Field:
        """The bytes of one scheduler's stated buffer (``percent`` of the delay buffer, ``temporal`` at the
        transmit rate) or, without buffer-size, its transmit rate's share of the delay buffer."""
        buf = sch.get("buffer")
        dbuf = default_field("junos", "delay_buffer")
        if buf is not None and buf[0] == "temporal":
            r = rate_f or base
            return r.derive(r.value * buf[1] * 1e-6 / 8.0, f"{buf[1]:g} us at {rate_text(r.value)}",
                            given(buf[1], buf[2]))
        if buf is not None and buf[0] == "percent":
            pct = given(buf[1], buf[2])
        elif tr[0] == "percent":
            pct = given(tr[1], tr[2], how="buffer-size defaults to the transmit-rate percentage")
        elif rate_f is not None:
            pct = rate_f.derive(100 * rate_f.value / base.value, "the transmit rate's share", base)
        elif qc.bandwidth is not None and qc.bandwidth.value.kind == "percent":
            pct = qc.bandwidth.derive(qc.bandwidth.value.amount, "buffer-size defaults to the transmit-rate share "
                                                                 "(the remainder's)")
        elif qc.bandwidth is not None and qc.bandwidth.value.kind == "rate":
            pct = qc.bandwidth.derive(100 * qc.bandwidth.value.amount / base.value, "the transmit rate's share",
                                      base)
        else:
            pct = default_field("junos", "delay_buffer", value=10.0, how="no buffer-size or transmit-rate: 10 %")
        return total.derive(pct.value / 100 * total.value,
                            f"{pct.value:g} % of a {dbuf.value:g} s delay buffer at {rate_text(base.value)}", pct)

    def dropper(self, port: Port, qc: QueueClass, sch: dict, dscps: list[int], dmap, fc: str) -> None:
        if not sch["dpm"]:
            return
        th = {}
        ql = qc.queue_limit
        for d in dscps:
            lp = dmap.get(d, (fc, "low", None))[1]
            hits = [e for e in sch["dpm"] if e[0] in (lp, "any") and e[1] in ("any", "tcp", "non-tcp")]
            if not hits:
                continue
            _, _, pname, esrc = hits[0]
            prof = self.cos.profiles.get(pname)
            if prof is None:
                raise self.err(esrc, f"drop-profile {pname}", f"drop profile {pname} is not defined")
            fills = [f for f, _ in prof["fill"]]
            probs = [p for p, _ in prof["prob"]]
            if len(fills) != len(probs) or not fills:
                raise self.err(prof["source"], f"drop-profiles {pname}", "fill levels and drop probabilities do not "
                                                                         "pair up")
            pts = sorted(zip(fills, probs))
            if pts[-1][1] <= 0:
                continue
            zero = [f for f, p in pts if p == 0]
            lo_pct = max(zero) if zero else 0.0
            hi_pct, p_hi = pts[-1]
            exact = (prof["interpolate"] or len(pts) == 1) and len([x for x in pts if x[1] > 0]) == 1 and \
                (hi_pct >= 100 or p_hi >= 100)
            if len(pts) == 1 and hi_pct >= 100 and p_hi >= 100:
                continue  # the terminal profile: tail drop
            if not exact:
                port.note(prof["source"], f"drop-profiles {pname}", "approximated: the profile is not one straight "
                          "ramp; modelled by the WRED line from its last zero point to its last point (drop "
                          "probability over-estimated between them where the profile is convex)")
            srcs = tuple(sorted({s for _, s in prof["fill"] + prof["prob"]}))
            lo = ql.derive(max(0.0, math.floor(ql.value * lo_pct / 100)), f"{lo_pct:g} % of the queue",
                           Field(lo_pct, srcs))
            hi = ql.derive(max(lo.value + 1, math.floor(ql.value * hi_pct / 100)), f"{hi_pct:g} % of the queue",
                           Field(hi_pct, srcs))
            th[dscp.name(d)] = Threshold(lo, hi, Field(100.0 / p_hi, srcs, None, "100 / drop-probability"))
        if th:
            qc.dropper = Dropper(given("wred", *(e[3] for e in sch["dpm"])), th,
                                 exponent=default_field("ios", "wred_exponent", how="Junos averages with no stated "
                                                                                    "weight"))


def junos_ports(cfg: ConfigText, fmt, traffic: TrafficSpec) -> tuple[list[Port], list[str]]:
    try:
        statements = parse_curly(cfg.text) if fmt.name == "junos" else parse_set(cfg.text)
    except JunosSyntaxError as e:
        raise ConfigError(e.problem, file=cfg.file, line=e.line) from None
    cos = _Cos(cfg, statements)
    host = cos.host or cfg.file.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    maker = _Ports(cos, fmt.name, traffic, host)
    ports, notes = [], []
    for name, it in cos.itfs.items():
        p = maker.port(name, it)
        if p is not None:
            ports.append(p)
    used = {it["scheduler-map"][0][0] for it in cos.itfs.values() if "scheduler-map" in it}
    used |= {t["scheduler-map"][0][0] for t in cos.tcps.values() if "scheduler-map" in t}
    for m, entries in cos.smaps.items():
        if m not in used:
            notes.append(f"{entries[0][2]}: scheduler-map {m}: not applied to an interface (not imported)")
    if not cos.itfs:
        notes.append(f"{cfg.file}: no class-of-service interfaces: nothing to import")
    return ports, notes
