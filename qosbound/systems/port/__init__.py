"""The port system (``system: port``): a router output port as the router holds it -- strict-priority levels
and DRR-weighted classes, each with its queue, dropper, meters and traffic, above a transmission ring.

Semantics shared by the three methods (the simulator's event loop, :mod:`qosbound.validation.port_kernels`,
states each rule where it is made; the bounds, :mod:`qosbound.analytic.port`, prove against the same rules):

* The **ring** (``txq``) holds up to ``units`` units; a packet takes ``ceil(size / unit_size)`` of them (one
  with ``unit_size: packet``) from its admission until its last bit leaves the wire -- the ring holds the
  packet on the wire -- and is FIFO at line rate. Without ``txq`` the scheduler hands the wire one packet at a
  time (a ring of one packet), and a class's queue limit and dropper count its packet on the wire, as ``af``
  counts a buffer.
* The **scheduler** refills the ring at every departure while it has room (and at an arrival that finds
  room): the head of the first non-empty priority level (``priority: 1`` first; FIFO by arrival across the
  classes of one level), else the packet deficit round robin (DRR) picks among the weighted classes, quanta
  in proportion to their bandwidths. Arrivals at the instant of a departure are handled after it.
* **Bandwidths**: a rate, ``N %`` of the link, or ``remaining N %`` of the link less the priority classes'
  rates (a policed class reserves its CIR, an unpoliced one its offered rate); one form per port.
  ``class-default`` always exists and, without a bandwidth, gets the unreserved rest. Unused shares go to the
  backlogged classes (DRR is work-conserving).
* On **arrival** a packet is metered by the class's marker (its colour becomes its DSCP), then by its
  policer (drop, transmit or remark per colour; ``conditional``: only while the ring is full), then queued
  unless the queue limit or the RED-family dropper (average updated on each arrival reaching the queue)
  drops it.
* **Delay** runs from arrival to the last bit on the wire (a port's propagation ``link.delay`` is for
  networks of ports).

The package follows the jobs: :mod:`.schema` (the file), :mod:`.dscp`, :mod:`.elements` (the port as types),
:mod:`.metrics`, :mod:`.bounds` (worst case per class), one module per method (:mod:`.closed_form`,
:mod:`.model_checked`, :mod:`.simulated`), :mod:`.checks` (agreements) and :mod:`.convert` (pq_txq and af
scenarios as ports); this module exposes the :class:`qosbound.systems.System` hooks.
"""

from __future__ import annotations

from qosbound.errors import ScenarioError
from qosbound.results import Result
from qosbound.systems.base import default_methods as _default_methods
from qosbound.scenario import build
from qosbound.systems import get_system
from qosbound.systems.capabilities import generic_admit, no_plot_delays
from qosbound.systems.port import checks as _checks
from qosbound.systems.port import closed_form as _closed_form
from qosbound.systems.port import model_checked as _model_checked
from qosbound.systems.port import render as _render
from qosbound.systems.port import simulated as _simulated
from qosbound.systems.port.elements import Port, port_of
from qosbound.systems.port.origin import with_class_lines
from qosbound.systems.port.metrics import metric_kind, metric_names, requested, slo_limit
from qosbound.systems.port.schema import Scenario
from qosbound.systems.port.understood import understood_inputs

__all__ = ["Scenario", "Port", "port_of", "evaluate", "metric_names", "metric_kind", "slo_limit", "default_methods",
           "agreements", "render_models", "simulate_trace", "ns3_trace", "ns3_gap", "plot_delays", "admit",
           "understood_inputs"]


#: Why a method cannot take a parent shaper (the simulator models it: not listed).
_NO_SHAPER = {
    "model checking": "the chains have no state for the shaper's bucket (they serve the classes at a steady rate)",
    "ns-3": "the ns-3 runner builds pq_txq's PrioQueueDisc over the device queue, with no token-bucket stage in "
            "front of the device (ns-3's TbfQueueDisc, which could take that PrioQueueDisc as its child, is not "
            "built by it)",
}


def _port(scn: Scenario, what: str | None = None) -> Port:
    """The port; ``what`` names a method that does not model a parent shaper (:data:`_NO_SHAPER`), refused for a
    shaped port with the configuration line of its shaper and the reason."""
    if what in _NO_SHAPER and scn.shaper is not None:
        where = scn.provenance.get("shaper.rate") or scn.provenance.get("shaper.bc")
        at = f" (configured at {where})" if where else ""
        raise ScenarioError(f"{what} does not model a parent shaper{at}: {_NO_SHAPER[what]}; the closed forms and "
                            "the simulator model a shaped port (--methods closed-form,simulated)", field="shaper")
    return port_of(scn)


def default_methods(scn: Scenario) -> list[str]:
    """The enabled methods; a shaped port the closed forms and the simulator (model checking refuses it when
    asked by name, :func:`_port`)."""
    out = _default_methods(scn)
    return [m for m in out if m in ("closed-form", "simulated")] if scn.shaper is not None else out


def evaluate(scn: Scenario, methods: list[str], progress) -> list[Result]:
    """Every metric of every class by every requested method."""
    port = _port(scn)
    ccdf, qs = requested(scn)
    out: list[Result] = []
    for method in methods:
        if method == "closed-form":
            out += _closed_form.closed_form(port, scn.methods.closed_form.approximation)
        elif method == "model-checked":
            _port(scn, "model checking")
            out += _model_checked.model_checked(scn, port, ccdf, qs, progress)
        elif method == "simulated":
            _port(scn, "the simulator")
            out += _simulated.simulated(port, scn.methods.simulated, qs, ccdf, progress)
        else:
            raise ScenarioError(f"method '{method}' is not available for port scenarios", field="methods")
    return with_class_lines(scn, out)


def agreements(scn: Scenario, results: list[Result]) -> list:
    """The port's own checks: drop precedences in RFC 2597 order per class and method, Storm against SciPy per
    weighted class (:mod:`.checks`); the rest is the generic rule's."""
    return _checks.agreements(_port(scn), results)


def simulate_trace(scn: Scenario, packets: int, seed: int):
    """A per-packet trace of the port simulator (``qosbound validate --simulate``)."""
    return _simulated.simulate_trace(_port(scn, "the simulator"), packets, seed)


def render_models(scn: Scenario, out_dir) -> list:
    """Write the PRISM models of the classes model checking covers (:mod:`.render`)."""
    return _render.render_models(scn, _port(scn, "model checking"), out_dir)


def ns3_trace(scn: Scenario, ef_packets: int):
    """ns-3 runs the port when ns-3 can express it: one priority class over one weighted class, a ring counted in
    packets (ns-3's ``PrioQueueDisc`` with two FIFO bands over the device queue), no policer, marker or RED --
    exactly ``pq_txq``'s ns-3 counterpart, which answers with the classes renamed. ns-3 has no DRR or WFQ queue
    disc, no policer and no per-DSCP WRED: any other port is refused, naming what ns-3 lacks."""
    port = _port(scn, "ns-3")
    why = ns3_gap(port)
    ccdf, qs = requested(scn)
    raw = None
    if not why:
        hi, lo = port.level(port.levels[0])[0], port.weighted[0]
        raw = _model_checked.pq_txq_raw(scn, port, hi, ccdf, qs)
        if raw is None:
            why = "the runner takes one packet size for the priority class and a discrete size mix below it"
    if why:
        raise ScenarioError(f"ns-3 cannot express this port: {why}; validate with --simulate or --trace FILE",
                            file=scn.path, field="classes")
    table, info = get_system("pq_txq").ns3_trace(build(raw), ef_packets)
    names = {"EF": hi.name, "BE": lo.name}
    return _renamed(table, names), dict(info, classes=names)


def ns3_gap(port: Port, *, both: bool = True) -> str:
    """What ns-3 lacks to express the port ('' when it can): ns-3's ``PrioQueueDisc`` with two FIFO bands holds
    one priority class over one weighted class (``both``: each of them with traffic; else at most one of each)."""
    pr = [c for c in port.active if c.priority is not None]
    w = port.weighted
    if (len(pr) != 1 or len(w) != 1) if both else (len(pr) > 1 or len(w) > 1):
        return ("ns-3 has no DRR or WFQ queue disc for several weighted classes, and its PrioQueueDisc serves "
                "one class per band (it expresses one priority class over one other class)")
    if port.ring is not None and not port.ring.per_packet and port.largest > port.unit:
        return "its device queue counts packets, not units of a size"
    if any(x.police is not None or x.marker is not None or x.dropper.red for x in pr + list(w)):
        return "it has no policer, marker or per-DSCP WRED queue disc for a class"
    return ""


def _renamed(table, names: dict):
    """A trace table with its flow and class names mapped (pyarrow, column by column)."""
    import pyarrow as pa  # noqa: PLC0415 - pyarrow is loaded only with traces

    def col(name):
        values = [names.get(v, v) for v in table.column(name).to_pylist()]
        return pa.array(values, type=pa.string())

    t = table.set_column(table.schema.get_field_index("flow"), "flow", col("flow"))
    return t.set_column(t.schema.get_field_index("cls"), "cls", col("cls"))


plot_delays = no_plot_delays
admit = generic_admit
