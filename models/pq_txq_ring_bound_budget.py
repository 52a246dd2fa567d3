"""Which abstraction processes the ring bound solves, and what each costs, from the parameters alone: the
estimate-before-build contract of :mod:`qosbound.models.budget` for :mod:`qosbound.models.pq_txq_ring_bound`
(whose ``solve_bound`` is "the bound" below).

The bound solves, for a ring of ``Q_t`` packets, the abstractions of :mod:`qosbound.models.ring_abstraction` that
fit a budget of states (:func:`abstractions`), each on the PQ levels :func:`solved_levels` keeps; before any is
built its states, transitions and memory are estimated (:func:`estimate_process`) from the counts the abstraction
declares (:class:`Candidate`) and the sizes of the per-departure arrays (:func:`process_dims`, as
:class:`~qosbound.models.pq_txq_ring_rewards.DepartureRewards` computes them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from qosbound.models import ring_abstraction as ra
from qosbound.models.budget import Estimate
from qosbound.models.pq_txq_ring import pois_trunc, refinement, size_law

__all__ = ["Candidate", "abstractions", "solved_levels", "smallest_states", "ProcessDims", "process_dims",
           "estimate_process", "estimate_bound", "ABSTRACTION_STATES", "BLOCKS_MAX"]

#: Budget on the states of each abstraction solved (a sparse LU factorisation per policy; 4e4 states take
#: about a second each here).
ABSTRACTION_STATES = 8e3
#: Largest block of :func:`~qosbound.models.ring_abstraction.blocks` tried (measured: blocks(9) of a 16-ring,
#: 7 872 states, took 40 s per ratio and was looser than the front run's 968 states at 0.5 s).
BLOCKS_MAX = 3


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
    """States of the smallest process the bound (``solve_bound``) would solve (the one-stage abstraction)."""
    return ra.stages_labels(int(p.Q_t), 1) * solved_levels(p)


class Candidate(NamedTuple):
    """An abstraction the bound (``solve_bound``) may solve: its name, its builder and, known before it is built,
    its labels and the entries of its choice sets (summed over the labels and both admitted kinds; at least as
    many as are built)."""

    name: str
    build: Callable[[], ra.Abstraction]
    labels: int
    entries: int


def abstractions(QT: int, PQ: int, max_states: float = ABSTRACTION_STATES) -> list[Candidate]:
    """The abstractions the bound (``solve_bound``) solves for a ring of ``QT`` and a PQ of ``PQ``.

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


class ProcessDims(NamedTuple):
    """The sizes the per-departure arrays and the processes take (:func:`process_dims`)."""

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


def process_dims(p, whole: bool = False) -> ProcessDims:
    """The sizes :class:`~qosbound.models.pq_txq_ring_rewards.DepartureRewards` and the processes take, from the
    parameters (as they compute them); ``whole``: the process solved on every PQ level (no cut)."""
    g, gef, gbe, pbe = size_law(p)
    a = p.lam * g * 8.0 / p.C
    QT, PQ, K = int(p.Q_t), int(p.pq_cap), len(gbe)
    serv = np.concatenate([[gef], gbe]).astype(float)
    lens = [len(pois_trunc(a * serv[k], PQ)[0]) for k in range(K + 1)]
    cut = PQ if whole else solved_levels(p)
    Y = int(serv.max() + (PQ + 1) * gef) + 1
    L = (QT - 1) * int(max(gbe.max(), gef)) + 1
    M = refinement(gef, L + Y)
    return ProcessDims(QT, PQ, K, cut, max(_draws(lens[0], PQ, cut), _draws(max(lens[1:]), PQ, cut)), Y * M, L,
                       min(PQ, max(lens) + 1))


def estimate_process(p, name: str, labels: int, entries: int, dims: ProcessDims | None = None) -> Estimate:
    """What solving one abstraction's process builds (with the shared per-service arrays), from the parameters and the
    abstraction's ``labels`` and choice-set ``entries`` alone (nothing is allocated).

    States: ``labels x cut`` (:func:`solved_levels`; a cut is taken only where both heads' mean arrivals per service
    are below 0.9, so the drift above it is below -0.1 and :class:`~qosbound.models.ratio_mdp.ChoiceMDP` accepts it).
    Transitions: the process's edges as built, from every state to its draws ``(a, n')`` (:func:`_draws`, the larger
    head kind) and from every post-decision node ``(label, a, n')`` to each label of its choice set -- the nonzeros
    of the linear programme's balance rows besides its identity. Memory, in 8-byte floats unless said: the
    per-service arrays (the head + PQ parts (K + 1) PQ x Y M and the head part's (J x Y M) arrays, the ring part by
    E' with its survival function, Q_t x (L + 1) each), a CCDF point's rewards ((K + 1) PQ x (L + 1 + 2 Q_t), and a
    dozen label x PQ arrays), the draws T and their truncation (2 kinds x PQ x 2 x PQ, thrice), the Bellman
    operator's per-entry arrays at the full width (5 x entries x PQ), the linear programme (:data:`LP_BYTES` per
    nonzero) and a policy evaluation (:data:`LU_BYTES` per nonzero of the chain and of its :data:`LU_FILL` x
    fill-in), and the solvers' own :data:`SOLVER_BYTES`. Not a proof: an estimate of the dominant arrays
    (tests/test_model_estimates.py checks states and transitions against what is built). Against the peak resident
    memory measured around the bound (``solve_bound``) in a fresh interpreter (p99 and p99.9): 1.7 x on Ferrari's
    sizes with an 8-packet ring (exact, 2 560 states, 28.7 MB), 1.2 x and 1.3 x on IMIX with a 16-packet ring at 40 %
    and 70 % EF (front_run(9), 2 904 and 3 872 states, 51 and 70 MB), 1.5 x with one 1536-byte BE size and a PQ of 64
    (front_run(3), 7 424 states, 175 MB)."""
    d = dims if dims is not None else process_dims(p)
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
    """What the bound (``solve_bound``) builds, from the parameters alone: the largest of its processes
    (``candidates``, by default :func:`abstractions`; they are solved one after the other, so the largest sets the
    peak)."""
    d = process_dims(p)
    todo = candidates if candidates is not None else abstractions(d.QT, d.cut, max_states)
    return max((estimate_process(p, c.name, c.labels, c.entries, d) for c in todo),
               key=lambda e: (e.memory, e.states))

