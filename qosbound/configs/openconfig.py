"""The queueing meaning of OpenConfig QoS (``openconfig-qos``, RFC 7951 JSON): one
:class:`~qosbound.configs.port.Port` per ``/qos/interfaces/interface`` with an output scheduler policy.

The JSON tree (read with lines, :mod:`qosbound.configs.json_lines`) is the AST: every object keeps its line.

* classifier terms (``conditions/ipv4|ipv6/config/dscp`` or ``dscp-set``; first match in order) -> forwarding
  group -> its ``output-queue``: a queue's DSCPs; the classifiers applied on the input of the *other* interfaces
  (where the traffic arrives; all defined ones when none is applied);
* the scheduler policy's schedulers in ``sequence`` order: ``priority STRICT`` -> priority levels 1, 2, ...;
  the others' inputs -> bandwidth classes with ``remaining w / (sum of weights) %``;
* ``one-rate-two-color`` (cir or cir-pct, bc) and ``two-rate-three-color`` (cir, pir, bc, be) policers -> the
  class's ``police`` with each colour's action (``drop``, ``transmit``, ``set-dscp DSCP``);
* a queue's ``queue-management-profile`` ``wred/uniform`` (or ``red/uniform``) -> a WRED dropper (thresholds in
  bytes as full-size packets, or percentages of the queue; ``max-drop-probability-percent`` -> P_d = 100 / p);
* the queue that receives DSCP 0 -> ``class-default``; the line rate from ``openconfig-interfaces``
  ``ethernet/config/port-speed``.
"""

from __future__ import annotations

import math

from qosbound.configs.defaults import default_field
from qosbound import dscp
from qosbound.configs.formatting import rate_text
from qosbound.configs.json_lines import JArray, JObject, JSONLineError, loads_with_lines
from qosbound.configs.port import Bandwidth, Dropper, Police, Port, QueueClass, Threshold
from qosbound.configs.source import ConfigText, Source
from qosbound.configs.traffic import TrafficSpec
from qosbound.configs.values import Field, given
from qosbound.errors import ConfigError

__all__ = ["openconfig_ports", "PORT_SPEEDS"]

#: openconfig-if-ethernet port-speed identities -> bit/s.
PORT_SPEEDS = {"SPEED_10MB": 1e7, "SPEED_100MB": 1e8, "SPEED_1GB": 1e9, "SPEED_2500MB": 2.5e9, "SPEED_5GB": 5e9,
               "SPEED_10GB": 1e10, "SPEED_25GB": 2.5e10, "SPEED_40GB": 4e10, "SPEED_50GB": 5e10,
               "SPEED_100GB": 1e11, "SPEED_200GB": 2e11, "SPEED_400GB": 4e11, "SPEED_800GB": 8e11}


def _ident(v) -> str:
    """``'openconfig-qos-types:STRICT'`` -> ``'STRICT'``."""
    return str(v).rsplit(":", 1)[-1] if v is not None else ""


def _get(obj, *path):
    """Walk ``path`` through objects, ignoring module prefixes on keys (``openconfig-qos:qos`` = ``qos``)."""
    cur = obj
    for key in path:
        if not isinstance(cur, dict):
            return None
        nxt = cur.get(key)
        if nxt is None:
            nxt = next((v for k, v in cur.items() if k.rsplit(":", 1)[-1] == key), None)
        cur = nxt
    return cur


def _list(obj, *path) -> list:
    v = _get(obj, *path)
    return list(v) if isinstance(v, list) else []


def _num(v, src: Source, what: str) -> float:
    """uint64 leaves are JSON strings in RFC 7951."""
    try:
        if isinstance(v, bool):
            raise ValueError
        return float(v)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: '{v}' is not a number", file=src.file, line=src.line) from None


class _OC:
    def __init__(self, cfg: ConfigText, doc, traffic: TrafficSpec):
        self.cfg, self.traffic = cfg, traffic
        self.qos = _get(doc, "qos")
        if not isinstance(self.qos, dict):
            raise ConfigError("no openconfig-qos 'qos' container", file=cfg.file, line=1)
        self.itf_tree = _get(doc, "interfaces")
        self.host = cfg.file.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
        self.groups = {g.get("name") or _get(g, "config", "name"): g for g in _list(self.qos, "forwarding-groups",
                                                                                      "forwarding-group")}
        self.classifiers = {c.get("name") or _get(c, "config", "name"): c for c in _list(self.qos, "classifiers",
                                                                                         "classifier")}
        self.policies = {p.get("name") or _get(p, "config", "name"): p for p in _list(self.qos, "scheduler-policies",
                                                                                      "scheduler-policy")}
        self.qmps = {q.get("name") or _get(q, "config", "name"): q for q in _list(self.qos, "queue-management-profiles",
                                                                                  "queue-management-profile")}
        self.queues = {q.get("name") or _get(q, "config", "name"): q for q in _list(self.qos, "queues", "queue")}

    def src(self, obj) -> Source:
        return self.cfg.at(getattr(obj, "line", 1) or 1)

    def err(self, obj, problem: str, construct: str | None = None) -> ConfigError:
        s = self.src(obj)
        return ConfigError(problem, file=s.file, line=s.line, construct=construct)

    # ---------------------------------------------------------------------------------------- classification

    def dscp_queues(self, egress: str, port: Port) -> dict[int, tuple[str, list[Source]]]:
        """DSCP -> (queue, lines) for the traffic leaving ``egress``."""
        applied = []
        for it in _list(self.qos, "interfaces", "interface"):
            iid = it.get("interface-id") or _get(it, "config", "interface-id")
            if iid == egress:
                continue
            for c in _list(it, "input", "classifiers", "classifier"):
                name = _get(c, "config", "name")
                if name in self.classifiers:
                    applied.append(name)
                elif name:
                    port.note(self.src(c), f"classifier {name}", "is not defined: ignored")
        names = applied or list(self.classifiers)
        out: dict[int, tuple[str, list[Source]]] = {}
        for name in dict.fromkeys(names):
            cl = self.classifiers[name]
            for term in _list(cl, "terms", "term"):
                tsrc = self.src(term)
                group = _get(term, "actions", "config", "target-group")
                conds = _get(term, "conditions") or {}
                dscps: set[int] | None = None
                for af in ("ipv4", "ipv6"):
                    c = _get(conds, af, "config") or {}
                    vals = []
                    if c.get("dscp") is not None:
                        vals.append(c.get("dscp"))
                    vals += list(c.get("dscp-set") or [])
                    if vals:
                        dscps = (dscps or set()) | {int(_num(v, tsrc, "dscp")) for v in vals}
                others = [k for k in conds if k.rsplit(":", 1)[-1] not in ("ipv4", "ipv6")]
                if others:
                    port.note(tsrc, f"term {term.get('id')}", "not modelled: conditions other than DSCP "
                              f"({', '.join(others)}); the port classifies by DSCP only")
                if dscps is None:
                    dscps = set(dscp.ALL) if not conds else set()
                if group is None:
                    port.note(tsrc, f"term {term.get('id')}", "ignored: a term without a target group")
                    continue
                g = self.groups.get(group)
                if g is None:
                    raise self.err(term, f"forwarding group {group} is not defined", f"target-group {group}")
                queue = _get(g, "config", "output-queue")
                if queue is None:
                    raise self.err(g, f"forwarding group {group} has no output-queue")
                for d in sorted(dscps):
                    if d not in out:
                        out[d] = (queue, [tsrc, self.src(g)])
        return out

    # ---------------------------------------------------------------------------------------- ports

    def rate(self, iid: str, itf) -> Field | None:
        r = self.traffic.link_rate(self.host, iid)
        if r is not None:
            return r
        for it in _list(self.itf_tree, "interface") if self.itf_tree else []:
            if it.get("name") == iid:
                eth = _get(it, "ethernet", "config") or {}
                sp = _ident(eth.get("port-speed"))
                if sp in PORT_SPEEDS:
                    return given(PORT_SPEEDS[sp], self.cfg.at(eth.line_of("port-speed") if isinstance(eth, JObject)
                                                              else 1))
        return None

    def port(self, itf) -> Port | None:
        iid = itf.get("interface-id") or _get(itf, "config", "interface-id") or "?"
        sp = _get(itf, "output", "scheduler-policy", "config", "name")
        if sp is None:
            return None
        spobj = _get(itf, "output", "scheduler-policy")
        port = Port(self.host, str(iid), "out", "openconfig", "openconfig", self.src(spobj), policy=str(sp))
        try:
            self.build(port, itf, str(iid), str(sp))
        except ConfigError as e:
            port.refusals.append(e)
        return port

    def build(self, port: Port, itf, iid: str, spname: str) -> None:
        pol = self.policies.get(spname)
        if pol is None:
            raise self.err(_get(itf, "output", "scheduler-policy"), f"scheduler policy {spname} is not defined")
        rate = self.rate(iid, itf)
        if rate is None:
            raise self.err(itf, f"the rate of {iid} is unknown (no openconfig-interfaces port-speed): give it in a "
                                "traffic file")
        port.link_rate = rate
        dq = self.dscp_queues(iid, port)
        out_queues = {q.get("name") or _get(q, "config", "name"): q for q in _list(itf, "output", "queues", "queue")}
        scheds = sorted(_list(pol, "schedulers", "scheduler"),
                        key=lambda s: _num(s.get("sequence", _get(s, "config", "sequence") or 0), self.src(s),
                                           "sequence"))
        classes: list[QueueClass] = []
        level = 0
        weights: list[tuple[QueueClass, Field]] = []
        nonstrict = 0
        for s in scheds:
            cfg = _get(s, "config") or {}
            strict = _ident(cfg.get("priority")) == "STRICT"
            if strict:
                level += 1
            else:
                nonstrict += 1
            police = self.policer(s, rate, port)
            for inp in _list(s, "inputs", "input"):
                ic = _get(inp, "config") or {}
                qname = ic.get("queue")
                isrc = self.src(inp)
                if qname is None:
                    port.note(isrc, f"input {inp.get('id')}", "ignored: an input without a queue")
                    continue
                qc = QueueClass(str(qname), isrc)
                mine = sorted(d for d, (q, _) in dq.items() if q == qname)
                lines = sorted({x for d, (q, ls) in dq.items() if q == qname for x in ls})
                qc.dscp = Field([dscp.name(d) for d in mine], tuple(lines) or (isrc,))
                qc.matches.append((f"queue {qname}", isrc))
                if strict:
                    qc.priority = given(level, self.src(s), how=f"scheduler sequence {cfg.get('sequence')}, STRICT")
                else:
                    w = ic.get("weight", 1)
                    weights.append((qc, given(_num(w, isrc, "weight"), isrc)))
                if police is not None:
                    qc.police = police
                    qc.rate_cap = police.drop_rate()
                classes.append(qc)
        if nonstrict > 1:
            port.note(None, f"scheduler-policy {spname}", "approximated: several non-strict schedulers; their inputs "
                                                          "share the remaining rate by weight as one WRR stage")
        total = sum(w.value for _, w in weights)
        for qc, w in weights:
            others = tuple(x for q, x in weights if q is not qc)
            qc.bandwidth = w.derive(Bandwidth("remaining", 100.0 * w.value / total if total else 0.0),
                                    f"weight {w.value:g} of {total:g}", *others)
        # class-default: the queue that takes DSCP 0
        be_queue = dq.get(0, (None, []))[0]
        dflt = next((c for c in classes if c.name == be_queue), None)
        if dflt is None and classes:
            dflt = next((c for c in reversed(classes) if c.priority is None), classes[-1])
            port.note(dflt.source, f"queue {dflt.name}", "no classifier sends DSCP 0 to a queue: the last weighted "
                                                         "queue is taken as class-default")
        if dflt is not None:
            port.note(dflt.source, f"queue {dflt.name}", "is the port's class-default (it takes DSCP 0 and every "
                                                         "DSCP no term names)")
            dflt.name = "class-default"
            dflt.dscp = None
        for qc in classes:
            name = qc.matches[0][0].split(" ", 1)[1]
            qc.queue_limit = default_field("openconfig", "queue_limit")
            prof = _get(out_queues.get(name) or {}, "config", "queue-management-profile") or \
                _get(self.queues.get(name) or {}, "config", "queue-management-profile")
            if prof:
                keys = [0] if qc.is_default else [d for d in dscp.ALL if dq.get(d, (None,))[0] == name] or [0]
                self.wred(qc, str(prof), keys, port)
        prio = sorted((c for c in classes if c.priority is not None), key=lambda c: c.priority.value)
        port.classes = prio + [c for c in classes if c.priority is None and not c.is_default] + \
            [c for c in classes if c.is_default]

    def policer(self, s, rate: Field, port: Port) -> Police | None:
        """The scheduler's policer: ``one-rate-two-color`` (two-colour) or ``two-rate-three-color`` (trTCM), each
        colour's action ``drop``, ``transmit`` or ``set-dscp DSCP``."""
        one = _get(s, "one-rate-two-color")
        two = _get(s, "two-rate-three-color")
        if one is None and two is None:
            return None
        body = one if one is not None else two
        c = _get(body, "config") or {}
        bsrc = self.src(body)

        def r(key, pct_key):
            if c.get(key) is not None:
                return given(_num(c[key], bsrc, key), bsrc)
            if c.get(pct_key) is not None:
                p = _num(c[pct_key], bsrc, pct_key)
                return rate.derive(rate.value * p / 100, f"{p:g} % of {rate_text(rate.value)}", given(p, bsrc))
            return None

        cir = r("cir", "cir-pct")
        if cir is None:
            raise self.err(body, "a policer without cir or cir-pct")
        bc = given(_num(c.get("bc", 0), bsrc, "bc"), bsrc)
        if bc.value <= 0:
            bc = default_field("openconfig", "packet_size", how="no bc: one full-size packet")
        police = Police(cir, bc)
        if two is not None:
            police.pir = r("pir", "pir-pct") or cir
            police.pbs = given(_num(c.get("be", bc.value), bsrc, "be"), bsrc)
        colours = [("conform", "conform-action"), ("exceed", "exceed-action")]
        if two is not None:
            colours.append(("violate", "violate-action"))
        for colour, key in colours:
            a = _get(body, key, "config")
            if not a:
                continue
            asrc = self.src(_get(body, key))
            if a.get("drop"):
                setattr(police, colour, given("drop", asrc))
                continue
            code = next((v for k, v in a.items() if k.rsplit(":", 1)[-1] == "set-dscp"), None)
            if code is not None:
                setattr(police, colour, given(f"set-dscp {dscp.name(int(_num(code, asrc, 'set-dscp')))}", asrc))
            else:
                if any(k.rsplit(":", 1)[-1].startswith("set-") for k in a):
                    port.note(asrc, key, "ignored: marking only (the port queues by DSCP); taken as transmit")
                setattr(police, colour, given("transmit", asrc))
        return police

    def wred(self, qc: QueueClass, prof: str, keys: list[int], port: Port) -> None:
        p = self.qmps.get(prof)
        if p is None:
            raise ConfigError(f"queue-management profile {prof} is not defined", file=qc.source.file,
                              line=qc.source.line)
        body = _get(p, "wred", "uniform") or _get(p, "red", "uniform")
        if body is None:
            port.note(self.src(p), f"queue-management-profile {prof}", "not modelled: neither wred nor red uniform")
            return
        c = _get(body, "config") or {}
        bsrc = self.src(body)
        size = default_field("openconfig", "packet_size")
        ql = qc.queue_limit

        def th(key, pct_key):
            if c.get(key) is not None:
                nb = given(_num(c[key], bsrc, key), bsrc)
                return nb.derive(max(1, math.floor(nb.value / size.value)), f"{nb.value:g} B in {size.value} B "
                                                                            "packets", size)
            if c.get(pct_key) is not None:
                pct = given(_num(c[pct_key], bsrc, pct_key), bsrc)
                return ql.derive(max(1, math.floor(ql.value * pct.value / 100)), f"{pct.value:g} % of the queue",
                                 pct)
            raise ConfigError(f"a WRED profile without {key}", file=bsrc.file, line=bsrc.line)

        lo, hi = th("min-threshold", "min-threshold-percent"), th("max-threshold", "max-threshold-percent")
        if hi.value <= lo.value:
            hi = hi.derive(lo.value + 1, "at least min + 1 packet")
        pmax = c.get("max-drop-probability-percent")
        pd = given(100.0 / _num(pmax, bsrc, "max-drop-probability-percent"), bsrc, how="100 / percent") if pmax \
            else given(1.0, bsrc, how="no max-drop-probability-percent: 100 %")
        if c.get("enable-ecn"):
            port.note(bsrc, "enable-ecn", "not modelled: ECN marking; drops are counted as if no flow were "
                                          "ECN-capable")
        if ql.default is not None and ql.value < hi.value:  # the model has no queue length: at least the WRED max
            qc.queue_limit = hi.derive(hi.value, "no queue length in the model: the WRED max threshold", ql)
        qc.dropper = Dropper(given("wred", self.src(p)), {dscp.name(d): Threshold(lo, hi, pd) for d in keys},
                             exponent=default_field("openconfig", "wred_exponent"))


def openconfig_ports(cfg: ConfigText, fmt, traffic: TrafficSpec) -> tuple[list[Port], list[str]]:
    try:
        doc = loads_with_lines(cfg.text)
    except JSONLineError as e:
        raise ConfigError(f"malformed JSON: {e.problem}", file=cfg.file, line=e.line) from None
    if isinstance(doc, JArray):
        doc = next((d for d in doc if isinstance(d, dict) and _get(d, "qos") is not None), None)
    oc = _OC(cfg, doc, traffic)
    ports, notes = [], []
    attached = set()
    for itf in _list(oc.qos, "interfaces", "interface"):
        p = oc.port(itf)
        if p is not None:
            ports.append(p)
            attached.add(p.policy)
    for name, pol in oc.policies.items():
        if name not in attached:
            notes.append(f"{oc.src(pol)}: scheduler-policy {name}: not applied to an interface (not imported)")
    return ports, notes
