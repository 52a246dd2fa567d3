"""What a proved bound implies about other metrics of the same delay: the rules SLO verdicts use.

A result of kind ``upper bound`` (``lower bound``) on a metric proves that the metric is at most (at least) its
value. For the statistics of one delay ``D`` (``<prefix>.max``, ``.mean``, ``.pNN``, ``.ccdf@T``, e.g.
``EF.delay.p99``) it also proves bounds on the others, by these facts (``q_p`` the p-quantile, defined as the
smallest ``t`` with ``P(D > t) <= 1 - p``; the CCDF ``t -> P(D > t)`` is non-increasing and right-continuous):

1. ``max <= M`` implies ``mean <= M``, ``q_p <= M`` for every ``p``, and ``P(D > t) = 0`` for every ``t >= M``
   (a bound that names the metrics it bounds in ``Result.bounds`` is taken at its word).
2. ``q_p <= u`` implies ``q_r <= u`` for every ``r <= p`` (quantiles increase with the level; NOT for ``r > p``:
   a bound on p99 says nothing about p99.9), and ``P(D > t) <= 1 - p`` for every ``t >= u`` (right-continuity:
   ``P(D > q_p) <= 1 - p``).
3. ``P(D > t) <= c`` implies ``P(D > s) <= c`` for every ``s >= t``, and ``q_p <= t`` for every ``p`` with
   ``1 - p >= c``.
4. ``mean <= m`` implies nothing else (a mean bounds no quantile).

A lower bound implies a lower bound only on its own metric here (a largest delay observed, a lower bound on
``max``, bounds no quantile).
"""

from __future__ import annotations

import re

from qosbound.errors import QosboundError
from qosbound.metric_names import parse_quantile_name
from qosbound.results import Kind, Result
from qosbound.units import parse_quantity

__all__ = ["split_metric", "implied_upper", "implied_lower"]

_STAT = re.compile(r"^(?P<prefix>.+)\.(?P<stat>p[0-9.]+|ccdf@.+|max|mean)$")


def split_metric(metric: str) -> tuple[str, str, float | None] | None:
    """``EF.delay.p99`` -> ('EF.delay', 'quantile', 0.99); ``.ccdf@10ms`` -> (.., 'ccdf', 0.01); ``.max`` and
    ``.mean`` -> (.., 'max' / 'mean', None); None for any other metric."""
    m = _STAT.match(metric)
    if not m:
        return None
    prefix, stat = m.group("prefix"), m.group("stat")
    if stat in ("max", "mean"):
        return prefix, stat, None
    if stat.startswith("ccdf@"):
        try:
            return prefix, "ccdf", parse_quantity(stat[5:], "time", field="metric")
        except QosboundError:
            return None
    q = parse_quantile_name(stat)
    return (prefix, "quantile", q) if q is not None else None


def implied_upper(r: Result, metric: str) -> tuple[float, str] | None:
    """(the upper bound on ``metric`` that result ``r`` proves, the rule), or None when it proves none."""
    if r.interval is None or r.interval.kind is not Kind.UPPER_BOUND:
        return None
    if r.metric == metric:
        return r.value, "its own metric"
    if r.bounds_metric(metric):
        return r.value, f"it bounds {metric} (a bound on the largest delay bounds the mean and every quantile)"
    a, b = split_metric(r.metric), split_metric(metric)
    if a is None or b is None or a[0] != b[0]:
        return None
    (_, sa, xa), (_, sb, xb) = a, b
    v = r.value
    if sa == "max":
        if sb in ("mean", "quantile"):
            return v, "the largest delay bounds the mean and every quantile"
        if sb == "ccdf" and v <= xb:
            return 0.0, "no delay exceeds the bound on the largest delay"
    if sa == "quantile":
        if sb == "quantile" and xb <= xa:
            return v, "a quantile is at most every higher quantile"
        if sb == "ccdf" and v <= xb:
            return 1.0 - xa, f"P(D > t) <= 1 - {xa:g} for every t at or above the {xa:g}-quantile"
    if sa == "ccdf":
        if sb == "ccdf" and xb >= xa:
            return v, "the CCDF does not increase"
        if sb == "quantile" and 1.0 - xb >= v:
            return xa, f"P(D > {xa:g} s) <= {v:.3g} <= 1 - {xb:g}: the {xb:g}-quantile is at most {xa:g} s"
    return None


def implied_lower(r: Result, metric: str) -> tuple[float, str] | None:
    """(the lower bound on ``metric`` that result ``r`` proves, the rule), or None."""
    if r.interval is None or r.interval.kind is not Kind.LOWER_BOUND:
        return None
    if r.metric == metric or r.bounds_metric(metric):
        return r.value, "its own metric"
    return None
