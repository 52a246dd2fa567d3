"""Strict-priority EF queue feeding a finite FIFO transmission queue (Ferrari, Pau & Raffaelli 2001, "Measurement Based Analysis of Delay in Priority Queueing").

Semantics (shared by the closed forms, the PRISM model and the simulator; see
DESIGN.md): a packet of ``size`` bytes occupies ``ceil(size/unit)`` units of the
transmission queue (TxQ). Whenever fewer than ``Q_t`` units are occupied the
scheduler moves one packet into the TxQ -- the head EF packet if one waits in the
priority queue (PQ), else a best-effort (BE) packet, whose size is drawn from the
BE size distribution (saturated BE always has a packet; see below for a load). All units of a
packet are released when its last bit leaves the wire; the TxQ is FIFO at line
rate. EF delay runs from arrival to the last bit on the wire. The PQ holds at
most ``pq.capacity`` EF packets; an EF packet arriving to a full PQ is lost.

Best effort with a load (``traffic.BE.rate``, bit/s, instead of ``saturated:
true``): BE packets arrive as a Poisson process of rate ``rate / (8 E[L])`` with
i.i.d. sizes from the size mix and wait in an unbounded FIFO BE queue; the
total utilisation ``(EF rate + BE rate) / link`` must be below 1. The scheduler
refills the TxQ from the PQ first, else from the BE queue when it is non-empty;
when both are empty the TxQ may empty and the line idles. An arrival that finds
fewer than ``Q_t`` units occupied enters the TxQ at once (an arrival at the
instant of a departure is handled after the departure). Saturated best effort
(the default) is the worst case of Ferrari et al.; the closed forms and the
simulator answer for a load, the PRISM model does not (its slot-start chain is
exact only while the line never idles): ``model-checked`` is skipped with the
reason when the scenario merely enables it, and refused (exit 2) when asked for.

The module is a package along the jobs: :mod:`.schema` (the scenario file), :mod:`.params` (the scenario reduced
to SI numbers, and the field each number comes from), :mod:`.metrics` (names and kinds), :mod:`.understood`, one
module per method (:mod:`.closed_form`, :mod:`.model_checked` and :mod:`.ring_results` behind :mod:`.route`,
:mod:`.simulated`), :mod:`.ns3`, :mod:`.render` and :mod:`.admission`; this module exposes the
:class:`qosbound.systems.System` hooks.
"""

from __future__ import annotations

from qosbound.errors import ScenarioError
from qosbound.results import Result, Verdict
from qosbound.systems.base import default_methods
from qosbound.systems.pq_txq.admission import admit
from qosbound.systems.pq_txq.closed_form import check_range, closed_form_results
from qosbound.systems.pq_txq.metrics import (metric_kind, metric_names, per_stream, requested_metrics, slo_limit,
                                             stream_prefix)
from qosbound.systems.pq_txq.ns3 import NS3_BE_BAND, ns3_trace
from qosbound.systems.pq_txq.params import PARAM_FIELDS, Params, params, scenario_fields
from qosbound.systems.pq_txq.route import (MAX_MODEL_PQ, STATE_COUNT_CAP, ModelUnsupported, check_model_size,
                                           model_route, refuse_aggregate_model, ring_covers, rounding)
from qosbound.systems.pq_txq.schema import (PQ, BESize, BETraffic, EFStream, EFTraffic, Methods, Metrics, ModelOptions,
                                            Scenario, SimOptions, Traffic, TxQ)
from qosbound.systems.pq_txq.understood import understood_inputs

__all__ = ["Scenario", "Params", "params", "evaluate", "metric_kind", "slo_limit", "agreements",
           "default_methods", "metric_names", "model_route", "simulate_trace", "ns3_trace", "plot_delays",
           "render_models", "admit", "understood_inputs", "TxQ", "PQ", "EFStream", "EFTraffic", "BESize", "BETraffic",
           "Traffic", "ModelOptions", "SimOptions", "Methods", "Metrics", "PARAM_FIELDS", "scenario_fields",
           "closed_form_results", "per_stream", "stream_prefix", "NS3_BE_BAND", "MAX_MODEL_PQ", "STATE_COUNT_CAP",
           "ModelUnsupported", "check_model_size", "refuse_aggregate_model", "ring_covers", "rounding"]


def evaluate(scn: Scenario, methods: list[str], progress) -> list[Result]:
    """Every metric by every requested method."""
    p = params(scn)
    check_range(p)
    route = model_route(scn) if "model-checked" in methods else None
    ccdf, qs = requested_metrics(scn, [s.metric for s in scn.slos])
    out: list[Result] = []
    for method in methods:
        if method == "closed-form":
            out += closed_form_results(p)
        elif method == "model-checked":
            if route[0] == "ring":
                from qosbound.systems.pq_txq.ring_results import ring_results  # costly: scipy at import

                out += ring_results(p, scn.methods.model_checked, ccdf, qs, progress, route[1])
            else:
                from qosbound.systems.pq_txq.model_checked import model_results  # costly: scipy at import

                out += model_results(p, scn.methods.model_checked, ccdf, qs, progress)
        elif method == "simulated":
            from qosbound.systems.pq_txq.simulated import simulated_results  # costly: numba at import

            out += simulated_results(p, scn.methods.simulated, ccdf, qs, progress)
        else:
            raise ScenarioError(f"method '{method}' is not available for pq_txq scenarios", field="methods")
    return out


def agreements(scn: Scenario, results: list[Result]) -> list[Verdict]:
    """No system-specific checks: every relation between the methods is carried by the results' kinds and
    :func:`qosbound.agreement.agreements` judges them -- eq. (7) is an upper bound on ``EF.delay.mean``; the
    max-delay bound, when it applies (CBR EF, or the PQ capacity binding the burst), an upper bound on
    ``EF.delay.max``, every quantile and the mean (otherwise an approximation); Cobham's mean an approximation
    of ``EF.delay.mean``; a simulated or traced maximum a lower bound on ``EF.delay.max``; model results with
    sizes rounded up to granules approximations (:func:`qosbound.systems.pq_txq.model_checked.rounding_neglects`)."""
    return []


def simulate_trace(scn: Scenario, packets: int, seed: int):
    """A per-packet trace of the packet simulator (``qosbound validate --simulate``)."""
    from qosbound.systems.pq_txq.simulated import simulate_trace as sim  # costly: numba at import

    return sim(params(scn), packets, seed)


def plot_delays(scn: Scenario) -> float | None:
    """The delay range (s) worth plotting: the max-delay bound (a plot grid, not a claim)."""
    from qosbound.validation.pq_txq_sim import max_delay_bound  # costly: numba at import

    return float(max_delay_bound(params(scn)))


def render_models(scn: Scenario, out_dir) -> list:
    """Write the scenario's PRISM model and property file (``qosbound model render``)."""
    from qosbound.systems.pq_txq.render import render_models as render  # costly: scipy at import

    return render(scn, out_dir)
