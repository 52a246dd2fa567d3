"""Worst-case (maximum) EF delay through a strict priority queue + unit-allocated transmission queue.

The system is the one of :mod:`qosbound.systems.pq_txq` (Ferrari, Pau & Raffaelli
2001, section II): a packet of ``L`` bytes occupies ``ceil(L/unit)`` units of the
transmission queue (TxQ); whenever fewer than ``Q_t`` units are occupied the
scheduler moves one packet into the TxQ, the head EF packet if one waits in the
priority queue (PQ), else a best-effort (BE) one; all units of a packet are
released when its last bit leaves the wire; the TxQ is FIFO at line rate ``C``;
the PQ holds at most ``pq_cap`` EF packets. The EF aggregate is constrained by
a token bucket of depth ``sigma`` bytes and rate ``r < C`` bit/s.

Derivation (the bound holds for every EF packet that is not lost, whatever BE does)
-----------------------------------------------------------------------------------

1. *TxQ work.* Take any instant and the last packet admitted before it, of
   ``L <= L_max`` bytes. Just before its admission fewer than ``Q_t`` units were
   occupied, i.e. the packets then present held at most ``Q_t - 1`` units. A
   packet of ``j`` units has at most ``j * phi * unit`` bytes left to send, where
   ``phi <= 1`` is the largest fill fraction ``L_i / (ceil(L_i/unit) * unit)``
   over the packet sizes that can occur (``phi = 1`` when some size fills its
   units exactly). Work only drains until the next admission, so at any instant
   the TxQ holds at most ``V = (Q_t - 1) * phi * 8 * unit / C + 8 * L_max / C``
   seconds of work.
2. *Delay identity.* Let a tagged EF packet arrive at ``t``. From ``t`` until it
   is admitted at ``tau`` the PQ is non-empty, so no BE packet enters the TxQ;
   the line is never idle on ``[t, d]`` (an empty TxQ with a waiting EF packet
   would admit it at once); the TxQ is FIFO. Hence its departure time is
   ``d = t + W(t-) + 8 * B(t) / C`` where ``W(t-)`` is the TxQ work at ``t`` and
   ``B(t)`` the EF bytes in the PQ just after the arrival, the tagged packet
   included.
3. *PQ content.* ``B(t) <= pq_cap * L_EF`` since the PQ holds at most ``pq_cap``
   packets. With the token bucket: let ``s <= t`` be the start of the PQ backlog
   period containing ``t`` (the last arrival to an empty PQ). On ``[s, d]`` the
   line is busy and only EF enters the TxQ, so
   ``d - s = W(s-) + 8 * A(s, t) / C`` with ``A(s, t) <= sigma + r (t - s) / 8``
   the EF bytes that arrived in ``[s, t]``; thus
   ``D = d - t <= V + 8 sigma / C + (r / C - 1) (t - s) <= V + 8 sigma / C``
   because ``r < C``.
4. Together: ``D <= (Q_t - 1) phi T_u + 8 L_max / C + 8 min(sigma, pq_cap L_EF) / C``
   with ``T_u = 8 unit / C``.

The bound is tight (a supremum) when some packet size fills its units exactly
(``phi = 1``): the TxQ holds ``Q_t - 1`` full units when a departure lets the
largest packet in, and a burst of ``min(sigma, pq_cap L_EF)`` EF bytes arrives at
that instant; the last packet of the burst waits exactly ``D``.

For CBR EF (one packet per ``8 L_EF / r`` seconds, i.e. ``sigma = L_EF``):
``D <= (Q_t - 1) phi T_u + 8 (L_max + L_EF) / C``. For Poisson EF no token bucket
holds, but the PQ-capacity branch of step 3 still bounds every accepted packet:
``D <= (Q_t - 1) phi T_u + 8 L_max / C + 8 pq_cap L_EF / C``.

Compared with Ferrari's eq. (7), ``W = (k/(1-rho) + Q_t + k - 1) T_u`` (a worst
case of the *mean*): with ``phi = 1`` and ``L_max = k unit``,
``bound - W = 8 min(sigma, pq_cap L_EF) / C - k T_u / (1 - rho)``, so the maximum
bound is below eq. (7) whenever the EF burst is shorter than ``k T_u / (1 - rho)``
(for the paper's set-up, K = 3 and a 10-packet PQ: 19456 us against 21564.23 us).
Eq. (7) therefore does not bound the maximum, and it is not always above this
bound either; both bound the true mean.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from qosbound.errors import ScenarioError

__all__ = [
    "Q_t", "unit", "C", "phi", "L_max", "L_ef", "sigma", "pq_cap", "r", "x",
    "txq_work_expr", "delay_at_expr", "bound_expr", "cbr_bound_expr", "bound_text",
    "txq_work", "ef_delay_bound", "cbr_delay_bound", "fill_fraction",
]

Q_t = sp.Symbol("Q_t", positive=True, integer=True)  # units
unit = sp.Symbol("unit", positive=True)  # bytes
C = sp.Symbol("C", positive=True)  # bit/s
phi = sp.Symbol("phi", positive=True)  # 1, largest fill fraction of an occupied unit, <= 1
L_max = sp.Symbol("L_max", positive=True)  # bytes, largest packet (BE or EF)
L_ef = sp.Symbol("L_EF", positive=True)  # bytes, EF packet
sigma = sp.Symbol("sigma", positive=True)  # bytes, token-bucket depth
pq_cap = sp.Symbol("pq_cap", positive=True, integer=True)  # packets
r = sp.Symbol("r", positive=True)  # bit/s, token rate, r < C
x = sp.Symbol("x", nonnegative=True)  # s, t - s: time since the PQ backlog period began

#: Step 1: largest TxQ work at any instant, s.
txq_work_expr = (Q_t - 1) * phi * 8 * unit / C + 8 * L_max / C
#: Step 3: delay bound of a packet arriving ``x`` seconds into a PQ backlog period (token bucket), s.
delay_at_expr = txq_work_expr + 8 * sigma / C + (r / C - 1) * x
#: Step 4: the maximum EF delay bound, s.
bound_expr = txq_work_expr + 8 * sp.Min(sigma, pq_cap * L_ef) / C
#: CBR EF: ``sigma = L_EF`` (one packet; ``pq_cap >= 1`` makes the minimum ``L_EF``).
cbr_bound_expr = txq_work_expr + 8 * L_ef / C

bound_text = "D_max = (Q_t-1)*phi*T_u + 8*L_max/C + 8*min(sigma, pq_cap*L_EF)/C"


@lru_cache(maxsize=None)
def _fn(name: str):
    table = {
        "work": ((Q_t, unit, C, phi, L_max), txq_work_expr),
        "bound": ((Q_t, unit, C, phi, L_max, L_ef, sigma, pq_cap), bound_expr),
        "cbr": ((Q_t, unit, C, phi, L_max, L_ef), cbr_bound_expr),
    }
    args, expr = table[name]
    return sp.lambdify(args, expr, "numpy")


def _pos(v, name: str, integer: bool = False) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ScenarioError("must be positive and finite", field=name)
    if integer and np.any(a != np.round(a)):
        raise ScenarioError("must be an integer", field=name)
    return a


def _phi(v) -> np.ndarray:
    a = _pos(v, "phi")
    if np.any(a > 1):
        raise ScenarioError("a unit cannot be filled beyond 1", field="phi")
    return a


def _out(v):
    v = np.asarray(v, dtype=float)
    return float(v) if v.ndim == 0 else v


def fill_fraction(sizes, unit_size: float) -> float:
    """Largest ``L / (ceil(L/unit) * unit)`` over the packet sizes, the ``phi`` of the bound."""
    s = _pos(sizes, "sizes")
    u = float(_pos(unit_size, "unit"))
    units = np.ceil(s / u - 1e-12)
    return float(np.max(s / (units * u)))


def txq_work(Q_t, unit, C, L_max, phi=1.0):
    """Step 1: the most work the TxQ can hold at any instant, s (arrays broadcast)."""
    return _out(_fn("work")(_pos(Q_t, "Q_t", True), _pos(unit, "unit"), _pos(C, "C"), _phi(phi),
                            _pos(L_max, "L_max")))


def ef_delay_bound(Q_t, unit, C, L_max, L_ef, sigma, pq_cap, phi=1.0, r=None):
    """Maximum delay of an accepted EF packet (token bucket ``sigma`` bytes, PQ of ``pq_cap``), s.

    ``r`` (bit/s), when given, is checked to be below ``C``; the bound itself does
    not depend on it. Arrays broadcast.
    """
    c = _pos(C, "C")
    if r is not None and np.any(_pos(r, "r") >= c):
        raise ScenarioError("token rate must be below the line rate (the priority queue is unstable)", field="r")
    lmax, lef = _pos(L_max, "L_max"), _pos(L_ef, "L_EF")
    if np.any(lef > lmax):
        raise ScenarioError("L_max is the largest packet, EF included", field="L_max")
    return _out(_fn("bound")(_pos(Q_t, "Q_t", True), _pos(unit, "unit"), c, _phi(phi), lmax, lef,
                             _pos(sigma, "sigma"), _pos(pq_cap, "pq_cap", True)))


def cbr_delay_bound(Q_t, unit, C, L_max, L_ef, phi=1.0):
    """Maximum delay of a CBR EF packet stream (``sigma = L_EF``), s (arrays broadcast)."""
    lmax, lef = _pos(L_max, "L_max"), _pos(L_ef, "L_EF")
    if np.any(lef > lmax):
        raise ScenarioError("L_max is the largest packet, EF included", field="L_max")
    return _out(_fn("cbr")(_pos(Q_t, "Q_t", True), _pos(unit, "unit"), _pos(C, "C"), _phi(phi), lmax, lef))
