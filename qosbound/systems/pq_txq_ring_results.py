"""The ring method's results (the ``model-checked`` answer for packet-unit tx-rings beyond the exact chain's
budget): the ring-count chain of :mod:`qosbound.models.pq_txq_ring` (an approximation, or exact with one
ring position per stage) and, where its MDP fits :data:`~qosbound.models.pq_txq_ring_bound.BOUND_STATES`, the
upper bound of :mod:`qosbound.models.pq_txq_ring_bound`.

Naming. With the bound, the metrics' own names (``EF.delay.mean``, ``EF.delay.p99``, ``EF.delay.ccdf@..``,
``EF.loss``) carry the bound, as results of kind ``upper bound``: SLO verdicts judge on them (a ``max`` SLO
that holds on the bound holds for the port), agreement checks that no other method's estimate lies above
them, and ``admit`` searches on them. The approximation stays beside them, named ``EF.approx.<the rest>``
(``EF.approx.delay.p99``) and marked as an estimate of the metric (``Result.estimates``), so that agreement
compares it with the other methods as before and no SLO is judged on it. Without the bound (the MDP above its
budget) the approximation keeps the metrics' own names, as before the bound existed.
"""

from __future__ import annotations

from dataclasses import replace

from qosbound.metric_names import ccdf_name, quantile_name
from qosbound.results import Interval, Kind, Result
from qosbound.systems.curves import lattice_ccdf
from qosbound.systems.pq_txq_adapter import scenario_fields

__all__ = ["RING_NEGLECTS", "ring_results", "bound_available", "conservative", "approx_name"]

#: What the ring method leaves out (Interval.approximation's ``neglects``).
RING_NEGLECTS = ("the order of the EF packets within each stage of the tx-ring (their positions are taken as "
                 "exchangeable given how many a stage holds: the head is EF with probability e_1/c_1); it came out "
                 "below the simulated delay and loss in every case measured (p99.9 by 0.2 % at 10 % EF on a "
                 "64-packet ring, by 2-5 % at 40-80 % EF; loss up to 4.6x below; docs/pq_txq.md)")


def approx_name(metric: str) -> str:
    """The approximation's name beside a bound: 'EF.delay.p99' -> 'EF.approx.delay.p99'."""
    return "EF.approx." + metric[len("EF."):]


def bound_budget(opts) -> float:
    from qosbound.models import pq_txq_ring_bound

    return min(float(opts.max_states), pq_txq_ring_bound.BOUND_STATES)


def staged_exact(p, opts) -> bool:
    """Whether the staged chain the ring method takes has one ring position per stage (it is then exact)."""
    from qosbound.models import pq_txq_ring

    budget = min(float(opts.max_states), pq_txq_ring.STAGED_STATES)
    return pq_txq_ring.choose_stages(int(p.Q_t), int(p.pq_cap), budget) == p.Q_t


def bound_available(p, opts) -> bool:
    """Whether the ring method answers with the upper bound too: the staged chain is not already exact and the
    bound's MDP with one stage fits its budget."""
    from qosbound.models import pq_txq_ring

    return not staged_exact(p, opts) and pq_txq_ring.stage_states(int(p.Q_t), int(p.pq_cap), 1) <= bound_budget(opts)


def conservative(p, opts) -> bool:
    """Whether the ring method's results under the metrics' own names are never below the exact chain's: exact
    (one position per stage) or the upper bound."""
    return staged_exact(p, opts) or bound_available(p, opts)


def ring_results(p, opts, ccdf_at: list[float], quantiles: list[float], progress, exact_refused: str) -> list[Result]:
    """EF delay metrics by the ring method, the ``model-checked`` answer where the exact chain is above its budget
    (``exact_refused``: why), with as many ring stages as fit ``max_states`` and the module's STAGED_STATES.
    Approximations, except with one ring position per stage where the chain is the exact one (mean and loss
    exact in floating point, quantiles and CCDF points bracketed by the refined lattice); beside them the upper
    bounds when :func:`bound_available` (see the module docstring for the names)."""
    from qosbound.models import pq_txq_ring

    with_bound = bound_available(p, opts)
    advance = progress.task("ring-count chain" + (" and its upper bound" if with_bound else ""),
                            total=2 if with_bound else 1)
    with scenario_fields("methods.model-checked"):
        sol = pq_txq_ring.solve(p, ccdf_at, quantiles, stages=None,
                                max_chain=min(float(opts.max_states), pq_txq_ring.STAGED_STATES))
    advance()
    exact = sol.stages == p.Q_t
    prov = {"model": "models/pq_txq_ring.py (ring-count chain embedded at departures)", "engine": "scipy sparse LU",
            "states": sol.states, "transitions": sol.transitions, "seconds": round(sol.seconds, 4),
            "granule_bytes": sol.granule, "lattice_step_s": sol.slot, "ef_share_of_departures": sol.ef_share,
            "poisson_tail_cut": sol.cut_mass, "exact_chain": exact_refused, "stages": sol.stages,
            "source": f"ring-count chain, {sol.states} states (the exact chain is above the budget)",
            "kind": "exact (one ring position per stage)" if exact else "approximation"}
    note = (f"ring-count chain of {sol.states} states, {sol.stages} stage(s) of the {p.Q_t}-packet ring (Ferrari, Pau "
            "& Raffaelli 2001 system, packet-unit tx-ring); "
            f"the exact chain: {exact_refused}")

    def iv(v: float, lo: float | None = None, hi: float | None = None) -> Interval:
        if exact:
            return Interval.exact(v, note=note) if lo is None else Interval.numerical(min(lo, v), max(hi, v), note=note)
        return Interval.approximation(v, neglects=RING_NEGLECTS, note=note + (
            f"; the chain's own value lies in [{lo:.9g}, {hi:.9g}] (lattice)" if lo is not None else ""))

    def named(metric: str, value: float, unit: str, interval: Interval) -> Result:
        if with_bound:
            return Result(approx_name(metric), "model-checked", value, unit, interval, dict(prov), estimates=metric)
        return Result(metric, "model-checked", value, unit, interval, dict(prov))

    curve = lattice_ccdf("EF.delay.ccdf", "model-checked", sol.ccdf_grid, sol.slot,
                         Kind.EXACT if exact else Kind.APPROXIMATION, neglects=None if exact else RING_NEGLECTS,
                         note=f"the chain's delay law on its lattice of {sol.slot:.3g} s; {note}")
    out = [replace(named("EF.delay.mean", sol.mean, "s", iv(sol.mean)), curve=curve)]
    for q in quantiles:
        lo, hi = sol.quantile_brackets[q]
        out.append(named(f"EF.delay.{quantile_name(q)}", sol.quantiles[q], "s", iv(sol.quantiles[q], lo, hi)))
    for t in ccdf_at:
        lo, hi = sol.ccdf_bracket(t)
        out.append(named(ccdf_name("EF.delay", t), sol.ccdf[t], "1", iv(sol.ccdf[t], lo, hi)))
    out.append(named("EF.loss", sol.loss, "1", iv(sol.loss)))
    if with_bound:
        out += bound_results(p, opts, ccdf_at, quantiles, exact_refused, sol)
        advance()
    return out


def bound_results(p, opts, ccdf_at, quantiles, exact_refused: str, approx) -> list[Result]:
    """The upper bounds of :mod:`qosbound.models.pq_txq_ring_bound` under the metrics' own names."""
    from qosbound.models import pq_txq_ring_bound

    with scenario_fields("methods.model-checked"):
        b = pq_txq_ring_bound.solve_bound(p, ccdf_at, quantiles, max_states=min(
            bound_budget(opts), pq_txq_ring_bound.BOUND_STAGED_STATES))
    prov = {"model": "models/pq_txq_ring_bound.py (staged ring-count chain with the order within each stage "
                     "chosen by an adversary: a Markov decision process)", "engine": "value iteration (Odoni bracket)",
            "states": b.states, "stages": b.stages, "seconds": round(b.seconds, 4), "solves": b.solves,
            "lattice_step_s": b.slot, "largest_bracket_left": b.worst_gap, "exact_chain": exact_refused,
            "source": f"ring bound, MDP of {b.states} states, {b.stages} stage(s)", "kind": "upper bound"}
    note = (f"upper bound: the worst order of the packets within each of {b.stages} stage(s) of the {p.Q_t}-packet "
            f"ring (an MDP of {b.states} states) bounds the exact chain's long-run rates, which include the "
            "scenario's own order (proof in models/pq_txq_ring_bound.py); the approximation beside it is "
            f"{approx_name('EF.delay.*')}")
    out = [Result("EF.delay.mean", "model-checked", b.mean, "s", Interval.upper_bound(b.mean, note=note), dict(prov))]
    for q in quantiles:
        name = f"EF.delay.{quantile_name(q)}"
        out.append(Result(name, "model-checked", b.quantiles[q], "s", Interval.upper_bound(b.quantiles[q], note=note),
                          dict(prov)))
    for t in ccdf_at:
        out.append(Result(ccdf_name("EF.delay", t), "model-checked", b.ccdf[t], "1",
                          Interval.upper_bound(b.ccdf[t], note=note), dict(prov)))
    out.append(Result("EF.loss", "model-checked", b.loss, "1", Interval.upper_bound(b.loss, note=note), dict(prov)))
    return out
