"""Open-loop (UDP) sources and client chains of the dumbbell (validation/dumbbell.py): a CBR stream alone gets its
rate and the base delay, a Poisson stream on an idle link waits as M/D/1 says, on-off sources send their mean rate,
sources share the class queues with TCP, and chained flows start one after another."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from qosbound.validation.dumbbell import Class, Dumbbell, Queue, Udp, simulate

LINK = dict(rate=2e6, delay=0.01, duration=6.0, warmup=1.0)


def test_cbr_alone_gets_its_rate_and_the_base_delay():
    """64 kbit/s of 200-byte packets alone on 2 Mbit/s: every packet delivered, each after exactly its
    transmission time plus the link delay, no jitter, and the window's packets carry the source's rate."""
    r = simulate(Dumbbell(n=0, udp=(Udp("cbr", 64e3, 200, access=0.002),), **LINK), 1)
    u = r.udp[0]
    base = 8 * 200 / 2e6 + 0.01 + 0.002
    assert u.dropped == 0 and u.loss == 0.0 and u.sent - u.delivered == u.in_flight <= 1
    assert u.sent == pytest.approx(64e3 * 5.0 / 1600, abs=1)
    assert np.allclose(u.delays, base, atol=1e-12) and u.jitter < 1e-12
    assert u.throughput == pytest.approx(64e3, rel=0.01)


def test_poisson_on_an_idle_link_waits_as_md1():
    """Poisson packets of one size at load 0.6: the mean one-way delay is the M/D/1 (Pollaczek-Khinchine)
    wait rho D / (2 (1 - rho)) plus D plus the link delay, inside a 99 % t-interval of replications."""
    D = 8 * 1000 / 2e6
    rho = 0.6
    net = Dumbbell(n=0, udp=(Udp("poisson", rho * 2e6, 1000),), **dict(LINK, duration=11.0))
    means = [simulate(net, s).udp[0].mean_delay for s in range(1, 9)]
    m, se = np.mean(means), np.std(means, ddof=1) / math.sqrt(len(means))
    h = stats.t.ppf(0.995, len(means) - 1) * se
    expect = rho * D / (2 * (1 - rho)) + D + 0.01
    assert abs(m - expect) <= h, (m, h, expect)
    assert h < 0.1 * (expect - D - 0.01)  # the interval is tight enough to mean something


def test_onoff_sends_its_mean_rate_and_stops_on_time():
    """An on-off source (exponential on and off periods of 0.2 s, 1 Mbit/s peak, 8 ms between packets) sends
    1 + 1 / (exp(0.04) - 1) = 25.5 packets per 0.4 s cycle on average (an on period starts with a packet), 510
    kbit/s; 40 s hold about 100 cycles (5.6 % standard deviation). A CBR source with ``stop`` sends nothing
    after it."""
    r = simulate(Dumbbell(n=0, udp=(Udp("onoff", 1e6, 1000, on=0.2, off=0.2),
                                    Udp("cbr", 1e5, 500, start=2.0, stop=4.0)), **dict(LINK, duration=41.0)), 3)
    on, cbr = r.udp
    assert on.throughput == pytest.approx((1 + 1 / math.expm1(0.04)) * 8000 / 0.4, rel=0.15)
    assert cbr.sent == pytest.approx(2.0 * 1e5 / 4000, abs=1) and cbr.delivered == cbr.sent


def test_sources_share_the_class_queues_with_tcp():
    """A CBR stream in a priority class keeps the base delay and no loss beside greedy TCP flows in the lower
    class (one packet on the wire is all it waits for); put in the TCP flows' class instead, it waits behind
    their queue and loses packets to the full buffer."""
    classes = (Class("be", Queue(limit=30)), Class("ef", Queue(limit=30), priority=1))
    base = dict(n=3, access=(0.005,), rwnd=64, fwd_classes=classes, data_class=(0,), **LINK)
    hi = simulate(Dumbbell(udp=(Udp("cbr", 64e3, 200, cls=1),), **base), 2)
    lo = simulate(Dumbbell(udp=(Udp("cbr", 64e3, 200, cls=0),), **base), 2)
    tx = 8 * 1502 / 2e6
    assert hi.udp[0].loss == 0 and hi.udp[0].percentile(100) <= 0.01 + 8 * 200 / 2e6 + tx + 1e-9
    assert lo.udp[0].mean_delay > 0.01 + 10 * tx and lo.udp[0].dropped > 0
    assert hi.classes[(0, 1)].sent == hi.udp[0].sent - hi.udp[0].in_flight
    assert hi.goodput > 0.85 * 2e6


def test_chained_flows_start_when_the_previous_file_arrives():
    """Three files fetched one after another by one client: each starts when the previous one has arrived
    (no think time), so the starts + completions add up, and the last finishes after the sum of the three."""
    net = Dumbbell(n=3, files=(10, 20, 5), starts=(0.5, math.inf, math.inf), then=(1, 2, -1), access=(0.005,),
                   duration=5.0, warmup=0.0, rate=2e6, delay=0.01)
    r = simulate(net, 1)
    c = r.flows.completion
    assert np.isfinite(c).all() and (c > 2 * 0.015).all()
    alone = simulate(dataclasses.replace(net, n=1, files=(10,), starts=(0.5,), then=()), 1).flows.completion[0]
    assert c[0] == alone
