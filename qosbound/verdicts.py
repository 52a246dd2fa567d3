"""Judging SLOs and cross-method agreement on a list of results."""

from __future__ import annotations

from qosbound.errors import QosboundError
from qosbound.implication import implied_lower, implied_upper
from qosbound.results import Kind, Result, Verdict
from qosbound.scenario import SLO
from qosbound.units import SI_UNIT, format_quantity, parse_quantity

__all__ = ["default_slo_limit", "judge_slos", "exit_code", "EXIT_OK", "EXIT_SLO", "EXIT_INPUT", "EXIT_DISAGREE"]


def default_slo_limit(metric_kind, slo: SLO) -> float:
    """The SLO's limit in SI, read in its metric's kind; a time, rate or size limit must carry its unit (a bare
    ``max: 20`` on a delay is refused, not read as 20 s)."""
    kind = metric_kind(slo.metric)
    return parse_quantity(slo.raw_limit, kind, field=slo.bound, bare_si=False)


def omitted_reason(metric: str, results: list[Result]) -> str | None:
    """Why a method left ``metric`` out, when one says so (``provenance['omitted']``: pattern -> reason)."""
    import fnmatch

    for r in results:
        for pattern, reason in (r.provenance.get("omitted") or {}).items():
            if fnmatch.fnmatchcase(metric, pattern):
                return f"{r.method}: {reason}"
    return None


def _proofs(slo: SLO, limit: float, results: list[Result]) -> list[tuple[str, float, Result, str]]:
    """Every proof the results give about the SLO: (status 'holds' or 'violated', the bound proved on the SLO's
    metric, the result, the rule) -- from upper and lower bounds by :mod:`qosbound.implication`."""
    out = []
    for r in results:
        if slo.method is not None and r.method != slo.method:
            continue
        up, lo = implied_upper(r, slo.metric), implied_lower(r, slo.metric)
        if up is not None:
            v, rule = up
            if slo.bound == "max" and v <= limit:
                out.append(("holds", v, r, rule))
            elif slo.bound == "min" and v < limit:
                out.append(("violated", v, r, rule))
        if lo is not None:
            v, rule = lo
            if slo.bound == "min" and v >= limit:
                out.append(("holds", v, r, rule))
            elif slo.bound == "max" and v > limit:
                out.append(("violated", v, r, rule))
    return out


def _proof_verdict(slo: SLO, limit: float, proof, others: list[Verdict], unit: str) -> Verdict:
    """The verdict a proof gives, naming the proof and listing the estimates it overrides."""
    status, v, r, rule = proof
    others = [o for o in others if not (o.method == r.method and r.metric == slo.metric)]  # not the proof itself
    op = {("max", "holds"): "<=", ("max", "violated"): ">", ("min", "holds"): ">=", ("min", "violated"): "<"}[
        (slo.bound, status)]
    margin = (limit - v) if slo.bound == "max" else (v - limit)
    unit = unit or (r.unit if r.metric == slo.metric else "")
    via = "" if r.metric == slo.metric else f" {r.metric}"
    detail = (f"proved by {r.method}{via} ({r.interval.label()} {_q(r.value, r.unit)}; {rule}): {slo.metric} "
              f"{op} {_q(limit, unit)}")
    if others:
        est = "; ".join(f"{o.method} {_q(o.value, o.unit)} ({o.result_kind}, alone: {o.status})" for o in others)
        detail += f"; whatever the estimates say ({est})"
    return Verdict(kind="slo", name=slo.title(), metric=slo.metric, method=r.method, status=status, value=v,
                   limit=limit, unit=unit, margin=margin, detail=detail, result_kind=f"proof ({r.interval.label()})",
                   bound=slo.bound)


def _q(x, unit: str) -> str:
    return format_quantity(x, unit, digits=4) if unit else f"{x:.4g}"


def judge_slo(slo: SLO, limit: float, results: list[Result], unit: str = "") -> list[Verdict]:
    """The SLO's verdicts: by proof when a proved bound decides it, else one per method that produced
    ``slo.metric``; 'missing' when none did.

    A proof (:func:`_proofs`: an upper or lower bound on the metric, or one that implies it by
    :mod:`qosbound.implication`, e.g. a bound on the largest delay below the limit of a p99 SLO) decides the
    SLO whatever the estimates say: the verdict names the proof, and lists the estimates in its detail. When
    proofs contradict each other (a bound is wrong) both are reported, and the SLO fails. ``unit`` is the SI
    unit of the limit, shown with a missing SLO's limit."""
    direct = _direct(slo, limit, results, unit)
    proofs = _proofs(slo, limit, results)
    others = [v for v in direct if v.status != "missing"]
    unit = unit or (others[0].unit if others else "")
    holds = [p for p in proofs if p[0] == "holds"]
    fails = [p for p in proofs if p[0] == "violated"]
    if holds or fails:
        key = (lambda p: limit - p[1]) if slo.bound == "max" else (lambda p: p[1] - limit)
        out = []
        if holds:
            out.append(_proof_verdict(slo, limit, max(holds, key=key), others, unit))
        if fails:
            out.append(_proof_verdict(slo, limit, min(fails, key=key), others, unit))
        return out
    return direct


def _direct(slo: SLO, limit: float, results: list[Result], unit: str = "") -> list[Verdict]:
    """One verdict per method that produced ``slo.metric`` (judged on its value); 'missing' when none did."""
    matching = [r for r in results if r.metric == slo.metric and (slo.method is None or r.method == slo.method)]
    if not matching:
        why = omitted_reason(slo.metric, results)
        return [Verdict(kind="slo", name=slo.title(), metric=slo.metric, method=slo.method or "any",
                        status="missing", limit=limit, unit=unit,
                        detail=why or "no requested method produces this metric", bound=slo.bound)]
    out = []
    for r in matching:
        if slo.bound == "max":
            margin = limit - r.value
        else:
            margin = r.value - limit
        status = "holds" if margin >= 0 else "violated"
        detail = ""
        iv = r.interval
        if iv is not None and iv.kind is Kind.CI:
            lo_ok = (limit - iv.high) >= 0 if slo.bound == "max" else (iv.low - limit) >= 0
            hi_ok = (limit - iv.low) >= 0 if slo.bound == "max" else (iv.high - limit) >= 0
            if lo_ok != hi_ok:
                status = "inconclusive"
                detail = f"the {iv.label()} straddles the limit; point estimate {'meets' if margin >= 0 else 'misses'} it"
                if margin < 0:
                    status = "violated"
        if iv is not None and iv.kind is Kind.APPROXIMATION:
            detail = (detail + "; " if detail else "") + f"an approximation: it neglects {iv.neglects}"
        if r.provenance.get("config"):  # an imported port: the configuration lines of the class
            detail = (detail + "; " if detail else "") + f"configuration {r.provenance['config']}"
        out.append(Verdict(kind="slo", name=slo.title(), metric=slo.metric, method=r.method, status=status,
                           value=r.value, limit=limit, unit=r.unit, margin=margin, detail=detail,
                           result_kind=iv.label() if iv is not None else "", bound=slo.bound))
    return out


def judge_slos(system, scn, results: list[Result]) -> list[Verdict]:
    out: list[Verdict] = []
    for slo in scn.slos:
        limit = system.slo_limit(scn, slo)
        try:
            unit = SI_UNIT.get(system.metric_kind(slo.metric), "")
        except QosboundError:  # a metric the system does not know: no unit to show
            unit = ""
        out.extend(judge_slo(slo, limit, results, unit))
    return out


#: Exit codes shared by every command (documented in the README).
EXIT_OK, EXIT_SLO, EXIT_INPUT, EXIT_DISAGREE = 0, 1, 2, 3


def exit_code(verdicts: list[Verdict]) -> int:
    """0 when every SLO holds and methods agree; 1 when an SLO fails; 3 when only methods disagree."""
    if any(v.failed for v in verdicts):
        return EXIT_SLO
    if any(v.disagrees for v in verdicts):
        return EXIT_DISAGREE
    return EXIT_OK
