"""Worst-case average EF delay through a priority queue + transmission queue (Ferrari, Pau & Raffaelli 2001).

Source: T. Ferrari, G. Pau, C. Raffaelli, "Measurement Based Analysis of Delay
in Priority Queueing", IEEE GLOBECOM 2001, vol. 3, section VI, eqs. (2)-(7),
Table IV; the aggregation degree is eq. (1) of section V.

Each formula is defined once below as a SymPy expression over symbols with
assumptions; the numeric functions are derived from it by ``sympy.lambdify``
and broadcast over NumPy arrays.

Symbols (SI units):

* ``k``    -- transmission units a best-effort packet needs (``ceil(size/unit)``), count
* ``rho``  -- EF utilisation of the line, ``lambda * L_EF * 8 / C``, dimensionless, ``0 <= rho < 1``
* ``Q_t``  -- transmission-queue threshold, units
* ``T_u``  -- time to transmit one unit at line rate, ``8 * unit / C``, s

Reading of the paper: the text gives eq. (7) as ``W = (k/(1-rho) + Q_t + k - 1) T_u``
and Table IV reproduces it with ``rho = 0.15`` and ``T_u = 2048 us`` to 0.01 us.
Eq. (5) takes the *maximum* residual service time ``k T_u`` where Cobham's
formula (eq. 3) has the mean one, so ``W_pq`` is a worst case of a mean, not a
bound on any single delay; eq. (6) bounds the transmission-queue content by
``Q_t`` units plus the ``k - 1`` overflow units of the last admitted packet.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from qosbound.errors import ScenarioError

__all__ = [
    "k", "rho", "Q_t", "T_u", "l_max", "L_BA",
    "W_pq_expr", "Q_e_expr", "W_t_expr", "W_expr", "A_expr", "eq7_text",
    "w_pq", "w_t", "w", "aggregation_degree",
]

k = sp.Symbol("k", positive=True, integer=True)
rho = sp.Symbol("rho", nonnegative=True, real=True)
Q_t = sp.Symbol("Q_t", positive=True, integer=True)
T_u = sp.Symbol("T_u", positive=True, real=True)
l_max = sp.Symbol("l_max", nonnegative=True, real=True)
L_BA = sp.Symbol("L_BA", positive=True, real=True)

#: Eq. (5): worst-case average wait in the priority queue, Cobham's ``R/(1-rho)`` (eq. 3) with ``R_max = k T_u``.
W_pq_expr = k * T_u / (1 - rho)
#: Section VI, below eq. (6): units of the last admitted packet beyond its first wait in a stand-by buffer.
Q_e_expr = k - 1
#: Eq. (6): upper bound on the transmission-queue wait, ``(Q_t + Q_e) T_u``.
W_t_expr = (Q_t + Q_e_expr) * T_u
#: Eq. (2), which with eqs. (5) and (6) is eq. (7): ``W = (k/(1-rho) + Q_t + k - 1) T_u``.
W_expr = W_pq_expr + W_t_expr
#: Eq. (1): aggregation degree of a behaviour aggregate, ``A = 1 - l_max / L_BA``.
A_expr = 1 - l_max / L_BA

eq7_text = "W = (k/(1-rho) + Q_t + k - 1) * T_u"


@lru_cache(maxsize=None)
def _fn(name: str):
    exprs = {
        "W_pq": ((k, rho, T_u), W_pq_expr),
        "W_t": ((k, Q_t, T_u), W_t_expr),
        "W": ((k, rho, Q_t, T_u), W_expr),
        "A": ((l_max, L_BA), A_expr),
    }
    args, expr = exprs[name]
    return sp.lambdify(args, expr, "numpy")


def _arr(x, name: str, *, low: float | None = None, high: float | None = None, low_open: bool = False,
         high_open: bool = False, integer: bool = False) -> np.ndarray:
    """Check one argument (scalar or array) against its domain; raise ScenarioError naming it."""
    a = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(a)):
        raise ScenarioError("must be finite", field=name)
    if low is not None and (np.any(a <= low) if low_open else np.any(a < low)):
        raise ScenarioError(f"must be {'>' if low_open else '>='} {low:g}, got {a.min():g}", field=name)
    if high is not None and (np.any(a >= high) if high_open else np.any(a > high)):
        what = "the queue is unstable" if name == "rho" else "out of range"
        raise ScenarioError(f"must be {'<' if high_open else '<='} {high:g} ({what}), got {a.max():g}", field=name)
    if integer and np.any(a != np.round(a)):
        raise ScenarioError("must be an integer", field=name)
    return a


def _out(v):
    v = np.asarray(v, dtype=float)
    return float(v) if v.ndim == 0 else v


def w_pq(k, rho, T_u):
    """Eq. (5): worst-case average EF wait in the priority queue, s (arrays broadcast)."""
    return _out(_fn("W_pq")(_arr(k, "k", low=1, integer=True), _arr(rho, "rho", low=0, high=1, high_open=True),
                            _arr(T_u, "T_u", low=0, low_open=True)))


def w_t(k, Q_t, T_u):
    """Eq. (6): upper bound on the EF wait in the transmission queue, s (arrays broadcast)."""
    return _out(_fn("W_t")(_arr(k, "k", low=1, integer=True), _arr(Q_t, "Q_t", low=1, integer=True),
                           _arr(T_u, "T_u", low=0, low_open=True)))


def w(k, rho, Q_t, T_u):
    """Eq. (7): worst-case average EF delay ``W = W_pq + W_t``, s (arrays broadcast)."""
    return _out(_fn("W")(_arr(k, "k", low=1, integer=True), _arr(rho, "rho", low=0, high=1, high_open=True),
                         _arr(Q_t, "Q_t", low=1, integer=True), _arr(T_u, "T_u", low=0, low_open=True)))


def aggregation_degree(l_max, L_BA):
    """Eq. (1): aggregation degree ``A = 1 - l_max/L_BA`` in [0, 1) for ``0 < l_max <= L_BA``."""
    lm = _arr(l_max, "l_max", low=0, low_open=True)
    lb = _arr(L_BA, "L_BA", low=0, low_open=True)
    if np.any(lm > lb):
        raise ScenarioError("a micro-flow's load cannot exceed the aggregate's load", field="l_max")
    return _out(_fn("A")(lm, lb))
