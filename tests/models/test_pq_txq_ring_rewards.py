"""The per-departure rewards of the ring chain (models/pq_txq_ring_rewards.py): the counts every ratio of the ring
bound is made of, checked against what they must add up to."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.models.pq_txq_render import poisson_excess
from qosbound.models.pq_txq_ring_rewards import DepartureRewards
from qosbound.scenario import build
from qosbound.systems import pq_txq
from tests.models.test_pq_txq_ring import FERRARI_BE, IMIX, raw

# Ferrari's sizes (no Poisson cut below the PQ), IMIX at 30 % EF, IMIX at 70 % EF on a faster link.
PORTS = {"ferrari": raw(5, "300 kbit/s", 128, FERRARI_BE, 10),
         "imix": raw(8, "600 kbit/s", 200, IMIX, 16),
         "imix-ef70": raw(6, "7 Mbit/s", 200, IMIX, 16, link="10 Mbps")}


@pytest.fixture(scope="module", params=list(PORTS))
def sv(request):
    return DepartureRewards(pq_txq.params(build(PORTS[request.param])))


def test_every_arrival_of_a_service_is_accepted_or_lost(sv):
    """Per head kind k and PQ occupancy n: accepted + lost = the mean arrivals of the service, a s; accepted plus
    the arrivals beyond the Poisson cut = E[min(A, PQ - n)], the arrivals that find room."""
    arrivals = sv.a * sv.serv
    assert np.abs(sv.acc + sv.lost - arrivals[:, None]).max() <= 1e-12 * arrivals.max()
    room = np.array([[m - poisson_excess(m, sv.PQ - n) for n in range(sv.PQ)] for m in arrivals])
    assert np.abs(sv.acc + sv.missing - room).max() <= 1e-12 * arrivals.max()
    assert sv.missing.min() >= 0.0 and sv.missing.max() <= sv.slack * sv.PQ + 1e-15


def test_the_draws_of_every_state_are_a_probability_law(sv):
    """T[head][n, a, n']: from every n, the admitted kind a and the next occupancy n' have total probability 1."""
    for T in sv.transitions():
        assert np.abs(T.sum(axis=(1, 2)) - 1.0).max() < 1e-12 and T.min() >= 0.0


def test_the_ccdf_counts_run_from_every_accepted_arrival_down_to_the_cut_ones(sv):
    """per_ccdf(X) counts the accepted arrivals with D > X: at X = 0 all of them (every delay is positive), at the
    lattice's top only those beyond the Poisson cut (counted as above any point), and never increasing between."""
    assert np.abs(sv.per_ccdf(0) - (sv.acc + sv.missing)[:, :, None]).max() <= 1e-12 * sv.acc.max()
    assert np.array_equal(sv.per_ccdf(sv.top), np.broadcast_to(sv.missing[:, :, None], sv.per_ccdf(0).shape))
    points = range(0, sv.top + 1, max(1, sv.top // 40))
    counts = [sv.per_ccdf(X) for X in points]
    assert all(np.all(b <= a + 1e-12) for a, b in zip(counts, counts[1:]))


def test_the_sum_of_delays_is_the_integral_of_the_ccdf_counts(sv):
    """E[sum of accepted delays] = the integral over x of E[accepted with D > x]: per_sum lies between the lower and
    the upper sums of per_ccdf over the refined lattice (the cut arrivals counted at the largest delay in both)."""
    X = np.arange(sv.top + 1)
    counts = np.stack([sv.per_ccdf(int(x)) - sv.missing[:, :, None] for x in X])
    lower = counts[1:].sum(axis=0) / sv.M
    upper = counts[:-1].sum(axis=0) / sv.M
    total = sv.per_sum() - sv.missing[:, :, None] * sv.dmax
    assert np.all(lower <= total * (1 + 1e-9) + 1e-12) and np.all(total <= upper * (1 + 1e-9) + 1e-12)
