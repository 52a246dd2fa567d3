"""Steady state of a finite queue with per-colour, queue-dependent admission (WRED / RIO / n-RED).

The queue: three colours arrive as independent Poisson streams (rates
``lam[c]``, packets/s); service is exponential with rate ``mu`` (packets/s, the
class's share of the link divided by the mean packet length); the buffer holds
``K`` packets, counting the one in transmission, and an arrival to a full buffer
is dropped. ``q`` -- the queue length the dropper sees -- is the number in the
buffer at the arrival instant (PASTA: arrivals see time averages). Two
approximations of the EWMA average (Takeo & Tasaka 2003, section II.A):

* **instantaneous** (``alpha -> 1``): the average equals the current queue; a
  colour-c arrival meeting ``n`` packets is admitted with ``1 - P_c(n)``. Under
  WRED the admission depends on ``n`` alone and ``n`` is a birth-death chain with
  product form (Kleinrock, Queueing Systems I, eq. 3.11):
  ``pi_n = pi_0 prod_{k<n} lambda(k)/mu`` with ``lambda(k) = sum_c lam_c (1 - P_c(k))``.
  RIO and n-RED read per-colour counts, so the state is ``(n0, n1, n2)`` and the
  chain is solved numerically; the colour of a departing packet is taken to be
  ``c`` with probability ``n_c/n`` (random-order composition -- the same choice as
  ``models/wred.prism``; exact in ``n``, an approximation of FIFO composition).
* **fixed average** (small ``alpha``): the average is a constant equal to its
  own stationary mean; each colour is thinned by a constant ``P_c(avg)``; the
  queue is M/M/1/K, and ``avg`` solves ``avg = E[q_counted](avg)`` (a fixed point).

Per-colour drop probability ``D_c = sum_n pi_n (1 - a_c(n))`` (with ``a_c(K) = 0``: the buffer limit drops
first, so a profile whose ``max_th`` -- or ``min_th`` -- lies above ``K`` acts only on the queue lengths below
``K``: the drop probability never reaches ``1 / P_d`` there, or is 0 before the buffer is full);
per-colour mean delay of admitted packets (FIFO, exponential service: an
admitted packet meeting ``n`` packets waits ``(n+1)/mu``)
``W_c = sum_n pi_n a_c(n) (n+1)/mu / sum_n pi_n a_c(n)``.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import sympy as sp
from scipy import sparse

from qosbound.analytic.wred import P_GENTLE, P_WRED, Profile, avg_counts, avr, max_th, min_th, P_d
from qosbound.errors import ScenarioError
from qosbound.markov import stationary

__all__ = ["QueueSolution", "solve", "instantaneous", "fixed_average", "RATIO", "ratio_expr", "PI_MM1K", "L_MM1K",
           "PI_MM1K_HEAVY", "L_MM1K_HEAVY", "mm1k_mean", "mm1k_distribution", "admission", "composition_chain"]

lam0, lam1, lam2, mu = sp.symbols("lambda_0 lambda_1 lambda_2 mu", positive=True)
n_sym, K_sym = sp.symbols("n K", integer=True, nonnegative=True)
rho = sp.Symbol("rho", positive=True)


def _admit(gentle: bool, lo, hi, pd):
    P = P_GENTLE if gentle else P_WRED
    return 1 - P.subs({avr: n_sym, min_th: lo, max_th: hi, P_d: pd})


_lo = sp.symbols("lo0:3", nonnegative=True)
_hi = sp.symbols("hi0:3", positive=True)
_pd = sp.symbols("pd0:3", positive=True)


def ratio_expr(gentle: bool = False):
    """lambda(n)/mu for WRED under the instantaneous approximation (birth-death product-form ratio)."""
    lams = (lam0, lam1, lam2)
    return sum(lams[c] * _admit(gentle, _lo[c], _hi[c], _pd[c]) for c in range(3)) / mu


#: Kleinrock eq. (3.11) ratio lambda(n)/mu for WRED (alpha -> 1).
RATIO = ratio_expr(False)
#: M/M/1/K stationary probability (Kleinrock, section 3.6): pi_n = (1-rho) rho^n / (1 - rho^(K+1)).
PI_MM1K = (1 - rho) * rho ** n_sym / (1 - rho ** (K_sym + 1))
#: M/M/1/K mean number in system: rho/(1-rho) - (K+1) rho^(K+1) / (1 - rho^(K+1)).
L_MM1K = rho / (1 - rho) - (K_sym + 1) * rho ** (K_sym + 1) / (1 - rho ** (K_sym + 1))


@lru_cache(maxsize=None)
def _ratio_fn(gentle: bool):
    return sp.lambdify((n_sym, lam0, lam1, lam2, mu, *_lo, *_hi, *_pd), ratio_expr(gentle), "numpy")


@lru_cache(maxsize=None)
def _admit_fn(gentle: bool):
    lo, hi, pd = sp.symbols("lo hi pd", positive=True)
    return sp.lambdify((n_sym, lo, hi, pd), _admit(gentle, lo, hi, pd), "numpy")


#: The same two formulas divided through by rho^(K+1), for rho > 1: no overflow at large K.
PI_MM1K_HEAVY = (rho - 1) * rho ** (n_sym - K_sym - 1) / (1 - rho ** (-(K_sym + 1)))
L_MM1K_HEAVY = rho / (1 - rho) + (K_sym + 1) / (1 - rho ** (-(K_sym + 1)))

_pi_light = sp.lambdify((n_sym, rho, K_sym), PI_MM1K, "numpy")
_L_light = sp.lambdify((rho, K_sym), L_MM1K, "numpy")
_pi_heavy = sp.lambdify((n_sym, rho, K_sym), PI_MM1K_HEAVY, "numpy")
_L_heavy = sp.lambdify((rho, K_sym), L_MM1K_HEAVY, "numpy")


#: Below this distance of the load from 1 the mean is summed from the distribution: the closed form
#: L_MM1K is a difference of two terms of size ~1/|1 - rho| and loses ~eps/(1 - rho)^2 to cancellation (it
#: returned -1 for K = 1 at rho = 1 + 2e-9 and 0.67 instead of 0.5 at rho = 1 + 1e-8).
_NEAR_ONE = 0.1


def mm1k_distribution(r: float, K: int) -> np.ndarray:
    """P(n in system), n = 0..K, of an M/M/1/K system at load ``r`` (PI_MM1K, the divided form above 1;
    uniform, its limit, at r = 1).

    The normalising factor cancels in ``pi / sum(pi)``, so the result is accurate however close ``r`` is to 1.
    """
    nvec = np.arange(K + 1, dtype=float)
    if r == 1.0:
        return np.full(K + 1, 1.0 / (K + 1))
    pi = np.asarray(_pi_light(nvec, r, K) if r < 1.0 else _pi_heavy(nvec, r, K), dtype=float)
    return pi / pi.sum()


def mm1k_mean(r: float, K: int) -> float:
    """Mean number in an M/M/1/K system at load ``r``: L_MM1K (the divided form above 1).

    Within ``_NEAR_ONE`` of r = 1, where L_MM1K cancels, the same quantity is evaluated as the derivative of
    the log of the normalising sum, sum_{n<=K} e^{a n} = expm1((K+1) a) / expm1(a) with a = ln r:
    L = 1/expm1(-a) - (K+1)/expm1(-(K+1) a). Its two terms are ~1/|a| and their difference is at least
    ~0.3/|a| while |a| (K+1) >= 1, so it loses no more than a few ulps there, in O(1) (a buffer of 1e6
    packets costs nothing). Closer still (|a| (K+1) < 1, where L is about K/2) it is sum n pi_n of
    :func:`mm1k_distribution` (K/2 at r = 1).
    """
    if abs(r - 1.0) < _NEAR_ONE:
        a = math.log1p(r - 1.0)
        if abs(a) * (K + 1) >= 1.0:
            with np.errstate(over="ignore"):  # expm1 of a large argument is inf: its term is then 0
                return float(1.0 / np.expm1(-a) - (K + 1) / np.expm1(-(K + 1) * a))
        return float(np.arange(K + 1, dtype=float) @ mm1k_distribution(r, K))
    return float(_L_light(r, K) if r < 1.0 else _L_heavy(r, K))


@dataclass
class QueueSolution:
    """Per-colour drop probabilities and delays, mean queue, and the distribution of the queue length."""

    drop: np.ndarray  # (3,) probability
    delay: np.ndarray  # (3,) s, admitted packets (0 for a colour with no admitted traffic)
    mean_queue: float  # packets, time average
    mean_delay: float  # s, over all admitted packets
    throughput: float  # admitted packets/s
    pi: np.ndarray  # P(n packets in the buffer), n = 0..K
    method: str
    averages: np.ndarray = field(default_factory=lambda: np.zeros(3))  # fixed-average approximation only
    states: int = 0


def _check(lam, mu_, K, prof: Profile):
    lam = np.asarray(lam, dtype=float)
    if lam.shape != (3,) or np.any(lam < 0) or not np.all(np.isfinite(lam)):
        raise ScenarioError("per-colour arrival rates must be three finite non-negative numbers", field="traffic")
    if not (mu_ > 0 and np.isfinite(mu_)):
        raise ScenarioError("service rate must be positive", field="link.rate")
    if int(K) != K or K < 1:
        raise ScenarioError("buffer must be a positive whole number of packets", field="dropper.buffer")
    return lam


def admission(prof: Profile, n) -> np.ndarray:
    """a[c, n] = 1 - P_c(n): admission probability of colour c at queue length n (before the buffer limit)."""
    n = np.asarray(n, dtype=float)
    return np.stack([np.broadcast_to(_admit_fn(prof.gentle)(n, prof.min_th[c], prof.max_th[c], prof.P_d[c]),
                                     n.shape).astype(float) for c in range(3)])


def _finish(pi, adm, lam, mu_, method, nvec) -> QueueSolution:
    """Drop, delay and queue statistics from a distribution over states with queue lengths ``nvec``."""
    K = int(nvec.max()) if len(nvec) else 0
    drop = np.empty(3)
    delay = np.zeros(3)
    for c in range(3):
        acc = pi @ adm[c]
        drop[c] = 1.0 - acc
        if acc > 0:
            delay[c] = (pi * adm[c]) @ ((nvec + 1.0) / mu_) / acc
    thr = float(np.sum(lam * (1.0 - drop)))
    L = float(pi @ nvec)
    pin = np.bincount(nvec.astype(int), weights=pi, minlength=K + 1)
    return QueueSolution(drop=np.clip(drop, 0.0, 1.0), delay=delay, mean_queue=L,
                         mean_delay=L / thr if thr > 0 else 0.0, throughput=thr, pi=pin, method=method,
                         states=len(pi))


def instantaneous(lam, mu_, K: int, prof: Profile) -> QueueSolution:
    """alpha -> 1: product form for WRED, the (n0, n1, n2) chain for RIO / n-RED."""
    lam = _check(lam, mu_, K, prof)
    K = int(K)
    if prof.mode != "wred":
        return composition_chain(lam, mu_, K, prof)
    n = np.arange(K)
    r = np.asarray(_ratio_fn(prof.gentle)(n, *lam, mu_, *prof.min_th, *prof.max_th, *prof.P_d), dtype=float)
    r = np.broadcast_to(r, n.shape)
    # Product form in logs so long buffers do not overflow; pi_n proportional to prod_{k<n} r_k.
    with np.errstate(divide="ignore"):
        logw = np.concatenate([[0.0], np.cumsum(np.log(r))])
    logw -= logw[np.isfinite(logw)].max()
    w = np.where(np.isfinite(logw), np.exp(logw), 0.0)
    pi = w / w.sum()
    nvec = np.arange(K + 1, dtype=float)
    adm = admission(prof, nvec)
    adm[:, K] = 0.0
    return _finish(pi, adm, lam, mu_, "instantaneous (alpha -> 1), birth-death product form", nvec)


def _states(K: int) -> np.ndarray:
    """All (n0, n1, n2) with n0 + n1 + n2 <= K, in lexicographic order."""
    g = np.indices((K + 1, K + 1, K + 1)).reshape(3, -1).T
    return g[g.sum(axis=1) <= K].astype(np.int64)


def composition_chain(lam, mu_, K: int, prof: Profile, return_chain: bool = False):
    """alpha -> 1 with per-colour counts (n0, n1, n2): the CTMC solved with SciPy's sparse LU."""
    lam = np.asarray(lam, dtype=float)
    S = _states(K)
    M = avg_counts(prof.mode)
    ntot = S.sum(axis=1)
    counted = S @ M.T  # counted[s, c]: the queue colour c's average reads
    adm = np.stack([prof.prob(c, counted[:, c].astype(float)) for c in range(3)])
    adm = 1.0 - adm
    adm[:, ntot >= K] = 0.0
    lookup = np.full((K + 2, K + 2, K + 2), -1, dtype=np.int64)
    lookup[S[:, 0], S[:, 1], S[:, 2]] = np.arange(len(S))
    rows, cols, vals = [], [], []
    src = np.arange(len(S))
    for c in range(3):
        e = np.zeros(3, dtype=np.int64)
        e[c] = 1
        ok = (adm[c] > 0) & (lam[c] > 0)
        T = S[ok] + e
        rows.append(src[ok]); cols.append(lookup[T[:, 0], T[:, 1], T[:, 2]]); vals.append(lam[c] * adm[c, ok])
        ok = S[:, c] > 0
        T = S[ok] - e
        rows.append(src[ok]); cols.append(lookup[T[:, 0], T[:, 1], T[:, 2]])
        vals.append(mu_ * S[ok, c] / ntot[ok])
    rows, cols, vals = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    n = len(S)
    Q = sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))
    Q = Q - sparse.diags(np.asarray(Q.sum(axis=1)).ravel())
    pi = stationary(Q)
    sol = _finish(pi, adm, lam, mu_, f"instantaneous (alpha -> 1), {prof.mode} composition chain",
                  ntot.astype(float))
    if return_chain:
        return sol, S, Q, pi
    return sol


def fixed_average(lam, mu_, K: int, prof: Profile, tol: float = 1e-12) -> QueueSolution:
    """Small alpha: constant averages equal to their stationary means; M/M/1/K with constant thinning."""
    lam = _check(lam, mu_, K, prof)
    K = int(K)
    idx = np.array(_IDX[prof.mode])
    # Averages a_k = mean number of packets of colours 0..k (k = 0, 1, 2).
    cum = np.tril(np.ones((3, 3)))

    def stats(a):
        p = np.array([float(prof.prob(c, a[idx[c]])) for c in range(3)])
        lt = lam * (1.0 - p)
        tot = lt.sum()
        if tot <= 0:
            return p, 0.0, np.zeros(3), 0.0
        r = tot / mu_
        L = mm1k_mean(r, K)
        return p, L, L * lt / tot, r

    def F(a):
        return cum @ stats(a)[2] - a

    # The map is decreasing in each average (more drops, shorter queue): WRED has a unique scalar root.
    from scipy.optimize import brentq, root

    h = lambda x: (cum @ stats(np.full(3, x))[2])[2] - x  # noqa: E731
    g = brentq(h, 0.0, float(K), xtol=1e-13, rtol=1e-13)
    a = cum @ stats(np.full(3, g))[2]
    if prof.mode == "wred" and abs(h(g)) > 1e-6 * max(1.0, K):
        # No fixed point: P jumps at a threshold (g = max_th of some colour) and the queue map jumps
        # over the diagonal. The average then sits at the jump and the drop probability takes the
        # value inside the jump that makes the mean queue equal to it (a Filippov solution).
        return _at_jump(lam, mu_, K, prof, g)
    if prof.mode != "wred":
        sol = root(F, a, method="hybr", tol=1e-13)
        if sol.success and np.max(np.abs(F(sol.x))) <= 1e-9 * max(1.0, K):
            a = sol.x
        else:
            return _averaged(lam, mu_, K, prof, a, stats, cum)
    p, L, Lc, r = stats(a)
    nvec = np.arange(K + 1, dtype=float)
    pi = mm1k_distribution(r, K)
    adm = np.repeat((1.0 - p)[:, None], K + 1, axis=1)
    adm[:, K] = 0.0
    sol = _finish(pi, adm, lam, mu_, "fixed average (small alpha), M/M/1/K fixed point", nvec)
    sol.averages = a
    return sol


_IDX = {"wred": (2, 2, 2), "rio": (0, 2, 2), "nred": (0, 1, 2)}


def _averaged(lam, mu_, K, prof, a0, stats, cum, steps: int = 3000) -> QueueSolution:
    """RIO / n-RED fixed average when a drop curve's jump leaves no fixed point.

    Mann iteration ``a <- a + g_n (F(a) - a)`` with steps ``g_n = (n + 10)^-0.6``: the
    averages close in on the jump and chatter across it with shrinking amplitude; the drop
    probabilities averaged over the second half of the run are the mixture inside the jump (the
    multi-dimensional analogue of :func:`_at_jump`).
    """
    a = np.array(a0, dtype=float)
    psum = np.zeros(3)
    asum = np.zeros(3)
    cnt = 0
    for n in range(steps):
        p, L, Lc, r = stats(a)
        a = a + (n + 10.0) ** -0.6 * (cum @ Lc - a)
        if n >= steps // 2:
            psum += p
            asum += a
            cnt += 1
    p = psum / cnt
    abar = asum / cnt
    # Make it consistent: the colour whose probability chatters sits on its jump; find the value
    # inside the jump for which its average equals the threshold, the other averages at their fixed point.
    j = int(np.argmax(np.abs(p - np.array([float(prof.prob(c, abar[idx])) for c, idx in
                                            enumerate(_IDX[prof.mode])]))))
    k = _IDX[prof.mode][j]
    g = float(prof.max_th[j])
    from scipy.optimize import brentq, root

    lo_p = float(prof.prob(j, g - 1e-9 * g))
    hi_p = float(prof.prob(j, g + 1e-9 * g))

    def inner(th):
        pj = lo_p + th * (hi_p - lo_p)

        def stats_j(x):
            pp, L, Lc, r = stats(x)
            pp = pp.copy()
            pp[j] = pj
            lt = lam * (1.0 - pp)
            tot = lt.sum()
            rr = tot / mu_
            LL = mm1k_mean(rr, K)
            return pp, cum @ (LL * lt / tot if tot > 0 else np.zeros(3))

        sol = root(lambda x: stats_j(x)[1] - x, abar, method="hybr", tol=1e-13)
        return sol.x, stats_j(sol.x)[0]

    try:
        th = brentq(lambda t: inner(t)[0][k] - g, 0.0, 1.0, xtol=1e-12)
        abar, p = inner(th)
    except ValueError:
        pass
    sol = _fixed_p_solution(lam, mu_, K, p, "fixed average (small alpha), M/M/1/K, averages held at a "
                            "threshold jump")
    sol.averages = abar
    return sol


def _fixed_p_solution(lam, mu_, K: int, p, label: str) -> QueueSolution:
    """M/M/1/K with per-colour admission probabilities ``1 - p`` that do not depend on the queue."""
    r = float(np.sum(lam * (1.0 - p))) / mu_
    nvec = np.arange(K + 1, dtype=float)
    pi = mm1k_distribution(r, K)
    adm = np.repeat((1.0 - p)[:, None], K + 1, axis=1)
    adm[:, K] = 0.0
    return _finish(pi, adm, lam, mu_, label, nvec)


def _at_jump(lam, mu_, K, prof: Profile, g: float) -> QueueSolution:
    """Fixed-average solution when the average settles on a discontinuity of P at ``g``."""
    from scipy.optimize import brentq

    eps = 1e-9 * max(1.0, g)
    lo = np.array([float(prof.prob(c, g - eps)) for c in range(3)])
    hi = np.array([float(prof.prob(c, g + eps)) for c in range(3)])

    def L_of(p):
        r = float(np.sum(lam * (1.0 - p))) / mu_
        return mm1k_mean(r, K)

    th = brentq(lambda t: L_of(lo + t * (hi - lo)) - g, 0.0, 1.0, xtol=1e-14)
    p = lo + th * (hi - lo)
    sol = _fixed_p_solution(lam, mu_, K, p, "fixed average (small alpha), M/M/1/K, average held at a "
                            "threshold jump")
    sol.averages = np.full(3, g)
    return sol


def solve(lam, mu_, K: int, prof: Profile, approximation: str = "instantaneous") -> QueueSolution:
    """Dispatch to :func:`instantaneous` or :func:`fixed_average`."""
    if approximation == "instantaneous":
        return instantaneous(lam, mu_, K, prof)
    if approximation == "fixed-average":
        return fixed_average(lam, mu_, K, prof)
    raise ScenarioError(f"unknown approximation '{approximation}'", field="approximation")
