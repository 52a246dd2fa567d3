"""The TFRC throughput equation and gTFRC, in SymPy, with vectorised numbers by lambdify.

Sources: RFC 5348 (TFRC), section 3.1 (the equation) and section 4.3 (the
sender's rate update, ``t_mbi = 64 s``); Jourjon, Lochin & Sénac, "Design,
Implementation and Evaluation of a QoS-aware Transport Protocol" (Jourjon et al. 2008,
QSTP), equation (1) (TFRC) and equation (2) (gTFRC).

Units: ``s`` bytes, ``R`` and ``t_RTO`` seconds, ``p`` loss events per packet
(dimensionless, in (0, 1]), rates ``X``, ``g`` and ``X_recv`` in bytes/s
(the CLI and the scenario files speak bit/s and convert).

Every formula is one SymPy expression below; the numeric functions come from
``sympy.lambdify(..., "numpy")`` and broadcast over NumPy arrays. The proofs
(monotonicity, envelopes, limits) are SymPy derivations returned as booleans
or expressions, each exercised by a test.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from qosbound.errors import ScenarioError

__all__ = [
    "s", "R", "p", "b", "t_RTO", "g", "X_recv", "T_MBI",
    "tfrc_expr", "sqrt_law_expr", "lower_envelope_expr", "gtfrc_expr", "tfrc_sender_expr",
    "tfrc_rate", "sqrt_law_rate", "lower_envelope_rate", "gtfrc_rate", "sender_rate",
    "LOSS_WEIGHTS", "mean_loss_interval",
    "prove_decreasing_in_p", "prove_decreasing_in_R", "prove_upper_envelope", "prove_lower_envelope",
    "limit_p_to_0", "limit_p_to_1",
    "max_loss_for_target", "max_rtt_for_target", "loss_table", "rtt_table",
    "friendliness_ratio", "exceeds_fair_rate",
]

#: Packet size, bytes.
s = sp.Symbol("s", positive=True)
#: Round-trip time, seconds.
R = sp.Symbol("R", positive=True)
#: Loss event rate, loss events per packet, in (0, 1].
p = sp.Symbol("p", positive=True)
#: Packets acknowledged by one TCP acknowledgement (RFC 5348: b = 1).
b = sp.Symbol("b", positive=True)
#: TCP retransmission timeout, seconds (RFC 5348: t_RTO = 4R).
t_RTO = sp.Symbol("t_RTO", positive=True)
#: gTFRC target rate (the AF class's negotiated rate), bytes/s.
g = sp.Symbol("g", positive=True)
#: Receive rate reported by the receiver, bytes/s.
X_recv = sp.Symbol("X_recv", positive=True)
#: RFC 5348 section 4.3: the sender never goes below one packet per t_mbi = 64 s.
T_MBI = sp.Integer(64)


def _denominator(rto=t_RTO):
    return R * sp.sqrt(2 * b * p / 3) + rto * (3 * sp.sqrt(3 * b * p / 8)) * p * (1 + 32 * p**2)


#: RFC 5348 section 3.1 / Jourjon et al. (2008) eq. (1): the TCP throughput equation, bytes/s.
tfrc_expr = s / _denominator()

#: The simplified square-root law X = s / (R sqrt(2bp/3)) (RFC 5348 section 3.1 drops the timeout term);
#: it bounds ``tfrc_expr`` from above.
sqrt_law_expr = s / (R * sp.sqrt(2 * b * p / 3))

#: A lower envelope valid for p in (0, 1]: p (1 + 32 p^2) <= 33 p there, so the timeout term is at most
#: 99 t_RTO sqrt(3bp/8); X >= s / (sqrt(p) (R sqrt(2b/3) + 99 t_RTO sqrt(3b/8))), again a 1/sqrt(p) law.
lower_envelope_expr = s / (sp.sqrt(p) * (R * sp.sqrt(2 * b / 3) + 99 * t_RTO * sp.sqrt(3 * b / 8)))



def _sender_clamp(x):
    """RFC 5348 section 4.3's update of the allowed rate from a wanted rate ``x``: max(min(x, 2 X_recv), s/t_mbi)."""
    return sp.Max(sp.Min(x, 2 * X_recv), s / T_MBI)


#: RFC 5348 section 4.3: the TFRC sender's allowed rate after feedback with p > 0, bytes/s.
tfrc_sender_expr = _sender_clamp(tfrc_expr)

#: Jourjon et al. (2008) eq. (2) with RFC 5348's floor: X = max(min(max(X_calc, g), 2 X_recv), s / t_mbi), bytes/s.
gtfrc_expr = _sender_clamp(sp.Max(tfrc_expr, g))

#: gTFRC without a receive-rate report (X_recv unknown, e.g. a steady-state planning question).
_gtfrc_open_expr = sp.Max(sp.Max(tfrc_expr, g), s / T_MBI)


@lru_cache(maxsize=None)
def _fn(name: str):
    """Lambdified numeric form of one of the module's expressions (cached)."""
    table = {
        "tfrc": ((s, R, p, b, t_RTO), tfrc_expr),
        "sqrt": ((s, R, p, b), sqrt_law_expr),
        "lower": ((s, R, p, b, t_RTO), lower_envelope_expr),
        "gtfrc": ((s, R, p, b, t_RTO, g, X_recv), gtfrc_expr),
        "sender": ((s, R, p, b, t_RTO, X_recv), tfrc_sender_expr),
        "gtfrc_open": ((s, R, p, b, t_RTO, g), _gtfrc_open_expr),
        # denominator in u = sqrt(p) and its derivative, for the inverse in p
        "den_u": ((sp.Symbol("u", positive=True), R, b, t_RTO), _denominator().subs(p, sp.Symbol("u", positive=True) ** 2)),
        "dden_u": ((sp.Symbol("u", positive=True), R, b, t_RTO),
                   sp.diff(_denominator().subs(p, sp.Symbol("u", positive=True) ** 2), sp.Symbol("u", positive=True))),
        # the RTT that makes X_calc equal a target, t_RTO = c R
        "rtt": ((s, p, b, g, sp.Symbol("c", positive=True)), _rtt_solution()),
    }
    args, expr = table[name]
    return sp.lambdify(args, expr, "numpy")


def _rto(R_, t_rto):
    return 4.0 * np.asarray(R_, dtype=float) if t_rto is None else t_rto


def _check_p(p_):
    a = np.asarray(p_, dtype=float)
    if np.any(~(a > 0)) or np.any(a > 1):
        raise ScenarioError("the loss event rate p must lie in (0, 1]", field="loss")
    return a


def tfrc_rate(s_, R_, p_, b_=1.0, t_rto=None):
    """TFRC allowed rate X in bytes/s (RFC 5348 section 3.1, Jourjon et al. (2008) eq. (1)); vectorised.

    Parameters: ``s_`` packet size in bytes, ``R_`` round-trip time in seconds,
    ``p_`` loss event rate in (0, 1], ``b_`` packets per ACK (default 1),
    ``t_rto`` retransmission timeout in seconds (default 4R). Arguments
    broadcast as NumPy arrays; a scalar in gives a 0-d array out.

    >>> round(float(tfrc_rate(1500, 0.03, 0.01)))
    561661
    """
    p_ = _check_p(p_)
    return _fn("tfrc")(np.asarray(s_, dtype=float), np.asarray(R_, dtype=float), p_,
                       np.asarray(b_, dtype=float), _rto(R_, t_rto))


def sqrt_law_rate(s_, R_, p_, b_=1.0):
    """The square-root law s / (R sqrt(2bp/3)) in bytes/s (an upper envelope of :func:`tfrc_rate`)."""
    return _fn("sqrt")(np.asarray(s_, dtype=float), np.asarray(R_, dtype=float), _check_p(p_),
                       np.asarray(b_, dtype=float))


def lower_envelope_rate(s_, R_, p_, b_=1.0, t_rto=None):
    """The 1/sqrt(p) lower envelope of :func:`tfrc_rate` on p in (0, 1], bytes/s."""
    return _fn("lower")(np.asarray(s_, dtype=float), np.asarray(R_, dtype=float), _check_p(p_),
                        np.asarray(b_, dtype=float), _rto(R_, t_rto))


def gtfrc_rate(s_, R_, p_, g_, x_recv=None, b_=1.0, t_rto=None):
    """gTFRC rate in bytes/s: max(min(max(X_calc, g), 2 X_recv), s/64) (Jourjon et al. 2008 eq. (2), RFC 5348 4.3).

    ``g_`` is the target rate in bytes/s; ``x_recv`` the receiver's reported
    rate in bytes/s, or None for no receive-rate cap (a steady-state question).
    """
    arrs = [np.asarray(v, dtype=float) for v in (s_, R_, _check_p(p_), b_, _rto(R_, t_rto), g_)]
    if x_recv is not None:
        arrs.append(np.asarray(x_recv, dtype=float))
    arrs = np.broadcast_arrays(*arrs)  # Max/Min lambdify to amax/amin over a stacked tuple
    if x_recv is None:
        out = _fn("gtfrc_open")(*arrs)
    else:
        out = _fn("gtfrc")(*arrs)
    return np.asarray(out, dtype=float)


def sender_rate(s_, R_, p_, x_recv, g_=None, b_=1.0, t_rto=None) -> float:
    """Allowed rate (bytes/s) of a TFRC sender (``g_`` None, :data:`tfrc_sender_expr`) or a gTFRC sender with
    target ``g_`` bytes/s (:data:`gtfrc_expr`) after feedback reporting loss event rate ``p_`` > 0 and receive
    rate ``x_recv`` bytes/s (RFC 5348 section 4.3; Jourjon et al. 2008 eq. (2)); scalars in, a float out."""
    if g_ is not None:
        return float(gtfrc_rate(s_, R_, p_, g_, x_recv, b_, t_rto))
    return float(_fn("sender")(float(s_), float(R_), float(_check_p(p_)), float(b_), float(_rto(R_, t_rto)),
                               float(x_recv)))


#: RFC 5348 section 5.4: weights w_0 .. w_7 of the n = 8 most recent loss intervals.
LOSS_WEIGHTS = (1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2)


def mean_loss_interval(open_interval, closed, k):
    """RFC 5348 section 5.4: I_mean = max(I_tot0, I_tot1) / W_tot, in packets.

    ``open_interval`` is I_0 (packets since the latest loss event), ``closed[0..k-1]`` are I_1 .. I_k, most
    recent first; at most the n = 8 most recent count. ``I_tot0 = sum_{i<k} w_i I_i`` (with the open interval),
    ``I_tot1 = sum_{1<=i<=k} w_(i-1) I_i`` (without), ``W_tot = sum_{i<k} w_i``. Plain Python that numba also
    compiles (the packet simulator jits this very function), so the average is written once.
    """
    k = min(k, len(LOSS_WEIGHTS))
    if k <= 0:
        raise ValueError("no closed loss interval yet")
    i_tot0 = LOSS_WEIGHTS[0] * open_interval
    i_tot1 = 0.0
    w_tot = 0.0
    for i in range(k):
        w_tot += LOSS_WEIGHTS[i]
        i_tot1 += LOSS_WEIGHTS[i] * closed[i]
        if i + 1 < k:
            i_tot0 += LOSS_WEIGHTS[i + 1] * closed[i]
    return max(i_tot0, i_tot1) / w_tot


# ---------------------------------------------------------------------------------------------
# Proven properties (SymPy derivations)


def prove_decreasing_in_p() -> bool:
    """dX/dp < 0 for all positive s, R, p, b, t_RTO: SymPy decides the sign of the derivative.

    The denominator is a sum of terms c_k p^(e_k) with positive c_k and e_k, so its derivative
    is a sum of positive terms; SymPy's assumption system proves the derivative positive.
    """
    dden = sp.diff(_denominator(), p)
    return bool(sp.expand(dden).is_positive) and bool((-sp.diff(tfrc_expr, p)).is_positive)


def prove_decreasing_in_R() -> bool:
    """dX/dR < 0 both with t_RTO fixed and with RFC 5348's t_RTO = 4R."""
    fixed = (-sp.diff(tfrc_expr, R)).is_positive
    coupled = (-sp.diff(tfrc_expr.subs(t_RTO, 4 * R), R)).is_positive
    return bool(fixed) and bool(coupled)


def prove_upper_envelope() -> bool:
    """X <= s / (R sqrt(2bp/3)): the difference of reciprocals is the (positive) timeout term."""
    gap = sp.simplify(1 / tfrc_expr - 1 / sqrt_law_expr)
    return bool(gap.is_positive)


def prove_lower_envelope() -> bool:
    """X >= lower envelope for p in (0, 1].

    s/X_low - s/X = 3 t_RTO sqrt(3b/8) sqrt(p) (33 - p - 32 p^3). The cubic factor
    q(p) = 33 - p - 32 p^3 has q'(p) = -1 - 96 p^2 < 0 and q(1) = 0, so q >= 0 on (0, 1].
    """
    gap = sp.expand(s / lower_envelope_expr - s / tfrc_expr)
    factor = sp.simplify(gap / (3 * t_RTO * sp.sqrt(3 * b / 8) * sp.sqrt(p)))
    q = sp.expand(factor)
    target = 33 - p - 32 * p**3
    if sp.simplify(q - target) != 0:
        return False
    decreasing = (-sp.diff(q, p)).is_positive
    return bool(decreasing) and q.subs(p, 1) == 0


def limit_p_to_0():
    """lim_{p->0} X sqrt(p) = s sqrt(3/(2b)) / R: X grows like the square-root law as p -> 0."""
    return sp.simplify(sp.limit(tfrc_expr * sp.sqrt(p), p, 0, "+"))


def limit_p_to_1():
    """X at p = 1 (the continuous limit p -> 1^-): s / (R sqrt(2b/3) + 99 t_RTO sqrt(3b/8))."""
    return sp.simplify(sp.limit(tfrc_expr, p, 1, "-"))


# ---------------------------------------------------------------------------------------------
# Inverse problems


def _rtt_solution():
    """R solving X_calc(s, R, p) = g with t_RTO = c R (c = 4 in RFC 5348): X is s/(R K(p)), so R = s/(g K)."""
    c = sp.Symbol("c", positive=True)
    sols = sp.solve(sp.Eq(tfrc_expr.subs(t_RTO, c * R), g), R)
    if len(sols) != 1:  # pragma: no cover - the equation is linear in 1/R
        raise AssertionError("expected one RTT solution")
    return sols[0]


def max_rtt_for_target(s_, p_, g_, b_=1.0, rto_factor=4.0):
    """Largest RTT (s) at which the target g (bytes/s) is still TCP-friendly, i.e. X_calc(R) >= g.

    With t_RTO = rto_factor * R the equation is s / (R K(p)), so the answer is the
    closed form s / (g K(p)) solved by SymPy; vectorised.
    """
    return np.asarray(_fn("rtt")(np.asarray(s_, dtype=float), _check_p(p_), np.asarray(b_, dtype=float),
                                 np.asarray(g_, dtype=float), np.asarray(rto_factor, dtype=float)), dtype=float)


def max_loss_for_target(s_, R_, g_, b_=1.0, t_rto=None, tol=1e-12):
    """Largest loss event rate p in (0, 1] with X_calc(s, R, p) >= g, vectorised (SciPy Newton).

    Above this p, gTFRC's guarantee is needed for the flow to send at g. X is
    strictly decreasing in p (:func:`prove_decreasing_in_p`), so the answer is the
    root of X(p) = g, or 1 when even X(1) >= g. In u = sqrt(p) the denominator is
    an increasing convex polynomial, so Newton's method started at the square-root
    law's root (which lies above the true root) converges monotonically.
    """
    from scipy.optimize import newton

    s_a, R_a, g_a, b_a = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (s_, R_, g_, b_)))
    rto = np.broadcast_to(_rto(R_a, t_rto), s_a.shape).astype(float)
    if np.any(~(s_a > 0)) or np.any(~(R_a > 0)) or np.any(~(g_a > 0)) or np.any(~(rto > 0)):
        raise ScenarioError("s, R, g and t_RTO must be positive", field="size/rtt/target/t_rto")
    target = s_a / g_a  # denominator value where X = g
    den, dden = _fn("den_u"), _fn("dden_u")
    at_one = den(np.ones_like(s_a), R_a, b_a, rto)
    u0 = np.minimum(target / (R_a * np.sqrt(2.0 * b_a / 3.0)), 1.0)
    out = np.ones_like(s_a)
    need = at_one > target
    if np.any(need):
        args = (R_a[need], b_a[need], rto[need], target[need])
        u = newton(lambda u, R_, b_, r_, t_: den(u, R_, b_, r_) - t_,
                   u0[need], fprime=lambda u, R_, b_, r_, t_: dden(u, R_, b_, r_),
                   args=args, tol=tol, maxiter=200)
        out[need] = np.asarray(u) ** 2
    return out if out.ndim else float(out)


def loss_table(s_, rtts, targets, b_=1.0):
    """Table of :func:`max_loss_for_target`: rows = RTTs (s), columns = targets (bytes/s)."""
    Rg, Gg = np.meshgrid(np.asarray(rtts, dtype=float), np.asarray(targets, dtype=float), indexing="ij")
    return max_loss_for_target(s_, Rg, Gg, b_)


def rtt_table(s_, losses, targets, b_=1.0):
    """Table of :func:`max_rtt_for_target`: rows = loss event rates, columns = targets (bytes/s)."""
    Pg, Gg = np.meshgrid(np.asarray(losses, dtype=float), np.asarray(targets, dtype=float), indexing="ij")
    return max_rtt_for_target(s_, Pg, Gg, b_)


# ---------------------------------------------------------------------------------------------
# TCP-friendliness of gTFRC


def friendliness_ratio(s_, R_, p_, g_, b_=1.0, t_rto=None):
    """X_gTFRC / X_TFRC = max(X_calc, g) / X_calc (no receive cap): 1 where gTFRC is TCP-fair, > 1 beyond."""
    return gtfrc_rate(s_, R_, p_, g_, None, b_, t_rto) / tfrc_rate(s_, R_, p_, b_, t_rto)


def exceeds_fair_rate(s_, R_, p_, g_, b_=1.0, t_rto=None):
    """Boolean region where gTFRC's target exceeds the TCP-fair rate: g > X_calc(s, R, p), i.e. p > p_max(g)."""
    return np.asarray(g_, dtype=float) > tfrc_rate(s_, R_, p_, b_, t_rto)
