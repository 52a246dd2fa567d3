"""ns-3 as the independent simulator of networks (:mod:`qosbound.systems.network.ns3`,
:mod:`qosbound.validation.ns3_network`): on small tandems, ns-3's per-flow end-to-end estimates (mean, quantiles,
jitter, loss, throughput; Student t over its own replications) agree with the chained simulation's by the one
agreement rule (family-wise 99 %); a flow alone on its tandem gets exactly its transmissions and propagation
delays in ns-3 (the last bit at the destination); what ns-3 cannot express is refused naming the field."""

from __future__ import annotations

import json

import numpy as np
import pytest

from qosbound.agreement import agreements
from qosbound.cli import main
from qosbound.errors import ScenarioError
from qosbound.progress import QUIET
from qosbound.scenario import build
from qosbound.systems.network import evaluate, network
from qosbound.systems.network.metrics import quantiles_of
from qosbound.systems.network.ns3 import ns3_config, ns3_results
from qosbound.validation import ns3_runner

needs_ns3 = pytest.mark.skipif(not ns3_runner.available(), reason="the ns3 wheel is not installed")


def _classes(voice_limit: int, default_limit: int) -> list:
    return [{"name": "voice", "dscp": ["EF"], "priority": 1, "queue_limit": voice_limit},
            {"name": "class-default", "bandwidth": "remaining 100 %", "queue_limit": default_limit}]


def _port(rate: str, delay: str, units: int, voice_limit: int = 64, default_limit: int = 64) -> dict:
    return {"link": {"rate": rate, "delay": delay}, "txq": {"units": units, "unit_size": "1500 B"},
            "classes": _classes(voice_limit, default_limit)}


def _cbr(calls: int, rate: str = "80 kbit/s", size: str = "200 B") -> dict:
    return {"calls": calls, "call": {"rate": rate, "size": size, "arrivals": "cbr"}}


def _poisson(rate: str, sizes: list) -> dict:
    return {"rate": rate, "arrivals": "poisson", "sizes": [{"size": s, "p": p} for s, p in sizes]}


def edge_core_edge() -> dict:
    """Three ports a->b->c->d (10, 100, 10 Mbit/s; 2, 10, 2 ms): voice end to end behind a saturated bulk flow
    leaving at c, 100 voice calls across the core, Poisson data entering at b and leaving at d. Beside it, on its
    own sub-network x->y->z (10 and 2 Mbit/s, 1 and 3 ms), one CBR call alone."""
    return {"name": "edge-core-edge", "system": "network",
            "ports": {"a->b": _port("10 Mbit/s", "2 ms", 16, 32, 64),
                      "b->c": _port("100 Mbit/s", "10 ms", 64, 64, 128),
                      "c->d": _port("10 Mbit/s", "2 ms", 16, 32, 64),
                      "x->y": _port("10 Mbit/s", "1 ms", 4), "y->z": _port("2 Mbit/s", "3 ms", 4)},
            "flows": [{"name": "voip", "class": "voice", "path": ["a", "b", "c", "d"], "traffic": _cbr(20)},
                      {"name": "core-voice", "class": "voice", "path": ["b", "c"], "traffic": _cbr(100)},
                      {"name": "bulk", "class": "class-default", "path": ["a", "b", "c"],
                       "traffic": {"saturated": True, "sizes": [{"size": "1500 B", "p": 1}]}},
                      {"name": "web", "class": "class-default", "path": ["b", "c", "d"],
                       "traffic": _poisson("5 Mbit/s", [("64 B", 0.5), ("576 B", 0.3), ("1500 B", 0.2)])},
                      {"name": "lone", "class": "voice", "path": ["x", "y", "z"], "traffic": _cbr(1)}],
            "metrics": {"quantiles": [0.5, 0.99]},
            "methods": {"simulated": {"duration": "2 s", "replications": 3, "seed": 5}}}


def lossy_pair() -> dict:
    """Two ports a->b->c (100 then 10 Mbit/s, 1 and 5 ms; at b->c a ring of 8, a voice queue of 12 and a data
    queue of 20 packets): 40 + 20 voice calls and 7.5 Mbit/s of Poisson data into 10 Mbit/s, so both classes
    lose packets at b->c (about 2 % of the voice, 25 % of the data)."""
    return {"name": "lossy-pair", "system": "network",
            "ports": {"a->b": _port("100 Mbit/s", "1 ms", 32, 64, 100),
                      "b->c": _port("10 Mbit/s", "5 ms", 8, 12, 20)},
            "flows": [{"name": "v-ac", "class": "voice", "path": ["a", "b", "c"], "traffic": _cbr(40)},
                      {"name": "v-bc", "class": "voice", "path": ["b", "c"],
                       "traffic": _cbr(20, "64 kbit/s", "120 B")},
                      {"name": "d-ac", "class": "class-default", "path": ["a", "b", "c"],
                       "traffic": _poisson("4 Mbit/s", [("1500 B", 0.6), ("64 B", 0.4)])},
                      {"name": "d-bc", "class": "class-default", "path": ["b", "c"],
                       "traffic": _poisson("3.5 Mbit/s", [("576 B", 1.0)])}],
            "metrics": {"quantiles": [0.5, 0.99]},
            "methods": {"simulated": {"duration": "2 s", "replications": 3, "seed": 3}}}


def _compared(results: list) -> list:
    """The verdicts of ns-3 against the simulation (every statistical check of the two lists)."""
    return [v for v in agreements(results) if v.method in ("simulated vs ns-3", "ns-3 vs simulated")]


@pytest.mark.slow
@needs_ns3
def test_ns3_agrees_with_the_simulation_on_a_tandem_and_times_a_lone_flow_exactly():
    scn = build(edge_core_edge())
    net = network(scn)
    opts = scn.methods.simulated
    ns, info, reps = ns3_results(net, opts, quantiles_of(scn))
    # the lone call meets no other packet: every delay is its two transmissions and the two links, in ns-3 too
    lone = [f.name for f in net.flows].index("lone")
    exact = 8 * 200 / 10e6 + 8 * 200 / 2e6 + 1e-3 + 3e-3
    for flows in reps:
        d = flows[lone]["recv"] - flows[lone]["send"]
        assert len(d) >= 90 and np.all(np.abs(d - exact) < 1e-8), (d.min(), d.max(), exact)
    # ns-3 classified each flow into its band at every port (the runner checks it; the counts are there)
    assert len(info["checks"]) == opts.replications
    sim = evaluate(scn, ["simulated"], QUIET)
    verdicts = _compared(sim + ns)
    judged = {v.metric for v in verdicts}
    for flow in ("voip", "core-voice", "web"):
        for stat in ("delay.mean", "delay.p50", "delay.p99", "delay.jitter", "loss", "throughput"):
            assert f"{flow}.{stat}" in judged
    assert "bulk.throughput" in judged
    bad = [v.detail for v in verdicts if v.status != "agree"]
    assert not bad, bad


@pytest.mark.slow
@needs_ns3
def test_validate_ns3_on_a_lossy_tandem_agrees_with_the_simulation(tmp_path, capsys):
    path = tmp_path / "lossy.yaml"
    path.write_text(json.dumps(lossy_pair()))
    code = main(["validate", str(path), "--ns3", "--json", "--quiet", "--out", ""])
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == "ns-3" and doc["source"]["kind"] == "ns-3"
    observed = {m["metric"]: m for m in doc["metrics"] if m["method"] == "ns-3"}
    # both classes lose packets at b->c in ns-3, and the simulation's loss intervals hold ns-3's
    for flow in ("v-ac", "v-bc", "d-ac", "d-bc"):
        assert observed[f"{flow}.loss"]["value"] > 0.005
    against_sim = [v for v in doc["verdicts"] if "simulated" in v["method"] and "ns-3" in v["method"]]
    assert {v["metric"] for v in against_sim} >= {f"{f}.{s}" for f in ("v-ac", "v-bc", "d-ac", "d-bc")
                                                  for s in ("loss", "delay.mean", "delay.p99")}
    assert all(v["status"] == "agree" for v in against_sim), [v["detail"] for v in against_sim
                                                              if v["status"] != "agree"]
    # every closed-form bound on a maximum lies at or above ns-3's largest delay
    assert any(v["method"] == "closed-form vs ns-3" for v in doc["verdicts"])
    assert code == 0


def _refused(raw: dict) -> ScenarioError:
    with pytest.raises(ScenarioError) as e:
        ns3_config(network(build(raw)), build(raw).methods.simulated)
    return e.value


def test_ns3_refuses_two_weighted_classes_at_a_port():
    raw = lossy_pair()
    raw["ports"]["b->c"]["classes"] = [{"name": "voice", "priority": 1, "queue_limit": 12},
                                       {"name": "data", "bandwidth": "remaining 50 %"},
                                       {"name": "class-default", "bandwidth": "remaining 50 %"}]
    raw["flows"][3]["class"] = "data"
    e = _refused(raw)
    assert e.field == "ports.b->c.classes" and "one priority class over one other class" in e.problem


def test_ns3_refuses_packets_larger_than_a_ring_unit():
    raw = lossy_pair()
    raw["ports"]["b->c"]["txq"] = {"units": 8, "unit_size": "512 B"}
    e = _refused(raw)
    assert e.field == "ports.b->c.txq.unit_size" and "counts its device queue in packets" in e.problem


def test_ns3_refuses_on_off_sources_and_mixed_bands_naming_the_flow():
    raw = lossy_pair()
    raw["flows"][1]["traffic"] = {"rate": "64 kbit/s", "size": "120 B", "arrivals": "on-off", "on": "1 s",
                                  "off": "1 s"}
    assert _refused(raw).field == "flows.1.traffic"
    raw = lossy_pair()
    raw["ports"]["a->b"]["classes"] = [{"name": "voice", "bandwidth": "remaining 100 %"}]
    raw["flows"][2]["class"] = raw["flows"][3]["class"] = "voice"
    raw["flows"][3]["path"] = ["a", "b"]
    e = _refused(raw)
    assert e.field == "flows.0" and "band its ToS selects" in e.problem


def test_the_ns3_ring_is_the_port_systems_mapping():
    """Each port's device queue is txq.units - 1 packets (+ 1 on the wire), as the port system maps it."""
    cfg = ns3_config(network(build(lossy_pair())), build(lossy_pair()).methods.simulated)
    assert [p.device_queue for p in cfg.ports] == [31, 7]
    assert [p.bands for p in cfg.ports] == [[64, 100], [12, 20]]
    assert [f.band for f in cfg.flows] == [0, 0, 1, 1]
