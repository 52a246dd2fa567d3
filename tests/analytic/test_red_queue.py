"""Tests for qosbound.analytic.red_queue: finite queues with per-colour, queue-dependent admission."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from qosbound.analytic import red_queue as rq
from qosbound.analytic.wred import Profile, TAKEO_TABLE_I
from qosbound.errors import ScenarioError

LAM = np.array([30.0, 30.0, 30.0])
MU = 80.0


def test_product_form_equals_the_composition_chain_for_wred():
    """For WRED the (n0, n1, n2) chain lumps to the birth-death chain: same drops and mean queue."""
    bd = rq.instantaneous(LAM, MU, 40, dataclasses.replace(TAKEO_TABLE_I, min_th=(14, 10, 6), max_th=(30, 24, 18)))
    ch = rq.composition_chain(LAM, MU, 40, dataclasses.replace(TAKEO_TABLE_I, min_th=(14, 10, 6),
                                                                max_th=(30, 24, 18)))
    np.testing.assert_allclose(ch.drop, bd.drop, rtol=1e-9, atol=1e-13)
    assert ch.mean_queue == pytest.approx(bd.mean_queue, rel=1e-9)


def test_no_early_drop_reduces_to_mm1k():
    """With min_th at the buffer size only the full buffer drops: the M/M/1/K formula (Kleinrock 3.6)."""
    K = 20
    prof = Profile(min_th=(K - 0.5,) * 3, max_th=(K,) * 3, P_d=(1, 1, 1))
    s = rq.instantaneous(np.array([20.0, 10.0, 5.0]), 50.0, K, prof)
    rho = 35.0 / 50.0
    pik = float(rq.PI_MM1K.subs({rq.rho: rho, rq.n_sym: K, rq.K_sym: K}))
    np.testing.assert_allclose(s.drop, pik, rtol=1e-9)
    assert s.mean_queue == pytest.approx(float(rq.L_MM1K.subs({rq.rho: rho, rq.K_sym: K})), rel=1e-9)


def test_littles_law_holds():
    """Mean delay over admitted packets times the admitted rate equals the mean queue (Little)."""
    s = rq.instantaneous(LAM, MU, 64, TAKEO_TABLE_I)
    acc = LAM * (1 - s.drop)
    assert float(acc @ s.delay) == pytest.approx(s.mean_queue, rel=1e-9)
    assert s.pi.sum() == pytest.approx(1.0)


@settings(max_examples=25, deadline=None)
@given(load=st.floats(0.2, 3.0))
def test_drop_is_monotone_in_precedence_for_nested_thresholds(load):
    """Nested thresholds give drop(AFx3) >= drop(AFx2) >= drop(AFx1) at any load (alpha -> 1)."""
    s = rq.instantaneous(LAM * load, MU, 64, TAKEO_TABLE_I)
    assert s.drop[2] >= s.drop[1] - 1e-12 >= s.drop[0] - 2e-12
    assert np.all((s.drop >= 0) & (s.drop <= 1))


@settings(max_examples=15, deadline=None)
@given(a=st.floats(0.2, 3.0), b=st.floats(0.2, 3.0))
def test_drop_grows_with_load(a, b):
    """More offered load never lowers a colour's drop probability (birth-death monotonicity)."""
    x, y = sorted((a, b))
    s1 = rq.instantaneous(LAM * x, MU, 64, TAKEO_TABLE_I)
    s2 = rq.instantaneous(LAM * y, MU, 64, TAKEO_TABLE_I)
    assert np.all(s2.drop >= s1.drop - 1e-12)


def test_fixed_average_is_a_fixed_point():
    """The fixed-average solution's average equals the mean queue of the M/M/1/K it induces."""
    s = rq.fixed_average(LAM, MU, 64, TAKEO_TABLE_I)
    assert s.averages[2] == pytest.approx(s.mean_queue, rel=1e-6)


def test_fixed_average_at_a_threshold_jump_is_consistent():
    """An overloaded class whose average sits on max_th: the mean queue equals that threshold."""
    lam = np.array([65.0, 65.0, 0.0])
    s = rq.fixed_average(lam, 75.0, 64, TAKEO_TABLE_I)
    assert s.mean_queue == pytest.approx(40.0, rel=1e-6)
    assert s.drop[2] == pytest.approx(1.0) and s.drop[1] < 1


@pytest.mark.parametrize("mode", ["rio", "nred"])
def test_rio_and_nred_fixed_average_runs_and_orders(mode):
    """RIO and n-RED fixed averages give probabilities in [0, 1] with red dropped most."""
    prof = Profile(min_th=(20, 10, 10), max_th=(40, 20, 20), P_d=(50, 10, 10), mode=mode)
    s = rq.fixed_average(LAM * 1.5, MU, 50, prof)
    assert np.all((s.drop >= 0) & (s.drop <= 1))
    assert s.drop[2] >= s.drop[0] - 1e-12


def test_ratio_is_symbolic():
    """The birth-death ratio is one SymPy expression in the three arrival rates and mu."""
    assert {rq.lam0, rq.lam1, rq.lam2, rq.mu} <= rq.RATIO.free_symbols
    assert isinstance(rq.RATIO, sp.Expr)


def test_thresholds_above_the_buffer_act_only_below_it():
    """A max_th above the buffer K (as IOS accepts it) is solved, not refused: the buffer limit drops first,
    and below K the profile's ramp applies unchanged -- the solution is the birth-death chain written directly
    with admission 1 - P(n) for n < K (the ramp of the given thresholds) and 0 at K."""
    K = 30
    prof = Profile(min_th=(20, 10, 5), max_th=(50, 45, 40), P_d=(10, 10, 10))
    s = rq.instantaneous(LAM, MU, K, prof)
    adm = [[1.0 - (0 if n < prof.min_th[c] else (n - prof.min_th[c]) / (prof.P_d[c] * (prof.max_th[c]
            - prof.min_th[c]))) for n in range(K)] + [0.0] for c in range(3)]
    birth = [sum(LAM[c] * adm[c][n] for c in range(3)) for n in range(K)]
    pi = np.cumprod([1.0] + [b / MU for b in birth])
    pi /= pi.sum()
    for c in range(3):
        assert s.drop[c] == pytest.approx(1.0 - sum(pi[n] * adm[c][n] for n in range(K + 1)), rel=1e-10)
    assert s.drop[2] < 1.0 / prof.P_d[2] + pi[K]  # the ramp never reaches 1 / P_d below K


def test_mm1k_forms_for_heavy_load_are_the_same_formulas():
    """PI_MM1K and L_MM1K divided through by rho^(K+1) are identical expressions (SymPy), and evaluate without
    overflow at a buffer of a million packets in overload, where the direct forms give inf/inf."""
    import sympy as sp

    assert sp.simplify(rq.L_MM1K - rq.L_MM1K_HEAVY) == 0
    assert sp.simplify(rq.PI_MM1K - rq.PI_MM1K_HEAVY) == 0
    for r in (0.5, 0.999, 1.0, 1.001, 2.0):
        assert rq.mm1k_mean(r, 20) == pytest.approx(float(rq.L_MM1K.subs({rq.rho: r, rq.K_sym: 20})) if r != 1.0
                                                    else 10.0, rel=1e-9)
    L = rq.mm1k_mean(1.5, 1_000_000)
    assert math.isfinite(L) and L == pytest.approx(1_000_001 - 1.5 / 0.5, rel=1e-12)
    pi = rq.mm1k_distribution(1.5, 1_000_000)
    assert np.isfinite(pi).all() and pi.sum() == pytest.approx(1.0) and pi[-1] == pytest.approx(1 / 3, rel=1e-9)
