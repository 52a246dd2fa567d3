"""TSQ, the Traffic Sensitive QoS controller (Claypool, Kinicki & Kumar): cut-in-line weights, the drop adjustment, its proofs.

Every formula is one SymPy expression; numbers come from ``sympy.lambdify``
(``"numpy"`` for vectorised use, ``"math"`` for the numba simulator, which
compiles the same generated functions). Units: times in seconds, rates in
bit/s, backlogs in bytes, probabilities dimensionless.

Semantics (DESIGN.md "TSQ"; Claypool, Kinicki & Kumar section 3.2-3.3, Figure 6):

* A packet carries a delay hint ``d`` in ``1..2^n`` (``n = 4``).
* On arrival at ``t_a`` the router computes the drain time ``t_d = 8 B / C``
  (``B`` the backlog in bytes, including what is left of the packet on the
  wire, so ``t_d`` is the queueing delay of a tail arrival), and the weight
  ``w = d t_d / 2^n + t_a`` (Claypool, Kinicki & Kumar eq. (2)).
* The queue is kept sorted by weight (ties: arrival order); ``q`` is the
  queueing delay at the tail (``t_d``) and ``q'`` the queueing delay at the
  insertion point (work ahead of it divided by ``C``).
* The AQM's drop probability ``p`` becomes
  ``p' = min(1, ((l + q)/(l + q'))^2 p)`` (Claypool, Kinicki & Kumar eq. (5), capped at 1),
  with ``l`` the latency constant (40 ms in the seed).

The adjustment comes from the square-root law ``T = K / ((l + q) sqrt(p))``
(Claypool, Kinicki & Kumar eq. (3), after Padhye et al. 1998): uncapped it keeps ``T' = T``
exactly (:func:`prove_identity`); where the cap binds the law predicts a gain
``T' > T`` (:func:`cap_region`), which is where the "no gain from cutting in
line" claim fails.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

__all__ = [
    "d", "n", "B", "C", "t_a", "t_d", "q", "qp", "p", "l", "K", "sigma", "rho", "A",
    "drain_time_expr", "weight_expr", "insertion_delay_expr", "adjusted_drop_uncapped_expr",
    "adjusted_drop_expr", "throughput_expr", "throughput_tsq_expr", "cap_threshold_expr", "cap_p_expr",
    "delay_bound_expr", "delay_bound_window_expr", "pi_update_expr", "pi_update_clamped_expr",
    "prove_identity", "prove_drop_not_decreased", "prove_cap_equals_gain", "prove_hint_max_unchanged",
    "prove_bound_monotone", "cap_region", "pi_fixed_point",
    "drain_time", "weight", "adjusted_drop", "insertion_delay", "throughput", "throughput_tsq",
    "cap_min_drop", "delay_bound", "numba_functions", "reference_data",
]

#: Delay hint, 1..2^n (dimensionless).
d = sp.Symbol("d", positive=True)
#: Bits carrying the hint (Claypool, Kinicki & Kumar: n = 4, hints 1..16).
n = sp.Symbol("n", positive=True)
#: Backlog at arrival, bytes (including the residual of the packet on the wire).
B = sp.Symbol("B", nonnegative=True)
#: Link capacity, bit/s.
C = sp.Symbol("C", positive=True)
#: Arrival time, s.
t_a = sp.Symbol("t_a", nonnegative=True)
#: Drain time, s.
t_d = sp.Symbol("t_d", nonnegative=True)
#: Queueing delay at the tail (no TSQ), s.
q = sp.Symbol("q", nonnegative=True)
#: Queueing delay at the insertion point, s.
qp = sp.Symbol("qp", nonnegative=True)
#: AQM drop probability, in (0, 1].
p = sp.Symbol("p", positive=True)
#: One-way latency constant of the router, s (Claypool, Kinicki & Kumar: 40 ms).
l = sp.Symbol("l", positive=True)
#: Constant of the square-root law (network conditions), bytes (any positive units).
K = sp.Symbol("K", positive=True)
#: Burst of the arrival envelope, bits.
sigma = sp.Symbol("sigma", nonnegative=True)
#: Sustained rate of the arrival envelope, bit/s.
rho = sp.Symbol("rho", nonnegative=True)
#: Bits accepted into the queue within the tagged packet's overtaking window, bits.
A = sp.Symbol("A", nonnegative=True)

#: Drain time t_d = q/C (Claypool, Kinicki & Kumar Figure 6), with the backlog in bytes: 8 B / C seconds.
drain_time_expr = 8 * B / C

#: Claypool, Kinicki & Kumar eq. (2): the packet weight w = d t_d / 2^n + t_a.
weight_expr = d * t_d / 2**n + t_a

#: Queueing delay at the insertion point when every packet already queued has hint 2^n (a FIFO
#: backlog whose weights are their FIFO start times): the packet lands where d/2^n of the drain time
#: is ahead of it. An approximation for mixed queues; the simulator measures q' exactly.
insertion_delay_expr = d * q / 2**n

#: Claypool, Kinicki & Kumar eq. (5): p' = ((l + q)/(l + q'))^2 p, before the cap.
adjusted_drop_uncapped_expr = ((l + q) / (l + qp)) ** 2 * p

#: Claypool, Kinicki & Kumar eq. (5) with the cap at 1 (Figure 6 drops with probability p', so p' <= 1).
adjusted_drop_expr = sp.Min(1, adjusted_drop_uncapped_expr)

#: Claypool, Kinicki & Kumar eq. (3): square-root law T = K / ((l + q) sqrt(p)).
throughput_expr = K / ((l + q) * sp.sqrt(p))

#: Claypool, Kinicki & Kumar eq. (4) with the capped p': T' = K / ((l + q') sqrt(p')).
throughput_tsq_expr = K / ((l + qp) * sp.sqrt(adjusted_drop_expr))

#: The cap binds (p' = 1) exactly when q' < (l + q) sqrt(p) - l (solving p'_uncapped = 1 for q').
cap_threshold_expr = (l + q) * sp.sqrt(p) - l

#: For a hint-d packet among hint-2^n packets (q' = d q / 2^n) the cap binds when p exceeds this.
cap_p_expr = ((l + d * q / 2**n) / (l + q)) ** 2

#: Worst-case queueing delay of a hint-d packet (derived here, see :func:`delay_bound`):
#: t_d + (sigma + rho d t_d / 2^n) / C.
delay_bound_expr = t_d + (sigma + rho * d * t_d / 2**n) / C

#: The same bound written with the bits A actually accepted in the window [t_a, t_a + d t_d / 2^n).
delay_bound_window_expr = t_d + A / C

# PI AQM (Hollot, Misra, Towsley & Gong 2001, eq. (19) discretised; Claypool, Kinicki & Kumar section 4.1):
# p(kT) = a (q(kT) - q_ref) - b (q((k-1)T) - q_ref) + p((k-1)T), sampled at 170 Hz, q in packets.
pi_a, pi_b = sp.symbols("a b", positive=True)
q_now, q_prev, q_ref, p_prev = sp.symbols("q_now q_prev q_ref p_prev", real=True)
#: Hollot et al. 2001, the PI controller's difference equation (unclamped).
pi_update_expr = p_prev + pi_a * (q_now - q_ref) - pi_b * (q_prev - q_ref)
#: The same, held in [0, 1] (a probability).
pi_update_clamped_expr = sp.Min(1, sp.Max(0, pi_update_expr))


# ---------------------------------------------------------------------------------------------
# Proofs


def prove_identity() -> bool:
    """Uncapped, T' = K/((l+q') sqrt(p')) equals T = K/((l+q) sqrt(p)) identically (Claypool, Kinicki & Kumar eq. (3)-(5))."""
    t_new = K / ((l + qp) * sp.sqrt(adjusted_drop_uncapped_expr))
    return sp.simplify(t_new - throughput_expr) == 0


def prove_drop_not_decreased() -> bool:
    """For q' <= q the adjustment never lowers the drop probability: p'_uncapped - p >= 0.

    Write q = q' + e with e >= 0: p'/p - 1 = e (2l + 2q' + e) / (l + q')^2, a ratio of non-negative terms.
    """
    e = sp.Symbol("e", nonnegative=True)
    diff = sp.factor(sp.simplify((adjusted_drop_uncapped_expr - p).subs(q, qp + e)))
    return bool(diff.is_nonnegative)


def prove_cap_equals_gain() -> bool:
    """The cap binds iff the square-root law predicts a gain: both regions are q' < (l+q) sqrt(p) - l.

    Solving p'_uncapped = 1 and K/(l+q') = T for q' gives the same single root, and both sides are
    monotone in q' (p'_uncapped decreases, K/(l+q') decreases), so the regions coincide.
    """
    root_cap = sp.solve(sp.Eq(adjusted_drop_uncapped_expr, 1), qp)
    root_gain = sp.solve(sp.Eq(K / (l + qp), throughput_expr), qp)
    pos_cap = [r for r in root_cap if sp.simplify(r - cap_threshold_expr) == 0]
    pos_gain = [r for r in root_gain if sp.simplify(r - cap_threshold_expr) == 0]
    dec1 = (-sp.diff(adjusted_drop_uncapped_expr, qp)).is_positive
    dec2 = (-sp.diff(K / (l + qp), qp)).is_positive
    return bool(pos_cap) and bool(pos_gain) and bool(dec1) and bool(dec2)


def prove_hint_max_unchanged() -> bool:
    """A hint-2^n packet among hint-2^n packets is inserted at the tail (q' = q), so p' = p and T' = T."""
    pprime = adjusted_drop_expr.subs(qp, insertion_delay_expr.subs(d, 2**n))
    return sp.simplify(pprime - sp.Min(1, p)) == 0


def prove_bound_monotone() -> bool:
    """The delay bound grows with the hint, the drain time and the envelope (all partial derivatives >= 0)."""
    return all(bool(sp.diff(delay_bound_expr, v).is_nonnegative) for v in (d, t_d, sigma, rho))


def cap_region():
    """The closed-form cap region, as SymPy relations.

    Returns ``(in_qp, in_p_for_hint)``: ``q' < (l+q) sqrt(p) - l`` for a general insertion point, and
    ``p > ((l + d q/2^n)/(l+q))^2`` for a hint-d packet among hint-2^n packets. Inside, p' = 1 and the
    square-root law gives T' = K/(l+q') > T; outside, T' = T exactly.
    """
    return sp.StrictLessThan(qp, cap_threshold_expr), sp.StrictGreaterThan(p, cap_p_expr)


def pi_fixed_point():
    """The PI controller holds p constant (p_k = p_{k-1}) with a steady queue only at q = q_ref (a != b)."""
    qs = sp.Symbol("q_s", real=True)
    eq = sp.Eq(pi_update_expr.subs({q_now: qs, q_prev: qs}), p_prev)
    return sp.solve(eq, qs)


# ---------------------------------------------------------------------------------------------
# Numbers (vectorised, from the expressions above)


@lru_cache(maxsize=None)
def _np(name: str):
    table = {
        "drain": ((B, C), drain_time_expr),
        "weight": ((d, t_d, t_a, n), weight_expr),
        "pprime": ((q, qp, p, l), adjusted_drop_uncapped_expr),
        "ins": ((d, q, n), insertion_delay_expr),
        "T": ((q, p, l, K), throughput_expr),
        "capp": ((d, q, l, n), cap_p_expr),
        "bound": ((d, t_d, sigma, rho, C, n), delay_bound_expr),
    }
    args, expr = table[name]
    return sp.lambdify(args, expr, "numpy")


def drain_time(backlog_bytes, capacity):
    """t_d = 8 B / C in seconds (Claypool, Kinicki & Kumar Figure 6); vectorised."""
    return _np("drain")(np.asarray(backlog_bytes, dtype=float), np.asarray(capacity, dtype=float))


def weight(hint, drain, arrival, bits=4):
    """w = d t_d / 2^n + t_a (Claypool, Kinicki & Kumar eq. (2)); vectorised."""
    return _np("weight")(np.asarray(hint, dtype=float), np.asarray(drain, dtype=float),
                         np.asarray(arrival, dtype=float), float(bits))


def adjusted_drop(q_tail, q_insert, p_aqm, latency=0.040):
    """p' = min(1, ((l+q)/(l+q'))^2 p) (Claypool, Kinicki & Kumar eq. (5), capped); vectorised."""
    raw = _np("pprime")(np.asarray(q_tail, dtype=float), np.asarray(q_insert, dtype=float),
                        np.asarray(p_aqm, dtype=float), float(latency))
    return np.minimum(1.0, raw)


def insertion_delay(hint, q_tail, bits=4):
    """q' = d q / 2^n for a packet joining a backlog of hint-2^n packets; vectorised."""
    return _np("ins")(np.asarray(hint, dtype=float), np.asarray(q_tail, dtype=float), float(bits))


def throughput(q_delay, p_drop, latency=0.040, k=1.0):
    """Square-root law T = K/((l+q) sqrt(p)) (Claypool, Kinicki & Kumar eq. (3)); vectorised."""
    return _np("T")(np.asarray(q_delay, dtype=float), np.asarray(p_drop, dtype=float), float(latency), float(k))


def throughput_tsq(q_tail, q_insert, p_aqm, latency=0.040, k=1.0):
    """T' = K/((l+q') sqrt(p')) with the capped p' (Claypool, Kinicki & Kumar eq. (4)); vectorised."""
    return throughput(q_insert, adjusted_drop(q_tail, q_insert, p_aqm, latency), latency, k)


def cap_min_drop(hint, q_tail, latency=0.040, bits=4):
    """Smallest AQM drop probability at which a hint-d packet's p' is capped (and T' > T)."""
    return _np("capp")(np.asarray(hint, dtype=float), np.asarray(q_tail, dtype=float), float(latency),
                       float(bits))


def delay_bound(hint, drain_max, capacity, sigma_bits, rho_bps, bits=4):
    """Worst-case queueing delay of a hint-d packet, s.

    Derivation: the queue is served in weight order, and a packet arriving at t' has weight
    w' >= t'. So a packet can be overtaken only by packets arriving before its own weight
    w = t_a + d t_d / 2^n, i.e. within d t_d / 2^n of its arrival (the aging term). The work
    served before it is at most the backlog it finds (8 B = C t_d) plus the work accepted in
    that window. Assumptions: a work-conserving link of capacity C; the accepted traffic obeys
    the envelope sigma + rho tau bits in any window of length tau; t_d <= ``drain_max`` (a
    finite buffer). Then D_q <= t_d + (sigma + rho d t_d / 2^n)/C, increasing in t_d, so the
    bound is taken at ``drain_max``. Every hint, including 2^n, has a finite bound: no starvation.
    """
    return _np("bound")(np.asarray(hint, dtype=float), np.asarray(drain_max, dtype=float),
                        np.asarray(sigma_bits, dtype=float), np.asarray(rho_bps, dtype=float),
                        np.asarray(capacity, dtype=float), float(bits))


@lru_cache(maxsize=1)
def numba_functions():
    """numba-compiled scalar forms of the weight, p'_uncapped and the clamped PI update (from lambdify)."""
    import numba

    wfun = numba.njit(cache=False)(sp.lambdify((d, t_d, t_a, n), weight_expr, "math"))
    pfun = numba.njit(cache=False)(sp.lambdify((q, qp, p, l), adjusted_drop_uncapped_expr, "math"))
    pifun = numba.njit(cache=False)(sp.lambdify((p_prev, q_now, q_prev, q_ref, pi_a, pi_b),
                                                pi_update_expr, "math"))
    return wfun, pfun, pifun


@lru_cache(maxsize=1)
def reference_data() -> dict:
    """The seed's reference numbers (``qosbound/data/tsq.yaml``: PI constants, settings, quoted qualities)."""
    from importlib.resources import files

    import yaml

    return yaml.safe_load((files("qosbound") / "data" / "tsq.yaml").read_text(encoding="utf-8"))
