"""TSQ by model checking: the slotted per-hint DTMC and the hint-choosing MDP on Storm (models/tsq*.prism)."""

from __future__ import annotations

import numpy as np

from qosbound.errors import ScenarioError
from qosbound.models import tsq as M
from qosbound.models.budget import refuse_over_budget
from qosbound.results import Interval, Result
from qosbound.systems.tsq.closed_form import operating_point
from qosbound.systems.tsq.metrics import GAIN_TOLERANCE, MODEL_MAX_DROP, MODEL_NEGLECTS
from qosbound.systems.tsq.schema import ModelOptions, Scenario

__all__ = ["GAIN_TOLERANCE", "MODEL_NEGLECTS", "MODEL_MAX_DROP", "abstraction", "check_model_size", "model_checked"]


def abstraction(scn: Scenario):
    """The slotted abstraction of the scenario's operating point, with the scenario's 2^n hints."""
    op = operating_point(scn)
    if not op["congested"]:
        raise ScenarioError("the responsive flows do not congest the link, so the AQM drop p* is 0 and the TSQ "
                            "models (centred on p* > 0) do not apply; use the closed-form or simulated method",
                            field="flows")
    if op["p"] >= MODEL_MAX_DROP:
        raise ScenarioError(f"overloaded: the flows need an AQM drop probability p* = {op['p']:.3g} to fit the "
                            f"link; the slotted TSQ models hold only p* < {MODEL_MAX_DROP:g}; raise link.rate, "
                            "reduce the flows, or use the closed-form or simulated method", field="flows")
    return M.abstraction(scn.link.rate, op["size"], scn.aqm.q_max, scn.aqm.q_ref, op["p"], scn.tsq.latency,
                         bits=scn.tsq.hint_bits)


def check_model_size(scn: Scenario, ab=None) -> None:
    """Refuse, before anything is built, an abstraction above ``methods.model-checked.max_states`` or the memory
    left (ResourceError, exit 4, with the estimate of :func:`qosbound.models.tsq.estimate`)."""
    opts = scn.methods.model_checked
    ab = ab or abstraction(scn)
    refuse_over_budget(M.estimate(ab, opts.mdp), opts.max_states, field="aqm.q_max",
                       remedy="the slotted chains have q_max + 1 states; use a smaller aqm.q_max, or the closed-form "
                       "or simulated method, or raise methods.model-checked.max_states")


def model_checked(scn: Scenario, opts: ModelOptions, progress) -> list[Result]:
    ab = abstraction(scn)
    check_model_size(scn, ab)
    out: list[Result] = []
    note = f"Storm, solver precision {opts.precision:g} (of the abstraction)"
    names = []
    if scn.metrics.sweep:
        names = [(f"{scn.metrics.sweep}@h{h}", h) for h in scn.hints()]
    names += [(n, f.hint) for n, f in scn.flows.items()]
    tick = progress.task("Storm: per-hint DTMC", len(names) + (1 if opts.mdp else 0))
    cache: dict[int, object] = {}
    for prefix, h in names:
        if not scn.tsq.enabled:
            h = ab.H
        if h not in cache:
            cache[h] = M.hint_values(ab, h, opts.precision)
        r = cache[h]
        v = r.values
        prov = {"model": "models/tsq_hint.prism", "property": "acc_delay / accepted; mean_drop",
                "constants": {**ab.constants(), "d": h}, "states": r.states, "transitions": r.transitions,
                "slot_s": ab.slot, "source": "slotted abstraction centred on (q_ref, p*)", "hint": h,
                "hints": ab.H, "mean_qdelay_slots": v["mean_qdelay"], "mean_tail_slots": v["mean_tail"]}
        out.append(Result(f"{prefix}.drop", "model-checked", v["mean_drop"], "1",
                          Interval.approximation(v["mean_drop"], neglects=MODEL_NEGLECTS, note=note), prov))
        if v["accepted"] <= 1e-12:
            # every packet of this hint is dropped (p' = 1 wherever the chain goes): no delay to report
            tick()
            continue
        delay = v["acc_delay"] / v["accepted"] * ab.slot
        out.append(Result(f"{prefix}.delay.mean", "model-checked", delay, "s",
                          Interval.approximation(delay, neglects=MODEL_NEGLECTS, note=note), prov))
        if ("p99", h) not in cache:
            dl, pr, _ = M.hint_distribution(ab, h)
            cache[("p99", h)] = float(dl[np.searchsorted(np.cumsum(pr), 0.99 - 1e-12)]) * ab.slot
        p99 = cache[("p99", h)]
        out.append(Result(f"{prefix}.delay.p99", "model-checked", p99, "s",
                          Interval.approximation(p99, neglects=MODEL_NEGLECTS, note=note),
                          {**prov, "property": "Storm steady state pushed through q' (accepted packets)"}))
        tick()
    if opts.mdp:
        g = M.no_gain(ab, opts.precision)
        prov = {"model": "models/tsq.prism, one action per hint (models/tsq.py flat_mdp_text)",
                "property": 'R{"sqrt_law"}max=? [ LRA ] / FIFO LRA - 1',
                "constants": ab.mdp_constants(), "states": g["states"], "transitions": g["transitions"],
                "max": g["max"], "fifo": g["fifo"], "capped_reachable": g["capped_reachable"],
                "tolerance": GAIN_TOLERANCE, "hints": ab.H, "direct_max": g["direct_max"],
                "solver_rel_error": g["solver_rel_error"]}
        out.append(Result("tsq.gain", "model-checked", g["gain"], "1",
                          Interval.approximation(g["gain"], neglects=MODEL_NEGLECTS,
                                                 note=f"{note}; |gain| <= {GAIN_TOLERANCE:g} counts as no gain"),
                          prov))
        tick()
    return out
