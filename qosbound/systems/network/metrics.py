"""A network's metric names and kinds, one family per flow ``F`` (saturated flows: ``F.throughput`` only):

* ``F.delay.mean``, ``F.delay.pNN``, ``F.delay.max`` -- end-to-end delay of the delivered packets, from the
  arrival at the first port to the last bit at the destination (every link's propagation included);
* ``F.delay.jitter`` -- the spread of those delays, largest less smallest (RFC 5481's packet delay variation
  taken over the whole flow: every delay less the least one, at its maximum);
* ``F.delay.max_tfa``, ``F.delay.max_sfa``, ``F.delay.max_lp`` -- the bound by each analysis;
  ``F.hop.<port>.delay.max`` -- the flow's delay at one port (arrival to the last bit on the wire);
* ``F.loss`` -- the fraction of the flow's packets lost anywhere on the path; ``F.throughput`` -- delivered
  bit/s.
"""

from __future__ import annotations

from qosbound.errors import ScenarioError
from qosbound.metric_names import parse_quantile_name, quantile_name
from qosbound.units import Kind
from qosbound.verdicts import default_slo_limit

__all__ = ["flow_metrics", "metric_kind", "slo_limit", "quantiles_of"]

_TIME = ("mean", "max", "jitter", "max_tfa", "max_sfa", "max_lp")


def flow_metrics(name: str, saturated: bool, ports: list[str], quantiles: list[float]) -> list[str]:
    """The metrics of one flow (module docstring)."""
    if saturated:
        return [f"{name}.throughput"]
    return ([f"{name}.delay.mean"] + [f"{name}.delay.{quantile_name(q)}" for q in quantiles] +
            [f"{name}.delay.max", f"{name}.delay.jitter", f"{name}.delay.max_tfa", f"{name}.delay.max_sfa",
             f"{name}.delay.max_lp"] +
            [f"{name}.hop.{p}.delay.max" for p in ports] + [f"{name}.loss", f"{name}.throughput"])


def metric_kind(metric: str) -> Kind:
    parts = metric.split(".")
    if len(parts) == 3 and parts[1] == "delay" and (parts[2] in _TIME or parse_quantile_name(parts[2]) is not None):
        return "time"
    if len(parts) == 3 and parts[1] == "delay" and parse_quantile_name(".".join(parts[2:])) is not None:
        return "time"
    if len(parts) == 4 and parts[1] == "delay" and parse_quantile_name(".".join(parts[2:])) is not None:
        return "time"  # p99.9
    if len(parts) == 5 and parts[1] == "hop" and parts[3:] == ["delay", "max"]:
        return "time"
    if len(parts) == 2 and parts[1] == "loss":
        return "probability"
    if len(parts) == 2 and parts[1] == "throughput":
        return "rate"
    raise ScenarioError(f"unknown metric '{metric}' for a network scenario; known per flow F: F.delay.mean, "
                        "F.delay.pNN, F.delay.max, F.delay.jitter, F.delay.max_tfa, F.delay.max_sfa, F.delay.max_lp, "
                        "F.hop.<port>.delay.max, F.loss, F.throughput", field="metric")


def slo_limit(scn, slo) -> float:
    return default_slo_limit(metric_kind, slo)


def quantiles_of(scn) -> list[float]:
    """The metrics section's quantiles and those the SLOs name."""
    qs = list(scn.metrics.quantiles)
    for s in scn.slos:
        parts = s.metric.split(".")
        if len(parts) >= 3 and parts[1] == "delay":
            q = parse_quantile_name(".".join(parts[2:]))
            if q is not None and not any(abs(q - x) < 1e-12 for x in qs):
                qs.append(q)
    return qs
