"""AF by model checking: one CTMC per class on Storm (models/wred*.prism), with its state budget."""

from __future__ import annotations

import math

import numpy as np

from qosbound.analytic.red_queue import instantaneous
from qosbound.models.af import check_wred, check_wred_ewma, estimate
from qosbound.models.budget import refuse_over_budget
from qosbound.results import Interval, Result
from qosbound.systems.af.inputs import ClassInput, neglects, queue_results
from qosbound.systems.af.schema import MAX_AF_MODEL_STATES, Scenario

__all__ = ["MAX_AF_MODEL_STATES", "model_states", "check_model_size", "model_checked"]


def model_states(K: int, mode: str, ewma: bool = False) -> int:
    """Upper estimate of the states of the AF chain for a buffer of ``K`` packets: ``(n)`` for WRED, ``(n, n0)``
    for RIO, ``(n, n0, n1)`` for n-RED (all with ``n0 + n1 <= n``), ``(n, a)`` for the EWMA model
    (:func:`qosbound.models.af.estimate`)."""
    return int(estimate(K, mode, ewma).states)


def check_model_size(scn: Scenario, inputs: list[ClassInput]) -> None:
    """Refuse, before anything is built, a class whose chain is above ``methods.model-checked.max_states`` or the
    memory left (ResourceError, exit 4, with the estimate of :func:`qosbound.models.af.estimate`)."""
    opts = scn.methods.model_checked
    for ci in inputs:
        ewma = opts.average == "ewma" and ci.profile.mode == "wred"
        refuse_over_budget(estimate(ci.K, ci.profile.mode, ewma), opts.max_states,
                           field=f"classes.{ci.name}.buffer",
                           remedy=f"class {ci.name}'s chain grows with its buffer; disable model-checked for this "
                           "scenario (the closed form and the simulator answer it), use a smaller buffer, or raise "
                           "methods.model-checked.max_states")


def model_checked(scn: Scenario, inputs: list[ClassInput], progress) -> list[Result]:
    opts = scn.methods.model_checked
    out: list[Result] = []
    check_model_size(scn, inputs)  # refuse before building anything
    adv = progress.task("model checking (Storm)", len(inputs))
    for ci in inputs:
        if opts.average == "ewma" and ci.profile.mode == "wred":
            mv = check_wred_ewma(ci.lam, ci.mu, ci.K, ci.profile, precision=opts.precision, exact=opts.exact)
            same = None
        else:
            mv = check_wred(ci.lam, ci.mu, ci.K, ci.profile, precision=opts.precision, exact=opts.exact)
            same = instantaneous(ci.lam, ci.mu, ci.K, ci.profile) if (ci.profile.mode == "wred" or ci.K <= 52) \
                else None
        prov = {"model": mv.model, "properties": "drop0..2, queue, sys0..2 (R{..}=? [ S ])",
                "states": mv.states, "transitions": mv.transitions, "seconds": round(mv.seconds, 4),
                "source": f"{mv.model} ({mv.states} states)", "misordered_states_reachable": mv.misordered}
        if same is not None:
            prov["direct_solution"] = {"drop": [float(x) for x in same.drop], "mean_queue": same.mean_queue}
        ivs = mv.intervals
        note = ("exact (rational) solution" if opts.exact else
                "direct sparse solve of the CTMC; a-posteriori bracket (any v: min(f + Qv) <= pi f <= max(f + Qv))")
        # The chain is the scenario's semantics only where nothing is neglected (alpha = 1 or the EWMA modelled,
        # Poisson input with exponential sizes, ...); elsewhere its exact value is an approximation of the
        # scenario's, and says what it leaves out.
        neg = neglects(scn, ci, None if (opts.average == "ewma" and ci.profile.mode == "wred") else "instantaneous")

        def iv(k, v, neg=neg, ivs=ivs, note=note):
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
        out += queue_results(ci, mv.drop, delay, mv.mean_queue, "model-checked", iv, prov)
        adv(1)
    return out
