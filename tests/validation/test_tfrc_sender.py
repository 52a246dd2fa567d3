"""Tests of qosbound.validation.tfrc_sender: RFC 5348 loss intervals, loss events, the sender's rate rules, both
feedback models (the kernels driven by hand; the flows on a network are in tests/validation/test_dumbbell.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qosbound.analytic import tfrc as TF
from qosbound.validation import tfrc_sender as F
from qosbound.validation.tfrc_sender import WEIGHTS, mean_loss_interval


def rfc_i_mean(i0, closed):
    """RFC 5348 5.4, written out from the text: weights 1 for i < n/2, 2(n-i)/(n+2) beyond, n = 8."""
    n = 8
    w = [1.0 if i < n / 2 else 2.0 * (n - i) / (n + 2) for i in range(n)]
    k = min(len(closed), n)
    intervals = [i0] + closed[:k]
    tot0 = sum(intervals[i] * w[i] for i in range(k))
    tot1 = sum(intervals[i + 1] * w[i] for i in range(k))
    return max(tot0, tot1) / sum(w[:k])


def state(feedback="receiver", s=1000.0, g=0.0, x_max=math.inf, base_rtt=0.04):
    Q, H = F.new_state([s], [g], [x_max], [base_rtt], [feedback])
    F.start(Q, 0, 0.0)
    return Q, H


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


@pytest.mark.parametrize("R", [0.01, 0.1, 1.0])
@pytest.mark.parametrize("x", [500.0, 5e4, 5e6])
def test_first_interval_inverse_is_the_analytic_one(R, x):
    """RFC 5348 6.3.1's synthesis: the p at which X_calc = X_recv, by bisection on the compiled equation, equals
    analytic.tfrc.max_loss_for_target (SciPy Newton) and gives X_calc(p) = X_recv back."""
    p = F.loss_rate_for(1000.0, R, x)
    assert p == pytest.approx(float(TF.max_loss_for_target(1000.0, R, x)), rel=1e-8)
    if p < 1.0:
        assert float(TF.tfrc_rate(1000.0, R, p)) == pytest.approx(x, rel=1e-9)


def test_receiver_model_one_loss_event_per_rtt():
    """A burst of losses within one RTT is one loss event: packets every 1 ms, RTT 40 ms, bursts of 5 lost packets
    every 200 give one event per burst; every lost packet is counted."""
    Q, H = state()
    bursts = 0
    for k in range(4000):
        if 100 <= k % 200 < 105:
            bursts += k % 200 == 100
            continue
        F.rx_packet(Q, H, 0, k * 1e-3 + 0.02, k, k * 1e-3, 1000.0, 0.04)
        if Q[0, F.N_RECV] == 1:
            F.make_feedback(Q, 0, 0.02, np.zeros((1, 4)), 0)
    assert Q[0, F.N_LOST] == 5 * bursts
    assert Q[0, F.N_EVENTS] == bursts
    # closed intervals: 200 packets between event starts, the open one below 200: p = 1/200 at the end
    assert Q[0, F.RP] == pytest.approx(1 / 200, rel=0.05)


def test_receiver_model_separate_events_beyond_one_rtt():
    """Two losses more than one RTT apart (by their interpolated send times) are two loss events."""
    Q, H = state()
    for k in range(200):
        if k in (50, 120):  # 70 ms apart, RTT 40 ms
            continue
        F.rx_packet(Q, H, 0, k * 1e-3 + 0.02, k, k * 1e-3, 1000.0, 0.04)
        if Q[0, F.N_RECV] == 1:
            F.make_feedback(Q, 0, 0.02, np.zeros((1, 4)), 0)
    assert Q[0, F.N_EVENTS] == 2


def test_receiver_rtt_from_the_headers_or_the_sender():
    """The receiver groups losses within the RTT it knows: the sender's current estimate (here none yet: the base RTT,
    40 ms), or with ``header_rtt`` the one the packets carry (100 ms): losses 70 ms apart are two events, or one."""
    for header, events in ((False, 2), (True, 1)):
        Q, H = F.new_state([1000.0], [0.0], [math.inf], [0.04], ["receiver"], [header])
        F.start(Q, 0, 0.0)
        for k in range(200):
            if k in (50, 120):
                continue
            F.rx_packet(Q, H, 0, k * 1e-3 + 0.02, k, k * 1e-3, 1000.0, 0.1)
            if Q[0, F.N_RECV] == 1:
                F.make_feedback(Q, 0, 0.02, np.zeros((1, 4)), 0)
        assert Q[0, F.N_EVENTS] == events
        assert F.rx_rtt(Q, 0) == (0.1 if header else 0.04)


def test_feedback_reports_receive_rate_and_echo():
    """A feedback carries the latest packet's send time, how long it was held, X_recv over the period since the
    last feedback (bytes/s) and p (RFC 5348 6.2)."""
    Q, H = state()
    assert F.rx_packet(Q, H, 0, 0.02, 0, 0.0, 1000.0, 0.0) == 2  # the first packet: feedback now, start the timer
    out = np.zeros((1, 4))
    F.make_feedback(Q, 0, 0.02, out, 0)
    for k in range(1, 11):
        F.rx_packet(Q, H, 0, 0.02 + k * 0.004, k, k * 0.004, 1000.0, 0.04)
    assert F.rx_timer_due(Q, 0)
    F.make_feedback(Q, 0, 0.065, out, 0)
    assert out[0] == pytest.approx([0.04, 0.065 - 0.06, 10 * 1000.0 / 0.045, 0.0])
    assert not F.rx_timer_due(Q, 0)  # nothing arrived since


def test_sender_slow_start_doubles_per_rtt_capped_by_twice_the_receive_rate():
    """Without loss: one packet per second until the first feedback, then W_init/R; afterwards X doubles at most
    once per RTT and never beyond 2 X_recv (RFC 5348 4.2-4.3)."""
    Q, _ = state()
    assert Q[0, F.X] == 1000.0
    F.on_feedback(Q, 0, 0.05, 0.0, 0.01, 1000.0, 0.0)
    R = Q[0, F.R]
    assert R == pytest.approx(0.04)
    assert Q[0, F.X] == pytest.approx(4000.0 / R)  # W_init = min(4s, max(2s, 4380)) = 4000 B
    x0 = Q[0, F.X]
    F.on_feedback(Q, 0, 0.06, 0.02, 0.0, 1e9, 0.0)  # within one RTT of the last doubling: no change
    assert Q[0, F.X] == x0
    F.on_feedback(Q, 0, 0.10, 0.06, 0.0, 1e9, 0.0)
    assert Q[0, F.X] == pytest.approx(2 * x0)
    F.on_feedback(Q, 0, 0.20, 0.16, 0.0, 0.6 * x0, 0.0)  # receive rate binds: 2 X_recv < 2 X
    assert Q[0, F.X] == pytest.approx(max(1.2 * x0, 4000.0 / Q[0, F.R]))


def test_nofeedback_timer_halves_not_below_the_target():
    """When no feedback arrives for max(4R, 2s/X) the sender halves X; gTFRC never below g, TFRC never below s/64."""
    for g, floor in ((0.0, 1000.0 / 64), (3000.0, 3000.0)):
        Q, _ = state(g=g)
        F.on_feedback(Q, 0, 0.05, 0.0, 0.01, 1e6, 0.01)
        x = Q[0, F.X]
        t = 0.05
        for _ in range(40):
            t = Q[0, F.NFB]  # the nofeedback timer's deadline
            F.on_send(Q, 0, t)
        assert Q[0, F.X] == pytest.approx(floor)
        assert x > floor


@settings(max_examples=50, deadline=None)
@given(g=st.floats(0.0, 1e6), p=st.floats(1e-5, 1.0), x_recv=st.floats(1.0, 1e7), R=st.floats(1e-3, 2.0))
def test_gtfrc_rate_rule(g, p, x_recv, R):
    """After every feedback with p > 0: X = max(min(max(X_calc, g), 2 X_recv), s/64) -- so at least min(g, 2 X_recv)
    and s/64, and at most 2 X_recv unless s/64 binds (Jourjon et al. 2008 eq. (2))."""
    Q, _ = state(g=g, base_rtt=R)
    F.on_feedback(Q, 0, R, 0.0, 0.0, x_recv, p)
    X = Q[0, F.X]
    assert X >= min(g, 2 * x_recv) * (1 - 1e-12)
    assert X >= 1000.0 / 64 * (1 - 1e-12)
    assert X <= max(2 * x_recv, 1000.0 / 64) * (1 + 1e-12)
    assert X == pytest.approx(max(min(max(float(TF.tfrc_rate(1000.0, R, p)), g), 2 * x_recv), 1000.0 / 64),
                              rel=1e-12)


def test_sender_model_groups_drops_within_one_rtt_and_halves_at_the_first():
    """Sender (immediate) feedback: drops within R of the current event's start are one event; the first event
    halves X; the once-per-R update then applies the equation at the sender's own p."""
    Q, H = state("sender", base_rtt=0.1)
    x0 = Q[0, F.X]
    assert x0 == pytest.approx(4000.0 / 0.1)
    for k in range(100):
        F.on_send(Q, 0, k * 1e-3)
    F.on_drop(Q, H, 0, 0.100)
    assert Q[0, F.X] == pytest.approx(x0 / 2)
    F.on_drop(Q, H, 0, 0.150)  # within R of the first: the same event
    for k in range(100, 300):
        F.on_send(Q, 0, k * 1e-3)
    F.on_drop(Q, H, 0, 0.300)
    assert Q[0, F.N_EVENTS] == 2 and Q[0, F.N_LOST] == 3
    assert list(H[0, :2]) == [200.0, 100.0]  # packets sent between event starts, most recent first
    assert F.rate_due(Q, H, 0, 0.301)  # NEXT_UPD = start + R = 0.1: due
    p = F.loss_rate(H[0], 2, 0.0)
    assert Q[0, F.X] == pytest.approx(float(TF.tfrc_rate(1000.0, 0.1, p)))
    assert not F.rate_due(Q, H, 0, 0.35)  # once per R


def test_sender_model_rate_cap():
    """X_max caps the sender (a codec's rate): slow start stops there."""
    Q, H = state("sender", x_max=8000.0, base_rtt=1.0)
    assert Q[0, F.X] == 4000.0
    t = 0.0
    for _ in range(10):
        t += 1.0
        F.rate_due(Q, H, 0, t)
    assert Q[0, F.X] == 8000.0


def test_bad_state():
    with pytest.raises(ValueError):
        F.new_state([0.0], [0.0], [math.inf], [0.1], ["receiver"])
    with pytest.raises(KeyError):
        F.new_state([1000.0], [0.0], [math.inf], [0.1], ["oracle"])
