"""The port by model checking, per class.

* **Priority levels** on ``pq_txq``'s chains (:func:`level_chain`, the one place that builds a ``pq_txq``
  scenario from a port and asks that system for its ``model-checked`` answer: the exact PQ + TxQ chain within
  its budget, else the ring method -- the ring-count chain, and the ring MDP's bound where it fits). The
  level's class is ``pq_txq``'s EF (its queue limit the PQ capacity) and every other class's packets are its
  best effort: one saturated stream of sizes drawn i.i.d. from their throughput-weighted mix.

  That is the port itself, and ``pq_txq``'s kinds stand (exact, numerical, or the ring MDP's upper bound),
  only when the port IS that system: one priority class (no policer, tail drop) over one saturated weighted
  class. Otherwise every number is relabelled an approximation that says what it neglects, and the ring
  MDP's bound is not reported at all: its proof (:mod:`qosbound.models.pq_txq_ring_bound`) takes the lower
  classes' sizes as i.i.d. draws, while under DRR they alternate by quanta (and lower priority levels are no
  saturated stream either), so it is no longer proved -- and, not being an estimate either, it can lie far
  above the port's delay (3x on examples/port_wan100.yaml's video); the ring-count chain answers. For a level
  below the top one the chain also takes the levels above as part of the ring's best effort, neglecting that
  they are served first.
* **Weighted classes**: ``af``'s dropper chains (``models/wred.prism``, ``wred_ewma.prism`` on Storm) with the
  class served at its max-min DRR rate of the link less the priority levels' long-run rates -- the inputs of
  the closed form (:func:`qosbound.systems.port.closed_form.queue_inputs`). Exactly ``af``'s answer for a port
  with no priority traffic and no ring.

Every chain's size is estimated before it is built (``max_states``; ``af``'s
:data:`~qosbound.systems.af.model_checked.MAX_AF_MODEL_STATES`); a class whose chain does not fit, or that no
chain covers, is left out with the reason (``provenance['omitted']``), and the method is skipped only when no
class is covered.
"""

from __future__ import annotations

import math

import numpy as np

from qosbound.analytic.cbwfq import service_rates
from qosbound.analytic.red_queue import instantaneous
from qosbound.errors import SKIPPABLE, MethodNotApplicable, ScenarioError
from qosbound.metric_names import ccdf_name, quantile_name
from qosbound.models import pq_txq_ring
from qosbound.models.af import check_wred, check_wred_ewma
from qosbound.results import Interval, Kind, Result
from qosbound.scenario import build
from qosbound.systems import get_system
from qosbound.systems.af.model_checked import MAX_AF_MODEL_STATES, model_states
from qosbound.systems.port.closed_form import (allocation, class_queue_results, queue_inputs, queue_neglects,
                                               residual_rate)
from qosbound.systems.port.elements import Port, TrafficClass
from qosbound.systems.port.schema import Scenario
from qosbound.systems.pq_txq.params import params
from qosbound.systems.pq_txq.ring_names import ring_neglects
from qosbound.systems.pq_txq.route import model_route
from qosbound.systems.solve_cache import cached

__all__ = ["model_checked", "level_chain", "pq_txq_raw", "exact_shape", "weighted_chain"]


def _traffic_raw(c: TrafficClass) -> dict | None:
    """A priority class's traffic in pq_txq's EF form (one packet size), or None."""
    if c.saturated or any(s.sizes.exponential or len(s.sizes.sizes) != 1 for s in c.streams):
        return None
    sizes = {s.sizes.sizes[0] for s in c.streams}
    if len(sizes) != 1:
        return None
    spec = c.spec.traffic
    if spec.calls is not None:
        return {"calls": int(spec.calls), "call": {"rate": float(spec.call.rate), "size": float(spec.call.size),
                                                  "arrivals": "cbr"}}
    if spec.streams is not None:
        return {"streams": [{"rate": float(s.rate), "size": float(s.size), "arrivals": s.arrivals,
                             **({} if s.phase == "random" else {"phase": float(s.phase)})} for s in spec.streams]}
    s = c.streams[0]
    if s.kind not in ("poisson", "cbr") or (s.kind == "cbr" and s.phase is not None):
        return None
    return {"rate": float(s.rate), "size": float(s.sizes.sizes[0]), "arrivals": s.kind}


def exact_shape(port: Port) -> bool:
    """Whether the port is pq_txq's system exactly: one priority class (no policer, tail drop, one precedence)
    over one saturated weighted class, and nothing else with traffic."""
    act = port.active
    pr = [c for c in act if c.priority is not None]
    w = port.weighted
    if len(pr) != 1 or len(w) != 1 or not w[0].saturated:
        return False
    c = pr[0]
    return c.police is None and c.marker is None and not c.dropper.red and w[0].size_law() is not None


def _below(port: Port, c: TrafficClass) -> tuple[list[float], list[float]] | None:
    """The size mix (bytes, packet probabilities) of every other class's packets, weighted by their long-run
    packet rates (weighted classes at their max-min allocation); None when a law is exponential."""
    _, thr, _ = allocation(port) if port.weighted else (None, [], None)
    rates = {x.name: x.long_run_rate for x in port.active if x.priority is not None}
    rates.update({x.name: float(t) for x, t in zip(port.weighted, thr)})
    mixed: dict[float, float] = {}
    for x in port.active:
        if x.name == c.name or (x.priority is not None and x.priority == c.priority):
            continue
        law = x.size_law()
        if law is None or law.exponential:
            return None
        pk = rates[x.name] / (8.0 * x.mean_size)
        for s, p in zip(law.sizes, law.probs):
            mixed[s] = mixed.get(s, 0.0) + pk * p
    if not mixed:
        return None
    tot = sum(mixed.values())
    keys = sorted(mixed)
    return keys, [mixed[k] / tot for k in keys]


def pq_txq_raw(scn: Scenario, port: Port, c: TrafficClass, ccdf, quantiles) -> dict | None:
    """The pq_txq scenario whose EF is class ``c`` and whose best effort is every other class (module
    docstring), or None when pq_txq's schema cannot express it."""
    ef = _traffic_raw(c)
    mix = _below(port, c)
    if ef is None or mix is None:
        return None
    w = port.weighted
    if exact_shape(port) or len(port.active) > 2 or not w or any(x.saturated for x in w) or \
            len([x for x in port.active if x.priority is not None]) > 1:
        be = {"saturated": True}
    else:  # one priority class over one weighted class with a load: pq_txq's BE load
        be = {"rate": float(w[0].offered)}
    be["sizes"] = [{"size": float(s), "p": float(p)} for s, p in zip(*mix)]
    opts = scn.methods.model_checked.model_dump(by_alias=True, exclude={"average"})
    raw = {"name": f"{scn.name}-{c.name}", "system": "pq_txq", "link": {"rate": port.rate},
           "txq": {"units": port.Q_t, "unit_size": port.unit}, "pq": {"capacity": c.queue_limit},
           "traffic": {"EF": ef, "BE": be}, "metrics": {"ccdf_at": list(ccdf), "quantiles": list(quantiles)},
           "methods": {"closed-form": {"enabled": False}, "model-checked": opts, "simulated": {"enabled": False}}}
    return raw


def _rename(r: Result, cls: str, note: str | None) -> Result:
    """pq_txq's ``EF...`` result as class ``cls``'s; relabelled an approximation when ``note`` says what the
    chain neglects of this port (a bound is then no longer proved: it keeps its value, not its claim)."""
    metric = cls + r.metric[len("EF"):]
    est = cls + r.estimates[len("EF"):] if r.estimates else None
    bounds = tuple(cls + b[len("EF"):] for b in r.bounds if b.startswith("EF"))
    iv = r.interval
    prov = dict(r.provenance, chain="pq_txq (the class as EF, the other classes as its best effort)")
    if note is not None:
        if iv.is_bound:
            prov["kind_in_pq_txq"] = iv.kind.value
        if iv.kind is Kind.APPROXIMATION:
            iv = Interval.approximation(r.value, neglects=f"{iv.neglects}; {note}", low=iv.low, high=iv.high,
                                        note=iv.note)
        else:
            iv = Interval.approximation(r.value, neglects=note, note=iv.note)
        bounds = ()
    return Result(metric, r.method, r.value, r.unit, iv, prov, bounds=bounds, estimates=est)


def _pq_txq_chain(pq_scn, exact: bool, ccdf, quantiles, progress) -> list[Result]:
    """pq_txq's ``model-checked`` answer for the class: its own route when the port is its system; otherwise its
    exact chain within the budget, else the ring-count chain alone (the ring MDP's bound is not computed: its
    proof does not cover the port, module docstring)."""
    if exact:
        return get_system("pq_txq").evaluate(pq_scn, ["model-checked"], progress)
    route, why = model_route(pq_scn)
    if route == "exact":
        return get_system("pq_txq").evaluate(pq_scn, ["model-checked"], progress)
    p = params(pq_scn)
    opts = pq_scn.methods.model_checked
    advance = progress.task("ring-count chain", 1)
    sol, read_back = cached(pq_txq_ring.solve, p, ccdf, quantiles, stages=None,
                            max_chain=min(float(opts.max_states), pq_txq_ring.STAGED_STATES))
    advance()
    exactly = sol.stages == p.Q_t
    prov = {"model": "models/pq_txq_ring.py (ring-count chain embedded at departures)", "engine": "scipy sparse LU",
            "states": sol.states, "transitions": sol.transitions, "seconds": round(sol.seconds, 4),
            "stages": sol.stages, "exact_chain": why, "source": f"ring-count chain, {sol.states} states"}
    if read_back:
        prov["cache"] = "read back (QOSBOUND_CACHE_DIR; seconds: the original solve)"

    def iv(v, lo=None, hi=None):
        note = f"ring-count chain of {sol.states} states, {sol.stages} stage(s) of the {p.Q_t}-packet ring"
        if lo is not None:
            note += f"; the chain's own value lies in [{min(lo, v):.9g}, {max(hi, v):.9g}] (lattice)"
        if exactly:
            return Interval.numerical(min(lo, v), max(hi, v), note=note) if lo is not None else \
                Interval.exact(v, note=note)
        return Interval.approximation(v, neglects=ring_neglects(), note=note)

    out = [Result("EF.delay.mean", "model-checked", sol.mean, "s", iv(sol.mean), dict(prov))]
    for q in quantiles:
        lo, hi = sol.quantile_brackets[q]
        out.append(Result(f"EF.delay.{quantile_name(q)}", "model-checked", sol.quantiles[q], "s",
                          iv(sol.quantiles[q], lo, hi), dict(prov)))
    for t in ccdf:
        lo, hi = sol.ccdf_bracket(t)
        out.append(Result(ccdf_name("EF.delay", t), "model-checked", sol.ccdf[t], "1", iv(sol.ccdf[t], lo, hi),
                          dict(prov)))
    out.append(Result("EF.loss", "model-checked", sol.loss, "1", iv(sol.loss), dict(prov)))
    return out


def level_chain(scn: Scenario, port: Port, c: TrafficClass, ccdf, quantiles, progress) -> tuple[list[Result], str]:
    """Class ``c`` of a priority level by pq_txq's chains: (results named for the class, '' ) or ([], why not)."""
    raw = pq_txq_raw(scn, port, c, ccdf, quantiles)
    if raw is None:
        return [], ("pq_txq's chains take one packet size for the class and discrete sizes below it (the class "
                    "or a class below has several sizes, exponential sizes, on-off arrivals or a given CBR phase)")
    exact = exact_shape(port)
    try:
        res = _pq_txq_chain(build(raw), exact, ccdf, quantiles, progress)
    except SKIPPABLE as e:
        res = None
        why = e.problem
    except ScenarioError as e:
        return [], f"pq_txq's chain refuses it: {e.problem}"
    poissonised = False
    if res is None:
        if len(c.streams) == 1 and c.streams[0].count == 1:
            return [], why
        # an aggregate of CBR streams needs a credit counter per stream: ask again with the aggregate as one
        # Poisson stream of its total rate (an approximation, said below)
        raw["traffic"]["EF"] = {"rate": float(c.offered), "size": float(c.streams[0].sizes.sizes[0]),
                                "arrivals": "poisson"}
        try:
            res = _pq_txq_chain(build(raw), exact, ccdf, quantiles, progress)
        except SKIPPABLE as e:
            return [], f"{why}; with the aggregate as one Poisson stream: {e.problem}"
        poissonised = True
    exact = exact and not poissonised
    note = None
    if not exact:
        gaps = [] if exact_shape(port) else [
            "the classes below taken as one saturated stream whose packet sizes are drawn i.i.d. from their "
                "throughput-weighted mix (under DRR the sizes entering the ring follow the quanta, and a class "
                "below with a load is no saturated stream)"]
        if poissonised:
            gaps.append(f"the {sum(s.count for s in c.streams)} streams' phases (their aggregate taken as one Poisson "
                        "stream of the total rate, which is burstier)")
        if c.priority != port.levels[0]:
            gaps.append("the priority levels above taken as part of that stream (they are served first)")
        if c.police is not None:
            gaps.append("the policer (the chain admits every packet)")
        if c.dropper.red:
            gaps.append("the RED-family dropper (the chain drops at the queue limit only)")
        note = "; ".join(gaps)
    out = [_rename(r, c.name, note) for r in res]
    if c.police is None:  # the chain's loss is the queue's
        out += [Result(f"{c.name}.loss.queue", r.method, r.value, r.unit, r.interval, dict(r.provenance))
                for r in out if r.metric == f"{c.name}.loss"]
    return out, ""


def weighted_chain(scn: Scenario, port: Port, c: TrafficClass, mu_share: float) -> list[Result]:
    """A weighted class's dropper chain on Storm at its residual DRR rate (af's model)."""
    opts = scn.methods.model_checked
    ci, police_loss, gaps = queue_inputs(port, c, mu_share)
    ewma = opts.average == "ewma" and c.dropper.red and c.dropper.mode == "wred"
    if ewma:
        mv = check_wred_ewma(ci.lam, ci.mu, ci.K, ci.profile, precision=opts.precision, exact=opts.exact)
        same = None
    else:
        mv = check_wred(ci.lam, ci.mu, ci.K, ci.profile, precision=opts.precision, exact=opts.exact)
        same = instantaneous(ci.lam, ci.mu, ci.K, ci.profile) if (ci.profile.mode == "wred" or ci.K <= 52) else None
    prov = {"model": mv.model, "properties": "drop0..2, queue, sys0..2 (R{..}=? [ S ])", "states": mv.states,
            "transitions": mv.transitions, "seconds": round(mv.seconds, 4), "source": f"{mv.model} ({mv.states} "
            "states)", "misordered_states_reachable": mv.misordered, "service_rate_pps": ci.mu,
            "share_bit_s": ci.share}
    if same is not None:
        prov["direct_solution"] = {"drop": [float(x) for x in same.drop], "mean_queue": same.mean_queue,
                                   "precedences": list(c.precedences)}
    neg = gaps + queue_neglects(port, c, None if ewma else "instantaneous")
    ivs = mv.intervals
    note = ("exact (rational) solution" if opts.exact else
            "direct sparse solve of the CTMC; a-posteriori bracket (any v: min(f + Qv) <= pi f <= max(f + Qv))")

    def iv(k, v):
        v = float(v)
        if opts.exact:
            lo = hi = v
        else:
            key = "throughput_pk" if k == "throughput" else k
            lo, hi = ivs.get(key, (-math.inf, math.inf))
            if k == "throughput":
                lo, hi = lo * 8.0 * ci.size, hi * 8.0 * ci.size
            lo, hi = min(lo, v), max(hi, v)
        if neg:
            return Interval.approximation(v, "; ".join(neg), note=f"{note}; the model's own value lies in "
                                                                   f"[{lo:.6g}, {hi:.6g}]")
        if opts.exact:
            return Interval.exact(v, note=note)
        return Interval.numerical(lo, hi, note=note + ("" if math.isfinite(hi - lo) else f"; no bound for {k}"))

    delay = np.where(ci.lam > 0, mv.delay, 0.0)
    return class_queue_results(port, c, "model-checked", mv.drop, delay, mv.mean_queue, police_loss, ci, iv, prov)


def model_checked(scn: Scenario, port: Port, ccdf, quantiles, progress) -> list[Result]:
    """Every class a chain covers (module docstring); the others left out with the reason."""
    out: list[Result] = []
    omitted: dict[str, str] = {}
    opts = scn.methods.model_checked
    for k in port.levels:
        for c in port.level(k):
            res, why = level_chain(scn, port, c, ccdf, quantiles, progress)
            out += res
            if why:
                omitted[f"{c.name}.*"] = why
    w = port.weighted
    if w:
        CW = residual_rate(port)
        demand = np.array([2.0 * CW if x.saturated else x.offered for x in w])
        rates = service_rates(CW, [x.weight for x in w], demand)
        todo = []
        for c, mu_share in zip(w, rates):
            if c.saturated:
                continue
            ewma = opts.average == "ewma" and c.dropper.red and c.dropper.mode == "wred"
            n = model_states(c.queue_limit, c.dropper.mode if c.dropper.red else "wred", ewma)
            if n > min(MAX_AF_MODEL_STATES, opts.max_states):
                omitted[f"{c.name}.*"] = (f"its dropper chain would have about {n:.3g} states, above the budget of "
                                          f"{min(MAX_AF_MODEL_STATES, opts.max_states):.3g}")
                continue
            todo.append((c, float(mu_share)))
        adv = progress.task("model checking the weighted classes (Storm)", len(todo)) if todo else None
        for c, mu_share in todo:
            out += weighted_chain(scn, port, c, mu_share)
            adv(1)
    if not out:
        raise MethodNotApplicable("no class of the port is covered by a chain within its budget: "
                                  + "; ".join(f"{k}: {v}" for k, v in omitted.items()), field="methods.model-checked")
    if omitted:
        out[0] = Result(out[0].metric, out[0].method, out[0].value, out[0].unit, out[0].interval,
                        dict(out[0].provenance, omitted=omitted), bounds=out[0].bounds, estimates=out[0].estimates)
    return out
