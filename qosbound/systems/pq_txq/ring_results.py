"""The ring method's results (the ``model-checked`` answer for packet-unit tx-rings beyond the exact chain's
budget): the ring-count chain of :mod:`qosbound.models.pq_txq_ring` (an approximation, or exact with one
ring position per stage, then with intervals proved on it) and, where its smallest process fits
:data:`~qosbound.models.pq_txq_ring_bound.BOUND_STATES`, the upper bound of
:mod:`qosbound.models.pq_txq_ring_bound`.

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
from qosbound.models import pq_txq_ring, pq_txq_ring_bound, pq_txq_ring_bound_budget
from qosbound.results import Interval, Kind, Result
from qosbound.systems.curves import lattice_ccdf
from qosbound.systems.pq_txq.closed_form import closed_form_results
from qosbound.systems.pq_txq.params import scenario_fields
from qosbound.systems.pq_txq.ring_names import approx_name, ring_neglects
from qosbound.systems.solve_cache import cached

__all__ = ["ring_results", "bound_results", "bound_available", "conservative", "staged_exact", "closed_form_max"]


def bound_budget(opts) -> float:
    """The state budget of the bound's processes: the scenario's, at most the module's BOUND_STATES."""
    return min(float(opts.max_states), pq_txq_ring_bound.BOUND_STATES)


def staged_exact(p, opts) -> bool:
    """Whether the staged chain the ring method takes has one ring position per stage (it is then exact)."""
    budget = min(float(opts.max_states), pq_txq_ring.STAGED_STATES)
    return pq_txq_ring.choose_stages(int(p.Q_t), int(p.pq_cap), budget) == p.Q_t


def bound_available(p, opts) -> bool:
    """Whether the ring method answers with the upper bound too: the staged chain is not already exact and the
    bound's smallest process fits its budget."""
    return not staged_exact(p, opts) and pq_txq_ring_bound_budget.smallest_states(p) <= bound_budget(opts)


def conservative(p, opts) -> bool:
    """Whether the ring method's results under the metrics' own names are never below the exact chain's: exact
    (one position per stage, with proved intervals) or the upper bound."""
    return staged_exact(p, opts) or bound_available(p, opts)


def closed_form_max(p) -> float | None:
    """The closed-form maximum delay (s) when it is a proved upper bound for ``p`` (None otherwise)."""
    for r in closed_form_results(p):
        if r.metric == "EF.delay.max" and r.kind is Kind.UPPER_BOUND:
            return r.value
    return None


def ring_results(p, opts, ccdf_at: list[float], quantiles: list[float], progress, exact_refused: str) -> list[Result]:
    """EF delay metrics by the ring method, the ``model-checked`` answer where the exact PQ + TxQ chain is above
    its budget or would round packet sizes (``exact_refused``: why), with as many ring stages as fit
    ``max_states`` and the module's STAGED_STATES. With one ring position per stage the chain is exact and every
    metric comes with an interval proved on it (:func:`~qosbound.models.pq_txq_ring_bound.exact_intervals`);
    otherwise approximations, and beside them the upper bounds when :func:`bound_available` (see the module
    docstring for the names)."""
    with_bound = bound_available(p, opts)
    advance = progress.task("ring-count chain" + (" and its upper bound" if with_bound else ""),
                            total=2 if with_bound else 1)
    with scenario_fields("methods.model-checked"):
        sol, read_back = cached(pq_txq_ring.solve, p, ccdf_at, quantiles, stages=None,
                                max_chain=min(float(opts.max_states), pq_txq_ring.STAGED_STATES))
        exact = sol.stages == p.Q_t
        proved = cached(pq_txq_ring_bound.exact_intervals, p, ccdf_at, quantiles)[0] if exact else None
    advance()
    prov = {"model": "models/pq_txq_ring.py (ring-count chain embedded at departures)", "engine": "scipy sparse LU",
            "states": sol.states, "transitions": sol.transitions, "seconds": round(sol.seconds, 4),
            "granule_bytes": sol.granule, "lattice_step_s": sol.slot, "ef_share_of_departures": sol.ef_share,
            "poisson_tail_cut": sol.cut_mass, "exact_chain": exact_refused, "stages": sol.stages,
            "source": f"ring-count chain, {sol.states} states (the exact PQ + TxQ chain is not used)",
            "kind": "the exact chain (one ring position per stage), intervals proved" if exact else "approximation"}
    if read_back:
        prov["cache"] = "read back (QOSBOUND_CACHE_DIR; seconds: the original solve)"
    note = (f"ring-count chain of {sol.states} states, {sol.stages} stage(s) of the {p.Q_t}-packet ring (Ferrari, Pau "
            "& Raffaelli 2001 system, packet-unit tx-ring); "
            f"the exact PQ + TxQ chain: {exact_refused}")
    if exact:
        note += ("; one position per stage keeps the whole pattern: the interval is proved on it by a certificate "
                 "(models/ratio_mdp.py, ratio_interval)")

    def iv(v: float, bracket: tuple | None = None, lattice: tuple | None = None) -> tuple[float, Interval]:
        if exact:
            lo, hi = bracket
            return min(max(v, lo), hi), Interval.numerical(lo, hi, note=note)
        return v, Interval.approximation(v, neglects=ring_neglects(), note=note + (
            f"; the chain's own value lies in [{lattice[0]:.9g}, {lattice[1]:.9g}] (lattice)" if lattice else ""))

    def named(metric: str, vi: tuple, unit: str) -> Result:
        value, interval = vi
        if with_bound:
            return Result(approx_name(metric), "model-checked", value, unit, interval, dict(prov), estimates=metric)
        return Result(metric, "model-checked", value, unit, interval, dict(prov))

    curve = lattice_ccdf("EF.delay.ccdf", "model-checked", sol.ccdf_grid, sol.slot,
                         Kind.NUMERICAL if exact else Kind.APPROXIMATION, neglects=None if exact else ring_neglects(),
                         note=f"the chain's delay law on its lattice of {sol.slot:.3g} s"
                         + (", solved in floating point (no error bound per point: the metrics carry the "
                            "intervals proved)" if exact else "") + f"; {note}")
    out = [replace(named("EF.delay.mean", iv(sol.mean, proved.mean if exact else None), "s"), curve=curve)]
    for q in quantiles:
        out.append(named(f"EF.delay.{quantile_name(q)}", iv(sol.quantiles[q], proved.quantiles[q] if exact else None,
                                                            sol.quantile_brackets[q]), "s"))
    for t in ccdf_at:
        out.append(named(ccdf_name("EF.delay", t), iv(sol.ccdf[t], proved.ccdf[t] if exact else None,
                                                      sol.ccdf_bracket(t)), "1"))
    out.append(named("EF.loss", iv(sol.loss, proved.loss if exact else None), "1"))
    if with_bound:
        out += bound_results(p, opts, ccdf_at, quantiles, exact_refused)
        advance()
    return out


def bound_results(p, opts, ccdf_at, quantiles, exact_refused: str) -> list[Result]:
    """The upper bounds of :mod:`qosbound.models.pq_txq_ring_bound` under the metrics' own names: per metric the
    smallest of the ring bound's processes and the closed-form maximum delay (all proved), with which decided."""
    dmax = closed_form_max(p)
    with scenario_fields("methods.model-checked"):
        b, read_back = cached(pq_txq_ring_bound.solve_bound, p, ccdf_at, quantiles, max_states=min(
            float(opts.max_states), pq_txq_ring_bound_budget.ABSTRACTION_STATES), max_delay=dmax)
    solved = "; ".join(f"{name}: {n} states, {sec:.1f} s" for name, n, sec, _ in b.solved)
    prov = {"model": "models/pq_txq_ring_bound.py (the exact ring chain with part of the EF/BE pattern chosen by "
                     "an adversary under Little's law; ratio bounds proved by certificates, models/ratio_mdp.py)",
            "engine": "policy iteration (sparse LU), certificates checked at every state",
            "states": b.states, "seconds": round(b.seconds, 4), "processes": solved,
            "lattice_step_s": b.slot, "exact_chain": exact_refused,
            "source": f"ring bound, {len(b.solved)} process(es): {solved}", "kind": "upper bound"}
    if read_back:
        prov["cache"] = "read back (QOSBOUND_CACHE_DIR; seconds: the original solve)"
    base = (f"upper bound on the {p.Q_t}-packet ring: every process solved (the ring pattern partly forgotten, "
            "the adversary choosing the rest, Little's law kept) includes the exact chain, and a certificate checked "
            "at every state proves each ratio (proof in models/pq_txq_ring_bound.py); the approximation beside it "
            f"is {approx_name('EF.delay.*')}")

    def res(metric, value, unit, key):
        decided = b.decided.get(key, "")
        prv = dict(prov, decided_by=decided)
        return Result(metric, "model-checked", value, unit,
                      Interval.upper_bound(value, note=f"{base}; the smallest bound came from {decided}"), prv)

    out = [res("EF.delay.mean", b.mean, "s", "mean")]
    for q in quantiles:
        out.append(res(f"EF.delay.{quantile_name(q)}", b.quantiles[q], "s", ("quantile", q)))
    for t in ccdf_at:
        out.append(res(ccdf_name("EF.delay", t), b.ccdf[t], "1", ("ccdf", t)))
    out.append(res("EF.loss", b.loss, "1", "loss"))
    return out
