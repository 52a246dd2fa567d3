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
from qosbound.systems.base import default_methods
from qosbound.systems.capabilities import generic_admit, no_ns3, no_plot_delays, no_models
from qosbound.systems.port import closed_form as _closed_form
from qosbound.systems.port import model_checked as _model_checked
from qosbound.systems.port import simulated as _simulated
from qosbound.systems.port.elements import Port, port_of
from qosbound.systems.port.metrics import metric_kind, metric_names, requested, slo_limit
from qosbound.systems.port.schema import Scenario

__all__ = ["Scenario", "Port", "port_of", "evaluate", "metric_names", "metric_kind", "slo_limit", "default_methods",
           "agreements", "render_models", "simulate_trace", "ns3_trace", "plot_delays", "admit"]


def _port(scn: Scenario) -> Port:
    if scn.shaper is not None:
        raise ScenarioError("a parent shaper is not modelled yet (the field is reserved for configuration "
                            "importers): leave it out, or give the shaped rate as the link rate", field="shaper")
    return port_of(scn)


def evaluate(scn: Scenario, methods: list[str], progress) -> list[Result]:
    """Every metric of every class by every requested method."""
    port = _port(scn)
    ccdf, qs = requested(scn)
    out: list[Result] = []
    for method in methods:
        if method == "closed-form":
            out += _closed_form.closed_form(port, scn.methods.closed_form.approximation)
        elif method == "model-checked":
            out += _model_checked.model_checked(scn, port, ccdf, qs, progress)
        elif method == "simulated":
            out += _simulated.simulated(port, scn.methods.simulated, qs, ccdf, progress)
        else:
            raise ScenarioError(f"method '{method}' is not available for port scenarios", field="methods")
    return out


def agreements(scn: Scenario, results: list[Result]) -> list:
    return []


def simulate_trace(scn: Scenario, packets: int, seed: int):
    """A per-packet trace of the port simulator (``qosbound validate --simulate``)."""
    return _simulated.simulate_trace(_port(scn), packets, seed)


render_models = no_models("port")
ns3_trace = no_ns3("port")
plot_delays = no_plot_delays
admit = generic_admit
