"""The chained simulator: the port kernel's feed mode replays a port exactly, a lone flow in a tandem sees exactly
its transmissions and propagations, losses are counted on the path, and the run is reproducible by its seed."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.errors import ScenarioError
from qosbound.scenario import build, load
from qosbound.systems.network import network
from qosbound.systems.network.simulated import network_config
from qosbound.systems.port import port_of
from qosbound.systems.port.simulated import config as port_config
from qosbound.validation.network_sim import SourceSpec, _run_port, _sizes, components, simulate
from qosbound.validation.port_sim import simulate_trace
from tests.helpers import example
from tests.systems.network.sub_networks import two_wans


def _port(classes, ring=None, rate="10 Mbit/s"):
    raw = {"name": "p", "system": "port", "link": {"rate": rate}, "classes": classes}
    if ring:
        raw["txq"] = ring
    return port_of(build(raw))


@pytest.mark.parametrize("ring", [None, {"units": 4, "unit_size": "512 B"}, {"units": 3, "unit_size": "packet"}])
def test_feed_mode_replays_the_ports_own_arrivals_exactly(ring):
    """The port run from its sources (trace mode) and the same port fed those arrivals (feed mode) send every
    packet at the same instant and drop the same ones: feed mode is the port's semantics with given arrivals."""
    port = _port([
        {"name": "voice", "priority": 1, "queue_limit": 8,
         "traffic": {"rate": "3 Mbit/s", "size": "200 B", "arrivals": "poisson"}},
        {"name": "af", "bandwidth": "30 %", "queue_limit": 6,
         "traffic": {"rate": "4 Mbit/s", "arrivals": "poisson", "sizes": [{"size": "64 B", "p": 0.5},
                                                                        {"size": "1500 B", "p": 0.5}]}},
        {"name": "class-default", "bandwidth": "40 %", "queue_limit": 6,
         "traffic": {"rate": "4 Mbit/s", "size": "900 B", "arrivals": "poisson"}}], ring)
    cfg = port_config(port)
    tr = simulate_trace(cfg, 20000, seed=3)
    assert tr["dropped"].sum() > 0  # the queues overflow: drops are replayed too
    dep, sat = _run_port(np.random.default_rng(0), cfg, tr["arrival"], tr["cls"], tr["size"], tr["prec"],
                         float(tr["arrival"][-1]) + 1.0, 0)
    assert sat[0].shape[0] == 0
    np.testing.assert_array_equal(np.isnan(dep), tr["dropped"])
    ok = ~tr["dropped"]
    np.testing.assert_allclose(dep[ok], tr["departure"][ok], rtol=1e-12, atol=1e-12)


def _tandem(n_ports: int, rates, delays, traffic, ring=None, queue_limit=64, cross=None):
    nodes = [f"r{i}" for i in range(n_ports + 1)]
    ports = {}
    for i in range(n_ports):
        spec = {"link": {"rate": rates[i], "delay": delays[i]},
                "classes": [{"name": "voice", "priority": 1, "queue_limit": queue_limit},
                            {"name": "class-default", "bandwidth": "remaining 100 %", "queue_limit": queue_limit}]}
        if ring:
            spec["txq"] = ring
        ports[f"{nodes[i]}->{nodes[i + 1]}"] = spec
    flows = [{"name": "v", "class": "voice", "path": nodes, "traffic": traffic}]
    if cross:
        flows += cross(nodes)
    return {"name": "tandem", "system": "network", "ports": ports, "flows": flows,
            "methods": {"simulated": {"duration": "2 s", "replications": 2}}}


def test_a_lone_flow_sees_exactly_its_transmissions_and_propagations():
    """One CBR flow of 500 B packets every 10 ms alone on three ports: no packet ever waits, so every end-to-end
    delay is sum(8 L / C) + sum(propagation) exactly."""
    raw = _tandem(3, ["10 Mbit/s", "100 Mbit/s", "2 Mbit/s"], ["1 ms", "5 ms", "0.5 ms"],
                  {"rate": "400 kbit/s", "size": "500 B", "arrivals": "cbr"})
    net = network(build(raw))
    samples, hops = simulate(network_config(net), 2.0, 2, seed=1)
    exact = 8 * 500 * (1 / 10e6 + 1 / 100e6 + 1 / 2e6) + 0.0065
    d = np.concatenate(samples[0].delays)
    assert d.shape[0] > 300 and hops == 2 * 3 * 200
    np.testing.assert_allclose(d, exact, rtol=1e-9)
    assert samples[0].lost.sum() == 0


def test_a_queue_too_small_loses_packets_on_the_path_and_they_go_no_further():
    """Calls bursting into a 2-packet queue at the second port: losses are counted for the flow, and only the
    packets that left the second port reach the third."""
    raw = _tandem(3, ["100 Mbit/s", "1 Mbit/s", "100 Mbit/s"], ["0 ms"] * 3,
                  {"calls": 20, "call": {"rate": "40 kbit/s", "size": "200 B", "arrivals": "cbr"}}, queue_limit=2)
    net = network(build(raw))
    samples, _ = simulate(network_config(net), 2.0, 2, seed=2)
    s = samples[0]
    assert s.lost.sum() > 0 and np.all(s.lost < s.sent)
    delivered = sum(d.shape[0] for d in s.delays)
    assert delivered == int((s.sent - s.lost).sum())


def test_the_run_is_reproducible_by_its_seed_and_differs_across_seeds():
    scn = load(example("network_wan"))
    cfg = network_config(network(scn))
    a, _ = simulate(cfg, 1.0, 2, seed=7)
    b, _ = simulate(cfg, 1.0, 2, seed=7)
    c, _ = simulate(cfg, 1.0, 2, seed=8)
    for k in range(len(a)):
        for x, y in zip(a[k].delays, b[k].delays):
            np.testing.assert_array_equal(x, y)
    assert any(not np.array_equal(x, y) for k in range(len(a)) for x, y in zip(a[k].delays, c[k].delays))


def test_a_saturated_flow_fills_its_first_link_and_is_forwarded():
    """bulk-ab is saturated at branch-a->core-1: it carries what voice leaves of 10 Mbit/s there (7.6 Mbit/s),
    and the same packets arrive at the later ports (no loss: the core is faster)."""
    scn = load(example("network_wan"))
    net = network(scn)
    samples, _ = simulate(network_config(net), 4.0, 2, seed=1)
    k = next(f.index for f in net.flows if f.name == "bulk-ab")
    s = samples[k]
    thr = 8 * s.bytes / s.window
    assert np.all(np.abs(thr - 7.6e6) < 0.05e6), thr
    assert s.lost.sum() == 0


def test_a_run_above_its_packet_hop_budget_is_refused_before_it_starts():
    """The budget's estimate is the packet-hops a run makes (within 10 %, on a short run of the WAN); the WAN for
    1000 s x 8 replications, about 3.5e8 packet-hops, is refused above a budget of 1e8, naming the duration,
    before anything is simulated."""
    from qosbound.errors import ResourceError
    from qosbound.progress import QUIET
    from qosbound.systems.network.simulated import packet_hops, simulated

    raw = load(example("network_wan")).raw
    raw["methods"] = {"simulated": {"duration": "1000 s", "max_packet_hops": 1e8}}
    scn = build(raw)
    net = network(scn)
    _, hops = simulate(network_config(net), 2.0, 2, seed=1)
    assert packet_hops(net, 2.0) * 2 == pytest.approx(hops, rel=0.10)
    assert packet_hops(net, 1000.0) * 8 > 1e8
    with pytest.raises(ResourceError) as e:
        simulated(net, scn.methods.simulated, [0.99], QUIET)
    assert e.value.field == "methods.simulated.duration"


@pytest.mark.parametrize("phase", [None, 0.004])
def test_cbr_calls_of_one_size_are_the_calls_clocks_merged(phase):
    """Calls of one packet size come out in time order, the same instants as each call's own clock (phases drawn in
    the same order) sorted together -- so no sort is needed after them."""
    from qosbound.validation.network_sim import CBR, SourceSpec, _clock, generate, sorted_stream

    s = SourceSpec(CBR, 80e3, (200.0,), (1.0,), count=37, phase=phase)
    period = 8.0 * 200.0 / 80e3
    t, z = generate(np.random.default_rng(9), s, 1.3)
    rng = np.random.default_rng(9)
    want = np.concatenate([_clock(rng, period, 1.3, phase) for _ in range(37)])
    assert sorted_stream(s) and np.all(np.diff(t) >= 0)
    assert np.array_equal(t, np.sort(want, kind="stable")) and np.all(z == 200.0)
    assert not sorted_stream(SourceSpec(CBR, 80e3, (200.0, 1000.0), (0.5, 0.5), count=3))


def test_a_flow_that_loses_packets_leaves_the_fast_path_with_the_same_counts():
    """A lossy tandem (3 Mbit/s of data end to end through a 2 Mbit/s middle port): the flows that lose packets are
    gathered port by port, and the losses per hop add up to the losses on the path."""
    from qosbound.systems.network.generate import tandem

    raw = tandem(3, ring=0, calls=10, cross_calls=1)
    raw["ports"]["r1->r2"]["link"]["rate"] = "2 Mbit/s"
    raw["flows"][0] = dict(raw["flows"][0], **{"class": "class-default",
                                               "traffic": {"rate": "3 Mbit/s", "arrivals": "poisson", "size": "500 B"}})
    net = network(build(raw))
    samples, _ = simulate(network_config(net), 2.0, 2, 4)
    v = samples[0]
    assert v.hop_lost[:, 1].sum() > 0 and v.hop_lost[:, 2].sum() == 0  # lost in the middle, not after it
    assert np.array_equal(v.hop_lost.sum(axis=1), v.lost)
    assert all(d.shape[0] == n - l for d, n, l in zip(v.delays, v.sent, v.lost))


def test_a_sub_network_simulated_alone_gives_its_flows_the_whole_runs_samples():
    """Two WANs side by side are two components; each simulated alone (flows=...) gives its flows the whole run's
    samples row for row, the other flows nothing, and the packet-hops add up to the whole run's."""
    cfg = network_config(network(build(two_wans())))
    groups = components(cfg)
    assert groups == [[0, 1, 2, 3], [4, 5, 6, 7]]
    whole, hops = simulate(cfg, 1.0, 2, seed=9)
    total = 0
    for g in groups:
        alone, h = simulate(cfg, 1.0, 2, seed=9, flows=g)
        total += h
        for k in range(len(cfg.flows)):
            a, w = alone[k], whole[k]
            if k in g:
                assert all(np.array_equal(x, y) for x, y in zip(a.delays, w.delays))
                for field in ("sent", "lost", "bytes", "hop_max", "hop_lost"):
                    np.testing.assert_array_equal(getattr(a, field), getattr(w, field))
            else:
                assert a.sent.sum() == 0 and all(d.shape[0] == 0 for d in a.delays)
    assert total == hops
    with pytest.raises(ScenarioError, match="not a sub-network of their own"):
        simulate(cfg, 1.0, 2, seed=9, flows=[0])


@pytest.mark.parametrize("law", [((40.0, 576.0, 1500.0), (0.5833333333333334, 0.3333333333333333, 0.08333333333333333)),
                                 ((64.0, 1500.0), (1.0, 3.0)), ((100.0, 200.0, 300.0, 400.0), (0.1, 0.2, 0.3, 0.4))])
def test_sizes_of_several_values_are_the_draws_rng_choice_makes(law):
    """A flow's sizes from its cached cumulative law are exactly ``rng.choice(sizes, n, p=probs / sum(probs))`` from
    the same generator state (so runs keep their seeds' samples), and leave the generator in the same state."""
    from qosbound.validation.network_sim import POISSON

    s = SourceSpec(POISSON, 1e6, *law)
    for seed in range(5):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        mine = _sizes(a, s, 10_000)
        theirs = b.choice(np.asarray(law[0], float), 10_000, p=np.asarray(law[1], float) / np.sum(law[1]))
        np.testing.assert_array_equal(mine, theirs)
        assert a.random() == b.random()


def test_replications_with_policers_are_independent_of_the_runs_before_them():
    """The six-router WAN polices video at every access port: each replication starts with full buckets, so a
    replication run alone, or in a second run on the same configuration, gives the samples it gives in the whole
    run (the kernel updates its meters' state in place: each replication works on copies)."""
    cfg = network_config(network(load(example("network_wan_sites"))))
    assert any((p.po_kind >= 0).any() for p in cfg.ports)
    before = [p.po_state.copy() for p in cfg.ports]
    whole, _ = simulate(cfg, 2.0, 3, seed=5)
    again, _ = simulate(cfg, 2.0, 3, seed=5)
    alone, _ = simulate(cfg, 2.0, 3, seed=5, only=[2])
    assert all(np.array_equal(p.po_state, b) for p, b in zip(cfg.ports, before))
    for w, a, o in zip(whole, again, alone):
        assert all(np.array_equal(x, y) for x, y in zip(w.delays, a.delays))
        np.testing.assert_array_equal(w.delays[2], o.delays[0])
        np.testing.assert_array_equal(w.lost[2:], o.lost)
