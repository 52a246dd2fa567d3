"""Tests of qosbound.validation.qstp_sim and qosbound.validation.tcp_aimd: marker, TCP model, testbed runs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qosbound.validation.qstp_sim import QstpConfig, TokenBucket, replicate, simulate
from qosbound.validation.tcp_aimd import AimdSender


@settings(max_examples=100, deadline=None)
@given(gaps=st.lists(st.floats(0.0, 0.05), min_size=1, max_size=300), rate=st.floats(1e3, 1e6))
def test_token_bucket_never_marks_more_than_depth_plus_rate(gaps, rate):
    """Over any run, IN bytes <= depth + rate * elapsed time (RFC 2697-style two-colour marker)."""
    tb = TokenBucket(rate, 1e4)
    t, green = 0.0, 0.0
    for gap in gaps:
        t += gap
        if tb.mark(1000.0, t) == 0:
            green += 1000.0
    assert green <= 1e4 + rate * t + 1e-6


def test_token_bucket_conforming_stream_is_all_in():
    """A stream at most at the token rate is marked IN throughout."""
    tb = TokenBucket(50e3, 1e4)
    assert all(tb.mark(1000.0, k * 0.02) == 0 for k in range(1000))  # exactly 50 kB/s


class Loop:
    """A fixed-RTT loop for one AIMD flow: drops packets whose sequence number is in ``losses``."""

    def __init__(self, losses, rtt=0.05, capacity_pps=None):
        import heapq

        self.heapq = heapq
        self.now = 0.0
        self.h = []
        self.n = 0
        self.rtt = rtt
        self.losses = set(losses)
        self.sent = 0

    def at(self, t, fn, arg):
        self.n += 1
        self.heapq.heappush(self.h, (t, self.n, fn, arg))

    def transmit(self, flow, seq, epoch, t_send=None):
        self.sent += 1
        if seq in self.losses:
            flow.on_drop(seq, epoch)
            return
        self.at(self.now + self.rtt, lambda a: flow.on_ack(*a), (seq, epoch))

    def run(self, until):
        while self.h and self.h[0][0] <= until:
            t, _, fn, a = self.heapq.heappop(self.h)
            self.now = t
            fn(a)


def test_aimd_halves_once_per_window_and_grows_linearly():
    """Two losses in one window give one halving (NewReno-like); afterwards cwnd grows by about 1 per RTT."""
    loop = Loop(losses={100, 102})
    f = AimdSender(loop, 1, 1000.0, 0.0)
    f.ssthresh = 20.0
    loop.run(2.0)
    assert f.reductions == 1 and f.timeouts == 0
    w0 = f.cwnd
    t0 = loop.now
    loop.run(t0 + 10 * loop.rtt)
    assert f.cwnd - w0 == pytest.approx(10, abs=1.5)


def test_aimd_times_out_when_window_too_small_for_dupacks():
    """A loss with fewer than three later packets cannot be fast-retransmitted: the RTO fires, cwnd = 1."""
    loop = Loop(losses={0, 1})
    f = AimdSender(loop, 1, 1000.0, 0.0)
    loop.run(1.5)  # the initial RTO is 1 s (no RTT sample yet)
    assert f.timeouts >= 1
    loop.run(5.0)
    assert f.cwnd > 2  # it recovers after the timeout


@pytest.fixture(scope="module")
def runs():
    out = {}
    for proto in ("tfrc", "gtfrc"):
        cfg = QstpConfig(protocol=proto, n_tcp=10, duration=30.0, warmup=8.0)
        out[proto] = replicate(cfg, 4, 11)
    return out


def test_link_conservation(runs):
    """The flow plus the aggregate never exceed the 1000 kbit/s bottleneck, and keep it busy (> 90 %)."""
    for rs in runs.values():
        for r in rs:
            total = r.throughput + r.aggregate
            assert total <= 1000e3 * 1.01
            assert total >= 0.9 * 1000e3


def test_tfrc_rate_matches_equation_at_simulated_p_and_r(runs):
    """Plain TFRC's measured throughput is within 15 % of X_calc(s, R, p) at its own simulated loss event
    rate and RTT (mean over replications)."""
    rs = runs["tfrc"]
    thr = np.mean([r.throughput for r in rs])
    pred = np.nanmean([r.predicted for r in rs])
    assert thr == pytest.approx(pred, rel=0.15)


def test_gtfrc_holds_target_against_ten_flows(runs):
    """gTFRC's throughput is at least g = 400 kbit/s minus its small loss (one-sided t bound over 4 runs)."""
    from scipy import stats

    thr = np.array([r.throughput for r in runs["gtfrc"]])
    upper = thr.mean() + stats.t.ppf(0.99, len(thr) - 1) * thr.std(ddof=1) / np.sqrt(len(thr))
    assert upper >= 400e3
    assert thr.mean() >= 0.97 * 400e3


def test_same_seed_same_run_different_seeds_differ():
    """The generator is passed in: one seed reproduces a run; independent streams give different runs."""
    cfg = QstpConfig(n_tcp=3, duration=5.0, warmup=1.0)
    a = simulate(cfg, np.random.default_rng(4))
    b = simulate(cfg, np.random.default_rng(4))
    c = simulate(cfg, np.random.default_rng(5))
    assert a.throughput == b.throughput and a.aggregate == b.aggregate
    assert (a.throughput, a.aggregate) != (c.throughput, c.aggregate)


@pytest.mark.parametrize("kw", [dict(protocol="tcp"), dict(rio=(20, 10, 0.1, 20, 40, 0.02)),
                                dict(rio=(10, 20, 1.5, 20, 40, 0.02)), dict(warmup=70.0),
                                dict(rtt=0.001), dict(bucket=10.0), dict(n_tcp=-1)])
def test_config_rejects_invalid(kw):
    """Unstable or meaningless settings (min >= max, probability > 1, warmup past the end) are errors."""
    with pytest.raises(ValueError):
        QstpConfig(**kw)


def test_trace_is_fifo_and_matches_counters():
    """The trace (validation.trace schema) is FIFO at line rate: departures of kept packets increase by at
    least one transmission time, each waits at least that long, drops have no departure, and the studied
    flow's bytes departing in the window equal the measured throughput."""
    cfg = QstpConfig(n_tcp=4, duration=12.0, warmup=2.0)
    r = simulate(cfg, np.random.default_rng(8), trace=True)
    tb = r.extra["trace"]
    assert tb.schema.names == ["flow", "cls", "colour", "hint", "size", "arrival", "departure", "dropped"]
    arr = tb["arrival"].to_numpy()
    dep = tb["departure"].to_numpy(zero_copy_only=False)
    dropped = tb["dropped"].to_numpy(zero_copy_only=False)
    flow = np.array(tb["flow"].to_pylist())
    tx = cfg.size * 8 / cfg.capacity
    kept = ~dropped & np.isfinite(dep)
    assert np.all(np.isnan(dep[dropped]))
    assert np.all(np.diff(dep[kept]) >= tx * (1 - 1e-9))
    assert np.all(dep[kept] - arr[kept] >= tx * (1 - 1e-9))
    sel = kept & (flow == "flow0") & (dep >= cfg.warmup) & (dep < cfg.duration)
    assert 8 * cfg.size * sel.sum() / (cfg.duration - cfg.warmup) == pytest.approx(r.throughput, abs=8 * cfg.size)
    assert set(np.unique(tb["colour"].to_numpy())) <= {0, 2}
