"""examples/network_ferrari2001.yaml, Ferrari, Pau & Raffaelli (2001)'s test bed as a network: it loads as the
paper's C7200 port and two FIFO C7500 hops per K, its chained simulation gives the end-to-end mean EF delay the
path simulator (``qosbound.validation.path_sim``, docs/ferrari-wm.md row (a)) gives for the same path, and at the
same-rate hops after the saturated port an EF packet waits exactly for the largest packet ahead of it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qosbound.scenario import build, load
from qosbound.systems.network import network
from qosbound.systems.network.simulated import network_config
from qosbound.systems.pq_txq import params
from qosbound.validation.network_sim import simulate
from qosbound.validation.path_sim import Hop, run_path
from tests.helpers import example

_K = (1, 2, 3)
_UNIT = 512  # bytes, the C7200's transmission-queue unit
_RATE = 2e6  # bit/s, every link of the test bed


def _ferrari():
    scn = load(example("network_ferrari2001"))
    return scn, network(scn)


def test_the_example_is_the_test_bed_for_each_K():
    """Per K: EF (300 kbit/s CBR of 128 B) and saturated best effort of K units cross the C7200's PQ + TxQ port
    (5 units of 512 B, PQ of 10) and two FIFO 2 Mbit/s hops, with no propagation delay."""
    scn, net = _ferrari()
    assert scn.system == "network"
    flows = {f.name: f for f in net.flows}
    assert set(flows) == {f"{c}-k{K}" for c in ("ef", "be") for K in _K}
    for K in _K:
        ef, be = flows[f"ef-k{K}"], flows[f"be-k{K}"]
        assert [h.port for h in ef.hops] == [h.port for h in be.hops] == [
            f"k{K}-c7200->k{K}-c7500a", f"k{K}-c7500a->k{K}-c7500b", f"k{K}-c7500b->k{K}-site1"]
        assert be.saturated and not ef.saturated
        assert ef.offered == pytest.approx(300e3) and be.smallest == K * _UNIT
        for h in ef.hops:
            assert net.ports[h.port].delay == 0.0
    raw_port = scn.raw["ports"]["k1-c7200->k1-c7500a"]
    assert raw_port["txq"] == {"units": 5, "unit_size": "512 B"}
    assert raw_port["classes"][0]["queue_limit"] == 10


def _path_params(K: int):
    """The same C7200 port as docs/ferrari-wm.md's path simulator takes it (the pq_txq system)."""
    raw = {"name": f"ferrari2001-path-K{K}", "system": "pq_txq", "link": {"rate": _RATE},
           "txq": {"units": 5, "unit_size": _UNIT}, "pq": {"capacity": 10},
           "traffic": {"EF": {"rate": 300e3, "size": 128, "arrivals": "cbr"},
                       "BE": {"saturated": True, "size": K * _UNIT}}}
    return params(build(raw))


@pytest.fixture(scope="module")
def simulated_network():
    _, net = _ferrari()
    samples, _ = simulate(network_config(net), 10.0, 8, seed=5)
    return net, samples


def test_the_network_mean_is_the_path_simulators_mean(simulated_network):
    """Two independent simulators of one path (the chained port kernels here; pq_txq's simulator plus FIFO hops
    there): their mean EF end-to-end delays, each over 8 replications, differ by less than 4 standard errors of
    the difference, for K = 1, 2, 3; and the network's growth from K = 1 to 3 is the two hops' 2 x 2 x 2.048 ms
    plus the port's own (its exact means 7.34 and 7.69 ms, docs/ferrari-wm.md), within 0.5 ms."""
    net, samples = simulated_network
    index = {f.name: f.index for f in net.flows}
    means = {}
    for K in _K:
        s = samples[index[f"ef-k{K}"]]
        per_rep = np.array([d.mean() for d in s.delays])
        path = run_path(_path_params(K), 3000, 8, 2001 + K, post=(Hop(_RATE), Hop(_RATE)))
        se_net = per_rep.std(ddof=1) / math.sqrt(per_rep.size)
        se_path = path.replication_means.std(ddof=1) / math.sqrt(path.replications)
        gap = abs(per_rep.mean() - path.mean)
        assert gap <= 4 * math.hypot(se_net, se_path), (K, per_rep.mean(), path.mean, se_net, se_path)
        means[K] = per_rep.mean()
    growth = means[3] - means[1]
    assert growth == pytest.approx(2 * 2 * 8 * _UNIT / _RATE + (7.69 - 7.34) * 1e-3, abs=0.5e-3)


def test_a_same_rate_hop_after_the_saturated_port_holds_ef_for_the_largest_packet_ahead(simulated_network):
    """Behind a saturated port of the same rate, a packet leaves a FIFO hop M / C after it left the port, M the
    largest packet before it in the busy period (Lindley's recursion); so an EF packet's delay at each C7500 hop is
    at most K x 2.048 ms, and one following a best-effort packet reaches it."""
    net, samples = simulated_network
    index = {f.name: f.index for f in net.flows}
    for K in _K:
        hop_max = samples[index[f"ef-k{K}"]].hop_max  # (replications, hops)
        np.testing.assert_allclose(hop_max[:, 1:], 8 * K * _UNIT / _RATE, rtol=1e-9)
