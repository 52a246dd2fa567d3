"""Cross-method agreement: one rule for every system, driven by what kind of number each result is.

For every metric computed by two or more methods, :func:`agreements` emits the
checks the kinds call for (see :class:`qosbound.results.Kind`). A result takes
part under its own metric name, under the metric it ``estimates`` (e.g.
``EF.delay.cobham_mean`` estimates ``EF.delay.mean``) and, for a bound, under
every metric it ``bounds``:

* an **upper bound** must not be exceeded by any estimate of a metric it bounds:
  the estimate's lowest credible value (the lower end of a numerical interval,
  the family-wise lower confidence limit of a simulation) must lie at or below
  the bound; a **lower bound** likewise from below;
* an upper and a **lower bound** on the same metric (e.g. a closed-form bound on
  the maximum delay and the largest delay a simulation observed) must not cross;
* two **exact / numerical** values must have overlapping intervals (exact values
  computed in floating point get a relative slack of 1e-9);
* an **exact / numerical** value and a **confidence interval** agree when
  ``|mean - value|`` is at most ``t * se`` plus the value's own numerical
  half-width, with ``t`` the Student-t quantile that holds the family-wise error
  of all statistical checks in the run at ``1 - family_confidence`` (Bonferroni,
  :func:`qosbound.validation.stats.bonferroni`), from the estimate's standard
  error and degrees of freedom;
* two **confidence intervals** (e.g. simulated vs ns-3) agree when their means
  differ by at most ``t * sqrt(se1^2 + se2^2)``, same family;
* an **approximation** is compared with every other estimate, but a gap is
  reported with status ``approximate`` (and what the approximation neglects),
  never as a contradiction; when the approximation carries an error estimate
  that covers the gap the status is ``agree``.

Two upper bounds (or two lower bounds) of one metric never contradict each
other, so no verdict is emitted for such a pair.

Statuses: ``agree``, ``disagree``, ``approximate``. Only ``disagree`` makes a run
report that methods disagree (exit code 3), and an SLO is never failed by it.
"""

from __future__ import annotations

import math
from itertools import combinations

from qosbound.results import Kind, Result, Verdict
from qosbound.units import format_quantity
from qosbound.validation.stats import bonferroni, t_quantile

__all__ = ["agreements", "compared_metrics", "FAMILY_CONFIDENCE", "REL_SLACK"]

#: Default family-wise confidence of all statistical agreement checks of one run.
FAMILY_CONFIDENCE = 0.99
#: Relative slack for comparing values computed in floating point.
REL_SLACK = 1e-9

_REFERENCE = (Kind.EXACT, Kind.NUMERICAL)


def _se(r: Result) -> tuple[float, int | None] | None:
    """Standard error and degrees of freedom of a CI result (derived from its width if not stored)."""
    iv = r.interval
    if iv.se is not None:
        return float(iv.se), iv.dof
    if iv.level is None:
        return None
    z = t_quantile(0.5 + iv.level / 2.0, None)
    return iv.half_width / z, None


def _q(x: float, unit: str, digits: int = 6) -> str:
    """A number with its unit, for the verdict details."""
    return format_quantity(x, unit, digits=digits)


def _slack(*xs: float) -> float:
    return REL_SLACK * max([1.0] + [abs(x) for x in xs])


def _distance(iv_low: float, iv_high: float, x: float) -> float:
    """Distance from x to the interval [low, high] (0 inside)."""
    return max(iv_low - x, 0.0, x - iv_high)


def _target(r: Result) -> str:
    """The metric a result is an estimate of."""
    return r.estimates or r.metric


def _kind_text(r: Result) -> str:
    iv = r.interval
    text = iv.label()
    if iv.neglects:
        text += f", neglects {iv.neglects}"
    return text


def _who(r: Result, metric: str) -> str:
    """'simulated' or 'closed-form EF.delay.cobham_mean' when the result's own name differs from the metric."""
    return r.method if r.metric == metric else f"{r.method} {r.metric}"


def compared_metrics(results: list[Result]) -> dict[str, set[str]]:
    """Every metric with the methods that compute or bound it (bounds count for the metrics they bound)."""
    with_iv = [r for r in results if r.interval is not None]
    names = {_target(r) for r in with_iv}
    out: dict[str, set[str]] = {}
    for m in names:
        out[m] = {r.method for r in with_iv if _target(r) == m or r.bounds_metric(m)}
    return out


def agreements(results: list[Result], *, family_confidence: float = FAMILY_CONFIDENCE) -> list[Verdict]:
    """Every agreement verdict the results' kinds call for (see the module docstring)."""
    if not 0.0 < family_confidence < 1.0:
        raise ValueError("family_confidence must be in (0, 1)")
    bound_pairs, cross_pairs, est_pairs = _pairs(results)
    n_stat = sum(_statistical(a, b) for a, b, _ in est_pairs) + sum(e.kind is Kind.CI for _, e, _ in bound_pairs)
    p_two, p_one = bonferroni(family_confidence, n_stat)
    fw = f"family-wise {family_confidence:.0%} over {max(n_stat, 1)} statistical check{'s' if n_stat != 1 else ''}"
    out = [_bound_verdict(b, e, m, p_one, fw) for b, e, m in bound_pairs]
    out += [_cross_verdict(u, lo, m) for u, lo, m in cross_pairs]
    out += [v for a, b, m in est_pairs if (v := _estimate_verdict(a, b, m, p_two, fw)) is not None]
    return out


def _pairs(results: list[Result]) -> tuple[list, list, list]:
    """The pairs to judge, each with its metric: (bound, estimate), (upper bound, lower bound) and two estimates
    of two methods."""
    with_iv = [r for r in results if r.interval is not None]
    metrics = sorted({_target(r) for r in with_iv})
    bounds = [r for r in with_iv if r.interval.is_bound]
    bound_pairs: list[tuple[Result, Result, str]] = []  # (bound, estimate, metric)
    cross_pairs: list[tuple[Result, Result, str]] = []  # (upper bound, lower bound, metric)
    est_pairs: list[tuple[Result, Result, str]] = []
    for m in metrics:
        estimates = [r for r in with_iv if _target(r) == m and not r.interval.is_bound]
        on_m = [b for b in bounds if b.bounds_metric(m) or _target(b) == m]
        for b in on_m:
            bound_pairs += [(b, e, m) for e in estimates if e.method != b.method]
        for u in on_m:
            if u.kind is not Kind.UPPER_BOUND:
                continue
            cross_pairs += [(u, lo, m) for lo in on_m if lo.kind is Kind.LOWER_BOUND and lo.method != u.method]
        for a, b in combinations(estimates, 2):
            if a.method != b.method:
                est_pairs.append((a, b, m))
    return bound_pairs, cross_pairs, est_pairs


def _statistical(a: Result, b: Result) -> bool:
    """A pair judged with a statistical test (counted in the family-wise confidence)."""
    return Kind.CI in (a.kind, b.kind) and Kind.APPROXIMATION not in (a.kind, b.kind)


def _bound_verdict(b: Result, e: Result, m: str, p_one: float, fw: str) -> Verdict:
    """A bound against an estimate of another method: the estimate's credible end on the bound's side of it."""
    upper = b.interval.kind is Kind.UPPER_BOUND
    if e.kind is Kind.CI:
        se = _se(e)
        if se is not None:
            t = t_quantile(p_one, se[1])
            credible = e.value - t * se[0] if upper else e.value + t * se[0]
            how = f"its {'lower' if upper else 'upper'} confidence limit, {t:.2f} standard errors, {fw}"
        else:
            credible = e.interval.low if upper else e.interval.high
            how = f"the {'lower' if upper else 'upper'} end of its {e.interval.label()}"
    elif e.kind is Kind.APPROXIMATION:
        credible, how = e.value, "an approximation"
    else:
        credible = e.interval.low if upper else e.interval.high
        how = f"the {'lower' if upper else 'upper'} end of its {e.interval.label()} interval"
    margin = (b.value - credible) if upper else (credible - b.value)
    ok = margin >= -_slack(b.value, credible)
    status = "agree" if ok else ("approximate" if e.kind is Kind.APPROXIMATION else "disagree")
    rel = "<=" if upper else ">="
    shown = rel if ok else (">" if upper else "<")
    detail = (f"{_who(e, m)} ({e.interval.label()}; {how}: {_q(credible, e.unit)}) {shown} {_who(b, m)} "
              f"({_kind_text(b)}: {_q(b.value, b.unit)})")
    if not ok:
        detail = f"{_who(e, m)} lies {'above' if upper else 'below'} the {b.interval.label()}: " + detail
    if e.kind is Kind.APPROXIMATION:
        detail += f"; the approximation neglects {e.interval.neglects}"
    name = f"{_who(b, m)} {b.interval.label()} {'>=' if upper else '<='} {_who(e, m)} on {m}"
    return Verdict("agreement", name, m, f"{b.method} vs {e.method}", status, e.value, b.value, e.unit,
                   margin, detail, result_kind=f"{b.interval.label()} vs {e.interval.label()}")


def _cross_verdict(u: Result, lo: Result, m: str) -> Verdict:
    """An upper bound against another method's lower bound: they must not cross."""
    margin = u.value - lo.value
    ok = margin >= -_slack(u.value, lo.value)
    detail = (f"{_who(lo, m)} lower bound {_q(lo.value, lo.unit)} {'<=' if ok else '>'} {_who(u, m)} upper "
              f"bound {_q(u.value, u.unit)}{'' if ok else ': the bounds cross, so one of them is wrong'}")
    if lo.interval.note:
        detail += f" ({lo.interval.note})"
    return Verdict("agreement", f"{_who(u, m)} upper bound >= {_who(lo, m)} lower bound on {m}", m,
                   f"{u.method} vs {lo.method}", "agree" if ok else "disagree", lo.value, u.value, lo.unit,
                   margin, detail, result_kind="upper bound vs lower bound")


#: The order of two estimates in a verdict: the reference first, then a confidence interval, then approximations.
_ORDER = {Kind.EXACT: 0, Kind.NUMERICAL: 0, Kind.CI: 1, Kind.APPROXIMATION: 2}


def _estimate_verdict(a: Result, b: Result, m: str, p_two: float, fw: str) -> Verdict | None:
    """Two estimates of two methods (the reference first): an approximation's gap, two references' overlap, a
    reference within a confidence interval, or two confidence intervals; None when a CI has no standard error."""
    if _ORDER[a.kind] > _ORDER[b.kind]:
        a, b = b, a
    head = (f"{_who(b, m)} agrees with {_who(a, m)} on {m}", m, f"{b.method} vs {a.method}")
    rk = f"{b.interval.label()} vs {a.interval.label()}"
    if b.kind is Kind.APPROXIMATION:
        return _approximation_verdict(a, b, head, rk, p_two)
    if a.kind in _REFERENCE and b.kind in _REFERENCE:
        gap = max(0.0, max(a.interval.low, b.interval.low) - min(a.interval.high, b.interval.high))
        ok = gap <= _slack(a.value, b.value)
        detail = (f"{a.interval.label()} [{_q(a.interval.low, a.unit, 9)}, {_q(a.interval.high, a.unit, 9)}] and "
                  f"{b.interval.label()} [{_q(b.interval.low, b.unit, 9)}, {_q(b.interval.high, b.unit, 9)}] "
                  f"{'overlap' if ok else 'are disjoint'}")
        return Verdict("agreement", *head, "agree" if ok else "disagree", b.value, a.value, a.unit, -gap, detail,
                       result_kind=rk)
    if a.kind in _REFERENCE:  # b is a CI
        se = _se(b)
        if se is None:
            return None
        t = t_quantile(p_two, se[1])
        half = t * se[0]
        dist = _distance(a.interval.low, a.interval.high, b.value)
        ok = dist <= half + _slack(a.value, b.value)
        detail = (f"|{_q(b.value, b.unit)} - {_q(a.value, a.unit)}| {'<=' if ok else '>'} {t:.2f} standard "
                  f"errors ({_q(half, b.unit, 3)}) + {a.interval.label()} half-width, {fw}")
        return Verdict("agreement", *head, "agree" if ok else "disagree", b.value, a.value, a.unit, half - dist,
                       detail, result_kind=rk)
    # two confidence intervals
    sa, sb = _se(a), _se(b)
    if sa is None or sb is None:
        return None
    dofs = [d for d in (sa[1], sb[1]) if d is not None]
    t = t_quantile(p_two, min(dofs) if len(dofs) == 2 else None)
    half = t * math.hypot(sa[0], sb[0])
    dist = abs(a.value - b.value)
    ok = dist <= half + _slack(a.value, b.value)
    detail = (f"|{_q(b.value, b.unit)} - {_q(a.value, a.unit)}| {'<=' if ok else '>'} {t:.2f} combined "
              f"standard errors ({_q(half, b.unit, 3)}), {fw}")
    return Verdict("agreement", *head, "agree" if ok else "disagree", b.value, a.value, a.unit, half - dist, detail,
                   result_kind=rk)


def _approximation_verdict(a: Result, b: Result, head: tuple, rk: str, p_two: float) -> Verdict:
    """An approximation ``b`` against ``a``: the gap between ``b`` (or its range) and ``a``'s interval (a CI's
    two-sided confidence limits), 'approximate' beyond the slack, with what the approximation neglects."""
    lo, hi = min(a.interval.low, a.value), max(a.interval.high, a.value)
    if a.kind is Kind.CI:
        se = _se(a)
        if se is not None:
            h = t_quantile(p_two, se[1]) * se[0]
            lo, hi = a.value - h, a.value + h
    if b.interval.low == b.interval.high:
        gap = _distance(lo, hi, b.value)
    else:
        gap = max(0.0, max(lo, b.interval.low) - min(hi, b.interval.high))
    ok = gap <= _slack(a.value, b.value)
    if a.kind is Kind.APPROXIMATION and b.kind is Kind.APPROXIMATION:
        neg = f"{a.method} neglects {a.interval.neglects}; {b.method} neglects {b.interval.neglects}"
    else:
        neg = f"the approximation neglects {b.interval.neglects}"
    rel = abs(b.value - a.value) / abs(a.value) if a.value else math.inf
    detail = (f"{neg}; gap {_q(abs(b.value - a.value), a.unit, 4)} "
              f"({'%.1f%%' % (100 * rel) if math.isfinite(rel) else 'n/a'} of the {a.method} value)")
    return Verdict("agreement", *head, "agree" if ok else "approximate", b.value, a.value, a.unit, -gap, detail,
                   result_kind=rk)
