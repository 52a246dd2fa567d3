"""Cisco IOS / IOS XE / IOS XR text -> :class:`~qosbound.configs.ios_ast.IosConfig` (the MQC as written).

Command syntax follows the vendors' command references: IOS / IOS XE (``police cir 8000 bc 1500 ...``,
``police 8000 1500 3000 ...``, ``priority percent 10``, ``bandwidth remaining ratio 4``, ``random-detect dscp af31
32 40 10``, ``shape average 50000000 200000``, ``queue-limit 64 packets``) and IOS XR where it differs
(``police rate 10 mbps burst 100 kbytes``, ``priority level 1``, ``bandwidth 10 mbps``, ``random-detect dscp af11
10 ms 20 ms``, ``shape average percent 50``, ``queue-limit 100 ms``). A command this module does not know inside a
QoS mode is kept as ``other`` (and reported as not modelled); a known command whose arguments cannot be read is
refused with its line (:class:`~qosbound.errors.ConfigError`).
"""

from __future__ import annotations

import re

from qosbound.configs.ios_ast import (Action, Attachment, BandwidthCmd, Burst, ClassMap, Interface, IosConfig, Match,
                                      PoliceCmd, PolicyClass, PolicyMap, PriorityCmd, QueueLimitCmd, Rate, SetCmd,
                                      ShapeCmd, WredCmd, WredThreshold)
from qosbound.configs.ios_tree import Node, parse_tree
from qosbound.configs.port import Note
from qosbound.configs.source import ConfigText, Source
from qosbound.errors import ConfigError

__all__ = ["parse_ios", "XR_RATE_UNITS"]

#: IOS XR rate units -> bit/s.
XR_RATE_UNITS = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "cellsps": 424.0}
#: IOS XR size / time units -> (kind, factor).
XR_SIZE_UNITS = {"bytes": ("bytes", 1.0), "kbytes": ("bytes", 1e3), "mbytes": ("bytes", 1e6),
                 "gbytes": ("bytes", 1e9), "packets": ("packets", 1.0), "ms": ("ms", 1.0), "us": ("us", 1.0),
                 "cells": ("bytes", 53.0), "bits": ("bits", 1.0)}
_NUM = re.compile(r"^\d+(\.\d+)?$")


class _Ctx:
    def __init__(self, cfg: ConfigText, dialect: str):
        self.cfg = cfg
        self.dialect = dialect
        self.notes: list[Note] = []

    def src(self, node: Node) -> Source:
        return self.cfg.at(node.line)

    def error(self, node: Node, problem: str) -> ConfigError:
        return ConfigError(problem, file=self.cfg.file, line=node.line, construct=node.text)

    def note(self, node: Node, effect: str) -> None:
        self.notes.append(Note(self.src(node), node.text, effect))


def _num(tok: str, node: Node, ctx: _Ctx, what: str) -> float:
    if not _NUM.match(tok or ""):
        raise ctx.error(node, f"expected {what} (a number), got '{tok}'")
    return float(tok)


def _rate_xr(words: list[str], i: int, node: Node, ctx: _Ctx, default_unit: str = "kbps") -> tuple[Rate, int]:
    """``percent N`` | ``N [unit]`` at words[i] (IOS XR); returns the rate and the next index."""
    if i >= len(words):
        raise ctx.error(node, "a rate is missing")
    if words[i].lower() == "percent":
        return Rate("percent", _num(words[i + 1] if i + 1 < len(words) else "", node, ctx, "a percentage")), i + 2
    if words[i].lower() in ("per-thousand", "per-million"):
        v = _num(words[i + 1] if i + 1 < len(words) else "", node, ctx, "a share")
        return Rate("percent", v / (10 if words[i].lower() == "per-thousand" else 1e4)), i + 2
    v = _num(words[i], node, ctx, "a rate")
    unit = words[i + 1].lower() if i + 1 < len(words) else ""
    if unit in XR_RATE_UNITS:
        return Rate("bps", v * XR_RATE_UNITS[unit]), i + 2
    if unit == "pps":
        return Rate("pps", v), i + 2
    return Rate("bps", v * XR_RATE_UNITS[default_unit]), i + 1


def _size_xr(words: list[str], i: int, node: Node, ctx: _Ctx, default_kind: str) -> tuple[Burst, int]:
    v = _num(words[i] if i < len(words) else "", node, ctx, "a size")
    unit = words[i + 1].lower() if i + 1 < len(words) else ""
    if unit in XR_SIZE_UNITS:
        kind, f = XR_SIZE_UNITS[unit]
        return Burst(kind, v * f), i + 2
    return Burst(default_kind, v), i + 1


# ---------------------------------------------------------------------------------------------- class-map

def _match(node: Node, ctx: _Ctx) -> Match:
    w = node.words[1:]
    low = [x.lower() for x in w]
    negate = bool(low) and low[0] == "not"
    if negate:
        w, low = w[1:], low[1:]
    src, text = ctx.src(node), node.text
    if not low:
        raise ctx.error(node, "match with no criterion")
    if low[0] == "ip" and len(low) > 1 and low[1] in ("dscp", "precedence"):
        w, low = w[1:], low[1:]
    head = low[0]
    vals = [x for x in w[1:] if x.lower() not in ("ipv4", "ipv6")]
    if head == "dscp":
        return Match("dscp", _split_values(vals), src, text, negate)
    if head == "precedence":
        return Match("precedence", _split_values(vals), src, text, negate)
    if head == "mpls" and len(low) > 1 and low[1] == "experimental":
        vals = [x for x in w[2:] if x.lower() not in ("topmost", "imposition", "disposition")]
        return Match("mpls-exp", _split_values(vals), src, text, negate)
    if head == "cos":
        return Match("cos", _split_values([x for x in vals if x.lower() != "inner"]), src, text, negate)
    if head in ("qos-group", "traffic-class", "discard-class"):
        return Match(head, _split_values(vals), src, text, negate)
    if head == "access-group":
        return Match("access-group", [x for x in vals if x.lower() not in ("name", "ipv4", "ipv6")], src, text,
                     negate)
    if head in ("class-map", "class"):
        return Match("class-map", vals, src, text, negate)
    if head == "any":
        return Match("any", [], src, text, negate)
    if head == "protocol":
        return Match("protocol", vals, src, text, negate)
    return Match("other", vals, src, text, negate)


def _split_values(vals: list[str]) -> list[str]:
    """``af11,af12`` and ``10-12`` (IOS XR lists and ranges) as single values."""
    out: list[str] = []
    for v in vals:
        for part in v.split(","):
            m = re.fullmatch(r"(\d+)-(\d+)", part)
            if m and int(m.group(1)) <= int(m.group(2)) <= 1000:
                out += [str(x) for x in range(int(m.group(1)), int(m.group(2)) + 1)]
            elif part:
                out.append(part)
    return out


def _class_map(node: Node, ctx: _Ctx) -> ClassMap | None:
    w = node.words[1:]
    low = [x.lower() for x in w]
    if "type" in low:
        t = low[low.index("type") + 1] if low.index("type") + 1 < len(low) else ""
        if t not in ("qos", "queuing", "queueing", "traffic"):
            return None  # inspect, control, nbar ... : not QoS classification
        k = low.index("type")
        w, low = w[:k] + w[k + 2:], low[:k] + low[k + 2:]
    kind = "match-all"
    if low and low[0] in ("match-any", "match-all"):
        kind, w = low[0], w[1:]
    if not w:
        raise ctx.error(node, "class-map without a name")
    cm = ClassMap(w[0], kind, ctx.src(node))
    for ch in node.children:
        first = ch.first()
        if first == "match":
            cm.matches.append(_match(ch, ctx))
        elif first not in ("description", "exit"):
            cm.other.append((ch.text, ctx.src(ch)))
    return cm


# ---------------------------------------------------------------------------------------------- policy-map

_ACTION_SET = {"set-dscp-transmit": "set-dscp", "set-prec-transmit": "set-prec", "set-qos-transmit": "set-qos-group",
               "set-cos-transmit": "set-cos", "set-mpls-exp-topmost-transmit": "set-exp",
               "set-mpls-exp-imposition-transmit": "set-exp", "set-discard-class-transmit": "set-discard-class",
               "set-clp-transmit": "set-other", "set-frde-transmit": "set-other", "set-dscp-tunnel-transmit":
               "set-other", "set-prec-tunnel-transmit": "set-other", "set-cos-inner-transmit": "set-other"}
_SET_WHAT = {"dscp": "dscp", "precedence": "precedence", "prec": "precedence", "cos": "cos", "qos-group": "qos-group",
             "discard-class": "discard-class", "traffic-class": "traffic-class", "mpls": "mpls-exp",
             "forward-class": "qos-group"}


def _action(words: list[str], i: int, src: Source, text: str) -> tuple[Action, int]:
    """One action at words[i]: IOS ``transmit`` / ``drop`` / ``set-dscp-transmit af12``, IOS XR ``set dscp af12``."""
    a = words[i].lower() if i < len(words) else ""
    if a in ("transmit", "drop"):
        return Action(a, None, src, text), i + 1
    if a in _ACTION_SET:
        val = words[i + 1] if i + 1 < len(words) else None
        return Action(_ACTION_SET[a], val, src, text), i + 2
    if a == "set" and i + 1 < len(words):
        what = words[i + 1].lower()
        j = i + 2
        if what == "ip" and j < len(words):
            what, j = words[j].lower(), j + 1
        if what == "mpls":
            while j < len(words) and words[j].lower() in ("experimental", "topmost", "imposition"):
                j += 1
            what = "exp"
        kind = {"dscp": "set-dscp", "precedence": "set-prec", "prec": "set-prec", "qos-group": "set-qos-group",
                "cos": "set-cos", "exp": "set-exp", "discard-class": "set-discard-class"}.get(what, "set-other")
        return Action(kind, words[j] if j < len(words) else None, src, text), j + 1
    return Action("set-other", a, src, text), i + 1


def _police(node: Node, ctx: _Ctx) -> PoliceCmd:
    src = ctx.src(node)
    p = PoliceCmd(src, node.text, lines=[src])
    w = node.words[1:]
    low = [x.lower() for x in w]
    i = 0
    xr_style = ctx.dialect == "ios-xr" or (low and low[0] == "rate")
    if low and low[0] in ("aggregate", "flow"):
        raise ctx.error(node, f"police {low[0]}: shared or per-flow policers are not modelled")
    if low and low[0] == "rate":
        # IOS XR and IOS XE's packet-rate form: police rate N [units] [burst N [units]] [peak-rate ...]
        p.cir, i = _rate_xr(w, 1, node, ctx)
        while i < len(w):
            k = low[i]
            if k == "burst":
                p.bc, i = _size_xr(w, i + 1, node, ctx, "bytes")
            elif k == "peak-rate":
                p.pir, i = _rate_xr(w, i + 1, node, ctx)
            elif k in ("peak-burst", "excess-burst"):
                p.be, i = _size_xr(w, i + 1, node, ctx, "bytes")
            else:
                break
    elif low and low[0] == "cir":
        # police cir {N | percent N} [bc N [ms]] [pir {N | percent N}] [be N [ms]]
        if len(low) > 1 and low[1] == "percent":
            p.cir, i = Rate("percent", _num(w[2] if len(w) > 2 else "", node, ctx, "a percentage")), 3
        else:
            p.cir, i = Rate("bps", _num(w[1] if len(w) > 1 else "", node, ctx, "the CIR in bit/s")), 2
        while i < len(w):
            k = low[i]
            if k in ("bc", "be"):
                v = _num(w[i + 1] if i + 1 < len(w) else "", node, ctx, f"the {k}")
                unit = low[i + 2] if i + 2 < len(low) else ""
                b = Burst("ms", v) if unit == "ms" or p.cir.kind == "percent" else Burst("bytes", v)
                i += 3 if unit in ("ms", "bytes") else 2
                if k == "bc":
                    p.bc = b
                else:
                    p.be = b
            elif k == "pir":
                if i + 1 < len(low) and low[i + 1] == "percent":
                    p.pir = Rate("percent", _num(w[i + 2] if i + 2 < len(w) else "", node, ctx, "a percentage"))
                    i += 3
                else:
                    p.pir = Rate("bps", _num(w[i + 1] if i + 1 < len(w) else "", node, ctx, "the PIR in bit/s"))
                    i += 2
            else:
                break
    elif low and _NUM.match(low[0]):
        # police BPS [BC [BE]] (IOS), or IOS XR's bare "police 10 mbps"-less form is not valid: bit/s
        p.cir = Rate("bps", float(w[0]))
        i = 1
        if xr_style and i < len(low) and low[i] in XR_RATE_UNITS:
            p.cir, i = Rate("bps", float(w[0]) * XR_RATE_UNITS[low[i]]), 2
        if i < len(low) and _NUM.match(low[i]):
            p.bc, i = Burst("bytes", float(w[i])), i + 1
            if i < len(low) and _NUM.match(low[i]):
                p.be, i = Burst("bytes", float(w[i])), i + 1
    else:
        raise ctx.error(node, "cannot read the policer's rate")
    # inline actions
    while i < len(w):
        k = low[i]
        if k in ("conform-action", "exceed-action", "violate-action"):
            a, i = _action(w, i + 1, src, node.text)
            getattr(p, k.split("-")[0]).append(a)
        else:
            i += 1
    for ch in node.children:
        k = ch.first()
        if k in ("conform-action", "exceed-action", "violate-action"):
            a, _ = _action(ch.words, 1, ctx.src(ch), ch.text)
            getattr(p, k.split("-")[0]).append(a)
            p.lines.append(ctx.src(ch))
        elif k != "exit":
            p.other.append((ch.text, ctx.src(ch)))
    return p


def _priority(node: Node, ctx: _Ctx) -> PriorityCmd:
    w = node.words[1:]
    low = [x.lower() for x in w]
    pr = PriorityCmd(ctx.src(node), node.text)
    i = 0
    if low and low[0] == "level":
        pr.level = int(_num(w[1] if len(w) > 1 else "", node, ctx, "a priority level"))
        i = 2
    if i < len(low) and low[i] == "percent":
        pr.rate = Rate("percent", _num(w[i + 1] if i + 1 < len(w) else "", node, ctx, "a percentage"))
        i += 2
    elif i < len(low) and _NUM.match(low[i]):
        v = float(w[i])
        unit = low[i + 1] if i + 1 < len(low) else ""
        if unit in XR_RATE_UNITS:
            pr.rate, i = Rate("bps", v * XR_RATE_UNITS[unit]), i + 2
        else:
            pr.rate, i = Rate("bps", v * 1e3), i + 1  # IOS: kbit/s
    if i < len(low) and _NUM.match(low[i]):
        pr.burst = Burst("bytes", float(w[i]))
    return pr


def _bandwidth(node: Node, ctx: _Ctx) -> BandwidthCmd:
    w = node.words[1:]
    low = [x.lower() for x in w]
    src, text = ctx.src(node), node.text
    if low[:2] == ["remaining", "percent"]:
        return BandwidthCmd(src, text, "remaining-percent", _num(w[2] if len(w) > 2 else "", node, ctx, "a percentage"))
    if low[:2] == ["remaining", "ratio"]:
        return BandwidthCmd(src, text, "remaining-ratio", _num(w[2] if len(w) > 2 else "", node, ctx, "a ratio"))
    if low[:1] == ["remaining"] and len(low) > 1 and _NUM.match(low[1]):  # IOS XR 'bandwidth remaining N' (percent)
        return BandwidthCmd(src, text, "remaining-percent", float(w[1]))
    if low[:1] == ["percent"]:
        return BandwidthCmd(src, text, "percent", _num(w[1] if len(w) > 1 else "", node, ctx, "a percentage"))
    rate, _ = _rate_xr(w, 0, node, ctx, default_unit="kbps")
    if rate.kind != "bps":
        raise ctx.error(node, "cannot read the bandwidth")
    return BandwidthCmd(src, text, "rate", rate.value)


def _queue_limit(node: Node, pc: PolicyClass, ctx: _Ctx) -> QueueLimitCmd | None:
    w = node.words[1:]
    low = [x.lower() for x in w]
    if low and low[0] in ("dscp", "precedence", "discard-class", "cos", "qos-group", "dscp-based",
                          "precedence-based", "discard-class-based", "cos-based"):
        pc.other.append((node.text, ctx.src(node), "not modelled: per-value queue limits (weighted tail drop); "
                                                    "the class's queue limit applies to every packet"))
        return None
    if low and low[0] == "percent":
        pc.other.append((node.text, ctx.src(node), "not modelled: a queue limit as a percentage of the port's "
                                                    "buffer (platform dependent); the platform's default is used"))
        return None
    size, _ = _size_xr(w, 0, node, ctx, "packets")
    return QueueLimitCmd(ctx.src(node), node.text, size)


_WRED_BASIS = {"dscp-based": "dscp", "precedence-based": "precedence", "prec-based": "precedence",
               "discard-class-based": "discard-class", "cos-based": "cos", "exp-based": "exp"}
_WRED_VALUE = {"dscp": "dscp", "precedence": "precedence", "prec": "precedence", "discard-class": "discard-class",
               "cos": "cos", "exp": "exp"}


def _wred(node: Node, cls: PolicyClass, ctx: _Ctx) -> None:
    w = node.words[1:]
    low = [x.lower() for x in w]
    src = ctx.src(node)
    if cls.wred is None:
        cls.wred = WredCmd(src, node.text)
    r = cls.wred
    if not low or low[0] == "default":
        return
    k = low[0]
    if k in _WRED_BASIS:
        r.basis = _WRED_BASIS[k]
        r.source, r.text = src, node.text
        return
    if k == "exponential-weighting-constant":
        r.exponent = (int(_num(w[1] if len(w) > 1 else "", node, ctx, "an exponent")), src)
        return
    if k == "ecn":
        r.ecn = src
        return
    if k in _WRED_VALUE:
        # IOS: random-detect dscp VALUE MIN MAX [MPD]; IOS XR: random-detect dscp V1,V2 MIN [unit] MAX [unit]
        r.basis = _WRED_VALUE[k]
        values = _split_values([w[1]]) if len(w) > 1 else []
        if not values:
            raise ctx.error(node, "random-detect without a value to apply the thresholds to")
        if len(low) > 2 and low[2] == "percent":
            # IOS XE (Catalyst 9000): random-detect dscp VALUE percent MIN MAX -- shares of the queue limit
            lo = Burst("percent", _num(w[3] if len(w) > 3 else "", node, ctx, "a minimum threshold percentage"))
            hi = Burst("percent", _num(w[4] if len(w) > 4 else "", node, ctx, "a maximum threshold percentage"))
            i = 5
        else:
            lo, i = _size_xr(w, 2, node, ctx, "packets")
            hi, i = _size_xr(w, i, node, ctx, "packets")
        mpd = float(w[i]) if i < len(w) and _NUM.match(low[i]) else None
        for v in values:
            r.thresholds.append(WredThreshold(v, lo, hi, mpd, src, node.text))
        return
    if _NUM.match(k):  # IOS XR: random-detect MIN [units] MAX [units] (every packet of the class)
        lo, i = _size_xr(w, 0, node, ctx, "packets")
        hi, i = _size_xr(w, i, node, ctx, "packets")
        r.thresholds.append(WredThreshold("*", lo, hi, None, src, node.text))
        return
    cls.other.append((node.text, src, "ignored: unknown random-detect option"))


def _shape(node: Node, ctx: _Ctx) -> ShapeCmd:
    w = node.words[1:]
    low = [x.lower() for x in w]
    kind = "average"
    i = 0
    if low and low[0] in ("average", "peak", "adaptive", "fecn-adapt", "max-buffers"):
        kind, i = low[0], 1
    if kind not in ("average", "peak"):
        raise ctx.error(node, f"shape {kind}: not modelled")
    if i < len(low) and low[i] == "percent":
        rate = Rate("percent", _num(w[i + 1] if i + 1 < len(w) else "", node, ctx, "a percentage"))
        i += 2
        bursts = []
        while i < len(low) and _NUM.match(low[i]) and len(bursts) < 2:
            bursts.append(Burst("ms", float(w[i])))
            i += 2 if i + 1 < len(low) and low[i + 1] == "ms" else 1
        return ShapeCmd(ctx.src(node), node.text, kind, rate, *(bursts + [None, None])[:2])
    v = _num(w[i] if i < len(w) else "", node, ctx, "the shaping rate")
    unit = low[i + 1] if i + 1 < len(low) else ""
    if unit in XR_RATE_UNITS:
        return ShapeCmd(ctx.src(node), node.text, kind, Rate("bps", v * XR_RATE_UNITS[unit]))
    i += 1
    bc = be = None
    if i < len(low) and _NUM.match(low[i]):
        bc, i = Burst("bits", float(w[i])), i + 1
        if i < len(low) and _NUM.match(low[i]):
            be = Burst("bits", float(w[i]))
    # IOS XR's default unit for shape average is bit/s as well
    return ShapeCmd(ctx.src(node), node.text, kind, Rate("bps", v), bc, be)


def _set(node: Node, ctx: _Ctx) -> SetCmd:
    w = node.words[1:]
    low = [x.lower() for x in w]
    if low and low[0] in ("ip", "ipv6") and len(low) > 1:
        w, low = w[1:], low[1:]
    what = _SET_WHAT.get(low[0], "other") if low else "other"
    vals = [x for x in w[1:] if x.lower() not in ("experimental", "topmost", "imposition", "tunnel", "inner")]
    return SetCmd(what, vals[-1] if vals else "", ctx.src(node), node.text)


def _policy_class(node: Node, ctx: _Ctx) -> PolicyClass:
    w = node.words[1:]
    low = [x.lower() for x in w]
    if low and low[0] == "type" and len(low) > 2:
        w, low = w[2:], low[2:]
    if not w:
        raise ctx.error(node, "class without a name")
    pc = PolicyClass(w[0], ctx.src(node))
    for ch in node.children:
        k = ch.first()
        if k == "priority":
            pc.priority = _priority(ch, ctx)
        elif k == "bandwidth":
            b = _bandwidth(ch, ctx)
            prev = pc.bandwidth
            if prev is not None and prev.kind.startswith("remaining") != b.kind.startswith("remaining"):
                pc.bandwidth_also = b  # IOS XR: a minimum and a remaining share in one class (refused per port)
            else:
                pc.bandwidth = b
        elif k == "police":
            pc.police.append(_police(ch, ctx))
        elif k == "queue-limit":
            q = _queue_limit(ch, pc, ctx)
            if q is not None:
                pc.queue_limit = q
        elif k == "random-detect":
            _wred(ch, pc, ctx)
        elif k == "fair-queue":
            pc.fair_queue = ctx.src(ch)
        elif k == "shape":
            pc.shape = _shape(ch, ctx)
        elif k == "service-policy":
            names = [x for x in ch.words[1:] if x.lower() not in ("input", "output", "type", "qos", "queueing",
                                                                   "queuing")]
            if not names:
                raise ctx.error(ch, "service-policy without a policy name")
            pc.child = (names[0], ctx.src(ch))
        elif k == "set":
            pc.sets.append(_set(ch, ctx))
        elif k in ("description", "exit"):
            continue
        else:
            pc.other.append((ch.text, ctx.src(ch), ""))
    return pc


def _policy_map(node: Node, ctx: _Ctx) -> PolicyMap | None:
    w = node.words[1:]
    low = [x.lower() for x in w]
    if low and low[0] == "type":
        t = low[1] if len(low) > 1 else ""
        if t not in ("qos", "queueing", "queuing"):
            return None  # inspect, control, pbr, performance-monitor ...
        w = w[2:]
    if not w:
        raise ctx.error(node, "policy-map without a name")
    pm = PolicyMap(w[0], ctx.src(node))
    for ch in node.children:
        k = ch.first()
        if k == "class":
            pm.classes.append(_policy_class(ch, ctx))
        elif k not in ("description", "exit", "end-policy-map"):
            pm.other.append((ch.text, ctx.src(ch)))
    return pm


# ---------------------------------------------------------------------------------------------- interfaces

def _interface(node: Node, ctx: _Ctx) -> Interface:
    w = node.words[1:]
    if not w:
        raise ctx.error(node, "interface without a name")
    name = "".join(w[:2]) if len(w) > 1 and re.fullmatch(r"[\d/.:]+", w[1]) else w[0]
    itf = Interface(name, ctx.src(node))
    for ch in node.children:
        k = ch.first()
        cw = ch.words
        if k == "bandwidth" and len(cw) > 1:
            low = [x.lower() for x in cw[1:]]
            if low[0] in ("qos-reference", "percent", "receive", "inherit"):
                if low[0] == "qos-reference" and len(low) > 1 and _NUM.match(low[1]):
                    itf.bandwidth = (float(low[1]) * 1e3, ctx.src(ch))
                continue
            if _NUM.match(low[0]):
                itf.bandwidth = (float(low[0]) * 1e3, ctx.src(ch))  # kbit/s
        elif k == "speed" and len(cw) > 1:
            v = cw[1].lower()
            if _NUM.match(v):
                itf.speed = (float(v) * 1e6, ctx.src(ch))  # Mbit/s
            elif v.endswith("g") and _NUM.match(v[:-1]):
                itf.speed = (float(v[:-1]) * 1e9, ctx.src(ch))
        elif k == "tx-ring-limit" and len(cw) > 1 and _NUM.match(cw[1]):
            itf.tx_ring = (int(float(cw[1])), ctx.src(ch))
        elif k == "service-policy":
            low = [x.lower() for x in cw[1:]]
            dirs = [x for x in low if x in ("input", "output")]
            rest = [x for x in cw[1:] if x.lower() not in ("input", "output", "type", "qos", "queueing",
                                                            "queuing", "history", "account")]
            if dirs and rest:
                itf.policies.append(Attachment(dirs[0], rest[0], ctx.src(ch)))
            else:
                ctx.note(ch, "ignored: service-policy without a direction and a policy name")
        elif k == "shutdown":
            itf.shutdown = ctx.src(ch)
        elif k in ("hold-queue", "fair-queue", "random-detect", "priority-group", "custom-queue-list",
                   "max-reserved-bandwidth", "tx-queue-limit", "traffic-shape", "rate-limit"):
            itf.other.append((ch.text, ctx.src(ch)))
    return itf


def parse_ios(cfg: ConfigText, dialect: str) -> IosConfig:
    """The MQC configuration of an IOS / IOS XE / IOS XR file (``dialect``), every command with its line."""
    ctx = _Ctx(cfg, dialect)
    out = IosConfig(cfg.file, dialect)
    for node in parse_tree(cfg.text):
        k = node.first()
        if k == "hostname" and len(node.words) > 1:
            out.hostname = (node.words[1], ctx.src(node))
        elif k == "class-map":
            cm = _class_map(node, ctx)
            if cm is not None:
                if cm.name in out.class_maps:  # entered twice: IOS merges the criteria
                    out.class_maps[cm.name].matches += cm.matches
                else:
                    out.class_maps[cm.name] = cm
        elif k == "policy-map":
            pm = _policy_map(node, ctx)
            if pm is not None:
                if pm.name in out.policy_maps:
                    out.policy_maps[pm.name].classes += pm.classes
                else:
                    out.policy_maps[pm.name] = pm
        elif k == "interface":
            itf = _interface(node, ctx)
            prev = out.interface(itf.name)
            if prev is None:
                out.interfaces.append(itf)
            else:
                prev.policies += itf.policies
                prev.bandwidth = itf.bandwidth or prev.bandwidth
                prev.speed = itf.speed or prev.speed
                prev.tx_ring = itf.tx_ring or prev.tx_ring
    out.notes = ctx.notes
    return out
