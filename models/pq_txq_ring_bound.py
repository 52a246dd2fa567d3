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
   kind, ``n`` and ``E'`` -- of the state (:mod:`qosbound.models.pq_txq_ring_rewards` computes them in closed
   form). Loss = lost /
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
   within a relative :data:`~qosbound.models.pq_txq_ring_bound_search.REL`); ``P(D > t) <= P(D > X)`` at the
   lattice point ``X`` at or below ``t`` (the CCDF is non-increasing); a ``q``-quantile is at most the smallest
   lattice point ``X`` where ``P(D > X) <= 1 - q`` is proved. The lattice is that of
   :mod:`qosbound.models.pq_txq_ring` (the gcd of the packet sizes, refined), on which these rewards are exact.
6. *Truncations, accounted for.* Poisson counts are cut where their tail is below ``POISSON_TAIL``; the mass
   moved is added to every certificate as ``mass * span(h)`` (it changes ``P h`` by at most that), and the
   accepted arrivals beyond the cut are added to the numerators (at most 1 each to a CCDF count, at most the
   largest delay each to the sum of delays) and left out of the denominators.

Which abstraction (:func:`~qosbound.models.pq_txq_ring_bound_budget.abstractions`). With one label per pattern there
is no choice and the bound is the exact chain. Otherwise: ``blocks(c)`` (the order within blocks of ``c``
consecutive admissions is forgotten; every packet leaves within ``c - 1`` departures of its time) is the tightest
per state, but its labels grow like ``Q_t^3`` and exponentially in ``Q_t / c``; ``front_run`` (the oldest packets
known up to the first change of kind) grows like ``Q_t^2`` and holds the oldest EF packet to its exact time, so it
is tight where EF is a minority of the ring (one EF packet at a time); tracked only for EF counts up to ``K`` it
fits any ring. :func:`solve_bound` solves every abstraction that fits ``max_states`` and reports, per metric, the
smallest bound and which abstraction gave it (each is proved, so the smallest is).

Where each part is computed: the per-departure rewards (step 2) in :mod:`qosbound.models.pq_txq_ring_rewards`;
one abstraction's process, its certificates and the searches for the CCDF points and quantiles (steps 3-5) in
:mod:`qosbound.models.pq_txq_ring_bound_search`; which abstractions are solved and what each costs before it is
built in :mod:`qosbound.models.pq_txq_ring_bound_budget`; here, the smallest bound over the abstractions, what a
proved largest delay adds (:func:`mean_cap`), and the proved intervals of the exact chain on small rings
(:func:`exact_intervals`).

Measured (``benchmarks/bench_ring.py``): see ``docs/pq_txq.md`` for the ratios to the truth, copied from the
benchmark's output.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from qosbound.errors import ScenarioError
from qosbound.models import ring_abstraction as ra
from qosbound.models.budget import refuse_over_budget
from qosbound.models.pq_txq_ring import why_not
from qosbound.models.pq_txq_ring_bound_budget import (ABSTRACTION_STATES, Candidate, ProcessDims, abstractions,
                                                      estimate_process, process_dims, smallest_states)
from qosbound.models.pq_txq_ring_bound_search import BoundProcess
from qosbound.models.pq_txq_ring_rewards import DepartureRewards

__all__ = ["RingBound", "solve_bound", "mean_cap", "ExactIntervals", "exact_intervals", "quantile_interval",
           "BOUND_STATES", "CLOSED_FORM", "CAPPED"]

#: The bound is computed when the smallest abstraction it would solve has at most this many states
#: ((PQ) x labels; the one-stage abstraction has 2 (Q_t + 1) - 2 labels).
BOUND_STATES = 2e4
#: ``RingBound.decided`` of a metric settled by the closed-form largest delay, and of a mean capped by
#: :func:`mean_cap`.
CLOSED_FORM = "the closed-form maximum delay"
CAPPED = "the integral of the proved CCDF (quantile bounds, CCDF points and the largest delay)"


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


def _solve_one(sv: DepartureRewards, ab: ra.Abstraction, ccdf_points: list[int], quantiles, cut=None,
               best: dict | None = None, mus: dict | None = None) -> tuple[dict, dict]:
    """One process's bounds (keyed as in :func:`solve_bound`) and its multipliers. ``best``: the quantile points
    already proved by the processes solved before (only points below them are sought: the smaller is kept
    anyway); ``mus``: their multipliers, the warm start of this process's searches."""
    try:
        b = BoundProcess(sv, ab, cut)
    except ValueError:  # the drift above the cut is not negative at every level: solve it whole
        b = BoundProcess(sv, ab, None)
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


def _refusal(p, d: ProcessDims, max_states: float):
    """The check run on each abstraction before its process is built: ResourceError when the process's estimate
    (:func:`~qosbound.models.pq_txq_ring_bound_budget.estimate_process`) is above ``max_states`` -- the smallest
    process excepted -- or above the memory left."""
    least = smallest_states(p)

    def refuse(name: str, labels: int, entries: int) -> None:
        est = estimate_process(p, name, labels, entries, d)
        refuse_over_budget(est, float(max_states) if est.states > least else None, field="Q_t",
                           remedy="the ring-count approximation, the closed forms and the simulator answer "
                                  "without it")

    return refuse


def _solve_each(sv: DepartureRewards, todo: list, ccdf_points: list[int], quantiles, cut: int,
                refuse) -> tuple[dict, dict, list]:
    """Every abstraction of ``todo`` solved, the smallest first (its multipliers start the next one's searches,
    its quantile points bound them): per metric key the smallest bound (``best``) and the abstraction that gave
    it (``decided``), and per process (name, states, seconds, factorisations)."""
    best: dict = {}
    decided: dict = {}
    solved = []
    mus: dict = {}
    order = sorted(range(len(todo)), key=lambda i: todo[i].labels if isinstance(todo[i], Candidate) else 0)
    for c in [todo[i] for i in order]:
        t1 = time.perf_counter()
        name, ab = c[0], c[1]()
        if not isinstance(c, Candidate):
            refuse(name, ab.size, ab.entries)
        res, mus = _solve_one(sv, ab, ccdf_points, quantiles, cut, best, mus)
        solved.append((name, res["states"], time.perf_counter() - t1, res["factorisations"]))
        for key, v in res.items():
            if key in ("factorisations", "evaluations", "states"):
                continue
            if key not in best or v < best[key]:
                best[key], decided[key] = v, name
    return best, decided, solved


def solve_bound(p, ccdf_at=(), quantiles=(), max_states: float = ABSTRACTION_STATES, only=None,
                max_delay: float | None = None) -> RingBound:
    """Upper bounds on loss, mean delay, the CCDF at ``ccdf_at`` (seconds) and ``quantiles`` (accepted EF): the
    smallest over the abstractions of :func:`~qosbound.models.pq_txq_ring_bound_budget.abstractions` (``only``: a
    list of :class:`~qosbound.models.pq_txq_ring_bound_budget.Candidate` instead, or of (name, build) pairs), and
    over what ``max_delay`` implies (a proved bound on the largest delay, seconds: e.g. the closed form's).

    Refused (ResourceError) before anything is built when a process's estimate
    (:func:`~qosbound.models.pq_txq_ring_bound_budget.estimate_process`) is above ``max_states`` -- the one-stage
    abstraction, the least there is, excepted: callers decide whether it fits their budget
    (:func:`qosbound.systems.pq_txq.ring_results.bound_available`) -- or above the memory left. An abstraction
    given as a (name, build) pair has no counts known before building: it is built (its labels and choice sets)
    and its process estimated from them before the process is built."""
    t0 = time.perf_counter()
    why = why_not(p)
    if why is not None:
        raise ScenarioError(f"the ring method does not cover {why}", field="Q_t")
    d = process_dims(p)
    todo = list(only) if only is not None else abstractions(d.QT, d.cut, max_states)
    refuse = _refusal(p, d, max_states)
    for c in todo:
        if isinstance(c, Candidate):
            refuse(c.name, c.labels, c.entries)
    sv = DepartureRewards(p)
    slot_f = sv.slot_g / sv.M
    points = {t: int(math.floor(t / slot_f + 1e-9)) for t in ccdf_at}
    best, decided, solved = _solve_each(sv, todo, sorted(set(points.values())), quantiles, d.cut, refuse)
    states = max([0] + [s for _, s, _, _ in solved])
    out = _ring_bound(sv, best, decided, points, quantiles, states)
    _tighten(out, max_delay)
    out.solved = solved
    out.seconds = time.perf_counter() - t0
    return out


def _ring_bound(sv: DepartureRewards, best: dict, decided: dict, points: dict, quantiles, states: int) -> RingBound:
    """The bounds of :func:`_solve_each` in seconds and probabilities, under the names the caller asked for
    (``points``: each CCDF time's lattice point)."""
    slot_f = sv.slot_g / sv.M
    loss = min(1.0, best["loss"])
    out = RingBound(states, 0.0, slot_f, sv.g, best["mean"] * sv.slot_g, loss, max_delay=sv.dmax * sv.slot_g)
    for t, X in points.items():
        out.ccdf[t] = min(1.0, best[("ccdf", X)])
        out.decided[("ccdf", t)] = decided[("ccdf", X)]
    for q in quantiles:
        out.quantiles[q] = best[("quantile", q)] * slot_f
        out.decided[("quantile", q)] = decided[("quantile", q)]
    out.decided["loss"], out.decided["mean"] = decided["loss"], decided["mean"]
    return out


def _tighten(out: RingBound, max_delay: float | None) -> None:
    """Lower ``out``'s bounds by what a proved largest delay ``max_delay`` (seconds; None: none) implies, then its
    mean by :func:`mean_cap` (each metric lowered is marked :data:`CLOSED_FORM` or :data:`CAPPED`)."""
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
    refuse_over_budget(estimate_process(p, "exact", 2 ** QT, ra.exact_entries(QT), process_dims(p, whole=True)),
                       None, field="Q_t", remedy="the closed forms and the simulator answer without it")
    sv = DepartureRewards(p)
    b = BoundProcess(sv, ra.exact(sv.QT))
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
        lo, upper = quantile_interval(ccdf, q, sv.top)
        out.quantiles[q] = (lo * slot_f, upper * slot_f)
    out.seconds = time.perf_counter() - t0
    return out


def quantile_interval(ccdf, q: float, top: int) -> tuple[int, int]:
    """Lattice points (lo, hi) around the ``q``-quantile of a delay whose CCDF at each point ``X`` lies in the
    interval ``ccdf(X)`` = (low, high), non-increasing in ``X`` at both ends, with no delay reaching ``top``: ``hi``
    the smallest point where the high end is at most 1 - q (the quantile is at most ``hi``), ``lo`` the largest
    point below it where the low end is above 1 - q, or 0 (the quantile is at least ``lo``). By bisection."""
    lo, hi = 0, top  # smallest X with the upper end <= 1 - q
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ccdf(mid)[1] <= 1 - q else (mid, hi)
    upper = hi
    lo, hi = -1, upper  # largest X with the lower end > 1 - q (the quantile is at least X)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ccdf(mid)[0] > 1 - q else (lo, mid)
    return max(lo, 0), upper
