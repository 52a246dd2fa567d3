"""OpenConfig QoS JSON: classifiers to queues, strict and weighted schedulers, policers, WRED profiles."""

from __future__ import annotations

import json

import pytest

from qosbound.configs import load_configs
from qosbound.configs.json_lines import JSONLineError, loads_with_lines
from qosbound.errors import ConfigError
from tests.configs_helpers import CONFIG_EXAMPLES, FIELD, MALFORMED, cls, ports

LEAF = CONFIG_EXAMPLES / "leaf-openconfig.json"


def test_leaf_uplink_classes():
    [p] = load_configs([LEAF])
    assert p.interface == "Ethernet1/49" and p.scenario["link"] == {"rate": "100 Gbit/s"}
    names = [c["name"] for c in p.scenario["classes"]]
    assert names == ["q-nc", "q-rt", "q-storage", "q-data", "class-default"]
    assert cls(p, "q-nc")["priority"] == 1 and cls(p, "q-rt")["priority"] == 2
    assert cls(p, "q-rt")["police"]["cir"] == "20 Gbit/s"  # cir-pct 20 of 100 Gbit/s
    assert cls(p, "q-rt")["dscp"] == ["CS5", "EF"]
    assert cls(p, "q-storage")["bandwidth"] == "remaining 50 %" and cls(p, "class-default")["bandwidth"] == \
        "remaining 20 %"
    assert p.provenance["link.rate"].endswith("leaf-openconfig.json:7")


def test_wred_thresholds_in_bytes_become_full_size_packets_and_the_queue_holds_them():
    [p] = load_configs([LEAF])
    st = cls(p, "q-storage")
    assert st["dropper"]["thresholds"]["AF31"] == {"min_th": 200, "max_th": 600, "P_d": 20}
    assert st["queue_limit"] == 600  # the model has no queue length: at least the WRED max
    assert any("ECN" in n for n in p.not_modelled)


def test_the_queue_that_takes_dscp_0_is_class_default():
    [p] = load_configs([LEAF])
    assert "dscp" not in cls(p, "class-default")
    assert any("queue q-be: is the port's class-default" in n for n in p.not_modelled)


def test_unknown_rate_and_undefined_policy_are_errors(tmp_path):
    doc = json.loads(LEAF.read_text())
    del doc["openconfig-interfaces:interfaces"]
    with pytest.raises(ConfigError, match="rate of Ethernet1/49 is unknown"):
        ports(tmp_path, json.dumps(doc, indent=1), "leaf.json")
    doc = json.loads(LEAF.read_text())
    doc["openconfig-qos:qos"]["interfaces"]["interface"][1]["output"]["scheduler-policy"]["config"]["name"] = "nope"
    with pytest.raises(ConfigError, match="scheduler policy nope is not defined"):
        ports(tmp_path, json.dumps(doc, indent=1), "leaf.json")


def test_truncated_json_names_its_line():
    with pytest.raises(ConfigError, match=r"truncated.json:1: malformed JSON.*truncated\?"):
        load_configs([MALFORMED / "truncated.json"])


def test_json_with_lines_reads_what_json_reads():
    text = LEAF.read_text()
    assert loads_with_lines(text) == json.loads(text)
    doc = loads_with_lines('{\n "a": [\n  {"b": 1}\n ]\n}')
    assert doc.line == 1 and doc.key_lines["a"] == 2 and doc["a"].line == 2 and doc["a"][0].line == 3
    assert loads_with_lines("[1]\n[2]") == [[1], [2]]
    for bad in ('{"a": 1,}', '{"a" 1}', "[1 2]", '{"a": tru}', ""):
        with pytest.raises(JSONLineError):
            loads_with_lines(bad)


def test_a_re_marking_policer_on_a_queue_without_wred_is_transmit(tmp_path):
    """The data-centre WAN policy with voice's exceed action set to DSCP 10: the packet stays in q-voice (no
    WRED), so AF11 changes nothing on this port; the import writes transmit with a note (before, the port system
    refused the written scenario and verify exited 2)."""
    text = (FIELD / "field-dc-wan-openconfig.json").read_text().replace('"set-dscp": 46', '"set-dscp": 10')
    ps = {p.interface: p for p in ports(tmp_path, text, "oc.json")}
    pol = cls(ps["et-0/0/0"], "q-voice")["police"]
    assert pol["exceed"] == "transmit" and pol["violate"] == "drop" and pol["pir"] == "1.5 Gbit/s"
    assert any("set-dscp AF11" in n and "marking only on this port" in n for n in ps["et-0/0/0"].not_modelled)


def test_the_field_openconfig_policy_reads_strict_queues_weights_and_wred_in_bytes_and_percent():
    ps = {p.interface: p for p in load_configs([FIELD / "field-dc-wan-openconfig.json"])}
    assert set(ps) == {"et-0/0/0", "et-0/0/1"}  # et-0/0/2 only classifies (input)
    p = ps["et-0/0/0"]
    assert cls(p, "q-video")["priority"] == 2 and cls(p, "q-video")["police"]["cir"] == "2.5 Gbit/s"  # cir-pct 25
    assert cls(p, "q-af2")["dropper"]["thresholds"]["AF21"] == {"min_th": 100, "max_th": 300, "P_d": 10}
    assert cls(p, "q-af1")["dropper"]["thresholds"]["AF11"]["min_th"] == int(0.40 * 64)
    assert cls(p, "q-nc")["bandwidth"] == "remaining 5 %" and cls(p, "class-default")["bandwidth"] == "remaining 40 %"
