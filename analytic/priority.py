"""Mean waiting times of an M/G/1 queue with N non-preemptive priority classes (Cobham's formula).

Source: D. Bertsekas, R. Gallager, *Data Networks*, 2nd ed., Prentice Hall
1992, section 3.5.3 ("Priority queueing", non-preemptive priority): the mean
time class ``k`` waits in queue (service excluded) is

    W_k = R / ((1 - sigma_{k-1}) (1 - sigma_k)),   R = sum_i lambda_i E[S_i^2] / 2,
    sigma_k = sum_{i <= k} rho_i,  rho_i = lambda_i E[S_i],

class 1 being the highest priority. With one class this is the
Pollaczek-Khinchine formula ``W = lambda E[S^2] / (2 (1 - rho))`` (section 3.3.1),
which is defined here separately so the two can be checked against each other.

A *saturated* lowest class (best effort that always has a packet, the worst
case of Ferrari et al. 2001) keeps the server busy: its rate is the limit
``lambda_N = (1 - sigma_{N-1}) / E[S_N]`` and the residual becomes
``R = sum_{i<N} lambda_i E[S_i^2]/2 + (1 - sigma_{N-1}) E[S_N^2] / (2 E[S_N])``;
the waits of classes ``1..N-1`` keep Cobham's form (they do not involve
``sigma_N``).

Each expression is built once in SymPy and turned into a vectorised NumPy
function by ``sympy.lambdify``; arguments broadcast. Units: rates in 1/s,
moments in s and s^2, waits in s.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from qosbound.errors import ScenarioError

__all__ = [
    "class_symbols", "residual_expr", "cobham_exprs", "saturated_cobham_exprs", "pk_expr",
    "cobham_wait", "cobham_wait_saturated", "pk_wait",
]


@lru_cache(maxsize=None)
def class_symbols(n: int) -> tuple[tuple[sp.Symbol, ...], tuple[sp.Symbol, ...], tuple[sp.Symbol, ...]]:
    """Arrival rates ``lambda_i``, first moments ``m1_i = E[S_i]`` and second moments ``m2_i = E[S_i^2]``."""
    if n < 1:
        raise ScenarioError("at least one class is needed", field="lam")
    lam = sp.symbols(f"lambda_1:{n + 1}", positive=True)
    m1 = sp.symbols(f"m1_1:{n + 1}", positive=True)
    m2 = sp.symbols(f"m2_1:{n + 1}", positive=True)
    return lam, m1, m2


@lru_cache(maxsize=None)
def residual_expr(n: int) -> sp.Expr:
    """Mean residual service time ``R = sum_i lambda_i E[S_i^2] / 2`` (Bertsekas & Gallager eq. 3.80)."""
    lam, _, m2 = class_symbols(n)
    return sum(lam[i] * m2[i] for i in range(n)) / 2


@lru_cache(maxsize=None)
def cobham_exprs(n: int) -> tuple[sp.Expr, ...]:
    """Cobham's ``W_k = R / ((1 - sigma_{k-1})(1 - sigma_k))`` for k = 1..n (Bertsekas & Gallager sec. 3.5.3)."""
    lam, m1, _ = class_symbols(n)
    R = residual_expr(n)
    sigma = [sp.Integer(0)]
    for i in range(n):
        sigma.append(sigma[-1] + lam[i] * m1[i])
    return tuple(R / ((1 - sigma[j - 1]) * (1 - sigma[j])) for j in range(1, n + 1))


@lru_cache(maxsize=None)
def saturated_cobham_exprs(n: int) -> tuple[sp.Expr, ...]:
    """Cobham's waits of classes 1..n-1 when class n is saturated: ``lambda_n = (1 - sigma_{n-1}) / E[S_n]``."""
    if n < 2:
        raise ScenarioError("a saturated class needs at least one class above it", field="lam")
    lam, m1, _ = class_symbols(n)
    sat = (1 - sum(lam[i] * m1[i] for i in range(n - 1))) / m1[n - 1]
    return tuple(sp.simplify(w.subs(lam[n - 1], sat)) for w in cobham_exprs(n)[:-1])


lam_s, m1_s, m2_s = sp.symbols("lambda m1 m2", positive=True)
#: Pollaczek-Khinchine mean wait in queue of an M/G/1 queue (Bertsekas & Gallager eq. 3.45).
pk_expr = lam_s * m2_s / (2 * (1 - lam_s * m1_s))


@lru_cache(maxsize=None)
def _cobham_fn(n: int):
    lam, m1, m2 = class_symbols(n)
    return sp.lambdify((*lam, *m1, *m2), list(cobham_exprs(n)), "numpy")


@lru_cache(maxsize=None)
def _saturated_fn(n: int):
    lam, m1, m2 = class_symbols(n)
    return sp.lambdify((*lam[:-1], *m1, *m2), list(saturated_cobham_exprs(n)), "numpy")


@lru_cache(maxsize=1)
def _pk_fn():
    return sp.lambdify((lam_s, m1_s, m2_s), pk_expr, "numpy")


def _positive(values, name: str) -> list[np.ndarray]:
    out = []
    for i, v in enumerate(values):
        a = np.asarray(v, dtype=float)
        if not np.all(np.isfinite(a)) or np.any(a <= 0):
            raise ScenarioError("must be positive and finite", field=f"{name}[{i}]")
        out.append(a)
    return out


def _moments(m1, m2) -> tuple[list[np.ndarray], list[np.ndarray]]:
    a1, a2 = _positive(m1, "m1"), _positive(m2, "m2")
    for i, (x, y) in enumerate(zip(a1, a2)):
        if np.any(y < x * x * (1 - 1e-12)):
            raise ScenarioError("second moment below the squared mean (variance < 0)", field=f"m2[{i}]")
    return a1, a2


def _stack(ws) -> np.ndarray:
    return np.stack(np.broadcast_arrays(*[np.asarray(w, dtype=float) for w in ws]))


def cobham_wait(lam, m1, m2) -> np.ndarray:
    """Mean wait in queue of each class, shape ``(N, *broadcast shape)``; class 0 has the highest priority.

    ``lam``, ``m1``, ``m2`` are sequences of N per-class rates (1/s), mean service
    times (s) and second moments (s^2), each a scalar or an array.
    """
    n = len(lam)
    if not (len(m1) == len(m2) == n):
        raise ScenarioError("lam, m1 and m2 need one entry per class", field="lam")
    la = _positive(lam, "lam")
    a1, a2 = _moments(m1, m2)
    sigma = sum(la[i] * a1[i] for i in range(n))
    if np.any(sigma >= 1):
        raise ScenarioError(f"total utilisation {np.max(sigma):.4g} >= 1: the queue is unstable", field="lam")
    return _stack(_cobham_fn(n)(*la, *a1, *a2))


def cobham_wait_saturated(lam, m1, m2, m1_sat, m2_sat) -> np.ndarray:
    """Mean waits of N-1 classes above a saturated lowest class, shape ``(N-1, *broadcast shape)``.

    ``lam``, ``m1``, ``m2`` describe the N-1 upper classes; ``m1_sat``, ``m2_sat``
    the service-time moments of the saturated class (its rate fills the line).
    """
    n = len(lam) + 1
    if not (len(m1) == len(m2) == n - 1):
        raise ScenarioError("lam, m1 and m2 need one entry per non-saturated class", field="lam")
    la = _positive(lam, "lam")
    a1, a2 = _moments(list(m1) + [m1_sat], list(m2) + [m2_sat])
    sigma = sum(la[i] * a1[i] for i in range(n - 1))
    if np.any(sigma >= 1):
        raise ScenarioError(f"utilisation of the upper classes {np.max(sigma):.4g} >= 1: unstable", field="lam")
    return _stack(_saturated_fn(n)(*la, *a1, *a2))


def pk_wait(lam, m1, m2):
    """Pollaczek-Khinchine mean wait in queue of an M/G/1 queue, s (arrays broadcast)."""
    la, = _positive([lam], "lam")
    a1, a2 = _moments([m1], [m2])
    if np.any(la * a1[0] >= 1):
        raise ScenarioError("utilisation >= 1: the queue is unstable", field="lam")
    v = np.asarray(_pk_fn()(la, a1[0], a2[0]), dtype=float)
    return float(v) if v.ndim == 0 else v
