"""The queueing meaning of Linux tc configurations (qosbound.configs.tc_semantics): htb, prio, tbf, red and
gred trees as ports, and what is refused."""

from __future__ import annotations

import pytest

from qosbound.configs import import_configs, load_configs
from qosbound.configs.tc_semantics import _red_wlog
from qosbound.errors import ConfigError, ConfigRefused
from tests.configs_helpers import CONFIG_EXAMPLES, FIELD, MALFORMED, cls, ports


TRAFFIC = CONFIG_EXAMPLES / "traffic" / "home-prio-tbf.yaml"


def test_htb_red_home_gateway_script():
    """The top htb class is the shaper; leaves are bandwidth classes with their rates; the default class is
    class-default; red's byte thresholds are counted in avpkt packets, P_d = 1 / probability."""
    [p] = load_configs([CONFIG_EXAMPLES / "home-htb-red.sh"])
    assert p.scenario["link"] == {"rate": "20 Mbit/s"} and p.shaper["bc"] == "15360 B"
    assert [c["name"] for c in p.scenario["classes"]] == ["htb_1_10", "htb_1_20", "class-default"]
    assert cls(p, "htb_1_10")["dscp"] == ["EF"] and cls(p, "htb_1_10")["bandwidth"] == "2 Mbit/s"
    assert cls(p, "htb_1_20")["dscp"] == ["AF31", "AF41"]
    th = cls(p, "htb_1_20")["dropper"]["thresholds"]["AF31"]
    assert th == {"min_th": 30, "max_th": 90, "P_d": 50}
    assert cls(p, "class-default")["dropper"]["thresholds"]["DF"]["P_d"] == 20
    assert cls(p, "htb_1_20")["queue_limit"] == 400
    assert p.provenance["classes.htb_1_20.dropper.thresholds.AF31.min_th"].startswith(
        str(CONFIG_EXAMPLES / "home-htb-red.sh") + ":18")
    assert any("htb prio 0" in n for n in p.not_modelled)
    assert any("ECN" in n for n in p.not_modelled)


def test_red_ewma_weight_follows_the_burst_rule():
    """Floyd & Jacobson (1993): with burst L, a weight w keeps the average below min_th after L + 1 arrivals to an
    idle queue when L + 1 + ((1 - w)^(L+1) - 1) / w < min_th; tc picks the largest such w = 2^-wlog."""
    w = _red_wlog(30.0, 55.0)
    weight = 2.0 ** -w
    assert 55 + 1 - 30 <= (1 - (1 - weight) ** 55) / weight
    looser = 2.0 ** -(w - 1)
    assert not 55 + 1 - 30 <= (1 - (1 - looser) ** 55) / looser


def test_the_kernels_default_roots_are_not_ports():
    rep = import_configs([CONFIG_EXAMPLES / "home-htb-red.json"])
    assert [p.interface for p in rep.ports] == ["eth1"]
    notes = " ".join(next(iter(rep.notes.values())))
    assert "eth0: root qdisc fq_codel is the kernel's default" in notes and "lo: root qdisc noqueue" in notes


def test_prio_tbf_bands_are_priority_levels_and_the_last_band_is_class_default():
    [p] = load_configs([CONFIG_EXAMPLES / "home-prio-tbf.sh"], TRAFFIC)
    assert p.scenario["link"] == {"rate": "18 Mbit/s"} and p.shaper["bc"] == "32768 B"
    b0, b1, d = p.scenario["classes"]
    assert (b0["name"], b0["priority"], b1["name"], b1["priority"], d["name"]) == ("band0", 1, "band1", 2,
                                                                                   "class-default")
    assert "EF" in b0["dscp"] and "CS1" not in b1["dscp"]
    assert "DF" in b1["dscp"]  # DSCP 0: TOS 0 -> priority 0 -> priomap band 1
    assert "CS6" in b1["dscp"]  # TOS 0xc0: (0xc0 & 0x1e) >> 1 = 0 -> priority 0 -> priomap band 1
    assert d["queue_limit"] == 100  # bfifo 150000 B in 1500 B packets
    assert b0["traffic"] == {"calls": 4, "call": {"rate": "90 kbit/s", "size": "218 B", "arrivals": "cbr"}}


def test_prio_without_filters_uses_the_priomap_and_tos_table(tmp_path):
    [p] = ports(tmp_path, "tc qdisc add dev eth0 root handle 1: prio\n", "gw.sh",
                traffic=_traffic(tmp_path, "eth0", rate="10mbit"))
    bands = {c["name"]: c for c in p.scenario["classes"]}
    # tc-prio(8)'s table: TOS 0x10 (minimise delay, DSCP 4) -> priority 6 -> band 0; TOS 0x04 (reliability,
    # DSCP 1) and 0 -> priority 0 -> band 1; TOS 0x08 (throughput, DSCP 2) -> priority 2 -> band 2, the last
    # band (class-default, which lists no DSCP)
    assert "4" in bands["band0"]["dscp"] and "LE" in bands["band1"]["dscp"] and "DF" in bands["band1"]["dscp"]
    assert "2" not in bands["band0"]["dscp"] + bands["band1"]["dscp"] and "dscp" not in bands["class-default"]
    assert any(a["default"] == "priomap" for a in p.assumptions)


def _traffic(tmp_path, dev, rate):
    t = tmp_path / "t.yaml"
    t.write_text(f"interfaces:\n  {dev}:\n    rate: {rate.replace('mbit', ' Mbit/s')}\n    classes:\n"
                 "      band0: {rate: 1 Mbit/s, size: 200 B, arrivals: poisson}\n"
                 "      band1: {rate: 1 Mbit/s, size: 200 B, arrivals: poisson}\n")
    return t


@pytest.mark.parametrize("name, kind", [("fq_codel.sh", "fq_codel"), ("cake.sh", "cake")])
def test_flow_queueing_qdiscs_are_refused_with_the_reason(name, kind):
    with pytest.raises(ConfigRefused) as e:
        load_configs([MALFORMED / name])
    assert f"{kind}:" in str(e.value) and "per-class FIFO" in str(e.value)


def test_sfq_in_a_leaf_is_refused(tmp_path):
    with pytest.raises(ConfigRefused, match="sfq: stochastic fairness queueing"):
        ports(tmp_path, "tc qdisc add dev eth0 root handle 1: htb default 10\n"
                        "tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit\n"
                        "tc class add dev eth0 parent 1:1 classid 1:10 htb rate 10mbit\n"
                        "tc qdisc add dev eth0 parent 1:10 handle 10: sfq perturb 10\n", "gw.sh")


def test_htb_rates_over_the_parent_are_an_error(tmp_path):
    with pytest.raises(ConfigError, match="add up to 15 Mbit/s, more than the parent's 10 Mbit/s"):
        ports(tmp_path, "tc qdisc add dev eth0 root handle 1: htb default 20\n"
                        "tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit\n"
                        "tc class add dev eth0 parent 1:1 classid 1:10 htb rate 10mbit\n"
                        "tc class add dev eth0 parent 1:1 classid 1:20 htb rate 5mbit\n", "gw.sh")


def test_gred_virtual_queues_give_one_threshold_set_per_dscp(tmp_path):
    [p] = ports(tmp_path, "tc qdisc add dev eth0 root handle 1: htb default 20\n"
                          "tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit\n"
                          "tc class add dev eth0 parent 1:1 classid 1:10 htb rate 6mbit\n"
                          "tc class add dev eth0 parent 1:1 classid 1:20 htb rate 4mbit\n"
                          "tc qdisc add dev eth0 parent 1:10 handle 10: gred setup vqs 3 default 0\n"
                          "tc qdisc change dev eth0 parent 1:10 handle 10: gred limit 150000 min 30000 max 90000 "
                          "avpkt 1500 burst 30 probability 0.02 DP 0\n"
                          "tc qdisc change dev eth0 parent 1:10 handle 10: gred limit 150000 min 15000 max 60000 "
                          "avpkt 1500 burst 20 probability 0.05 DP 1\n"
                          "tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dsfield 0x28 0xfc "
                          "flowid 1:10\n"
                          "tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dsfield 0x30 0xfc "
                          "flowid 1:10\n", "gw.sh")
    th = cls(p, "htb_1_10")["dropper"]["thresholds"]
    assert th["AF11"] == {"min_th": 20, "max_th": 60, "P_d": 50}
    assert th["AF12"] == {"min_th": 10, "max_th": 40, "P_d": 20}
    assert any("gred virtual queues are selected by tc_index" in n for n in p.not_modelled)


def test_the_office_gateway_script_reads_its_shaper_leaves_red_and_dsfield_filters():
    """A real-sized script ($TC and $DEV variables, continuation lines, tab indent, an ssh port filter): the top
    htb class is the 95 Mbit/s shaper (burst 30k = 30720 B); RED's thresholds are in its avpkt (1000 B) packets;
    bfifo 300kb is 307200 B in 1500 B packets; EF, AF2x and AF1x reach their classes by dsfield / tos."""
    [p] = load_configs([FIELD / "field-office-gw-tc.sh"])
    assert p.scenario["link"] == {"rate": "95 Mbit/s"} and p.shaper["bc"] == "30720 B"
    assert cls(p, "htb_1_10")["dscp"] == ["EF"] and cls(p, "htb_1_10")["queue_limit"] == 50
    red = cls(p, "htb_1_20")
    assert red["queue_limit"] == 400 and red["dropper"]["thresholds"]["AF21"] == {"min_th": 30, "max_th": 90,
                                                                                   "P_d": 50}
    assert cls(p, "htb_1_30")["dscp"] == ["AF11", "AF12", "AF13"]
    assert cls(p, "htb_1_30")["queue_limit"] == 307200 // 1500
    assert cls(p, "class-default")["bandwidth"] == "30 Mbit/s"  # default 40
    assert any("dport 22" in n and "not modelled" in n for n in p.not_modelled)
