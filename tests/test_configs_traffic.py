"""The traffic file: offered traffic per interface + class, class, or DSCP; interface rates; the defaults."""

from __future__ import annotations

import pytest

from qosbound.configs import load_configs
from qosbound.configs.traffic import load_traffic
from qosbound.errors import ConfigError
from tests.configs_helpers import CONFIG_EXAMPLES, MALFORMED, cls

WAN = CONFIG_EXAMPLES / "wan-edge-iosxe.cfg"


def traffic(tmp_path, text):
    p = tmp_path / "t.yaml"
    p.write_text(text)
    return p


def test_the_most_specific_entry_wins_and_its_line_is_the_provenance(tmp_path):
    t = traffic(tmp_path, "dscp:\n  EF: {rate: 1 Mbit/s, size: 200 B, arrivals: poisson}\n"
                          "  AF41: {rate: 50 Mbit/s, size: 1200 B, arrivals: poisson}\n"
                          "classes:\n  VOICE: {rate: 2 Mbit/s, size: 200 B, arrivals: poisson}\n"
                          "interfaces:\n  wan-edge-01:GigabitEthernet0/0/2:\n    classes:\n"
                          "      VOICE: {calls: 100, call: {rate: 80 kbit/s, size: 200 B, arrivals: cbr}}\n")
    [p] = load_configs([WAN], t)
    assert cls(p, "VOICE")["traffic"]["calls"] == 100
    assert p.provenance["classes.VOICE.traffic"] == f"{t}:9"
    assert cls(p, "VIDEO")["traffic"]["rate"] == "50 Mbit/s" and p.provenance["classes.VIDEO.traffic"] == f"{t}:3"
    assert cls(p, "BULK")["traffic"]["saturated"] is True


def test_defaults_priority_at_its_policer_rate_bandwidth_saturated():
    [p] = load_configs([WAN])
    assert cls(p, "VOICE")["traffic"] == {"rate": "200 Mbit/s", "size": "1500 B", "arrivals": "poisson"}
    assert cls(p, "class-default")["traffic"] == {"saturated": True, "sizes": [{"size": "1500 B", "p": 1}]}
    assert any("no traffic given for" in n for n in p.not_modelled)


def test_an_unpoliced_priority_class_needs_traffic(tmp_path):
    with pytest.raises(ConfigError, match="unpoliced-priority.cfg:6.*strict priority without a policer"):
        load_configs([MALFORMED / "unpoliced-priority.cfg"])
    t = traffic(tmp_path, "classes:\n  VOICE: {calls: 10, call: {rate: 80 kbit/s, size: 200 B, arrivals: cbr}}\n")
    [p] = load_configs([MALFORMED / "unpoliced-priority.cfg"], t)
    assert cls(p, "VOICE")["traffic"]["calls"] == 10


def test_the_interface_rate_comes_from_the_traffic_file(tmp_path):
    with pytest.raises(ConfigError, match="Tunnel100"):
        load_configs([MALFORMED / "unknown-rate.cfg"])
    t = traffic(tmp_path, "interfaces:\n  r-tunnel:Tunnel100: {rate: 20 Mbit/s}\n")
    [p] = load_configs([MALFORMED / "unknown-rate.cfg"], t)
    assert p.scenario["link"] == {"rate": "20 Mbit/s"} and p.provenance["link.rate"] == f"{t}:2"
    assert cls(p, "VOICE")["police"]["cir"] == "2 Mbit/s"


@pytest.mark.parametrize("text, words", [
    ("- a\n- b\n", "expected a mapping"), ("flows: {}\n", "t.yaml:1: field 'flows': unknown section"),
    ("classes:\n  A: 5\n", "t.yaml:2: field 'classes.A'"), ("dscp:\n  XX: {rate: 1}\n", "'XX' is not a DSCP"),
    ("interfaces:\n  eth0: {rate: fast}\n", "t.yaml:2: field 'interfaces.eth0.rate'"),
    ("interfaces:\n  eth0: {rate: 0 bit/s}\n", "must be positive"), ("a: [\n", "not valid YAML"),
])
def test_malformed_traffic_files_name_the_file_line_and_field(tmp_path, text, words):
    with pytest.raises(ConfigError) as e:
        load_traffic(traffic(tmp_path, text))
    assert words in str(e.value), str(e.value)


def test_two_dscps_of_one_class_must_be_given_by_class_name(tmp_path):
    t = traffic(tmp_path, "dscp:\n  AF41: {rate: 1 Mbit/s}\n  AF42: {rate: 2 Mbit/s}\n")
    with pytest.raises(ConfigError, match="AF41, AF42 of the traffic file all fall into class VIDEO"):
        load_configs([WAN], t)
