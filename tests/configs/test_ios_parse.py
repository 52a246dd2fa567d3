"""Cisco MQC commands read into their syntax (qosbound.configs.ios_parse): police, priority, bandwidth,
random-detect and queue-limit forms."""

from __future__ import annotations

import pytest

from qosbound.configs.ios_parse import parse_ios
from qosbound.configs.source import ConfigText


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
