"""Tests of the TSQ PRISM models (models/tsq_hint.prism, models/tsq.prism) through qosbound.models.tsq."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qosbound.errors import ModelError
from qosbound.models import engine
from qosbound.models import tsq as M
from qosbound.systems.tsq import GAIN_TOLERANCE  # the MDP long-run-average solver's relative error

SMALL = M.Abstraction(N=20, lam=0.55, p_lo=0.01, p_hi=0.3, l=4.0, slot=1e-3)


def _expected_counts(N):
    """States N + 1; three successors per state except k = 0 and k = N, where two coincide."""
    return N + 1, 3 * (N + 1) - 2


@pytest.mark.parametrize("hint", [1, 6, 16])
def test_hint_dtmc_counts_then_values_match_scipy(hint):
    """Storm's DTMC has the expected size; its long-run rewards equal a direct SciPy solution of the same chain."""
    r = M.hint_values(SMALL, hint)
    assert (r.states, r.transitions) == _expected_counts(SMALL.N)
    pi = M.stationary_scipy(M.transition_matrix(SMALL))
    k = np.arange(SMALL.N + 1, dtype=float)
    qp, pp = M._qp(SMALL, k, hint)
    assert r.values["mean_tail"] == pytest.approx(pi @ k, rel=1e-8)
    assert r.values["mean_qdelay"] == pytest.approx(pi @ qp, rel=1e-8)
    assert r.values["mean_drop"] == pytest.approx(pi @ pp, rel=1e-8)
    assert r.values["accepted"] == pytest.approx(1 - pi @ pp, rel=1e-8)


def test_storm_steady_state_equals_scipy():
    """The steady-state vector from Storm equals SciPy's for the same chain."""
    vals, pi, built = engine.steady_state(M.HINT_MODEL, {**SMALL.constants(), "d": 4}, ["k"])
    ref = M.stationary_scipy(M.transition_matrix(SMALL))
    assert np.allclose(pi[np.argsort(vals["k"])], ref, rtol=1e-8, atol=1e-12)


def test_hint_distribution_sums_to_one_and_mean_matches():
    """The accepted-delay distribution is a distribution whose mean is acc_delay / accepted."""
    d, p, _ = M.hint_distribution(SMALL, 5)
    assert p.sum() == pytest.approx(1.0)
    r = M.hint_values(SMALL, 5)
    assert d @ p == pytest.approx(r.values["acc_delay"] / r.values["accepted"], rel=1e-8)


def test_lower_hint_less_delay_more_drop():
    """Per-hint delay increases and drop decreases with the hint (Claypool, Kinicki & Kumar Figures 8-10)."""
    v = [M.hint_values(SMALL, h).values for h in (1, 4, 8, 16)]
    delays = [x["mean_qdelay"] for x in v]
    drops = [x["mean_drop"] for x in v]
    assert delays == sorted(delays) and drops == sorted(drops, reverse=True)


@pytest.mark.parametrize("bits", [1, 3, 4])
def test_mdp_counts(bits):
    """The MDP chooses the hint bit by bit: (N + 2)(2^(n+1) - 1) states (the chain's N + 1 queue lengths, plus the
    first slot at k0); one successor per bit choice (two choices below the last bit), then the slot's three
    successors (two at the ends)."""
    ab = M.Abstraction(SMALL.N, SMALL.lam, SMALL.p_lo, SMALL.p_hi, SMALL.l, SMALL.slot, bits)
    b = engine.build(M.MDP_MODEL, ab.mdp_constants(), ['R{"sqrt_law"}max=? [ LRA ]'])
    assert b.states == ab.mdp_states() == (SMALL.N + 2) * (2 ** (bits + 1) - 1)
    choice_states = (SMALL.N + 2) * (2 ** bits - 1)
    assert b.transitions == 2 * choice_states + 2 ** bits * (3 * (SMALL.N + 1) - 2 + 3)


@pytest.mark.parametrize("bits", [2, 4])
def test_mdp_best_policy_matches_direct_solve(bits):
    """Storm's best long-run square-root-law throughput equals the direct solve (greedy hint per state, which is
    optimal because the tagged flow does not change the queue), within the MDP solver's tolerance."""
    ab = M.Abstraction(SMALL.N, SMALL.lam, SMALL.p_lo, SMALL.p_hi, SMALL.l, SMALL.slot, bits)
    r = engine.check(M.MDP_MODEL, M.mdp_properties(), ab.mdp_constants())
    direct = M.best_policy_direct(ab)
    assert r.values["max_sqrt_law"] == pytest.approx(direct, rel=GAIN_TOLERANCE)
    # the renewal-reward form PRISM can check gives the same optimum (its value iteration is tighter here)
    assert r.values["cycle_sqrt_law"] / r.values["cycle_steps"] == pytest.approx(direct, rel=1e-8)


@pytest.mark.parametrize("bits", [1, 2, 3])
def test_flat_rendering_equals_bitwise_mdp(bits):
    """The one-action-per-hint MDP that no_gain checks has the same optimum and capped reachability as
    models/tsq.prism, which chooses the hint bit by bit."""
    ab = M.Abstraction(SMALL.N, SMALL.lam, SMALL.p_lo, SMALL.p_hi, SMALL.l, SMALL.slot, bits)
    g = M.no_gain(ab, goodput=True)
    assert g["states"] == SMALL.N + 1 and g["transitions"] == 2 ** bits * (3 * (SMALL.N + 1) - 2)
    r = engine.check(M.MDP_MODEL, M.mdp_properties(), ab.mdp_constants())
    assert g["max"] == pytest.approx(r.values["max_sqrt_law"], rel=GAIN_TOLERANCE)
    assert g["max_goodput"] == pytest.approx(r.values["max_goodput"], rel=GAIN_TOLERANCE)
    assert g["capped_reachable"] == (r.values["p_capped"] > 0.5)
    assert g["solver_rel_error"] <= GAIN_TOLERANCE


def test_no_gain_outside_cap_region():
    """Where no hint can be capped, the best hint policy earns exactly the FIFO square-root-law throughput."""
    ab = M.Abstraction(N=20, lam=0.55, p_lo=0.01, p_hi=0.03, l=40.0, slot=1e-3)
    g = M.no_gain(ab, goodput=True)
    assert not g["capped_reachable"]
    assert abs(g["gain"]) <= GAIN_TOLERANCE
    assert g["max_goodput"] <= g["goodput_fifo"] + 1e-9


def test_gain_inside_cap_region():
    """Where the cap binds (small l, high p), cutting in line gains square-root-law throughput, not goodput."""
    g = M.no_gain(SMALL, goodput=True)
    assert g["capped_reachable"]
    assert g["gain"] > 1e-3
    assert g["max_goodput"] <= g["goodput_fifo"] + 1e-9


@settings(max_examples=8, deadline=None)
@given(p_hi=st.floats(0.02, 0.9), l=st.floats(0.5, 50.0))
def test_gain_iff_cap_reachable(p_hi, l):
    """Over configurations, the MDP finds a gain only when some reachable state has a capped hint."""
    ab = M.Abstraction(N=12, lam=0.55, p_lo=0.01, p_hi=p_hi, l=l, slot=1e-3)
    g = M.no_gain(ab)
    if not g["capped_reachable"]:
        assert abs(g["gain"]) <= GAIN_TOLERANCE
    else:
        assert g["gain"] > -GAIN_TOLERANCE


def test_abstraction_centres_on_operating_point():
    """The abstraction's drift is zero at q_ref and pb(q_ref) = p*."""
    ab = M.abstraction(15e6, 1000, 800, 200, 0.02, 0.04, bits=3)
    pb = ab.p_lo + (ab.p_hi - ab.p_lo) * 200 / ab.N
    assert pb == pytest.approx(0.02)
    assert 2 * ab.lam * (1 - pb) == pytest.approx(1.0)
    assert ab.l == pytest.approx(75.0)
    assert ab.H == 8 and ab.constants()["nbits"] == 3
    with pytest.raises(ModelError):
        M.abstraction(15e6, 1000, 800, 200, 0.0, 0.04, bits=4)
    with pytest.raises(ModelError):
        M.abstraction(15e6, 1000, 800, 200, 0.6, 0.04, bits=4)
