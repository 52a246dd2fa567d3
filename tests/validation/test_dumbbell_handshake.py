"""The dumbbell's TCP handshake option (``Dumbbell.handshake``, validation/dumbbell_loop.py): SYN / SYN-ACK, then
the client's HTTP request, before the server's data; a lost SYN or SYN-ACK costs the initial RTO, doubled at each
timeout; the SYN-ACK is the server's (its data's class and direction), the SYN and the request the client's (its
ACKs' class and direction)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from qosbound.validation.dumbbell import Class, Dumbbell, Queue, simulate

R, A, D = 10e6, 0.01, 0.005   # bit/s both ways, access and bottleneck one-way delays (s)
HDR = 42
ONE = Dumbbell(n=1, rate=R, files=(4,), starts=(0.0,), access=(A,), delay=D, duration=8.0, warmup=0.0,
               handshake=True, request=300)


def _lossless_times():
    """(established, retrieval) from the RTTs: SYN (42 B) to the server, SYN-ACK (42 B) back, the request (342 B)
    to the server, then four 1502-byte segments, all sent at once (initial window 10)."""
    syn_at_server = 8 * HDR / R + D + A
    established = syn_at_server + A + 8 * HDR / R + D
    request_at_server = established + 8 * (HDR + 300) / R + D + A
    return established, request_at_server + A + 4 * 8 * 1502 / R + D


def test_a_lossless_path_takes_exactly_the_handshake_the_request_and_the_transfer():
    est, done = _lossless_times()
    f = simulate(ONE, 1).flows
    assert f.established[0] == pytest.approx(est, abs=1e-12)
    assert f.completion[0] == pytest.approx(done, abs=1e-12)
    assert f.handshake_retransmissions[0] == 0 and f.handshake_drops[0] == 0
    plain = simulate(dataclasses.replace(ONE, handshake=False), 1).flows
    assert plain.established is None
    assert plain.completion[0] == pytest.approx(A + 4 * 8 * 1502 / R + D, abs=1e-12)


def _first_seed(net, want):
    """The first seed (1..400) whose run satisfies ``want(flows)``."""
    for seed in range(1, 401):
        f = simulate(net, seed).flows
        if want(f):
            return f
    raise AssertionError("no seed gives the wanted losses")


def test_a_dropped_syn_adds_the_initial_rto():
    """Random loss on the client's direction: a run where only the first SYN is lost (one retransmission, one
    handshake segment dropped, nothing else lost) is exactly 1 s (RFC 6298's initial RTO) slower."""
    est, done = _lossless_times()
    net = dataclasses.replace(ONE, ack_loss=0.5)
    f = _first_seed(net, lambda f: f.handshake_drops[0] == 1 and f.handshake_retransmissions[0] == 1
                    and f.established[0] > 1.0)
    assert f.established[0] == pytest.approx(est + 1.0, abs=1e-9)
    assert f.completion[0] == pytest.approx(done + 1.0, abs=1e-9)


def test_a_dropped_syn_ack_is_recovered_by_the_syn_after_the_initial_rto():
    """Random loss on the server's direction: only the SYN-ACK lost (no data segment lost) costs the client's SYN
    retransmission after 1 s, and a second SYN-ACK."""
    est, done = _lossless_times()
    net = dataclasses.replace(ONE, loss=0.5)
    f = _first_seed(net, lambda f: f.handshake_drops[0] == 1 and f.random_losses[0] == 0)
    assert f.handshake_retransmissions[0] == 1
    assert f.completion[0] == pytest.approx(done + 1.0, abs=1e-9)


def test_the_timeout_doubles_at_each_loss():
    """Two SYNs lost in a row: 1 s + 2 s before the third gets through."""
    est, done = _lossless_times()
    net = dataclasses.replace(ONE, ack_loss=0.5)
    f = _first_seed(net, lambda f: f.handshake_drops[0] == 2 and f.handshake_retransmissions[0] == 2
                    and f.established[0] > 3.0)
    assert f.established[0] == pytest.approx(est + 3.0, abs=1e-9)


def test_the_initial_rto_is_a_parameter():
    est, done = _lossless_times()
    net = dataclasses.replace(ONE, ack_loss=0.5, syn_rto=3.0)
    f = _first_seed(net, lambda f: f.handshake_drops[0] == 1 and f.handshake_retransmissions[0] == 1
                    and f.established[0] > 3.0)
    assert f.completion[0] == pytest.approx(done + 3.0, abs=1e-9)


def _classes(data_police, ack_police):
    return dataclasses.replace(ONE, fwd_classes=(Class("data", Queue(), police=data_police),),
                               rev_classes=(Class("acks", Queue(), police=ack_police),))


def test_the_syn_ack_takes_the_data_class_and_the_syn_the_ack_class():
    """A data class that polices everything (police 0) never lets a SYN-ACK through: the connection is never
    established and the client retransmits its SYN at 1, 3, 7 s (8-s run: three retransmissions); an ACK class
    that polices everything drops the SYNs the same way. With both classes open, the lossless times."""
    est, done = _lossless_times()
    for f in (simulate(_classes(0, 3), 1).flows, simulate(_classes(3, 0), 1).flows):
        assert np.isnan(f.established[0]) and np.isnan(f.completion[0])
        assert f.handshake_retransmissions[0] == 3 and f.handshake_drops[0] == 4
    f = simulate(_classes(3, 3), 1).flows
    assert f.completion[0] == pytest.approx(done, abs=1e-12)


def test_a_bad_initial_rto_is_refused():
    with pytest.raises(ValueError, match="syn_rto"):
        simulate(dataclasses.replace(ONE, syn_rto=0.0), 1)
