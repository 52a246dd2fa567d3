"""The checks across a port's fields (:func:`check_port`, run when the scenario is read): class names and
DSCPs, each class's service, meters and dropper, the numbers in their physical ranges, the shaper, and the
rates the priority levels and shares take of the link. Every failure is a
:class:`~qosbound.errors.ScenarioError` naming the field by its dotted path (``classes.voice.police.cir``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from qosbound import dscp
from qosbound.errors import ScenarioError
from qosbound.systems.af.schema import check_marker, check_threshold
from qosbound.systems.base import MAX_BURST, MAX_RATE, MAX_TIME, check_range
from qosbound.systems.port.classes import (CLASS_NAME, DEFAULT_CLASS, MAX_CLASSES, MAX_PRECEDENCES, MAX_STREAMS,
                                           TrafficClass, always_congested, long_run_rate, parse_bandwidth, precedences,
                                           priority_reservation)
from qosbound.units import format_exact

if TYPE_CHECKING:
    from qosbound.systems.port.schema import Scenario

__all__ = ["check_port", "shaper_burst", "shaper_line_rate", "MIN_PACKET"]


def _at(c: TrafficClass, field: str = "") -> str:
    return f"classes.{c.name}" + (f".{field}" if field else "")


def check_port(scn: Scenario) -> None:
    """Every check across fields; the first failure raises a ScenarioError naming the field."""
    if not scn.classes:
        raise ScenarioError("declare at least one class", field="classes")
    if len(scn.classes) > MAX_CLASSES:
        raise ScenarioError(f"{len(scn.classes)} classes: at most {MAX_CLASSES}", field="classes")
    seen: dict[str, str] = {}
    names = set()
    for c in scn.classes:
        if not CLASS_NAME.match(c.name):
            raise ScenarioError(f"class name {c.name!r}: at most 100 letters, digits and punctuation, without "
                                "spaces, quotes, brackets, ',', ';', '=', '|', a leading or trailing '.' or '..' "
                                "(it heads metric names such as voice.delay.p99)", field="classes")
        if c.name in names:
            raise ScenarioError(f"two classes are named {c.name!r}", field="classes")
        names.add(c.name)
        for d in c.dscp:
            if d in seen and seen[d] != c.name:
                raise ScenarioError(f"DSCP {d} is matched by classes {seen[d]} and {c.name}: a packet must belong "
                                    "to one class", field=_at(c, "dscp"))
            seen[d] = c.name
    for c in scn.classes:
        if not c.dscp and c.precedences:  # a class matching no DSCP (class-default) takes the ones left
            taken = [d for d in c.precedences if d in seen]
            if taken:
                raise ScenarioError(f"precedence {taken[0]} is a DSCP class {seen[taken[0]]} matches: a packet must "
                                    "belong to one class", field=_at(c, "precedences"))
        _check_class(scn, c)
    forms = {parse_bandwidth(c.bandwidth)[0] for c in scn.classes if c.bandwidth is not None}
    if len(forms) > 1:
        raise ScenarioError(f"bandwidths mix the forms {', '.join(sorted(forms))}: a port uses one form (rates, "
                            "'N %', or 'remaining N %'), as routers require", field="classes")
    _check_ranges(scn)
    _check_shaper(scn)
    levels = sorted({c.priority for c in scn.classes if c.priority is not None})
    _check_rates(scn, forms.pop() if forms else None, levels)
    _check_times(scn)


def shaper_burst(scn: Scenario) -> float:
    """The parent shaper's burst Bc, bytes: ``bc``, else ``rate x tc``; 0 without a shaper."""
    sh = scn.shaper
    if sh is None:
        return 0.0
    if sh.bc is not None:
        return float(sh.bc)
    return float(scn.link.rate) * float(sh.tc) / 8.0


def shaper_line_rate(scn: Scenario) -> float:
    """The rate the ring drains at, bit/s: a parent shaper's ``interface_rate``, else ``link.rate``."""
    sh = scn.shaper
    if sh is None or sh.interface_rate is None:
        return float(scn.link.rate)
    return float(sh.interface_rate)


def _check_shaper(scn: Scenario) -> None:
    """The shaper's rate is the port's (``link.rate``: the child policy's percentages are of it), its burst is
    given by ``bc`` or ``tc``, and the two agree when both are (within 1 %, as configurations round them); the
    interface it shapes is at least as fast."""
    sh = scn.shaper
    if sh is None:
        return
    C = float(scn.link.rate)
    if sh.rate is not None and abs(float(sh.rate) - C) > 1e-9 * C:
        raise ScenarioError(f"the shaper's rate ({format_exact(float(sh.rate), 'rate')}) differs from link.rate "
                            f"({format_exact(C, 'rate')}): link.rate is the rate the shaper serves the classes at (the "
                            "interface's own rate does not enter the port)", field="shaper.rate")
    if sh.interface_rate is not None and not float(sh.interface_rate) >= C * (1.0 - 1e-9):
        raise ScenarioError(f"the interface's rate ({format_exact(float(sh.interface_rate), 'rate')}) is below the "
                            f"shaper's ({format_exact(C, 'rate')}): a shaper cannot send faster than its line",
                            field="shaper.interface_rate")
    if sh.bc is None and sh.tc is None:
        raise ScenarioError("give the shaper's burst: bc (bytes per interval) or tc (the interval)", field="shaper")
    if sh.bc is not None:
        check_range(sh.bc, 1.0, MAX_BURST, "shaper burst", "B", "shaper.bc")
        if sh.tc is not None and abs(8.0 * float(sh.bc) / C - float(sh.tc)) > 0.01 * float(sh.tc):
            raise ScenarioError(f"bc = {sh.bc:g} B at {format_exact(C, 'rate')} is an interval of "
                                f"{8.0 * float(sh.bc) / C:.6g} s, not tc = {sh.tc:g} s", field="shaper.tc")
    else:
        check_range(sh.tc, None, MAX_TIME, "shaping interval", "s", "shaper.tc")


#: The smallest packet a port takes, bytes (an exponential size law is drawn at least this large).
MIN_PACKET = 1.0


def _check_ranges(scn: Scenario) -> None:
    """Every number in its physical range (qosbound.systems.base): rates up to 1 Pbit/s, bursts up to 1e12 B,
    times up to 1e6 s, packets and ring units from 1 B to the largest IP packet."""
    check_range(scn.link.delay, None, MAX_TIME, "propagation delay", "s", "link.delay")
    if scn.txq is not None and scn.txq.unit_size != "packet":
        check_range(scn.txq.unit_size, MIN_PACKET, 65535.0, "unit size", "B", "txq.unit_size")
    check_range(scn.scheduler.quantum, None, MAX_BURST, "quantum", "B", "scheduler.quantum")
    for c in scn.classes:
        at = _at(c)
        p = c.police
        if p is not None:
            for name in ("cir", "pir"):
                check_range(getattr(p, name), 0.0, MAX_RATE, name.upper(), "bit/s", f"{at}.police.{name}")
            for name in ("cbs", "pbs", "ebs"):
                check_range(getattr(p, name), None, MAX_BURST, name.upper(), "B", f"{at}.police.{name}")
        if c.marker is not None:
            for name in ("cir", "pir"):
                check_range(getattr(c.marker, name), 0.0, MAX_RATE, name.upper(), "bit/s", f"{at}.marker.{name}")
            for name in ("cbs", "pbs", "ebs"):
                check_range(getattr(c.marker, name), None, MAX_BURST, name.upper(), "B", f"{at}.marker.{name}")
        if c.bandwidth is not None and not isinstance(c.bandwidth, str):
            check_range(float(c.bandwidth), 0.0, MAX_RATE, "bandwidth", "bit/s", f"{at}.bandwidth")
        t = c.traffic
        if t is None:
            continue
        check_range(t.rate, 0.0, MAX_RATE, "rate", "bit/s", f"{at}.traffic.rate")
        for name in ("on", "off"):
            check_range(getattr(t, name), None, MAX_TIME, f"{name} period", "s", f"{at}.traffic.{name}")
        if t.phase != "random":
            check_range(t.phase, None, MAX_TIME, "phase", "s", f"{at}.traffic.phase")
        check_range(t.size, MIN_PACKET, 65535.0, "packet size", "B", f"{at}.traffic.size")
        for k, sz in enumerate(t.sizes if isinstance(t.sizes, list) else []):
            check_range(sz.size, MIN_PACKET, 65535.0, "packet size", "B", f"{at}.traffic.sizes.{k}.size")
        streams = [("call", t.call)] if t.call is not None else \
            [(f"streams.{k}", x) for k, x in enumerate(t.streams or [])]
        for where, x in streams:
            check_range(x.rate, 0.0, MAX_RATE, "rate", "bit/s", f"{at}.traffic.{where}.rate")
            check_range(x.size, MIN_PACKET, 65535.0, "packet size", "B", f"{at}.traffic.{where}.size")
            if x.phase != "random":
                check_range(x.phase, None, MAX_TIME, "phase", "s", f"{at}.traffic.{where}.phase")


def _check_times(scn: Scenario) -> None:
    """Streams within the simulator's arrays, and transmission times that are normal floating-point numbers
    (a 1e-300 bit/s link or a 1e300 bit/s one would over- or underflow every formula)."""
    streams = 0
    for c in scn.classes:
        t = c.traffic
        if t is not None:
            streams += t.calls if t.calls is not None else len(t.streams or [1])
    if streams > MAX_STREAMS:
        raise ScenarioError(f"{streams} streams (calls count one each): at most {MAX_STREAMS}", field="classes")
    C = scn.link.rate
    for L in (1.0, 65535.0):
        x = 8.0 * L / C
        if not (math.isfinite(x) and 1e-15 <= x <= 1e6):
            raise ScenarioError(f"a line rate of {C:g} bit/s gives a {L:g}-byte packet a transmission time of {x:g} s, "
                                "outside the range the methods evaluate", field="link.rate")


def _check_class(scn: Scenario, c: TrafficClass) -> None:
    default = c.name == DEFAULT_CLASS
    if c.priority is not None and c.bandwidth is not None:
        raise ScenarioError("give either 'priority' (a strict-priority level) or 'bandwidth' (a weighted share), "
                            "not both", field=_at(c, "bandwidth"))
    if c.priority is None and c.bandwidth is None and not default:
        raise ScenarioError("give 'priority: N' (a strict-priority level) or 'bandwidth' (a rate, 'N %' or "
                            "'remaining N %')", field=_at(c))
    if default and c.priority is not None:
        raise ScenarioError("class-default is served by the weighted scheduler: give it a bandwidth (or none: "
                            "the unreserved rest)", field=_at(c, "priority"))
    if c.bandwidth is not None:
        try:
            parse_bandwidth(c.bandwidth)
        except ScenarioError as e:
            raise ScenarioError(e.problem, field=_at(c, "bandwidth")) from None
    for what, codes in (("dscp", c.dscp), ("precedences", c.precedences or [])):
        twice = [d for k, d in enumerate(codes) if d in codes[:k]]
        if twice:
            raise ScenarioError(f"DSCP {twice[0]} is listed twice", field=_at(c, what))
    prec = precedences(c)
    if not prec or len(prec) > MAX_PRECEDENCES:
        raise ScenarioError(f"{len(prec)} precedences: a class tells apart one to {MAX_PRECEDENCES} drop "
                            "precedences (the droppers' and markers' colours); its 'dscp' may list any number of "
                            "DSCPs", field=_at(c, "precedences"))
    if c.dscp:
        strays = [d for d in prec if d not in c.dscp]
        if strays:
            raise ScenarioError(f"precedence {strays[0]} is not one of the DSCPs the class matches "
                                f"({', '.join(c.dscp)})", field=_at(c, "precedences"))
    t = c.traffic
    if t is not None:
        if t.is_saturated and c.priority is not None:
            raise ScenarioError("a saturated priority class would starve every class below it: give it a rate",
                                field=_at(c, "traffic.saturated"))
        if t.mix is not None:
            if len(t.mix) != len(prec) or abs(sum(t.mix) - 1.0) > 1e-9:
                raise ScenarioError(f"mix gives the fractions of the class's {len(prec)} precedence(s) "
                                    f"({', '.join(prec)}): {len(prec)} numbers summing to 1",
                                    field=_at(c, "traffic.mix"))
    d = c.dropper
    if d.alpha is not None and not (0 < d.alpha <= 1):
        raise ScenarioError(f"EWMA weight alpha = {d.alpha:g} is not in (0, 1]", field=_at(c, "dropper.alpha"))
    if d.mode == "tail":
        if d.thresholds:
            raise ScenarioError("thresholds belong to a RED-family dropper (mode: wred, rio or nred)",
                                field=_at(c, "dropper.thresholds"))
    else:
        keys = {}
        for k, th in d.thresholds.items():
            try:
                name = dscp.canonical(k)
            except ValueError as e:
                raise ScenarioError(str(e), field=_at(c, f"dropper.thresholds.{k}")) from None
            if name not in prec and name not in c.dscp:
                raise ScenarioError(f"{k} is not one of the class's DSCPs ({', '.join(c.dscp or prec)})",
                                    field=_at(c, f"dropper.thresholds.{k}"))
            check_threshold(th, _at(c, f"dropper.thresholds.{k}"))
            keys[name] = th
        missing = [p for p in prec if p not in keys]
        if missing:
            raise ScenarioError(f"give thresholds for every precedence of the class: {', '.join(missing)} missing",
                                field=_at(c, "dropper.thresholds"))
    if c.marker is not None:
        m = c.marker
        check_marker(m, _at(c, "marker"))
        if m.precolour != [1.0, 0.0, 0.0]:
            raise ScenarioError("a port's colour-aware marker takes the pre-colour from the traffic's 'mix'",
                                field=_at(c, "marker.precolour"))
        need = 2 if m.kind == "two-colour" else 3
        if len(prec) < need:
            raise ScenarioError(f"a {m.kind} marker colours packets with {need} precedences of the class (green, "
                                f"{'yellow, ' if need == 3 else ''}red, in the order of its precedences); the class "
                                f"has {len(prec)}", field=_at(c, "marker"))
    if c.police is not None:
        _check_police(c)


def _check_police(c: TrafficClass) -> None:
    p = c.police
    at = _at(c, "police")
    if not p.cir > 0:
        raise ScenarioError("CIR must be positive", field=f"{at}.cir")
    if not p.cbs > 0:
        raise ScenarioError("CBS must be positive", field=f"{at}.cbs")
    if (p.pir is None) != (p.pbs is None):
        raise ScenarioError("a two-rate policer needs both pir and pbs",
                            field=f"{at}.{'pbs' if p.pbs is None else 'pir'}")
    if p.pir is not None and p.ebs is not None:
        raise ScenarioError("give ebs (single rate, srTCM) or pir/pbs (two rates, trTCM), not both", field=f"{at}.ebs")
    if p.pir is not None and p.pir < p.cir:
        raise ScenarioError(f"PIR must be at least CIR (RFC 2698): PIR = {p.pir:g} bit/s < CIR = {p.cir:g} bit/s",
                            field=f"{at}.pir")
    for what in ("pbs", "ebs"):
        v = getattr(p, what)
        if v is not None and not v > 0:
            raise ScenarioError(f"{what.upper()} must be positive", field=f"{at}.{what}")
    if p.kind == "two-colour" and p.violate is not None:
        raise ScenarioError("a single-rate two-colour policer never violates: give ebs or pir/pbs for a "
                            "violate action", field=f"{at}.violate")
    prec = precedences(c)
    for name, a in zip(("conform", "exceed", "violate"), p.actions()):
        if a.action == "remark" and a.dscp not in prec:
            raise ScenarioError(f"set-dscp {a.dscp}: the packet stays in this class, so its new DSCP must be one of "
                                f"the class's precedences ({', '.join(prec)})", field=f"{at}.{name}")


def _check_rates(scn: Scenario, form: str | None, levels: list[int]) -> None:
    C = scn.link.rate
    prio = [c for c in scn.classes if c.priority is not None]
    reserved = sum(priority_reservation(c) for c in prio)
    shares = [(c, parse_bandwidth(c.bandwidth)) for c in scn.classes if c.bandwidth is not None]
    if form in ("rate", "percent"):
        total = reserved + sum(v * (C if f == "percent" else 1.0) for _, (f, v) in shares)
        if total > C * (1 + 1e-9):
            raise ScenarioError(f"the priority classes' rates ({reserved:.6g} bit/s) and the bandwidths "
                                f"({total - reserved:.6g} bit/s) add up to {total / C:.4g} of the link: at most 100 %",
                                field="classes")
    elif form == "remaining":
        total = sum(v for _, (_, v) in shares)
        if total > 1 + 1e-9:
            raise ScenarioError(f"the remaining percentages add up to {100 * total:.6g} %: at most 100 %",
                                field="classes")
    if reserved >= C and any(c.bandwidth is not None or (c.traffic is not None and c.priority is None)
                             for c in scn.classes):
        raise ScenarioError(f"the priority classes reserve {reserved:.6g} bit/s, the whole {C:.6g} bit/s link: "
                            "nothing is left for the weighted classes", field="classes")
    for lv in levels:
        # the levels above and this one must leave the link a positive rate in the long run: their long-term
        # rates (policed or offered) stay below the link
        upto = [c for c in prio if c.priority <= lv]
        congested = always_congested(c.traffic is not None and c.traffic.saturated for c in scn.classes)
        long_run = sum(long_run_rate(c, congested) for c in upto)
        if long_run >= C:
            where = [c for c in upto if c.priority == lv][0]
            raise ScenarioError(f"priority levels 1..{lv} take {long_run:.6g} bit/s in the long run, at least the "
                                f"link's {C:.6g} bit/s: the level-{lv} queue is unstable", field=_at(where, "traffic"))
