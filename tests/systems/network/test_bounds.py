"""End-to-end bounds per flow (TFA, SFA): one hop is the port's own bound, SFA pays a burst once, and every
bound -- end to end and per hop -- lies at or above the simulated maximum on a tandem with cross traffic, a sink
tree, the WAN example and random meshed networks (layers of nodes, every node linked to every node of the next
layer, flows down random paths, saturated flows among them)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qosbound.results import Kind
from qosbound.scenario import build, load
from qosbound.systems.network import network
from qosbound.systems.network.bounds import analyse
from qosbound.systems.network.generate import random_network
from qosbound.systems.network.simulated import network_config
from qosbound.systems.port import port_of
from qosbound.systems.port.bounds import class_bounds
from qosbound.validation.network_sim import simulate
from tests.helpers import example

CALLS = {"calls": 10, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr"}}
MIX = [{"size": "40 B", "p": 0.5}, {"size": "576 B", "p": 0.3}, {"size": "1500 B", "p": 0.2}]


def _classes(ql=64):
    return [{"name": "voice", "dscp": ["EF"], "priority": 1, "queue_limit": ql},
            {"name": "class-default", "bandwidth": "remaining 100 %", "queue_limit": ql}]


def tandem(n: int, rate="10 Mbit/s", cross: bool = True, ring=None) -> dict:
    """A voice flow over n ports; at every port a voice and a data flow cross it for that one hop."""
    nodes = [f"r{i}" for i in range(n + 1)]
    ports = {f"{a}->{b}": {"link": {"rate": rate, "delay": "1 ms"}, "classes": _classes(),
                           **({"txq": ring} if ring else {})} for a, b in zip(nodes, nodes[1:])}
    flows = [{"name": "v", "class": "voice", "path": nodes, "traffic": CALLS}]
    if cross:
        for i, (a, b) in enumerate(zip(nodes, nodes[1:])):
            flows.append({"name": f"xv{i}", "class": "voice", "path": [a, b], "traffic": CALLS})
            flows.append({"name": f"xd{i}", "class": "class-default", "path": [a, b],
                          "traffic": {"rate": "5 Mbit/s", "arrivals": "poisson", "sizes": MIX}})
    return {"name": "tandem", "system": "network", "ports": ports, "flows": flows}


def sink_tree(leaves: int) -> dict:
    """Leaves feed two aggregation routers that feed one core port: flows converge (a tree)."""
    ports = {}
    flows = []
    for i in range(leaves):
        agg = f"agg{i % 2}"
        ports[f"leaf{i}->{agg}"] = {"link": {"rate": "10 Mbit/s", "delay": "0.5 ms"}, "classes": _classes(),
                                    "txq": {"units": 4, "unit_size": "1500 B"}}
        flows.append({"name": f"v{i}", "class": "voice", "path": [f"leaf{i}", agg, "core", "sink"],
                      "traffic": CALLS})
        flows.append({"name": f"d{i}", "class": "class-default", "path": [f"leaf{i}", agg, "core"],
                      "traffic": {"rate": "4 Mbit/s", "arrivals": "poisson", "sizes": MIX}})
    for a in ("agg0", "agg1"):
        ports[f"{a}->core"] = {"link": {"rate": "50 Mbit/s", "delay": "2 ms"}, "classes": _classes(128),
                               "txq": {"units": 16, "unit_size": "1500 B"}}
    ports["core->sink"] = {"link": {"rate": "20 Mbit/s", "delay": "5 ms"}, "classes": _classes(),
                           "txq": {"units": 8, "unit_size": "1500 B"}}
    flows.append({"name": "bulk", "class": "class-default", "path": ["core", "sink"],
                  "traffic": {"saturated": True, "sizes": [{"size": "1500 B", "p": 1}]}})
    return {"name": "tree", "system": "network", "ports": ports, "flows": flows}


def test_one_hop_is_the_ports_own_bound_plus_the_link():
    """A network of one port: the flow's TFA bound is the port system's class bound for the same traffic, plus
    the propagation delay."""
    raw = tandem(1, cross=False, ring={"units": 8, "unit_size": "1500 B"})
    net = network(build(raw))
    fb = analyse(net).flows["v"]
    port = port_of(build({"name": "p", "system": "port", "link": {"rate": "10 Mbit/s"},
                          "txq": {"units": 8, "unit_size": "1500 B"},
                          "classes": [dict(_classes()[0], traffic=CALLS), _classes()[1]]}))
    assert fb.tfa == pytest.approx(class_bounds(port)["voice"].delay + 0.001, rel=1e-12)


def test_sfa_pays_the_burst_once_and_is_the_answer_on_a_long_tandem():
    """Alone on six ports, the calls' burst (10 packets) is paid at every hop by TFA and grows there; SFA pays it
    once: SFA < TFA, and the answer is SFA's."""
    nb = analyse(network(build(tandem(6, cross=False))))
    fb = nb.flows["v"]
    assert fb.sfa < fb.tfa and fb.best == fb.sfa and fb.analysis == "SFA"
    assert fb.lp == pytest.approx(fb.sfa, rel=1e-9)  # no cross traffic: FIFO-LP has nothing to trade
    bursts = [h.arrival.burst for h in fb.hops]
    assert all(b2 > b1 for b1, b2 in zip(bursts, bursts[1:]))  # TFA: the burst grows hop by hop


def test_the_bound_grows_with_the_load_it_carries():
    """More calls on the path never lower any bound (TFA and SFA)."""
    prev = None
    for calls in (5, 10, 20, 40):
        raw = tandem(3)
        raw["flows"][0]["traffic"] = dict(CALLS, calls=calls)
        fb = analyse(network(build(raw))).flows["v"]
        if prev is not None:
            assert fb.tfa >= prev.tfa and fb.sfa >= prev.sfa
        prev = fb


def _check_against_simulation(raw: dict, duration: float, seed: int):
    """Every flow's end-to-end bound and every hop bound at or above the largest simulated delay."""
    net = network(build(raw))
    nb = analyse(net)
    samples, hops = simulate(network_config(net), duration, 2, seed)
    assert hops > 0
    checked = 0
    closest = 0.0
    for f in net.flows:
        fb = nb.flows.get(f.name)
        if fb is None:
            assert f.saturated
            continue
        s = samples[f.index]
        mx = max(float(d.max()) for d in s.delays if d.shape[0])
        assert math.isfinite(fb.best) and mx <= fb.best, (f.name, mx, fb.tfa, fb.sfa, fb.lp)
        assert mx <= min(fb.tfa, fb.sfa, fb.lp)  # each analysis on its own
        assert fb.lp <= fb.sfa * (1 + 1e-9) or math.isinf(fb.sfa)  # FIFO-LP is never above SFA
        assert mx >= fb.least * (1 - 1e-9)  # no packet beats its transmissions and propagations
        for h, hb in enumerate(fb.hops):
            assert s.hop_max[:, h].max() <= hb.delay, (f.name, hb.port, s.hop_max[:, h].max(), hb.delay)
        if fb.loss_free:
            assert s.lost.sum() == 0, f.name
        checked += 1
        closest = max(closest, mx / fb.best)
    return checked, closest


def test_bounds_hold_on_a_tandem_with_cross_traffic():
    checked, closest = _check_against_simulation(tandem(4, ring={"units": 6, "unit_size": "1500 B"}), 4.0, 1)
    assert checked == 9 and closest > 0.2  # the bounds are not vacuous either


def test_bounds_hold_on_a_sink_tree_with_a_saturated_flow():
    checked, _ = _check_against_simulation(sink_tree(4), 4.0, 2)
    assert checked == 8


def test_bounds_hold_on_the_wan_example():
    raw = load(example("network_wan")).raw
    checked, closest = _check_against_simulation(raw, 5.0, 3)
    assert checked == 3 and closest > 0.3


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_bounds_hold_on_random_meshed_networks(seed):
    """Four random layered meshes (4 layers of 3 nodes, 30 flows, two saturated bulk flows)."""
    raw = random_network(4, 3, 30, seed, saturated=2, rates=(10e6, 100e6), ring=4 + 4 * seed)
    checked, _ = _check_against_simulation(raw, 2.0, seed)
    assert checked == 30


def test_no_loss_is_proved_only_where_the_queues_cannot_overflow():
    """Queues of 64 packets hold the calls' worst case (loss 0 is an upper bound); queues of 2 do not (nothing is
    claimed), and there the simulation does lose packets."""
    big = analyse(network(build(tandem(3, cross=False)))).flows["v"]
    assert big.loss_free
    raw = tandem(3, cross=False)
    for p in raw["ports"].values():
        p["classes"][0]["queue_limit"] = 2
    raw["ports"]["r1->r2"]["link"]["rate"] = "1 Mbit/s"
    small = analyse(network(build(raw))).flows["v"]
    assert not small.loss_free
    net = network(build(raw))
    samples, _ = simulate(network_config(net), 2.0, 2, 5)
    assert samples[0].lost.sum() > 0


def test_an_unshaped_priority_flow_starves_the_bounds_below_it_and_the_report_says_why():
    """Poisson voice in the core: the voice level is still bounded by its queue limit (TFA), SFA has no cross
    bucket for voip-ab there, and class-default below it gets no bound -- each with its reason."""
    from qosbound.systems.network.closed_form import closed_form

    raw = load(example("network_wan")).raw
    raw["flows"][1]["traffic"] = {"rate": "20 Mbit/s", "size": "200 B", "arrivals": "poisson"}
    net = network(build(raw))
    nb = analyse(net)
    v, w = nb.flows["voip-ab"], nb.flows["core-web"]
    assert math.isfinite(v.tfa) and math.isinf(v.sfa) and "no arrival curve" in v.why_sfa
    assert math.isinf(w.best) and "priority level 1 (voice) has no arrival curve" in w.why_tfa
    res = closed_form(net, nb)
    web = [r for r in res if r.metric.startswith("core-web.")]
    assert web and all(r.interval.kind is Kind.APPROXIMATION for r in web)  # the approximation, no bound
    assert all("core-web.delay.*" in r.provenance["omitted"] for r in res if r.interval.is_bound)


def test_bounds_hold_on_the_six_router_wan():
    """Two priority levels (video policed), on-off video, routes by source and destination, a saturated backup."""
    raw = load(example("network_wan_sites")).raw
    checked, _ = _check_against_simulation(raw, 3.0, 4)
    assert checked == 5
