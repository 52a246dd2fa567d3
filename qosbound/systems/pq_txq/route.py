"""Which chain answers ``model-checked`` for a ``pq_txq`` scenario, and the budgets that decide it: the exact
PQ + TxQ chain (:mod:`qosbound.models.pq_txq`) when it fits ``max_states`` without rounding packet sizes, else the
ring method (:mod:`qosbound.models.pq_txq_ring`) when it covers the port, else a refusal with both reasons."""

from __future__ import annotations

from qosbound.errors import MethodNotApplicable, ResourceError
from qosbound.models.pq_txq_size import predicted_states
from qosbound.systems.pq_txq.params import Params, params, scenario_fields
from qosbound.systems.pq_txq.schema import Scenario

__all__ = ["STATE_COUNT_CAP", "MAX_MODEL_PQ", "ModelUnsupported", "check_model_size", "rounding", "ring_covers",
           "model_route", "refuse_aggregate_model"]


#: Where the state count of a chain far above any budget stops (:func:`check_model_size` then says "more than").
STATE_COUNT_CAP = 10**400
#: Largest PQ capacity the PRISM model is built for: the Poisson rendering writes O(capacity^2) terms.
MAX_MODEL_PQ = 10_000


class ModelUnsupported(MethodNotApplicable):
    """The PRISM model does not cover the scenario (best effort with a load): a run that merely enables
    ``model-checked`` skips it with this reason, as it skips a model above its budget; asked for by name it is
    refused as bad input (exit 2)."""


def _big(n: int) -> str:
    """An integer in the ``.3g`` form, also beyond the range of a float (a bound such as 3^8000)."""
    if n < 1e300:
        return f"{float(n):.3g}"
    digits = str(n)
    return f"{float(digits[:4]) / 1000:.3g}e+{len(digits) - 1}"


def check_model_size(scn: Scenario) -> None:
    """Refuse, before rendering, a PRISM model too large to write or build (ResourceError, with the estimate),
    or one that does not cover the scenario (:class:`ModelUnsupported`: best effort with a load).

    The state count is the upper bound of :mod:`qosbound.models.pq_txq_size`, computed from the scenario's
    numbers in microseconds; the budget is ``methods.model-checked.max_states``."""
    if not scn.traffic.BE.is_saturated:
        raise ModelUnsupported("the PRISM model covers saturated best effort only (its slot-start chain is exact "
                               "only while the line never idles); with a BE load the closed forms and the "
                               "simulator answer", field="traffic.BE.rate")
    refuse_aggregate_model(params(scn))
    n = scn.pq.capacity
    if n > MAX_MODEL_PQ:
        terms = (n + 1) ** 2 if scn.traffic.EF.arrivals == "poisson" else n + 1
        raise ResourceError(f"a PQ of {n:g} packets gives a PRISM model of more than {n + 1:.3g} "
                            f"states and about {terms:.3g} terms to render; the model is built for PQs of at most "
                            f"{MAX_MODEL_PQ} packets: disable model-checked (the closed forms and the simulator "
                            "handle this PQ) or use a smaller capacity", field="pq.capacity")
    opts = scn.methods.model_checked
    cap = max(STATE_COUNT_CAP, int(opts.max_states) * 10**6)  # beyond it the count says only "more than"
    with scenario_fields("methods.model-checked"):
        states, kinds = predicted_states(params(scn), opts, cap)
    if states > opts.max_states:
        size = f"more than {_big(cap)}" if states > cap else f"up to {_big(states)}"
        raise ResourceError(f"the exact PQ + TxQ chain would have {size} states (Q_t = {scn.txq.units} "
                            f"units, {kinds} packet kinds, PQ of {n} packets; it grows exponentially with Q_t), above "
                            f"the budget of {opts.max_states:.3g}: the closed forms and the simulator answer at any "
                            "size; raise methods.model-checked.max_states (or --max-states) to build it anyway",
                            field="methods.model-checked.max_states")


def rounding(scn: Scenario) -> str:
    """Why the exact chain would not be exact: its packet sizes rounded up to a coarser granule ('' if not)."""
    from qosbound.models.pq_txq_render import layout  # costly: scipy.special at import

    opts = scn.methods.model_checked
    if opts.granule != "auto":
        return ""
    with scenario_fields("methods.model-checked"):
        lay = layout(params(scn), opts)
    if not lay.rounded:
        return ""
    return (f"the exact chain would round the packet sizes up to whole {lay.granule}-byte granules (more than "
            f"max_granules = {opts.max_granules} per packet at their gcd), which is neither exact nor a bound")


def ring_covers(scn: Scenario) -> bool:
    """Whether the ring method answers the scenario within the model budget."""
    from qosbound.models import pq_txq_ring  # costly: scipy.sparse, .fft, .stats at import

    p = params(scn)
    return (pq_txq_ring.why_not(p) is None and pq_txq_ring.lattice_points(p) <= pq_txq_ring.MAX_LATTICE
            and pq_txq_ring.chain_states(p) <= scn.methods.model_checked.max_states)


def model_route(scn: Scenario) -> tuple[str, str]:
    """Which chain answers ``model-checked``: ``("exact", "")`` when the exact PQ + TxQ chain fits the budget
    (:func:`check_model_size`) without rounding packet sizes, ``("ring", why)`` when it would round them (not a
    bound) and the ring method covers the scenario (it works on the exact lattice), else ``("ring", why)`` when the ring method (:mod:`qosbound.models.pq_txq_ring`:
    a tx-ring whose every packet takes one unit, saturated BE, Poisson EF) covers the scenario within the same
    budget, ``why`` the exact chain's refusal. Otherwise the exact chain's ResourceError, with the reason the
    ring method does not answer either (a ModelUnsupported passes unchanged)."""
    from qosbound.models import pq_txq_ring  # costly: scipy.sparse, .fft, .stats at import

    try:
        check_model_size(scn)
        rounded = rounding(scn)
        if rounded and ring_covers(scn):
            return "ring", rounded
        return "exact", ""
    except ResourceError as e:  # (a ModelUnsupported is not one: it passes unchanged)
        p = params(scn)
        why = pq_txq_ring.why_not(p)
        n = pq_txq_ring.chain_states(p)
        budget = scn.methods.model_checked.max_states
        if why is None and pq_txq_ring.lattice_points(p) > pq_txq_ring.MAX_LATTICE:
            why = (f"its delay lattice of {pq_txq_ring.lattice_points(p):.3g} points (the gcd of the packet sizes "
                   f"as the step) is above {pq_txq_ring.MAX_LATTICE:.3g}")
        if why is None and n <= budget:
            return "ring", e.problem
        why = why or f"its chain of {n:.3g} states is above the budget too"
        raise ResourceError(f"{e.problem}. The scalable ring method does not answer either: {why}",
                            field=e.field) from None


def refuse_aggregate_model(p: Params) -> None:
    """The PRISM model has one EF arrival process: several Poisson streams merge into one exactly (and are
    modelled), but an aggregate with CBR streams would need a credit counter per stream -- the state space
    multiplied by the product of their credit ranges -- and is refused (a ResourceError: skipped with this reason
    when the scenario merely enables the model, exit 4 when it is asked for by name) rather than answered by a
    single stream of the aggregate rate, which is a different arrival process."""
    if p.arrivals != "aggregate":
        return
    n = len(p.ef_streams)
    what = (f"{n} EF streams with CBR among them" if n > 1 else "a CBR EF stream with a given phase")
    raise ResourceError(f"{what} need a CBR credit counter per stream (the chain's states multiply by "
                     "each stream's credit range) and the model has one EF stream; the closed forms and the "
                     "simulator answer this aggregate (a Poisson approximation of it would neglect the CBR "
                     "streams' smoothness)", field="traffic.EF")

