"""The network as the methods see it (the ``understood_inputs`` hook): per port its link rate, propagation
delay, ring and the flows per class with their share of the link; per flow its route, class at each hop and
traffic -- so a misread unit or a route the engineer did not mean shows before any result."""

from __future__ import annotations

from qosbound.systems.network.elements import network
from qosbound.systems.network.schema import Scenario
from qosbound.understood import Echo, Inputs

__all__ = ["understood_inputs"]


def understood_inputs(scn: Scenario) -> Inputs:
    net = network(scn)
    e = Echo(scn, None)
    for note in net.notes:
        e.text("note", note)
    for p in net.order:
        port = net.ports[p]
        e.quantity(f"ports.{p}.link.rate", port.rate, "rate")
        e.quantity(f"ports.{p}.link.delay", port.delay, "time", note="propagation after the port")
        e.text(f"ports.{p}.txq", "none" if port.ring is None else
               f"{port.ring.units} x {'packet' if port.ring.per_packet else f'{port.ring.unit:g} B'}")
        for c in port.active:
            here = [(net.flows[k], h) for k, h in net.at[p] if net.flows[k].hops[h].cls == c.name]
            place = f"level {c.priority}" if c.priority is not None else f"DRR {c.weight / 1e6:.6g} Mbit/s"
            upstream = [f.name for f, h in here if f.saturated and h > 0]
            load = "saturated" if c.saturated else (("at most " if upstream else "") +
                                                     f"{c.offered / 1e6:.6g} Mbit/s ({100 * c.offered / port.rate:.3g} %)")
            note = here[0][0].name if len(here) == 1 else f"{len(here)} flows"
            if upstream:
                said = f"{upstream[0]}{' etc.' if len(upstream) > 1 else ''} at its first link's rate"
                note = said if len(here) == 1 else f"{note}; {said}"
            e.text(f"ports.{p}.classes.{c.name}", f"{place}; {load}", note=note)
    for f in net.flows:
        route = " -> ".join([f.hops[0].port.split("->")[0]] + [h.port.split("->")[1] for h in f.hops])
        classes = sorted({h.cls for h in f.hops})
        e.text(f"flows.{f.name}.path", route, note="class " + ", ".join(classes))
        if f.saturated:
            e.text(f"flows.{f.name}.traffic", "saturated", note=f"at {f.hops[0].port}")
        else:
            kinds = sorted({s.kind for s in f.streams})
            n = sum(s.count for s in f.streams)
            e.text(f"flows.{f.name}.traffic", f"{f.offered / 1e6:.6g} Mbit/s", note=", ".join(kinds) +
                   (f"; {n} streams" if n > 1 else "") + (f"; mean size {f.sizes.mean:.6g} B" if f.sizes else ""))
    return e.done()
