"""The queueing meaning of Junos class-of-service configurations (qosbound.configs.junos_semantics): rates,
ports, classifiers, schedulers, drop profiles and their errors."""

from __future__ import annotations

import pytest

from qosbound.configs import load_configs
from qosbound.configs.junos_semantics import junos_rate
from qosbound.errors import ConfigError
from tests.configs_helpers import CONFIG_EXAMPLES, FIELD, MALFORMED, cls, ports


PE = CONFIG_EXAMPLES / "pe-junos.conf"


def test_curly_and_set_forms_give_the_same_ports():
    a = load_configs([PE])
    b = load_configs([CONFIG_EXAMPLES / "pe-junos.set"])
    assert [p.name for p in a] == [p.name for p in b] == ["pe2-par_ge-0-0-3_out", "pe2-par_xe-0-1-0_out"]
    for x, y in zip(a, b):
        assert {k: v for k, v in x.scenario.items() if k != "description"} == \
            {k: v for k, v in y.scenario.items() if k != "description"}


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


# ---------------------------------------------------------------------------------------------- field configurations

def mx_pe_ports() -> dict:
    """The ports of the MX PE configuration whose core port (strict-high voice without rate-limit) is refused."""
    return {p.interface: p for p in load_configs([FIELD / "field-mx-pe.conf"], None, strict=False) if not p.refusals}


def test_buffer_size_remainder_is_the_delay_buffer_the_other_schedulers_leave():
    """MX PE unit at 300 Mbit/s: voice 10 ms temporal at 60 Mbit/s (2 %), video 20 %, business 30 %, NC 5 %:
    best-effort's `buffer-size remainder` is the 43 % left of 100 ms at 300 Mbit/s -- not a 10 % fallback."""
    p = mx_pe_ports()["ge-0/0/0.100"]
    delay_buffer = 0.100 * 300e6 / 8
    left = delay_buffer * (1 - 0.02 - 0.20 - 0.30 - 0.05)
    assert cls(p, "class-default")["queue_limit"] == int(left / 1500)
    assert cls(p, "FC-VIDEO")["queue_limit"] == int(0.20 * delay_buffer / 1500)


def test_transmit_rate_remainder_without_buffer_size_takes_the_remainder_share_of_the_buffer():
    """`transmit-rate remainder` and no buffer-size: the buffer follows the 35 % share the remainder gets."""
    [p] = load_configs([FIELD / "field-junos-import-default.conf"], None)
    assert cls(p, "class-default")["bandwidth"] == "35 %"
    assert cls(p, "class-default")["queue_limit"] == int(0.35 * 0.100 * 1e9 / 8 / 1500)


def test_classifier_import_default_sends_unnamed_code_points_to_the_default_classes_queues():
    """`import default` in a classifier that names only EF: AF1x reach the class on queue 2 (the default
    assured-forwarding queue), CS6/CS7 the class on queue 3 -- before, they silently fell into best-effort."""
    [p] = load_configs([FIELD / "field-junos-import-default.conf"], None)
    assert cls(p, "VOICE")["dscp"] == ["EF"]
    assert cls(p, "DATA")["dscp"] == ["AF11", "AF12", "AF13"]
    assert cls(p, "NC")["dscp"] == ["CS6", "CS7"]
    assert not any("import default" in n and "ignored" in n for n in p.not_modelled)


def test_traffic_control_profile_statements_not_modelled_are_listed():
    assert any("guaranteed-rate 300m" in n and "not modelled" in n for n in mx_pe_ports()["ge-0/0/0.100"].not_modelled)


def test_a_scheduler_percentage_that_is_not_a_number_is_an_error_naming_the_line(tmp_path):
    with pytest.raises(ConfigError, match=r"r1.set:1: .*expected a number, got 'lots'"):
        ports(tmp_path, "set class-of-service schedulers S transmit-rate percent lots\n"
                        "set class-of-service interfaces ge-0/0/0 scheduler-map M\n"
                        "set class-of-service scheduler-maps M forwarding-class best-effort scheduler S\n", "r1.set")


def test_a_unit_is_shaped_by_its_physical_interface_shaping_rate():
    """SRX branch (set commands): `interfaces ge-0/0/0 shaping-rate 50m` and the scheduler map on unit 0. The
    unit's queues drain at 50 Mbit/s: percentages are of it (video's 25 % is 12.5 Mbit/s, not 250 Mbit/s of the
    1 Gbit/s port, as before the physical interface's shaper was looked up)."""
    ps = {p.interface: p for p in load_configs([FIELD / "field-srx-branch.set"], None)}
    p = ps["ge-0/0/0.0"]
    assert p.scenario["link"] == {"rate": "50 Mbit/s"}
    assert p.shaper["cir"] == "50 Mbit/s" and p.shaper["interface_rate"] == "1 Gbit/s"
    assert cls(p, "video")["police"]["cir"] == "12.5 Mbit/s"
    assert ps["ge-0/0/2"].scenario["link"] == {"rate": "100 Mbit/s"} and ps["ge-0/0/2"].shaper is None


def test_a_physical_shaper_shared_by_several_units_is_noted(tmp_path):
    text = ("set class-of-service interfaces ge-0/0/0 shaping-rate 20m\n"
            "set class-of-service interfaces ge-0/0/0 unit 0 scheduler-map M\n"
            "set class-of-service interfaces ge-0/0/0 unit 1 scheduler-map M\n"
            "set class-of-service scheduler-maps M forwarding-class best-effort scheduler S\n"
            "set class-of-service schedulers S transmit-rate percent 100\n")
    ps = ports(tmp_path, text, "r1.set")
    assert all(p.scenario["link"] == {"rate": "20 Mbit/s"} for p in ps)
    assert all(any("shared with ge-0/0/0." in n for n in p.not_modelled) for p in ps)


def test_transmit_rate_options_in_braces_are_read_with_the_rate():
    """`transmit-rate { percent 20; rate-limit; }` (rate-limit a statement of its own) was refused as 'cannot read
    the rate rate-limit'; it is the strict-high queue's policer at 20 % of 100 Mbit/s. `buffer-size { remainder; }`
    takes what the 5 ms temporal buffer of the priority queue leaves of the 100 ms delay buffer."""
    [p] = load_configs([FIELD / "field-junos-braces.conf"])
    assert cls(p, "ef")["police"] == {"cir": "20 Mbit/s", "cbs": "25000 B", "conditional": False}
    assert cls(p, "ef")["queue_limit"] == int(0.005 * 20e6 / 8 / 1500)
    assert cls(p, "class-default")["queue_limit"] == int((0.100 * 100e6 / 8 - 0.005 * 20e6 / 8) / 1500)


def test_user_code_point_aliases_name_dscps_in_classifiers(tmp_path):
    """`code-point-aliases dscp my-voice 101110` then `code-points my-voice`: EF (was an error, 'not a dscp code
    point'); bit strings are read as they are."""
    text = ("set class-of-service code-point-aliases dscp my-voice 101110\n"
            "set class-of-service classifiers dscp C forwarding-class expedited-forwarding loss-priority low "
            "code-points [ my-voice 100010 ]\n"
            "set class-of-service interfaces ge-0/0/1 unit 0 classifiers dscp C\n"
            "set class-of-service interfaces ge-0/0/0 scheduler-map M\n"
            "set class-of-service scheduler-maps M forwarding-class expedited-forwarding scheduler S-EF\n"
            "set class-of-service scheduler-maps M forwarding-class best-effort scheduler S-BE\n"
            "set class-of-service schedulers S-EF transmit-rate percent 30\n"
            "set class-of-service schedulers S-BE transmit-rate remainder\n")
    [p] = ports(tmp_path, text, "r1.set")
    assert cls(p, "expedited-forwarding")["dscp"] == ["AF41", "EF"]
