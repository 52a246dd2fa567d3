"""koehler1999, sections 4.1-4.2: the TCP goodput by data/ACK class on the dumbbell
(qosbound.reproduce.koehler1999_tcp): the network, the delayed-ACK switch and the quick run's table and figures."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import Counter

import numpy as np
import pytest

from qosbound.reproduce import koehler1999 as KK
from qosbound.reproduce import koehler1999_tcp as K


def test_network_keeps_each_nodes_class_mix_and_observes_every_combination():
    """Every node sends 2 / 3 / 5 connections of Premium / Assured / Best-Effort data (20 / 30 / 50 %) in both
    directions; each of the nine data/ACK combinations has ``2 copies`` observed connections, and background
    connections send ACKs of their data's class."""
    net, combo = K.network("twobit", 1, 20, 2.0, 1.0, copies=3)
    assert net.n == 100 and net.rate == 50e6 and sorted(Counter(net.direction).values()) == [50, 50]
    data = np.array(net.data_class) + (np.array(net.colour) == 2)  # 0 Premium, 1 Assured, 2 Best Effort
    for node in range(10):
        m = np.array(net.uplink_of) == node
        assert sorted(Counter(data[m]).items()) == [(0, 2), (1, 3), (2, 5)]
    assert sorted(Counter(combo[combo >= 0]).values()) == [6] * 9
    acks = np.array(net.ack_class) + (np.array(net.ack_colour) == 2)
    assert (acks[combo < 0] == data[combo < 0]).all()
    assert 2 * (net.delay + net.access[0]) == 0.020


def test_quick_reproduce_prints_every_claim_and_draws_the_figures(monkeypatch, capsys, tmp_path):
    """The quick run (here with 2-s windows) prints the goodput table and one row per claim, and ``--out``
    writes Figures 4-7 as PNG and SVG."""
    monkeypatch.setattr(KK, "TCP_QUICK", dict(KK.TCP_QUICK, loads=(5,), window=2.0, warmup=1.0, reps=2))
    monkeypatch.setattr(KK, "marker_rows", lambda quick=False: [])
    monkeypatch.setattr(KK, "load_rows", lambda quick=False: [])
    from rich.console import Console

    from qosbound import report

    monkeypatch.setattr(report, "console", lambda file=None: Console(file=sys.stdout, width=3000, soft_wrap=False))
    KK.run(argparse.Namespace(quick=True, json=False, out=str(tmp_path)))
    text = capsys.readouterr().out
    assert "Two-Bit DS (Premium + RIO)" in text and "one AF class (trTCM + n-RED)" in text
    for claim in ("ap-vs-ab-gain", "pb-about-60pct-of-pp", "pp-load-independent-low", "assured-twice-be",
                  "assured-above-be", "twobit-differences-shrink", "af-differences-shrink", "premium-highest-at-200ms",
                  "af-ack-precedence-hardly-matters", "af13-acks-halve", "nred-protects-af11-af12",
                  "delayed-acks-explain-ap-ab", "rto-floor-sensitivity", "uplink-aqm-low-load-ack-class"):
        assert claim + ":" in text, claim
    assert "32 claims --" in text and "140 %  20 ms" in text and "140 % 200 ms" in text
    assert "sensitivity: Two-Bit DS with delayed ACKs off" in text
    assert "sensitivity: Two-Bit DS with RIO at the node uplinks" in text and " 50 %  20 ms" in text
    for n in (4, 5, 6, 7):
        for ext in ("png", "svg"):
            assert (tmp_path / f"koehler1999_fig{n}.{ext}").stat().st_size > 5_000


def test_uplink_aqm_gives_the_nodes_the_bottleneck_queues_and_the_receivers_acks_their_uplink():
    """With ``uplink_aqm`` the network is the same but for the option: each flow's ACKs leave through the uplink of
    the node of its peer on the other side (source i and source 50 + i are each other's sinks), a node of the other
    side; without it no ACK takes an uplink."""
    plain, combo = K.network("twobit", 0, 20, 2.0, 1.0)
    net, combo2 = K.network("twobit", 0, 20, 2.0, 1.0, uplink_aqm=True)
    assert (combo == combo2).all() and not plain.uplink_aqm and plain.ack_uplink_of == ()
    assert net.uplink_aqm and {f.name for f in dataclasses.fields(net)
                               if getattr(net, f.name) != getattr(plain, f.name)} == {"uplink_aqm", "ack_uplink_of"}
    half = net.n // 2
    node, ack = np.array(net.uplink_of), np.array(net.ack_uplink_of)
    assert (ack[:half] == node[half:]).all() and (ack[half:] == node[:half]).all()
    assert (node[:half] < 5).all() and (ack[:half] >= 5).all()
    p = K.run_point("twobit", 0, 20, 2.0, 1.0, 1, 3, uplink_aqm=True)
    assert len(p["uplink_drops_by_colour"]) == 3 and p["uplink_arrivals_by_colour"][0] > 0
    assert len(p["ack_uplink_drop_share"]) == 9 and all(0 <= x <= 1 for x in p["ack_uplink_drop_share"])


def test_delack_zero_acknowledges_every_segment():
    """The dumbbell's receiver with ``delack = 0`` sends one ACK per segment; with the 200 ms timer, about one per
    two (RFC 1122's delayed ACKs)."""
    import dataclasses

    from qosbound.validation.dumbbell import Dumbbell, simulate

    net = Dumbbell(n=1, rate=2e6, duration=5.0, warmup=1.0, rwnd=20, init_cwnd=2.0)
    every = simulate(dataclasses.replace(net, delack=0.0), 3).flows
    delayed = simulate(net, 3).flows
    assert every.ack_sent[0] >= 0.95 * every.arrivals[0] > 0
    assert every.ack_sent[0] > 1.7 * delayed.ack_sent[0]


def test_mixed_rows_of_table_1_keep_the_observed_rtt_and_mix_the_background():
    """Table 1's mixed row for 100 ms: R1 - R2 4 ms; every observed connection 23 ms to and from its router (RTT
    2 x (4 + 46) = 100 ms); the background sources of a node take 23, 48, 3, 23, 48 ms in turn, so three RTTs mix."""
    net, combo = K.network("twobit", 1, 100, 2.0, 1.0, mixed=True)
    acc = np.array(net.access)
    assert net.delay == 0.004 and len(acc) == net.n
    rtt_ms = np.round(2 * (net.delay + acc) * 1e3).astype(int)
    assert set(rtt_ms[combo >= 0]) == {100}
    assert set(rtt_ms[combo < 0]) == {20, 100, 200}
    equal, _ = K.network("twobit", 1, 100, 2.0, 1.0)
    assert 2 * (equal.delay + equal.access[0]) == pytest.approx(0.100)
