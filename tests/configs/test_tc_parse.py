"""tc scripts and tc -j dumps read into commands (qosbound.configs.tc_parse): variables, continuations,
comments, ``del root``, and a script and its JSON dump giving the same port."""

from __future__ import annotations

import pytest

from qosbound.configs import load_configs
from qosbound.errors import ConfigError
from tests.configs_helpers import CONFIG_EXAMPLES, MALFORMED, cls, ports


def test_script_and_json_dump_give_the_same_port():
    """home-htb-red.json is what tc -j prints for the script (no filters: the DSCP lists differ only there)."""
    [s] = load_configs([CONFIG_EXAMPLES / "home-htb-red.sh"])
    [j] = load_configs([CONFIG_EXAMPLES / "home-htb-red.json"])
    for name in ("htb_1_10", "htb_1_20", "class-default"):
        a, b = dict(cls(s, name)), dict(cls(j, name))
        for c in (a, b):
            c.pop("dscp", None)
            c.pop("traffic", None)
        if "dropper" in a:
            a["dropper"].pop("exponent")
            b["dropper"].pop("exponent")
            # the JSON dump has no avpkt: thresholds are in full-size packets there
            assert b["dropper"]["thresholds"]["DF"]["min_th"] == 20  # 30000 B / 1500 B
            a.pop("dropper"), b.pop("dropper")
            a.pop("queue_limit"), b.pop("queue_limit")
        assert a == b, name
    assert s.scenario["link"] == j.scenario["link"]


def test_unset_shell_variables_and_unknown_rates_are_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"unset-variable.sh:3.*\$WAN"):
        load_configs([MALFORMED / "unset-variable.sh"])
    with pytest.raises(ConfigError, match="rate of eth0 is unknown"):
        ports(tmp_path, "tc qdisc add dev eth0 root handle 1: pfifo limit 100\n", "gw.sh")


def test_continuations_comments_and_del_root(tmp_path):
    [p] = ports(tmp_path, "#!/bin/sh\nDEV=eth0  # the uplink\ntc qdisc add dev $DEV root handle 9: pfifo limit 5\n"
                          "tc qdisc del dev ${DEV} root\n"
                          "tc qdisc add dev $DEV root handle 1: tbf rate 4mbit \\\n   burst 10kb latency 20ms\n",
                "gw.sh")
    assert p.scenario["link"] == {"rate": "4 Mbit/s"}
    # limit = rate x latency + burst = 10000 + 10240 B = 13 full-size packets
    assert cls(p, "class-default")["queue_limit"] == 13
    assert p.provenance["link.rate"].endswith("gw.sh:5")


def test_an_assignment_with_a_default_expansion_takes_the_default(tmp_path):
    """`RATE=${RATE:-40mbit}` (a script's overridable setting): RATE is 40mbit where the script uses it; before,
    the assignment was kept literally and `${RATE}` was refused as 'not a tc rate'."""
    script = ("#!/bin/bash\nDEV=\"eth0\"\nRATE=${RATE:-40mbit}\nUP=$1\n"
              "tc qdisc add dev ${DEV} root handle 1: htb default 0x30\n"
              "tc class add dev ${DEV} parent 1: classid 1:1 htb rate ${RATE} burst 15k\n"
              "tc class add dev ${DEV} parent 1:1 classid 1:10 htb rate 8mbit ceil ${RATE}\n"
              "tc class add dev ${DEV} parent 1:1 classid 1:30 htb rate 20mbit ceil ${RATE}\n"
              "tc filter add dev ${DEV} protocol ip parent 1:0 prio 1 u32 match ip tos 0xb8 0xff flowid 1:10\n")
    [p] = ports(tmp_path, script, "edge.sh")
    assert p.scenario["link"] == {"rate": "40 Mbit/s"} and p.shaper["cir"] == "40 Mbit/s"
    assert cls(p, "htb_1_10")["dscp"] == ["EF"]


def test_a_variable_set_from_an_argument_is_an_error_where_it_is_used(tmp_path):
    with pytest.raises(ConfigError, match=r"edge.sh:3: .*uses \$UP"):
        ports(tmp_path, "UP=$1\ntc qdisc add dev eth0 root handle 1: htb default 10\n"
                        "tc class add dev eth0 parent 1: classid 1:1 htb rate $UP\n", "edge.sh")
