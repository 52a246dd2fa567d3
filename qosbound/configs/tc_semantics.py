"""The queueing meaning of Linux traffic control: one :class:`~qosbound.configs.port.Port` per device whose root
qdisc was configured (a kernel-assigned default root -- handle ``0:`` in ``tc -j`` output -- is not a policy).

* ``tbf`` at the root -> the parent shaper (rate, burst = Bc) over its child qdisc (or over one FIFO queue);
* ``htb``: the one top class -> the parent shaper; its leaf classes -> bandwidth classes with their ``rate``;
  the ``default`` class -> ``class-default``; ``ceil`` below the parent, ``prio``, ``quantum`` -> notes;
  several top classes or a third level -> refused;
* ``prio`` (and an explicit ``pfifo_fast``) -> bands 0..n-2 as priority levels 1..n-1, the last band as
  ``class-default``; without filters DSCPs reach bands by the priomap and the IP stack's TOS -> priority table
  (labelled Linux defaults);
* a leaf's ``pfifo`` / ``bfifo`` limit -> ``queue_limit`` (bytes in full-size packets), none -> the device's
  txqueuelen (1000); ``red`` -> a WRED dropper (bytes counted in ``avpkt`` packets, ``probability`` -> P_d =
  1/probability, the EWMA weight from ``burst`` as tc computes it); ``gred`` -> one threshold set per virtual
  queue;
* ``u32`` filters ``match ip dsfield`` / ``match ip tos`` -> the DSCPs of the class they point to (first match by
  prio); other filters -> notes;
* ``fq_codel``, ``cake``, ``sfq``, ``fq``, ``codel``, ``pie``, ``hfsc``, ``netem``, ``mq`` ... -> refused with the
  reason.
"""

from __future__ import annotations

import math

from qosbound.configs.defaults import default, default_field
from qosbound import dscp
from qosbound.configs.formatting import rate_text
from qosbound.configs.port import Bandwidth, Dropper, Police, Port, QueueClass, Shaper, Threshold
from qosbound.configs.source import ConfigText, Source
from qosbound.configs.tc_ast import TcClass, TcConfig, TcFilter, TcQdisc, handle_major
from qosbound.configs.tc_parse import parse_tc_json, parse_tc_script
from qosbound.configs.traffic import TrafficSpec
from qosbound.configs.values import Field, given
from qosbound.errors import ConfigError, ConfigRefused

__all__ = ["tc_ports", "REFUSED_QDISCS"]

#: qdiscs the port model cannot represent honestly, with the reason.
REFUSED_QDISCS = {
    "fq_codel": "flow queueing with CoDel: per-flow queues and a sojourn-time dropper; the port has per-class FIFO "
                "queues with tail or WRED drops",
    "cake": "CAKE: per-flow and per-host queues, a built-in shaper with overhead compensation and COBALT dropping; "
            "the port has per-class FIFO queues with tail or WRED drops",
    "sfq": "stochastic fairness queueing: hashed per-flow queues dropping from the longest flow; the port has one "
           "FIFO queue per class",
    "fq": "per-flow fair queueing with pacing; the port has one FIFO queue per class",
    "codel": "CoDel drops by sojourn time, not by queue length; the port's droppers are tail or WRED",
    "pie": "PIE drops by estimated queueing delay; the port's droppers are tail or WRED",
    "fq_pie": "per-flow queues with PIE; the port has per-class FIFO queues",
    "hfsc": "hierarchical fair service curves (real-time and link-sharing curves); not modelled",
    "netem": "network emulation (added delay, loss, reordering) is not a router queue",
    "mq": "one qdisc per hardware queue: the port model is one scheduler (configure the qdisc of the queue in use)",
    "mqprio": "hardware traffic classes on several queues: not modelled",
    "taprio": "time-aware scheduling (IEEE 802.1Qbv gate lists): not modelled",
    "cbs": "credit-based shaper (IEEE 802.1Qav): not modelled",
    "etf": "earliest-txtime-first: not modelled",
    "choke": "CHOKe drops by flow matching: not modelled",
    "sfb": "stochastic fair blue: per-flow marking: not modelled",
    "drr": "deficit round robin with classes given by filters only: not modelled",
    "qfq": "quick fair queueing: not modelled",
    "cbq": "class-based queueing (obsolete): not modelled",
    "ets": "enhanced transmission selection: not modelled",
    "multiq": "one band per hardware queue: not modelled",
    "dsmark": "dsmark re-marking with tcindex: not modelled",
    "atm": "ATM virtual circuits: not modelled",
}
_FIFOS = ("pfifo", "bfifo", "pfifo_head_drop")


def _err(src: Source, text: str, problem: str, refused: bool = False) -> ConfigError:
    return (ConfigRefused if refused else ConfigError)(problem, file=src.file, line=src.line, construct=text)


def _refuse(q: TcQdisc | TcClass, kind: str) -> ConfigError:
    return _err(q.source, q.text, f"{kind}: {REFUSED_QDISCS[kind]}", refused=True)


def _red_wlog(qmin_pkts: float, burst: float) -> int:
    """The EWMA exponent tc gives red: the largest weight W = 2^-wlog with which ``burst`` back-to-back packets
    arriving to an idle queue keep the average below ``min`` (Floyd & Jacobson, "Random Early Detection Gateways
    for Congestion Avoidance", 1993, section 10: L + 1 + ((1 - w)^(L+1) - 1) / w < min_th)."""
    a = burst + 1 - qmin_pkts
    for wlog in range(1, 32):
        w = 2.0 ** -wlog
        if a <= (1 - (1 - w) ** burst) / w:
            return wlog
    return 9


class _Device:
    def __init__(self, cfg: TcConfig, dev: str, traffic: TrafficSpec, host: str):
        self.cfg, self.dev, self.traffic, self.host = cfg, dev, traffic, host
        self.qdiscs = [q for q in cfg.qdiscs if q.dev == dev]
        self.classes = [c for c in cfg.classes if c.dev == dev]
        self.filters = [f for f in cfg.filters if f.dev == dev]

    def child_qdisc(self, classid: str) -> TcQdisc | None:
        cid = classid.lower()
        return next((q for q in self.qdiscs if q.parent.lower() == cid), None)

    def children(self, parent: str) -> list[TcClass]:
        p = parent.lower()
        alts = {p, p.rstrip("0").rstrip(":") + ":" if p.endswith(":0") else p}
        return [c for c in self.classes if c.parent.lower() in alts]

    # ------------------------------------------------------------------------------------------------ port

    def port(self, root: TcQdisc) -> Port:
        port = Port(host=self.host, interface=self.dev, direction="out", format=self.cfg.format, platform="linux",
                    source=root.source, policy=f"{root.kind} {root.handle}")
        try:
            self.build(port, root)
        except ConfigError as e:
            port.refusals.append(e)
        return port

    def build(self, port: Port, root: TcQdisc) -> None:
        phys = self.traffic.link_rate(self.host, self.dev)
        sched = root
        if root.kind in REFUSED_QDISCS:
            raise _refuse(root, root.kind)
        if root.kind == "tbf":
            port.shaper = self.tbf_shaper(root, phys)
            sched = next((q for q in self.qdiscs if q.parent.lower().startswith(root.major + ":")), None)
            if sched is not None and sched.kind in REFUSED_QDISCS:
                raise _refuse(sched, sched.kind)
        if sched is not None and sched.kind == "htb":
            self.htb(port, sched, phys)
        else:
            if port.shaper is not None:
                port.link_rate = port.shaper.cir
            elif phys is not None:
                port.link_rate = phys
            else:
                raise _err(root.source, root.text, f"the rate of {self.dev} is unknown (tc states no line rate and "
                                                   f"no shaper): give it in a traffic file (interfaces: "
                                                   f"{{'{self.host}:{self.dev}': {{rate: ...}}}})")
            if sched is None:  # tbf alone: one FIFO of its limit
                qc = QueueClass("class-default", root.source)
                qc.queue_limit = self.tbf_limit(root)
                port.classes = [qc]
            elif sched.kind in ("prio", "pfifo_fast"):
                self.prio(port, sched)
            elif sched.kind in _FIFOS or sched.kind in ("red", "gred"):
                qc = QueueClass("class-default", sched.source)
                self.leaf(port, qc, sched, [0])
                port.classes = [qc]
            elif sched.kind in REFUSED_QDISCS:
                raise _refuse(sched, sched.kind)
            else:
                raise _err(sched.source, sched.text, f"qdisc {sched.kind}: not read by qosbound", refused=True)
        if port.shaper is not None and phys is not None:
            port.shaper.parent_rate = phys
        port.note(None, "NIC transmit ring", "not modelled: the driver's transmit ring below the qdisc (sized "
                                             "dynamically by BQL); the bounds exclude its blocking")

    # ------------------------------------------------------------------------------------------------ shapers

    def tbf_shaper(self, q: TcQdisc, phys: Field | None) -> Shaper:
        o = q.options
        if "rate" not in o or "burst" not in o:
            raise _err(q.source, q.text, "tbf needs rate and burst")
        if "peakrate" in o:
            port_note = "not modelled: tbf peakrate (a second bucket limiting bursts at the peak rate)"
            q.options.setdefault("_notes", []).append(port_note)
        return Shaper(given(o["rate"], q.source), given(o["burst"], q.source), None, phys)

    def tbf_limit(self, q: TcQdisc) -> Field:
        o = q.options
        size = default_field("linux", "packet_size")
        if "limit" in o:
            nb = given(o["limit"], q.source)
        else:
            lat = given(o["latency"], q.source) if "latency" in o else default_field("linux", "tbf_latency")
            nb = lat.derive(o["rate"] * lat.value / 8.0 + o["burst"], "rate x latency + burst (as tc computes "
                                                                      "the limit)")
        return nb.derive(max(1, math.floor(nb.value / size.value)), f"{nb.value:g} B in {size.value} B packets",
                         size)

    # ------------------------------------------------------------------------------------------------ classify

    def dscp_map(self, parent_major: str, targets: list[str]) -> tuple[dict[int, str], dict[str, list[Source]]]:
        """DSCP -> classid from the u32 filters attached to the qdisc (first match by prio, then order)."""
        fl = [f for f in self.filters if handle_major(f.parent if f.parent != "root" else parent_major + ":")
              == parent_major]
        fl.sort(key=lambda f: f.prio)
        out: dict[int, str] = {}
        lines: dict[str, list[Source]] = {}
        for f in fl:
            if f.flowid is None:
                self.notes.append((f.source, f.text, "ignored: a filter without flowid/classid"))
                continue
            target = f.flowid.lower()
            if target not in targets:
                raise _err(f.source, f.text, f"flowid {f.flowid} names no class of qdisc {parent_major}:")
            ds = [m for m in f.matches if m.what == "dsfield"]
            others = [m for m in f.matches if m.what != "dsfield"]
            if f.kind != "u32" or not ds:
                self.notes.append((f.source, f.text, f"not modelled: a {f.kind} filter not matching DSCP (marks, "
                                                     "addresses, ports); give the class's traffic by name in a "
                                                     "traffic file"))
                continue
            if others:
                self.notes.append((f.source, f.text, "not modelled: criteria besides DSCP narrow this filter; the "
                                                     "port takes every packet of its DSCPs"))
            sel = set(dscp.ALL)
            for m in ds:
                sel &= {d for d in dscp.ALL if ((d << 2) & m.mask) == (m.value & m.mask)}
            for d in sorted(sel):
                if d not in out:
                    out[d] = target
            lines.setdefault(target, []).append(f.source)
        return out, lines

    # ------------------------------------------------------------------------------------------------ prio

    def prio(self, port: Port, q: TcQdisc) -> None:
        o = q.options
        bands = int(o.get("bands", 3))
        if bands < 2:
            raise _err(q.source, q.text, "a prio qdisc with fewer than 2 bands")
        ids = [f"{q.major}:{i + 1}" for i in range(bands)]
        self.notes = []
        fmap, flines = self.dscp_map(q.major, ids)
        if "priomap" in o:
            priomap = given(list(o["priomap"]), q.source)
        else:
            priomap = default_field("linux", "priomap")
        tos = default_field("linux", "tos_priority")
        band_of: dict[int, tuple[int, bool]] = {}
        for d in dscp.ALL:
            if d in fmap:
                band_of[d] = (ids.index(fmap[d]), True)
            else:
                prio = tos.value[((d << 2) & 0x1E) >> 1]
                pm = priomap.value
                band_of[d] = (min(pm[prio] if prio < len(pm) else 1, bands - 1), False)
        classes = []
        for b in range(bands):
            cid = ids[b]
            name = "class-default" if b == bands - 1 else f"band{b}"
            child = self.child_qdisc(cid)
            qc = QueueClass(name, child.source if child is not None else q.source)
            mine = {d for d, (bb, _) in band_of.items() if bb == b}
            used_map = any(not f for d, (bb, f) in band_of.items() if bb == b)
            srcs = [q.source] + flines.get(cid, [])
            if b < bands - 1:
                qc.priority = given(b + 1, q.source, how=f"prio band {b}")
                f = Field([dscp.name(d) for d in sorted(mine)], tuple(sorted(set(srcs))), None,
                          "u32 filters" if not used_map else "filters, else the priomap and the TOS -> priority table",
                          (priomap, tos) if used_map else ())
                qc.dscp = f
            qc.matches.append((f"band {b} of {q.kind} {q.handle}", q.source))
            self.leaf(port, qc, child, sorted(mine) or [0])
            classes.append(qc)
        port.classes = classes
        for s, text, eff in self.notes:
            port.note(s, text, eff)

    # ------------------------------------------------------------------------------------------------ htb

    def htb(self, port: Port, q: TcQdisc, phys: Field | None) -> None:
        self.notes = []
        tops = self.children(f"{q.major}:")
        if not tops:
            raise _err(q.source, q.text, "an htb qdisc without classes")
        if len(tops) > 1:
            raise _err(tops[1].source, tops[1].text, "several htb root classes (independent shapers that cannot "
                                                     "borrow from each other): the port model has one shaper",
                       refused=True)
        top = tops[0]
        leaves = self.children(top.classid)
        if not leaves:
            leaves = [top]
        else:
            o = top.options
            if "rate" not in o:
                raise _err(top.source, top.text, "an htb class without rate")
            cir = given(o["rate"], top.source)
            if "burst" in o:
                bc = given(o["burst"], top.source)
            else:
                d = default("linux", "htb_burst")
                bc = Field(o["rate"] / 8.0 / d.value["hz"] + d.value["mtu"], (), d, "rate / HZ + mtu", (cir,))
            if port.shaper is not None:
                port.note(top.source, top.text, "htb root class under a tbf: the lower of the two rates shapes")
                if cir.value < port.shaper.cir.value:
                    port.shaper = Shaper(cir, bc, None, phys)
            else:
                port.shaper = Shaper(cir, bc, None, phys)
        for leaf in leaves:
            if self.children(leaf.classid):
                raise _err(leaf.source, leaf.text, "a third level of htb classes: the port model has one shaper over "
                                                   "one scheduler", refused=True)
        if port.shaper is not None:
            port.link_rate = port.shaper.cir
        elif phys is not None:
            port.link_rate = phys
        else:
            raise _err(q.source, q.text, f"the rate of {self.dev} is unknown: give it in a traffic file")
        base = port.link_rate
        ids = [c.classid.lower() for c in leaves]
        fmap, flines = self.dscp_map(q.major, ids)
        dflt = q.options.get("default")
        dflt_id = f"{q.major}:{dflt:x}" if isinstance(dflt, int) and dflt else None
        classes, reserved = [], 0.0
        for leaf in leaves:
            o = leaf.options
            cid = leaf.classid.lower()
            is_default = cid == dflt_id
            name = "class-default" if is_default else "htb_" + cid.replace(":", "_")
            qc = QueueClass(name, leaf.source)
            mine = sorted(d for d, t in fmap.items() if t == cid)
            if not is_default:
                qc.dscp = Field([dscp.name(d) for d in mine], tuple(sorted(set(flines.get(cid, [leaf.source])))))
            qc.matches.append((f"htb class {leaf.classid}" + (" (the qdisc's default)" if is_default else ""),
                               leaf.source))
            if "rate" not in o:
                raise _err(leaf.source, leaf.text, "an htb class without rate")
            qc.bandwidth = given(Bandwidth("rate", o["rate"]), leaf.source)
            reserved += o["rate"]
            if "ceil" in o and o["ceil"] < base.value * (1 - 1e-9):
                self.notes.append((leaf.source, leaf.text, f"not modelled: ceil {rate_text(o['ceil'])} caps the "
                                   "class below the parent's rate; the port model may serve it faster (its bounds are "
                                   "then not upper bounds)"))
            if "prio" in o:
                self.notes.append((leaf.source, leaf.text, f"not modelled: htb prio {o['prio']} orders the borrowing "
                                   "of spare rate; the port shares spare rate by the classes' rates"))
            child = self.child_qdisc(leaf.classid)
            keys = mine if not is_default else sorted(set(dscp.ALL) - set(fmap))
            self.leaf(port, qc, child, [0] if is_default else (keys or [0]))
            classes.append(qc)
        if reserved > base.value * (1 + 1e-9):
            raise _err(leaves[-1].source, leaves[-1].text, f"the htb classes' rates add up to {rate_text(reserved)}, "
                                                          f"more than the parent's {rate_text(base.value)}")
        if dflt_id is None or dflt_id not in ids:
            qc = QueueClass("class-default", q.source)
            qc.matches.append(("packets no filter classifies", q.source))
            qc.queue_limit = default_field("linux", "txqueuelen", how="htb's direct queue")
            classes.append(qc)
            self.notes.append((q.source, q.text, "unclassified packets bypass the htb classes (htb's direct queue, "
                                                 "sent unshaped): modelled as class-default sharing the unreserved "
                                                 "rate"))
        classes.sort(key=lambda c: c.is_default)
        port.classes = classes
        for s, text, eff in self.notes:
            port.note(s, text, eff)

    # ------------------------------------------------------------------------------------------------ leaves

    def leaf(self, port: Port, qc: QueueClass, q: TcQdisc | None, keys: list[int]) -> None:
        size = default_field("linux", "packet_size")
        if q is None:
            qc.queue_limit = default_field("linux", "txqueuelen", how="a leaf's default pfifo")
            return
        if q.kind in REFUSED_QDISCS:
            raise _refuse(q, q.kind)
        o = q.options
        if q.kind == "pfifo" or q.kind == "pfifo_head_drop":
            qc.queue_limit = given(int(o["limit"]), q.source) if "limit" in o else \
                default_field("linux", "txqueuelen")
            if q.kind == "pfifo_head_drop":
                port.note(q.source, q.text, "approximated: head drop taken as tail drop (same loss, different "
                                            "packets dropped)")
        elif q.kind == "bfifo":
            if "limit" in o:
                nb = given(o["limit"], q.source)
                qc.queue_limit = nb.derive(max(1, math.floor(nb.value / size.value)),
                                           f"{nb.value:g} B in {size.value} B packets", size)
            else:
                qc.queue_limit = default_field("linux", "txqueuelen")
        elif q.kind in ("red", "gred"):
            self.red(port, qc, q, keys)
        elif q.kind == "tbf":
            cir = given(o.get("rate", 0.0), q.source)
            if qc.priority is not None:
                qc.police = Police(cir, given(o.get("burst", 0.0), q.source),
                                   conditional=given(False, q.source, how="a tbf in the band"))
                port.note(q.source, q.text, f"tbf in {qc.name}: shaped, not policed; its output is bounded by the "
                                            "token bucket like a policer's (sound for the other classes), but its "
                                            "own delay includes waiting for tokens (not an upper bound for it)")
            else:
                qc.rate_cap = cir
                port.note(q.source, q.text, f"not modelled: a tbf shaping class {qc.name} (per-class shaper)")
            qc.queue_limit = self.tbf_limit(q)
        else:
            raise _err(q.source, q.text, f"qdisc {q.kind}: not read by qosbound", refused=True)
        for n in o.get("_notes", []):
            port.note(q.source, q.text, n)

    def red(self, port: Port, qc: QueueClass, q: TcQdisc, keys: list[int]) -> None:
        o = q.options
        if q.kind == "gred":
            dps = o.get("_dps", [])
            if not dps:
                raise _err(q.source, q.text, "gred without virtual queues (tc qdisc change ... gred DP n ...)")
            port.note(q.source, q.text, "approximated: gred virtual queues are selected by tc_index (dsmark), not "
                                        "by DSCP; the class's DSCPs are taken in order of drop precedence, one per "
                                        "virtual queue")
            sets = [(opts, src) for opts, src in sorted(dps, key=lambda x: x[0].get("DP", 0))]
        else:
            sets = [(o, q.source)]
        th = {}
        wlog = None
        limit_src = None
        for i, d in enumerate(keys):
            opts, src = sets[min(i, len(sets) - 1)]
            for k in ("min", "max"):
                if k not in opts and k not in o:
                    raise _err(src, q.text, f"red without {k}")
            get = lambda k: opts.get(k, o.get(k))  # noqa: E731
            # tc -j prints no avpkt (the kernel keeps none): full-size packets are assumed then
            avpkt = given(get("avpkt"), src) if get("avpkt") else default_field("linux", "packet_size")
            opts = {**opts, "avpkt": avpkt.value}
            lo = given(get("min"), src).derive(get("min") / get("avpkt"), "bytes / avpkt", avpkt)
            hi = given(get("max"), src).derive(get("max") / get("avpkt"), "bytes / avpkt", avpkt)
            p = get("probability")
            pd = given(1.0 / p, src, how="1 / probability") if p else \
                default_field("linux", "red_probability").derive(1.0 / 0.02, "1 / probability")
            th[dscp.name(d)] = Threshold(lo, hi, pd)
            if wlog is None and get("wlog"):
                wlog = given(int(get("wlog")), src)
            if wlog is None:
                burst = get("burst")
                if burst:
                    wlog = given(_red_wlog(lo.value, float(burst)), src, how="EWMA weight from burst (tc's rule)")
            limit_src = src
        if o.get("ecn"):
            port.note(q.source, q.text, "not modelled: ECN marking; drops are counted as if no flow were ECN-capable")
        if o.get("adaptive"):
            port.note(q.source, q.text, "not modelled: adaptive RED (max_p moves with the load); the configured "
                                        "probability is used")
        qc.dropper = Dropper(given("wred", q.source), th, exponent=wlog or default_field("linux", "red_exponent"))
        lim = o.get("limit")
        if lim:
            avp = o.get("avpkt") or sets[0][0].get("avpkt") or default("linux", "packet_size").value
            qc.queue_limit = given(lim, q.source).derive(max(1, math.floor(lim / avp)), "limit bytes / avpkt")
        else:
            qc.queue_limit = default_field("linux", "txqueuelen")


def tc_ports(cfg: ConfigText, fmt, traffic: TrafficSpec) -> tuple[list[Port], list[str]]:
    """One port per device with a configured root qdisc, and file-level notes."""
    tc = parse_tc_script(cfg) if fmt.name == "tc-script" else parse_tc_json(cfg)
    host = cfg.file.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    ports, notes = [], list(tc.notes)
    for dev in tc.devices():
        d = _Device(tc, dev, traffic, host)
        roots = [q for q in d.qdiscs if q.parent == "root"]
        if not roots:
            continue
        root = roots[-1]
        if not root.explicit or root.kind in ("noqueue",):
            notes.append(f"{root.source}: {dev}: root qdisc {root.kind} is the kernel's default (handle 0:), not a "
                         "configured policy: no port")
            continue
        ports.append(d.port(root))
    if not tc.qdiscs:
        notes.append(f"{cfg.file}: no qdisc is configured")
    return ports, notes
