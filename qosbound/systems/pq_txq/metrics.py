"""The metrics of a ``pq_txq`` scenario: their names, their kinds, and which CCDF points and quantiles a run
computes (the metrics section plus any SLO's)."""

from __future__ import annotations

from qosbound.errors import ScenarioError
from qosbound.metric_names import ccdf_name, parse_quantile_name, quantile_name
from qosbound.systems.base import requested_statistics
from qosbound.systems.pq_txq.params import Params, params
from qosbound.systems.pq_txq.schema import Scenario
from qosbound.units import Kind
from qosbound.verdicts import default_slo_limit

__all__ = ["FIXED", "BESIDE", "STREAM", "stream_prefix", "per_stream", "metric_names", "metric_kind", "slo_limit",
           "requested_metrics"]


#: The metrics with a fixed name and their kinds (the quantiles and CCDF points are named by the scenario);
#: ``EF.delay.cobham_mean`` is an approximation reported beside the mean, ``EF.loss.cbr_bound`` a bound reported
#: beside the loss: not metrics a trace measures.
FIXED: dict[str, Kind] = {"EF.delay.mean": "time", "EF.delay.worst_case_mean": "time", "EF.delay.max": "time",
                           "EF.loss": "probability", "EF.delay.cobham_mean": "time",
                           "EF.loss.cbr_bound": "probability"}
#: Reported beside another metric (an approximation of it, or a bound on it), not a metric of their own.
BESIDE = ("EF.delay.cobham_mean", "EF.loss.cbr_bound")


def stream_prefix(i: int) -> str:
    """The metric prefix of EF stream ``i`` (0-based) of an aggregate: 'EF.s1', 'EF.s2', ..."""
    return f"EF.s{i + 1}"


def per_stream(p: Params) -> bool:
    """Whether per-stream metrics are reported: an aggregate whose streams are not all alike (identical streams
    with independent random phases are exchangeable: each one's statistics are the aggregate's)."""
    return len(set(p.ef_streams)) > 1 or (len(p.ef_streams) > 1 and p.ef_streams[0][2] >= 0)


#: Per-stream metrics (``EF.s<i>.<stat>``) and their kinds, by the simulator.
STREAM: dict[str, Kind] = {"delay.mean": "time", "loss": "probability"}


def metric_names(scn: Scenario) -> list[str]:
    m = ["EF.delay.mean"] + [f"EF.delay.{quantile_name(q)}" for q in scn.metrics.quantiles]
    m += [ccdf_name("EF.delay", d) for d in scn.metrics.ccdf_at]
    m += [n for n in FIXED if n not in m and n not in BESIDE]
    ef = scn.traffic.EF
    if ef.streams is not None or ef.calls is not None:
        m.append("EF.aggregation_degree")
        p = params(scn)
        if per_stream(p):
            m += [f"{stream_prefix(i)}.{stat}" for i in range(len(p.ef_streams)) for stat in STREAM]
    return m


def metric_kind(metric: str) -> Kind:
    if metric in FIXED:
        return FIXED[metric]
    if metric == "EF.aggregation_degree":
        return "probability"
    parts = metric.split(".", 2)
    if len(parts) == 3 and parts[0] == "EF" and parts[1][:1] == "s" and parts[1][1:].isdigit() \
            and parts[2] in STREAM:
        return STREAM[parts[2]]
    stat = metric[len("EF.delay."):] if metric.startswith("EF.delay.") else None
    if stat is not None and stat.startswith("ccdf@"):
        return "probability"
    if stat is not None and parse_quantile_name(stat) is not None:
        return "time"
    raise ScenarioError(f"unknown metric '{metric}' for a pq_txq scenario; known: EF.delay.pNN, "
                        f"EF.delay.ccdf@<time>, {', '.join(FIXED)}, and for EF aggregates "
                        "EF.aggregation_degree, EF.s<i>.delay.mean, EF.s<i>.loss", field="metric")


def slo_limit(scn: Scenario, slo) -> float:
    return default_slo_limit(metric_kind, slo)


def requested_metrics(scn: Scenario, extra: list[str]) -> tuple[list[float], list[float]]:
    """CCDF points and quantiles from the metrics section plus any SLO metrics (``extra``: metric names)."""
    return requested_statistics(scn.metrics.ccdf_at, scn.metrics.quantiles, [name.split(".", 2)[-1] for name in extra])
