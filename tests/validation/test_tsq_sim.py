"""Tests of qosbound.validation.tsq_sim: the treap, TSQ insertion over PI, and theory checks."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from qosbound.analytic import tsq as A
from qosbound.errors import ScenarioError
from qosbound.validation.pi_aqm import PIParams
from qosbound.validation.tsq_sim import Flow, SimConfig, flow_stats, simulate, to_trace, treap_kernels


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.floats(0, 10), st.integers(1, 1500)), min_size=1, max_size=200),
       probe=st.floats(0, 10))
def test_treap_matches_sorted_list(ops, probe):
    """Inserting and popping the minimum matches a sorted list; bytes-before-a-weight matches a prefix sum."""
    new, ins, pop, bb = treap_kernels()
    kw, ks, pr, lc, rc, nb, sb, pay, free, st_ = new(256)
    path = np.zeros(512, dtype=np.int64)
    ref = []
    for i, (do_insert, w, size) in enumerate(ops):
        if do_insert or not ref:
            ins(kw, ks, pr, lc, rc, nb, sb, pay, free, st_, w, i, size, i, path)
            ref.append((w, i, size))
            ref.sort()
        else:
            pid, b = pop(kw, ks, lc, rc, nb, sb, pay, free, st_)
            w0, i0, s0 = ref.pop(0)
            assert (pid, b) == (i0, s0)
        assert sb[st_[0]] == sum(s for _, _, s in ref)
        assert st_[2] == len(ref)
    assert bb(kw, ks, lc, rc, nb, sb, st_, probe, 10**9) == sum(s for w, _, s in ref if w <= probe)  # ties: earlier arrival first


def _cbr_cfg(rates, hints, C=2e6, duration=20.0, tsq=True, q_ref=50, q_max=200):
    flows = tuple(Flow(f"f{i}", "cbr", r, 500, h, 0.1) for i, (r, h) in enumerate(zip(rates, hints)))
    return SimConfig(C, flows, duration, PIParams(q_ref=q_ref, q_max=q_max), tsq=tsq)


def test_all_max_hints_is_fifo():
    """With every packet at hint 2^n each arrival joins the tail: q' = t_d and delay = t_d exactly."""
    out = simulate(_cbr_cfg([1.2e6, 1.2e6], [16, 16], duration=5.0), seed=3)
    assert np.allclose(out.q_ins, out.t_d, rtol=1e-9, atol=1e-12)
    ok = ~out.dropped & np.isfinite(out.departure)
    wait = out.departure[ok] - out.arrival[ok] - out.size[ok] * 8 / out.capacity
    assert np.allclose(wait, out.t_d[ok], rtol=1e-7, atol=1e-9)


def test_no_tsq_is_fifo():
    """With TSQ off, low hints do not cut in line: delay = t_d and p' = p."""
    out = simulate(_cbr_cfg([1.2e6, 1.2e6], [1, 16], duration=5.0, tsq=False), seed=4)
    ok = ~out.dropped & np.isfinite(out.departure)
    wait = out.departure[ok] - out.arrival[ok] - out.size[ok] * 8 / out.capacity
    assert np.allclose(wait, out.t_d[ok], rtol=1e-7, atol=1e-9)


def test_recorded_drop_is_the_adjustment():
    """Every recorded p' is at least its AQM p' for a tail packet and follows eq. (5) in q, q'."""
    out = simulate(_cbr_cfg([1.2e6, 1.2e6], [1, 16], duration=5.0), seed=5)
    low = out.flow == 0
    # p = p' * ((l + q')/(l + q))^2 must be a probability, identical for packets at the same PI sample
    p_back = out.p_adj * ((0.04 + out.q_ins) / (0.04 + out.t_d)) ** 2
    assert np.all(p_back[out.p_adj < 1] <= 1 + 1e-12)
    assert np.all(out.p_adj[low] >= 0) and np.all(out.p_adj <= 1)
    assert np.all(out.q_ins <= out.t_d + 1e-12)


def test_per_packet_aging_bound():
    """Every packet waits at most t_d + A/C, A = bits accepted within d t_d / 2^n of its arrival (the aging term)."""
    out = simulate(_cbr_cfg([0.9e6, 0.9e6, 0.5e6], [1, 5, 16], duration=8.0), seed=6)
    C = out.capacity
    acc = ~out.dropped & np.isfinite(out.departure)
    t_acc = out.arrival[acc]
    cum = np.r_[0.0, np.cumsum(out.size[acc] * 8.0)]
    ok = acc
    wait = out.departure[ok] - out.arrival[ok] - out.size[ok] * 8 / C
    ends = out.arrival[ok] + out.hint[ok] * out.t_d[ok] / 16
    i0 = np.searchsorted(t_acc, out.arrival[ok], side="right")
    i1 = np.searchsorted(t_acc, ends, side="left")
    bits = cum[np.maximum(i1, i0)] - cum[i0]
    bound = out.t_d[ok] + bits / C  # delay_bound_window_expr: t_d + A/C
    assert np.all(wait <= bound + 1e-9)
    # and the buffer form of the closed-form bound
    t_max = (200 + 1) * 500 * 8 / C
    assert np.all(wait <= A.delay_bound(out.hint[ok], t_max, C, 0.0, C) + 1e-9)


@pytest.mark.parametrize("over", [1.02, 1.05])
def test_pi_drops_the_excess_of_unresponsive_overload(over):
    """CBR overload r C: PI keeps the link busy and drops just the excess, a fraction 1 - 1/r, without filling the buffer."""
    out = simulate(_cbr_cfg([over * 1e6, over * 1e6], [16, 16], duration=100.0), seed=7)
    late = out.arrival >= 10.0
    assert out.dropped.mean() == pytest.approx(1 - 1 / over, rel=0.25)
    done = late & ~out.dropped & np.isfinite(out.departure)
    assert out.size[done].sum() * 8 / (out.capacity * (out.duration - 10.0)) > 0.99  # the link never idles
    tail_drops = late & out.dropped & (out.p_adj < 1e-3)
    assert tail_drops.sum() <= 0.01 * late.sum()  # the AQM, not the buffer, does the dropping
    k = len(out.q_trace) // 2
    assert 0 < out.q_trace[k:].mean() < 0.75 * 200


def test_low_hint_lowers_delay_raises_drop():
    """Over 6 replications a hint-2 flow waits less and is dropped more than the hint-16 flows (one-sided t-tests)."""
    d_lo, d_hi, p_lo, p_hi = [], [], [], []
    for seed in range(6):
        out = simulate(_cbr_cfg([0.1e6, 1.2e6, 1.2e6], [2, 16, 16], duration=15.0), seed=100 + seed)
        a, b = flow_stats(out, 0, 5.0), flow_stats(out, 1, 5.0)
        d_lo.append(a["delay_mean"]), d_hi.append(b["delay_mean"]), p_lo.append(a["drop"]), p_hi.append(b["drop"])
    assert stats.ttest_rel(d_lo, d_hi, alternative="less").pvalue < 0.01
    assert stats.ttest_rel(p_lo, p_hi, alternative="greater").pvalue < 0.01


def test_tfrc_senders_fill_link():
    """Responsive TFRC senders use the link (> 90 %) and PI keeps the queue near q_ref."""
    flows = tuple(Flow(f"b{i}", "tfrc", 10e6, 1000, 16, 0.1) for i in range(10))
    out = simulate(SimConfig(5e6, flows, 40.0, PIParams(q_ref=50, q_max=200)), seed=8)
    thr = sum(flow_stats(out, i, 10.0)["throughput"] for i in range(10))
    assert thr > 0.9 * 5e6
    k = len(out.q_trace) // 4
    assert 20 < out.q_trace[k:].mean() < 120  # PI's integral action is slow; the buffer is 200


def test_trace_schema():
    """The run converts to the one trace schema with hints and drops."""
    out = simulate(_cbr_cfg([1.2e6, 1.2e6], [3, 16], duration=1.0), seed=9)
    t = to_trace(out)
    assert t.num_rows == len(out.arrival)
    assert set(t.column("hint").to_pylist()) == {3, 16}
    assert t.column("departure").null_count == int((out.dropped | ~np.isfinite(out.departure)).sum())


def test_bad_config():
    """Bad flows are errors."""
    with pytest.raises(ScenarioError):
        Flow("x", "udp", 1e6)
    with pytest.raises(ScenarioError):
        simulate(_cbr_cfg([1e6], [17], duration=1.0))


def _tcp_out(rtt=0.1, n=10, duration=40.0, **kw):
    flows = tuple(Flow(f"t{i}", "tcp", 50e6, 1000, 16, rtt) for i in range(n))
    return simulate(SimConfig(5e6, flows, duration, PIParams(q_ref=50, q_max=200), **kw), seed=8)


def test_tcp_bulk_flows_fill_the_link_fairly_and_follow_the_square_root_law():
    """TCP bulk senders (validation.tcp's NewReno + SACK, delayed ACKs) keep the link busy, PI holds the queue near
    q_ref, they share fairly, and each one's rate is the square-root law's MSS/R sqrt(3/(2 b p)) with b = 2
    (delayed ACKs) within 25 %."""
    out = _tcp_out()
    st = [flow_stats(out, i, 10.0) for i in range(10)]
    thr = np.array([s["throughput"] for s in st])
    assert thr.sum() > 0.95 * 5e6
    k = len(out.q_trace) // 4
    assert 30 < out.q_trace[k:].mean() < 80
    assert thr.sum() ** 2 / (10 * (thr ** 2).sum()) > 0.9
    p = np.mean([s["drop"] for s in st])
    rtt = 0.1 + np.mean([s["delay_mean"] for s in st]) + 8000 / 5e6
    assert thr.mean() == pytest.approx(8000 / rtt * np.sqrt(3 / (4 * p)), rel=0.25)
    assert out.tcp["recoveries"].sum() > 0 and set(out.tcp["flows"]) == set(range(10))


def test_tcp_losses_are_recovered_by_retransmission():
    """Every segment a TCP flow loses at the router is sent again: retransmissions at least match the drops."""
    out = _tcp_out(duration=20.0)
    early = out.dropped & (out.arrival < out.duration - 2.0)  # losses old enough to be detected (RTO <= 2 s here)
    drops = np.bincount(out.flow[early], minlength=10)
    assert drops.sum() > 0 and np.all(out.tcp["retransmitted"] >= drops)
    arrived = np.bincount(out.flow, minlength=10)
    assert np.all(out.tcp["sent"] >= arrived) and np.all(out.tcp["sent"] - arrived <= 64)  # at most rwnd in flight


def test_low_hint_cuts_in_line_ahead_of_tcp_bulk_flows():
    """Section 4.2's mechanism with TCP bulk transfers: a hint-1 TCP-friendly flow waits less than the bulk flows
    and is dropped more (its adjusted drop p')."""
    flows = tuple(Flow(f"t{i}", "tcp", 50e6, 1000, 16, 0.1) for i in range(8)) + (Flow("a", "tfrc", 128e3, 1000, 1,
                                                                                        0.1),)
    out = simulate(SimConfig(5e6, flows, 30.0, PIParams(q_ref=50, q_max=200)), seed=11)
    a, b = flow_stats(out, 8, 8.0), flow_stats(out, 0, 8.0)
    assert a["delay_mean"] < 0.3 * b["delay_mean"]
    assert a["drop"] > b["drop"]


def test_bad_tcp_config():
    """A TCP flow with no receive window is refused with one line."""
    with pytest.raises(ScenarioError, match="rwnd"):
        _tcp_out(duration=1.0, tcp_rwnd=0)


def test_the_simulator_is_loaded_from_numbas_disk_cache_in_a_later_process():
    """The kernel and everything it calls are cached on disk (the SymPy forms compiled into it): a second process
    with the same NUMBA_CACHE_DIR loads the compiled simulator instead of compiling it again (which took ~8 s of
    CPU per process when the kernel was built in a closure, uncacheable)."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json; from qosbound.validation.pi_aqm import PIParams; "
            "from qosbound.validation import tsq_sim as S; "
            "S.simulate(S.SimConfig(2e6, (S.Flow('a', 'cbr', 1e6, 500, 4, 0.1), S.Flow('b', 'tfrc', 2e6, 1000, 16, "
            "0.1)), 2.0, PIParams()), seed=3); st = S._run_kernel.stats; "
            "print(json.dumps([sum(st.cache_hits.values()), sum(st.cache_misses.values())]))")
    env = dict(os.environ)
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    hits, misses = json.loads(runs[1].stdout)
    assert hits >= 1 and misses == 0
