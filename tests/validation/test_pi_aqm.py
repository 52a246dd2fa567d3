"""Tests of qosbound.validation.pi_aqm: the PI controller of Hollot et al. (2001) as compiled from SymPy."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from qosbound.analytic import tsq as A
from qosbound.validation.pi_aqm import PIParams, pi_kernel, pi_run, seed_params


def test_seed_constants_from_data_file():
    """The seed's constants (a, b, 170 Hz, q_ref 200, q_max 800) come from qosbound/data/tsq.yaml."""
    p = seed_params()
    assert (p.a, p.b, p.hz, p.q_ref, p.q_max) == (1.822e-5, 1.816e-5, 170.0, 200.0, 800)


@settings(max_examples=60, deadline=None)
@given(p0=st.floats(0, 1), qn=st.floats(0, 800), qo=st.floats(0, 800))
def test_kernel_equals_sympy(p0, qn, qo):
    """The numba update equals the SymPy clamped difference equation evaluated exactly."""
    k = pi_kernel()
    got = k(p0, qn, qo, 200.0, 1.822e-5, 1.816e-5)
    ref = A.pi_update_clamped_expr.subs({A.p_prev: p0, A.q_now: qn, A.q_prev: qo, A.q_ref: 200,
                                         A.pi_a: sp.Float(1.822e-5), A.pi_b: sp.Float(1.816e-5)})
    assert got == pytest.approx(float(ref), abs=1e-15)
    assert 0.0 <= got <= 1.0


def test_run_integrates_error():
    """At a constant queue q the probability moves by (a - b)(q - q_ref) per sample after the first."""
    p = pi_run(np.full(50, 300.0), PIParams(), 0.01)
    steps = np.diff(p)
    assert np.allclose(steps, (1.822e-5 - 1.816e-5) * 100, rtol=1e-9)
    assert p[0] == pytest.approx(0.01 + (1.822e-5 - 1.816e-5) * 100)


def test_run_holds_at_reference():
    """At q = q_ref the probability does not move."""
    assert np.all(pi_run(np.full(10, 200.0), PIParams(), 0.3) == 0.3)


def test_clamped():
    """The output stays in [0, 1] under extreme queues."""
    p = pi_run(np.r_[np.zeros(10), np.full(100000, 800.0)], PIParams(), 0.0)
    assert p.min() >= 0 and p.max() <= 1 and p[-1] == 1.0


def test_bad_params():
    """a <= b or non-positive constants are errors."""
    with pytest.raises(ValueError):
        PIParams(a=1e-5, b=2e-5)
    with pytest.raises(ValueError):
        PIParams(hz=0)
