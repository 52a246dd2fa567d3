"""Cisco MQC (IOS, IOS XE, IOS XR): the tree, the commands as written, and their meaning in the port."""

from __future__ import annotations

import pytest

from qosbound.configs.ios_parse import parse_ios
from qosbound.configs.ios_tree import parse_tree
from qosbound.configs.source import ConfigText
from qosbound.errors import ConfigError, ConfigRefused
from tests.configs_helpers import CONFIG_EXAMPLES, MALFORMED, cls, ports, report

HEAD = "version 17.6\nhostname r1\n"


def tree(text):
    return [(n.text, [(c.text, [g.text for g in c.children]) for c in n.children]) for n in parse_tree(text)]


# ------------------------------------------------------------------------------------------------ the tree

def test_flat_snippets_with_prompts_follow_the_modes():
    """Without indentation (documentation snippets, with or without prompts) the modes decide the nesting."""
    t = tree("Router(config)# policy-map P\nRouter(config-pmap)# class V\nRouter(config-pmap-c)# priority 100\n"
             "police 8000 1000\nconform-action transmit\nexceed-action drop\nclass class-default\nfair-queue\n"
             "interface Gi0/1\nservice-policy output P\n")
    assert t == [("policy-map P", [("class V", ["priority 100", "police 8000 1000"]),
                                   ("class class-default", ["fair-queue"])]),
                 ("interface Gi0/1", [("service-policy output P", [])])]
    police = parse_tree("policy-map P\nclass V\npolice 8000 1000\nconform-action transmit\n")[0].children[0].children[0]
    assert [c.text for c in police.children] == ["conform-action transmit"]


def test_indented_files_keep_unknown_commands_in_their_section_and_globals_at_column_0():
    t = tree("policy-map P\n class V\n  some-new-knob 5\n  priority 10\nno ip http server\nrouter bgp 1\n neighbor x\n")
    assert t[0] == ("policy-map P", [("class V", ["some-new-knob 5", "priority 10"])])
    assert t[1] == ("no ip http server", [])
    assert t[2] == ("router bgp 1", [("neighbor x", [])])


def test_banners_comments_crlf_and_tabs_are_tolerated():
    text = ("banner motd ^C\npolicy-map EVIL\n class X\n^C\n! comment\n# comment\r\npolicy-map P\r\n"
            "\tclass V\r\n  priority 100\r\n")
    nodes = parse_tree(text.replace("\r\n", "\n"))
    assert [n.text for n in nodes] == ["policy-map P"]
    assert [(c.text, [g.text for g in c.children]) for c in nodes[0].children] == [("class V", ["priority 100"])]
    assert nodes[0].line == 7 and nodes[0].children[0].children[0].line == 9


def test_every_node_has_its_line():
    text = (CONFIG_EXAMPLES / "branch-iosxe.cfg").read_text()
    lines = text.split("\n")

    def walk(nodes):
        for n in nodes:
            assert lines[n.line - 1].strip() == n.text
            walk(n.children)
    walk(parse_tree(text))


# ------------------------------------------------------------------------------------------------ commands

def parse_class(body: str, dialect="ios-xe"):
    cfg = parse_ios(ConfigText("t.cfg", f"policy-map P\n class C\n{body}"), dialect)
    return cfg.policy_maps["P"].classes[0]


@pytest.mark.parametrize("text, cir, bc, pir, be", [
    ("police 8000 1500 3000", 8000, 1500, None, 3000),
    ("police cir 1000000 bc 31250", 1e6, 31250, None, None),
    ("police cir 1000000 bc 31250 pir 2000000 be 62500", 1e6, 31250, 2e6, 62500),
    ("police rate 10 mbps burst 100 kbytes", 1e7, 1e5, None, None),
    ("police rate 10 mbps burst 100 kbytes peak-rate 20 mbps peak-burst 200 kbytes", 1e7, 1e5, 2e7, 2e5),
])
def test_police_forms_read_rates_in_bit_per_second_and_bursts_in_bytes(text, cir, bc, pir, be):
    p = parse_class(f"  {text}\n").police[0]
    assert p.cir.value == cir and p.bc.value == bc
    assert (p.pir.value if p.pir else None) == pir and (p.be.value if p.be else None) == be


def test_police_actions_inline_and_on_their_own_lines():
    p = parse_class("  police cir 8000 conform-action transmit exceed-action set-dscp-transmit af12 "
                    "violate-action drop\n").police[0]
    assert [a.kind for a in p.conform + p.exceed + p.violate] == ["transmit", "set-dscp", "drop"]
    assert p.exceed[0].value == "af12"
    p = parse_class("  police rate percent 10\n   conform-action transmit\n   exceed-action set dscp af12\n",
                    "ios-xr").police[0]
    assert p.cir.kind == "percent" and p.exceed[0].kind == "set-dscp" and len(p.lines) == 3


@pytest.mark.parametrize("text, level, kind, value", [
    ("priority", None, None, None), ("priority 2000", None, "bps", 2e6), ("priority percent 10", None, "percent", 10),
    ("priority level 2", 2, None, None), ("priority level 1 percent 20", 1, "percent", 20),
])
def test_priority_forms(text, level, kind, value):
    pr = parse_class(f"  {text}\n").priority
    assert pr.level == level
    assert (pr.rate.kind if pr.rate else None) == kind and (pr.rate.value if pr.rate else None) == value


@pytest.mark.parametrize("text, kind, value", [
    ("bandwidth 2000", "rate", 2e6), ("bandwidth percent 20", "percent", 20),
    ("bandwidth remaining percent 30", "remaining-percent", 30), ("bandwidth remaining ratio 4", "remaining-ratio", 4),
    ("bandwidth 10 mbps", "rate", 1e7),
])
def test_bandwidth_forms(text, kind, value):
    b = parse_class(f"  {text}\n").bandwidth
    assert (b.kind, b.value) == (kind, value)


def test_random_detect_per_value_lines_and_options():
    w = parse_class("  random-detect dscp-based\n  random-detect dscp af31 32 40 10\n"
                    "  random-detect exponential-weighting-constant 7\n  random-detect ecn\n").wred
    assert w.basis == "dscp" and w.exponent[0] == 7 and w.ecn is not None
    t = w.thresholds[0]
    assert (t.value, t.min_th.value, t.max_th.value, t.mpd) == ("af31", 32, 40, 10)
    w = parse_class("  random-detect dscp af11,af12 10 ms 20 ms\n", "ios-xr").wred
    assert [t.value for t in w.thresholds] == ["af11", "af12"] and w.thresholds[0].min_th.kind == "ms"


def test_queue_limit_units():
    assert parse_class("  queue-limit 64\n").queue_limit.size.kind == "packets"
    q = parse_class("  queue-limit 100 ms\n").queue_limit.size
    assert (q.kind, q.value) == ("ms", 100)
    q = parse_class("  queue-limit 50 kbytes\n").queue_limit.size
    assert (q.kind, q.value) == ("bytes", 50000)


# ------------------------------------------------------------------------------------------------ meaning

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
    # 50 ms at the class's guaranteed rate, the port's 100 Gbit/s here (a remaining share guarantees no rate)
    assert cls(core, "TC-BUSINESS")["queue_limit"] == int(0.05 * 100e9 / 8 / 1500)
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
