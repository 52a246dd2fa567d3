"""The size of the PQ + TxQ DTMC, known before it is rendered or built.

The chain of ``models/templates/pq_txq.prism`` holds the TxQ as a FIFO of packet
kinds (EF or a BE size class), so its size grows exponentially with the TxQ
threshold Q_t. Building a chain of a few million states takes minutes and
gigabytes on Storm; this module bounds the number of reachable states from the
scenario's numbers alone, so that a scenario beyond the budget is refused (or
the method skipped) before any work starts.

The bound counts, for every TxQ content a state can hold:

* slot-start ("tick") states: FIFOs ``k_1 .. k_N`` of packet kinds whose units
  reach Q_t while the units before the last packet do not (the fill stops as
  soon as Q_t units are occupied), times the granules the head packet may still
  have to send (``1 .. g(k_1)``);
* fill states: FIFOs with fewer than Q_t units (the head's remaining granules
  are then its full size, or 0 when the TxQ is empty);

each times the PQ occupancies ``0 .. PQ`` and the CBR credit values. Orders of
EF and BE packets that the scheduler cannot produce are counted too, which is
why this is an upper bound; on the instances in ``tests/models/test_pq_txq_size.py``
it is 10-40 % above Storm's count with Poisson arrivals, and about 10 times it
with CBR arrivals (most pairs of PQ occupancy and credit are then unreachable). The number of FIFOs is counted by dynamic
programming over the occupied units, in O(Q_t * kinds^2) operations.
"""

from __future__ import annotations

from qosbound.errors import InternalError

__all__ = ["state_bound", "predicted_states"]


def state_bound(QT: int, PQ: int, units: list[int], grans: list[int], credits: int = 1,
                cap: int | None = None) -> int:
    """An upper bound on the reachable states of the PQ + TxQ DTMC.

    ``units`` and ``grans`` give, per packet kind (EF and each BE size class), the TxQ units it occupies and the
    granules it takes on the wire; ``credits`` is the number of CBR credit values (1 for Poisson or Bernoulli).

    ``cap``: stop counting once the FIFOs alone exceed it and return that partial count, which is then above
    ``cap`` (every term of the bound is non-negative) but below the bound itself. The count grows as kinds^Q_t, so
    without a cap a ring of 10^6 units would be counted in numbers of 10^5 digits until memory runs out; with it
    the answer "above cap" takes as many steps as the cap has digits (about)."""
    if QT < 1 or PQ < 0 or credits < 1 or not units or len(units) != len(grans):
        raise InternalError("state_bound needs QT >= 1, PQ >= 0, credits >= 1 and one unit count per granule count")
    if min(units) < 1 or min(grans) < 1:
        raise InternalError("every packet kind occupies at least one unit and one granule")
    # fifos[s]: the number of FIFOs (ordered sequences of kinds) occupying exactly s units, for s < QT.
    fifos = [1] + [0] * (QT - 1)
    filled = 1
    for s in range(1, QT):
        fifos[s] = sum(fifos[s - u] for u in units if u <= s)
        filled += fifos[s]
        if cap is not None and filled * (PQ + 1) * credits > cap:  # the fill states alone exceed the cap
            return filled * (PQ + 1) * credits
    tick = 0
    for u1, g1 in zip(units, grans):
        if u1 >= QT:  # the head alone reaches QT
            tick += g1
            continue
        for middle in range(QT - u1):  # units of the packets between the head and the last one
            closing = sum(1 for u_last in units if u1 + middle + u_last >= QT)
            tick += g1 * fifos[middle] * closing
    fill = sum(fifos)
    return (tick + fill) * (PQ + 1) * credits


def predicted_states(p, opts, cap: int | None = None) -> tuple[int, int]:
    """(the state bound, the number of packet kinds) of the chain qosbound renders for parameters ``p`` (a
    :class:`qosbound.systems.pq_txq.params.Params`) and model options ``opts``: the same layout as the renderer's.
    With ``cap``, a bound above it may come back as a smaller number that is still above it (:func:`state_bound`)."""
    from qosbound.models.pq_txq_render import layout  # costly: scipy.special at import

    lay = layout(p, opts)
    units, grans = [lay.kef] + lay.kbe, [lay.gef] + lay.gbe
    return state_bound(p.Q_t, p.pq_cap, units, grans, lay.credits, cap), len(units)
