"""The dumbbell's node uplinks with the bottleneck's droppers (``Dumbbell.uplink_aqm``, qosbound.validation.dumbbell):
off by default (no counter of it is reported then); under a forced overload of one uplink its RIO drops by colour as
RIO orders them (red most, green least) while the bottleneck, ten times faster, drops nothing; the node's marker
colours the data before the uplink, so an EF policer acts there and no out-of-profile packet reaches the bottleneck;
the receivers' ACKs through a congested uplink are dropped by their own colour's curve; bad settings are refused."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from qosbound.validation.dumbbell import Class, Dumbbell, Marker, Queue, simulate

#: RIO-like curves per colour (packets): green from 20, yellow from 8, red from 2 on the average; EWMA weight 0.02
RIO = Queue(limit=60, mode="rio", min_th=(20.0, 8.0, 2.0), max_th=(40.0, 16.0, 6.0), max_p=(0.05, 0.1, 0.2),
            alpha=0.02)
#: six bulk flows of one node (two per colour) behind a 2 Mbit/s uplink, a 20 Mbit/s bottleneck
OVERLOAD = dict(n=6, rate=20e6, access=(0.005,), rwnd=64, duration=8.0, warmup=2.0, uplink_rate=2e6,
                uplink_of=(0,) * 6, colour=(0, 0, 1, 1, 2, 2), fwd=RIO, rev=Queue(limit=1000))


def test_off_by_default_and_then_no_uplink_colour_counters():
    """The option is off by default; a run with drop-tail uplinks reports no per-colour uplink counts."""
    net = Dumbbell(**OVERLOAD)
    assert net.uplink_aqm is False and net.ack_uplink_of == ()
    r = simulate(net, 1)
    assert r.flows.uplink_arrivals_by_colour is None and r.flows.uplink_drops_by_colour is None


def test_uplink_rio_drops_red_most_and_green_least_under_overload():
    """Six flows overload their node's 2 Mbit/s uplink: the uplink's RIO drops a larger share of red than of yellow
    and of yellow than of green data (so in each of seeds 1-4; the red flows hardly send), the bottleneck (20 Mbit/s)
    drops none, and the node sends about its uplink's rate."""
    r = simulate(dataclasses.replace(Dumbbell(**OVERLOAD), uplink_aqm=True), 3)
    arr = r.flows.uplink_arrivals_by_colour.sum(axis=0)
    drp = r.flows.uplink_drops_by_colour.sum(axis=0)
    assert (arr > 0).all() and drp[2] > 0
    share = drp / arr
    assert share[2] > share[1] > share[0]
    assert r.flows.drops.sum() == 0
    np.testing.assert_array_equal(r.flows.uplink_drops, r.flows.uplink_drops_by_colour.sum(axis=1))
    assert 0.8 * 2e6 < r.goodput <= 2e6
    # the goodput follows the colours too: green flows get more than red ones
    assert r.flows.goodput[:2].sum() > r.flows.goodput[4:].sum()


def test_drop_tail_curves_at_the_uplink_drop_only_when_full():
    """With the bottleneck's queue drop tail (no early drop), the AQM uplink drops only when its buffer is full: every
    colour alike, and fewer drops with a larger ``uplink_limit``."""
    tail = Queue(limit=1000)
    small = simulate(Dumbbell(**{**OVERLOAD, "fwd": tail}, uplink_aqm=True, uplink_limit=10), 3)
    large = simulate(Dumbbell(**{**OVERLOAD, "fwd": tail}, uplink_aqm=True, uplink_limit=200), 3)
    assert small.flows.uplink_drops.sum() > large.flows.uplink_drops.sum()
    assert small.flows.uplink_drops_by_colour.sum(axis=0).min() > 0


def test_the_marker_moves_to_the_node_so_the_policer_acts_at_the_uplink():
    """An EF class policed to green behind a two-colour token bucket (1 Mbit/s): with the uplink AQM the node's
    marker colours the data and the uplink drops what is out of profile (red), so the bottleneck's policer sees only
    green; without it the bottleneck's policer drops."""
    ef = (Class("EF", Queue(limit=100), priority=1, police=1), Class("BE", Queue(limit=100)))
    net = Dumbbell(n=2, rate=20e6, access=(0.005,), rwnd=64, duration=6.0, warmup=1.0, uplink_rate=4e6,
                   uplink_of=(0, 0), fwd_classes=ef, rev_classes=ef, data_class=(0, 1), ack_class=(1, 1),
                   marker=(Marker("two-colour", 1e6, 10e3), None), colour=(0, 2))
    on = simulate(dataclasses.replace(net, uplink_aqm=True), 5)
    off = simulate(net, 5)
    assert off.classes[(0, 0)].drops > 0
    assert on.classes[(0, 0)].drops == 0
    assert on.flows.uplink_drops_by_colour[0, 2] > 0 and on.flows.uplink_drops_by_colour[0, 0] == 0
    # the Premium flow stays within its token rate either way
    assert on.flows.goodput[0] < 1.1e6 and off.flows.goodput[0] < 1.1e6


def test_acks_through_a_congested_uplink_are_dropped_by_their_colour():
    """Flow 2 (R2 -> R1) overloads node 1's 1 Mbit/s uplink with green data; flows 0 and 1 (R1 -> R2) send their
    ACKs through that uplink, flow 0's green and flow 1's red (red's curve from an average of 12 packets, on the
    total average as RIO's OUT): RIO drops a larger share of the red ACKs (so in each of seeds 1-5)."""
    rev = Queue(limit=60, mode="rio", min_th=(20.0, 8.0, 12.0), max_th=(40.0, 16.0, 48.0), max_p=(0.05, 0.1, 0.2),
                alpha=0.02)
    net = Dumbbell(n=3, rate=20e6, access=(0.005,), rwnd=64, duration=8.0, warmup=2.0, direction=(0, 0, 1),
                   uplink_rate=1e6, uplink_of=(0, 0, 1), ack_uplink_of=(1, 1, -1), uplink_aqm=True, fwd=RIO, rev=rev,
                   colour=(0, 0, 0), ack_colour=(0, 2, 0), delack=0.0)
    r = simulate(net, 2)
    dropped = r.flows.ack_uplink_drops
    offered = dropped + r.flows.ack_sent
    assert dropped[1] > 0 and offered[0] > 0 and offered[1] > 0
    assert dropped[1] / offered[1] > 2 * dropped[0] / offered[0]
    assert dropped[2] == 0  # flow 2's ACKs take no uplink


@pytest.mark.parametrize("bad", [dict(uplink_aqm=True), dict(uplink_rate=1e6, ack_uplink_of=(0,)),
                                 dict(uplink_rate=1e6, uplink_aqm=True, ack_uplink_of=(-2,))],
                         ids=["no-uplink-rate", "ack-uplinks-without-aqm", "bad-ack-uplink"])
def test_bad_uplink_aqm_settings_are_refused(bad):
    with pytest.raises(ValueError):
        simulate(Dumbbell(n=1, **bad))
