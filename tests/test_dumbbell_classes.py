"""The dumbbell's class queues (validation/dumbbell.py): strict priority, deficit round robin by weight, policing,
flows in both directions, and the one-class case that must give the FIFO's results exactly."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from qosbound.validation.dumbbell import Class, Dumbbell, Marker, Queue, simulate

FOUR = dict(n=4, access=(0.005, 0.01, 0.02, 0.04), rwnd=64, duration=6.0, warmup=1.0)


@pytest.mark.parametrize("q", [Queue(limit=20), Queue.red(5, 15, 0.1), Queue.red(5, 15, 0.1, spacing="count")],
                         ids=["droptail", "red", "ns3-red"])
def test_one_class_is_the_fifo(q):
    """One class per direction (a scheduler with a single queue and departure events) gives exactly the
    numbers of the FIFO that computes departures at admission: same drops, goodput and ACKs per flow."""
    net = Dumbbell(fwd=q, **FOUR)
    a = simulate(net, 7)
    b = simulate(dataclasses.replace(net, fwd_classes=(Class("all", q),), rev_classes=(Class("acks", net.rev),)), 7)
    for k in ("goodput", "drops", "ack_sent", "timeouts", "cwnd_mean"):
        assert np.array_equal(getattr(a.flows, k), getattr(b.flows, k)), k
    assert a.flows.drops.sum() > 0 and b.classes[(0, 0)].drops == a.flows.drops.sum()


def test_strict_priority_starves_the_lower_class_under_overload():
    """A greedy flow in the priority class takes the whole link: the flow in the lower class gets nothing
    through (its few packets are dropped or wait forever). Police the priority class to 3 Mbit/s and the
    lower class gets the rest of the 10 Mbit/s."""
    classes = (Class("low", Queue(limit=50)), Class("high", Queue(limit=50), priority=1))
    net = Dumbbell(n=2, access=(0.01,), rwnd=64, duration=8.0, warmup=2.0, fwd_classes=classes, data_class=(0, 1))
    r = simulate(net, 1)
    assert r.flows.goodput[0] < 0.01 * r.flows.goodput[1] and r.classes[(0, 1)].rate > 0.95 * net.rate
    policed = dataclasses.replace(net, fwd_classes=(classes[0], dataclasses.replace(classes[1], police=1)),
                                  marker=(None, Marker("two-colour", 3e6, 15000)))
    r = simulate(policed, 1)
    assert r.classes[(0, 1)].drops > 0 and r.classes[(0, 1)].rate < 3.3e6
    assert r.classes[(0, 0)].rate > 0.6 * net.rate


@pytest.mark.parametrize("weights", [(3.0, 1.0), (1.0, 1.0, 2.0)])
def test_drr_shares_follow_the_weights_for_greedy_classes(weights):
    """Greedy flows in classes of one level share the link in proportion to the weights (within 2 %)."""
    k = len(weights)
    classes = tuple(Class(f"c{i}", Queue(limit=50), weight=w) for i, w in enumerate(weights))
    r = simulate(Dumbbell(n=k, access=(0.01,), rwnd=64, duration=8.0, warmup=2.0, fwd_classes=classes,
                          data_class=tuple(range(k))), 1)
    rates = np.array([r.classes[(0, i)].rate for i in range(k)])
    assert rates.sum() > 0.95 * 10e6
    assert np.allclose(rates / rates.sum(), np.array(weights) / sum(weights), atol=0.02)


def test_llq_with_cbwfq_serves_the_priority_class_then_shares_the_rest():
    """Cisco-style LLQ + CBWFQ: a policed priority class (1 Mbit/s) and two weighted classes (2:1). The priority
    class gets its policed rate; the weighted classes share what is left 2:1."""
    classes = (Class("voice", Queue(limit=20), priority=1, police=1), Class("af1", Queue(limit=50), weight=2),
               Class("be", Queue(limit=50), weight=1))
    r = simulate(Dumbbell(n=3, access=(0.01,), rwnd=64, duration=8.0, warmup=2.0, fwd_classes=classes,
                          data_class=(0, 1, 2), marker=(Marker("two-colour", 1e6, 5000),)), 2)
    v, a, b = (r.classes[(0, i)].rate for i in range(3))
    assert 0.8e6 < v < 1.1e6
    assert a / b == pytest.approx(2.0, rel=0.04) and v + a + b > 0.95 * 10e6


def test_flows_in_both_directions_share_a_class_queue_with_the_other_flows_acks():
    """A flow sending R2 -> R1 puts its data in the reverse classes and its ACKs in the forward ones: with both
    directions carrying data, ACKs of each direction meet the other's data in the same queue."""
    q = Queue(limit=30)
    r = simulate(Dumbbell(n=2, access=(0.01,), rwnd=64, duration=6.0, warmup=1.0, direction=(0, 1),
                          fwd_classes=(Class("f", q),), rev_classes=(Class("r", q),)), 3)
    assert (r.flows.goodput > 3e6).all()
    for d in (0, 1):
        # each direction carries one flow's data and the other's ACKs
        assert r.classes[(d, 0)].sent > 1.4 * r.flows.arrivals[d] - r.flows.drops[d]


def test_uplinks_pace_a_node_and_drop_when_full():
    """Two flows of one node behind a 2 Mbit/s uplink: together they get at most the uplink's payload rate (plus
    the 10 segments its buffer may hold when the window opens, over the 5-s window); a small uplink buffer drops
    segments."""
    net = Dumbbell(n=2, access=(0.01,), rwnd=64, duration=6.0, warmup=1.0, uplink_rate=2e6, uplink_of=(0, 0),
                   uplink_limit=10)
    r = simulate(net, 1)
    assert 0.8 * 2e6 < r.goodput <= 2e6 * 1460 / 1502 + 10 * 1460 * 8 / r.window
    assert r.flows.uplink_drops.sum() > 0


def test_bad_class_configuration_is_refused():
    with pytest.raises(ValueError):
        simulate(Dumbbell(n=2, fwd_classes=(Class("a"),), data_class=(0, 1)))
    with pytest.raises(ValueError):
        simulate(Dumbbell(n=1, fwd_classes=(Class("a", weight=0.0),)))
    with pytest.raises(ValueError):
        simulate(Dumbbell(n=1, direction=(2,)))
