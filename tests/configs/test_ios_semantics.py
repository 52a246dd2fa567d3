"""The queueing meaning of Cisco MQC configurations (qosbound.configs.ios_semantics, ios_classify, ios_actions):
ports, classes, policers, droppers and their errors, from snippets and the shipped examples."""

from __future__ import annotations

import pytest

from qosbound import scenario
from qosbound.configs import load_configs
from qosbound.configs.writer import scenario_yaml
from qosbound.errors import ConfigError, ConfigRefused
from tests.configs_helpers import CONFIG_EXAMPLES, FIELD, MALFORMED, cls, ports


HEAD = "version 17.6\nhostname r1\n"


def test_branch_child_percentages_are_of_the_parent_shaper():
    """shape average 100 Mbit/s over the child: link.rate is the shaper's CIR, the priority policers' rates are
    percentages of it, and the shaper is a rate-latency server with Tc = Bc / CIR (25 ms: IOS default)."""
    [p] = ports_of("branch-iosxe.cfg")
    assert p.scenario["link"] == {"rate": "100 Mbit/s"}
    assert cls(p, "VOICE")["police"]["cir"] == "10 Mbit/s" and cls(p, "VOICE")["police"]["conditional"] is False
    assert cls(p, "VOICE")["police"]["cbs"] == "25000 B"  # bc 20 ms at 10 Mbit/s
    assert p.shaper["latency"] == "25 ms" and p.shaper["interface_rate"] == "1 Gbit/s"
    assert "assumed" in p.shaper["provenance"]["bc"]
    assert [c["name"] for c in p.scenario["classes"]] == ["VOICE", "VIDEO", "SIGNALLING", "CRITICAL-DATA", "BULK",
                                                          "SCAVENGER", "class-default"]
    assert cls(p, "VIDEO")["priority"] == 2 and cls(p, "VIDEO")["dscp"] == ["CS4", "AF41", "AF42"]


def test_default_wred_thresholds_come_from_the_table_and_are_labelled():
    [p] = ports_of("branch-iosxe.cfg")
    bulk = cls(p, "BULK")["dropper"]
    assert bulk["thresholds"]["AF13"] == {"min_th": 24, "max_th": 40, "P_d": 10}
    labelled = [a for a in p.assumptions if a["field"] == "classes.BULK.dropper.thresholds.AF13.min_th"]
    assert labelled and labelled[0]["default"] == "wred_dscp" and "random-detect dscp" in labelled[0]["citation"]
    crit = cls(p, "CRITICAL-DATA")["dropper"]["thresholds"]
    assert crit["AF22"] == {"min_th": 28, "max_th": 40, "P_d": 10}
    assert p.provenance["classes.CRITICAL-DATA.dropper.thresholds.AF22.min_th"].endswith("branch-iosxe.cfg:47")


def test_priority_with_a_rate_becomes_a_conditional_policer():
    [p] = ports_of("wan-edge-iosxe.cfg")
    v = cls(p, "VOICE")
    assert v["priority"] == 1 and v["police"] == {"cir": "200 Mbit/s", "cbs": "5000000 B", "conditional": True}
    assert "priority_burst_time" in p.provenance["classes.VOICE.police.cbs"]


def test_srtcm_re_marking_is_the_class_policer_with_its_actions_and_the_ring_is_the_configured_one():
    [p] = ports_of("wan-edge-iosxe.cfg")
    assert cls(p, "CRITICAL")["police"] == {"cir": "150 Mbit/s", "cbs": "1875000 B", "ebs": "1875000 B",
                                            "conform": "transmit", "exceed": "set-dscp AF32",
                                            "violate": "set-dscp AF33"}
    assert p.scenario["txq"] == {"units": 128, "unit_size": "packet"}
    assert p.provenance["txq.units"].endswith("wan-edge-iosxe.cfg:60")
    assert cls(p, "CRITICAL")["dropper"]["exponent"] == 10


def test_two_stage_classification_through_qos_group_and_traffic_class():
    """IOS XR: the egress class matching qos-group 5 takes the DSCPs the input policy marks with it."""
    ps = {p.interface: p for p in ports_of("pe-iosxr.cfg")}
    ce = ps["TenGigE0/0/0/4"]
    assert cls(ce, "QG-VOICE")["dscp"] == ["EF"]
    assert cls(ce, "QG-BUSINESS")["dscp"] == ["AF21", "AF31", "AF32"]
    prov = ce.provenance["classes.QG-VOICE.dscp"]
    assert "pe-iosxr.cfg:7" in prov and "pe-iosxr.cfg:41" in prov  # the ingress match and its set qos-group
    assert cls(ce, "QG-BUSINESS")["bandwidth"] == "remaining 75 %" and cls(ce, "class-default")["bandwidth"] == \
        "remaining 25 %"
    core = ps["HundredGigE0/0/0/0"]
    # traffic-class 5 is set for MPLS EXP 5 on the core input and for EF on the customer input
    assert "EF" in cls(core, "TC-VOICE")["dscp"] and "CS5" in cls(core, "TC-VOICE")["dscp"]
    assert any(a["default"] == "exp_from_precedence" for a in core.assumptions)


def test_ios_xr_time_queue_limits_are_converted_and_labelled():
    ps = {p.interface: p for p in ports_of("pe-iosxr.cfg")}
    core = ps["HundredGigE0/0/0/0"]
    # 50 ms at the class's guaranteed service rate (Cisco IOS XR Modular QoS Command Reference, queue-limit):
    # remaining 60 % of the 80 Gbit/s the 20 % priority policer leaves of 100 Gbit/s
    assert cls(core, "TC-BUSINESS")["queue_limit"] == int(0.05 * 0.60 * 80e9 / 8 / 1500)
    assert any("approximated: a byte or time queue limit" in n for n in core.not_modelled)


def test_first_match_takes_overlapping_dscps_for_the_earlier_class(tmp_path):
    [p] = ports(tmp_path, HEAD + "class-map match-any A\n match precedence 5\nclass-map match-any B\n match dscp ef "
                "af41\npolicy-map P\n class A\n  priority percent 10\n class B\n  bandwidth remaining percent 50\n"
                "interface GigabitEthernet1\n service-policy output P\n")
    assert "EF" in cls(p, "A")["dscp"] and cls(p, "B")["dscp"] == ["AF41"]
    assert any("taken by an earlier class" in n for n in p.not_modelled)


def test_output_markings_and_fair_queue_are_listed_not_dropped(tmp_path):
    [p] = ports(tmp_path, HEAD + "class-map match-any A\n match dscp af21\npolicy-map P\n class A\n  bandwidth 1000\n"
                "  set cos 5\n class class-default\n  fair-queue\ninterface GigabitEthernet1\n service-policy output P\n")
    assert any(n.endswith("set cos 5: ignored: marking only (output policy)") for n in p.not_modelled)
    assert any("fair-queue: not modelled" in n for n in p.not_modelled)


def test_unattached_policies_and_input_only_interfaces_are_file_notes():
    r = report_of("wan-edge-iosxe.cfg")
    notes = " ".join(next(iter(r.notes.values())))
    assert "service-policy input LAN-IN" in notes
    r = report_of_file(MALFORMED / "tolerated.cfg")
    assert any("policy-map UNUSED: never attached" in n for n in next(iter(r.notes.values())))


def test_the_interface_bandwidth_statement_is_the_rate_of_a_serial_link():
    r = report_of_file(MALFORMED / "tolerated.cfg")
    [p] = r.ports
    assert p.scenario["link"]["rate"] == "1.536 Mbit/s" and p.scenario["txq"]["units"] == 2
    assert cls(p, "VOICE")["police"]["cbs"] == "25000 B"  # priority 1000 25000: kbit/s and bytes
    assert cls(p, "class-default")["queue_limit"] == 26  # 40000 bytes in 1500 B packets


@pytest.mark.parametrize("name, refused, words", [
    ("undefined-class.cfg", ConfigError, ["undefined-class.cfg:8", "class-map VIDEO is not defined"]),
    ("undefined-policy.cfg", ConfigError, ["undefined-policy.cfg:4", "DOES-NOT-EXIST is not defined"]),
    ("over-100.cfg", ConfigError, ["over-100.cfg:11", "110%", "line 9 (priority percent 40)"]),
    ("deep-hierarchy.cfg", ConfigRefused, ["deep-hierarchy.cfg:11", "third level"]),
    ("unknown-rate.cfg", ConfigError, ["unknown-rate.cfg:8", "Tunnel100", "traffic file"]),
    ("mixed-bandwidth.cfg", ConfigError, ["mixed-bandwidth.cfg:11", "line 9"]),
    ("truncated.cfg", ConfigError, ["truncated.cfg:7", "police cir"]),
])
def test_inconsistent_policies_are_errors_naming_the_lines(name, refused, words):
    with pytest.raises(refused) as e:
        from qosbound.configs import load_configs
        load_configs([MALFORMED / name])
    for w in words:
        assert w in str(e.value), str(e.value)


def ports_of(name):
    from qosbound.configs import load_configs
    return load_configs([CONFIG_EXAMPLES / name])


def report_of(name):
    return report_of_file(CONFIG_EXAMPLES / name)


def report_of_file(path):
    from qosbound.configs import import_configs
    return import_configs([path])


def test_remaining_percentages_above_100_are_an_error_naming_every_line(tmp_path):
    with pytest.raises(ConfigError) as e:
        ports(tmp_path, HEAD + "class-map match-any A\n match dscp af11\npolicy-map P\n class A\n"
                    "  bandwidth remaining percent 60\n class class-default\n  bandwidth remaining percent 50\n"
                    "interface GigabitEthernet1\n service-policy output P\n")
    assert "r1.cfg:9: 'bandwidth remaining percent 50'" in str(e.value) and "110 %" in str(e.value)
    assert "line 7 (bandwidth remaining percent 60)" in str(e.value)


def test_a_flat_policy_shaping_class_default_is_a_port_shaper(tmp_path):
    [p] = ports(tmp_path, HEAD + "policy-map SHAPE\n class class-default\n  shape average 20000000 80000\n"
                "interface GigabitEthernet1\n service-policy output SHAPE\n")
    assert p.scenario["link"] == {"rate": "20 Mbit/s"} and p.shaper["bc"] == "10000 B" and p.shaper["latency"] == \
        "4 ms"
    assert [c["name"] for c in p.scenario["classes"]] == ["class-default"]


def test_ios_xr_shape_percent_is_of_the_interface_and_needs_its_rate(tmp_path):
    text = ("policy-map CHILD\n class class-default\n  bandwidth remaining percent 100\n end-policy-map\n"
            "policy-map PARENT\n class class-default\n  shape average percent 40\n  service-policy CHILD\n"
            " end-policy-map\ninterface {itf}\n service-policy output PARENT\n")
    [p] = ports(tmp_path, text.format(itf="TenGigE0/0/0/1"), "xr.cfg")
    assert p.scenario["link"] == {"rate": "4 Gbit/s"} and p.platform == "ios-xr"
    with pytest.raises(ConfigError, match="percentage of an interface whose rate is unknown"):
        ports(tmp_path, text.format(itf="Bundle-Ether7"), "xr.cfg")


def test_layers_the_importer_uses_only_the_core():
    """qosbound.configs reads configurations with the neutral core only: no system, no command."""
    from tests.test_layering import CORE, ROOT, _modules, _within, imports

    bad = []
    for module, path in _modules(ROOT / "qosbound" / "configs", "qosbound.configs"):
        bad += [f"{path.name}:{line}: {name}" for line, name in imports(path, module)
                if _within(name, {"qosbound"}) and not (name in CORE or _within(name, CORE - {"qosbound"})
                                                        or _within(name, {"qosbound.configs"}))]
    assert bad == []


# ---------------------------------------------------------------------------------------------- field configurations

def field_ports(name: str) -> dict:
    return {p.interface: p for p in load_configs([FIELD / name])}


def test_a_time_queue_limit_of_a_remaining_class_is_taken_at_its_guaranteed_service_rate():
    """8-class WAN edge: `queue-limit 20 ms` in a class with remaining ratio 15 of 73, after priority policers of
    100 and 150 Mbit/s on 1 Gbit/s: 20 ms of 15/73 x 750 Mbit/s (Cisco's guaranteed service rate), not of the
    1 Gbit/s port (6.5 times more packets)."""
    p = field_ports("field-xe-wan-8class.cfg")["GigabitEthernet0/0/0"]
    rate = 15 / 73 * 750e6
    ms = cls(p, "MULTIMEDIA-STREAMING")
    assert ms["queue_limit"] == int(0.020 * rate / 8 / 1500)
    assert ms["dropper"]["thresholds"]["AF31"]["min_th"] == int(0.010 * rate / 8 / 1500)
    prov = p.provenance["classes.MULTIMEDIA-STREAMING.queue_limit"]
    # the queue-limit line, the class's ratio line and the voice policer's line all decide it
    assert all(f"field-xe-wan-8class.cfg:{n}," in prov for n in (60, 59, 45))


def test_a_class_without_a_remaining_share_takes_an_equal_part_of_what_the_stated_shares_leave(tmp_path):
    """Cisco's example: c1 bandwidth percent 30 + remaining 40 %, c2 bandwidth percent 20, class-default: c2 and
    class-default each take 30 % of the unallocated 50 %; `queue-limit 10 ms` is converted at those rates."""
    [p] = ports(tmp_path, HEAD + "class-map match-any C1\n match dscp af11\nclass-map match-any C2\n match dscp af21\n"
                "policy-map P\n class C1\n  bandwidth percent 30\n  queue-limit 10 ms\n class C2\n"
                "  bandwidth percent 20\n"
                "  queue-limit 10 ms\n class class-default\n  queue-limit 10 ms\ninterface GigabitEthernet1\n"
                " service-policy output P\n")
    # no remaining percentages here: c1, c2 and class-default each take a third of the unallocated 500 Mbit/s
    assert cls(p, "C1")["queue_limit"] == int(0.010 * (300e6 + 500e6 / 3) / 8 / 1500)
    assert cls(p, "C2")["queue_limit"] == int(0.010 * (200e6 + 500e6 / 3) / 8 / 1500)
    assert cls(p, "class-default")["queue_limit"] == int(0.010 * (500e6 / 3) / 8 / 1500)


def test_catalyst_wred_thresholds_in_percent_are_shares_of_the_class_queue_limit():
    """`random-detect dscp af21 percent 70 100` (Catalyst 9000) was refused as 'expected a size'; it is 70 % and
    100 % of the class's queue limit (64 packets by default)."""
    p = field_ports("field-cat9k-dist.cfg")["TwentyFiveGigE1/0/3"]
    th = cls(p, "OUT-TRANS-DATA-Q")["dropper"]["thresholds"]
    assert th["AF21"]["min_th"] == int(0.70 * 64) and th["AF21"]["max_th"] == 64
    assert th["AF23"]["min_th"] == int(0.50 * 64)
    assert "70 % of the 64-packet queue" in p.provenance["classes.OUT-TRANS-DATA-Q.dropper.thresholds.AF21.min_th"]


def test_a_wred_percentage_above_100_is_an_error_naming_the_line(tmp_path):
    with pytest.raises(ConfigError, match=r"r1.cfg:9: .*110 % of the queue"):
        ports(tmp_path, HEAD + "class-map match-any A\n match dscp af21\npolicy-map P\n class A\n"
                    "  bandwidth remaining percent 50\n  random-detect dscp-based\n"
                    "  random-detect dscp af21 percent 50 110\ninterface GigabitEthernet1\n service-policy output P\n")


def test_a_shaped_sub_interface_ring_drains_at_the_physical_speed_not_at_its_bandwidth_statement():
    """IOS 15 branch (CRLF line endings, a tab-indented match line, a banner quoting policy words): the
    sub-interface says `bandwidth 20000` (the QoS reference), its physical port `speed 100`; the shaper's
    interface rate (the ring's drain rate) is 100 Mbit/s, the port's rate the shaper's 20 Mbit/s."""
    [p] = load_configs([FIELD / "field-ios15-branch.cfg"])
    assert b"\r\n" in (FIELD / "field-ios15-branch.cfg").read_bytes()
    assert p.scenario["link"] == {"rate": "20 Mbit/s"}
    assert p.shaper["interface_rate"] == "100 Mbit/s"
    assert p.shaper["provenance"]["interface_rate"].endswith("field-ios15-branch.cfg:93")
    assert p.shaper["bc"] == "10000 B" and p.shaper["latency"] == "4 ms"  # shape average 20000000 80000 0: bits
    assert cls(p, "VOICE")["police"] == {"cir": "2.048 Mbit/s", "cbs": "64000 B", "conditional": True}
    assert cls(p, "VOICE-SIGNALLING")["dscp"] == ["CS3", "AF31"]  # `cs3 af31 24` after a tab: 24 is CS3
    assert not any("UNAUTH" in n for n in p.not_modelled)


def test_match_all_of_two_dscps_matches_nothing_and_says_so(tmp_path):
    """`class-map match-all` with `match dscp af41` and `match dscp af42`: a packet has one DSCP, so the class
    is empty on the router too; the import keeps it empty and notes the likely mistake."""
    [p] = ports(tmp_path, HEAD + "class-map match-all BOTH\n match dscp af41\n match dscp af42\npolicy-map P\n"
                " class BOTH\n  bandwidth remaining percent 10\ninterface GigabitEthernet1\n service-policy output P\n")
    assert cls(p, "BOTH")["dscp"] == []
    assert any("match-all BOTH" in n and "matches no packet" in n for n in p.not_modelled)


def test_a_re_marking_policer_in_a_class_without_wred_is_transmit_and_the_port_accepts_it(tmp_path):
    """ACL-based CM-INTERACTIVE polices with `exceed-action set-dscp-transmit af32`: the packet stays in the class's
    queue, which has no WRED, so AF32 changes nothing on this port -- the import writes `transmit` with a note.
    Before, the written scenario was refused by the port ('its new DSCP must be one of the class's
    precedences'), so `verify` exited 2 on a configuration the import had accepted."""
    [p] = load_configs([FIELD / "field-acl-classes.cfg"])
    pol = cls(p, "CM-INTERACTIVE")["police"]
    assert pol["exceed"] == "transmit" and pol["violate"] == "drop"
    assert any("set-dscp AF32" in n and "marking only on this port" in n for n in p.not_modelled)
    path = tmp_path / "port.yaml"
    path.write_text(scenario_yaml(p))
    assert scenario.load(path).classes  # the port system loads and checks it


def test_a_re_marking_policer_in_a_wred_class_keeps_the_new_dscp():
    """The shipped WAN edge: CRITICAL (AF3x with WRED) re-marks exceed to AF32, violate to AF33: kept."""
    [p] = ports_of("wan-edge-iosxe.cfg")
    assert cls(p, "CRITICAL")["police"]["exceed"] == "set-dscp AF32"


def test_an_ios_xr_class_with_a_minimum_and_a_remaining_share_is_refused_naming_both_lines(tmp_path):
    """IOS XR's own example (class c1: bandwidth percent 30 + bandwidth remaining percent 40). Before, the second
    line silently replaced the first (the 30 % minimum was lost); the port has one bandwidth per class."""
    text = ("!! IOS XR Configuration 7.5.2\nhostname xr\nclass-map match-any C1\n match dscp af11\n end-class-map\n"
            "policy-map SAMPLE\n class C1\n  bandwidth percent 30\n  bandwidth remaining percent 40\n !\n"
            " class class-default\n !\n end-policy-map\ninterface TenGigE0/0/0/1\n service-policy output SAMPLE\n")
    with pytest.raises(ConfigRefused, match=r"xr.cfg:9: .*minimum bandwidth and a remaining share "
                                            r"\('bandwidth percent 30' at line 8\)"):
        ports(tmp_path, text, "xr.cfg")
