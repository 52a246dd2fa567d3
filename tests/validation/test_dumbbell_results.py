"""What a dumbbell run measured (qosbound.validation.dumbbell_results): the open-loop figures count only packets whose
fate is known, jitter is the mean |difference| of consecutive delays, the TFRC IN share is green over arrivals, and a
run's read-out carries the kernel's counts."""

from __future__ import annotations

import math

import numpy as np

from qosbound.validation.dumbbell import Dumbbell, Queue, Udp, simulate
from qosbound.validation.dumbbell_results import TfrcStats, UdpStats


def test_udp_loss_leaves_out_the_packets_still_in_flight():
    """10 sent, 2 dropped, 3 still queued at the end: the loss is 2 of the 7 whose fate is known."""
    u = UdpStats("u", sent=10, dropped=2, delivered=5, in_flight=3, delays=np.array([0.01] * 5), window=1.0)
    assert u.loss == 2 / 7


def test_udp_jitter_and_percentiles_of_the_delays():
    """Delays 10, 12, 11 ms: jitter (|12 - 10| + |11 - 12|) / 2 = 1.5 ms, median 11 ms; no delivered packet gives nan
    delays and a zero jitter."""
    u = UdpStats("u", 3, 0, 3, 0, np.array([0.010, 0.012, 0.011]), 1.0, delivered_bytes=600.0)
    assert math.isclose(u.jitter, 0.0015) and math.isclose(u.percentile(50), 0.011)
    assert math.isclose(u.throughput, 4800.0)
    empty = UdpStats("e", 0, 0, 0, 0, np.zeros(0), 1.0)
    assert math.isnan(empty.mean_delay) and empty.jitter == 0.0


def test_tfrc_in_fraction_is_green_over_arrivals():
    t = TfrcStats("f", sent=100, arrivals=80, green=60, dropped=5, random_losses=0, delivered=75,
                  delivered_bytes=75 * 1500.0, loss_events=2, loss_event_rate=0.02, rtt=0.05, updates=10,
                  rate=1e6, p=0.02, window=10.0)
    assert t.in_fraction == 0.75 and math.isclose(t.throughput, 75 * 1500 * 8 / 10.0)


def test_a_read_out_carries_the_kernels_counts():
    """A CBR source alone on an idle link, one 200-byte packet every 25 ms from t = 0: the closed window [1, 3] s
    holds the 81 generated at 1.000, 1.025, ..., 3.000 s; none is dropped, the one generated at the end is still in
    flight, and the run counts at least one packet and one event per generated packet."""
    r = simulate(Dumbbell(n=0, rate=2e6, delay=0.01, fwd=Queue(limit=100), duration=3.0, warmup=1.0,
                          udp=(Udp("cbr", 64e3, 200),)), 1)
    u = r.udp[0]
    assert u.sent == 81 and u.dropped == 0 and u.in_flight == 1 and u.delivered == 80
    assert r.packets >= u.sent and r.events >= r.packets
