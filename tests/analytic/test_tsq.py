"""Tests of qosbound.analytic.tsq: the cut-in-line weight, the drop adjustment and its proofs (Claypool, Kinicki & Kumar)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qosbound.analytic import tsq as A

DATA = A.reference_data()
L = DATA["tsq"]["latency_constant_s"]["value"]

probs = st.floats(1e-6, 1.0)
delays = st.floats(0.0, 2.0)


def test_identity_uncapped_is_proved():
    """Uncapped, T' = K/((l+q') sqrt(p')) equals T = K/((l+q) sqrt(p)) symbolically (Claypool, Kinicki & Kumar eq. (3)-(5))."""
    assert A.prove_identity()


def test_adjustment_never_lowers_drop_is_proved():
    """For q' <= q, p'_uncapped >= p (SymPy, with q = q' + e, e >= 0)."""
    assert A.prove_drop_not_decreased()


def test_cap_region_equals_gain_region_is_proved():
    """The cap p' = 1 binds exactly where the square-root law predicts T' > T: q' < (l+q) sqrt(p) - l."""
    assert A.prove_cap_equals_gain()


def test_max_hint_is_fifo_is_proved():
    """A hint-2^n packet among hint-2^n packets joins the tail and keeps p' = p."""
    assert A.prove_hint_max_unchanged()


def test_bound_monotone_is_proved():
    """The worst-case delay bound grows with hint, drain time, burst and rate."""
    assert A.prove_bound_monotone()


def test_pi_fixed_point_is_q_ref():
    """PI holds p steady with a steady queue only at q = q_ref."""
    assert A.pi_fixed_point() == [A.q_ref]


@settings(max_examples=200, deadline=None)
@given(q=delays, frac=st.floats(0.0, 1.0), p=probs)
def test_drop_adjustment_properties(q, frac, p):
    """p <= p' <= 1; outside the cap T' = T; inside the cap T' > T (Claypool, Kinicki & Kumar eq. (5))."""
    qp = q * frac
    pp = float(A.adjusted_drop(q, qp, p, L))
    assert p * (1 - 1e-12) <= pp <= 1.0
    T = float(A.throughput(q, p, L))
    T2 = float(A.throughput_tsq(q, qp, p, L))
    thr = (L + q) * np.sqrt(p) - L
    if qp > thr * (1 + 1e-9) + 1e-12:
        assert T2 == pytest.approx(T, rel=1e-9)
    elif qp < thr * (1 - 1e-9) - 1e-12:
        assert pp == 1.0
        assert T2 > T


@settings(max_examples=100, deadline=None)
@given(h=st.integers(1, 16), q=st.floats(0.001, 1.0))
def test_cap_min_drop_matches_region(h, q):
    """cap_min_drop is the p at which a hint-d packet's p' reaches 1 (q' = d q/16)."""
    pc = float(A.cap_min_drop(h, q, L))
    qp = float(A.insertion_delay(h, q))
    assert float(A.adjusted_drop(q, qp, min(1.0, pc * 1.001), L)) == pytest.approx(1.0)
    if pc * 0.999 > 0:
        assert float(A.adjusted_drop(q, qp, pc * 0.999, L)) < 1.0


def test_cap_region_for_seed_parameters():
    """At the seed's PI target (200 x 1000 B at 15 Mbit/s = 106.7 ms), hint 1 is capped above p = 0.101; hint 16 never."""
    q = 200 * 1000 * 8 / 15e6
    pc = A.cap_min_drop(np.arange(1, 17), q, L)
    assert pc[0] == pytest.approx(((0.04 + q / 16) / (0.04 + q)) ** 2)
    assert 0.10 < pc[0] < 0.102
    assert pc[-1] == pytest.approx(1.0)
    assert np.all(np.diff(pc) > 0)


@settings(max_examples=100, deadline=None)
@given(d=st.integers(1, 16), td=st.floats(0, 1), ta=st.floats(0, 100))
def test_weight_between_arrival_and_tail(d, td, ta):
    """t_a <= w <= t_a + t_d, with equality at the tail for hint 2^n (Claypool, Kinicki & Kumar eq. (2))."""
    w = float(A.weight(d, td, ta))
    assert ta <= w <= ta + td + 1e-12
    if d == 16:
        assert w == pytest.approx(ta + td)


def test_numba_forms_equal_numpy_forms():
    """The numba functions compiled from the SymPy expressions agree with the vectorised ones."""
    wf, pf, pif = A.numba_functions()
    assert wf(3.0, 0.2, 1.0, 4.0) == pytest.approx(float(A.weight(3, 0.2, 1.0)))
    assert pf(0.1, 0.02, 0.03, L) == pytest.approx(float(A.adjusted_drop(0.1, 0.02, 0.03, L)))
    assert pif(0.01, 210.0, 205.0, 200.0, 1.822e-5, 1.816e-5) == pytest.approx(0.01 + 1.822e-5 * 10 - 1.816e-5 * 5)


@settings(max_examples=50, deadline=None)
@given(d=st.integers(1, 16), t=st.floats(0.001, 1.0))
def test_delay_bound_closed_form(d, t):
    """With the buffer envelope (sigma = 0 at the full buffer, rho = C) the bound is t_max (1 + d/16)."""
    C = 15e6
    assert float(A.delay_bound(d, t, C, 0.0, C)) == pytest.approx(t * (1 + d / 16))
