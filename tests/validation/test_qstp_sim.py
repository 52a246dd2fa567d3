"""Tests of qosbound.validation.qstp_sim: the real-TCP aggregate, CBQ, UDP, test-bed runs (Jourjon et al. 2008) on the
dumbbell."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qosbound.validation.qstp_sim import QstpConfig, jitter, replicate, simulate


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


def test_real_tcp_aggregate_loses_and_recovers(runs):
    """The TCP aggregate is real TCP (NewReno + SACK): RIO's drops trigger fast retransmits and, with windows of a
    few segments per flow, retransmission timeouts; it recovers from both (it keeps more than the aggregate's
    400 kbit/s target over the window)."""
    for rs in runs.values():
        for r in rs:
            assert r.extra["tcp_fast_recoveries_run"] > 0
            assert r.extra["tcp_timeouts_run"] > 0
            assert r.extra["tcp_retransmitted_run"] >= r.extra["tcp_fast_recoveries_run"]
            assert r.aggregate > 400e3


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


def test_tcp_as_the_studied_flow_misses_its_target():
    """A single TCP flow marked at g = 500 kbit/s against 15 TCP flows marked at 300 kbit/s (Fig. 4(a)) stays well
    below g; it sees loss events and recovers by fast retransmit."""
    cfg = QstpConfig(protocol="tcp", target=500e3, aggregate_target=300e3, n_tcp=15, duration=40.0, warmup=15.0)
    rs = replicate(cfg, 2, 3)
    assert np.mean([r.throughput for r in rs]) < 0.95 * 500e3
    assert all(r.extra["studied_fast_recoveries"] > 0 and r.loss_event_rate > 0 for r in rs)
    assert all(math.isfinite(r.predicted) for r in rs)


@pytest.mark.parametrize("share", [0.3, 0.6])
def test_cbq_gives_each_backlogged_class_its_share(share):
    """CBQ with both classes backlogged (a greedy TCP flow against UDP at the full 1000 kbit/s): the studied flow's
    class gets its share of the link and the UDP class the rest (within 3 %)."""
    cfg = QstpConfig(protocol="tcp", n_tcp=0, scheduler="cbq", cbq_share=share, udp=((0.0, 1000e3),),
                     duration=20.0, warmup=5.0)
    r = simulate(cfg, np.random.default_rng(1))
    assert r.throughput == pytest.approx(share * 1000e3, rel=0.03)
    assert r.aggregate == pytest.approx((1 - share) * 1000e3, rel=0.03)


def test_cbq_borrow_mode_lends_the_idle_share():
    """Borrow mode: UDP at 100 kbit/s leaves its class's spare capacity to the studied flow (well above its 30 %),
    the link stays busy, and the UDP flow keeps its whole rate."""
    cfg = QstpConfig(protocol="gtfrc", target=300e3, n_tcp=0, scheduler="cbq", cbq_share=0.3,
                     udp=((0.0, 100e3),), duration=30.0, warmup=10.0)
    r = simulate(cfg, np.random.default_rng(2))
    assert r.aggregate == pytest.approx(100e3, rel=0.03)
    assert r.throughput > 600e3
    assert r.throughput + r.aggregate <= 1000e3 * 1.01


def test_udp_source_follows_its_profile():
    """The UDP CBR source sends at each rate of its profile (a paused interval sends nothing)."""
    cfg = QstpConfig(protocol="gtfrc", n_tcp=0, scheduler="cbq", udp=((0.0, 120e3), (5.0, 0.0), (8.0, 240e3)),
                     duration=12.0, warmup=1.0)
    r = simulate(cfg, np.random.default_rng(3), trace=True)
    tb = r.extra["trace"]
    flow = np.array(tb["flow"].to_pylist())
    arr = tb["arrival"].to_numpy()[flow == "udp"]
    per = np.histogram(arr, bins=np.arange(0, 13))[0] * 8 * 1500
    assert per[1:5] == pytest.approx([120e3] * 4, abs=12e3)
    assert not per[6:8].any()
    assert per[9:12] == pytest.approx([240e3] * 3, abs=12e3)


@pytest.mark.parametrize("colour, expected", [(0, {0}), (2, {2}), (-1, {0, 2})])
def test_udp_colour(colour, expected):
    """The UDP source's packets meter through the aggregate's marker (-1: IN while its 10^4-byte bucket at
    300 kbit/s holds tokens, then OUT at 1000 kbit/s) or are all IN (0) or all OUT (2)."""
    cfg = QstpConfig(protocol="tfrc", n_tcp=2, aggregate_target=300e3, udp=((1.0, 1000e3), (4.0, 0.0)),
                     udp_colour=colour, duration=6.0, warmup=1.0)
    tb = simulate(cfg, np.random.default_rng(2), trace=True).extra["trace"]
    flow = np.array(tb["flow"].to_pylist())
    assert set(np.unique(tb["colour"].to_numpy()[flow == "udp"])) == expected


def test_studied_flows_drops_per_second_match_the_trace():
    """``dropped_per_second`` and ``dropped_in_per_second`` count the studied flow's packets dropped at the
    bottleneck by arrival second, all and IN only: their sums are the trace's counts (an IN-marked UDP burst at
    the link's rate makes the flow lose IN packets)."""
    cfg = QstpConfig(protocol="tfrc", n_tcp=4, target=500e3, aggregate_target=300e3,
                     udp=((4.0, 1000e3), (8.0, 0.0)), udp_colour=0, duration=12.0, warmup=1.0)
    r = simulate(cfg, np.random.default_rng(5), trace=True)
    tb = r.extra["trace"]
    mine = np.array(tb["flow"].to_pylist()) == "flow0"
    dropped = tb["dropped"].to_numpy(zero_copy_only=False)[mine]
    colour = tb["colour"].to_numpy()[mine]
    arr = tb["arrival"].to_numpy()[mine]
    assert r.extra["dropped_per_second"].sum() == dropped.sum() == r.extra["drops_studied"]
    assert r.extra["dropped_in_per_second"].sum() == (dropped & (colour == 0)).sum() > 0
    assert r.extra["dropped_in_per_second"][4:9].sum() == (dropped & (colour == 0) & (arr >= 4) & (arr < 9)).sum()


def test_rto_floor_reaches_the_tcp_ends():
    """``rto_floor`` is the dumbbell's: the whole RTO floored (ns-2, ns-3; the default, which every committed QSTP
    result uses) or the variance term (Linux, the paper's end hosts); the rules give different runs."""
    from qosbound.validation.qstp_sim import dumbbell

    starts = np.zeros(4)
    assert dumbbell(QstpConfig(n_tcp=3), starts).rto_floor == "rto"
    assert dumbbell(QstpConfig(n_tcp=3, rto_floor="rttvar"), starts).rto_floor == "rttvar"
    cfg = QstpConfig(protocol="tcp", target=500e3, aggregate_target=300e3, n_tcp=15, duration=20.0, warmup=5.0)
    a = simulate(cfg, np.random.default_rng(6))
    b = simulate(QstpConfig(**{**cfg.__dict__, "rto_floor": "rttvar"}), np.random.default_rng(6))
    assert a.extra["tcp_timeouts_run"] != b.extra["tcp_timeouts_run"]


def test_jitter_is_mean_absolute_delay_difference():
    """jitter(): RFC 3393's IPDV mean over the packets arriving in the window."""
    d = np.array([[0.0, 0.010], [1.0, 0.014], [2.0, 0.011], [3.0, 0.020]])
    assert jitter(d, 0.0, 3.0) == pytest.approx((0.004 + 0.003 + 0.009) / 3)
    assert jitter(d, 1.0, 2.0) == pytest.approx(0.003)
    assert math.isnan(jitter(d, 2.5, 2.9))


def test_same_seed_same_run_different_seeds_differ():
    """The generator is passed in: one seed reproduces a run; independent streams give different runs."""
    cfg = QstpConfig(n_tcp=3, duration=5.0, warmup=1.0)
    a = simulate(cfg, np.random.default_rng(4))
    b = simulate(cfg, np.random.default_rng(4))
    c = simulate(cfg, np.random.default_rng(5))
    assert a.throughput == b.throughput and a.aggregate == b.aggregate
    assert (a.throughput, a.aggregate) != (c.throughput, c.aggregate)


@pytest.mark.parametrize("kw", [dict(protocol="udp"), dict(rio=(20, 10, 0.1, 20, 40, 0.02)),
                                dict(rio=(10, 20, 1.5, 20, 40, 0.02)), dict(warmup=70.0),
                                dict(rtt=0.001), dict(bucket=10.0), dict(n_tcp=-1), dict(scheduler="wfq"),
                                dict(cbq_share=1.0), dict(udp=((5.0, 1e5), (1.0, 1e5))), dict(udp=((0.0, -1.0),)),
                                dict(init_cwnd=0.5), dict(rwnd=1), dict(udp_colour=1),
                                dict(rto_floor="linux")])
def test_config_rejects_invalid(kw):
    """Unstable or meaningless settings (min >= max, probability > 1, warmup past the end, an unknown protocol or
    scheduler, a share outside (0, 1), a UDP profile out of order) are errors."""
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
