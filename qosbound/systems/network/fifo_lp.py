"""A flow's end-to-end delay bound over FIFO hops from the FIFO residual family, its parameters chosen by a linear
programme (HiGHS): tighter than separated flow analysis, never looser.

**Setting** (that of SFA, :mod:`qosbound.systems.network.bounds`). At each hop ``h = 1..K`` of the flow, its
class (its priority level) is a FIFO aggregate served with the min-plus service curve ``beta_h = (R_h, T_h)``
(:func:`qosbound.systems.port.bounds.class_bounds`) followed by a packetizer (the port's guarantee is per packet);
the other flows of the aggregate there have the token bucket ``(b_h, r_h)`` of TFA (an arrival curve of theirs
at that hop, by induction along the feed-forward order), ``r_h < R_h``; the flow has the arrival curve ``alpha``
at its source, ``L`` its largest packet.

**Theorem.** For every ``theta`` with ``theta_h >= theta0_h = T_h + 8 b_h / R_h``, every packet of the flow
spends at most

    B(theta) = max over S of  sum_{h not in S} theta_h + sum_{h in S} T'_h(theta_h) + 8 (e_S + n_S L) / R_S

at the ports (arrival at the first to the last bit out of the last), ``S`` ranging over the subsets of the hops,
``R'_h = R_h - r_h``, ``T'_h`` of :data:`qosbound.analytic.network_curves.fifo_theta_latency_expr` taken at
least 0 (it falls below 0 for ``theta_h`` above ``(R_h T_h + 8 b_h) / r_h``; a larger latency is a smaller
curve, so still a service curve, and the convolution of rate-latency curves below needs latencies of at least
0), ``R_S = min_{h in S} R'_h``, ``e_S = sup_u (alpha(u) - R_S u / 8)``, ``n_S`` the hops of ``S`` other than
the last; the term of the empty ``S`` is ``sum theta_h``.

*Proof.* (1) At hop ``h`` the flow has the service curve ``beta_theta(t) = [beta_h(t) - alpha_x(t - theta_h)]^+
1{t > theta_h}`` for any ``theta_h >= 0`` (Le Boudec & Thiran, *Network Calculus*, 2001, Proposition 6.2.1: FIFO
minimum service curves; it needs no strictness), which for ``theta_h >= theta0_h`` is ``delta_{theta_h} ^
beta_{R'_h, T'_h(theta_h)}`` (:mod:`qosbound.analytic.network_curves`). (2) The packetizer after the service
element leaves the flow ``[g - L]^+`` of a service curve ``g`` (LBT Theorem 1.7.1): ``delta_theta ^ [beta' -
L]^+``, as ``[delta_theta - L]^+ = delta_theta``; the last hop's packetizer adds nothing (the delay runs to the
last bit). (3) The hops concatenate (LBT Theorem 1.4.6) and min-plus convolution distributes over the minimum,
so the flow's end-to-end service curve is the minimum over ``S`` of ``delta_{sum_{h not in S} theta_h} (x)
(x)_{h in S} [beta'_h - L 1{h < K}]^+``, each at least ``delta_D (x) beta_{R_S, sum_S T'_h + 8 n_S L / R_S}``
(a convolution of rate-latency curves is the least rate and the summed latency, and ``[f - a]^+ (x) [g - b]^+ >=
[f (x) g - a - b]^+``). (4) The delay bound through a minimum of service curves is the largest of the bounds
through each (the horizontal deviation from a minimum is the maximum of the deviations), and through
``delta_D (x) beta_{R,T}`` it is ``D + T + 8 e / R`` (LBT Theorem 1.4.2, shifted by ``D``):
:data:`~qosbound.analytic.network_curves.theta_term_expr`. Q.E.D.

``B(theta0)`` is at most SFA's bound (every term is ``sum theta0_h + 8 (e_S + n_S L) / R_S``, and ``R_S >= min_h
R'_h``, ``e_S <= e``, ``n_S <= K - 1``), and for one hop ``min B`` is ``T + 8 (b + e) / R``, the FIFO aggregate's
own bound. The linear programme ``min z`` subject to ``z >= term_S(theta)`` for every ``S`` and ``theta >= theta0``
and ``T'_h(theta_h) >= 0`` (each ``term_S`` is then linear in ``theta``) chooses ``theta``; the bound reported is
``B`` recomputed at the solver's ``theta`` (raised to ``theta0`` where it fell below), so the solver's tolerance
touches the bound's tightness, never its soundness. The flows' programmes are independent and solved as one
block-diagonal programme. Paths of more than :data:`MAX_HOPS` hops (``2^K`` constraints) are left to TFA and SFA.

This is separated flow analysis over the FIFO residual family with its parameters optimised, as the least upper
delay bound of Lenzini, Mingozzi & Stea ("A methodology for computing end-to-end delay bounds in FIFO-multiplexing
tandems", Performance Evaluation 65, 2008) optimises them; it keeps SFA's per-hop cross buckets from TFA.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from qosbound.analytic.network_curves import fifo_theta_latency, theta_term

__all__ = ["LPPath", "MAX_HOPS", "bound_at", "solve", "usable"]

#: The longest path the programme takes (2^K constraints per flow).
MAX_HOPS = 12


@dataclass(frozen=True)
class LPPath:
    """One flow's inputs: per hop its class's service ``(R bit/s, T s)`` and the other flows' bucket there
    ``(b bytes, r bit/s)``; ``excess[h]`` the flow's source burst against ``R_h - r_h`` (bytes); ``largest`` its
    largest packet (bytes)."""

    rate: tuple
    latency: tuple
    cross_burst: tuple
    cross_rate: tuple
    excess: tuple
    largest: float

    @property
    def hops(self) -> int:
        return len(self.rate)

    def theta0(self) -> np.ndarray:
        """The least parameters, ``T_h + 8 b_h / R_h`` (s): SFA's residuals."""
        return np.asarray(self.latency) + 8.0 * np.asarray(self.cross_burst) / np.asarray(self.rate)


@lru_cache(maxsize=None)
def _subsets(K: int) -> np.ndarray:
    """Every subset of ``K`` hops as a boolean row, the empty one first."""
    return ((np.arange(2 ** K)[:, None] >> np.arange(K)[None, :]) & 1).astype(bool)


def _terms(p: LPPath):
    """Per subset ``S``: (which hops, ``R_S``, ``e_S``, ``n_S``), and per hop ``T'_h(theta) = c_h - d_h theta``."""
    K = p.hops
    M = _subsets(K)
    R, T, bx, rx = (np.asarray(x, float) for x in (p.rate, p.latency, p.cross_burst, p.cross_rate))
    Rp = R - rx
    c = fifo_theta_latency(R, T, bx, rx, 0.0)
    d = c - fifo_theta_latency(R, T, bx, rx, 1.0)
    masked = np.where(M, Rp[None, :], np.inf)
    RS = masked.min(axis=1)
    e = np.asarray(p.excess, float)[masked[1:].argmin(axis=1)]
    nS = M[:, :K - 1].sum(axis=1)
    return M, RS, e, nS, c, d


def bound_at(p: LPPath, th: np.ndarray, terms=None) -> float:
    """``B(theta)`` of the module's theorem, s (``theta >= theta0``); ``terms`` the path's :func:`_terms` when
    already computed."""
    M, RS, e, nS, c, d = terms or _terms(p)
    Tp = np.maximum(c - d * th, 0.0)  # a latency below 0 is taken as 0: a smaller curve, still a service curve
    D = (~M).astype(float) @ th
    T = M.astype(float) @ Tp
    terms = theta_term(D[1:], T[1:], e, nS[1:], p.largest, RS[1:])
    return float(max(D[0], np.max(terms)))


def solve(paths: list[LPPath]) -> list[tuple[float, np.ndarray]]:
    """Per path: (its bound ``B`` at the programme's parameters, never above ``B(theta0)``, s; the parameters)."""
    rows, cols, vals, rhs, lo, hi = [], [], [], [], [], []
    offset, row, scales, all_terms = [], 0, [], []
    for p in paths:
        K = p.hops
        M, RS, e, nS, c, d = tm = _terms(p)
        all_terms.append(tm)
        th0 = p.theta0()
        u = max(float(th0.sum()), 1e-12)  # variables in units of sum theta0: a well-scaled programme
        scales.append(u)
        base = len(lo)
        offset.append(base)
        const = M.astype(float) @ c + np.concatenate(([0.0], theta_term(0.0, 0.0, e, nS[1:], p.largest, RS[1:])))
        coef = np.where(M, -d[None, :], 1.0)
        S = M.shape[0]
        rows.append(np.repeat(np.arange(row, row + S), K + 1))
        cols.append(np.tile(np.arange(base, base + K + 1), S))
        vals.append(np.hstack([coef, -np.ones((S, 1))]).ravel())
        rhs.append(-const / u)
        row += S
        lo += list(th0 / u) + [0.0]
        hi += list(np.where(d > 0, c / np.where(d > 0, d, 1.0), np.inf) / u) + [np.inf]  # T'_h(theta_h) >= 0
    if not paths:
        return []
    n = len(lo)
    cost = np.zeros(n)
    for base, p in zip(offset, paths):
        cost[base + p.hops] = 1.0
    A = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(row, n)).tocsr()
    res = linprog(cost, A_ub=A, b_ub=np.concatenate(rhs), bounds=np.column_stack([lo, np.maximum(hi, lo)]),
                  method="highs")
    out = []
    for base, p, u, tm in zip(offset, paths, scales, all_terms):
        th0 = p.theta0()
        at0 = bound_at(p, th0, tm)
        if res.status != 0:
            out.append((at0, th0))
            continue
        th = np.maximum(np.asarray(res.x[base:base + p.hops]) * u, th0)  # within [theta0, c / d] up to tolerance
        b = bound_at(p, th, tm)
        out.append((b, th) if b < at0 else (at0, th0))
    return out


def usable(p: LPPath) -> bool:
    """Whether the programme takes the path: at most :data:`MAX_HOPS` hops, finite inputs."""
    return p.hops <= MAX_HOPS and all(math.isfinite(x) for x in (*p.rate, *p.latency, *p.cross_burst, *p.excess))
