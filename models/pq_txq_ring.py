"""EF delay of the PQ + TxQ port with a packet-unit transmission ring, at a cost polynomial in the ring size.

System (Ferrari, Pau & Raffaelli, "Measurement Based Analysis of Delay in
Priority Queueing", 2001; qosbound's PQ + TxQ semantics): a strict-priority EF
queue of ``PQ`` packets feeds a FIFO transmission ring; best effort is
saturated. Here every packet takes exactly one unit of the ring (``txq.unit_size``
at least the largest packet: a tx-ring of ``Q_t`` descriptors), so the ring
always holds ``Q_t`` packets and every departure admits exactly one packet: the
head EF packet when the PQ is not empty, else a BE packet whose size is drawn
i.i.d. from the BE mix. EF arrivals are Poisson.

Why the exact chain is exponential. A tagged EF packet arriving at ``t``
leaves after exactly ``V(t-) + GEF``, ``V = n*GEF + r + (sizes of ring
positions 2..Q_t)`` (n EF waiting, r the head's residual): no BE packet enters
the ring while an EF packet waits. Given the EF/BE pattern of the ring, the BE
sizes at positions 2..Q_t are i.i.d. and independent of everything else, but the
pattern is a delay line of the last ``Q_t`` "PQ non-empty at this departure"
indicators: ``2^Q_t`` patterns (``models/pq_txq_size.py`` counts them).

The method ("ring-count chain"). A Markov chain embedded at departure epochs
on ``(n, e_1, ..., e_S)``: EF packets in the PQ after the admission, and EF
packets in each of ``S`` stages of the ring (stage 1 holds the head, stage ``S``
receives the admitted packet; ``c_i`` positions each, summing to ``Q_t``). The
order WITHIN a stage is replaced by exchangeability: the head is EF with
probability ``e_1/c_1``, and at each departure the front packet of stage
``i+1`` moving into stage ``i`` is EF with probability ``e_{i+1}/c_{i+1}``. With
one position per stage (``S = Q_t``) nothing is replaced: the chain is the
exact delay line (``(PQ+1) 2^Q_t`` states, fewer than the PRISM chain, which
also counts the head's residual granules and the fill phase); with fewer
stages it is an approximation that improves with every stage (measured).
During the head's service of ``s`` (``GEF`` or a BE size) Poisson arrivals
join the PQ (those finding it full are lost). A Poisson arrival a time ``u``
into the service, after ``j`` earlier arrivals of that service, sees ``n + j``
EF waiting, is accepted iff ``n + j < PQ`` and leaves after

    D = (s - u) + (n + j + 1) GEF + E' GEF + S_1 + ... + S_{Q_t-1-E'},

``E'`` the EF packets among ring positions 2..Q_t, the ``S_i`` i.i.d. BE sizes
independent of the rest (exact given the pattern, see above). The integral
over ``u`` is closed (regularised incomplete gamma functions, as in
:mod:`qosbound.models.pq_txq_delay`) and the sum of BE sizes is a convolution
power of the BE mix on the granule lattice (the gcd of the packet sizes), so
the CCDF is computed EXACTLY FOR THE CHAIN at every lattice point, in the
frequency domain; quantiles are bracketed by the two lattice points around
them. With one stage: ``(PQ+1)(Q_t+1)`` states (about
``(PQ+1)(Q_t+1)(K+1)(lambda s_max + 20)`` transitions, K the BE classes), and
``O(Q_t N log N + K Q_t PQ Y)`` work for the delay distribution, with ``N`` about
``(Q_t G_max + PQ GEF) M`` lattice points (``G_max`` the largest packet in granules,
``M`` <= 64 the refinement) and ``Y`` about ``(G_max + PQ GEF) M`` -- polynomial in
``Q_t``, the PQ size and the number of BE classes. ``S`` stages multiply the
states to ``(PQ+1) prod(c_i + 1)``; the system takes the most stages within
:data:`STAGED_STATES` (and ``max_states``).

What it neglects (fewer stages than positions): the order of the EF packets
within a stage (an EF burst that filled the PQ enters the ring as a run, and
the head's kind is correlated with the recent past beyond the stage counts).
Measured errors of mean, p99 and p99.9 (``docs/pq_txq.md`` has the table;
``tests/models/test_pq_txq_ring.py`` and ``benchmarks/bench_ring.py`` measure them),
every one an underestimate, with ONE stage: under 0.3 % on IMIX ports with EF
at 10-25 % (wan100, agg1g, a 1 Gbit/s 128-ring), 1.3-1.7 % at EF 30 % (ring 16;
0.4-0.5 % with the three stages the system takes there), 1.9-2.2 % at EF 40 %
(ring 32), about 3 % at EF 50 % (ring 8); against the exact chain on small
rings at most 1.2 % when EF packets are the size of the smallest BE packet,
5-7 % with Ferrari et al.'s sizes (EF 128 B against 512-1536 B), and up to 15 %
with one BE size of 1536 B, where EF is most of the departures (two stages
halve these; one position per stage is exact). Loss, where it is not
negligible, is underestimated up to a factor 4.6 with one stage against the exact chain on small rings, and 13x
has been reported against the simulator (a 100 Mbit/s 64-ring, PQ 8, 40-byte EF among mostly 1500-byte BE).

Why this method (measured, see ``docs/pq_txq.md``): the exact chain is
``2^Q_t``-large in the pattern alone. Storm's symbolic (dd) engine builds it
compactly (1.7e7 states at Q_t = 9 in seconds) but the stormpy here returns no
value for a long-run reward on a symbolic model, and has no bisimulation call;
a quotient would still have to keep the pattern the head's kind depends on. A
monotone stochastic-comparison pair is not built: an EF packet's delay is not
monotone in the BE sizes ahead of it (fewer but larger BE packets), and the
pathwise bound taking every ring position as ``max(GEF, S)`` puts 36 % more
work per position on wan100; the sound upper bound is
:mod:`qosbound.models.pq_txq_ring_bound` (the same staged state, with the order
within each stage chosen by an adversary: an MDP), 6-7 % above the simulator on
wan100, which the system reports beside this approximation;
the count chain keeps the one quantity that moves the delay most (how many EF
packets, of their fixed size, replace BE draws in the ring) and costs 0.25 s
at ``Q_t`` = 64 and about 12 s at ``Q_t`` = 256 with a PQ of 256; its stages
give a hierarchy from that approximation to the exact chain.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import reduce
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy import fft, special, stats

from qosbound.errors import ResourceError, ScenarioError
from qosbound.markov import stationary_dtmc
from qosbound.models.budget import Estimate, refuse_over_budget
from qosbound.models.pq_txq_render import poisson_excess

__all__ = ["RingSolution", "applies", "why_not", "solve", "estimate", "chain_states", "lattice_points",
           "RingLaw", "ring_law", "StagedChain", "build_chain", "departure_weights", "delay_lattice", "head_parts",
           "ring_ccdf", "POISSON_TAIL", "MAX_LATTICE"]

#: Poisson arrival counts per service are cut where the tail falls below this (the tail joins the full-PQ
#: outcome of the embedded chain; the cut mass is reported).
POISSON_TAIL = 1e-16
#: Default budget on the staged chain's states when the number of stages is chosen (the direct solve's LU fills
#: in fast with more stages: 18 785 states took 12 s, 70 785 took 188 s here).
STAGED_STATES = 1e4
#: Largest lattice (granules from 0 to the largest delay) the delay distribution is computed on.
MAX_LATTICE = 8_000_000
#: Refine the lattice while it stays below this many points.
FINE_POINTS = 1 << 19
#: ... and until an EF transmission spans this many refined points.
FINE_PER_EF = 64


def why_not(p) -> str | None:
    """Why the method does not cover parameters ``p`` (None when it does)."""
    if getattr(p, "be_rate", None) is not None:
        return "best effort with a load (the ring may then hold fewer than Q_t packets)"
    if p.arrivals != "poisson":
        return f"EF arrivals '{p.arrivals}' (the ring method covers Poisson EF)"
    biggest = max([float(p.ef_size)] + [float(s) for s in p.be_sizes])
    if biggest > p.unit + 1e-9:
        return (f"a packet of {biggest:g} B takes more than one {p.unit:g}-byte unit (the ring method needs every "
                "packet to take one unit: txq.unit_size at least the largest packet)")
    for s in [p.ef_size] + list(p.be_sizes):
        if abs(s - round(s)) > 1e-9:
            return f"a packet size of {s:g} B is not a whole number of bytes"
    return None


def applies(p) -> bool:
    return why_not(p) is None


def chain_states(p) -> int:
    """States of the embedded chain: (PQ occupancy 0..PQ) x (EF in the ring 0..Q_t)."""
    return (p.pq_cap + 1) * (p.Q_t + 1)


def lattice_points(p) -> int:
    """Points of the (unrefined) granule lattice the delay distribution is computed on: from 0 to the largest
    delay, ``(Q_t - 1) * G_max + G_max + (PQ + 1) * GEF`` granules."""
    g, gef, gbe, _ = size_law(p)
    gmax = int(max(gbe.max(), gef))
    return (p.Q_t - 1) * gmax + int(max(gbe.max(), gef) + (p.pq_cap + 1) * gef) + 2


@dataclass
class RingSolution:
    """EF delay of accepted packets by the ring-count chain (times in seconds)."""

    states: int
    transitions: int
    seconds: float
    slot: float  # seconds per granule
    granule: int  # bytes
    mean: float
    loss: float
    ccdf_grid: np.ndarray  # P(D > i slots), i = 0..len-1
    cut_mass: float  # Poisson tail mass moved into the full-PQ outcome, per departure (largest)
    ef_share: float  # fraction of departures that are EF
    stages: int = 1  # the ring's stages; = Q_t: the exact chain
    quantiles: dict = field(default_factory=dict)
    quantile_brackets: dict = field(default_factory=dict)
    ccdf: dict = field(default_factory=dict)

    def ccdf_at(self, t: float) -> float:
        """P(D > t): the CCDF is continuous and non-increasing; linear between lattice points (the chain's value
        lies between its two neighbours, which is the bracket)."""
        x = t / self.slot
        i = int(math.floor(x))
        if i >= len(self.ccdf_grid) - 1:
            return 0.0
        f = x - i
        return float((1 - f) * self.ccdf_grid[i] + f * self.ccdf_grid[i + 1])

    def ccdf_bracket(self, t: float) -> tuple[float, float]:
        x = t / self.slot
        i = int(math.floor(x))
        if i >= len(self.ccdf_grid) - 1:
            return 0.0, 0.0
        if abs(x - i) < 1e-12:
            return float(self.ccdf_grid[i]), float(self.ccdf_grid[i])
        return float(self.ccdf_grid[i + 1]), float(self.ccdf_grid[i])

    def quantile(self, q: float) -> tuple[float, tuple[float, float]]:
        """(smallest t with P(D > t) <= 1 - q, interpolated; its bracket of two lattice points)."""
        c = self.ccdf_grid
        target = 1.0 - q
        i = int(np.argmax(c <= target))  # first lattice point at or below the target
        if i == 0:
            return 0.0, (0.0, 0.0)
        lo, hi = c[i - 1], c[i]
        f = (lo - target) / (lo - hi) if lo > hi else 1.0
        return (i - 1 + f) * self.slot, ((i - 1) * self.slot, i * self.slot)


def size_law(p):
    ef = int(round(p.ef_size))
    be = [int(round(s)) for s in p.be_sizes]
    g = reduce(math.gcd, [ef] + be)
    return g, ef // g, np.array([b // g for b in be], dtype=np.int64), np.asarray(p.be_probs, dtype=float)


def pois_trunc(m: float, cap: int) -> tuple[np.ndarray, float]:
    """P(A = k), k = 0..K-1 and the tail P(A >= K) folded into the last entry, for A ~ Poisson(m): K the
    smaller of cap + 1 and where the tail drops below POISSON_TAIL. Returns (pmf, tail mass folded)."""
    kmax = int(stats.poisson.isf(POISSON_TAIL, m)) + 2 if m > 0 else 1
    K = min(cap + 1, max(kmax, 1))
    k = np.arange(K)
    pmf = stats.poisson.pmf(k, m) if m > 0 else (k == 0).astype(float)
    tail = float(stats.poisson.sf(K - 1, m)) if m > 0 else 0.0
    pmf = pmf.copy()
    pmf[-1] += tail
    return pmf, (tail if K < cap + 1 else 0.0)


def head_part(a: float, s: float, gef: int, Jall: int, z: np.ndarray):
    """For a service of ``s`` granules with none waiting and Poisson arrivals of ``a`` per granule: ``F[J-1](z)``
    = sum over the first J arrivals j of P(the j-th arrives within the service and its "head + PQ" part
    (s - u) + (j + 1) GEF exceeds z) (n waiting shift it by n GEF), at the points ``z``; and P(at least j + 1),
    P(at least j + 2) arrivals within the service, j = 0..Jall-1."""
    F = np.zeros((Jall, z.size))
    for j in range(Jall):
        F[j] = special.gammainc(j + 1, a * np.clip(s + (j + 1) * gef - z, 0.0, s))
    jj = np.arange(Jall)
    return np.cumsum(F, axis=0), special.gammainc(jj + 1, a * s), special.gammainc(jj + 2, a * s)


def stage_sizes(QT: int, stages: int) -> list[int]:
    """Ring positions per stage, the head's stage first: ``stages`` near-equal parts of ``Q_t``."""
    base, extra = divmod(QT, stages)
    return [base + (1 if i < extra else 0) for i in range(stages)]


def stage_states(QT: int, PQ: int, stages: int) -> int:
    return (PQ + 1) * math.prod(c + 1 for c in stage_sizes(QT, stages))


def choose_stages(QT: int, PQ: int, max_chain: float) -> int:
    """The most stages (at most Q_t: one position each is the exact chain) whose chain fits ``max_chain``."""
    S = 1
    while S < QT and stage_states(QT, PQ, S + 1) <= max_chain:
        S += 1
    return S


def refinement(gef: int, points: int) -> int:
    """How many times the lattice of ``points`` granules is refined: doubled while an EF transmission spans
    fewer than FINE_PER_EF refined points and the refined lattice stays within FINE_POINTS."""
    M = 1
    while gef * M < FINE_PER_EF and 2 * M * points <= FINE_POINTS:
        M *= 2
    return M


def estimate(p, stages: int) -> Estimate:
    """What :func:`solve` builds with ``stages`` stages, from the parameters alone (nothing is allocated).

    States: :func:`stage_states`. Transitions: from every state, one entry per head kind k, per choice of which
    stage fronts are EF (2^(S-1)) and per Poisson arrival count the truncated pmf of kind k keeps, so at most
    ``states * 2^(S-1) * sum_k len(pmf_k)`` (entries to the same state are merged, which only lowers it).
    Memory: the transitions' triplets and CSR matrix (64 B each), and the dense arrays of the delay
    distribution -- the departure weights (K + 1) (PQ + 1) (Q_t + 1), the per-ring-count head parts
    (Q_t + 1) x Y M, the FFT buffers of the refined lattice -- in 8-byte floats (16 for complex). The sparse
    LU's fill-in is not counted (it is small for these banded chains at the default STAGED_STATES)."""
    g, gef, gbe, pbe = size_law(p)
    QT, PQ, K = int(p.Q_t), int(p.pq_cap), len(gbe)
    a = p.lam * g * 8.0 / p.C
    serv = np.concatenate([[gef], gbe]).astype(float)
    lens = [len(pois_trunc(a * serv[k], PQ)[0]) for k in range(K + 1)]
    states = stage_states(QT, PQ, stages)
    transitions = float(states) * 2.0 ** (stages - 1) * sum(lens)
    Y = int(serv.max() + (PQ + 1) * gef) + 1
    gmax = int(max(gbe.max(), gef))
    L = (QT - 1) * gmax + Y + 1
    M = refinement(gef, L)
    floats = ((K + 1) * (PQ + 1) * (QT + 1) + (QT + 1) * Y * M + (PQ + 3 + min(PQ, max(lens) + 1)) * Y * M
              + 3 * L * M + 6 * 2 * (L + Y) * M + 4 * states * (stages + 2))
    memory = 64.0 * transitions + 8.0 * floats
    return Estimate(f"the ring-count chain ({stages} stage(s) of a {QT}-packet ring, models/pq_txq_ring.py)",
                    float(states), transitions, memory)


class RingLaw(NamedTuple):
    """The port as the chain sees it: sizes on the granule lattice (the gcd of the packet sizes) and the truncated
    law of the EF arrivals during each kind of service (kind 0 an EF head, kinds 1 .. K the BE sizes)."""

    g: int  # bytes per granule
    gef: int  # EF size, granules
    gbe: np.ndarray  # BE sizes, granules
    pbe: np.ndarray  # their probabilities
    slot: float  # seconds per granule
    a: float  # EF arrivals per granule
    QT: int  # ring positions
    PQ: int  # PQ capacity, packets
    serv: np.ndarray  # service of each kind, granules (float)
    pmfs: list  # per kind: P(A = j) arrivals during the service, the tail folded into the last entry (pois_trunc)
    cut: float  # the largest tail mass folded (per departure)
    share: float  # the fraction of departures that are EF, from the loads (where the state order is rotated)

    @property
    def K(self) -> int:
        """The number of BE sizes."""
        return len(self.gbe)


def ring_law(p) -> RingLaw:
    """The :class:`RingLaw` of parameters ``p``."""
    g, gef, gbe, pbe = size_law(p)
    slot = g * 8.0 / p.C
    a = p.lam * slot  # arrivals per granule
    QT, PQ = int(p.Q_t), int(p.pq_cap)
    serv = np.concatenate([[gef], gbe]).astype(float)  # service of kind 0 (EF) and BE classes 1..K
    cut = 0.0
    pmfs = []
    for k in range(len(gbe) + 1):
        pm, tl = pois_trunc(a * serv[k], PQ)
        pmfs.append(pm)
        cut = max(cut, tl)
    rho = p.lam * p.ef_size * 8.0 / p.C
    share = rho * float(np.dot(pbe, gbe)) / (gef * (1 - rho) + rho * float(np.dot(pbe, gbe)))
    return RingLaw(g, gef, gbe, pbe, slot, a, QT, PQ, serv, pmfs, cut, share)


def head_weight(law: RingLaw, e1: np.ndarray, c1: int, k: int) -> np.ndarray:
    """P(the head is of kind ``k``) given ``e1`` EF among the ``c1`` positions of the front stage (exchangeable:
    EF with probability e1/c1, else a BE size drawn from the mix)."""
    return e1 / c1 if k == 0 else (1 - e1 / c1) * law.pbe[k - 1]


class StagedChain(NamedTuple):
    """The ring-count chain embedded at departures: its transition matrix and, per state in the order of
    ``np.indices`` over (e_1, ..., e_S, n), the EF count of each stage, the PQ occupancy and the state's row."""

    P: sp.csr_matrix
    ev: list  # ev[i]: EF in stage i + 1
    nn: np.ndarray  # EF waiting in the PQ after the admission
    src: np.ndarray  # the row of each state in P


def build_chain(law: RingLaw, sizes: list[int]) -> StagedChain:
    """The transitions of the staged chain with ``sizes`` positions per stage (the head's stage first), from one
    departure to the next: the head leaves (of kind k with :func:`head_weight`), the front packet of every stage
    i + 1 moves into stage i (EF with probability e_{i+1}/c_{i+1}), j EF arrive during the head's service (the
    truncated Poisson law of kind k), and one packet is admitted into the back stage -- EF when the PQ is not
    empty, else BE."""
    PQ, S = law.PQ, len(sizes)
    dims = [c + 1 for c in sizes] + [PQ + 1]
    grid = np.indices(dims).reshape(len(dims), -1)
    ev, nn = [grid[i] for i in range(S)], grid[S]
    nS = nn.size
    # front-stage count major, rotated so that state 0 -- where the direct solve grounds first -- is a likely one
    f0 = int(round(sizes[0] * min(max(law.share, 0.0), 1.0)))

    def idx(e, n):
        e = [(e[0] - f0) % dims[0]] + list(e[1:])
        return np.ravel_multi_index(tuple(e) + (n,), dims)

    src = idx(ev, nn)
    rows, cols, vals = [], [], []
    for k in range(law.K + 1):
        w = head_weight(law, ev[0], sizes[0], k)
        e_head = [ev[0] - (1 if k == 0 else 0)] + ev[1:]
        # the front packet of every stage i+1 moves into stage i (EF with probability e_{i+1}/c_{i+1})
        for bits in range(1 << (S - 1)):
            ww = w.astype(float).copy()
            e2 = [x.copy() for x in e_head]
            for i in range(S - 1):
                m = (bits >> i) & 1
                frac = ev[i + 1] / sizes[i + 1]
                ww *= frac if m else (1 - frac)
                e2[i] += m
                e2[i + 1] -= m
            ok = ww > 0
            pm = law.pmfs[k]
            for m in range(len(pm)):
                n1 = np.minimum(PQ, nn[ok] + m)
                adm = (n1 > 0).astype(np.int64)
                e3 = [x[ok] for x in e2]
                e3[S - 1] = e3[S - 1] + adm  # the admitted packet joins the back stage
                rows.append(src[ok])
                cols.append(idx(e3, n1 - adm))
                vals.append(ww[ok] * pm[m])
    P = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(nS, nS))
    P.sum_duplicates()
    return StagedChain(P, ev, nn, src)


def departure_weights(law: RingLaw, chain: StagedChain, c1: int) -> np.ndarray:
    """``W[k, n, E]``: the long-run probability that a departure cycle starts with ``n`` EF waiting, ``E`` EF in
    the ring and a head of kind ``k`` (the chain's stationary law, ``c1`` positions in the front stage)."""
    x = np.maximum(stationary_dtmc(chain.P)[chain.src], 0.0)
    x /= x.sum()
    Etot = np.sum(chain.ev, axis=0)
    W = np.zeros((law.K + 1, law.PQ + 1, law.QT + 1))
    for k in range(law.K + 1):
        np.add.at(W[k], (chain.nn, Etot), x * head_weight(law, chain.ev[0], c1, k))
    return W


def delay_lattice(law: RingLaw) -> tuple[int, int, int]:
    """(Y, L, M): the "head + PQ" part of a delay is below ``Y`` granules, every delay below ``L``; the lattice is
    refined ``M`` times (:func:`refinement`). ResourceError when the refined lattice is above MAX_LATTICE."""
    Y = int(law.serv.max() + (law.PQ + 1) * law.gef) + 1  # granules: the head + PQ part is below this
    gmax = int(max(law.gbe.max(), law.gef))
    L = (law.QT - 1) * gmax + Y + 1
    # The lattice is refined M times (the CCDF is exact for the chain at every refined point, and lies between
    # its two neighbours in between).
    M = refinement(law.gef, L)
    if L * M > MAX_LATTICE:
        raise ResourceError(f"the ring method's delay lattice would have {L * M:.3g} points (granule {law.g} B, the "
                            f"gcd of the packet sizes); above {MAX_LATTICE:.3g}", field="Q_t")
    return Y, L, M


def head_parts(law: RingLaw, W: np.ndarray, M: int, Yf: int) -> tuple[np.ndarray, float, float]:
    """(H, acc, mean_num), all per departure and in granules: ``H[E', i]`` the weight of accepted arrivals whose
    "head + PQ" part (s - u) + (n + j + 1) GEF exceeds i/M granules, by E' (EF among ring positions 2..Q_t);
    ``acc`` the accepted arrivals; ``mean_num`` the sum of their delays (the head + PQ part, and the ring part
    E' GEF + (QT - 1 - E') E[S]), from the departure weights ``W`` (:func:`departure_weights`)."""
    a, gef, QT, PQ = law.a, law.gef, law.QT, law.PQ
    acc = 0.0
    mean_num = 0.0
    ES = float(np.dot(law.pbe, law.gbe))
    nmax = int(np.max(np.flatnonzero(W.sum(axis=0).sum(axis=1) > 0)))
    z = np.arange(Yf, dtype=float) / M
    E_arr = np.arange(QT + 1)
    H = np.zeros((QT + 1, Yf))
    for k in range(law.K + 1):
        s = law.serv[k]
        m = a * s
        Jall = min(PQ, len(law.pmfs[k]) + 1)
        jj = np.arange(Jall)
        F, pj1, pj2 = head_part(a, s, gef, Jall, z)
        Eprime = E_arr - (1 if k == 0 else 0)
        okE = Eprime >= 0
        Wk = W[k][:nmax + 1].copy()  # [n, E]
        Wk[:, ~okE] = 0.0
        hn = np.empty((nmax + 1, Yf))
        for n in range(nmax + 1):
            J = min(PQ - n, Jall)
            tot = float(np.sum(Wk[n]))
            if J <= 0 or tot == 0.0:
                hn[n] = 0.0
                continue
            acc_n = float(np.sum(pj1[:J])) if J < PQ - n else m - poisson_excess(m, PQ - n)
            sh = n * gef * M
            hn[n, :sh] = F[J - 1, 0]
            hn[n, sh:] = F[J - 1, :Yf - sh]
            acc += tot * acc_n
            # mean: the head + PQ part, and the ring part E' GEF + (QT - 1 - E') E[S]
            base = s + (n + jj[:J] + 1) * gef
            head = float(np.sum(base * pj1[:J] - (jj[:J] + 1) / a * pj2[:J])) if a > 0 else 0.0
            ring = float(np.sum(Wk[n, okE] * (Eprime[okE] * gef + (QT - 1 - Eprime[okE]) * ES)))
            mean_num += tot * head + ring * acc_n
        H[Eprime[okE]] += Wk[:, okE].T @ hn
    return H, acc, mean_num


def ring_ccdf(law: RingLaw, H: np.ndarray, acc: float, M: int, Lf: int) -> np.ndarray:
    """P(D > i/M granules | accepted), i = 0 .. Lf - 1, from the head parts ``H`` (:func:`head_parts`).

    The ring part R(E') = E' GEF + the sum of QT-1-E' BE sizes, on the refined lattice (every M-th point): in the
    frequency domain the sum's transform is the BE mix's to the power QT-1-E', and E' GEF a phase. The CCDF
    numerator is sum_E' (R(E') pmf * H[E'])(x) + H[E'](0) P(R(E') > x) (H is constant below 0)."""
    QT, Yf = law.QT, H.shape[1]
    N = fft.next_fast_len(Lf + Yf, real=True)
    pmfS = np.zeros(N)
    np.add.at(pmfS, law.gbe * M, law.pbe)
    phi = fft.rfft(pmfS)
    shift = np.exp(-2j * np.pi * np.arange(len(phi)) * (law.gef * M) / N)
    acc_f = np.zeros(len(phi), dtype=complex)
    tail_f = np.zeros(len(phi), dtype=complex)
    term = np.ones(len(phi), dtype=complex)  # phi^nb * shift^E' for E' = QT-1-nb, built from E' = QT-1 down
    term *= shift ** (QT - 1)
    inv_shift = np.conj(shift)
    for nb in range(QT):
        Ep = QT - 1 - nb
        if nb > 0:
            term *= phi * inv_shift
        if H[Ep, 0] > 0 or np.any(H[Ep] > 0):
            acc_f += term * fft.rfft(H[Ep], N)
            tail_f += H[Ep, 0] * term
    num = fft.irfft(acc_f, N)[:Lf]
    mass = fft.irfft(tail_f, N)[:Lf]
    num += float(np.sum(H[:, 0])) - np.cumsum(mass)
    ccdf_grid = np.clip(num / acc, 0.0, 1.0)
    return np.minimum.accumulate(ccdf_grid)


def solve(p, ccdf_at=(), quantiles=(), progress=None, stages: int | None = 1,
          max_chain: float = STAGED_STATES) -> RingSolution:
    """Solve the ring-count chain for parameters ``p`` (:class:`qosbound.systems.pq_txq.params.Params`); refused before
    anything is built (ResourceError) when :func:`estimate` is above ``max_chain`` states or the memory left.

    The steps: the port's law (:func:`ring_law`), the chain (:func:`build_chain`), its stationary departure
    weights (:func:`departure_weights`), the accepted arrivals' head parts (:func:`head_parts`) and the CCDF on
    the refined lattice (:func:`ring_ccdf`)."""
    why = why_not(p)
    if why is not None:
        raise ScenarioError(f"the ring method does not cover {why}", field="Q_t")
    if stages is None:
        stages = choose_stages(int(p.Q_t), int(p.pq_cap), max_chain)
    # ``max_chain`` chooses the stages; one stage is the least there is (callers decide whether it fits their
    # budget: qosbound.systems.pq_txq.model_route), so its states are never refused here
    refuse_over_budget(estimate(p, stages), max_chain if stages > 1 else None, field="Q_t",
                       remedy="the closed forms and the simulator answer at any ring size")
    t0 = time.perf_counter()
    law = ring_law(p)
    sizes = stage_sizes(law.QT, stages)
    chain = build_chain(law, sizes)
    W = departure_weights(law, chain, sizes[0])
    Es = float(np.sum(W.sum(axis=(1, 2)) * law.serv))  # mean service, granules
    ef_share = float(W[0].sum())
    Y, L, M = delay_lattice(law)
    H, acc, mean_num = head_parts(law, W, M, Y * M)
    a = law.a
    loss = max(0.0, 1.0 - acc / (a * Es)) if a > 0 else 0.0
    mean = mean_num / acc * law.slot
    ccdf_grid = ring_ccdf(law, H, acc, M, L * M)
    sol = RingSolution(chain.nn.size, chain.P.nnz, 0.0, law.slot / M, law.g, mean, loss, ccdf_grid, law.cut,
                       ef_share, len(sizes))
    for q in quantiles:
        v, br = sol.quantile(q)
        sol.quantiles[q], sol.quantile_brackets[q] = v, br
    for t in ccdf_at:
        sol.ccdf[t] = sol.ccdf_at(t)
    sol.seconds = time.perf_counter() - t0
    return sol
