"""Tests for qosbound.validation.af_sim: the AF port simulator against the closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from qosbound.analytic.red_queue import instantaneous
from qosbound.analytic.wred import Profile
from qosbound.validation import af_sim
from qosbound.validation.trace import COLUMNS

PROF = Profile(min_th=(12, 8, 4), max_th=(24, 20, 16), P_d=(3, 3, 3), alpha=1.0)
LAM = np.array([30.0, 30.0, 30.0])
MU = 80.0


def _single(alpha=1.0, K=30, mode=0, lam=LAM, size_exp=True):
    n = 3
    return af_sim.Config(
        C=MU * 8 * 1000.0, w=np.array([1.0]), K=np.array([K]), min_th=np.array([PROF.min_th], float),
        max_th=np.array([PROF.max_th], float), max_p=np.array([PROF.max_p]), mode=np.array([mode]),
        gentle=np.array([False]), alpha=np.array([alpha]), src_cls=np.zeros(n, int), src_colour=np.arange(n),
        src_rate=np.asarray(lam, float), src_size=np.full(n, 1000.0), src_expsize=np.full(n, size_exp),
        src_cbr=np.zeros(n, bool), src_marker=np.full(n, -1), src_aware=np.zeros(n, bool),
        marker_state=np.zeros((n, 7)))


def test_alpha_one_matches_product_form():
    """With alpha = 1, Poisson arrivals and exponential sizes, each colour's simulated drop probability and
    the mean queue agree with the birth-death product form (99.9 % t-intervals over 8 replications)."""
    ref = instantaneous(LAM, MU, 30, PROF)
    reps = af_sim.replicate(_single(), 60_000, 8, seed=11, warmup=5_000)
    drops = np.array([r.drops[0] / r.arrivals[0] for r in reps])
    queue = np.array([r.queue_area[0] / r.duration for r in reps])
    t = stats.t.ppf(0.9995, len(reps) - 1)
    for est, want in ((drops, ref.drop), (queue, ref.mean_queue)):
        m, se = est.mean(axis=0), est.std(axis=0, ddof=1) / np.sqrt(len(reps))
        assert np.all(np.abs(m - want) <= t * se + 1e-12)


def test_wfq_shares_follow_weights_when_saturated():
    """Two saturated classes with weights 1:3 receive 1/4 and 3/4 of the link (CBWFQ, Takeo & Tasaka (2003) II.B)."""
    C = 1e6
    cfg = af_sim.Config(
        C=C, w=np.array([250e3, 750e3]), K=np.array([40, 40]), min_th=np.full((2, 3), 30.0),
        max_th=np.full((2, 3), 40.0), max_p=np.full((2, 3), 0.1), mode=np.zeros(2, int), gentle=np.zeros(2, bool),
        alpha=np.full(2, 1 / 512), src_cls=np.array([0, 1]), src_colour=np.zeros(2, int),
        src_rate=np.array([C / 8000, C / 8000]), src_size=np.full(2, 1000.0), src_expsize=np.zeros(2, bool),
        src_cbr=np.zeros(2, bool), src_marker=np.full(2, -1), src_aware=np.zeros(2, bool),
        marker_state=np.zeros((2, 7)))
    st = af_sim.simulate(cfg, 200_000, seed=3, warmup=20_000)
    thr = st.bits / st.duration
    assert thr.sum() == pytest.approx(C, rel=0.01)
    assert thr[1] / thr.sum() == pytest.approx(0.75, abs=0.01)


def test_idle_class_leaves_its_share_to_the_others():
    """A class alone on the link is served at the full line rate (work conservation)."""
    C = 1e6
    cfg = af_sim.Config(
        C=C, w=np.array([250e3, 750e3]), K=np.array([40, 40]), min_th=np.full((2, 3), 30.0),
        max_th=np.full((2, 3), 40.0), max_p=np.full((2, 3), 0.1), mode=np.zeros(2, int), gentle=np.zeros(2, bool),
        alpha=np.full(2, 1 / 512), src_cls=np.array([0]), src_colour=np.zeros(1, int),
        src_rate=np.array([2 * C / 8000]), src_size=np.full(1, 1000.0), src_expsize=np.zeros(1, bool),
        src_cbr=np.zeros(1, bool), src_marker=np.full(1, -1), src_aware=np.zeros(1, bool),
        marker_state=np.zeros((1, 7)))
    st = af_sim.simulate(cfg, 100_000, seed=5, warmup=10_000)
    assert st.bits[0] / st.duration == pytest.approx(C, rel=0.01)


def test_small_alpha_drops_are_ordered_by_precedence():
    """With the float EWMA (alpha = 2^-9) and nested thresholds, red loses most and green least."""
    st = af_sim.simulate(_single(alpha=2 ** -9, lam=LAM * 1.3), 200_000, seed=9, warmup=20_000)
    d = st.drops[0] / st.arrivals[0]
    assert d[2] > d[1] > d[0]


def test_trace_follows_the_schema():
    """trace_table returns the trace schema; dropped packets have no departure, others leave after arriving."""
    tab = af_sim.trace_table(_single(lam=LAM * 1.5), 5_000, seed=1, class_names=["AF1"])
    assert tuple(tab.column_names) == COLUMNS
    dropped = np.asarray(tab.column("dropped"))
    dep = tab.column("departure").to_numpy(zero_copy_only=False)
    arr = np.asarray(tab.column("arrival"))
    assert dropped.any() and (~dropped).any()
    assert np.all(np.isnan(dep[dropped]))
    kept = ~dropped & ~np.isnan(dep)
    assert np.all(dep[kept] > arr[kept])
    assert set(np.asarray(tab.column("colour"))) <= {0, 1, 2}
