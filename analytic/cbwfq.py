"""CBWFQ bandwidth sharing among backlogged classes (Takeo & Tasaka 2003, section II.B).

Takeo & Tasaka: "the fraction of the output link capacity available to a class
is the ratio of the required minimum bandwidth of the class to the sum of the
required minimum bandwidth of the backlogged classes at the instant". With
weights ``w_i`` (the configured bandwidths) and backlog indicators ``b_i`` in {0, 1}:

    r_i = C * b_i * w_i / sum_j (b_j * w_j)

An idle class gets nothing; the shares of the backlogged classes sum to ``C``.

Service rate seen by one class's queue (a modelling choice, used by the AF
queue models): CBWFQ is work-conserving, so a backlogged class gets what
weighted max-min fair sharing (water-filling, each step the share formula
above) gives it when its own demand is unbounded and every other class offers
its configured rate. It is at least the guaranteed share ``C w_i / sum w`` and
ignores the short-term bursts of the other classes (the simulator does not).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from qosbound.errors import ScenarioError

__all__ = ["C", "share_expr", "allocate", "maxmin", "service_rates", "TAKEO_TABLE_V"]

C = sp.Symbol("C", positive=True)


@lru_cache(maxsize=None)
def share_expr(n: int):
    """Symbolic shares (r_0, ..., r_{n-1}) for n classes: C b_i w_i / sum_j b_j w_j (Takeo & Tasaka 2003, sec. II.B)."""
    w = sp.symbols(f"w0:{n}", positive=True)
    b = sp.symbols(f"b0:{n}", nonnegative=True)
    den = sum(bi * wi for bi, wi in zip(b, w))
    return w, b, tuple(C * bi * wi / den for bi, wi in zip(b, w))


@lru_cache(maxsize=None)
def _fn(n: int):
    w, b, r = share_expr(n)
    return sp.lambdify((C, *w, *b), list(r), "numpy")


def allocate(capacity: float, weights, backlogged=None) -> np.ndarray:
    """Allocated rate of each class (same unit as ``capacity``); ``backlogged`` defaults to all classes."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or len(w) == 0:
        raise ScenarioError("give at least one class weight", field="classes")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ScenarioError("class weights must be finite and non-negative", field="classes")
    b = np.ones_like(w) if backlogged is None else np.asarray(backlogged, dtype=float)
    if np.sum(w * b) <= 0:
        raise ScenarioError("the weights of the backlogged classes sum to zero", field="classes")
    if not capacity > 0:
        raise ScenarioError("link rate must be positive", field="link.rate")
    return np.asarray(_fn(len(w))(float(capacity), *w, *b), dtype=float)


#: Takeo & Tasaka (2003), Table V: which of classes 1-4 carry traffic in each case (HTML, voice, video, load).
#: Case 1 puts HTML in class 1; cases 2-6 leave class 1 idle.
TAKEO_TABLE_V = {
    1: (1, 1, 1, 1),
    2: (0, 1, 1, 1),
    3: (0, 1, 1, 1),
    4: (0, 1, 1, 1),
    5: (0, 1, 1, 1),
    6: (0, 1, 1, 1),
}



def maxmin(capacity: float, weights, demand) -> np.ndarray:
    """Weighted max-min fair allocation of ``capacity`` to offered rates ``demand`` (water-filling)."""
    w = np.asarray(weights, dtype=float)
    d = np.asarray(demand, dtype=float)
    x = np.zeros_like(d)
    active = d > 0
    left = float(capacity)
    while active.any() and left > 1e-12 * capacity:
        fair = allocate(left, np.where(active, w, 0.0) + np.where(active & (w == 0), 1e-300, 0.0))
        sat = active & (d - x <= fair + 1e-12 * capacity)
        if not sat.any():
            x = x + np.where(active, fair, 0.0)
            break
        grant = np.where(sat, d - x, 0.0)
        x = x + grant
        left -= float(grant.sum())
        active = active & ~sat
    return x


def service_rates(capacity: float, weights, demand) -> np.ndarray:
    """Service rate of each class with traffic when it is backlogged (greedy max-min); 0 for idle classes."""
    d = np.asarray(demand, dtype=float)
    out = np.zeros_like(d)
    for i in range(len(d)):
        if d[i] > 0:
            di = d.copy()
            di[i] = 2.0 * capacity
            out[i] = maxmin(capacity, weights, di)[i]
    return out
