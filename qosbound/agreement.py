"""Cross-method agreement: one rule for every system, driven by what kind of number each result is.

For every metric computed by two or more methods, :func:`agreements` emits the
checks the kinds call for (see :class:`qosbound.results.Kind`):

* an **upper bound** must not be exceeded by any estimate of a metric it bounds
  (its own metric or one named in ``Result.bounds``): the estimate's lowest
  credible value (the lower end of a numerical interval, the family-wise lower
  confidence limit of a simulation) must lie at or below the bound; a
  **lower bound** likewise from below;
* two **exact / numerical** values must have overlapping intervals (exact
  values computed in floating point get a relative slack of 1e-9);
* an **exact / numerical** value and a **confidence interval** agree when
  ``|mean - value|`` is at most ``t * se`` plus the value's own numerical
  half-width, with ``t`` the Student-t quantile that holds the family-wise
  error of all such checks in the run at ``1 - family_confidence``
  (Bonferroni), from the estimate's standard error and degrees of freedom;
* two **confidence intervals** (e.g. simulated vs ns-3) agree when their means
  differ by at most ``t * sqrt(se1^2 + se2^2)``, same family;
* an **approximation** is compared with every other estimate, but a gap is
  reported with status ``approximate`` (and what the approximation neglects),
  never as a contradiction; when the approximation carries an error estimate
  that covers the gap the status is ``agree``.

Statuses: ``agree``, ``disagree``, ``approximate``. Only ``disagree`` makes a run
report that methods disagree (exit code 3), and an SLO is never failed by it.
"""

from __future__ import annotations

import math
from itertools import combinations

from qosbound.results import Kind, Result, Verdict

__all__ = ["agreements", "FAMILY_CONFIDENCE", "REL_SLACK"]

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
    from scipy import stats

    z = float(stats.norm.ppf(0.5 + iv.level / 2.0))
    return iv.half_width / z, None


def _t(p: float, dof: int | None) -> float:
    from scipy import stats

    if dof is None or dof <= 0:
        return float(stats.norm.ppf(p))
    return float(stats.t.ppf(p, dof))


def _slack(*xs: float) -> float:
    return REL_SLACK * max([1.0] + [abs(x) for x in xs])


def _distance(iv_low: float, iv_high: float, x: float) -> float:
    """Distance from x to the interval [low, high] (0 inside)."""
    return max(iv_low - x, 0.0, x - iv_high)


def agreements(results: list[Result], *, family_confidence: float = FAMILY_CONFIDENCE) -> list[Verdict]:
    """Every agreement verdict the results' kinds call for (see the module docstring)."""
    if not 0.0 < family_confidence < 1.0:
        raise ValueError("family_confidence must be in (0, 1)")
    with_iv = [r for r in results if r.interval is not None]
    metrics = sorted({r.metric for r in with_iv})
    bounds = [r for r in with_iv if r.interval.is_bound]

    bound_pairs: list[tuple[Result, Result]] = []
    est_pairs: list[tuple[Result, Result]] = []
    for m in metrics:
        estimates = [r for r in with_iv if r.metric == m and not r.interval.is_bound]
        for b in bounds:
            if b.bounds_metric(m):
                bound_pairs += [(b, e) for e in estimates if e.method != b.method]
        for a, b in combinations(estimates, 2):
            if a.method != b.method:
                est_pairs.append((a, b))

    def statistical(a: Result, b: Result) -> bool:
        return Kind.CI in (a.kind, b.kind) and Kind.APPROXIMATION not in (a.kind, b.kind)

    n_stat = sum(statistical(a, b) for a, b in est_pairs) + sum(e.kind is Kind.CI for _, e in bound_pairs)
    alpha = 1.0 - family_confidence
    p_two = 1.0 - alpha / (2 * max(n_stat, 1))  # two-sided, Bonferroni
    p_one = 1.0 - alpha / max(n_stat, 1)  # one-sided (bounds)

    out: list[Verdict] = []
    fw = f"family-wise {family_confidence:.0%}"
    for b, e in bound_pairs:
        upper = b.interval.kind is Kind.UPPER_BOUND
        if e.kind is Kind.CI:
            se = _se(e)
            if se is not None:
                t = _t(p_one, se[1])
                credible = e.value - t * se[0] if upper else e.value + t * se[0]
                how = f"{'lower' if upper else 'upper'} {fw} confidence limit"
            else:
                credible = e.interval.low if upper else e.interval.high
                how = f"{e.interval.label()} {'lower' if upper else 'upper'} end"
        elif e.kind is Kind.APPROXIMATION:
            credible, how = e.value, "approximation"
        else:
            credible = e.interval.low if upper else e.interval.high
            how = e.interval.label()
        margin = (b.value - credible) if upper else (credible - b.value)
        ok = margin >= -_slack(b.value, credible)
        status = "agree" if ok else ("approximate" if e.kind is Kind.APPROXIMATION else "disagree")
        rel = "<=" if upper else ">="
        detail = f"{e.method} {e.metric} ({how}) {rel} {b.method} {b.interval.label()} {b.metric}"
        if not ok:
            detail = f"{e.method} exceeds the {b.method} {b.interval.label()}: " + detail.split(" (")[0]
            if e.kind is Kind.APPROXIMATION:
                detail += f"; the approximation neglects {e.interval.neglects}"
        out.append(Verdict("agreement", f"{b.method} {b.interval.label()} {b.metric} {rel} {e.method} {e.metric}",
                           e.metric, f"{b.method} vs {e.method}", status, e.value, b.value, e.unit, margin, detail))

    for a, b in est_pairs:
        # order: reference first, then CI, then approximations
        order = {Kind.EXACT: 0, Kind.NUMERICAL: 0, Kind.CI: 1, Kind.APPROXIMATION: 2}
        if order[a.kind] > order[b.kind]:
            a, b = b, a
        name = f"{b.method} agrees with {a.method} on {a.metric}"
        if b.kind is Kind.APPROXIMATION:
            lo, hi = min(a.interval.low, a.value), max(a.interval.high, a.value)
            if a.kind is Kind.CI:
                se = _se(a)
                if se is not None:
                    h = _t(p_two, se[1]) * se[0]
                    lo, hi = a.value - h, a.value + h
            gap = _distance(lo, hi, b.value) if b.interval.low == b.interval.high else \
                max(0.0, max(lo, b.interval.low) - min(hi, b.interval.high))
            ok = gap <= _slack(a.value, b.value)
            rel = abs(b.value - a.value) / abs(a.value) if a.value else math.inf
            detail = (f"approximation neglects {b.interval.neglects}; gap {abs(b.value - a.value):.4g} "
                      f"({'%.1f%%' % (100 * rel) if math.isfinite(rel) else 'n/a'} of the {a.method} value)")
            out.append(Verdict("agreement", name, a.metric, f"{b.method} vs {a.method}",
                               "agree" if ok else "approximate", b.value, a.value, a.unit, -gap, detail))
            continue
        if a.kind in _REFERENCE and b.kind in _REFERENCE:
            gap = max(0.0, max(a.interval.low, b.interval.low) - min(a.interval.high, b.interval.high))
            ok = gap <= _slack(a.value, b.value)
            detail = (f"{a.interval.label()} [{a.interval.low:.6g}, {a.interval.high:.6g}] and "
                      f"{b.interval.label()} [{b.interval.low:.6g}, {b.interval.high:.6g}] "
                      f"{'overlap' if ok else 'are disjoint'}")
            out.append(Verdict("agreement", name, a.metric, f"{b.method} vs {a.method}",
                               "agree" if ok else "disagree", b.value, a.value, a.unit, -gap, detail))
            continue
        if a.kind in _REFERENCE:  # b is a CI
            se = _se(b)
            if se is None:
                continue
            t = _t(p_two, se[1])
            half = t * se[0]
            dist = _distance(a.interval.low, a.interval.high, b.value)
            ok = dist <= half + _slack(a.value, b.value)
            detail = (f"|{b.value:.6g} - {a.value:.6g}| {'<=' if ok else '>'} {t:.2f} standard errors "
                      f"({half:.3g}) + {a.interval.label()} half-width, {fw}")
            out.append(Verdict("agreement", name, a.metric, f"{b.method} vs {a.method}",
                               "agree" if ok else "disagree", b.value, a.value, a.unit, half - dist, detail))
            continue
        # two confidence intervals
        sa, sb = _se(a), _se(b)
        if sa is None or sb is None:
            continue
        dofs = [d for d in (sa[1], sb[1]) if d is not None]
        t = _t(p_two, min(dofs) if len(dofs) == 2 else None)
        half = t * math.hypot(sa[0], sb[0])
        dist = abs(a.value - b.value)
        ok = dist <= half + _slack(a.value, b.value)
        detail = f"|{b.value:.6g} - {a.value:.6g}| {'<=' if ok else '>'} {t:.2f} combined standard errors, {fw}"
        out.append(Verdict("agreement", name, a.metric, f"{b.method} vs {a.method}",
                           "agree" if ok else "disagree", b.value, a.value, a.unit, half - dist, detail))
    return out
