"""Trace statistics against models and bounds: estimates with batch-means intervals, KS tests, verdicts.

A trace (the schema of :mod:`qosbound.validation.trace`) is reduced to the
metrics the models produce, by name (``<class>.delay.mean``, ``.pNN``,
``.ccdf@<time>``, ``.max``, ``<class>.delay.<colour>`` (mean delay of one
colour), ``<class>.loss``, ``<class>.drop``, ``<class>.drop.<colour>``,
``<flow>.throughput`` (delivered bit/s; ``.rate`` names a configured or
model rate, not a trace statistic); a colour is ``AF12``-style or
green/yellow/red, and any other precedence name ``P`` of ``<class>.drop.P``
selects the rows whose flow is ``<class>.P`` (a port's traces name their flows
so)), so the same code serves every system. The ``<class>`` prefix
selects the rows whose ``cls`` (or else ``flow``) equals it.

Intervals: packets of a trace are correlated in time, so the packets of the
selection (in arrival order) are cut into ``batches`` contiguous batches; the
point estimate is the statistic of the whole selection and its standard error
is the spread of the per-batch statistics over sqrt(batches) (batch means,
Law & Kelton §9.5.3). The interval is Student's t with batches-1 degrees of
freedom at the requested confidence (a confidence interval carrying its
standard error and degrees of freedom); a proportion's standard error is never
below the binomial one. The largest delay a trace shows is a lower bound on the
true maximum.

These estimates are judged against the models by the one agreement rule of
:mod:`qosbound.agreement` (:func:`qosbound.trace_verdicts.compare`): no tolerance
is decided here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from qosbound.errors import TraceError
from qosbound.metric_names import parse_quantile_name
from qosbound.results import Interval, Result
from qosbound.units import parse_quantity
from qosbound.validation.stats import proportion_se, two_sided_t

__all__ = ["TraceArrays", "arrays", "trace_results", "trace_metric", "ks_test", "ccdf", "delays", "bounded_by"]


@dataclass
class TraceArrays:
    """A trace as numpy arrays (strings as numpy object arrays)."""

    flow: np.ndarray
    cls: np.ndarray
    colour: np.ndarray
    size: np.ndarray
    arrival: np.ndarray
    departure: np.ndarray  # NaN when dropped
    dropped: np.ndarray
    in_flight: int = 0  # packets still in the device at the end of the trace (not counted)

    def __len__(self) -> int:
        return int(self.arrival.shape[0])


def arrays(table, warmup: float = 0.0) -> TraceArrays:
    """Columns of a trace table, sorted by arrival; the first ``warmup`` fraction of packets is skipped.

    A packet neither dropped nor departed was still in the device when the trace
    ended; it is left out of every statistic and counted in ``in_flight``.
    """
    if table.num_rows == 0:
        raise TraceError("the trace holds no packets")
    arr = table.column("arrival").to_numpy()
    order = np.argsort(arr, kind="stable")
    start = int(len(order) * warmup)
    order = order[start:]
    dep = table.column("departure").to_numpy(zero_copy_only=False).astype(float)[order]
    dropped = table.column("dropped").to_numpy(zero_copy_only=False)[order]
    # packets neither dropped nor departed were still inside the device when the trace ended: left out
    keep = dropped | np.isfinite(dep)
    order = order[keep]
    return TraceArrays(
        flow=np.asarray(table.column("flow").to_numpy(zero_copy_only=False))[order],
        cls=np.asarray(table.column("cls").to_numpy(zero_copy_only=False))[order],
        colour=table.column("colour").to_numpy()[order],
        size=table.column("size").to_numpy()[order],
        arrival=arr[order], departure=dep[keep], dropped=dropped[keep], in_flight=int((~keep).sum()))


def _select(t: TraceArrays, prefix: str) -> np.ndarray:
    sel = t.cls == prefix
    if not sel.any():
        sel = t.flow == prefix
    return sel


def _parse(metric: str):
    """metric -> (prefix, kind, arg): kinds 'delay' (arg = statistic), 'loss', 'drop' (arg = colour), 'rate'."""
    parts = metric.split(".")
    if len(parts) >= 3 and parts[1] == "delay":
        stat = ".".join(parts[2:])
        if stat in ("mean", "max"):
            return parts[0], "delay", (stat, None, None)
        q = parse_quantile_name(stat)
        if q is not None:
            return parts[0], "delay", ("quantile", q, None)
        if stat.startswith("ccdf@"):
            try:
                return parts[0], "delay", ("ccdf", parse_quantity(stat[5:], "time"), None)
            except Exception:
                return None
        col = colour_index(parts[0], stat)  # AF1.delay.AF12: mean delay of one colour
        if col is not None and col >= 0:
            return parts[0], "delay", ("mean", None, col)
        return None
    if len(parts) == 2 and parts[1] in ("loss", "drop"):
        return parts[0], "drop", None
    if len(parts) == 3 and parts[1] == "drop":
        col = colour_index(parts[0], parts[2])
        # a precedence named otherwise (a port's DSCP: critical.drop.AF31) selects the rows of flow 'X.<name>'
        return (parts[0], "drop", col if col is not None else f"{parts[0]}.{parts[2]}")
    if len(parts) == 2 and parts[1] == "throughput":
        return parts[0], "rate", None
    return None


def colour_index(prefix: str, name: str) -> int | None:
    names = {"green": 0, "yellow": 1, "red": 2, "all": None}
    if name in names:
        return names[name] if name != "all" else -1
    if name.startswith(prefix) and name[len(prefix):].isdigit():  # AF1.drop.AF13 -> colour 2
        return int(name[len(prefix):]) - 1
    return None


def _stat(kind, arg, d):
    if kind == "mean":
        return float(np.mean(d))
    if kind == "max":
        return float(np.max(d))
    if kind == "quantile":
        return float(np.quantile(d, arg))
    if kind == "ccdf":
        return float(np.mean(d > arg))
    raise TraceError(f"unknown trace statistic {kind!r}")  # pragma: no cover - _parse names every kind


def _batch(values_fn, n: int, batches: int):
    """Per-batch statistics of contiguous slices of n items."""
    edges = np.linspace(0, n, batches + 1).astype(int)
    return np.array([values_fn(edges[i], edges[i + 1]) for i in range(batches)])


def trace_metric(t: TraceArrays, metric: str, method: str, *, batches: int = 20, confidence: float = 0.95,
                 source: str = "") -> Result | None:
    """One metric from a trace with a batch-means interval; None when the trace cannot give it."""
    parsed = _parse(metric)
    if parsed is None:
        return None
    prefix, kind, arg = parsed
    sel = _select(t, prefix)
    if not sel.any():
        return None
    tq = two_sided_t(confidence, batches - 1)
    prov = {"source": source or f"{method} trace", "replications": batches, "batches": batches,
            "estimator": "batch means"}
    if kind == "delay":
        stat, a, col = arg
        ok = sel & ~t.dropped
        if col is not None:
            ok &= t.colour == col
        d = t.departure[ok] - t.arrival[ok]
        if len(d) < 2 * batches:
            return None
        value = _stat(stat, a, d)
        per = _batch(lambda i, j: _stat(stat, a, d[i:j]), len(d), batches)
        unit = "1" if stat == "ccdf" else "s"
        prov.update(packets=int(len(d)), statistic=stat)
        if stat == "max":
            return Result(metric, method, value, unit,
                          Interval.lower_bound(value, note=f"the largest of {len(d)} delays in the trace: the true "
                                                           "maximum is at least this"), prov)
    elif kind == "drop":
        if isinstance(arg, str):
            s2 = sel & (t.flow == arg)
        else:
            s2 = sel if arg in (None, -1) else sel & (t.colour == arg)
        x = t.dropped[s2].astype(float)
        if len(x) < 2 * batches:
            return None
        value = float(x.mean())
        per = _batch(lambda i, j: x[i:j].mean(), len(x), batches)
        unit = "1"
        prov.update(packets=int(len(x)), dropped=int(x.sum()))
    else:  # rate: bits delivered over the span of the selection's arrivals
        ok = sel & ~t.dropped
        arr = t.arrival[sel]
        span = float(arr.max() - arr.min())
        if span <= 0 or ok.sum() < 2 * batches:
            return None
        bits = t.size[ok].astype(float) * 8.0
        tt = t.departure[ok]
        value = float(bits.sum() / span)
        edges = np.linspace(arr.min(), arr.max(), batches + 1)
        per = np.array([bits[(tt >= edges[i]) & (tt < edges[i + 1])].sum() / (edges[i + 1] - edges[i])
                        for i in range(batches)])
        unit = "bit/s"
        prov.update(packets=int(ok.sum()))
    se = float(np.std(per, ddof=1) / math.sqrt(batches))
    if unit == "1":
        # a proportion: never claim more precision than binomial sampling gives (zero events seen included)
        n = prov["packets"]
        se = max(se, proportion_se(int(round(value * n)), n))
    prov["std_error"] = se
    half = tq * se
    lo, hi = value - half, value + half
    if unit == "1":
        lo, hi = max(lo, 0.0), min(hi, 1.0)
    return Result(metric, method, value, unit,
                  Interval.ci(lo, hi, confidence, se=se, dof=batches - 1,
                              note=f"batch means over {batches} batches"), prov)


def trace_results(table_or_arrays, metrics: list[str], method: str = "trace", *, batches: int = 20,
                  confidence: float = 0.95, warmup: float = 0.0, source: str = "") -> list[Result]:
    """Every metric of ``metrics`` the trace can estimate (others are left out)."""
    t = table_or_arrays if isinstance(table_or_arrays, TraceArrays) else arrays(table_or_arrays, warmup)
    out = []
    for m in metrics:
        r = trace_metric(t, m, method, batches=batches, confidence=confidence, source=source)
        if r is not None:
            out.append(r)
    return out


def delays(t: TraceArrays, prefix: str) -> np.ndarray:
    """One-way delays (s) of the delivered packets of a class or flow, in arrival order."""
    sel = _select(t, prefix) & ~t.dropped
    return t.departure[sel] - t.arrival[sel]


def ks_test(a: np.ndarray, b: np.ndarray, *, thin: int = 1):
    """Two-sample Kolmogorov-Smirnov test on every ``thin``-th sample of each (thinning weakens correlation)."""
    from scipy import stats

    return stats.ks_2samp(np.asarray(a)[::thin], np.asarray(b)[::thin])


def ccdf(d: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Empirical P(delay > x) at each grid point."""
    s = np.sort(d)
    return 1.0 - np.searchsorted(s, grid, side="right") / max(len(s), 1)


def bounded_by(metric: str, reference: list[Result]) -> list[Result]:
    """The reference results that bound ``metric`` (upper or lower bounds naming it)."""
    return [r for r in reference if r.bounds_metric(metric)]
