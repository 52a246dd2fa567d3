"""The quantities, policers and WRED droppers of Cisco MQC commands, as fields of the port model: rates (absolute
or a percentage of the rate they apply to), sizes in bytes or full-size packets (converted from time at a rate,
labelled), ``police`` with its colour actions, ``random-detect`` with its thresholds per DSCP.
:mod:`qosbound.configs.ios_semantics` reads the policies with them.
"""

from __future__ import annotations

import math

from qosbound import dscp
from qosbound.configs.defaults import default, default_field
from qosbound.configs.formatting import rate_text
from qosbound.configs.ios_ast import Burst, PoliceCmd, Rate, WredCmd
from qosbound.configs.ios_classify import config_error
from qosbound.configs.port import Dropper, Police, Port, Threshold
from qosbound.configs.source import Source
from qosbound.configs.values import Default, Field, given
from qosbound.errors import ConfigError

__all__ = ["CommandReader"]


class CommandReader:
    """Reads one configuration's commands into fields; ``family`` (the dialect) chooses the platform defaults."""

    family: str

    def error(self, src: Source, construct: str, problem: str, refused: bool = False) -> ConfigError:
        return config_error(src, construct, problem, refused)

    # -------------------------------------------------------------------------------------- quantities

    def rate(self, r: Rate, base: Field | None, src: Source, text: str) -> Field:
        if r.kind == "bps":
            return given(r.value, src)
        if r.kind == "percent":
            if base is None:
                raise self.error(src, text, "a percentage of an interface whose rate is unknown: give the "
                                            "interface's rate in a traffic file")
            return base.derive(base.value * r.value / 100.0, f"{r.value:g} % of {rate_text(base.value)}",
                               given(r.value, src))
        raise self.error(src, text, f"a rate in {r.kind} cannot be expressed in bit/s", refused=True)

    def nbytes(self, b: Burst, rate: Field, src: Source, text: str) -> Field:
        if b.kind == "bytes":
            return given(b.value, src)
        if b.kind == "bits":
            return given(b.value / 8.0, src, how="bits / 8")
        if b.kind in ("ms", "us"):
            t = b.value * (1e-3 if b.kind == "ms" else 1e-6)
            return rate.derive(rate.value * t / 8.0, f"{b.value:g} {b.kind} at {rate_text(rate.value)}",
                               given(b.value, src))
        if b.kind == "packets":
            size = default_field(self.family, "packet_size")
            return size.derive(b.value * size.value, f"{b.value:g} packets of {size.value} B", given(b.value, src))
        raise self.error(src, text, f"cannot read a size in {b.kind}")

    def packets(self, b: Burst, rate: Field | None, src: Source, text: str) -> Field:
        """A queue or threshold size as a packet count (the port model counts packets)."""
        if b.kind == "packets" and self.family != "ios-xr":
            return given(b.value, src)
        size = default_field(self.family, "packet_size")
        if b.kind == "packets":  # IOS XR keeps byte queues: N packets are N x 256 B
            xr = default_field(self.family, "packet_bytes")
            nb = xr.derive(b.value * xr.value, f"{b.value:g} packets of {xr.value} B (IOS XR)", given(b.value, src))
        else:
            if b.kind in ("ms", "us") and rate is None:
                raise self.error(src, text, "a time at an unknown rate: give the interface's rate in a traffic file")
            nb = self.nbytes(b, rate, src, text) if rate is not None else self.nbytes(b, given(0.0, src), src, text)
        n = max(1, math.floor(nb.value / size.value))
        return nb.derive(n, f"{nb.value:g} B as {size.value} B packets", size)

    # -------------------------------------------------------------------------------------- policers

    def policer(self, p: PoliceCmd, base: Field | None, port: Port, cname: str) -> Police:
        """The port's policer for a ``police`` command: its buckets (two-colour; srTCM with be or a violate
        action; trTCM with pir) and each colour's action (``drop``, ``transmit``, ``set-dscp DSCP``)."""
        src = p.source
        if p.cir is None:
            raise self.error(src, p.text, "policer without a rate")
        cir = self.rate(p.cir, base, src, p.text)
        if p.bc is not None:
            cbs = self.nbytes(p.bc, cir, src, p.text)
        else:
            d = default(self.family, "police_bc_time")
            cbs = Field(max(1500.0, cir.value * d.value / 8.0), (), d, f"{d.value:g} s of {rate_text(cir.value)}, "
                        "at least 1500 B", (cir,))
        pir = self.rate(p.pir, base, src, p.text) if p.pir is not None else None
        be = self.nbytes(p.be, pir or cir, src, p.text) if p.be is not None else None
        for text, s in p.other:
            port.note(s, text, "not modelled: colour-aware policing (the policer is taken colour-blind)"
                      if text.lower().startswith(("conform-color", "exceed-color")) else "ignored: unknown command")
        police = Police(cir, cbs)
        if pir is not None:
            police.pir = pir
            police.pbs = be if be is not None else Field(cbs.value, (), Default(
                self.family, "police_be", "bc", "Cisco police: be defaults to bc"), "be = bc", (cbs,))
        elif be is not None or p.violate:
            police.ebs = be if be is not None else Field(cbs.value, (), Default(
                self.family, "police_be", "bc", "Cisco police: be defaults to bc"), "be = bc", (cbs,))
        for colour in ("conform", "exceed", "violate"):
            acts = getattr(p, colour)
            if not acts:
                continue
            setattr(police, colour, self.action(acts, port, cname))
        if police.pir is None and police.ebs is None:
            police.violate = None
        return police

    def action(self, acts, port: Port, cname: str) -> Field:
        """One colour's action in the port's terms; markings of other fields are noted (marking only)."""
        kinds = [a.kind for a in acts]
        lines = tuple(a.source for a in acts)
        if "drop" in kinds:
            return given("drop", *lines)
        for a in acts:
            if a.kind == "set-dscp":
                d = dscp.parse(a.value or "")
                if d is None:
                    raise self.error(a.source, a.text, f"'{a.value}' is not a DSCP")
                return given(f"set-dscp {dscp.name(d)}", *lines)
        for a in acts:
            if a.kind != "transmit":
                port.note(a.source, a.text, "ignored: marking only (the port queues by DSCP); taken as transmit")
        return given("transmit", *lines)

    # -------------------------------------------------------------------------------------- WRED

    def threshold(self, b: Burst, rate: Field | None, queue: Field, src: Source, text: str) -> Field:
        """A WRED threshold in packets: a size (:meth:`packets`) or, as Catalyst 9000 writes it (``random-detect
        dscp V percent MIN MAX``), a percentage of the class's queue limit."""
        if b.kind != "percent":
            return self.packets(b, rate, src, text)
        if not 0 <= b.value <= 100:
            raise self.error(src, text, f"a threshold of {b.value:g} % of the queue (0 to 100)")
        return queue.derive(max(1, math.floor(queue.value * b.value / 100.0)),
                            f"{b.value:g} % of the {queue.value:g}-packet queue", given(b.value, src))

    def dropper(self, w: WredCmd, keys: list[int], rate: Field | None, port: Port,
                queue: Field | None = None) -> Dropper:
        fam = self.family
        if w.ecn is not None:
            port.note(w.ecn, "random-detect ecn", "not modelled: ECN marking; drops are counted as if no flow were "
                                                  "ECN-capable (loss over-estimated for ECN flows)")
        basis = w.basis
        if basis in ("discard-class",):
            port.note(w.source, w.text, "approximated: WRED by discard-class; every packet is taken with "
                                        "discard-class 0 (input markings of discard-class are not modelled)")
        th = {}
        mpd_default = default_field(fam, "wred_mark_denominator")
        for d in keys:
            def applies(v: str) -> bool:
                if v == "*":
                    return True
                if basis == "dscp":
                    return dscp.parse(v) == d
                if basis == "precedence":
                    return dscp.precedence_value(v) == d >> 3
                if basis in ("exp", "cos"):
                    return v.isdigit() and int(v) == d >> 3
                return v.isdigit() and int(v) == 0
            hits = [t for t in w.thresholds if applies(t.value)]
            if hits:
                t = hits[-1]
                lo = self.threshold(t.min_th, rate, queue, t.source, t.text)
                hi = self.threshold(t.max_th, rate, queue, t.source, t.text)
                pd = given(t.mpd, t.source) if t.mpd is not None else mpd_default
            else:
                if basis == "dscp":
                    tab = default(fam, "wred_dscp")
                    name = dscp.name(d)
                    row = tab.value.get(name)
                    if row is None:
                        tab = default(fam, "wred_precedence")
                        row = tab.value[d >> 3]
                else:
                    tab = default(fam, "wred_precedence")
                    row = tab.value[d >> 3]
                lo = Field(row[0], (w.source,), tab, f"default for {dscp.name(d)}")
                hi = Field(row[1], (w.source,), tab, f"default for {dscp.name(d)}")
                pd = mpd_default
            th[dscp.name(d)] = Threshold(lo, hi, pd)
        exp = given(w.exponent[0], w.exponent[1]) if w.exponent else default_field(fam, "wred_exponent")
        return Dropper(given("wred", w.source), th, exponent=exp)
