"""The network system (``system: network``): output ports of the port system joined into a network, and flows
crossing them along paths, with end-to-end answers per flow.

* **Ports** are named ``a->b`` after the nodes they join; each is a port definition (``link``, ``txq``,
  ``classes``, ``scheduler``, as in a port scenario; ``link.delay`` is the propagation delay of the link after
  the port) or the path of a port file (its traffic left out).
* **Flows** have a ``class`` (the same name at every port of the path) or a ``dscp`` (each port's class matching
  it, else class-default), a ``path`` of nodes or a ``source`` and ``destination`` (routed on a shortest path in
  hops), and ``traffic`` at their first port as in the port system (a saturated flow is saturated there and
  forwards what that port sends).
* **End-to-end delay** runs from the arrival at the first port to the last bit at the destination: every
  port's delay (arrival to last bit on the wire) and every link's propagation delay.

The methods: closed forms (:mod:`.bounds`: total and separated flow analysis and FIFO-LP (:mod:`.fifo_lp`) over
the ports' ring-aware service curves, the tightest the answer; :mod:`.approximation`: the end-to-end mean and
percentiles, approximately) and the chained simulation (:mod:`.simulated`, each port the port
system's kernel fed with the packets its upstream ports send). Routes must be feed-forward. ``validate --ns3``
runs the network in ns-3 (:mod:`.ns3`) and judges its per-flow estimates against the chained simulation's.

The system can send its simulated replications to Dask (:func:`replications_on`, what ``plan --workers N`` and
``--scheduler ADDRESS`` use with one network file; :mod:`.distributed`).
"""

from __future__ import annotations

from qosbound.systems.base import default_methods
from qosbound.systems.capabilities import no_models, no_plot_delays, no_trace_simulator
from qosbound.systems.network import admission as _admission
from qosbound.systems.network import closed_form as _closed_form
from qosbound.systems.network import ns3 as _ns3
from qosbound.systems.network import simulated as _simulated
from qosbound.systems.network.distributed import replications_on
from qosbound.systems.network.elements import Network, network
from qosbound.systems.network.metrics import flow_metrics, metric_kind, quantiles_of, slo_limit
from qosbound.systems.network.schema import Scenario
from qosbound.systems.network.understood import understood_inputs
from qosbound.errors import ScenarioError
from qosbound.results import Result

__all__ = ["Scenario", "Network", "network", "evaluate", "metric_names", "metric_kind", "slo_limit",
           "default_methods", "agreements", "render_models", "simulate_trace", "ns3_trace", "plot_delays", "admit",
           "understood_inputs", "replications_on"]


def evaluate(scn: Scenario, methods: list[str], progress) -> list[Result]:
    """Every metric of every flow by every requested method."""
    net = network(scn)
    out: list[Result] = []
    for method in methods:
        if method == "closed-form":
            out += _closed_form.closed_form(net, quantiles=quantiles_of(scn))
        elif method == "simulated":
            out += _simulated.simulated(net, scn.methods.simulated, quantiles_of(scn), progress)
        else:
            raise ScenarioError(f"method '{method}' is not available for network scenarios (closed-form, simulated)",
                                file=scn.path, field="methods")
    return out


def metric_names(scn: Scenario) -> list[str]:
    net = network(scn)
    qs = quantiles_of(scn)
    out = []
    for f in net.flows:
        out += flow_metrics(f.name, f.saturated, [h.port for h in f.hops], qs)
    return out


def agreements(scn: Scenario, results: list[Result]) -> list:
    """No checks beyond the generic rule (every bound at or above the simulated maximum it bounds)."""
    return []


render_models = no_models("network")
simulate_trace = no_trace_simulator("network")
ns3_trace = _ns3.ns3_trace
plot_delays = no_plot_delays
admit = _admission.admit
