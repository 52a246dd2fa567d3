"""The network scenario as understood, and every refusal a clear one-line error naming the field (exit 2): an
unknown port or node in a path, a class missing at a hop, a cyclic route, a saturated flow sharing its class."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import yaml

from qosbound.errors import ScenarioError
from qosbound.scenario import build, load
from qosbound.systems.network import network
from tests.helpers import ROOT, example

WAN = example("network_wan")


def wan() -> dict:
    return copy.deepcopy(load(WAN).raw)


def refused(raw: dict, field: str, words: str):
    with pytest.raises(ScenarioError) as e:
        network(build(raw, "net.yaml"))
    assert e.value.field == field, (e.value.field, e.value.problem)
    assert words in e.value.problem, e.value.problem
    return e.value


def test_the_wan_example_loads_as_written_with_its_routes_and_classes():
    """The issue's acceptance example: four flows, three ports in feed-forward order, voice at every hop."""
    net = network(load(WAN))
    assert net.order == ("branch-a->core-1", "core-1->core-2", "core-2->branch-b")
    f = net.flow("voip-ab")
    assert [h.port for h in f.hops] == list(net.order) and {h.cls for h in f.hops} == {"voice"}
    assert f.offered == pytest.approx(30 * 80e3)
    assert net.flow("bulk-ab").saturated and net.flow("bulk-ab").offered == 10e6  # its first link's rate
    core = net.ports["core-1->core-2"]
    assert core.delay == pytest.approx(0.010) and core.rate == 100e6
    assert core.cls("voice").offered == pytest.approx(330 * 80e3)  # voip-ab and core-voice


def test_an_unknown_port_in_a_path_is_refused_naming_the_ports_out_of_the_node():
    raw = wan()
    raw["flows"][0]["path"] = ["branch-a", "core-2", "branch-b"]
    e = refused(raw, "flows.0.path", "no port 'branch-a->core-2'")
    assert "branch-a->core-1" in e.problem


def test_an_unknown_node_is_refused():
    raw = wan()
    raw["flows"][1]["path"] = ["core-1", "core-9"]
    refused(raw, "flows.1.path.1", "unknown node 'core-9'")


def test_a_class_missing_at_a_hop_is_refused_naming_the_port():
    raw = wan()
    raw["ports"]["core-1->core-2"]["classes"][0]["name"] = "ef"
    e = refused(raw, "flows.0.class", "port core-1->core-2 has no class 'voice'")
    assert "ef" in e.problem


def test_a_cycle_of_port_dependencies_is_refused():
    """Three flows whose routes chain a->b->c->a: no feed-forward order exists, so TFA, SFA and the chained
    simulation cannot answer; refused with the ports named."""
    cls = [{"name": "voice", "priority": 1}, {"name": "class-default", "bandwidth": "remaining 100 %"}]
    port = {"link": {"rate": "10 Mbit/s"}, "classes": cls}
    t = {"rate": "1 Mbit/s", "size": "200 B", "arrivals": "cbr"}
    raw = {"name": "ring", "system": "network", "ports": {"a->b": port, "b->c": port, "c->a": port},
           "flows": [{"name": "x", "class": "voice", "path": ["a", "b", "c"], "traffic": t},
                     {"name": "y", "class": "voice", "path": ["b", "c", "a"], "traffic": t},
                     {"name": "z", "class": "voice", "path": ["c", "a", "b"], "traffic": t}]}
    e = refused(raw, "flows", "cycle")
    assert "a->b" in e.problem and "feed-forward" in e.problem
    raw["flows"] = raw["flows"][:2]  # x and y alone: a->b->c->a is a chain, not a cycle
    assert network(build(raw)).order == ("a->b", "b->c", "c->a")


def test_a_saturated_flow_must_be_alone_in_its_class_at_its_first_port():
    raw = wan()
    raw["flows"][3]["path"] = ["branch-a", "core-1", "core-2"]
    refused(raw, "flows.2.traffic", "saturated at its first port branch-a->core-1")


def test_a_port_problem_is_reported_under_the_port():
    raw = wan()
    raw["ports"]["core-1->core-2"]["classes"][0]["queue_limit"] = 0
    with pytest.raises(ScenarioError) as e:
        network(build(raw))
    assert e.value.field.startswith("ports.core-1->core-2.classes"), e.value.field


@pytest.mark.parametrize("bad,words", [
    ({"ports": {"a-b": {}}}, "named 'a->b'"),
    ({"flows": [{"name": "x", "class": "voice", "dscp": "EF", "path": ["a", "b"],
                 "traffic": {"rate": "1 Mbit/s", "size": "200 B"}}]}, "exactly one of 'class' or 'dscp'"),
    ({"flows": [{"name": "x.y", "class": "voice", "path": ["a", "b"],
                 "traffic": {"rate": "1 Mbit/s", "size": "200 B"}}]}, "flow name"),
    ({"flows": [{"name": "x", "class": "voice", "traffic": {"rate": "1 Mbit/s", "size": "200 B"}}]},
     "give 'path', or both 'source' and 'destination'"),
])
def test_malformed_sections_are_refused_at_load(bad, words):
    raw = {"name": "n", "system": "network", "ports": {"a->b": {"link": {"rate": "1 Mbit/s"}, "classes": [
        {"name": "voice", "priority": 1}]}}, "flows": [{"name": "x", "class": "voice", "path": ["a", "b"],
                                                      "traffic": {"rate": "100 kbit/s", "size": "200 B"}}]}
    raw.update(bad)
    with pytest.raises(ScenarioError, match=words):
        build(raw)


def test_source_and_destination_route_on_a_shortest_path():
    raw = wan()
    del raw["flows"][0]["path"]
    raw["flows"][0].update(source="branch-a", destination="branch-b")
    f = network(build(raw)).flow("voip-ab")
    assert [h.port for h in f.hops] == ["branch-a->core-1", "core-1->core-2", "core-2->branch-b"]
    raw["flows"][0]["destination"] = "branch-a"
    raw["flows"][0]["source"] = "core-2"
    refused(raw, "flows.0.destination", "no route from core-2 to branch-a")


def test_a_dscp_selects_each_ports_class_else_class_default():
    raw = wan()
    del raw["flows"][0]["class"]
    raw["flows"][0]["dscp"] = "EF"
    raw["flows"][1]["dscp"] = "AF41"
    del raw["flows"][1]["class"]
    net = network(build(raw))
    assert {h.cls for h in net.flow("voip-ab").hops} == {"voice"}
    assert {h.cls for h in net.flow("core-voice").hops} == {"class-default"}


def test_a_port_may_be_a_port_file_whose_traffic_is_left_out(tmp_path):
    """A port given as the path of a port scenario: its link, ring and classes are used, its traffic is not
    (said in the inputs as understood)."""
    port = yaml.safe_load((ROOT / "examples" / "port_branch10m.yaml").read_text())
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(port))
    raw = {"name": "n", "system": "network", "ports": {"a->b": "p.yaml"},
           "flows": [{"name": "v", "class": "voice", "path": ["a", "b"],
                      "traffic": {"calls": 5, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr"}}}]}
    f = tmp_path / "n.yaml"
    f.write_text(yaml.safe_dump(raw))
    net = network(load(f))
    p = net.ports["a->b"]
    assert p.rate == 10e6 and p.ring.units == 16
    assert p.cls("voice").offered == pytest.approx(5 * 80e3) and not p.cls("business").has_traffic
    assert any("traffic of the port file" in n for n in net.notes)


def test_errors_on_the_command_line_are_one_line_with_exit_2(tmp_path):
    raw = wan()
    raw["flows"][0]["path"] = ["branch-a", "core-2"]
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(raw))
    p = subprocess.run([sys.executable, "-m", "qosbound", "plan", str(f)], capture_output=True, text=True,
                       cwd=str(ROOT), timeout=300)
    assert p.returncode == 2, p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("qosbound: ") and "flows.0.path" in lines[0], p.stderr
    assert "Traceback" not in p.stderr
