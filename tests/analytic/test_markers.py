"""Tests for qosbound.analytic.markers and the numba markers of qosbound.validation.markers."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from hypothesis import given, settings, strategies as st
from scipy import stats

from qosbound.analytic import markers as am
from qosbound.analytic.markers import poisson_fractions, slotted_marker, slotted_trtcm
from qosbound.errors import ScenarioError
from qosbound.validation import markers as vm
from qosbound.validation.markers import mark_stream, new_state
from tests.helpers import ROOT


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


# Marker colour fractions under Poisson input: the slotted chain's limit against the numba marker.


def test_general_chain_equals_the_trtcm_chain():
    """slotted_trtcm (the chain of models/marker.prism, argument order p, ip, ic, pbs, cbs, g) is the colour-blind
    trTCM case of the general slotted chain (C gains ic up to cbs, P gains ip up to pbs)."""
    for p, ip, ic, pbs, cbs, g in [(0.3, 2, 1, 16, 12, 4), (0.05, 3, 2, 20, 9, 3), (0.9, 1, 1, 5, 5, 2)]:
        a = slotted_marker("trtcm", p, g, ic, cbs, ip, pbs)
        b = slotted_trtcm(p, ip, ic, pbs, cbs, g)
        np.testing.assert_allclose(a, b, atol=1e-12)


CASES = [
    ("trtcm", dict(cir=6e5, cbs=3000, second_depth=3000, pir=9e5), (6e5, 3000, 9e5, 3000), False, (1, 0, 0)),
    ("srtcm", dict(cir=6e5, cbs=3000, second_depth=3000), (6e5, 3000, 3000, 0), False, (1, 0, 0)),
    ("trtcm", dict(cir=4e5, cbs=2000, second_depth=5000, pir=8e5), (4e5, 2000, 8e5, 5000), True, (0.5, 0.3, 0.2)),
    ("srtcm", dict(cir=8e5, cbs=2000, second_depth=6000), (8e5, 2000, 6000, 0), True, (0.6, 0.3, 0.1)),
]


@pytest.mark.parametrize("kind,kw,state,aware,pre", CASES)
def test_poisson_fractions_match_the_simulated_marker(kind, kw, state, aware, pre):
    """RFC 2697/2698 markers fed Poisson packets: numerical fractions agree with simulation within the
    numerical error estimate plus four standard errors of the simulated fractions."""
    f, err = poisson_fractions(kind, 1e6, 1000, aware=aware, pre=pre, **kw)
    assert f.sum() == pytest.approx(1.0) and np.all(f >= 0)
    rng = np.random.default_rng(11)
    n, lam = 400_000, 1e6 / 8000
    times = np.cumsum(rng.exponential(1 / lam, n))
    precol = rng.choice(3, n, p=pre).astype(np.int64)
    colours = mark_stream(kind, new_state(kind, *state), times, np.full(n, 1000.0), pre=precol, aware=aware)
    sim = np.bincount(colours, minlength=3) / n
    se = np.sqrt(sim * (1 - sim) / n)
    assert np.all(np.abs(f - sim) <= err + 4 * se + 1e-4), (f, err, sim)


def test_light_load_is_all_green_and_overload_tends_to_the_cbr_limit():
    """Far below CIR nearly every packet is green; far above, the fractions approach the smooth-input ones."""
    f, _ = poisson_fractions("trtcm", 1e5, 500, 1e6, 4000, 4000, pir=2e6)
    assert f[0] > 0.999
    f, err = poisson_fractions("trtcm", 8e6, 500, 1e6, 1000, 1000, pir=2e6)
    np.testing.assert_allclose(f, [1 / 8, 1 / 8, 6 / 8], atol=0.02 + err.max())


def test_af_scenario_with_fixed_sizes_uses_the_poisson_solution():
    """An AF class marked by a two-colour bucket, Poisson fixed-size input: colour results carry the
    discretisation-error interval and agree with the srTCM green fraction."""
    from qosbound.scenario import build
    from qosbound.systems.af import colour_fraction_error, colour_fractions

    raw = yaml.safe_load((ROOT / "examples" / "qstp2008.yaml").read_text())
    name = next(iter(raw["traffic"]))
    raw["traffic"][name]["sizes"] = "fixed"
    scn = build(raw)
    t = scn.traffic[name]
    f, src = colour_fractions(t)
    assert "Poisson input" in src and f[1] == 0.0 and f.sum() == pytest.approx(1.0)
    g, _ = poisson_fractions("srtcm", t.rate, t.size, t.marker.cir, t.marker.cbs, t.size)
    assert f[0] == pytest.approx(g[0])
    assert colour_fraction_error(t).max() > 0
