"""The verdict of one trial value of an admission search (:func:`judge_point`): every SLO judged first by the
proved bounds the results carry, then on the search method's own value, with the margins the search compares
across SLOs (:func:`normalised_margin`). The rules are those of :mod:`qosbound.admit`'s docstring."""

from __future__ import annotations

import math

from qosbound.errors import ScenarioError
from qosbound.results import Kind
from qosbound.units import SI_UNIT
from qosbound.verdicts import judge_slo

__all__ = ["normalised_margin", "worst_margin", "judge_point", "FEW_EVENTS", "FEW_EVENTS_MARGIN"]


def normalised_margin(margin: float, limit: float | None) -> float:
    """An SLO's slack relative to its limit (the slack itself when the limit is 0): comparable across SLOs."""
    return margin / abs(limit) if limit else margin


def _field(v, name: str):
    return v[name] if isinstance(v, dict) else getattr(v, name)


def worst_margin(verdicts, methods, path=None) -> tuple[float, str]:
    """The smallest normalised margin over the SLO verdicts (objects or their JSON dicts) and the SLO that has it
    (+inf and '' when there is none); an SLO no method in ``methods`` can judge is bad input."""
    worst, name = math.inf, ""
    for v in verdicts:
        if _field(v, "status") == "missing":
            raise ScenarioError(f"SLO '{_field(v, 'name')}' cannot be judged by method(s) {', '.join(methods)}",
                                file=path)
        m = normalised_margin(_field(v, "margin"), _field(v, "limit"))
        if m < worst:
            worst, name = m, _field(v, "name")
    return worst, name


def _proof(slo, limit: float, results):
    """(True, result) when a proved bound shows the SLO holds, (False, result) when one shows it fails, else
    None. A bound counts when its kind is ``upper bound`` / ``lower bound`` and it bounds the SLO's metric
    (:meth:`qosbound.results.Result.bounds_metric`); an SLO restricted to a method takes that method's only."""
    cands = [r for r in results if r.interval is not None and r.interval.is_bound and r.bounds_metric(slo.metric)
             and (slo.method is None or r.method == slo.method)]
    upper = [r for r in cands if r.interval.kind is Kind.UPPER_BOUND]
    lower = [r for r in cands if r.interval.kind is Kind.LOWER_BOUND]
    if slo.bound == "max":
        against = [r for r in lower if r.value > limit]
        if against:
            return False, max(against, key=lambda r: r.value)
        proving = [r for r in upper if r.value <= limit]
        if proving:
            return True, min(proving, key=lambda r: r.value)
    else:
        against = [r for r in upper if r.value < limit]
        if against:
            return False, min(against, key=lambda r: r.value)
        proving = [r for r in lower if r.value >= limit]
        if proving:
            return True, max(proving, key=lambda r: r.value)
    return None


#: A simulated fraction (a loss) counted fewer events than this ...
FEW_EVENTS = 5
#: ... decides a 'max' SLO only when its interval's upper end is this many times below the limit.
FEW_EVENTS_MARGIN = 10.0


def _decided(result, limit: float, bound: str) -> bool:
    """Whether a value settles the SLO: always, except a confidence interval that straddles the limit, and a
    simulated fraction with fewer than :data:`FEW_EVENTS` events that would hold. Such an interval rests on the
    pooled Clopper-Pearson floor, which takes the packets as independent trials; losses come in bursts (a PQ
    overflow drops several packets) and, for CBR calls, mostly in the few replications whose phases line up
    (near the 1 Gbit/s voice port's boundary 73 % of 125,000-packet replications lose nothing), so a handful
    of loss-free replications says less than it seems: it decides only with a tenfold margin."""
    iv = result.interval
    if iv is None or iv.kind is not Kind.CI:
        return True
    if bound == "max":
        events = (result.provenance or {}).get("events")
        if iv.high <= limit and events is not None and events < FEW_EVENTS:
            return iv.high * FEW_EVENTS_MARGIN <= limit
        return iv.high <= limit or iv.low > limit
    return iv.low >= limit or iv.high < limit


def _estimate(result, slo_name: str, limit: float, by: str) -> dict:
    iv = result.interval
    out = {"slo": slo_name, "metric": result.metric, "method": result.method, "value": result.value,
           "unit": result.unit, "limit": limit, "by": by, "kind": iv.label() if iv is not None else ""}
    if iv is not None and iv.kind is Kind.CI:
        out.update(low=iv.low, high=iv.high, level=iv.level)
    prov = result.provenance or {}
    for key in ("replications", "packets_per_replication"):
        if prov.get(key) is not None:
            out[key] = prov[key]
    return out


def judge_point(system, trial, results, path=None, *, bounds_only: bool = False) -> dict:
    """Every SLO of ``trial`` judged on ``results`` (see the module docstring): a dict with ``feasible``,
    ``margin`` (the smallest normalised margin), ``binding`` (the SLO that has it), ``by`` ('bound' when proofs
    decide every SLO), ``decided`` (no SLO left to an interval that straddles its limit) and ``slos`` (per SLO:
    ``holds``, ``margin``, ``decided``, ``by`` and its ``estimate``). With ``bounds_only`` an SLO no bound decides
    makes the point undecided (``feasible`` False, ``proved`` False)."""
    calls = {}
    for slo in trial.slos:
        limit = system.slo_limit(trial, slo)
        name = slo.title()
        pr = _proof(slo, limit, results)
        if pr is not None:
            holds, r = pr
            margin = (limit - r.value) if slo.bound == "max" else (r.value - limit)
            calls[name] = {"holds": holds, "margin": normalised_margin(margin, limit), "decided": True,
                           "by": "bound", "estimate": _estimate(r, name, limit, "bound")}
            continue
        if bounds_only:
            covered = any(r.interval is not None and r.interval.is_bound and r.bounds_metric(slo.metric)
                          for r in results)
            calls[name] = {"holds": False, "margin": -math.inf, "decided": False, "by": "", "estimate": None,
                           "covered": covered}
            continue
        try:
            unit = SI_UNIT.get(system.metric_kind(slo.metric), "")
        except ScenarioError:
            unit = ""
        verdicts = [v for v in judge_slo(slo, limit, results, unit) if v.status != "missing"]
        if not verdicts:
            methods = sorted({r.method for r in results})
            raise ScenarioError(f"SLO '{name}' cannot be judged by method(s) {', '.join(methods)}", file=path)
        worst = min(verdicts, key=lambda v: normalised_margin(v.margin, v.limit))
        r = next(x for x in results if x.metric == slo.metric and x.method == worst.method)
        calls[name] = {"holds": worst.margin >= 0, "margin": normalised_margin(worst.margin, worst.limit),
                       "decided": all(_decided(x, limit, slo.bound) for x in results
                                      if x.metric == slo.metric and (slo.method is None or x.method == slo.method)),
                       "by": worst.method, "estimate": _estimate(r, name, limit, worst.method)}
    if not calls:
        return {"feasible": True, "margin": math.inf, "binding": "", "by": "bound", "decided": True,
                "proved": True, "disproved": False, "slos": {}}
    by_bound = [n for n, c in calls.items() if c["by"] == "bound"]
    disproved = any(not calls[n]["holds"] for n in by_bound)
    # a value a bound rules out is judged on the bounds that decide it (finite margins, for the root finder)
    pool = by_bound if disproved and bounds_only else list(calls)
    binding = min(pool, key=lambda n: calls[n]["margin"])
    proved = len(by_bound) == len(calls)
    return {"feasible": all(c["holds"] for c in calls.values()), "margin": calls[binding]["margin"],
            "binding": binding, "by": "bound" if proved or disproved else next(
                c["by"] for c in calls.values() if c["by"] != "bound"),
            "decided": all(c["decided"] for c in calls.values()) or disproved,
            "proved": proved and not disproved, "disproved": disproved,
            "covered": all(c.get("covered", True) for c in calls.values()), "slos": calls}
