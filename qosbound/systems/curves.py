"""Whole delay distributions as :class:`~qosbound.results.Curve` objects, for the reports to draw.

A method that computes a delay distribution (the model's stationary delay law, the ring chain's lattice, the
simulator's histograms) reads its metrics from it; the functions here turn the same distribution into the
CCDF ``P(delay > x)`` on a grid of ``x``, with the method's kind, so a report can draw the curve behind the
numbers. Each curve stops one point after the last value above :data:`TAIL_FLOOR` (a log axis shows nothing
below it) and keeps at most ``max_points`` points.
"""

from __future__ import annotations

import math

import numpy as np

from qosbound.results import Curve, Kind
from qosbound.validation.stats import proportion_interval, two_sided_t

__all__ = ["TAIL_FLOOR", "thin", "histogram_ccdf", "lattice_ccdf", "function_ccdf"]

#: CCDF values below this are not drawn (a plot's log axis stops far above it).
TAIL_FLOOR = 1e-12


def thin(n: int, max_points: int) -> np.ndarray:
    """At most ``max_points`` indices of ``range(n)``, evenly spread, the first and the last always kept."""
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, max_points)).astype(int))


def _tail_end(values: np.ndarray) -> int:
    """The number of points to keep: up to the first value at or below :data:`TAIL_FLOOR` after the last one
    above it."""
    above = np.nonzero(values > TAIL_FLOOR)[0]
    return len(values) if not len(above) else min(int(above[-1]) + 2, len(values))


def histogram_ccdf(metric: str, counts, width: float, confidence: float, *, low: float = 0.0,
                   max_points: int = 200, note: str = "") -> Curve | None:
    """The simulated CCDF from per-replication delay histograms ``counts`` (replications x bins, bin ``k``
    covering ``[low + k width, low + (k+1) width)``): at each bin's right edge ``x``, the mean over the
    replications of the fraction of delays at or above ``x`` (``P(D > x)`` but for delays exactly on the edge),
    with the Student-t interval over the replications widened to the pooled Clopper-Pearson interval, as the
    simulated ``ccdf@`` metrics have it (pointwise intervals at ``confidence``). None with fewer than two
    replications or a replication without delays."""
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 2 or c.shape[0] < 2 or c.shape[1] < 1:
        return None
    n = c.sum(axis=1)
    if not np.all(n > 0):
        return None
    R = c.shape[0]
    tail = n[:, None] - np.cumsum(c, axis=1)  # delays in the bins after bin k: at or above its right edge
    frac = tail / n[:, None]
    keep = _tail_end(tail.sum(axis=0) / n.sum())
    idx = thin(keep, max_points)
    f = frac[:, idx]
    mean = f.mean(axis=0)
    se = f.std(axis=0, ddof=1) / math.sqrt(R)
    t = two_sided_t(confidence, R - 1)
    N = int(n.sum())
    pooled = tail.sum(axis=0)[idx]
    cp = [proportion_interval(int(k), N, confidence) for k in pooled]
    lo = np.clip(np.minimum(mean - t * se, [a for a, _ in cp]), 0.0, 1.0)
    hi = np.clip(np.maximum(mean + t * se, [b for _, b in cp]), 0.0, 1.0)
    x = low + width * (idx + 1)
    return Curve(metric, "simulated", "s", "1", Kind.CI, tuple(x), tuple(mean), tuple(np.minimum(lo, mean)),
                 tuple(np.maximum(hi, mean)), level=confidence,
                 note=note or (f"fraction of delays at or above each edge of {width:.3g} s histogram bins, mean of "
                               f"{R} replications; Student t widened to the pooled Clopper-Pearson interval"))


def lattice_ccdf(metric: str, method: str, grid, step: float, kind: Kind, *, neglects: str | None = None,
                 max_points: int = 300, note: str = "") -> Curve:
    """A CCDF known on a lattice, ``grid[i] = P(D > i step)``."""
    g = np.asarray(grid, dtype=np.float64)
    idx = thin(_tail_end(g), max_points)
    return Curve(metric, method, "s", "1", kind, tuple(idx * step), tuple(np.clip(g[idx], 0.0, 1.0)),
                 neglects=neglects, note=note)


def function_ccdf(metric: str, method: str, ccdf, top: float, kind: Kind, *, brackets=None, points: int = 90,
                  coarse_points: int = 61, neglects: str | None = None, note: str = "") -> Curve:
    """A CCDF given as a function ``ccdf(t)`` on ``[0, top]``: evaluated on a coarse grid to find where its tail
    falls below :data:`TAIL_FLOOR`, then on ``points`` evenly spaced delays up to there (151 evaluations in all,
    a few percent of a model's solve: every run pays it, a page or not). ``brackets(ts)``, when
    given, returns the (low, high) interval of each value (a numerical solve's error bound); with
    ``kind`` upper bound the values are the brackets' upper ends; an approximation says what it ``neglects``."""
    coarse = np.linspace(0.0, top, coarse_points)
    vals = np.array([ccdf(t) for t in coarse])
    end = coarse[min(_tail_end(vals), len(coarse) - 1)]
    ts = np.linspace(0.0, end if end > 0 else top, points)
    v = np.clip([ccdf(t) for t in ts], 0.0, 1.0)
    lo = hi = None
    if brackets is not None:
        b = brackets(list(ts))
        lo = np.minimum([x for x, _ in b], v)
        hi = np.maximum([y for _, y in b], v)
        if kind is Kind.UPPER_BOUND:
            v, lo, hi = hi, None, None
    return Curve(metric, method, "s", "1", kind, tuple(ts), tuple(v), None if lo is None else tuple(lo),
                 None if hi is None else tuple(hi), neglects=neglects, note=note)
