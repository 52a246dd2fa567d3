"""Which abstractions the ring bound solves and their sizes before building (models/pq_txq_ring_bound_budget.py).
The estimates themselves are checked against what is built with the estimate-before-build tests of every model."""

from __future__ import annotations

import pytest

from qosbound.models import ring_abstraction as ra
from qosbound.models.pq_txq_ring_bound_budget import abstractions, process_dims, smallest_states, solved_levels
from qosbound.models.pq_txq_ring_rewards import DepartureRewards
from qosbound.scenario import build
from qosbound.systems import pq_txq
from tests.models.test_pq_txq_ring import FERRARI_BE, IMIX, raw


@pytest.mark.parametrize("max_states", [1e3, 8e3, 4e4])
@pytest.mark.parametrize("PQ", [4, 16, 64])
def test_every_abstraction_chosen_fits_the_budget_and_the_exact_pattern_is_chosen_when_it_fits(PQ, max_states):
    """Per ring size: each candidate's labels x PQ levels is within ``max_states`` -- the one-stage abstraction, the
    least there is, excepted -- and the exact pattern is taken, alone, exactly when its 2^Q_t labels fit."""
    for QT in range(2, 41):
        cands = abstractions(QT, PQ, max_states)
        budget = max(1.0, max_states / PQ)
        assert cands and all(c.labels <= budget or c.name == "stages(1)" for c in cands), QT
        assert ([c.name for c in cands] == ["exact"]) == (2 ** QT <= budget), QT
        assert len({c.name for c in cands}) == len(cands)


@pytest.mark.parametrize("QT", [3, 6, 9])
def test_the_counts_declared_before_building_are_those_built(QT):
    """A candidate's labels are the built abstraction's, and its entries at least the built choice sets'."""
    for c in abstractions(QT, 8, 8e3):
        ab = c.build()
        assert ab.size == c.labels and ab.entries <= c.entries, c.name


PORTS = {"ferrari": raw(5, "300 kbit/s", 128, FERRARI_BE, 10), "imix": raw(8, "600 kbit/s", 200, IMIX, 16),
         "imix-ef70": raw(6, "7 Mbit/s", 200, IMIX, 16, link="10 Mbps"),
         "wan100-like": raw(16, "10 Mbit/s", 200, IMIX, 64, link="100 Mbps")}


@pytest.mark.parametrize("port", list(PORTS))
def test_the_sizes_estimated_from_the_parameters_are_those_the_rewards_take(port):
    """process_dims computes from the parameters alone the sizes DepartureRewards builds its arrays with: the
    ring, the PQ, the BE sizes, the head + PQ part's refined points and the ring part's granule points."""
    p = pq_txq.params(build(PORTS[port]))
    d = process_dims(p, whole=True)
    sv = DepartureRewards(p)
    assert (d.QT, d.PQ, d.K, d.L, d.Yf) == (sv.QT, sv.PQ, sv.K, sv.L, sv.hn.shape[2])
    assert d.cut == sv.PQ and d.Jall == max(min(sv.PQ, len(pm) + 1) for pm in sv.pmfs)
    assert process_dims(p).cut == solved_levels(p) <= sv.PQ


@pytest.mark.parametrize("port", list(PORTS))
def test_the_smallest_process_is_the_one_stage_abstraction_on_the_levels_solved(port):
    """smallest_states is what the one-stage abstraction's process has: 2 (Q_t + 1) - 2 labels on the solved PQ
    levels; only a PQ that drains fast (under 0.9 EF arrivals per service for both heads) is cut below its size."""
    p = pq_txq.params(build(PORTS[port]))
    QT, PQ = int(p.Q_t), int(p.pq_cap)
    assert smallest_states(p) == ra.stages(QT, 1).size * solved_levels(p) == (2 * (QT + 1) - 2) * solved_levels(p)
    assert 1 <= solved_levels(p) <= PQ
