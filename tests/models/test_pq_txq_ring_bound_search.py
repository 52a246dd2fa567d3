"""One abstraction's bounding process and its certified searches (models/pq_txq_ring_bound_search.py), on the exact
pattern abstraction, where there is no choice and every bound must meet the exact chain (the staged chain with one
position per stage, solved by its own code in models/pq_txq_ring.py, on the same refined lattice)."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.models import pq_txq_ring as ring
from qosbound.models import ring_abstraction as ra
from qosbound.models.pq_txq_ring_bound_search import REL, BoundProcess
from qosbound.models.pq_txq_ring_rewards import DepartureRewards
from qosbound.scenario import build
from qosbound.systems import pq_txq
from tests.models.test_pq_txq_ring import FERRARI_BE, raw

QT = 4


@pytest.fixture(scope="module", params=["ferrari", "large-be"])
def pair(request):
    be = FERRARI_BE if request.param == "ferrari" else [(1536, 1.0)]
    p = pq_txq.params(build(raw(QT, "300 kbit/s", 128, be, 10)))
    sv = DepartureRewards(p)
    return BoundProcess(sv, ra.exact(QT)), ring.solve(p, [], [0.99], stages=QT)


def test_the_process_has_a_state_per_pattern_and_level_and_the_lattice_of_the_chain(pair):
    b, e = pair
    assert b.mdp.size == 2 ** QT * b.sv.PQ
    assert b.sv.slot_g / b.sv.M == pytest.approx(e.slot, rel=1e-15)


def test_the_proved_ratios_meet_the_exact_chain_without_choice(pair):
    """Loss (lost / arrivals) and the mean (sum of delays / accepted) certified on the exact abstraction: at or
    above the exact chain, and equal to it to the solvers' precision; each at or above its own estimate."""
    b, e = pair
    loss, est = b.ratio(b.lost, b.arr, "loss")
    assert loss >= est * (1 - 1e-12) and loss == pytest.approx(e.loss, rel=1e-9)
    mean, est = b.ratio(b.rew(b.sv.per_sum()), b.acc, "mean")
    assert mean >= est * (1 - 1e-12) and mean * b.sv.slot_g == pytest.approx(e.mean, rel=1e-9)


def test_the_ccdf_bound_at_a_lattice_point_is_the_chain_s_and_a_sign_test_lands_on_its_side(pair):
    """At lattice points X the proved P(D > X) meets the chain's CCDF there (exact at lattice points). A sign test
    (a fresh process, a target) stops on the side of the target the value is on: with the target at half the value
    nothing at or below it is proved; with the target at twice the value a bound at or below it is."""
    b, e = pair
    for X in np.linspace(1, len(e.ccdf_grid) - 2, 6).astype(int):
        v, _ = b.ccdf(int(X))
        assert v == pytest.approx(e.ccdf_grid[X], rel=1e-7, abs=1e-12)
        if v > 1e-6:
            below, _ = BoundProcess(b.sv, ra.exact(QT)).ccdf(int(X), target=0.5 * v)
            assert below > 0.5 * v
            above, _ = BoundProcess(b.sv, ra.exact(QT)).ccdf(int(X), target=min(1.0, 2 * v))
            assert v * (1 - 1e-7) <= above <= min(1.0, 2 * v)


def test_the_quantile_point_is_proved_and_brackets_the_chain_s_quantile(pair):
    """The lattice point returned for p99 has a proved P(D > X) <= 1 %; it is at or above the chain's p99 and
    within the search's relative REL (and one step) of it."""
    b, e = pair
    X = b.quantile(0.99, start=1)
    assert b.ccdf(X)[0] <= 0.01
    lo, hi = e.quantile_brackets[0.99]
    assert lo <= X * e.slot <= hi * (1 + REL) + e.slot
