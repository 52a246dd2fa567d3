"""Deficit round robin (DRR): the per-class service guaranteed by the weighted scheduler of a port.

The scheduler (M. Shreedhar and G. Varghese, "Efficient fair queuing using deficit round robin", SIGCOMM
1995 / IEEE/ACM ToN 1996). Classes with packets are kept in a round-robin list, each with a quantum ``Q_i``
(bytes) and a deficit counter ``DC_i``. The class at the head of the list starts a turn with ``DC_i += Q_i``;
while its head packet fits (``size <= DC_i``) it is sent and ``DC_i -= size``; when the head packet does not fit
the turn ends and the class moves to the tail; when its queue empties ``DC_i = 0`` and it leaves the list. A
class that receives a packet while out of the list joins it at the tail with ``DC_i = 0``. (In a port the
scheduler hands the tx-ring one packet at a time; the list and the deficits persist between hand-offs.)

The service curve (the result of J. Boyer, G. Stea, W. Sofack, "Deficit Round Robin with network calculus",
VALUETOOLS 2012, there with ``L_j - 1`` for integer byte counts; S. Tabatabaee, J.-Y. Le Boudec, M. Boyer,
"Deficit Round-Robin: A Second Network Calculus Analysis", RTAS 2021, Theorem 1, for a server that is itself
only a strict service curve; D. Stiliadis and A. Varma, "Latency-rate servers", IEEE/ACM ToN 6(5), 1998, for
the latency-rate view). With ``F = sum_j Q_j`` over the classes that can be backlogged, ``L_j`` the largest
packet of class ``j``:

    gamma_i(x) = (Q_i / F) [x - X_i]^+,   X_i = (F - Q_i)(1 + L_i / Q_i) + sum_{j != i} L_j   (bytes)

is a lower bound on the bytes class ``i`` is served in any interval in which it stays backlogged and the
scheduler as a whole serves ``x`` bytes.

Proof. Fix an interval ``(s, t]`` in which class ``i`` stays backlogged (never leaves the list, so its deficit
is never reset) and let ``m`` be the number of its turns that start and end inside it.

1. *Deficits.* A turn ends either because the head packet does not fit (then ``DC < L``) or because the queue
   empties (then ``DC = 0``): at the end of every turn ``0 <= DC_j < L_j``; during a turn ``DC_j >= 0``. Over
   ``k`` consecutive turns of one class its service is ``k Q_j + DC(before) - DC(after)`` less any resets, so at
   most ``k Q_j + L_j`` and, for class ``i`` (no resets), at least ``k Q_i - L_i``.
2. *Interleaving.* Between two consecutive turns of ``i`` every other class has at most one turn (a class
   joining the list joins at the tail, behind ``i``); before ``i``'s first new turn at most one (possibly
   already started) turn of each; after its last at most one more. So each ``j != i`` has at most ``m + 1``
   turns meeting ``(s, t]`` and is served at most ``(m + 1) Q_j + L_j``.
3. *Counting.* With ``x`` the total served, ``y`` the part of ``i``: ``y >= m Q_i - L_i`` (class ``i``'s service
   in partial turns at either end is ``>= 0``), hence ``m <= (y + L_i) / Q_i``, and ``x - y <= (m + 1)(F - Q_i) +
   sum_{j != i} L_j``. Eliminating ``m``: ``x <= y F / Q_i + (F - Q_i)(1 + L_i / Q_i) + sum_{j != i} L_j``, i.e.
   ``y >= gamma_i(x)``.

Nothing in the proof needs ``Q_i >= L_i`` (a class whose packet is larger than its quantum sends it after
several turns); the bound holds for any positive quanta.

Composition. If the scheduler as a whole has the strict rate-latency curve ``(R, T)`` -- in every interval in
which some class of it is backlogged it serves at least ``R (t - s - T)^+ / 8`` bytes -- then, since ``gamma_i`` is
non-decreasing, class ``i`` has the strict rate-latency curve

    R_i = (Q_i / F) R,    T_i = T + 8 X_i / R      (:data:`drr_rate_expr`, :data:`drr_latency_expr`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from qosbound.analytic.curves import RateLatency
from qosbound.errors import ScenarioError

__all__ = ["Q_i", "F", "L_i", "L_other", "R", "drr_offset_expr", "drr_rate_expr", "drr_latency_expr", "quanta",
           "drr_service"]

Q_i = sp.Symbol("Q_i", positive=True)  # bytes, the class's quantum
F = sp.Symbol("F", positive=True)  # bytes, the sum of the quanta (F >= Q_i)
L_i = sp.Symbol("L_i", positive=True)  # bytes, the class's largest packet
L_other = sp.Symbol("L_other", nonnegative=True)  # bytes, sum of the other classes' largest packets
R = sp.Symbol("R", positive=True)  # bit/s, the rate of the scheduler's strict service curve

#: ``X_i``: bytes the other classes (and the deficits) may take before class ``i``'s share starts (proof above).
drr_offset_expr = (F - Q_i) * (1 + L_i / Q_i) + L_other
#: Class ``i``'s guaranteed rate, bit/s.
drr_rate_expr = Q_i / F * R
#: Class ``i``'s extra latency over the scheduler's own, s.
drr_latency_expr = 8 * drr_offset_expr / R


@lru_cache(maxsize=1)
def _fns():
    args = (Q_i, F, L_i, L_other, R)
    return sp.lambdify(args, drr_rate_expr, "math"), sp.lambdify(args, drr_latency_expr, "math")


def quanta(weights, quantum: float) -> np.ndarray:
    """Quanta in proportion to the weights, the smallest positive weight getting ``quantum`` bytes (0 for a
    class of weight 0, which never joins the round)."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or np.any(w < 0) or not np.any(w > 0):
        raise ScenarioError("DRR needs non-negative weights, one positive at least", field="classes")
    if not quantum > 0:
        raise ScenarioError("the DRR quantum must be positive", field="scheduler.quantum")
    return np.where(w > 0, quantum * w / w[w > 0].min(), 0.0)


def drr_service(q, largest, i: int, aggregate: RateLatency) -> RateLatency:
    """Class ``i``'s strict rate-latency curve under DRR with quanta ``q`` (bytes; classes of quantum 0 are
    never backlogged and do not count) and largest packets ``largest`` (bytes), when the scheduler as a whole
    has the strict curve ``aggregate`` (module docstring)."""
    q = np.asarray(q, dtype=float)
    L = np.asarray(largest, dtype=float)
    if not q[i] > 0:
        raise ScenarioError("a class of quantum 0 is never served", field="classes")
    live = q > 0
    Fv = float(q[live].sum())
    other = float(L[live].sum() - L[i])
    rate_fn, lat_fn = _fns()
    Rv = aggregate.rate
    return RateLatency(float(rate_fn(float(q[i]), Fv, float(L[i]), other, Rv)),
                       aggregate.latency + float(lat_fn(float(q[i]), Fv, float(L[i]), other, Rv)))
