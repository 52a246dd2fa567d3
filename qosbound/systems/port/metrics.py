"""A port's metric names and kinds, one family per class.

Per class ``X`` with traffic that is not saturated:

* ``X.delay.mean``, ``X.delay.pNN`` (the scenario's quantiles), ``X.delay.ccdf@T`` (its CCDF points),
  ``X.delay.max`` -- delay of the delivered packets, from arrival to the last bit on the wire;
* ``X.loss`` -- fraction of the class's arrivals lost, every cause; ``X.loss.police`` (dropped by the
  policer), ``X.loss.queue`` (dropped at the queue: queue limit or RED-family dropper);
* ``X.drop.<DSCP>`` -- for each precedence that carries traffic, the fraction of the packets reaching the
  queue with that DSCP (after marker and policer) that the queue drops (``critical.drop.AF31``);
* ``X.throughput`` -- delivered bit/s.

A weighted class also has ``X.rate`` (its DRR allocation when every class with traffic is backlogged, bit/s);
a saturated class only ``X.throughput`` and ``X.rate``. The closed forms add, for the top priority level,
``X.delay.worst_case_mean`` (Ferrari, Pau & Raffaelli 2001, eq. 7) and, for an aggregate of streams,
``X.aggregation_degree`` (their eq. 1), as ``pq_txq`` names them for EF.
"""

from __future__ import annotations

from qosbound.errors import ScenarioError
from qosbound.metric_names import ccdf_name, parse_quantile_name, quantile_name
from qosbound.systems.base import requested_statistics
from qosbound.systems.port.elements import Port, TrafficClass, port_of
from qosbound.systems.port.schema import Scenario, split_metric
from qosbound.units import Kind
from qosbound.verdicts import default_slo_limit

__all__ = ["class_metrics", "metric_names", "metric_kind", "slo_limit", "requested", "carried_precedences",
           "split_metric"]

_KINDS: dict[str, Kind] = {"loss": "probability", "drop": "probability", "throughput": "rate", "rate": "rate",
                           "aggregation_degree": "probability"}


def carried_precedences(c: TrafficClass) -> list[str]:
    """The precedences packets of the class can reach the queue with: the traffic's mix, the marker's colours,
    the policer's remarks."""
    idx = {k for k, f in enumerate(c.mix) if f > 0}
    if c.marker is not None:
        idx = set(c.marker.to_precedence[:3] if c.marker.kind != "two-colour" else
                  (c.marker.to_precedence[0], c.marker.to_precedence[2]))
    if c.police is not None:
        idx |= {r for a, r in zip(c.police.actions, c.police.remark) if a == "remark"}
    return [c.precedences[k] for k in sorted(idx)]


def class_metrics(c: TrafficClass, quantiles: list[float], ccdf_at: list[float]) -> list[str]:
    """The metrics of one class (module docstring)."""
    n = c.name
    if not c.has_traffic:
        return []
    out = []
    if not c.saturated:
        out += [f"{n}.delay.mean"] + [f"{n}.delay.{quantile_name(q)}" for q in quantiles]
        out += [ccdf_name(f"{n}.delay", d) for d in ccdf_at] + [f"{n}.delay.max", f"{n}.loss"]
        if c.police is not None:
            out.append(f"{n}.loss.police")
        out.append(f"{n}.loss.queue")
        out += [f"{n}.drop.{p}" for p in carried_precedences(c)]
    out.append(f"{n}.throughput")
    if c.priority is None:
        out.append(f"{n}.rate")
    return out


def metric_names(scn: Scenario, port: Port | None = None) -> list[str]:
    p = port or port_of(scn)
    out = []
    for c in p.classes:
        out += class_metrics(c, list(scn.metrics.quantiles), list(scn.metrics.ccdf_at))
    return out


def metric_kind(metric: str) -> Kind:
    _, q = split_metric(metric)
    if q.startswith("delay."):
        stat = q[len("delay."):]
        if stat.startswith("ccdf@"):
            return "probability"
        if stat in ("mean", "max", "worst_case_mean", "cobham_mean") or parse_quantile_name(stat) is not None:
            return "time"
        raise ScenarioError(f"unknown delay statistic '{stat}' in '{metric}'", field="metric")
    if q.startswith(("loss", "drop.")):
        return "probability"
    return _KINDS[q]


def slo_limit(scn: Scenario, slo) -> float:
    return default_slo_limit(metric_kind, slo)


def requested(scn: Scenario) -> tuple[list[float], list[float]]:
    """(CCDF points, quantiles): the metrics section's, plus those SLO metrics name."""
    stats = []
    for s in scn.slos:
        try:
            _, q = split_metric(s.metric)
        except ScenarioError:
            continue
        if q.startswith("delay."):
            stats.append(q[len("delay."):])
    return requested_statistics(scn.metrics.ccdf_at, scn.metrics.quantiles, stats)
