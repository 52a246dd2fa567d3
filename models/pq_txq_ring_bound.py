"""A sound upper bound on the EF delay and loss of the PQ + TxQ port with a packet-unit tx-ring: the exact ring
chain with part of the ring's EF/BE pattern forgotten and chosen by an adversary, under Little's law.

The system and the notation are those of :mod:`qosbound.models.pq_txq_ring`: a ring of ``Q_t`` packets, each in
one unit; saturated BE; Poisson EF; at every departure the head leaves and one packet is admitted -- EF when the
PQ is not empty after the arrivals during the head's service, else a BE packet of a size drawn from the mix.
The exact chain, embedded at departures, has state ``(n, pattern)``: ``n`` EF waiting (0 .. PQ - 1 after the
admission), and which of the ``Q_t`` ring positions hold EF -- ``2^Q_t`` patterns.

The bounding process. An abstraction (:mod:`qosbound.models.ring_abstraction`) maps each pattern to a label that
keeps the head's kind, the EF count and some partial order information, and lists for every label ``L`` and
admitted kind ``a`` the set ``post[a](L)`` of labels that can follow (the labels of all successors of all
patterns labelled ``L``). The process has state ``(label, n)``; a departure draws the arrivals during the
head's service (Poisson, over a service of ``GEF`` granules for an EF head, of a BE size drawn from the mix for
a BE head), from them ``n'`` and ``a``; then an ADVERSARY chooses the next label in ``post[a](L)``. Solved by
:class:`qosbound.models.ratio_mdp.ChoiceMDP`.

Why it bounds the exact chain (the proof).

1. *The exact chain is one way of choosing.* Given the exact pattern, its next label is in the set (by the
   construction of the sets), and its draws have the same law: the head's kind is a function of the label, a BE
   head's size is independent of the past (drawn at its admission, used at its service), the Poisson arrivals of
   the service are independent of the past, and ``(a, n')`` follow from ``n`` and the arrivals by the same rule.
   So the exact chain's long-run frequencies ``x`` over (label, n) and over the choices made satisfy the
   process's balance equations.
2. *Every metric is a ratio of long-run averages of per-departure rewards that are functions of the state.* A
   Poisson arrival a time ``u`` into a service of ``s``, after ``j`` earlier arrivals of that service, with ``n``
   waiting, is accepted iff ``n + j < PQ`` and leaves after ``D = (s - u) + (n + j + 1) GEF + E' GEF + S_1 + ..
   + S_{Q_t - 1 - E'}`` (``E'`` the EF among ring positions 2 .. Q_t, the ``S_i`` i.i.d. BE sizes independent of
   the rest given the pattern). So, per departure from state ``(L, n)``, the expected numbers of arrivals, of
   lost ones, of accepted ones with ``D > X`` and the expected sum of accepted delays are functions of the head's
   kind, ``n`` and ``E'`` -- of the state (:class:`_Services` computes them in closed form). Loss = lost /
   arrivals; ``P(D > X | accepted)`` = (accepted with D > X) / accepted; mean = (sum of delays) / accepted:
   each a ratio ``x . N / x . D``.
3. *Little's law, one more equation the exact chain satisfies.* Every EF packet admitted stays in the ring for
   exactly ``Q_t`` departures (FIFO, one departure per step), so over a long run the average EF count in the ring
   (after each admission) is ``Q_t`` times the average number admitted per departure: ``x . C = 0`` with
   ``C(L, n) = EF(L) - Q_t P(an EF is admitted at the next departure | L, n)``. An adversary that holds EF in the
   ring beyond their time (or lets them out early) breaks it; with the constraint it can do so only as much as
   it pays back elsewhere.
4. *A certificate proves the bound.* :mod:`qosbound.models.ratio_mdp`: a function ``h`` and a multiplier ``mu``
   with ``N - rho D + mu C + max-choice P h - h <= 0`` at every state prove ``x . N <= rho x . D`` for every
   ``x`` of 1 and 3 -- hence for the exact chain. The inequality is checked at every state, in floating point;
   the search that finds ``h`` and ``mu`` (policy iteration, bisection) does not enter the proof.
5. *From ratios to the metrics.* Loss and the mean come from bisection on ``rho`` (the smallest proved value
   within a relative ``REL``); ``P(D > t) <= P(D > X)`` at the lattice point ``X`` at or below ``t`` (the CCDF is
   non-increasing); a ``q``-quantile is at most the smallest lattice point ``X`` where ``P(D > X) <= 1 - q`` is
   proved. The lattice is that of :mod:`qosbound.models.pq_txq_ring` (the gcd of the packet sizes, refined), on
   which these rewards are exact.
6. *Truncations, accounted for.* Poisson counts are cut where their tail is below ``POISSON_TAIL``; the mass
   moved is added to every certificate as ``mass * span(h)`` (it changes ``P h`` by at most that), and the
   accepted arrivals beyond the cut are added to the numerators (at most 1 each to a CCDF count, at most the
   largest delay each to the sum of delays) and left out of the denominators.

Which abstraction (:func:`abstractions`). With one label per pattern there is no choice and the bound is the
exact chain. Otherwise: ``blocks(c)`` (the order within blocks of ``c`` consecutive admissions is forgotten;
every packet leaves within ``c - 1`` departures of its time) is the tightest per state, but its labels grow like
``Q_t^3`` and exponentially in ``Q_t / c``; ``front_run`` (the oldest packets known up to the first change of
kind) grows like ``Q_t^2`` and holds the oldest EF packet to its exact time, so it is tight where EF is a
minority of the ring (one EF packet at a time); tracked only for EF counts up to ``K`` it fits any ring.
:func:`solve_bound` solves every abstraction that fits ``max_states`` and reports, per metric, the smallest
bound and which abstraction gave it (each is proved, so the smallest is).

Measured (``benchmarks/bench_ring.py``): see ``docs/pq_txq.md`` for the ratios to the truth, copied from the
benchmark's output.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy import stats

from qosbound.errors import ResourceError, ScenarioError
from qosbound.models import ring_abstraction as ra
from qosbound.models.budget import Estimate, refuse_over_budget
from qosbound.models.pq_txq_render import poisson_excess
from qosbound.models.pq_txq_ring import (FINE_PER_EF, FINE_POINTS, MAX_LATTICE, POISSON_TAIL, pois_trunc, size_law,
                                         head_part, refinement, why_not)
from qosbound.models.ratio_mdp import ChoiceMDP

__all__ = ["RingBound", "solve_bound", "abstractions", "Candidate", "estimate_bound", "estimate_process",
           "mean_cap", "exact_intervals", "BOUND_STATES", "REL", "CLOSED_FORM", "CAPPED"]

#: The bound is computed when the smallest abstraction it would solve has at most this many states
#: ((PQ) x labels; the one-stage abstraction has 2 (Q_t + 1) - 2 labels).
BOUND_STATES = 2e4
#: Budget on the states of each abstraction solved (a sparse LU factorisation per policy; 4e4 states take
#: about a second each here).
ABSTRACTION_STATES = 8e3
#: Largest block of :func:`~qosbound.models.ring_abstraction.blocks` tried (measured: blocks(9) of a 16-ring,
#: 7 872 states, took 40 s per ratio and was looser than the front run's 968 states at 0.5 s).
BLOCKS_MAX = 3
#: Bisections stop when the proved value is within this relative distance of the last value not proved.
REL = 2e-3
#: ``RingBound.decided`` of a metric settled by the closed-form largest delay, and of a mean capped by
#: :func:`mean_cap`.
CLOSED_FORM = "the closed-form maximum delay"
CAPPED = "the integral of the proved CCDF (quantile bounds, CCDF points and the largest delay)"
#: A full search (no target) whose proved value is above its estimate by more than this (relative) is tried again
#: with the linear programme (:meth:`_Bounder.ratio`).
FALLBACK_GAP = 1e-3
#: ... on processes of at most this many states (measured on wan100: a programme of front_run(0)'s 1 152 states takes
#: ~0.3 s, one of front_run(6)'s 7 848 states 10-25 s; above it the Lagrangian's proved value stands).
FALLBACK_STATES = 3000
#: Smallest loss probability bisected to (a bound below it is reported as this value).
LOSS_FLOOR = 1e-15


@dataclass
class RingBound:
    """Upper bounds on the EF delay metrics of accepted packets and on loss (times in seconds), with the
    abstraction that gave each (``decided``)."""

    states: int  # of the largest process solved
    seconds: float
    slot: float  # seconds per refined lattice step
    granule: int
    mean: float
    loss: float
    quantiles: dict = field(default_factory=dict)
    ccdf: dict = field(default_factory=dict)
    decided: dict = field(default_factory=dict)  # metric key -> abstraction name
    solved: list = field(default_factory=list)  # (abstraction name, states, seconds, factorisations)
    max_delay: float = 0.0  # the largest delay any accepted packet can have (s): the lattice's end
    mean_capped: bool = False  # the mean bound was lowered by the quantile bounds and the largest delay


class _Services:
    """Per-departure expectations, by the head's class ``k`` (0 EF, 1 .. K the BE sizes) and ``n`` waiting
    (0 .. PQ - 1), and the ring part's law by ``E'`` (see the module docstring, step 2)."""

    def __init__(self, p):
        why = why_not(p)
        if why is not None:
            raise ScenarioError(f"the ring method does not cover {why}", field="Q_t")
        g, gef, gbe, pbe = size_law(p)
        self.g, self.gef, self.gbe, self.pbe = g, gef, gbe, pbe
        self.slot_g = g * 8.0 / p.C
        self.a = a = p.lam * self.slot_g
        QT, PQ = int(p.Q_t), int(p.pq_cap)
        self.QT, self.PQ = QT, PQ
        K = len(gbe)
        self.K = K
        self.serv = serv = np.concatenate([[gef], gbe]).astype(float)
        # Poisson arrivals per service, cut at POISSON_TAIL (the mass moved is the process's slack)
        self.pmfs, self.slack = [], 0.0
        for k in range(K + 1):
            m = a * serv[k]
            kmax = int(stats.poisson.isf(POISSON_TAIL, m)) + 2 if m > 0 else 1
            J = min(PQ + 1, max(kmax, 1))
            pmf = stats.poisson.pmf(np.arange(J), m) if m > 0 else (np.arange(J) == 0).astype(float)
            tail = float(stats.poisson.sf(J - 1, m)) if m > 0 else 0.0
            pmf = pmf.copy()
            pmf[-1] += tail
            self.pmfs.append(pmf)
            if J < PQ + 1:
                self.slack = max(self.slack, tail)
        gmax = int(max(gbe.max(), gef))
        Y = int(serv.max() + (PQ + 1) * gef) + 1
        L = (QT - 1) * gmax + 1
        M = 1
        while gef * M < FINE_PER_EF and 2 * M * (L + Y) <= FINE_POINTS:
            M *= 2
        if (L + Y) * M > MAX_LATTICE:
            raise ResourceError(f"the ring bound's lattice would have {(L + Y) * M:.3g} points; above "
                                f"{MAX_LATTICE:.3g}", field="Q_t")
        self.M, self.Y, self.L = M, Y, L
        self.top = (L + Y) * M  # no delay reaches this many refined steps
        Yf = Y * M
        z = np.arange(Yf, dtype=float) / M
        self.acc = np.zeros((K + 1, PQ))
        self.lost = np.zeros((K + 1, PQ))
        self.missing = np.zeros((K + 1, PQ))  # accepted arrivals beyond the cut (not in acc)
        self.headsum = np.zeros((K + 1, PQ))
        self.hn = np.zeros((K + 1, PQ, Yf))
        for k in range(K + 1):
            s = serv[k]
            m = a * s
            Jall = min(PQ, len(self.pmfs[k]) + 1)
            jj = np.arange(Jall)
            F, pj1, pj2 = head_part(a, s, gef, Jall, z)
            for n in range(PQ):
                J = min(PQ - n, Jall)
                exact_acc = m - poisson_excess(m, PQ - n)  # E[min(A, PQ - n)]
                acc_n = float(np.sum(pj1[:J]))
                self.acc[k, n] = min(acc_n, exact_acc)
                self.missing[k, n] = max(exact_acc - self.acc[k, n], 0.0) if J < PQ - n else 0.0
                self.lost[k, n] = max(m - self.acc[k, n], 0.0)
                sh = n * gef * M
                self.hn[k, n, :sh] = F[J - 1, 0]
                self.hn[k, n, sh:] = F[J - 1, :Yf - sh]
                base = s + (n + jj[:J] + 1) * gef
                self.headsum[k, n] = float(np.sum(base * pj1[:J] - (jj[:J] + 1) / a * pj2[:J])) if a > 0 else 0.0
        # ring part R(E') = E' GEF + the sum of QT-1-E' BE sizes, on the granule lattice: pmf by E'
        pmfR = np.zeros((QT, L + 1))
        cur = np.zeros(L + 1)
        cur[0] = 1.0
        for nb in range(QT):
            Ep = QT - 1 - nb
            sh = Ep * gef
            pmfR[Ep, sh:] = cur[:L + 1 - sh]
            nxt = np.zeros(L + 1)
            for b, pb in zip(gbe, pbe):
                nxt[b:] += pb * cur[:L + 1 - b]
            cur = nxt
        self.pmfR = pmfR
        self.sfR = np.clip(1.0 - np.cumsum(pmfR, axis=1), 0.0, 1.0)
        ES = float(np.dot(pbe, gbe))
        self.ringmean = np.arange(QT) * gef + (QT - 1 - np.arange(QT)) * ES
        self.dmax = float(self.top) / M  # granules: above every delay
        self._per: dict = {}  # lattice point -> per_ccdf's array

    def transitions(self) -> list[np.ndarray]:
        """T[kind][n, a, n'] for a BE head (kind 0, the size drawn from the mix) and an EF head (kind 1)."""
        PQ = self.PQ
        out = []
        for classes in ([(k + 1, self.pbe[k]) for k in range(self.K)], [(0, 1.0)]):
            T = np.zeros((PQ, 2, PQ))
            for k, w in classes:
                pm = self.pmfs[k]
                for n in range(PQ):
                    n1 = np.minimum(PQ, n + np.arange(len(pm)))
                    adm = n1 > 0
                    np.add.at(T[n, 1], n1[adm] - 1, w * pm[adm])
                    T[n, 0, 0] += w * float(np.sum(pm[~adm]))
            out.append(T)
        return out

    def no_arrival(self) -> tuple[float, float]:
        """P(no EF arrival during the service) for a BE head (over the mix) and an EF head."""
        return float(sum(self.pbe[k] * self.pmfs[k + 1][0] for k in range(self.K))), float(self.pmfs[0][0])

    def per_ccdf(self, X: int) -> np.ndarray:
        """``per[k, n, E']``: accepted arrivals of a service with D > X refined lattice steps (an upper bound:
        the arrivals beyond the Poisson cut are counted). Kept per X: every process asks for the same points."""
        if X not in self._per:
            self._per[X] = self._per_ccdf(X)
        return self._per[X]

    def _per_ccdf(self, X: int) -> np.ndarray:
        M, Yf = self.M, self.hn.shape[2]
        rho = np.arange(self.L + 1)
        idx = X - rho * M
        inside = (idx >= 0) & (idx < Yf)
        r_in = rho[inside]
        G = self.hn[:, :, idx[inside]]  # (K + 1, PQ, points): one 2-D product (a 3-D @ 2-D one is ~40x slower)
        per = (G.reshape(G.shape[0] * G.shape[1], G.shape[2]) @ np.ascontiguousarray(self.pmfR[:, r_in].T)).reshape(G.shape[0],
                                                                                             G.shape[1], -1)
        above = X // M
        tail = self.sfR[:, above] if above <= self.L else np.zeros(self.QT)
        per += self.hn[:, :, 0][:, :, None] * tail[None, None, :]
        return per + self.missing[:, :, None]

    def per_sum(self) -> np.ndarray:
        """``per[k, n, E']``: the sum of accepted delays of a service (granules; an upper bound)."""
        return (self.headsum[:, :, None] + self.acc[:, :, None] * self.ringmean[None, None, :]
                + self.missing[:, :, None] * self.dmax)


def solved_levels(p) -> int:
    """How many PQ occupancies the process is SOLVED on (its certificate covers all; ratio_mdp's cut): all,
    unless the PQ drains on average from every level above (the EF arrivals per service below 0.9 for both
    heads) -- then the smallest level the drain makes unlikely to be passed (about 1e-6 by a geometric tail)."""
    g, gef, gbe, pbe = size_law(p)
    a = p.lam * g * 8.0 / p.C
    drain = max(a * gef, a * float(np.dot(pbe, gbe)))
    PQ = int(p.pq_cap)
    if drain >= 0.9:
        return PQ
    cut = int(min(PQ, max(4, math.ceil(math.log(1e-6) / math.log(max(drain, 1e-6))) + 1)))
    return PQ if cut > PQ // 2 else cut  # a cut that saves little costs more (the charge per level is settled
    #                                      by solving the programme up to three times)


def smallest_states(p) -> int:
    """States of the smallest process :func:`solve_bound` would solve (the one-stage abstraction)."""
    return ra.stages_labels(int(p.Q_t), 1) * solved_levels(p)


class Candidate(NamedTuple):
    """An abstraction :func:`solve_bound` may solve: its name, its builder and, known before it is built, its
    labels and the entries of its choice sets (summed over the labels and both admitted kinds; at least as many
    as are built)."""

    name: str
    build: Callable[[], ra.Abstraction]
    labels: int
    entries: int


def abstractions(QT: int, PQ: int, max_states: float = ABSTRACTION_STATES) -> list[Candidate]:
    """The abstractions :func:`solve_bound` solves for a ring of ``QT`` and a PQ of ``PQ``.

    The exact pattern when it fits; else ``blocks(c)`` with the smallest ``c`` that fits (if any up to
    ``BLOCKS_MAX``: larger blocks keep little order and their programmes are slow),
    and ``front_run`` tracked for the largest ``K`` that fits (at least the one-stage abstraction otherwise)."""
    budget = max(1.0, max_states / PQ)
    if 2 ** QT <= budget:
        return [Candidate("exact", lambda: ra.exact(QT), 2 ** QT, ra.exact_entries(QT))]
    out = []
    for c in range(2, min(QT, BLOCKS_MAX + 1)):
        if ra.blocks_labels(QT, c) <= budget:
            out.append(Candidate(f"blocks({c})", lambda c=c: ra.blocks(QT, c), ra.blocks_labels(QT, c),
                                 ra.blocks_entries(QT, c)))
            break
    K = None
    for k in range(QT // 2 + 1, -1, -1):
        if ra.front_run_labels(QT, k) <= budget:
            K = k
            break
    if K is not None:
        out.append(Candidate(f"front_run({K})", lambda K=K: ra.front_run(QT, K), ra.front_run_labels(QT, K),
                             ra.front_run_entries(QT, K)))
        if K > 0 and ra.front_run_labels(QT, 0) * 2 <= budget:  # also the coarsest front run: its programmes
            out.append(Candidate("front_run(0)", lambda: ra.front_run(QT, 0), ra.front_run_labels(QT, 0),
                                 ra.front_run_entries(QT, 0)))  # can be the better-conditioned ones
            # (measured: wan100's loss bound 4.2e-9 with front_run(0), 7.9e-6 with front_run(1), whose
            # second programme HiGHS left with numerical difficulties); each is proved, the smallest is kept
    if not out:
        out.append(Candidate("stages(1)", lambda: ra.stages(QT, 1), ra.stages_labels(QT, 1),
                             ra.stages_entries(QT, 1)))
    return out


# ---- the estimate before building (models/budget.py) ----------------------------------------------------------

#: Bytes per nonzero of the linear programme's constraint matrix at the peak of building and solving it: its
#: triplets (24 B) and their concatenation, the CSR matrix and its copy with the normalisation row (12 B each),
#: and HiGHS's own copies (calibrated on measured peaks: see :func:`estimate_process`).
LP_BYTES = 160
#: Bytes per nonzero of a policy's chain at the peak of a policy evaluation: the triplets and the CSC matrices
#: of P and of the system, and the sparse LU factors (fill-in measured at most ~LU_FILL x the chain's nonzeros).
LU_BYTES = 100
LU_FILL = 12
#: Bytes the solvers take at their first use besides the arrays counted (HiGHS, SuperLU and scipy's wrappers).
SOLVER_BYTES = 16e6


class _Dims(NamedTuple):
    QT: int
    PQ: int
    K: int  # BE sizes
    cut: int  # PQ levels solved (solved_levels)
    draws: int  # nonzeros of T on the solved levels, the larger head kind
    Yf: int  # refined points of the head + PQ part
    L: int  # granule points of the ring part
    Jall: int  # arrival counts of the head part's largest array


def _draws(J: int, PQ: int, cut: int) -> int:
    """Nonzeros of one head kind's draws ``T[n, a, n']`` on the solved levels (``n, n' < cut``) with ``J``
    arrival counts kept: from ``n = 0`` no admission, or EF admitted after 1 .. J - 1 arrivals; from ``n >= 1``,
    ``n'`` from ``n - 1`` up to ``min(n + J - 1, PQ, cut) - 1`` (draws past the cut land on ``cut - 1``)."""
    n = np.arange(1, cut)
    return 1 + min(J - 1, PQ, cut) + int(np.sum(np.minimum(np.minimum(n + J - 1, PQ), cut) - n + 1))


def _dims(p, whole: bool = False) -> _Dims:
    """The sizes :class:`_Services` and the processes take, from the parameters (as they compute them);
    ``whole``: the process solved on every PQ level (no cut)."""
    g, gef, gbe, pbe = size_law(p)
    a = p.lam * g * 8.0 / p.C
    QT, PQ, K = int(p.Q_t), int(p.pq_cap), len(gbe)
    serv = np.concatenate([[gef], gbe]).astype(float)
    lens = [len(pois_trunc(a * serv[k], PQ)[0]) for k in range(K + 1)]
    cut = PQ if whole else solved_levels(p)
    Y = int(serv.max() + (PQ + 1) * gef) + 1
    L = (QT - 1) * int(max(gbe.max(), gef)) + 1
    M = refinement(gef, L + Y)
    return _Dims(QT, PQ, K, cut, max(_draws(lens[0], PQ, cut), _draws(max(lens[1:]), PQ, cut)), Y * M, L,
                 min(PQ, max(lens) + 1))


def estimate_process(p, name: str, labels: int, entries: int, dims: _Dims | None = None) -> Estimate:
    """What solving one abstraction's process builds (with the shared per-service arrays), from the parameters
    and the abstraction's ``labels`` and choice-set ``entries`` alone (nothing is allocated).

    States: ``labels x cut`` (:func:`solved_levels`; a cut is taken only where both heads' mean arrivals per
    service are below 0.9, so the drift above it is below -0.1 and :class:`ChoiceMDP` accepts it). Transitions:
    the process's edges as built, from every state to its draws ``(a, n')`` (:func:`_draws`, the larger head
    kind) and from every post-decision node ``(label, a, n')`` to each label of its choice set -- the nonzeros
    of the linear programme's balance rows besides its identity. Memory, in 8-byte floats unless said: the
    per-service arrays (the head + PQ parts (K + 1) PQ x Y M and the head part's (J x Y M) arrays, the ring part
    by E' with its survival function, Q_t x (L + 1) each), a CCDF point's rewards ((K + 1) PQ x (L + 1 + 2 Q_t),
    and a dozen label x PQ arrays), the draws T and their truncation (2 kinds x PQ x 2 x PQ, thrice), the
    Bellman operator's per-entry arrays at the full width (5 x entries x PQ), the linear programme
    (:data:`LP_BYTES` per nonzero) and a policy evaluation (:data:`LU_BYTES` per nonzero of the chain and of its
    :data:`LU_FILL` x fill-in), and the solvers' own :data:`SOLVER_BYTES`. Not a proof: an estimate of the
    dominant arrays (tests/test_model_estimates.py checks states and transitions against what is built). Against
    the peak resident memory measured around :func:`solve_bound` in a fresh interpreter (p99 and p99.9): 1.7 x
    on Ferrari's sizes with an 8-packet ring (exact, 2 560 states, 28.7 MB), 1.2 x and 1.3 x on IMIX with a
    16-packet ring at 40 % and 70 % EF (front_run(9), 2 904 and 3 872 states, 51 and 70 MB), 1.5 x with one
    1536-byte BE size and a PQ of 64 (front_run(3), 7 424 states, 175 MB)."""
    d = dims if dims is not None else _dims(p)
    states = labels * d.cut
    draw_edges = labels * d.draws
    choice_edges = entries * d.cut
    floats = ((d.K + 1) * d.PQ * d.Yf + 2 * d.Jall * d.Yf + 3 * d.QT * (d.L + 1) + 8 * (d.K + 1) * d.PQ
              + (d.K + 1) * d.PQ * (d.L + 1 + 2 * d.QT) + (d.K + 12) * labels * d.PQ
              + 12 * d.PQ * d.PQ + 5 * entries * d.PQ)
    memory = (8.0 * floats + LP_BYTES * (2 * choice_edges + draw_edges + 3 * states)
              + LU_BYTES * (1 + LU_FILL) * (draw_edges + states) + SOLVER_BYTES)
    return Estimate(f"the ring bound's process {name} ({labels} labels x {d.cut} PQ levels, a {d.QT}-packet ring, "
                    "models/pq_txq_ring_bound.py)", float(states), float(draw_edges + choice_edges), memory)


def estimate_bound(p, candidates: list[Candidate] | None = None,
                   max_states: float = ABSTRACTION_STATES) -> Estimate:
    """What :func:`solve_bound` builds, from the parameters alone: the largest of its processes (``candidates``,
    by default :func:`abstractions`; they are solved one after the other, so the largest sets the peak)."""
    d = _dims(p)
    todo = candidates if candidates is not None else abstractions(d.QT, d.cut, max_states)
    return max((estimate_process(p, c.name, c.labels, c.entries, d) for c in todo),
               key=lambda e: (e.memory, e.states))


class _Bounder:
    """One abstraction's process with its rewards."""

    def __init__(self, sv: _Services, ab: ra.Abstraction, cut: int | None = None):
        self.sv, self.ab = sv, ab
        QT = sv.QT
        self.mdp = ChoiceMDP(ab.head, ab.post, sv.transitions(), slack=sv.slack, cut=cut)
        self.Ep = np.clip(ab.ef - ab.head, 0, QT - 1)
        full = lambda arr: np.broadcast_to(arr[:, :, None], arr.shape + (QT,))  # noqa: E731
        self.acc = self.rew(full(sv.acc))
        self.lost = self.rew(full(sv.lost))
        arr = np.concatenate([[sv.a * sv.gef], sv.a * sv.gbe.astype(float)])
        self.arr = self.rew(np.broadcast_to(arr[:, None, None], (sv.K + 1, sv.PQ, QT)))
        p0_be, p0_ef = sv.no_arrival()
        p0 = np.where(ab.head == 1, p0_ef, p0_be)
        n = np.arange(sv.PQ)
        admit = 1.0 - (n[None, :] == 0) * p0[:, None]
        self.C = ab.ef[:, None].astype(float) - QT * admit
        self.mus: dict = {}  # metric -> the multiplier of its last proved bound (a warm start; see ratio)
        self.memo: dict = {}  # lattice point -> (proved CCDF bound, estimate, whether searched to the end)

    def rew(self, per: np.ndarray) -> np.ndarray:
        """Per state (label, n): per[k, n, E'] at the label's head (EF: k = 0; BE: averaged over the mix)."""
        sv, ab = self.sv, self.ab
        out = np.empty((ab.size, sv.PQ))
        ef = ab.head == 1
        out[ef] = per[0][:, self.Ep[ef]].T
        be = ~ef
        out[be] = sum(sv.pbe[k] * per[k + 1][:, self.Ep[be]].T for k in range(sv.K))
        return out

    def ratio(self, N, D, key: str, target: float | None = None) -> tuple[float, float]:
        """(a proved upper bound on (x . N) / (x . D) for the exact chain's frequencies x, an estimate of the best
        such bound): :meth:`~qosbound.models.ratio_mdp.ChoiceMDP.lagrange_bound`, its multiplier search started
        at the last multiplier of the same ``key`` (of this process, else of the process solved before it: a
        warm start only, every multiplier gives a certified bound). ``target``: a sign test (stop as soon as the
        bound is at most the target, or the estimate above it)."""
        if not np.any(N > 0):
            return 0.0, 0.0
        rho, mu, est = self.mdp.lagrange_bound(N, D, self.C, mu=self.mus.get(key, 0.0), target=target)
        self.mus[key] = mu
        undecided = rho > target >= est if target is not None else rho > est * (1.0 + FALLBACK_GAP)
        if undecided and self.mdp.size <= FALLBACK_STATES:  # policy iteration left a gap (it cycles on some multichain processes): the linear
            lp, mu2 = self.mdp.lp_bound(N, D, self.C, polish=False)  # programme, certified the same way
            if lp < rho:
                rho, self.mus[key] = lp, mu2
        return max(rho, 0.0), est

    def ccdf(self, X: int, target: float | None = None) -> tuple[float, float]:
        """(a proved upper bound on P(D > X lattice steps | accepted), an estimate of the best one); with a
        ``target`` the search may stop once it knows on which side of the target the bound is (see ratio)."""
        got = self.memo.get(X)
        if got is not None and (got[2] or (target is not None and (got[0] <= target or got[1] > target))):
            return got[0], got[1]
        v, est = self.ratio(self.rew(self.sv.per_ccdf(X)), self.acc, "ccdf", target)
        v = min(1.0, v)
        if got is not None and got[0] < v:  # an earlier search proved less: keep it (each is proved)
            v = got[0]
        self.memo[X] = (v, est, target is None or (v > target and est <= target))
        return v, est

    def quantile(self, q: float, start: int, hi: int | None = None) -> int:
        """The smallest lattice point proved (within REL) to have P(D > X) <= 1 - q, or ``hi`` (a point already
        proved otherwise, e.g. by another process: only points below it are sought). The CCDF bound is
        non-increasing in X (each point is proved on its own, so any point proved is a valid answer): the
        bracket [lo not proved, hi proved] starts from every point already evaluated; each point is a sign test
        (:meth:`ccdf` with the target); each round tries the false-position point on log P (with the estimate
        where the bound is above the target), then nudges by REL towards the side it did not reach (an
        interpolation that lands just short of the target closes the bracket at the next try)."""
        target = 1.0 - q
        ltarget = math.log(target)
        lo, top = 0, self.sv.top if hi is None else min(hi, self.sv.top)
        hi = top  # lo: not proved (P(D > 0) = 1); hi: proved (no delay reaches the top, or proved elsewhere)
        flo, fhi = 0.0, None  # (hi = top is proved without an evaluation here: no value to interpolate with)

        def level(v, est):
            return math.log(max(v if v <= target or est <= target else est, 1e-300))

        for X, (v, est, full) in self.memo.items():
            if v <= target and X < hi:
                hi, fhi = X, level(v, est)
            elif v > target and (full or est > target) and X > lo:
                lo, flo = X, level(v, est)
        X = min(max(start, 2 * lo if fhi is None else lo + 1), hi - 1)
        nudge, nudged = 0, False
        while hi - lo > max(1, REL * hi):
            v, est = self.ccdf(X, target)
            fx = level(v, est)
            if v <= target:
                hi, fhi, nudge = X, fx, -1
            else:
                lo, flo, nudge = X, fx, 1
            if hi - lo <= max(1, REL * hi):
                break
            step = max(1, int(REL * X))
            if fhi is not None and lo < X + nudge * step < hi and not nudged:
                X, nudged = X + nudge * step, True
                continue
            nudged = False
            if fhi is None:  # no proved point evaluated yet: search upwards (or towards the proved limit)
                X = 2 * X if hi == self.sv.top else (X + hi) // 2
            elif fhi >= flo or flo - fhi < 1e-12:
                X = (lo + hi) // 2
            else:
                X = int(round(lo + (hi - lo) * (flo - ltarget) / (flo - fhi)))
            X = min(max(X, lo + 1), hi - 1)
        return hi


def _bisect(proved, lo: float, hi: float, log: bool = False) -> float:
    """The smallest value in (lo, hi] proved (hi is taken as proved), to a relative REL."""
    while hi - lo > REL * hi and hi > 0:
        mid = math.sqrt(lo * hi) if log and lo > 0 else 0.5 * (lo + hi)
        if proved(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _solve_one(sv: _Services, ab: ra.Abstraction, ccdf_points: list[int], quantiles, cut=None,
               best: dict | None = None, mus: dict | None = None) -> tuple[dict, dict]:
    """One process's bounds (keyed as in :func:`solve_bound`) and its multipliers. ``best``: the quantile points
    already proved by the processes solved before (only points below them are sought: the smaller is kept
    anyway); ``mus``: their multipliers, the warm start of this process's searches."""
    try:
        b = _Bounder(sv, ab, cut)
    except ValueError:  # the drift above the cut is not negative at every level: solve it whole
        b = _Bounder(sv, ab, None)
    b.mus.update(mus or {})
    best = best or {}
    out: dict = {}
    # loss: lost / arrivals; mean: sum of delays / accepted (granules); CCDF points: accepted above / accepted
    out["loss"] = b.ratio(b.lost, b.arr, "loss")[0]
    out["mean"] = b.ratio(b.rew(sv.per_sum()), b.acc, "mean")[0]
    for X in ccdf_points:
        out[("ccdf", X)] = b.ccdf(X)[0]
    for q in quantiles:
        out[("quantile", q)] = b.quantile(q, int(out["mean"] * sv.M * 1.5), best.get(("quantile", q)))
    out["factorisations"] = b.mdp.factorisations
    out["evaluations"] = b.mdp.evaluations
    out["states"] = b.mdp.size
    return out, b.mus


def solve_bound(p, ccdf_at=(), quantiles=(), max_states: float = ABSTRACTION_STATES, only=None,
                max_delay: float | None = None) -> RingBound:
    """Upper bounds on loss, mean delay, the CCDF at ``ccdf_at`` (seconds) and ``quantiles`` (accepted EF): the
    smallest over the abstractions of :func:`abstractions` (``only``: a list of :class:`Candidate` instead, or
    of (name, build) pairs), and over what ``max_delay`` implies (a proved bound on the largest delay, seconds:
    e.g. the closed form's).

    Refused (ResourceError) before anything is built when a process's estimate (:func:`estimate_process`) is
    above ``max_states`` -- the one-stage abstraction, the least there is, excepted: callers decide whether it
    fits their budget (:func:`qosbound.systems.pq_txq.ring_results.bound_available`) -- or above the memory
    left. An abstraction given as a (name, build) pair has no counts known before building: it is built (its
    labels and choice sets) and its process estimated from them before the process is built."""
    t0 = time.perf_counter()
    why = why_not(p)
    if why is not None:
        raise ScenarioError(f"the ring method does not cover {why}", field="Q_t")
    d = _dims(p)
    cut = d.cut
    todo = list(only) if only is not None else abstractions(d.QT, cut, max_states)
    least = smallest_states(p)

    def refuse(name: str, labels: int, entries: int) -> None:
        est = estimate_process(p, name, labels, entries, d)
        refuse_over_budget(est, float(max_states) if est.states > least else None, field="Q_t",
                           remedy="the ring-count approximation, the closed forms and the simulator answer "
                                  "without it")

    for c in todo:
        if isinstance(c, Candidate):
            refuse(c.name, c.labels, c.entries)
    sv = _Services(p)
    slot_f = sv.slot_g / sv.M
    points = {t: int(math.floor(t / slot_f + 1e-9)) for t in ccdf_at}
    best: dict = {}
    decided: dict = {}
    solved = []
    states = 0
    mus: dict = {}
    # the smallest process first: its multipliers start the next one's searches, its quantile points bound them
    order = sorted(range(len(todo)), key=lambda i: todo[i].labels if isinstance(todo[i], Candidate) else 0)
    for c in [todo[i] for i in order]:
        t1 = time.perf_counter()
        name, ab = c[0], c[1]()
        if not isinstance(c, Candidate):
            refuse(name, ab.size, ab.entries)
        res, mus = _solve_one(sv, ab, sorted(set(points.values())), quantiles, cut, best, mus)
        solved.append((name, res["states"], time.perf_counter() - t1, res["factorisations"]))
        states = max(states, res["states"])
        for key, v in res.items():
            if key in ("factorisations", "evaluations", "states"):
                continue
            if key not in best or v < best[key]:
                best[key], decided[key] = v, name
    loss = min(1.0, best["loss"])
    out = RingBound(states, 0.0, slot_f, sv.g, best["mean"] * sv.slot_g, loss, max_delay=sv.dmax * sv.slot_g)
    for t, X in points.items():
        out.ccdf[t] = min(1.0, best[("ccdf", X)])
        out.decided[("ccdf", t)] = decided[("ccdf", X)]
    for q in quantiles:
        out.quantiles[q] = best[("quantile", q)] * slot_f
        out.decided[("quantile", q)] = decided[("quantile", q)]
    out.decided["loss"], out.decided["mean"] = decided["loss"], decided["mean"]
    if max_delay is not None and max_delay < out.max_delay:  # a tighter proved largest delay
        out.max_delay = max_delay
        for q, v in out.quantiles.items():
            if max_delay < v:
                out.quantiles[q], out.decided[("quantile", q)] = max_delay, CLOSED_FORM
        for t in out.ccdf:
            if max_delay <= t and out.ccdf[t] > 0.0:
                out.ccdf[t], out.decided[("ccdf", t)] = 0.0, CLOSED_FORM
    cap = mean_cap(out.quantiles, out.ccdf, out.max_delay)
    if cap < out.mean:
        out.mean, out.mean_capped, out.decided["mean"] = cap, True, CAPPED
    out.solved = solved
    out.seconds = time.perf_counter() - t0
    return out


def mean_cap(quantiles: dict, ccdf: dict, max_delay: float) -> float:
    """An upper bound on the mean delay implied by upper bounds on its quantiles (``{q: u}``: the q-quantile is
    at most ``u``), on its CCDF (``{t: c}``: P(D > t) <= c) and on its largest value (``max_delay``).

    Proof. For a delay ``D >= 0``, E[D] = integral over s >= 0 of P(D > s) ds. Each bound gives a point ``(t, c)``
    with P(D > t) <= c: a quantile bound ``(u, 1 - q)`` (P(D > q-quantile) <= 1 - q by right-continuity, and
    P(D > u) <= P(D > q-quantile) as u is at or above it), a CCDF bound ``(t, c)``, the largest delay
    ``(max_delay, 0)``. The CCDF is non-increasing, so for every s, P(D > s) <= min(1, min over points with
    t <= s of c) =: G(s), and G(s) = 0 from max_delay on. Hence E[D] <= the integral of G, a step function,
    integrated exactly below."""
    pts = sorted([(u, 1.0 - q) for q, u in quantiles.items()] + [(t, c) for t, c in ccdf.items()]
                 + [(max_delay, 0.0)])
    total, prev, level = 0.0, 0.0, 1.0
    for t, c in pts:
        if t >= max_delay:
            break
        if t > prev:
            total += level * (t - prev)
            prev = t
        level = min(level, c)
    return total + level * max(0.0, max_delay - prev)


@dataclass
class ExactIntervals:
    """Proved intervals on the exact ring chain's metrics (with one label per pattern there is no choice):
    ``mean``, ``loss`` -> (low, high), ``quantiles[q]`` and ``ccdf[t]`` -> (low, high); times in seconds."""

    states: int
    seconds: float
    mean: tuple
    loss: tuple
    quantiles: dict = field(default_factory=dict)
    ccdf: dict = field(default_factory=dict)


def exact_intervals(p, ccdf_at=(), quantiles=()) -> ExactIntervals:
    """Intervals proved by :meth:`~qosbound.models.ratio_mdp.ChoiceMDP.ratio_interval` on the exact chain (the
    pattern abstraction: no choice), for rings small enough to enumerate their ``2^Q_t`` patterns. Refused
    before anything is built (ResourceError) when its estimate is above the memory left; its states, ``PQ x
    2^Q_t``, are fewer than the staged chain's with one position per stage, which the caller's budget admitted."""
    t0 = time.perf_counter()
    why = why_not(p)
    if why is not None:
        raise ScenarioError(f"the ring method does not cover {why}", field="Q_t")
    QT = int(p.Q_t)
    refuse_over_budget(estimate_process(p, "exact", 2 ** QT, ra.exact_entries(QT), _dims(p, whole=True)), None,
                       field="Q_t", remedy="the closed forms and the simulator answer without it")
    sv = _Services(p)
    b = _Bounder(sv, ra.exact(sv.QT))
    slot_f = sv.slot_g / sv.M
    mean = tuple(v * sv.slot_g for v in b.mdp.ratio_interval(b.rew(sv.per_sum()), b.acc))
    loss = tuple(min(1.0, max(0.0, v)) for v in b.mdp.ratio_interval(b.lost, b.arr))
    memo: dict = {}

    def ccdf(X):
        if X not in memo:
            lo, hi = b.mdp.ratio_interval(b.rew(sv.per_ccdf(X)), b.acc)
            memo[X] = (max(0.0, lo), min(1.0, hi))
        return memo[X]

    out = ExactIntervals(b.mdp.size, 0.0, mean, loss)
    for t in ccdf_at:
        X = int(math.floor(t / slot_f + 1e-9))
        out.ccdf[t] = (ccdf(X + 1)[0], ccdf(X)[1])  # P(D > t) lies between its lattice neighbours
    for q in quantiles:
        lo, hi = 0, sv.top  # smallest X with the upper end <= 1 - q
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ccdf(mid)[1] <= 1 - q else (mid, hi)
        upper = hi
        lo, hi = -1, upper  # largest X with the lower end > 1 - q (the quantile is at least X)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if ccdf(mid)[0] > 1 - q else (lo, mid)
        out.quantiles[q] = (max(lo, 0) * slot_f, upper * slot_f)
    out.seconds = time.perf_counter() - t0
    return out
