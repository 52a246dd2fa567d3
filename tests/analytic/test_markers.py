"""Tests for qosbound.analytic.markers and the numba markers of qosbound.validation.markers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from qosbound.analytic import markers as am
from qosbound.errors import ScenarioError
from qosbound.validation import markers as vm


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["trtcm", "srtcm", "two-colour"]), r=st.floats(1e3, 1e8), cir=st.floats(1e3, 1e8),
       extra=st.floats(0, 1e8), aware=st.booleans(), g=st.floats(0, 1), y=st.floats(0, 1))
def test_fractions_sum_to_one(kind, r, cir, extra, aware, g, y):
    """Green, yellow and red fractions are in [0, 1] and sum to 1 for every marker and mode."""
    y = min(y, 1 - g)
    f = am.cbr_fractions(kind, r, cir, cir + extra, aware=aware, pre=(g, y, 1 - g - y))
    assert np.all((f >= -1e-12) & (f <= 1 + 1e-12))
    assert f.sum() == pytest.approx(1.0, abs=1e-9)


def test_trtcm_blind_cbr_values():
    """trTCM colour-blind at 4 Mbit/s with CIR 2, PIR 3 Mbit/s: 1/2 green, 1/4 yellow, 1/4 red (RFC 2698)."""
    np.testing.assert_allclose(am.cbr_fractions("trtcm", 4e6, 2e6, 3e6), [0.5, 0.25, 0.25])


@pytest.mark.parametrize("kind,rate,cir,second,want", [
    ("trtcm", 4e6, 2e6, 3e6, [0.5, 0.25, 0.25]),
    ("trtcm", 2.5e6, 2e6, 3e6, [0.8, 0.2, 0.0]),
    ("srtcm", 3e6, 2e6, 20000.0, [2 / 3, 0.0, 1 / 3]),
    ("two-colour", 800e3, 400e3, 0.0, [0.5, 0.0, 0.5]),
])
def test_numba_marker_matches_cbr_closed_form(kind, rate, cir, second, want):
    """A long CBR stream through the numba marker gives the closed-form long-run fractions."""
    n = 200_000
    t = np.arange(1, n + 1) * 1500 * 8 / rate
    if kind == "trtcm":
        s = vm.new_state(kind, cir, 10000, second, 20000)
    elif kind == "srtcm":
        s = vm.new_state(kind, cir, 10000, second)
    else:
        s = vm.new_state(kind, cir, 10000)
    col = vm.mark_stream(kind, s, t, 1500.0)
    frac = np.bincount(col, minlength=3) / n
    np.testing.assert_allclose(frac, want, atol=2e-3)


def test_slotted_chain_matches_numba_marker_statistically():
    """The slotted chain's (G, Y, R) lies within the replications' 99.9 % t-interval of the numba marker."""
    p, ip, ic, pbs, cbs, g = 0.5, 2, 1, 12, 8, 4
    exact = am.slotted_trtcm(p, ip, ic, pbs, cbs, g)
    rng = np.random.default_rng(2697)
    reps = []
    for _ in range(20):
        slots = np.nonzero(rng.random(20000) < p)[0] + 1.0
        # Granule = 1 byte, slot = 1 s: PIR = 8 ip bit/s, CIR = 8 ic bit/s, packets of g bytes.
        s = vm.new_state("trtcm", 8.0 * ic, cbs, 8.0 * ip, pbs)
        col = vm.mark_stream("trtcm", s, slots, float(g))
        reps.append(np.bincount(col, minlength=3) / len(col))
    reps = np.array(reps)
    m, se = reps.mean(axis=0), reps.std(axis=0, ddof=1) / np.sqrt(len(reps))
    t = stats.t.ppf(0.9995, len(reps) - 1)
    assert np.all(np.abs(m - exact) <= t * se + 1e-9)


def test_slotted_chain_fractions_sum_to_one_and_large_buckets_approach_cbr():
    """Slotted-chain fractions sum to 1; deep buckets approach the smooth-input long-run values."""
    f = am.slotted_trtcm(0.5, 3, 2, 120, 120, 4)
    assert f.sum() == pytest.approx(1.0)
    # Offered 2 granules/slot vs PIR 3 and CIR 2: nearly everything green, nothing red.
    assert f[2] < 1e-6 and f[0] > 0.9


def test_colour_aware_keeps_precolour():
    """Colour-aware trTCM never promotes a packet: a pre-red packet stays red."""
    s = vm.new_state("trtcm", 1e9, 1e6, 1e9, 1e6)
    assert vm.mark(s, 0, 0.0, 100.0, 2, True) == 2
    assert vm.mark(s, 0, 0.0, 100.0, 1, True) == 1
    assert vm.mark(s, 0, 0.0, 100.0, 0, True) == 0


def test_bad_marker_input():
    """PIR below CIR and an unknown marker are input errors."""
    with pytest.raises(ScenarioError, match="PIR"):
        am.cbr_fractions("trtcm", 1e6, 2e6, 1e6)
    with pytest.raises(ScenarioError, match="unknown marker"):
        am.cbr_fractions("tsw", 1e6, 2e6)


@settings(max_examples=100, deadline=None)
@given(gaps=st.lists(st.floats(0.0, 0.05), min_size=1, max_size=300), rate=st.floats(1e3, 1e6))
def test_two_colour_bucket_never_marks_more_than_depth_plus_rate(gaps, rate):
    """Over any run, IN (green) bytes <= depth + rate * elapsed time (the QSTP test bed's two-colour marker; rate in
    bytes/s)."""
    state = vm.new_state("two-colour", 8.0 * rate, 1e4)
    t, green = 0.0, 0.0
    for gap in gaps:
        t += gap
        if vm.mark(state, vm.TWO_COLOUR, t, 1000.0, 0, False) == 0:
            green += 1000.0
    assert green <= 1e4 + rate * t + 1e-6


def test_two_colour_bucket_conforming_stream_is_all_in():
    """A stream at most at the token rate is marked IN (green) throughout."""
    state = vm.new_state("two-colour", 8.0 * 50e3, 1e4)
    assert all(vm.mark(state, vm.TWO_COLOUR, k * 0.02, 1000.0, 0, False) == 0 for k in range(1000))  # 50 kB/s
