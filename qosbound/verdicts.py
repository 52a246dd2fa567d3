"""Judging SLOs and cross-method agreement on a list of results."""

from __future__ import annotations

from qosbound.errors import QosboundError
from qosbound.results import Kind, Result, Verdict
from qosbound.scenario import SLO
from qosbound.units import SI_UNIT, parse_quantity

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


def judge_slo(slo: SLO, limit: float, results: list[Result], unit: str = "") -> list[Verdict]:
    """One verdict per method that produced ``slo.metric``; 'missing' when none did.

    ``unit`` is the SI unit of the limit, shown with a missing SLO's limit."""
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
