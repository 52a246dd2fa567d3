"""koehler1999, sections 4.1-4.2: the TCP goodput by data/ACK class (qosbound/reproduce/koehler1999_tcp.py).

The network keeps the paper's per-node mix, the claims are judged from replications (and turn NOT MET when the
numbers say otherwise), and the quick ``reproduce`` prints every claim row and draws Figures 4-7.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

import numpy as np

from qosbound.reproduce import claims as C
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


def _fake_sweep(ap_over_ab: float) -> dict:
    """Two loads x two RTTs; goodputs from a fixed pattern, AP set to ``ap_over_ab`` x AB."""
    rng = np.random.default_rng(1)
    pts = []
    for sc in K.SCENARIOS:
        for ld in (100, 140):
            for rtt in (20, 200):
                base = np.array([1000, 800, 600, 1500, 1200, 600, 500, 450, 300], float)
                if rtt == 200:
                    base = np.full(9, 700.0) + np.array([300, 300, 300, 0, 0, 0, 0, 0, 0])
                if sc == "twobit":
                    base[3] = ap_over_ab * base[5]
                per = base[None, :] * (1 + 0.02 * rng.standard_normal((4, 9)))
                pts.append({"scenario": sc, "load_percent": ld, "rtt_ms": rtt, "goodput_bit_s": list(per.mean(0) * 1e3),
                            "ci95_half_bit_s": [1e4] * 9, "per_replication": (per * 1e3).tolist(), "loss_rate": 0.05,
                            "packets": 1})
    return {"points": pts, "replications": 4, "duration_s": 20.0, "warmup_s": 5.0, "copies": 3, "packets": 16}


def test_claims_follow_the_numbers():
    """AP 2.4 x AB reproduces the paper's 'up to 140 % above'; AP 8 x AB is a documented finding (stronger than the
    paper); AP below AB is NOT MET."""
    def first(r):
        return K.claims(_fake_sweep(r))[0]

    assert first(2.4).verdict == C.REPRODUCED
    big = first(8.0)
    assert big.verdict == C.FINDING and "more than a factor 2 from the paper's 140 %" in big.evidence
    assert first(0.5).verdict == C.NOT_MET


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
                  "delayed-acks-explain-ap-ab", "rto-floor-sensitivity"):
        assert claim + ":" in text, claim
    assert "31 claims --" in text and "140 %  20 ms" in text and "140 % 200 ms" in text
    assert "sensitivity: Two-Bit DS with delayed ACKs off" in text
    for n in (4, 5, 6, 7):
        for ext in ("png", "svg"):
            assert (tmp_path / f"koehler1999_fig{n}.{ext}").stat().st_size > 5_000


def test_the_delayed_ack_hypothesis_is_judged_on_its_sensitivity_run():
    """Without delayed ACKs an AP/AB of 2.4 (140 % above) supports the hypothesis; 8 (700 % above) refutes it,
    and the row says so."""
    assert K.no_delack_claim(_fake_sweep(8.0), _fake_sweep(2.4)).verdict == C.REPRODUCED
    bad = K.no_delack_claim(_fake_sweep(8.0), _fake_sweep(8.0))
    assert bad.verdict == C.NOT_MET and "does not explain" in bad.evidence


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
