"""Tests of qosbound.validation.tfrc_sender: RFC 5348 loss intervals, loss events, the sender's rate rules."""

from __future__ import annotations

import heapq

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qosbound.analytic.tfrc import tfrc_rate
from qosbound.validation.tfrc_sender import WEIGHTS, TfrcReceiver, TfrcSender, mean_loss_interval


def rfc_i_mean(i0, closed):
    """RFC 5348 5.4, written out from the text: weights 1 for i < n/2, 2(n-i)/(n+2) beyond, n = 8."""
    n = 8
    w = [1.0 if i < n / 2 else 2.0 * (n - i) / (n + 2) for i in range(n)]
    k = min(len(closed), n)
    intervals = [i0] + closed[:k]
    tot0 = sum(intervals[i] * w[i] for i in range(k))
    tot1 = sum(intervals[i + 1] * w[i] for i in range(k))
    return max(tot0, tot1) / sum(w[:k])


def test_weights_are_rfc5348():
    """The 8 weights are 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2 (RFC 5348 5.4)."""
    assert WEIGHTS == pytest.approx((1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2))


@settings(max_examples=200, deadline=None)
@given(i0=st.integers(0, 10_000), closed=st.lists(st.integers(1, 10_000), min_size=1, max_size=12))
def test_mean_loss_interval_matches_rfc(i0, closed):
    """I_mean equals RFC 5348's formula and lies between the smallest and largest interval it uses."""
    got = mean_loss_interval(i0, list(map(float, closed)))
    assert got == pytest.approx(rfc_i_mean(i0, closed), rel=1e-12)
    used = closed[:8]
    assert min(used) * 0 <= got <= max(used + [i0]) * (1 + 1e-12)
    # a longer open interval never lowers the mean interval (so never raises p)
    assert mean_loss_interval(i0 + 100, list(map(float, closed))) >= got - 1e-9


def test_mean_loss_interval_needs_history():
    """Without any closed interval there is no loss event rate."""
    with pytest.raises(ValueError):
        mean_loss_interval(10, [])


class Pipe:
    """A test network: constant one-way delays, losses from a rule, feedback never lost."""

    def __init__(self, rng, drop, d_fwd=0.02, d_back=0.02):
        self.now = 0.0
        self.heap = []
        self.n = 0
        self.rng = rng
        self.drop = drop
        self.d_fwd = d_fwd
        self.delivered = []  # (time, bytes)

    def at(self, t, fn, arg):
        self.n += 1
        heapq.heappush(self.heap, (t, self.n, fn, arg))

    def transmit(self, flow, seq, epoch, t_send):
        if self.drop(self, seq):
            return
        self.at(self.now + self.d_fwd, self._arrive, (flow, seq, t_send))

    def _arrive(self, a):
        flow, seq, t_send = a
        self.delivered.append((self.now, flow.s))
        flow.receiver.on_packet(seq, t_send, flow.s)

    def run(self, until):
        while self.heap and self.heap[0][0] <= until:
            t, _, fn, arg = heapq.heappop(self.heap)
            self.now = t
            fn(arg)


def make(rng, drop, target=None, s=1000.0):
    net = Pipe(rng, drop)
    snd = TfrcSender(net, 0, s, 0.0, target=target)
    snd.receiver = TfrcReceiver(net, snd, 0.02, 0.04)
    return net, snd


def rate_after(net, t0, t1):
    return sum(b for t, b in net.delivered if t0 <= t < t1) / (t1 - t0)


def test_no_loss_slow_start_fills_nothing_but_grows():
    """Without losses p stays 0 and the rate grows by slow start (doubling per RTT, capped by 2 X_recv)."""
    net, snd = make(np.random.default_rng(1), lambda n, k: False)
    net.run(0.3)
    assert snd.p == 0.0
    assert snd.X > 50 * snd.s  # far above the initial one packet per second
    grown = [x for (t, _, _, x) in snd.samples]
    assert all(b <= 2 * a * (1 + 1e-9) or a < snd.w_init_rate for a, b in zip(grown, grown[1:]))


def test_equation_rate_under_bernoulli_loss():
    """Under independent losses the sender's long-run rate is close to X_calc(s, R, p) at its own p and R:
    the TFRC control loop settles on the equation (mean over feedbacks within 20 %)."""
    rng = np.random.default_rng(5)
    net, snd = make(rng, lambda n, k: n.rng.random() < 0.02)
    net.run(120.0)
    late = [(t, R, p, X) for (t, R, p, X) in snd.samples if t > 30 and p > 0]
    assert len(late) > 100
    X = np.mean([x for *_, x in late])
    pred = np.mean([float(tfrc_rate(snd.s, R, p)) for _, R, p, _ in late])
    assert X == pytest.approx(pred, rel=0.2)
    # the loss event rate is below the packet loss rate (several losses may form one event) but close at 2 %
    assert 0.01 < snd.receiver.p < 0.03


def test_one_loss_event_per_rtt():
    """A burst of losses within one RTT is one loss event: bursts of 5 consecutive drops every 200 packets
    give one event per burst."""
    def drop(n, k):
        return 100 <= k % 200 < 105

    net, snd = make(np.random.default_rng(2), drop)
    net.run(60.0)
    rcv = snd.receiver
    bursts = sum(1 for k in range(snd.next_seq) if k % 200 == 100 and k + 5 < snd.next_seq)
    assert rcv.lost >= 5 * bursts > 0
    assert rcv.loss_events in (bursts, bursts + 1)


def test_gtfrc_holds_target_where_tfrc_cannot():
    """At a 10 % loss rate X_calc is far below a 100 kB/s target: gTFRC still sends at about g (minus the
    losses), TFRC at X_calc."""
    g = 100e3
    res = {}
    for tgt in (None, g):
        net, snd = make(np.random.default_rng(3), lambda n, k: n.rng.random() < 0.1, target=tgt)
        net.run(60.0)
        res[tgt] = rate_after(net, 20.0, 60.0)
    assert res[g] >= 0.8 * g
    assert res[None] < 0.5 * g
    xc = float(tfrc_rate(1000.0, 0.04, 0.1))
    assert xc < 0.5 * g


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), q=st.floats(0.01, 0.3))
def test_gtfrc_rate_rule(seed, q):
    """After every feedback with p > 0, gTFRC's X is at least min(g, 2 X_recv) and at least s/64."""
    g = 50e3
    net, snd = make(np.random.default_rng(seed), lambda n, k: n.rng.random() < q, target=g)
    xr = []
    orig = snd.on_feedback

    def spy(info):
        orig(info)
        xr.append((info[2], info[3], snd.X))

    snd.on_feedback = spy
    snd.receiver.sender = snd
    net.run(10.0)
    for x_recv, p, X in xr:
        if p > 0:
            assert X >= min(g, 2 * x_recv) * (1 - 1e-12)
            assert X >= snd.s / 64
