"""Admission for a ``pq_txq`` scenario: the generic search of :func:`qosbound.admit.admit`, run on the simulator
(else the closed forms) where the default ``model-checked`` answer would be the ring-count chain's approximation
without its upper bound."""

from __future__ import annotations

from qosbound.admit import admit as search
from qosbound.errors import SKIPPABLE
from qosbound.systems.base import default_methods
from qosbound.systems.capabilities import generic_admit
from qosbound.systems.pq_txq.params import params
from qosbound.systems.pq_txq.route import model_route

__all__ = ["admit"]


def admit(scn: Scenario, parameter: str, *, direction=None, method=None, lo=None, hi=None, progress=None):
    """Admission varies any parameter by the generic search (:func:`qosbound.admit.admit`). One exception: when
    the search would pick ``model-checked`` by default and that is answered by the ring method WITHOUT its upper
    bound (its smallest process above its budget) -- by the ring-count chain alone, an approximation that came out
    below the simulated delay and loss in every case measured -- the search runs on the simulator (else the
    closed forms) with a note, as it does when the exact chain is skipped; asked for by ``--method
    model-checked`` the approximation is used. Where the bound is computed the SLOs are judged on it (a
    conservative model-checked search), and that is the default; so it is where the chain is exact."""
    methods = default_methods(scn)
    if method is not None or "model-checked" not in methods:
        return generic_admit(scn, parameter)
    try:
        route = model_route(scn)[0]
    except SKIPPABLE:
        return generic_admit(scn, parameter)  # the generic search falls back with the reason
    from qosbound.systems.pq_txq.ring_results import conservative  # costly: scipy (the ring chain) at import

    fallback = next((m for m in ("simulated", "closed-form") if m in methods), None)
    if route != "ring" or fallback is None or conservative(params(scn), scn.methods.model_checked):
        return generic_admit(scn, parameter)
    res = search(scn, parameter, direction=direction, method=fallback, lo=lo, hi=hi, progress=progress)
    res.notes.insert(0, "model-checked skipped: it would answer by the ring-count chain without its upper bound "
                        "(its MDP is above the budget), an approximation that underestimates delay and loss "
                        f"(docs/pq_txq.md); searching with {fallback} (--method model-checked uses the "
                        "approximation)")
    return res
