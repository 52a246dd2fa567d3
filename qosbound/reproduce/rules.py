"""The statistical rules of the claims files: one-sided tests, orderings, equivalence bands, power and
Holm-Bonferroni.

Every test here is one-sided in the direction of the claim: its null hypothesis is that the claim is false,
so a small p-value is evidence *for* the claim and a claim is reproduced only when its test rejects at the
family level. A claim that is not shown is NOT MET whatever the reason (an effect the other way, or too few
replications: the stated power tells which).

* :func:`one_sided` -- is a mean above (below) a threshold? Student's t on the mean and its standard error.
* :func:`difference` -- is one mean above (below) another? Welch's test (:func:`qosbound.validation.stats.welch`).
* :func:`intersection_union` -- an ordering or "X is largest" holds when every one of its pairwise one-sided
  tests rejects; the intersection-union test's p-value is the largest of theirs, valid at the same level
  without adjustment (Berger, "Multiparameter hypothesis testing and acceptance sampling", 1982).
* :func:`variance_ratio` -- is one variance above (below) another? The one-sided F test on the two sample
  variances (normal samples assumed; the test is not robust to heavier tails).
* :func:`band` -- the two one-sided tests of equivalence (Schuirmann, "A comparison of the two one-sided tests
  procedure and the power approach for assessing the equivalence of average bioavailability", 1987).
* :func:`holm` -- Holm, "A simple sequentially rejective multiple test procedure" (1979): the family-wise error
  of every one-sided test of one ``reproduce`` run is at most the family level.
* :func:`spearman_power` -- the power of the one-sided Spearman rank test against a true correlation, by
  Fisher's z with the variance 1.06 / (n - 3) of Fieller, Hartley & Pearson, "Tests for rank correlation
  coefficients. I" (1957).
* :func:`power` -- the probability that the one-sided t test rejects when the true difference is ``effect``
  (the noncentral t; the normal approximation for dof = None).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from qosbound.validation.stats import t_quantile, welch

__all__ = ["Test", "one_sided", "difference", "variance_ratio", "intersection_union", "band", "holm", "power",
           "se_from_interval", "spearman_power"]


@dataclass(frozen=True)
class Test:
    """One one-sided test: its p-value, the statistic's standard error and dof, and the power at ``effect``."""

    p: float
    what: str                   #: the test in words, e.g. "case3 - case1 > 0: Welch t = 3.1, dof 3.8"
    power: float | None = None  #: power at the stated effect and level (None: not computed)
    effect: float | None = None


def power(effect: float, se: float, dof: float | None, alpha: float) -> float:
    """Power of the one-sided t test at level ``alpha`` against a true difference ``effect`` (> 0 in the claimed
    direction), with standard error ``se`` and ``dof`` degrees of freedom."""
    from scipy import stats  # scipy: a costly import, loaded only when a statistic is computed

    if not se > 0:
        return 1.0 if effect > 0 else 0.0
    crit = t_quantile(1 - alpha, dof)
    nc = effect / se
    if dof is None:
        return float(stats.norm.sf(crit - nc))
    return float(stats.nct.sf(crit, dof, nc))


def _sf(t: float, dof: float | None) -> float:
    from scipy import stats  # scipy: a costly import, loaded only when a statistic is computed

    return float(stats.norm.sf(t) if dof is None else stats.t.sf(t, dof))


def one_sided(estimate: float, se: float, dof: float | None, threshold: float, direction: str, *,
              effect: float | None = None, alpha: float = 0.05) -> Test:
    """H1: the mean is ``direction`` ('>' or '<') ``threshold``. Without spread the p-value is 0 or 1."""
    if direction not in (">", "<", ">=", "<="):
        raise ValueError("direction is '>' or '<'")
    sign = 1.0 if direction.startswith(">") else -1.0
    d = sign * (estimate - threshold)
    if not (math.isfinite(estimate) and math.isfinite(se)):
        return Test(1.0, "no finite estimate")
    if not se > 0:
        p = 0.0 if d > 0 else 1.0
        return Test(p, f"{estimate:.4g} {direction} {threshold:.4g} without sampling error", None, effect)
    t = d / se
    pw = power(effect, se, dof, alpha) if effect is not None else None
    dof_s = "normal" if dof is None else f"dof {dof:.3g}"
    return Test(_sf(t, dof), f"{estimate:.4g} {direction} {threshold:.4g}: t = {t:.2f} ({dof_s})", pw, effect)


def difference(a: tuple[float, float, int], b: tuple[float, float, int], direction: str, *,
               effect: float | None = None, alpha: float = 0.05, names: tuple[str, str] = ("a", "b")) -> Test:
    """H1: mean ``a`` is ``direction`` ('>' or '<') mean ``b``; each given as (mean, standard error, n)."""
    w = welch(a[0], a[1], a[2], b[0], b[1], b[2])
    sign = 1.0 if direction.startswith(">") else -1.0
    p = w.p_value("greater" if sign > 0 else "less")
    pw = power(effect, w.se, w.dof, alpha) if effect is not None else None
    t = w.diff / w.se if w.se > 0 else math.copysign(math.inf, w.diff) if w.diff else 0.0
    return Test(p, f"{names[0]} {direction} {names[1]}: Welch t = {t:.2f}, dof {w.dof:.3g}", pw, effect)


def variance_ratio(a: tuple[float, int], b: tuple[float, int], direction: str, *, effect: float | None = None,
                   alpha: float = 0.05, names: tuple[str, str] = ("a", "b")) -> Test:
    """H1: the variance of ``a`` is ``direction`` ('>' or '<') the variance of ``b``; each given as (sample variance,
    n). The one-sided F test: F = s_a^2 / s_b^2 on (n_a - 1, n_b - 1) degrees of freedom under normal samples.
    ``effect`` is the true variance ratio (> 1, in the claimed direction) the power refers to: the power is
    P(F > F_crit / effect) ('>'; the mirror image for '<')."""
    from scipy import stats  # scipy: a costly import, loaded only when a statistic is computed

    (va, na), (vb, nb) = a, b
    if direction not in (">", "<"):
        raise ValueError("direction is '>' or '<'")
    if na < 2 or nb < 2 or not (math.isfinite(va) and math.isfinite(vb)):
        return Test(1.0, "no sample variance (fewer than two replications)")
    d1, d2 = na - 1, nb - 1
    if not vb > 0:
        p = 0.0 if (direction == ">" and va > 0) else 1.0
        return Test(p, f"var {names[0]} {direction} var {names[1]} = 0 without sampling error", None, effect)
    f = va / vb
    p = float(stats.f.sf(f, d1, d2) if direction == ">" else stats.f.cdf(f, d1, d2))
    pw = None
    if effect is not None and effect > 0:
        if direction == ">":
            pw = float(stats.f.sf(stats.f.isf(alpha, d1, d2) / effect, d1, d2))
        else:
            pw = float(stats.f.cdf(stats.f.ppf(alpha, d1, d2) * effect, d1, d2))
    return Test(p, f"var {names[0]} {direction} var {names[1]}: F = {f:.3g} on ({d1}, {d2}) dof", pw, effect)


def intersection_union(tests: list[Test]) -> Test:
    """Every test must reject: p = the largest p-value; the power is at most the smallest of theirs."""
    if not tests:
        return Test(1.0, "no comparison")
    worst = max(tests, key=lambda t: t.p)
    pws = [t.power for t in tests if t.power is not None]
    return Test(worst.p, f"{len(tests)} one-sided tests, the weakest: {worst.what}", min(pws) if pws else None,
                worst.effect)


def band(estimate: float, se: float, dof: float | None, low: float, high: float, *, alpha: float = 0.05) -> Test:
    """Two one-sided tests: H1 low < mean < high; p = the larger of the two p-values."""
    lo = one_sided(estimate, se, dof, low, ">", alpha=alpha)
    hi = one_sided(estimate, se, dof, high, "<", alpha=alpha)
    return Test(max(lo.p, hi.p), f"{estimate:.4g} in [{low:.4g}, {high:.4g}]: TOST p {max(lo.p, hi.p):.3g}")


def holm(pvalues: dict[str, float], level: float) -> dict[str, tuple[float, bool]]:
    """Holm-Bonferroni: id -> (adjusted p-value, rejected at ``level``); family-wise error <= ``level``."""
    order = sorted(pvalues, key=lambda k: pvalues[k])
    m = len(order)
    out: dict[str, tuple[float, bool]] = {}
    running = 0.0
    for i, k in enumerate(order):
        running = max(running, min(1.0, (m - i) * pvalues[k]))
        out[k] = (running, running <= level)
    return out


def se_from_interval(value: float, low: float, high: float, confidence: float = 0.95,
                     dof: float | None = None) -> float:
    """The standard error behind a symmetric two-sided interval ``[low, high]`` at ``confidence``."""
    return (high - low) / 2.0 / t_quantile(0.5 + confidence / 2.0, dof)


def spearman_power(rho: float, n: int, alpha: float) -> float:
    """Power of the one-sided Spearman test at level ``alpha`` against a true rank correlation ``rho`` (> 0 in the
    claimed direction) with ``n`` points: ``Phi(atanh(rho) / sqrt(1.06 / (n - 3)) - z_(1-alpha))``."""
    from scipy import stats  # scipy: a costly import, loaded only when a statistic is computed

    if n <= 3:
        return 0.0
    return float(stats.norm.sf(stats.norm.ppf(1 - alpha) - math.atanh(min(abs(rho), 0.999999))
                               / math.sqrt(1.06 / (n - 3))))
