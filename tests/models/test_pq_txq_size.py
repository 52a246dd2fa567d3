"""The state-count bound of the PQ + TxQ DTMC against the chains Storm builds (stormpy's habit: counts first)."""

from __future__ import annotations

import pytest

from qosbound.models import engine
from qosbound.models.pq_txq import render
from qosbound.models.pq_txq_size import state_bound
from qosbound.scenario import build, load, set_path
from qosbound.systems.pq_txq import params
from tests.helpers import example

CASES = [  # (Q_t, PQ, BE sizes in bytes, EF arrivals)
    (5, 10, [512, 1024, 1536], "poisson"),   # the ferrari2001 example: 6580 states
    (3, 5, [512, 1024, 1536], "poisson"),
    (6, 10, [512, 1024, 1536], "poisson"),
    (5, 10, [512], "poisson"),
    (4, 20, [1024, 1536], "poisson"),
    (7, 4, [512, 1024, 1536], "poisson"),
    (5, 6, [512, 1536], "cbr"),
]
#: With CBR arrivals most (PQ occupancy, credit) pairs are unreachable: the bound holds but is loose.
LOOSENESS = {"poisson": 1.5, "cbr": 15.0}


def _rendered(QT, PQ, sizes, arrivals):
    raw = load(example("ferrari2001")).raw
    raw = set_path(raw, "txq.units", QT)
    raw = set_path(raw, "pq.capacity", PQ)
    raw = set_path(raw, "traffic.EF.arrivals", arrivals)
    if arrivals == "cbr":
        raw = set_path(raw, "traffic.EF.rate", "256 kbit/s")
    raw = set_path(raw, "traffic.BE.sizes", [{"size": f"{s} B", "p": 1 / len(sizes)} for s in sizes])
    scn = build(raw, "case.yaml")
    return render(params(scn), scn.methods.model_checked, "case")


@pytest.mark.parametrize("QT,PQ,sizes,arrivals", CASES)
def test_the_bound_holds_and_is_tight_enough_to_budget_with(QT, PQ, sizes, arrivals):
    """Storm's reachable states never exceed the bound; with Poisson arrivals the bound is within 50 % of them."""
    r = _rendered(QT, PQ, sizes, arrivals)
    credits = r.cbr[1] if r.cbr else 1
    bound = state_bound(r.QT, r.PQ, [r.ef_units] + r.be_units, [r.ef_gran] + r.be_gran, credits)
    built = engine.build(r.text)
    assert built.states <= bound <= LOOSENESS[arrivals] * built.states


def test_the_bound_grows_exponentially_with_the_ring_and_linearly_with_the_pq():
    units, grans = [1, 1, 2, 3], [1, 4, 8, 12]
    assert state_bound(6, 20, units, grans) == pytest.approx(21 / 11 * state_bound(6, 10, units, grans))
    growth = [state_bound(q + 1, 10, units, grans) / state_bound(q, 10, units, grans) for q in range(8, 14)]
    assert min(growth) > 1.5
