"""A sound upper bound on the EF delay and loss of the PQ + TxQ port with a packet-unit tx-ring: the staged
ring-count chain with an adversary choosing the order within each stage (a Markov decision process).

The system and the notation are those of :mod:`qosbound.models.pq_txq_ring` (ring of ``Q_t`` packets, each in
one unit; saturated BE; Poisson EF; ``S`` stages of ``c_1 .. c_S`` positions, stage 1 holding the head). There
the order of the packets within a stage is replaced by exchangeability, which is an approximation (measured
below the exact chain everywhere). Here the same lumped state ``(n, e_1, .., e_S)`` (EF waiting, EF in each
stage) is kept, but the two kinds of choice the lumping leaves open at a departure -- is the head EF or BE,
and for each stage boundary is the front packet of stage ``i+1`` EF or BE -- are made by an ADVERSARY (any
choice the counts allow), not by a coin. That is a Markov decision process, and:

Why it bounds the exact chain (the proof sketch).

1. *The exact system is one policy of the MDP.* Embed the exact system at departure epochs and map its state
   (PQ count, the EF/BE pattern of the ring, the sizes of the BE packets in it) to the lumped state. The kinds
   of the head and of the packets crossing the stage boundaries are functions of the pattern, and the pattern is
   a function of the initial pattern and of the sequence of lumped states (which packet was admitted, where it
   entered): so the exact system's choices are those of a deterministic, history-dependent policy. Given the
   choices, the lumped step has the same law in both: the head's service is ``GEF`` or a BE size independent of
   the past (a BE packet's size is drawn at its admission and influences nothing until it is served), the
   Poisson arrivals during it are independent of the past, and the admission rule (EF when the PQ is not empty
   after them) is the same.
2. *Its reward per step is a function of the lumped state and the choice.* A Poisson EF arrival a time ``u``
   into a service of ``s``, after ``j`` earlier arrivals of that service, with ``n`` waiting, is accepted iff
   ``n + j < PQ`` and leaves after ``D = (s - u) + (n + j + 1) GEF + E' GEF + S_1 + .. + S_{Q_t - 1 - E'}``
   (``E'`` the EF among ring positions 2..``Q_t``; the ``S_i`` i.i.d. BE sizes, independent of the rest given
   the pattern). So the expected number of accepted arrivals of a service with ``D > x`` (and the expected
   number lost, and the expected sum of accepted delays) given the exact state depends only on ``(n``, the
   head's kind, ``E')``: the MDP's reward ``r_x(s, a)``, and the service's expected length ``tau(s, a)``.
3. *Any function h certifies a bound on every policy's rate.* Let ``x(s, a)`` be the exact chain's stationary
   frequency of lumped state ``s`` and choice ``a`` per departure. By 1 it satisfies the MDP's balance equations
   ``sum_a x(j, a) = sum_{s,a} x(s, a) p(j | s, a)``, and the exact long-run reward per unit time is ``sum x r /
   sum x tau``. If ``g tau(s, a) + h(s) >= r(s, a) + sum_j p(j | s, a) h(j)`` for every ``s, a`` (dual
   feasibility of the semi-Markov MDP's linear programme), multiplying by ``x`` and summing cancels ``h`` by the
   balance equations: ``g >= sum x r / sum x tau``. Value iteration on the uniformised MDP (``r / tau`` per unit
   time, ``I + (eta / tau)(P - I)`` as transitions, ``eta < min tau``) gives ``h``, and ``g = max_s (T h - h)(s)``
   satisfies the inequality with ``eta h`` (Odoni's upper end of the bracket): the bound is sound at every
   iteration, not only at convergence; iterating only tightens it.
4. *From rates to the metrics.* Per unit time the exact system accepts ``lambda (1 - loss)`` arrivals. So
   ``loss <= g*_lost / lambda``, ``P(D > x | accepted) <= g*_x / (lambda (1 - loss_ub))``, ``E[D | accepted]
   <= g*_sum / (lambda (1 - loss_ub))``; the CCDF bound is non-increasing in ``x``, so a quantile is at most the
   smallest lattice point where it falls to ``1 - q`` (found by bisection). Every number is on the lattice of
   :mod:`qosbound.models.pq_txq_ring`: ``P(D > x)`` at a lattice point is exact for the reward, and between two
   points the bound takes the lower point's value. (Poisson counts are cut where their tail is below
   ``POISSON_TAIL`` = 1e-16, folded into the largest count kept, as in the approximation: the bound holds up to
   that mass per departure.)

Why not a monotone coupling (measured, ``docs/pq_txq.md``): an EF packet's delay is ``V + GEF`` with ``V``
increasing in the number of BE packets admitted before its arrival (sizes coupled by admission index), but
that number is not monotone in any order of the ring's content: a long BE head delays the next departures, EF
accumulates and is admitted instead of the BE that a short head would have let in. The adversary needs no such
order: it takes, step by step, whichever choice is worst for the reward being bounded (a different policy for
each metric and each ``x``).

Cost and tightness. The MDP has the staged chain's states and at most ``2^S`` choices; one value iteration per
CCDF point (bisection: about ``log2`` of the lattice per quantile). With one position per stage there is no
choice: the MDP is the exact chain and the bound is the exact value. With fewer stages the adversary may
reorder the packets within a stage, which is the whole looseness: it shrinks with every stage (measured:
``benchmarks/bench_ring.py --survey``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from qosbound.errors import ResourceError, ScenarioError
from qosbound.models.budget import Estimate, refuse_over_budget
from qosbound.models.pq_txq_ring import (FINE_PER_EF, FINE_POINTS, MAX_LATTICE, _pois_trunc, _sizes, head_part,
                                         refinement, stage_sizes, stage_states, why_not)

__all__ = ["RingBound", "solve_bound", "estimate_bound", "choose_stages", "BOUND_STATES", "BOUND_STAGED_STATES", "REL_GAP"]

#: The bound is computed when its MDP with one stage has at most this many states (wan100: 4 225, about 4 s).
BOUND_STATES = 1e4
#: It takes the most stages whose MDP stays within this many states (value iteration per CCDF point, with up to
#: 2^S choices per state: measured, more stages tighten the bound slowly -- 10 Mbit/s, ring 16, EF 30 %: +16.6 %
#: over the approximation with one stage, +14.7 % with three, at three times the cost).
BOUND_STAGED_STATES = 3e3
#: Value iteration stops when its bracket on the optimal rate is this tight (relative); the upper end is used.
REL_GAP = 1e-4
#: At most this many value-iteration sweeps per solve (the bound is sound at any sweep; the bracket is reported).
MAX_SWEEPS = 20_000


def choose_stages(QT: int, PQ: int, max_states: float = BOUND_STAGED_STATES) -> int:
    """The most stages (at least one, at most 8 and Q_t) whose MDP fits ``max_states``."""
    S = 1
    while S < QT and stage_states(QT, PQ, S + 1) <= max_states and S + 1 <= 8:
        S += 1
    return S


@dataclass
class RingBound:
    """Upper bounds on the EF delay metrics of accepted packets and on loss (times in seconds)."""

    states: int
    stages: int
    seconds: float
    slot: float  # seconds per refined lattice step
    granule: int
    mean: float
    loss: float
    quantiles: dict = field(default_factory=dict)
    ccdf: dict = field(default_factory=dict)
    solves: int = 0
    worst_gap: float = 0.0  # largest relative width of a value-iteration bracket left (the upper end is used)


class _MDP:
    """The staged chain with the adversary's choices: per action a sparse transition matrix, the head's kind
    (0 EF, 1 BE), the valid states, and the per-step reward ingredients."""

    def __init__(self, p, stages: int):
        why = why_not(p)
        if why is not None:
            raise ScenarioError(f"the ring method does not cover {why}", field="Q_t")
        g, gef, gbe, pbe = _sizes(p)
        self.g, self.gef, self.gbe, self.pbe = g, gef, gbe, pbe
        self.slot_g = g * 8.0 / p.C
        self.a = a = p.lam * self.slot_g
        QT, PQ = int(p.Q_t), int(p.pq_cap)
        self.QT, self.PQ = QT, PQ
        K = len(gbe)
        self.K = K
        serv = np.concatenate([[gef], gbe]).astype(float)
        self.serv = serv
        self.pmfs = [_pois_trunc(a * serv[k], PQ)[0] for k in range(K + 1)]
        sizes = stage_sizes(QT, stages)
        S = len(sizes)
        self.S = S
        dims = [c + 1 for c in sizes] + [PQ + 1]
        grid = np.indices(dims).reshape(len(dims), -1)
        ev, nn = [grid[i] for i in range(S)], grid[S]
        self.n = nn
        self.E = np.sum(ev, axis=0)
        nS = nn.size
        self.nS = nS
        src = np.ravel_multi_index(tuple(ev) + (nn,), dims)
        self.P, self.valid, self.head = [], [], []
        for act in range(1 << S):
            h = act & 1  # 1: the head is EF
            ok = (ev[0] >= 1) if h else (ev[0] < sizes[0])
            moves = [(act >> (i + 1)) & 1 for i in range(S - 1)]
            for i, m in enumerate(moves):
                ok &= (ev[i + 1] >= 1) if m else (ev[i + 1] < sizes[i + 1])
            e2 = [x.copy() for x in ev]
            e2[0] = e2[0] - h
            for i, m in enumerate(moves):
                e2[i] += m
                e2[i + 1] -= m
            rows, cols, vals = [], [], []
            classes = [(0, 1.0)] if h else [(k + 1, pbe[k]) for k in range(K)]
            sel = np.flatnonzero(ok)
            for k, w in classes:
                pm = self.pmfs[k]
                for m in range(len(pm)):
                    n1 = np.minimum(PQ, nn[sel] + m)
                    adm = (n1 > 0).astype(np.int64)
                    e3 = [x[sel] for x in e2]
                    e3[S - 1] = e3[S - 1] + adm
                    rows.append(src[sel])
                    cols.append(np.ravel_multi_index(tuple(e3) + (n1 - adm,), dims))
                    vals.append(np.full(sel.size, w * pm[m]))
            M = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(nS, nS))
            M.sum_duplicates()
            self.P.append(M)
            self.valid.append(ok)
            self.head.append(h)
        self.tau = [np.full(nS, float(gef) if h else float(np.dot(pbe, gbe))) for h in self.head]
        self.eta = 0.9 * min(float(gef), float(np.dot(pbe, gbe)))
        self._ingredients(p)

    def _ingredients(self, p):
        """Per (head class k, n waiting): accepted and lost arrivals per service, the head + PQ part of the
        accepted arrivals' delay (its sum, and the weight exceeding each refined lattice point), and the ring
        part's distribution by E'."""
        from qosbound.models.pq_txq_render import poisson_excess

        a, gef, PQ, QT, K = self.a, self.gef, self.PQ, self.QT, self.K
        serv = self.serv
        gmax = int(max(self.gbe.max(), gef))
        Y = int(serv.max() + (PQ + 1) * gef) + 1
        L = (QT - 1) * gmax + 1
        M = 1
        while gef * M < FINE_PER_EF and 2 * M * (L + Y) <= FINE_POINTS:
            M *= 2
        if (L + Y) * M > MAX_LATTICE:
            raise ResourceError(f"the ring bound's lattice would have {(L + Y) * M:.3g} points; above "
                                f"{MAX_LATTICE:.3g}", field="Q_t")
        self.M, self.Y, self.L = M, Y, L
        Yf = Y * M
        z = np.arange(Yf, dtype=float) / M
        self.acc = np.zeros((K + 1, PQ + 1))
        self.lost = np.zeros((K + 1, PQ + 1))
        self.headsum = np.zeros((K + 1, PQ + 1))
        self.hn = np.zeros((K + 1, PQ + 1, Yf))
        for k in range(K + 1):
            s = serv[k]
            m = a * s
            Jall = min(PQ, len(self.pmfs[k]) + 1)
            jj = np.arange(Jall)
            F, pj1, pj2 = head_part(a, s, gef, Jall, z)
            for n in range(PQ + 1):
                J = min(PQ - n, Jall)
                if J <= 0:
                    self.lost[k, n] = m
                    continue
                acc_n = float(np.sum(pj1[:J])) if J < PQ - n else m - poisson_excess(m, PQ - n)
                self.acc[k, n] = acc_n
                self.lost[k, n] = max(m - acc_n, 0.0)
                sh = n * gef * M
                self.hn[k, n, :sh] = F[J - 1, 0]
                self.hn[k, n, sh:] = F[J - 1, :Yf - sh]
                base = s + (n + jj[:J] + 1) * gef
                self.headsum[k, n] = float(np.sum(base * pj1[:J] - (jj[:J] + 1) / a * pj2[:J])) if a > 0 else 0.0
        # ring part R(E') = E' GEF + the sum of QT-1-E' BE sizes, on the granule lattice: pmf by E'
        pmfR = np.zeros((QT, L + 1))
        cur = np.zeros(L + 1)
        cur[0] = 1.0
        for nb in range(QT):  # nb BE sizes: E' = QT - 1 - nb
            Ep = QT - 1 - nb
            sh = Ep * gef
            pmfR[Ep, sh:] = cur[:L + 1 - sh]
            nxt = np.zeros(L + 1)
            for b, pb in zip(self.gbe, self.pbe):
                nxt[b:] += pb * cur[:L + 1 - b]
            cur = nxt
        self.pmfR = pmfR
        self.sfR = 1.0 - np.cumsum(pmfR, axis=1)  # P(R > rho)
        ES = float(np.dot(self.pbe, self.gbe))
        self.ringmean = np.arange(QT) * gef + (QT - 1 - np.arange(QT)) * ES  # E[R | E']

    def reward(self, per: np.ndarray) -> list[np.ndarray]:
        """Per-step reward of each action from ``per[k, n, E']`` (a function of the head's class k, n waiting and
        E' the EF among ring positions 2..Q_t); invalid actions get -inf."""
        out = []
        for act, h in enumerate(self.head):
            if h:
                r = per[0, self.n, np.maximum(self.E - 1, 0)]
            else:
                Ep = np.minimum(self.E, self.QT - 1)
                r = sum(self.pbe[k] * per[k + 1, self.n, Ep] for k in range(self.K))
            r = np.where(self.valid[act], r, -np.inf)
            out.append(r)
        return out

    def per_ccdf(self, X: int) -> np.ndarray:
        """``per[k, n, E']``: accepted arrivals of a service with D > X refined lattice steps."""
        M, Yf = self.M, self.hn.shape[2]
        rho = np.arange(self.L + 1)
        idx = X - rho * M
        inside = (idx >= 0) & (idx < Yf)
        r_in = rho[inside]
        G = self.hn[:, :, idx[inside]]  # [k, n, rho]
        per = G @ self.pmfR[:, r_in].T  # [k, n, E']
        above = X // M  # rho > X/M: the head + PQ part exceeds a negative threshold: all accepted arrivals count
        tail = self.sfR[:, min(above, self.L)] if above <= self.L else np.zeros(self.QT)
        per += self.hn[:, :, 0][:, :, None] * tail[None, None, :]
        return per

    def gain_steps(self, rewards: list[np.ndarray], h: np.ndarray, sweeps: int):
        """``sweeps`` value-iteration sweeps from ``h``: (upper end, lower end of the bracket, h, sweeps)."""
        rt = [r / t for r, t in zip(rewards, self.tau)]
        coef = [self.eta / t for t in self.tau]
        hi = lo = 0.0
        for _ in range(sweeps):
            best = np.full(self.nS, -np.inf)
            for P, r, c in zip(self.P, rt, coef):
                np.maximum(best, r + h + c * (P @ h - h), out=best)
            d = best - h
            hi, lo = float(d.max()), float(d.min())
            h = best - best[0]
        return hi, lo, h, sweeps

    def gain(self, rewards: list[np.ndarray], h0: np.ndarray | None = None, floor: float = 0.0):
        """(upper end, lower end of the bracket on the optimal long-run reward per unit time, relative values,
        sweeps) by value iteration on the uniformised semi-Markov MDP (Odoni's bracket). Stops when the bracket is
        within REL_GAP of the rate, or below ``floor`` (a rate too small to matter)."""
        h = np.zeros(self.nS) if h0 is None else h0.copy()
        rt = [r / t for r, t in zip(rewards, self.tau)]
        coef = [self.eta / t for t in self.tau]
        hi, lo = math.inf, -math.inf
        sweeps = 0
        for sweeps in range(1, MAX_SWEEPS + 1):
            best = np.full(self.nS, -np.inf)
            for P, r, c in zip(self.P, rt, coef):
                v = r + h + c * (P @ h - h)
                np.maximum(best, v, out=best)
            d = best - h
            hi, lo = float(d.max()), float(d.min())
            h = best - best[0]
            if hi - lo <= REL_GAP * max(abs(hi), abs(lo)) or hi <= floor:
                break
        return hi, lo, h, sweeps


def estimate_bound(p, stages: int) -> Estimate:
    """What :func:`solve_bound` builds with ``stages`` stages, from the parameters alone (nothing is allocated).

    States: :func:`~qosbound.models.pq_txq_ring.stage_states`. Transitions, over the 2^S actions: an EF head
    (2^(S-1) actions) has one entry per state and per arrival count of the EF service's truncated pmf, a BE head
    (the other 2^(S-1)) one per BE class and arrival count, so at most ``states * 2^(S-1) * sum_k len(pmf_k)``.
    Memory: the actions' CSR matrices and their triplets while built (64 B per transition), the value-iteration
    vectors (a few per action and state), and the dense ingredients -- the head + PQ parts (K + 1) (PQ + 1) x Y M,
    the ring part's pmf and survival function by E' (Q_t x (L + 1), with their cumulative sum) and a CCDF point's
    per-step rewards -- in 8-byte floats."""
    g, gef, gbe, pbe = _sizes(p)
    QT, PQ, K = int(p.Q_t), int(p.pq_cap), len(gbe)
    a = p.lam * g * 8.0 / p.C
    serv = np.concatenate([[gef], gbe]).astype(float)
    lens = [len(_pois_trunc(a * serv[k], PQ)[0]) for k in range(K + 1)]
    states = stage_states(QT, PQ, stages)
    transitions = float(states) * 2.0 ** (stages - 1) * sum(lens)
    Y = int(serv.max() + (PQ + 1) * gef) + 1
    L = (QT - 1) * int(max(gbe.max(), gef)) + 1
    M = refinement(gef, L + Y)
    floats = ((K + 1) * (PQ + 1) * Y * M + 3 * QT * (L + 1) + 2 * (K + 1) * (PQ + 1) * (QT + L + 1)
              + 6 * states * 2 ** stages + 3 * Y * M * min(PQ, max(lens) + 1))
    memory = 64.0 * transitions + 8.0 * floats
    return Estimate(f"the ring bound's MDP ({stages} stage(s) of a {QT}-packet ring, {2 ** stages} actions, "
                    "models/pq_txq_ring_bound.py)", float(states), transitions, memory)


def solve_bound(p, ccdf_at=(), quantiles=(), stages: int | None = None,
                max_states: float = BOUND_STAGED_STATES) -> RingBound:
    """Upper bounds on mean delay, loss, the CCDF at ``ccdf_at`` (seconds) and ``quantiles`` (accepted EF); refused
    before anything is built (ResourceError) when :func:`estimate_bound` is above ``max_states`` or the memory
    left."""
    t0 = time.perf_counter()
    QT, PQ = int(p.Q_t), int(p.pq_cap)
    if stages is None:
        stages = choose_stages(QT, PQ, max_states)
    why = why_not(p)
    if why is not None:
        raise ScenarioError(f"the ring method does not cover {why}", field="Q_t")
    # ``max_states`` chooses the stages; one stage is the least there is (callers decide whether it fits their
    # budget: qosbound.systems.pq_txq_ring_results.bound_available), so its states are never refused here
    refuse_over_budget(estimate_bound(p, stages), max_states if stages > 1 else None, field="Q_t",
                       remedy="the ring-count approximation, the closed forms and the simulator answer without it")
    mdp = _MDP(p, stages)
    lam = mdp.a  # arrivals per granule
    gaps = []
    solves = 0
    tiny = 1e-12 * lam  # a rate below this (per granule) is reported as its bound without iterating further
    # loss: lost arrivals per unit time
    per = np.broadcast_to(mdp.lost[:, :, None], (mdp.K + 1, PQ + 1, QT)).copy()
    g_lost, lo, h, _ = mdp.gain(mdp.reward(per), floor=tiny)
    solves += 1
    loss_ub = min(1.0, max(g_lost, 0.0) / lam) if lam > 0 else 0.0
    acc_rate = lam * (1.0 - loss_ub)
    if acc_rate <= 0:
        raise ResourceError("the ring bound cannot bound the delay: its loss bound is 1", field="Q_t")
    # mean: the sum of accepted delays per unit time
    per = mdp.headsum[:, :, None] + mdp.acc[:, :, None] * mdp.ringmean[None, None, :]
    g_sum, lo, h, _ = mdp.gain(mdp.reward(per), h)
    solves += 1
    gaps.append((g_sum - lo) / g_sum)
    slot_f = mdp.slot_g / mdp.M
    mean_ub = g_sum / acc_rate * mdp.slot_g
    hx = [h]
    known: dict[int, float] = {}  # lattice point -> a CCDF bound proved there
    brackets: dict[int, float] = {}  # lattice point -> relative width of the value-iteration bracket left

    def ccdf_ub(X: int, below: float | None = None) -> float:
        """A bound on P(D > X steps); with ``below``, iterate only until it is known whether a bound <= below
        exists (returns the proved bound, or a value above ``below``)."""
        nonlocal solves
        if X in known and (below is None or known[X] <= below):
            return known[X]
        thr = -math.inf if below is None else below * acc_rate
        rewards = mdp.reward(mdp.per_ccdf(X))
        h = hx[0]
        g, lo_ = math.inf, -math.inf
        for _ in range(MAX_SWEEPS // 100):
            g, lo_, h, n = mdp.gain_steps(rewards, h, 100)
            if g - lo_ <= REL_GAP * max(abs(g), abs(lo_)) or g <= tiny or g <= thr or lo_ > thr > -math.inf:
                break
        hx[0] = h
        solves += 1
        if lo_ > thr > -math.inf and g > thr:
            return max(lo_, thr * 1.0000001) / acc_rate  # no bound this low exists at X: not a proved bound
        brackets[X] = (g - lo_) / g if g > tiny else 0.0
        known[X] = min(1.0, max(g, 0.0) / acc_rate)
        return known[X]

    out = RingBound(mdp.nS, mdp.S, 0.0, slot_f, mdp.g, mean_ub, loss_ub)
    for t in ccdf_at:
        X = int(math.floor(t / slot_f + 1e-9))  # P(D > t) <= P(D > the lattice point at or below t)
        out.ccdf[t] = ccdf_ub(X)
        gaps.append(brackets[X])
    top = (mdp.L + mdp.Y) * mdp.M  # beyond the largest delay: the bound is 0 there
    for q in quantiles:
        lo_i, hi_i = 0, top
        while hi_i - lo_i > 1:
            mid = (lo_i + hi_i) // 2
            if ccdf_ub(mid, 1.0 - q) <= 1.0 - q:
                hi_i = mid
            else:
                lo_i = mid
        out.quantiles[q] = hi_i * slot_f
    out.solves = solves
    out.worst_gap = max(gaps) if gaps else 0.0
    out.seconds = time.perf_counter() - t0
    return out
