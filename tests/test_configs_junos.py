"""Junos class-of-service: both forms give the same statements and ports; schedulers, classifiers and drop
profiles mean what the port says."""

from __future__ import annotations

import pytest

from qosbound.configs import load_configs
from qosbound.configs.junos_semantics import junos_rate
from qosbound.configs.junos_tree import JunosSyntaxError, parse_curly, parse_set
from qosbound.errors import ConfigError
from tests.configs_helpers import CONFIG_EXAMPLES, MALFORMED, cls, ports

PE = CONFIG_EXAMPLES / "pe-junos.conf"


def test_curly_and_set_forms_are_the_same_statements():
    curly = parse_curly(PE.read_text())
    sets = parse_set((CONFIG_EXAMPLES / "pe-junos.set").read_text())
    assert [s.path for s in curly] == [s.path for s in sets]
    assert all(s.line > 0 for s in curly)


def test_curly_and_set_forms_give_the_same_ports():
    a = load_configs([PE])
    b = load_configs([CONFIG_EXAMPLES / "pe-junos.set"])
    assert [p.name for p in a] == [p.name for p in b] == ["pe2-par_ge-0-0-3_out", "pe2-par_xe-0-1-0_out"]
    for x, y in zip(a, b):
        assert {k: v for k, v in x.scenario.items() if k != "description"} == \
            {k: v for k, v in y.scenario.items() if k != "description"}


def test_lists_comments_and_inactive_parts():
    st = parse_curly("/* c */\nclass-of-service {\n  # c\n  classifiers { dscp X { forwarding-class ef {\n"
                     "    loss-priority low code-points [ ef cs5 ]; } } }\n"
                     "  inactive: schedulers { s { priority low; } }\n}\n")
    assert [s.path[-1] for s in st if not s.inactive] == ["ef", "cs5"]
    assert [s.line for s in st] == [5, 5, 6] and st[-1].inactive


@pytest.mark.parametrize("text", ["class-of-service {\n schedulers {\n", "a { b; }\n}\n", "a { b }\n",
                                  "a [ b c ;\n"])
def test_malformed_curly_text_is_refused_with_its_line(text):
    with pytest.raises(JunosSyntaxError):
        parse_curly(text)


def test_truncated_file_is_an_error_naming_the_file():
    with pytest.raises(ConfigError, match="truncated-junos.conf:8: 3 block"):
        load_configs([MALFORMED / "truncated-junos.conf"])


def test_rates():
    assert junos_rate("200m") == 2e8 and junos_rate("10k") == 1e4 and junos_rate("1g") == 1e9
    assert junos_rate("500") == 500 and junos_rate("fast") is None


def test_pe_edge_port_shaper_priorities_and_remainder():
    edge = load_configs([PE])[0]
    assert edge.scenario["link"] == {"rate": "200 Mbit/s"} and edge.shaper["cir"] == "200 Mbit/s"
    ef = cls(edge, "expedited-forwarding")
    assert ef["priority"] == 1 and ef["police"]["cir"] == "40 Mbit/s" and ef["police"]["conditional"] is False
    assert cls(edge, "assured-forwarding")["bandwidth"] == "40 %"
    # best-effort takes unclassified packets: it is class-default, with the remainder 100 - 20 - 40 - 5 = 35 %
    assert cls(edge, "class-default")["bandwidth"] == "35 %"
    assert [c["name"] for c in edge.scenario["classes"]][-1] == "class-default"


def test_each_egress_port_is_classified_by_the_other_interfaces_classifiers():
    """Traffic leaving the core arrives from the customer (DSCP classifier); traffic leaving to the customer
    arrives from the core (EXP classifier: EXP n stands for the DSCPs of precedence n, an assumed default)."""
    edge, core = load_configs([PE])
    assert cls(core, "expedited-forwarding")["dscp"] == ["EF"]
    assert cls(core, "assured-forwarding")["dscp"] == ["AF31", "AF32", "AF41", "AF42"]
    assert "EF" in cls(edge, "expedited-forwarding")["dscp"] and "CS5" in cls(edge, "expedited-forwarding")["dscp"]


def test_drop_profiles_become_wred_thresholds_by_loss_priority():
    _, core = load_configs([PE])
    af = cls(core, "assured-forwarding")
    ql = af["queue_limit"]
    th = af["dropper"]["thresholds"]
    # af-low: 60 % -> 100 % of the queue, to 100 %; af-high: 30 % -> 70 %, to 100 % (exact straight ramps)
    assert th["AF31"] == {"min_th": int(ql * 0.6), "max_th": ql, "P_d": 1}
    assert th["AF32"] == {"min_th": int(ql * 0.3), "max_th": int(ql * 0.7), "P_d": 1}
    assert not any("drop-profiles af-" in n for n in core.not_modelled)


def test_a_profile_that_is_not_one_ramp_is_approximated_and_says_so(tmp_path):
    [p] = ports(tmp_path, JUNOS_MIN.format(profile="fill-level 50 drop-probability 0;\n"
                                                   "fill-level 80 drop-probability 40;"), "r.conf")
    th = cls(p, "class-default")["dropper"]["thresholds"]["DF"]
    assert th["P_d"] == 2.5
    assert any("approximated: the profile is not one straight ramp" in n for n in p.not_modelled)


def test_undefined_scheduler_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="scheduler NOPE is not defined"):
        ports(tmp_path, "class-of-service {\n interfaces { ge-0/0/0 { scheduler-map M; } }\n"
                        " scheduler-maps { M { forwarding-class best-effort scheduler NOPE; } }\n}\n", "r.conf")


def test_transmit_rates_over_100_percent_are_an_error(tmp_path):
    with pytest.raises(ConfigError, match="transmit rates add up to 120 %"):
        ports(tmp_path, "class-of-service {\n interfaces { ge-0/0/0 { scheduler-map M; } }\n"
                        " scheduler-maps { M { forwarding-class best-effort scheduler A;\n"
                        "   forwarding-class assured-forwarding scheduler B; } }\n"
                        " schedulers { A { transmit-rate percent 60; } B { transmit-rate percent 60; } }\n}\n", "r.conf")


JUNOS_MIN = """system {{ host-name j1; }}
class-of-service {{
    interfaces {{ ge-0/0/0 {{ scheduler-map M; }} }}
    scheduler-maps {{ M {{ forwarding-class best-effort scheduler BE; }} }}
    schedulers {{ BE {{ transmit-rate percent 100; buffer-size percent 100;
                      drop-profile-map loss-priority any protocol any drop-profile DP; }} }}
    drop-profiles {{ DP {{ {profile} }} }}
}}
"""
