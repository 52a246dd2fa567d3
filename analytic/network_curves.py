"""End-to-end network-calculus formulas for a flow crossing ports in tandem: the FIFO residual service a flow
gets inside its class aggregate, a flow's arrival curve after a hop, and the two end-to-end bounds built from
them (total flow analysis, separated flow analysis).

Sources: J.-Y. Le Boudec and P. Thiran, *Network Calculus*, Springer LNCS 2050, 2001 (LBT): Theorem 1.4.2
(delay bound), Theorem 1.4.6 (concatenation of service curves), Section 1.4.3 and Theorem 1.4.3 (output
bound), Section 6.2.2 (FIFO minimum service curves, with their rate-latency case: a FIFO aggregate served
with ``beta_{R,T}``, the other flows constrained by ``gamma_{r,b}``, offers one flow ``beta_{R - r, T + b/R}``);
J. B. Schmitt and F. A. Zdarsky, "The DISCO network calculator -- a toolbox for worst case analysis", VALUETOOLS
2006 (TFA and SFA as named here); A. Bouillard, M. Boyer and E. Le Corronc, *Deterministic Network Calculus*,
Wiley-ISTE 2018, Chapter 7 (the same analyses on feed-forward networks).

Units as in :mod:`qosbound.analytic.curves`: bytes, bit/s, seconds (the factor 8 between bytes and bits).

**Output after a hop.** A flow whose packets each spend at most ``D`` s at a server (arrival to last bit out),
with arrival curve ``alpha`` at its input, has ``alpha(t + D)`` at its output: the packets leaving in a closed
window ``[s, t]`` arrived in ``[s - D, t]``. For a token bucket ``(b, r)`` that is ``(b + r D / 8, r)``
(:data:`shifted_burst_expr`). A propagation delay shifts every packet by the same time and changes no curve.

**FIFO residual** (LBT Section 6.2.2). In a FIFO aggregate with service curve ``beta_{R,T}`` whose other flows
have the token bucket ``(b_x, r_x)``, ``r_x < R``, the flow of interest has the rate-latency service curve
``(R - r_x, T + 8 b_x / R)`` (:data:`fifo_residual_rate_expr`, :data:`fifo_residual_latency_expr`).

**TFA** (total flow analysis): the sum over the hops of each hop's delay bound, each computed for the class
aggregate with every flow's arrival curve propagated to that hop (bursts grow hop by hop), plus the links'
propagation delays.

**SFA** (separated flow analysis, pay bursts only once): the flow's residual services concatenated (LBT Theorem
1.4.6: ``(min R_h, sum T_h)``), the delay bound of its source curve through that one server (LBT Theorem 1.4.2:
``sum T_h + 8 e / min R_h``, ``e`` the source curve's burst against ``min R_h``), plus the propagation delays
(:data:`sfa_delay_expr` with the sums done by the caller) -- and one packet per hop after the first. A port's
class guarantee is per packet (its last bit leaves by ``max_m (a_m + T + 8 sum_{j=m..n} L_j / R)``, a
guaranteed-rate node), which is a rate-latency service element followed by a packetizer (LBT Theorem 2.1.3); a
packetizer holds back at most one packet of the flow, ``L`` bytes (LBT Section 1.7), so between the ``K`` hops the
``K - 1`` packetizers lower the concatenated service by ``(K - 1) L`` bytes: ``sum T_h + 8 (e + (K - 1) L) / min
R_h``. (The last packetizer adds nothing: the delay runs to the last bit.)

**FIFO residual family** (LBT Proposition 6.2.1 and Section 6.2.2: in a FIFO aggregate with service curve
``beta``, the other flows constrained by ``alpha_x``, the flow of interest has the service curve ``beta_theta(t) =
[beta(t) - alpha_x(t - theta)]^+ 1{t > theta}`` for every ``theta >= 0``). For ``beta_{R,T}`` and the bucket
``(b_x, r_x)``, ``r_x < R``, and ``theta >= T + 8 b_x / R``, it is ``delta_theta ^ beta_{R - r_x, T'(theta)}`` (the
minimum of a pure delay ``theta`` and a rate-latency curve) with ``T'(theta) = (R T + 8 b_x - r_x theta) / (R -
r_x)`` (:data:`fifo_theta_latency_expr`): for ``t > theta`` it is ``R (t - T) - 8 b_x - r_x (t - theta)``, which is
``(R - r_x) (t - T'(theta))``, and at ``theta = T + 8 b_x / R`` it is the residual above. A flow of bucket
``(e, r)`` through ``delta_D`` followed by ``beta_{R,T}`` and ``n`` packetizers has the delay bound
``D + T + 8 (e + n L) / R`` (:data:`theta_term_expr`; LBT Theorem 1.4.2 and Section 1.7).

**A hop's waiting time, approximately** (the end-to-end approximation of
:mod:`qosbound.systems.network.approximation`): the wait ``W`` before the ring admits a packet, taken as 0 with
probability ``1 - pi`` and otherwise exponential, with its mean ``w`` kept: ``P(W > t) = pi exp(-pi t / w)``
(:data:`wait_ccdf_expr`). In an M/G/1 queue ``pi`` is the utilisation (an arrival finds the server busy with
that probability, by PASTA) and the waiting time tends to an exponential law in heavy traffic (J. F. C. Kingman,
"On queues in heavy traffic", Journal of the Royal Statistical Society B 24, 1962); the form keeps the atom and
the mean exactly and approximates the shape. Capped at ``c`` its mean is ``E[min(W, c)]``, the CCDF's integral
over ``[0, c]`` (:data:`wait_capped_mean_expr`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import sympy as sp

__all__ = ["b", "r", "D", "R", "T", "b_x", "r_x", "e", "K", "L", "shifted_burst_expr", "fifo_residual_rate_expr",
           "fifo_residual_latency_expr", "sfa_delay_expr", "shifted_burst", "fifo_residual", "sfa_delay", "pi", "w",
           "t", "c", "theta", "n", "fifo_theta_latency_expr", "theta_term_expr", "fifo_theta_latency", "theta_term",
           "wait_ccdf_expr", "wait_capped_mean_expr", "wait_ccdf", "wait_capped_mean"]

b = sp.Symbol("b", nonnegative=True)  # bytes, a token bucket's depth
r = sp.Symbol("r", nonnegative=True)  # bit/s, its rate
D = sp.Symbol("D", nonnegative=True)  # s, a hop's delay bound
R = sp.Symbol("R", positive=True)  # bit/s, a service rate
T = sp.Symbol("T", nonnegative=True)  # s, a service latency
b_x = sp.Symbol("b_x", nonnegative=True)  # bytes, the other flows' burst in the FIFO aggregate
r_x = sp.Symbol("r_x", nonnegative=True)  # bit/s, their rate (r_x < R)
e = sp.Symbol("e", nonnegative=True)  # bytes, the flow's burst against the end-to-end rate
K = sp.Symbol("K", positive=True, integer=True)  # hops
L = sp.Symbol("L", positive=True)  # bytes, the flow's largest packet
pi = sp.Symbol("pi", positive=True)  # 1, the probability of waiting at all (pi <= 1)
w = sp.Symbol("w", positive=True)  # s, the mean wait
t = sp.Symbol("t", nonnegative=True)  # s
c = sp.Symbol("c", positive=True)  # s, a cap on the wait
theta = sp.Symbol("theta", nonnegative=True)  # s, the FIFO residual's parameter
n = sp.Symbol("n", nonnegative=True, integer=True)  # packetizers

#: Depth of a token bucket after a hop of delay bound D, bytes (LBT Section 1.4.3).
shifted_burst_expr = b + r * D / 8
#: FIFO residual service of one flow in an aggregate (LBT Section 6.2.2), bit/s and s.
fifo_residual_rate_expr = R - r_x
fifo_residual_latency_expr = T + 8 * b_x / R
#: SFA's end-to-end bound through the concatenated service (R, T) of K hops (LBT Theorems 1.4.6, 1.4.2, 2.1.3), s.
sfa_delay_expr = T + 8 * (e + (K - 1) * L) / R
#: Latency of the FIFO residual family's rate-latency part for theta >= T + 8 b_x / R (LBT Proposition 6.2.1), s.
fifo_theta_latency_expr = (R * T + 8 * b_x - r_x * theta) / (R - r_x)
#: A bucket's delay bound through a pure delay D, a rate-latency (R, T) and n packetizers (LBT 1.4.2, 1.7), s.
theta_term_expr = D + T + 8 * (e + n * L) / R
#: A hop's waiting time, approximately: an atom 1 - pi at 0, an exponential tail of mean w overall (Kingman 1962).
wait_ccdf_expr = pi * sp.exp(-pi * t / w)
#: Its mean when capped at c, E[min(W, c)]: the integral of the CCDF over [0, c], s.
wait_capped_mean_expr = sp.simplify(sp.integrate(wait_ccdf_expr, (t, 0, c)))


@lru_cache(maxsize=None)
def _fn(name: str):
    table = {"shifted": ((b, r, D), shifted_burst_expr),
             "res_rate": ((R, r_x), fifo_residual_rate_expr),
             "res_latency": ((T, b_x, R), fifo_residual_latency_expr),
             "sfa": ((T, e, R, K, L), sfa_delay_expr),
             "wait_ccdf": ((pi, w, t), wait_ccdf_expr),
             "theta_latency": ((R, T, b_x, r_x, theta), fifo_theta_latency_expr),
             "theta_term": ((D, T, e, n, L, R), theta_term_expr),
             "wait_capped_mean": ((pi, w, c), wait_capped_mean_expr)}
    args, expr = table[name]
    return sp.lambdify(args, expr, "numpy" if name in ("wait_ccdf", "theta_latency", "theta_term") else "math")


def shifted_burst(burst: float, rate: float, delay: float) -> float:
    """The depth of bucket ``(burst, rate)`` after a hop of delay bound ``delay``, bytes."""
    return float(_fn("shifted")(burst, rate, delay))


def fifo_residual(rate: float, latency: float, cross_burst: float, cross_rate: float) -> tuple[float, float]:
    """(rate bit/s, latency s) one flow of a FIFO aggregate served at ``(rate, latency)`` gets when the other
    flows have the bucket ``(cross_burst, cross_rate)``; requires ``cross_rate < rate``."""
    return float(_fn("res_rate")(rate, cross_rate)), float(_fn("res_latency")(latency, cross_burst, rate))


def sfa_delay(latency: float, burst: float, rate: float, hops: int, largest: float) -> float:
    """``T + 8 (e + (K - 1) L) / R``, s: the flow's delay bound through the concatenated service of ``hops`` hops,
    ``largest`` its largest packet."""
    return float(_fn("sfa")(latency, burst, rate, hops, largest))


def wait_ccdf(prob: float, mean: float, x):
    """``P(W > x)`` of :data:`wait_ccdf_expr` for the waiting probability ``prob`` and mean ``mean`` (s); ``x`` an
    array of seconds."""
    return _fn("wait_ccdf")(prob, mean, x)


def wait_capped_mean(prob: float, mean: float, cap: float) -> float:
    """``E[min(W, cap)]`` of :data:`wait_capped_mean_expr`, s (``cap`` may be inf: the mean)."""
    return mean if math.isinf(cap) else float(_fn("wait_capped_mean")(prob, mean, cap))


def fifo_theta_latency(rate, latency, cross_burst, cross_rate, th):
    """``T'(theta)`` of :data:`fifo_theta_latency_expr`, s (arrays broadcast)."""
    return _fn("theta_latency")(rate, latency, cross_burst, cross_rate, th)


def theta_term(delay, latency, burst, packetizers, largest, rate):
    """``D + T + 8 (e + n L) / R`` of :data:`theta_term_expr`, s (arrays broadcast)."""
    return _fn("theta_term")(delay, latency, burst, packetizers, largest, rate)
