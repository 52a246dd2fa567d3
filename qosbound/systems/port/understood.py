"""The port as the methods see it (the ``understood_inputs`` hook): every report starts with it, so a misread
unit shows before any result -- the link, the ring, and per class its place in the scheduler (level, or DRR
weight and share of the link), its policer, queue, dropper and what is offered to it, with its share of the
link and the packet sizes."""

from __future__ import annotations

from qosbound.systems.port.elements import port_of
from qosbound.systems.port.schema import Scenario
from qosbound.understood import Echo, Inputs

__all__ = ["understood_inputs"]

_ARRIVALS = {"poisson": "Poisson", "cbr": "CBR", "on-off": "on-off", "saturated": "saturated"}


def understood_inputs(scn: Scenario) -> Inputs:
    """The port's inputs as understood (module docstring); a class is named by its name, its fields read from
    the file by their index (``classes.0.police.cir``)."""
    port = port_of(scn)
    e = Echo(scn, port.rate).quantity("link.rate", port.rate, "rate")
    if port.shaper_burst:
        e.quantity("shaper.bc", port.shaper_burst, "size", path=None,
                   note=f"a parent shaper at the link rate: Tc = {8e3 * port.shaper_burst / port.rate:.6g} ms "
                        "in the bounds; the simulator's bucket depth")
        given = scn.shaper.interface_rate is not None
        e.quantity("shaper.interface_rate", port.line_rate or port.rate, "rate",
                   path="shaper.interface_rate" if given else None,
                   note="the ring drains at it" if given else "not given: the shaper's rate, as the bounds take it")
    if port.ring is None:
        e.text("txq", "none", note="the scheduler hands the wire one packet at a time")
    else:
        e.quantity("txq.units", port.ring.units, "count", noun="units",
                   note="the scheduler refills while fewer are occupied")
        if port.ring.per_packet:
            e.text("txq.unit_size", "packet", note="every packet one unit")
        else:
            e.quantity("txq.unit_size", port.ring.unit, "size")
    declared = {c.name: i for i, c in enumerate(scn.classes)}
    for c in port.classes:
        i = declared.get(c.name)
        at = f"classes.{c.name}"

        def path(field: str):
            return None if i is None else f"classes.{i}.{field}"

        if c.priority is not None:
            e.text(f"{at}.priority", f"level {c.priority}", note="strict priority")
        else:
            e.quantity(f"{at}.bandwidth", c.weight, "rate", share=True, path=None,
                       note="DRR weight" + ("; the unreserved rest" if c.spec.bandwidth is None else
                                            f"; written {c.spec.bandwidth}"))
        if c.police is not None:
            p = c.police
            e.quantity(f"{at}.police.cir", p.cir, "rate", share=True, path=path("police.cir"),
                       note=p.kind + ("; conditional" if p.conditional else ""))
            e.quantity(f"{at}.police.cbs", p.cbs, "size", path=path("police.cbs"))
        e.quantity(f"{at}.queue_limit", c.queue_limit, "count", noun="packets", path=path("queue_limit"))
        if c.dropper.red:
            e.text(f"{at}.dropper", c.dropper.mode, note=f"EWMA weight {c.dropper.alpha:.6g}")
        if not c.has_traffic:
            continue
        kinds = {s.kind for s in c.streams}
        if c.saturated:
            e.text(f"{at}.traffic", "saturated", note="always a packet waiting")
        else:
            n = sum(s.count for s in c.streams)
            note = ", ".join(sorted(_ARRIVALS[k] for k in kinds)) + (f"; {n} streams" if n > 1 else "")
            e.quantity(f"{at}.traffic.rate", c.offered, "rate", share=True, path=None, note=note)
        law = c.size_law()
        if law is not None and not law.exponential and len(law.sizes) == 1:
            e.text(f"{at}.traffic.size", f"{law.sizes[0]:g} B")
        elif law is not None and not law.exponential:
            e.text(f"{at}.traffic.sizes", ", ".join(f"{s:g} B ({p:.4g})" for s, p in zip(law.sizes, law.probs)),
                   note=f"mean {law.mean:.6g} B")
        else:
            e.quantity(f"{at}.traffic.size", c.mean_size, "size", path=None, note="mean; exponential sizes")
        if len(c.precedences) > 1:
            e.text(f"{at}.traffic.mix", ", ".join(f"{p} {x:.4g}" for p, x in zip(c.precedences, c.mix)))
    return e.done()
