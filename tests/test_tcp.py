"""Tests for validation/tcp.py and validation/dumbbell.py: qosbound's packet-level TCP (NewReno + SACK, delayed ACKs).

The kernel tests drive the sender and receiver of :mod:`qosbound.validation.tcp` directly (a lossless,
in-order path with chosen segments dropped once); the dumbbell tests run whole simulations and check
properties TCP is known to have: the Mathis / Padhye throughput law, fairness of equal-RTT flows, and
the harm done by lost ACKs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from qosbound.validation import tcp as T
from qosbound.validation.dumbbell import Dumbbell, Queue, simulate

W = 64
NOSACK = np.zeros(8, np.int64)


def _state(cwnd=20.0, rwnd=30, base_rtt=0.01, rule="rfc", rto_floor="rto"):
    S, SB, TS, RB = T.new_state(1, W, init_cwnd=cwnd, rwnd=rwnd, min_rto=0.2, files=[-1], base_rtt=[base_rtt],
                                window=(0.0, 1e9), ssthresh_rule=rule, rto_floor=rto_floor)
    return S, SB, TS, RB, np.zeros(W, np.int64), np.zeros(W, np.int64)


def _send(S, SB, TS, cand, out, t):
    k = T.send_batch(S, SB, TS, 0, t, cand, out)
    return [int(x) for x in out[:k]]


# ------------------------------------------------------------------------------------------- sender kernels

def test_third_duplicate_ack_halves_cwnd_and_retransmits():
    """Two duplicate ACKs change nothing; the third enters fast recovery with ssthresh = cwnd = half the
    window (20 -> 10) and the lost segment goes out first; the full ACK ends recovery at ssthresh."""
    S, SB, TS, RB, cand, out = _state()
    assert _send(S, SB, TS, cand, out, 0.0) == list(range(20))
    for k in range(2):
        T.on_ack(S, SB, TS, 0, 0.05 + k * 1e-3, 0, NOSACK, 0, cand)
        assert S[0, T.INREC] == 0 and S[0, T.CWND] == 20
    T.on_ack(S, SB, TS, 0, 0.06, 0, NOSACK, 0, cand)
    assert S[0, T.INREC] == 1 and S[0, T.CWND] == 10 and S[0, T.SSTH] == 10 and S[0, T.N_FR] == 1
    sent = _send(S, SB, TS, cand, out, 0.06)
    assert sent[:1] == [0] and S[0, T.N_RETX] == 1
    T.on_ack(S, SB, TS, 0, 0.1, 20, NOSACK, 0, cand)  # everything up to the recovery point
    assert S[0, T.INREC] == 0 and S[0, T.CWND] == 10


def test_sack_marks_loss_before_three_duplicates():
    """With SACK, three segments SACKed above snd_una make it lost (RFC 6675 IsLost) on the first
    duplicate ACK that reports them."""
    S, SB, TS, RB, cand, out = _state()
    _send(S, SB, TS, cand, out, 0.0)
    sack = np.array([1, 4, 0, 0, 0, 0, 0, 0], np.int64)
    T.on_ack(S, SB, TS, 0, 0.05, 0, sack, 1, cand)
    assert S[0, T.DUP] == 1 and S[0, T.INREC] == 1
    assert _send(S, SB, TS, cand, out, 0.05)[0] == 0


def test_rto_backs_off_exponentially_and_progress_ends_it():
    """Back-to-back timeouts double the RTO (0.2, 0.4, 0.8, ... s, at most 60 s), set cwnd to 1 and
    retransmit only snd_una; ssthresh is lowered once, not again for the backed-off retransmissions;
    an ACK of new data brings the RTO back to the estimator's value."""
    S, SB, TS, RB, cand, out = _state()
    _send(S, SB, TS, cand, out, 0.0)
    rto0 = S[0, T.RTO]
    assert rto0 == pytest.approx(0.2)
    seen = []
    for k in range(12):
        T.on_timeout(S, SB, 0, 1.0 + k, cand)
        seen.append(S[0, T.RTO])
        assert S[0, T.CWND] == 1 and S[0, T.SSTH] == 10
        assert _send(S, SB, TS, cand, out, 1.0 + k) == [0]  # snd_una again (its retransmission was lost)
    assert seen[:8] == pytest.approx([0.2 * 2 ** (k + 1) for k in range(8)])
    assert max(seen) == 60.0
    T.on_ack(S, SB, TS, 0, 20.0, 5, NOSACK, 0, cand)
    assert S[0, T.RTO] == pytest.approx(rto0) and S[0, T.BACKOFF] == 0


@pytest.mark.parametrize("rto_floor, expected", [
    # ns-2 / ns-3: the whole RTO floored -- srtt 100 ms + 4 x 1 ms of variance is below 200 ms, so 200 ms
    ("rto", 0.2),
    # Linux: the variance term floored -- srtt + max(200 ms, 4 rttvar) = 300 ms
    ("rttvar", 0.3),
])
def test_the_rto_floor_rule(rto_floor, expected):
    """After steady 100-ms samples (rttvar decays towards 0) the RTO is max(min_rto, srtt + 4 rttvar) with the
    whole RTO floored, srtt + max(min_rto, 4 rttvar) with the variance term floored; a large rttvar is the same
    under both."""
    S, SB, TS, RB, cand, out = _state(base_rtt=0.1, rto_floor=rto_floor)
    for k in range(60):
        T._rtt_sample(S, 0, 0.1, float(k))
    assert S[0, T.SRTT] == pytest.approx(0.1) and S[0, T.RTTVAR] < 1e-3
    assert S[0, T.RTO] == pytest.approx(expected, abs=2e-3)
    S[0, T.RTTVAR] = 0.1
    T._rtt_sample(S, 0, 0.1, 61.0)
    assert S[0, T.RTO] == pytest.approx(0.1 + 4 * 0.075, abs=1e-9)


def test_the_rto_floor_rule_is_checked():
    with pytest.raises(ValueError, match="rto_floor"):
        _state(rto_floor="linux")


# ------------------------------------------------------------------------------------------- a direct path

def _transfer(drop_once, segments=200, cwnd=20.0):
    """Run one sender and one receiver over a lossless in-order path (each round trip: deliver every segment
    sent, ACK per the receiver's rules with any held ACK sent at the end of the round, then feed the ACKs back);
    segments in ``drop_once`` are lost on their first transmission. Returns (S, ACKs, data segments)."""
    S, SB, TS, RB, cand, out = _state(cwnd=cwnd, rwnd=30)
    S[0, T.FILE] = segments
    dropped = set()
    flight = _send(S, SB, TS, cand, out, 0.0)
    t = 0.0
    n_acks = n_data = 0
    sack = np.zeros(8, np.int64)
    for _ in range(200):
        if not flight:
            break
        t += 0.1
        acks = []
        for s in flight:
            if s in drop_once and s not in dropped:
                dropped.add(s)
                continue
            n_data += 1
            now, _ = T.on_data(S, RB, 0, s)
            if now:
                S[0, T.PEND] = 0
                nb = T.build_sack(S, RB, 0, s, sack, 4)
                acks.append((int(S[0, T.RNXT]), sack.copy(), nb))
        if S[0, T.PEND] > 0:  # the delayed-ACK timer
            S[0, T.PEND] = 0
            acks.append((int(S[0, T.RNXT]), NOSACK, 0))
        flight = []
        for a, sk, nb in acks:
            n_acks += 1
            T.on_ack(S, SB, TS, 0, t, a, sk, nb, cand)
            flight += _send(S, SB, TS, cand, out, t)
    return S, n_acks, n_data


def test_sack_recovers_three_losses_in_one_window_without_timeout():
    """Three segments lost from one window are all retransmitted in a single fast recovery (one window
    reduction, three retransmissions, no timeout) and the transfer completes."""
    S, _, _ = _transfer({3, 7, 11})
    assert S[0, T.RNXT] == 200 and S[0, T.UNA] == 200
    assert S[0, T.N_FR] == 1 and S[0, T.N_RTO] == 0 and S[0, T.N_RETX] == 3


def test_delayed_acks_halve_the_ack_count():
    """Without loss the receiver acknowledges every second segment: ACKs / data segments ~ 1/2 on a
    path (and within 5 % of 1/2 over a 30-s dumbbell run); one ACK per segment would give 1."""
    S, acks, data = _transfer(set(), segments=400)
    assert data == 400 and 0.5 <= acks / data <= 0.55
    r = simulate(Dumbbell(n=1, access=(0.02,), fwd=Queue(limit=1000), rwnd=40, duration=30, warmup=5), 1)
    f = r.flows
    segs = f.throughput[0] * r.window / (8 * 1460)
    assert f.drops[0] == 0 and f.timeouts[0] == 0
    assert 0.5 <= f.ack_sent[0] / segs <= 0.525


# ------------------------------------------------------------------------------------------- dumbbell runs

def _padhye(p, rtt, t0, b=2, mss=1460):
    """Padhye, Firoiu, Towsley & Kurose (1998) full model, bit/s."""
    return 8 * mss / (rtt * math.sqrt(2 * b * p / 3) + t0 * min(1, 3 * math.sqrt(3 * b * p / 8)) * p * (1 + 32 * p * p))


@pytest.mark.parametrize("p", [0.001, 0.005, 0.02])
def test_throughput_follows_mathis_and_padhye(p):
    """One bulk flow over a 100 Mbit/s path with random loss p: goodput within 30 % of Padhye et al.'s
    formula (b = 2 for delayed ACKs, T0 = the 200 ms minimum RTO), and for p <= 0.5 % -- where timeouts are
    rare -- within 30 % of Mathis et al.'s sqrt(3/(2bp)) MSS/RTT. Tolerance: the formulas' own accuracy
    against simulation in those papers (a few tens of percent), 300 s runs."""
    net = Dumbbell(n=1, rate=100e6, access=(0.02,), delay=0.005, loss=p, fwd=Queue(limit=1000), rwnd=1024,
                   duration=300, warmup=20)
    r = simulate(net, 3)
    rtt = float(net.base_rtt()[0])
    assert abs(r.loss_rate - p) < 5 * math.sqrt(p / r.flows.arrivals[0])
    assert 0.7 <= r.goodput / _padhye(p, rtt, 0.2) <= 1.3
    if p <= 0.005:
        mathis = 8 * 1460 / rtt * math.sqrt(3 / (4 * p))
        assert 0.7 <= r.goodput / mathis <= 1.3


def test_two_equal_rtt_flows_share_fairly():
    """Two bulk flows with the same RTT through RED: Jain's index of their goodputs above 0.98 on the mean of
    three 60-s replications, each flow between 40 % and 60 % of the total, and the link nearly full."""
    g = np.array([simulate(Dumbbell(n=2, access=(0.01, 0.01), duration=60, warmup=10), s).flows.goodput
                  for s in (1, 2, 3)])
    m = g.mean(axis=0)
    assert m.sum() ** 2 / (2 * (m ** 2).sum()) > 0.98
    assert (0.4 <= m / m.sum()).all() and (m / m.sum() <= 0.6).all()
    assert m.sum() > 0.85 * 10e6 * 1460 / 1502


def test_acks_classified_red_are_dropped_and_cost_goodput():
    """ACKs travel a thin reverse path with a RIO dropper: flow 0's ACKs are marked red (OUT), flow 1's green.
    Only red ACKs are dropped, and flow 0 gets less goodput than flow 1 on every seed; with both flows'
    ACKs green neither loses an ACK."""
    rev = Queue(limit=50, mode="rio", min_th=(20, 2, 2), max_th=(40, 6, 6), max_p=(0.02, 0.5, 0.5), alpha=0.02)
    for s in (1, 2):
        f = simulate(Dumbbell(n=2, access=(0.01, 0.01), rev_rate=150e3, rev=rev, ack_colour=(2, 0), duration=60,
                              warmup=10), s).flows
        assert f.ack_dropped[0] > 0 and f.ack_dropped[1] == 0
        assert f.goodput[0] < 0.9 * f.goodput[1]
        g = simulate(Dumbbell(n=2, access=(0.01, 0.01), rev_rate=150e3, rev=rev, ack_colour=(0, 0), duration=60,
                              warmup=10), s).flows
        assert g.ack_dropped.sum() == 0


def test_random_ack_loss_reduces_goodput():
    """Goodput falls as the reverse path loses more ACKs at random (0, 20, 50, 70 %; mean of two seeds):
    20 % costs little (cumulative ACKs cover for lost ones), 50 % costs more than a fifth (the window
    grows per ACK received, and timeouts multiply), 70 % leaves under a tenth (with delayed ACKs a
    small window gets about one ACK per round trip, so a round trip without any is likely)."""
    g = {}
    for al in (0.0, 0.2, 0.5, 0.7):
        runs = [simulate(Dumbbell(n=1, access=(0.02,), ack_loss=al, duration=60, warmup=10), s) for s in (1, 2)]
        g[al] = np.mean([r.goodput for r in runs])
        if al:
            assert all(r.flows.ack_dropped[0] > 0.8 * al * r.flows.ack_sent[0] for r in runs)
    assert g[0.0] > g[0.2] > g[0.5] > g[0.7]
    assert g[0.2] > 0.85 * g[0.0] and g[0.5] < 0.8 * g[0.0] and g[0.7] < 0.1 * g[0.0]


def test_goodput_excludes_retransmissions():
    """Throughput counts every data segment that reached the receiver, goodput only new bytes in order: with
    random loss the gap is the duplicates (never negative), and goodput never exceeds the payload rate."""
    r = simulate(Dumbbell(n=1, access=(0.02,), loss=0.02, duration=60, warmup=10), 2)
    f = r.flows
    assert f.goodput[0] <= f.throughput[0] + 1e-6
    assert f.goodput[0] <= 10e6 * 1460 / 1502


def test_finite_file_completes():
    """A 1000-segment file completes; its goodput-based duration is at least the transmission time."""
    r = simulate(Dumbbell(n=1, access=(0.01,), files=(1000,), duration=20, warmup=0, starts=(0.0,)), 1)
    c = r.flows.completion[0]
    assert np.isfinite(c) and c >= 1000 * 1502 * 8 / 10e6
    assert r.flows.goodput[0] * r.window == pytest.approx(1000 * 1460 * 8)


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError):
        simulate(Dumbbell(n=2, access=(0.01, 0.02, 0.03)))
    with pytest.raises(ValueError):
        simulate(Dumbbell(loss=1.5))
    with pytest.raises(ValueError):
        simulate(Dumbbell(fwd=Queue(mode="fifo")))
