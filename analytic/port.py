"""Worst-case delays of a router output port: strict-priority levels and DRR classes above a tx-ring.

The port (semantics of :mod:`qosbound.systems.port`, the same as the simulator's). A link of rate ``C``
bit/s; a transmission ring of ``Q_t`` units of ``u`` bytes (a packet of ``L`` bytes takes ``ceil(L/u)`` units,
all freed when its last bit leaves the wire; the ring is FIFO at line rate); a port without a ring is the
ring ``Q_t = 1`` with ``u`` the largest packet (one packet, the one on the wire). Whenever fewer than ``Q_t``
units are occupied the scheduler hands the ring one packet: the head of the first non-empty strict-priority
level (FIFO by arrival within a level), else the packet the DRR scheduler of the weighted classes picks
(:mod:`qosbound.analytic.drr`). It does so at every departure and at an arrival that finds room (arrivals at
the instant of a departure come after it). Each class has a queue of at most ``Q_c`` packets.

Step 1 (ring work, Ferrari, Pau & Raffaelli's system; :func:`qosbound.analytic.ef_bound.txq_work`). At any
instant the ring holds at most ``V = (Q_t - 1) phi u + L_max`` bytes of work (``phi <= 1`` the largest fill of
a unit over the sizes that occur): just before the last admission fewer than ``Q_t`` units were occupied,
holding at most ``(Q_t - 1) phi u`` bytes, and the packet admitted has at most ``L_max``. A packet admitted at
``a`` leaves at ``a + 8 (W + L) / C`` with ``W <= (Q_t - 1) phi u`` the bytes ahead of it (no packet overtakes
it in the ring): its ring sojourn is at most ``8 (Q_t - 1) phi u / C + 8 L / C`` (:data:`ring_sojourn_expr`).

Step 2 (busy line). While some class queue holds a packet the ring holds at least ``Q_t >= 1`` units (else
the scheduler would have admitted it), so the line is busy: over such an interval ``(s, t]`` the ring admits
at least ``C (t - s) / 8 - V`` bytes (the bytes that left, less what the ring held at ``s``). As a strict
service curve for the admissions of all classes together: ``beta_0 = (C, 8 V / C)``.

Level ``k`` (Theorem, the priority bound). Let levels ``1..k-1`` have arrival curves whose sum is below the
token bucket ``(sigma_H, rho_H)`` and backlog (packets queued, not in the ring) at most ``B_H`` bytes at any
instant; let level ``k`` (its classes together) have arrival curve ``alpha_k`` and hold at most ``B_k`` bytes
(its queue limits times its largest packets); ``rho_H + rho_k < C``. Then every packet of level ``k`` leaves
within

    D_k = 8 (V + sigma_H + min(e_k, B_k + B_H)) / (C - rho_H)          (:data:`level_delay_expr`)

seconds of its arrival, ``e_k = sup_{x >= 0} (alpha_k(x) - (C - rho_H) x / 8)`` (``alpha_k(0)`` when its rate
is at most ``C - rho_H``; infinite when level ``k`` has no arrival curve).

Proof. Tag a packet of level ``k`` arriving at ``t``, admitted at ``a``, leaving at ``d``. (a) Let ``s <= t``
be the start of the busy period of levels ``1..k`` containing ``t`` (their queues were empty just before
``s``). On ``[s, a)`` some queue of levels ``1..k`` is non-empty, so every admission is of a level ``<= k``
and by step 2 the line is busy on ``[s, d]``; the ring being FIFO, ``d = s + 8 (W(s-) + A_k + A_H) / C`` (bytes) with
``W(s-) <= V``, ``A_k`` the level-``k`` bytes admitted on ``[s, a]`` -- all arrived in ``[s, t]`` (FIFO within
the level), at most ``alpha_k(t - s)`` -- and ``A_H <= sigma_H + rho_H (a - s) / 8 <= sigma_H + rho_H (d - s)
/ 8`` the higher levels' bytes admitted on ``[s, a]`` (their queues were empty at ``s-`` too). Solving for
``d - s`` and subtracting ``x = t - s``: ``d - t <= (8 (V + sigma_H + alpha_k(x)) - (C - rho_H) x) / (C -
rho_H)``, at most the bound with ``e_k``. (b) Alternatively count from ``t``: the line is busy on ``[t, d]``,
the ring holds ``W(t-) <= V``, the level-``k`` packets ahead (and the tagged one) are at most ``B_k`` bytes
and the higher levels admit at most their backlog at ``t`` plus their arrivals: ``A_H <= B_H + sigma_H +
rho_H (d - t) / 8``; so ``d - t <= 8 (V + sigma_H + B_k + B_H) / (C - rho_H)``. The smaller of (a) and
(b) holds. Q.E.D.

For the top level (``sigma_H = rho_H = B_H = 0``) this is the maximum-delay bound of
:mod:`qosbound.analytic.ef_bound` (``V + 8 min(sigma, pq_cap L_EF) / C``), which it generalises: with priority
levels above (Le Boudec & Thiran 2001, Theorem 6.2.1, the residual service of a strict server) and the ring's
non-preemptive blocking (the ``Q_t`` units of lower-class packets, the one on the wire included), as
Bennett et al. ("Delay jitter bounds and packet scale rate guarantee for expedited forwarding", IEEE/ACM
ToN 10(4), 2002) bound EF behind a non-preemptive scheduler by one maximum packet per lower class.

Weighted classes (Theorem, the DRR bound). Let all priority levels together have arrival curve below
``(sigma_P, rho_P)`` and backlog at most ``B_P`` bytes at any instant. In any interval ``(s, t]`` in which some
weighted class is backlogged, the line is busy (step 2), the ring admits at least ``C (t - s) / 8 - V``
bytes and the priority levels at most ``B_P + sigma_P + rho_P (t - s) / 8`` of them; so the weighted classes
together have the strict rate-latency curve

    R_W = C - rho_P,    T_W = 8 (V + sigma_P + B_P) / (C - rho_P)          (:data:`weighted_latency_expr`)

and class ``i`` the strict curve ``(R_i, T_i)`` of :func:`qosbound.analytic.drr.drr_service`. A packet of
class ``i`` arriving at ``t`` in the class's backlogged period begun at ``s`` is admitted once the class has
been served every byte that arrived before it in ``[s, t]``: with ``L`` its size, ``R_i (a - s - T_i)^+ / 8 <=
alpha_i(t - s) - L`` (form a) or, counting from ``t``, ``R_i (a - t - T_i)^+ / 8 <= (Q_i - 1) L_i`` (form b: at
most ``Q_i - 1`` packets ahead); its ring sojourn adds step 1. So

    D_i = T_i + 8 (Q_t - 1) phi u / C + min(8 (e_i - L_min) / R_i + 8 L_min / C,
                                         8 (Q_i - 1) L_i / R_i + 8 L_i / C)

(``e_i = sup_x (alpha_i(x) - R_i x / 8)``; in form a the largest value over the packet sizes is at the smallest,
``L_min``, because ``R_i <= C``; form b holds for any traffic, Poisson and saturated-by-others included).

A parent shaper (Cisco's ``shape average`` over a child policy, tc's root ``tbf`` or htb class, Junos'
``shaping-rate``). ``C`` is then the shaper's rate, the rate the classes are served at (a child policy's
percentages are of it), and the shaper sends at most ``b_S`` bytes (Cisco's Bc) per interval ``Tc = 8 b_S / C``.
Assumption (the shaper as a rate-latency server, Le Boudec & Thiran 2001, "Network Calculus", section 1.4.1,
the rate-latency service curve ``beta_{R,T}``; Cisco's interval shaper waits at most one interval before sending
Bc per interval): over any interval ``(s, t]`` in which some class queue holds a packet, the shaper lets the
ring admit at least ``C (t - s - Tc) / 8`` bytes less what the ring holds back, and the ring, drained at the
interface's rate (at least ``C``), holds back at most ``V``. So step 2's strict service curve becomes
``(C, Tc + 8 V / C) = (C, 8 (V + b_S) / C)``: a shaped port is the port at the shaper's rate whose ring holds
``b_S`` more bytes of work,

    V_S = V + b_S                                                           (:data:`shaped_work_expr`)

and every bound above holds with ``V_S`` for ``V`` in the latencies (the ring sojourn after admission, ``W_r``,
is unchanged: a packet in the ring has passed the shaper; computed at ``C`` it over-estimates the drain at the
interface's rate, which is at least ``C``). The residual service of a strict server of latency ``T_0``
(Le Boudec & Thiran 2001, Theorem 6.2.1) is ``(C - rho_H, (C T_0 + 8 sigma_H) / (C - rho_H))``, and ``C T_0 =
8 (V + b_S)``: the level and weighted latencies above with ``V_S``.

The simulator's shaper (:mod:`qosbound.validation.port_kernels`) is a token bucket of depth ``b_S`` refilled
continuously at ``C`` in front of a ring drained at the interface's rate: it holds a packet back at most ``8
L_max / C``, and the ring's remaining work plus its tokens never exceed ``b_S``. The proof above is for the
interval shaper's assumption; that the bounds hold for the token bucket is checked on adversarial shaped ports
(``tests/systems/port``, ``benchmarks/bench_port.py --shaped``), not proved here.
"""

from __future__ import annotations

import math
from functools import lru_cache

import sympy as sp

from qosbound.analytic import ef_bound

__all__ = ["C", "V", "b_S", "shaped_work_expr", "shaped_work", "sigma_H", "rho_H", "e_k", "B_k", "B_H",
           "level_latency_expr", "level_delay_expr",
           "sigma_P", "rho_P", "B_P", "weighted_latency_expr", "ring_sojourn_expr", "R_i", "T_i", "L", "L_i_max",
           "Q_i", "W_r", "weighted_delay_ac_expr", "weighted_delay_ql_expr", "ring_work", "level_delay",
           "level_service", "weighted_aggregate", "weighted_delay"]

C = ef_bound.C  # bit/s
V = sp.Symbol("V", nonnegative=True)  # bytes, the most work the ring holds (step 1)
sigma_H = sp.Symbol("sigma_H", nonnegative=True)  # bytes
rho_H = sp.Symbol("rho_H", nonnegative=True)  # bit/s, rho_H < C
e_k = sp.Symbol("e_k", nonnegative=True)  # bytes, level k's burst against C - rho_H
B_k = sp.Symbol("B_k", nonnegative=True)  # bytes, level k's queue limits x largest packets
B_H = sp.Symbol("B_H", nonnegative=True)  # bytes, backlog bound of the levels above
b_S = sp.Symbol("b_S", nonnegative=True)  # bytes, a parent shaper's burst Bc (0: no shaper)
#: The work a shaped port's ring and shaper hold back, bytes (module docstring, the shaper).
shaped_work_expr = V + b_S

#: Latency of level ``k``'s residual service, s (proof (a), without the level's own burst).
level_latency_expr = 8 * (V + sigma_H) / (C - rho_H)
#: The priority bound ``D_k``, s (module docstring).
level_delay_expr = level_latency_expr + 8 * sp.Min(e_k, B_k + B_H) / (C - rho_H)

sigma_P = sp.Symbol("sigma_P", nonnegative=True)  # bytes, all priority levels' burst
rho_P = sp.Symbol("rho_P", nonnegative=True)  # bit/s, their rate, rho_P < C
B_P = sp.Symbol("B_P", nonnegative=True)  # bytes, their backlog bound
#: Latency of the weighted classes' strict service, s.
weighted_latency_expr = 8 * (V + sigma_P + B_P) / (C - rho_P)

W_r = sp.Symbol("W_r", nonnegative=True)  # s, 8 (Q_t - 1) phi u / C: the ring's work ahead of an admitted packet
L = sp.Symbol("L", positive=True)  # bytes, a packet's size
#: Ring sojourn of an admitted packet of ``L`` bytes, s (step 1).
ring_sojourn_expr = W_r + 8 * L / C
R_i = sp.Symbol("R_i", positive=True)  # bit/s, the class's DRR rate
T_i = sp.Symbol("T_i", nonnegative=True)  # s, its DRR latency
e_i = sp.Symbol("e_i", nonnegative=True)  # bytes, its burst against R_i
L_i_max = sp.Symbol("L_i", positive=True)  # bytes, its largest packet
Q_i = sp.Symbol("Q_i", positive=True, integer=True)  # packets, its queue limit
#: DRR bound, form a (arrival curve), evaluated at the smallest packet ``L``, s.
weighted_delay_ac_expr = T_i + 8 * (e_i - L) / R_i + ring_sojourn_expr
#: DRR bound, form b (queue limit), s.
weighted_delay_ql_expr = T_i + 8 * (Q_i - 1) * L_i_max / R_i + ring_sojourn_expr.subs(L, L_i_max)


@lru_cache(maxsize=None)
def _fn(name: str):
    table = {
        "shaped_work": ((V, b_S), shaped_work_expr),
        "level_latency": ((C, V, sigma_H, rho_H), level_latency_expr),
        "level": ((C, V, sigma_H, rho_H, e_k, B_k, B_H), level_delay_expr),
        "weighted_latency": ((C, V, sigma_P, rho_P, B_P), weighted_latency_expr),
        "ac": ((T_i, e_i, L, R_i, W_r, C), weighted_delay_ac_expr),
        "ql": ((T_i, Q_i, L_i_max, R_i, W_r, C), weighted_delay_ql_expr),
    }
    args, expr = table[name]
    return sp.lambdify(args, expr, "math")


def ring_work(Q_t: int, unit: float, rate: float, largest: float, phi: float) -> tuple[float, float]:
    """(V bytes, W_r s): the most work the ring holds, and the work ahead of an admitted packet in seconds
    (step 1; ``V`` is :func:`qosbound.analytic.ef_bound.txq_work` times ``C / 8``)."""
    total = float(ef_bound.txq_work(Q_t, unit, rate, largest, phi))  # s
    ahead = total - 8.0 * largest / rate
    return total * rate / 8.0, max(ahead, 0.0)


def shaped_work(V_bytes: float, burst: float) -> float:
    """``V_S``, bytes: the ring's work ``V`` and a parent shaper's burst ``b_S`` (0 without one)."""
    return float(_fn("shaped_work")(V_bytes, burst))


def level_service(rate: float, V_bytes: float, sigma_hi: float, rho_hi: float) -> tuple[float, float]:
    """(rate bit/s, latency s) of a priority level's residual service (proof (a) without its own burst)."""
    return rate - rho_hi, float(_fn("level_latency")(rate, V_bytes, sigma_hi, rho_hi))


def level_delay(rate: float, V_bytes: float, sigma_hi: float, rho_hi: float, burst: float, held: float,
                held_hi: float) -> float:
    """The priority bound ``D_k``, s; ``burst`` is ``e_k`` (``math.inf`` for a level without an arrival curve),
    ``held`` is ``B_k`` and ``held_hi`` ``B_H`` (bytes)."""
    if not rho_hi < rate:
        return math.inf
    e = burst if math.isfinite(burst) else held + held_hi + 1.0
    return float(_fn("level")(rate, V_bytes, sigma_hi, rho_hi, e, held, held_hi))


def weighted_aggregate(rate: float, V_bytes: float, sigma_p: float, rho_p: float, held_p: float) -> tuple[float, float]:
    """(R_W bit/s, T_W s): the weighted classes' strict rate-latency service."""
    return rate - rho_p, float(_fn("weighted_latency")(rate, V_bytes, sigma_p, rho_p, held_p))


def weighted_delay(T: float, R: float, rate: float, ahead: float, burst: float, smallest: float, largest: float,
                   queue_limit: int) -> float:
    """The DRR bound ``D_i``, s: the smaller of form a (``burst`` is ``e_i``, ``math.inf`` without an arrival
    curve) and form b (the queue limit)."""
    b = float(_fn("ql")(T, queue_limit, largest, R, ahead, rate))
    if math.isfinite(burst):
        b = min(b, float(_fn("ac")(T, max(burst, smallest), smallest, R, ahead, rate)))
    return b
