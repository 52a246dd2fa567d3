"""Known exact results on a small tandem: one CBR flow alone on two constant-rate ports. Its packets never meet
one another (a period of 20 ms against transmissions of 0.16 and 0.8 ms), so its end-to-end worst-case delay is
exactly its transmissions plus the propagation delays. The simulation gives exactly that; every bound lies at or
above it, and TFA's slack is known term by term: per hop one packet on the wire ahead (the port bound's
non-preemption term, which for a lone flow can only be its own previous packet, long gone) and, at the second
hop, the burst grown by the first hop's bound (Le Boudec & Thiran 2001, Section 1.4.3)."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.scenario import build
from qosbound.systems.network import network
from qosbound.systems.network.bounds import analyse
from qosbound.systems.network.simulated import network_config
from qosbound.validation.network_sim import simulate

L = 200.0            # bytes
RATES = (10e6, 2e6)  # bit/s
PROP = (1e-3, 3e-3)  # s
R_FLOW = 80e3        # bit/s
EXACT = sum(8 * L / c for c in RATES) + sum(PROP)


def _lone_flow(priority: bool) -> dict:
    voice = {"name": "voice", "queue_limit": 64}
    classes = ([dict(voice, priority=1), {"name": "class-default", "bandwidth": "remaining 100 %"}] if priority
               else [dict(voice, bandwidth="remaining 100 %")])
    ports = {"a->b": {"link": {"rate": "10 Mbit/s", "delay": "1 ms"}, "classes": classes},
             "b->c": {"link": {"rate": "2 Mbit/s", "delay": "3 ms"}, "classes": classes}}
    return {"name": "lone", "system": "network", "ports": ports,
            "flows": [{"name": "v", "class": "voice", "path": ["a", "b", "c"],
                       "traffic": {"calls": 1, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr"}}}]}


@pytest.mark.parametrize("priority", [True, False], ids=["priority-class", "single-fifo-class"])
def test_the_simulation_gives_the_exact_worst_case(priority):
    net = network(build(_lone_flow(priority)))
    samples, _ = simulate(network_config(net), 3.0, 2, seed=4)
    d = np.concatenate(samples[0].delays)
    assert d.size > 200
    np.testing.assert_allclose(d, EXACT, rtol=1e-9)
    np.testing.assert_allclose(samples[0].hop_max, [[8 * L / c for c in RATES]] * 2, rtol=1e-9)


@pytest.mark.parametrize("priority", [True, False], ids=["priority-class", "single-fifo-class"])
def test_every_bound_is_at_or_above_the_exact_worst_case_and_tfa_exceeds_it_by_its_known_slack(priority):
    fb = analyse(network(build(_lone_flow(priority)))).flows["v"]
    for b in (fb.tfa, fb.sfa, fb.lp):
        assert b >= EXACT - 1e-12
    first = 2 * 8 * L / RATES[0]                              # own transmission + one packet on the wire
    grown = L + R_FLOW * first / 8                            # the burst after the first hop, bytes
    second = 8 * L / RATES[1] + 8 * grown / RATES[1]          # one packet on the wire + the grown burst
    assert [h.delay for h in fb.hops] == pytest.approx([first, second], rel=1e-9)
    slack = sum(8 * L / c for c in RATES) + 8 * (grown - L) / RATES[1]
    assert fb.tfa == pytest.approx(EXACT + slack, rel=1e-9)
    assert fb.best == fb.tfa
