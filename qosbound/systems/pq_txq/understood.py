"""The inputs of a ``pq_txq`` scenario as the methods use them (every report shows them first)."""

from __future__ import annotations

import math

from qosbound.systems.pq_txq.schema import Scenario
from qosbound.understood import Echo, Inputs

__all__ = ["understood_inputs"]


def understood_inputs(scn: Scenario) -> Inputs:
    """The port as the methods see it: link, ring, PQ, each EF stream's rate and share of the link, the BE load
    and size mix, and the total utilisation."""
    link, unit = scn.link.rate, scn.txq.unit_size

    def ring(size: float) -> str:
        n = math.ceil(size / unit)
        return f"{n} ring unit{'s' if n != 1 else ''}"

    e = Echo(scn, link).quantity("link.rate", link, "rate")
    e.quantity("txq.units", scn.txq.units, "count", noun="units", note="the scheduler refills while fewer are "
                                                                        "occupied")
    e.quantity("txq.unit_size", unit, "size")
    e.quantity("pq.capacity", scn.pq.capacity, "count", noun="EF packets")
    ef = scn.traffic.EF
    arrivals = {"poisson": "Poisson", "cbr": "CBR", "bernoulli": "Bernoulli"}
    if ef.calls is not None:
        e.quantity("traffic.EF.calls", ef.calls, "count", noun="calls", note="identical CBR streams, random phases")
        e.quantity("traffic.EF.call.rate", ef.call.rate, "rate", share=True)
        e.quantity("traffic.EF.total", ef.rate, "rate", share=True, path=None)
        e.quantity("traffic.EF.call.size", ef.size, "size", note=ring(ef.size))
    elif ef.streams is not None:
        for i, st in enumerate(ef.streams):
            e.quantity(f"traffic.EF.streams.{i}.rate", st.rate, "rate", share=True, note=arrivals[st.arrivals])
        e.quantity("traffic.EF.total", ef.rate, "rate", share=True, path=None)
        e.quantity("traffic.EF.streams.0.size", ef.size, "size", note=f"every stream; {ring(ef.size)}")
    else:
        e.quantity("traffic.EF.rate", ef.rate, "rate", share=True, note=f"{arrivals[ef.arrivals]} arrivals")
        e.quantity("traffic.EF.size", ef.size, "size", note=ring(ef.size))
    be = scn.traffic.BE
    if be.is_saturated:
        e.text("traffic.BE", "saturated", note="always a packet waiting: the worst case")
    else:
        e.quantity("traffic.BE.rate", be.rate, "rate", share=True, note="Poisson packets of the size mix")
    if be.size is not None:
        e.quantity("traffic.BE.size", be.size, "size", note=ring(be.size))
    else:
        for i, x in enumerate(be.sizes):
            e.quantity(f"traffic.BE.sizes.{i}.size", x.size, "size", note=f"p = {x.p:.6g}; {ring(x.size)}")
    e.quantity("utilisation", (ef.rate + (be.rate or 0.0)) / link, "probability", path=None, percent=True,
               note="EF + BE" if be.rate is not None else "EF; saturated BE fills the rest")
    return e.done()
