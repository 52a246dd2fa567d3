"""The port scenario schema (qosbound.systems.port.schema and .elements): the issue's edge port loads exactly as
written, every form of every field means what the docs say, and bad input is one ScenarioError naming the
field by its path (a class by its name)."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
import yaml

from qosbound.errors import ScenarioError
from qosbound.progress import QUIET
from qosbound.scenario import build, load
from qosbound.systems import get_system
from qosbound.systems.port.elements import port_of
from qosbound.systems.port.schema import parse_action, parse_bandwidth
from tests.helpers import ROOT, example, one_line

EDGE = example("port_edge1g")

#: The edge port exactly as the issue writes it (comments aside), the interface's reference text.
ISSUE_YAML = """
name: edge-1g
system: port
description: 1 Gbit/s edge port, voice and video LLQ, three AF classes, class-default, 128-packet tx-ring
link: {rate: 1 Gbit/s}
txq: {units: 128, unit_size: 1500 B}
classes:
  - name: voice
    dscp: [EF]
    priority: 1
    police: {cir: 100 Mbit/s, cbs: 64 kB}
    queue_limit: 64
    traffic: {calls: 400, call: {rate: 80 kbit/s, size: 200 B, arrivals: cbr}}
  - name: video
    dscp: [AF41]
    priority: 2
    police: {cir: 300 Mbit/s, cbs: 256 kB}
    queue_limit: 128
    traffic: {rate: 200 Mbit/s, size: 1200 B, arrivals: poisson}
  - name: critical
    dscp: [AF31, AF32, AF33]
    bandwidth: 20 %
    queue_limit: 64
    dropper: {mode: wred, exponent: 9, thresholds: {AF31: {min_th: 32, max_th: 64, P_d: 10},
              AF32: {min_th: 24, max_th: 64, P_d: 10}, AF33: {min_th: 16, max_th: 64, P_d: 10}}}
    traffic: {rate: 150 Mbit/s, size: 576 B, arrivals: poisson, mix: [0.6, 0.3, 0.1]}
  - name: bulk
    dscp: [AF21, AF22, AF23]
    bandwidth: 10 %
    queue_limit: 64
    traffic: {saturated: true, sizes: [{size: 1500 B, p: 1}]}
  - name: class-default
    bandwidth: 10 %
    queue_limit: 64
    traffic: {saturated: true, sizes: [{size: 40 B, p: 0.5833333333333334},
              {size: 576 B, p: 0.3333333333333333}, {size: 1500 B, p: 0.08333333333333333}]}
slos:
  - {metric: voice.delay.p99, max: 1 ms}
  - {metric: voice.loss, max: 1e-5}
  - {metric: video.delay.p99, max: 5 ms}
  - {metric: critical.drop.AF31, max: 1e-3}
"""


def test_the_issue_yaml_is_the_shipped_example_and_loads_as_written():
    """examples/port_edge1g.yaml is the issue's scenario field for field, and it validates unchanged."""
    shipped = yaml.safe_load(EDGE.read_text())
    assert shipped == yaml.safe_load(ISSUE_YAML)
    scn = build(yaml.safe_load(ISSUE_YAML))
    assert [c.name for c in scn.classes] == ["voice", "video", "critical", "bulk", "class-default"]


def test_the_edge_port_reads_as_the_engineer_means_it():
    """Rates, sizes, levels and shares in SI numbers: 1 Gbit/s, a 128 x 1500 B ring, 400 x 80 kbit/s of voice at
    level 1 policed at 100 Mbit/s / 64 kB, video at level 2, 20 % = 200 Mbit/s for critical, 10 % each for
    bulk and class-default, critical's AF31:AF32:AF33 mix 0.6:0.3:0.1."""
    port = port_of(load(EDGE))
    assert port.rate == 1e9 and port.Q_t == 128 and port.unit == 1500.0
    v, video, crit, bulk, default = port.classes
    assert (v.priority, v.offered, v.police.cir, v.police.cbs) == (1, 400 * 80e3, 1e8, 64e3)
    assert v.streams[0].count == 400 and v.streams[0].kind == "cbr" and v.streams[0].phase is None
    assert video.priority == 2 and video.streams[0].kind == "poisson" and video.mean_size == 1200.0
    assert (crit.weight, bulk.weight, default.weight) == (2e8, 1e8, 1e8)
    assert crit.precedences == ("AF31", "AF32", "AF33") and crit.mix == (0.6, 0.3, 0.1)
    assert crit.dropper.profile().min_th == (32.0, 24.0, 16.0) and crit.dropper.alpha == 2.0 ** -9
    assert bulk.saturated and default.saturated and default.precedences == ("DF",)
    assert not default.implicit


def test_class_default_exists_when_not_declared_and_gets_the_unreserved_rest():
    """Routers always have class-default: without a declaration it is added, with the link less the priority
    reservations and the declared bandwidths as its weight, and no traffic."""
    raw = {"name": "p", "system": "port", "link": {"rate": "10 Mbit/s"},
           "classes": [{"name": "voice", "dscp": ["EF"], "priority": 1, "police": {"cir": "2 Mbit/s", "cbs": "4 kB"},
                        "traffic": {"rate": "1 Mbit/s", "size": "200 B", "arrivals": "cbr"}},
                       {"name": "data", "dscp": ["AF11"], "bandwidth": "3 Mbit/s",
                        "traffic": {"rate": "2 Mbit/s", "size": "1000 B"}}]}
    port = port_of(build(raw))
    d = port.cls("class-default")
    assert d.implicit and not d.has_traffic and d.weight == pytest.approx(10e6 - 2e6 - 3e6)


@pytest.mark.parametrize("form,value,expected", [
    ("rate", "3 Mbit/s", 3e6), ("percent", "30 %", 0.3 * 10e6), ("remaining", "remaining 50 %", 0.5 * (10e6 - 2e6))])
def test_bandwidth_forms(form, value, expected):
    """A rate is a weight in bit/s; 'N %' is of the link; 'remaining N %' is of the link less the priority
    classes' rates (a policed class reserves its CIR)."""
    assert parse_bandwidth(value)[0] == form
    raw = {"name": "p", "system": "port", "link": {"rate": "10 Mbit/s"},
           "classes": [{"name": "voice", "dscp": ["EF"], "priority": 1, "police": {"cir": "2 Mbit/s", "cbs": "4 kB"},
                        "traffic": {"rate": "1 Mbit/s", "size": "200 B", "arrivals": "cbr"}},
                       {"name": "data", "dscp": ["AF11"], "bandwidth": value}]}
    assert port_of(build(raw)).cls("data").weight == pytest.approx(expected)


def test_policer_actions_and_meters():
    """drop / transmit / set-dscp X, as a string or a mapping; the meter is two-colour, srTCM (ebs) or trTCM
    (pir, pbs); violate defaults to the exceed action."""
    assert parse_action("drop") == ("drop", None)
    assert parse_action("set-dscp af32") == ("remark", "AF32")
    assert parse_action({"set-dscp": 26}) == ("remark", "AF31")
    raw = yaml.safe_load(ISSUE_YAML)
    raw["classes"][2]["police"] = {"cir": "100 Mbit/s", "cbs": "10 kB", "pir": "200 Mbit/s", "pbs": "20 kB",
                                   "exceed": "set-dscp AF32"}
    p = port_of(build(raw)).cls("critical").police
    assert p.kind == "trtcm" and p.actions == ("transmit", "remark", "remark") and p.remark == (-1, 1, 1)
    raw["classes"][2]["police"]["violate"] = "drop"
    p = port_of(build(raw)).cls("critical").police
    assert p.actions == ("transmit", "remark", "drop") and p.remark == (-1, 1, -1)


def _refused(mutate, field: str, words: str):
    raw = yaml.safe_load(ISSUE_YAML)
    mutate(raw)
    with pytest.raises(ScenarioError) as e:
        build(raw)
    assert e.value.field == field, (e.value.field, e.value.problem)
    assert words in e.value.problem, e.value.problem


def _cls(raw, name):
    return next(c for c in raw["classes"] if c["name"] == name)


@pytest.mark.parametrize("mutate,field,words", [
    (lambda r: _cls(r, "video").__setitem__("dscp", ["EF"]), "classes.video.dscp",
     "matched by classes voice and video"),
    (lambda r: _cls(r, "video").__setitem__("bandwidth", "10 %"), "classes.video.bandwidth", "not both"),
    (lambda r: _cls(r, "bulk").__setitem__("bandwidth", "100 Mbit/s"), "classes", "mix the forms"),
    (lambda r: _cls(r, "critical").__setitem__("bandwidth", "90 %"), "classes", "at most 100 %"),
    (lambda r: (_cls(r, "class-default").__setitem__("priority", 3), _cls(r, "class-default").pop("bandwidth")),
     "classes.class-default.priority", "weighted"),
    (lambda r: _cls(r, "critical")["dropper"]["thresholds"].pop("AF33"), "classes.critical.dropper.thresholds",
     "AF33 missing"),
    (lambda r: _cls(r, "critical")["traffic"].__setitem__("mix", [0.5, 0.5]), "classes.critical.traffic.mix",
     "3 numbers"),
    (lambda r: _cls(r, "video")["police"].__setitem__("exceed", "set-dscp AF42"), "classes.video.police.exceed",
     "one of the class's"),
    (lambda r: _cls(r, "video")["police"].__setitem__("violate", "drop"), "classes.video.police.violate",
     "never violates"),
    (lambda r: _cls(r, "video").__setitem__("traffic", {"saturated": True, "size": "1200 B"}),
     "classes.video.traffic.saturated", "starve"),
    # a conditional policer need not meter on a port that may be idle (no saturated class): no cap is proved
    (lambda r: (_cls(r, "video")["police"].__setitem__("conditional", True),
                _cls(r, "video")["traffic"].__setitem__("rate", "990 Mbit/s"),
                *(_cls(r, n).__setitem__("traffic", {"rate": "1 Mbit/s", "size": "1500 B"})
                  for n in ("bulk", "class-default"))), "classes.video.traffic", "unstable"),
    (lambda r: _cls(r, "voice").__setitem__("name", "voice 1"), "classes", "it heads metric names"),
    (lambda r: _cls(r, "voice").__setitem__("name", "voice..1"), "classes", "'..'"),
    (lambda r: _cls(r, "voice").__setitem__("name", "voice|1"), "classes", "'|'"),
    (lambda r: _cls(r, "critical").__setitem__("precedences", ["AF31", "AF32", "AF33", "CS3"]),
     "classes.critical.precedences", "one to 3 drop precedences"),
    (lambda r: _cls(r, "critical").__setitem__("precedences", ["AF31", "AF41"]), "classes.critical.precedences",
     "not one of the DSCPs the class matches"),
    (lambda r: _cls(r, "critical").__setitem__("dscp", ["AF31", "AF32", "AF31"]), "classes.critical.dscp",
     "listed twice"),
    (lambda r: _cls(r, "class-default").__setitem__("precedences", ["AF31"]), "classes.class-default.precedences",
     "a DSCP class critical matches"),
    (lambda r: r["slos"].append({"metric": "voice.rtp.delay.max", "max": "1 ms"}), "slos[4].metric",
     "no class 'voice.rtp'"),
])
def test_bad_ports_are_refused_naming_the_field(mutate, field, words):
    _refused(mutate, field, words)


def test_a_wrong_dscp_and_an_unknown_field_are_refused():
    raw = yaml.safe_load(ISSUE_YAML)
    raw["classes"][0]["dscp"] = ["XY9"]
    with pytest.raises(ScenarioError, match="not a DSCP") as e:
        build(raw)
    assert e.value.field.startswith("classes[0].dscp")
    raw = yaml.safe_load(ISSUE_YAML)
    raw["classes"][0]["priorty"] = 1
    with pytest.raises(ScenarioError, match="unknown field") as e:
        build(raw)
    assert e.value.field == "classes[0].priorty"


def test_reserved_importer_fields_load_and_change_no_number():
    """provenance, assumed platform defaults, not-modelled notes and classification by qos-group are accepted
    (for configuration importers) and leave the port as it was; a parent shaper changes the bounds
    (tests/systems/port/test_shaper.py) and is refused by model checking, which has no state for its bucket."""
    from qosbound.progress import QUIET
    from qosbound.systems import get_system

    raw = yaml.safe_load(ISSUE_YAML)
    plain = port_of(build(copy.deepcopy(raw)))
    raw["provenance"] = {"classes.voice.police.cir": "edge.cfg:42"}
    raw["assumed"] = {"txq.units": "IOS-XE default tx-ring-limit"}
    raw["not_modelled"] = [{"item": "set cos 5", "where": "edge.cfg:44", "effect": "marking only"}]
    raw["classes"][1]["match"] = {"qos_group": [3], "exp": [4]}
    assert port_of(build(raw)) == plain
    raw["shaper"] = {"rate": "1 Gbit/s", "bc": "500 kB", "tc": "4 ms"}
    with pytest.raises(ScenarioError, match="does not model a parent shaper") as e:
        get_system("port").evaluate(build(raw), ["model-checked"], QUIET)
    assert e.value.field == "shaper"


def test_a_bad_port_on_the_command_line_is_one_line_and_exit_2(tmp_path):
    raw = yaml.safe_load(ISSUE_YAML)
    raw["classes"][1]["dscp"] = ["EF"]
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(raw))
    proc = subprocess.run([sys.executable, "-m", "qosbound", "plan", str(f), "--methods", "closed-form"],
                          capture_output=True, text=True, cwd=str(ROOT))
    assert proc.returncode == 2
    line = one_line(proc.stderr)
    assert "field 'classes.video.dscp'" in line and "bad.yaml" in line


def test_a_class_matches_any_number_of_dscps_and_tells_apart_at_most_three():
    """An EXP value or an IP precedence stands for eight DSCPs: a class may match them all; its drop
    precedences (what droppers, markers and 'mix' tell apart) default to its first AF class's codepoints, or
    its first DSCP, and may be given explicitly."""
    raw = yaml.safe_load(ISSUE_YAML)
    _cls(raw, "voice")["dscp"] = ["CS5", 41, 42, 43, 44, 45, "EF", 47]
    _cls(raw, "critical")["dscp"] = ["CS3", 25, "AF31", 27, "AF32", 29, "AF33", 31]
    scn = build(raw)
    port = port_of(scn)
    assert port.cls("voice").precedences == ("CS5",)
    assert port.cls("critical").precedences == ("AF31", "AF32", "AF33")
    _cls(raw, "voice")["precedences"] = ["EF"]
    assert port_of(build(raw)).cls("voice").precedences == ("EF",)


def test_wred_thresholds_above_the_queue_limit_are_accepted_and_the_limit_drops_first():
    """IOS accepts a max_th above the queue limit; so does the port: the queue limit drops first (the average
    never exceeds what the queue holds), so such a profile never reaches 1/P_d before the queue is full."""
    raw = yaml.safe_load(ISSUE_YAML)
    _cls(raw, "critical")["queue_limit"] = 32
    scn = build(raw)
    assert scn.classes[2].dropper.thresholds["AF31"].max_th == 64
    res = {r.metric: r for r in get_system("port").evaluate(scn, ["closed-form"], QUIET)}
    assert 0 <= res["critical.drop.AF31"].value <= 1


def test_class_names_with_the_characters_routers_allow_head_their_metrics():
    """Dots, dashes, colons, slashes and digits in class names: the metrics are named with them and the SLOs on
    them are read back by the port's own names."""
    raw = yaml.safe_load(ISSUE_YAML)
    _cls(raw, "voice")["name"] = "VOICE.RTP"
    _cls(raw, "critical")["name"] = "AF3:critical/1"
    raw["slos"] = [{"metric": "VOICE.RTP.delay.max", "max": "5 ms"}, {"metric": "AF3:critical/1.drop.AF31", "max": 0.1}]
    scn = build(raw)
    names = get_system("port").metric_names(scn)
    assert "VOICE.RTP.delay.p99" in names and "AF3:critical/1.drop.AF31" in names
    res = get_system("port").evaluate(scn, ["closed-form"], QUIET)
    assert {r.metric for r in res} >= {"VOICE.RTP.delay.max", "AF3:critical/1.delay.max"}
