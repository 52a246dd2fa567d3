"""Tests of qosbound.analytic.tfrc: the TFRC equation, gTFRC, proofs, envelopes, limits and inverses."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from qosbound.analytic import tfrc as T
from qosbound.errors import ScenarioError

mpmath.mp.dps = 50


def rfc5348_mp(s, R, p, b=1, t_rto=None):
    """RFC 5348 section 3.1, typed independently from the text, at 50 digits."""
    s, R, p, b = (mpmath.mpf(x) for x in (s, R, p, b))
    t = 4 * R if t_rto is None else mpmath.mpf(t_rto)
    return s / (R * mpmath.sqrt(2 * b * p / 3) + t * (3 * mpmath.sqrt(3 * b * p / 8)) * p * (1 + 32 * p**2))


sizes = st.floats(40, 9000)
rtts = st.floats(1e-4, 5.0)
losses = st.floats(1e-7, 1.0)
targets = st.floats(1.0, 1e9)


@pytest.mark.parametrize("s,R,p", [(1500, 0.03, 0.01), (1000, 0.1, 0.5), (40, 1e-3, 1e-6), (9000, 2.0, 1.0)])
def test_equation_matches_rfc5348_at_high_precision(s, R, p):
    """The lambdified equation equals RFC 5348's formula evaluated with mpmath to 1e-13 relative."""
    got = float(T.tfrc_rate(s, R, p))
    want = float(rfc5348_mp(s, R, p))
    assert got == pytest.approx(want, rel=1e-13)


@settings(max_examples=200, deadline=None)
@given(s=sizes, R=rtts, p=losses, t=st.floats(1e-3, 10.0), b=st.floats(1.0, 4.0))
def test_equation_matches_mpmath_everywhere(s, R, p, t, b):
    """With any b and t_RTO, the vectorised form agrees with the mpmath reference."""
    assert float(T.tfrc_rate(s, R, p, b, t)) == pytest.approx(float(rfc5348_mp(s, R, p, b, t)), rel=1e-12)


def test_vectorised_shape_and_broadcast():
    """Arrays broadcast: a (3,1) RTT column against a (4,) loss row gives a (3,4) table."""
    out = T.tfrc_rate(1500, np.array([[0.01], [0.03], [0.1]]), np.array([1e-4, 1e-3, 1e-2, 1e-1]))
    assert out.shape == (3, 4)
    assert np.all(np.isfinite(out)) and np.all(out > 0)


def test_bad_loss_rate_raises():
    """p must lie in (0, 1]: zero, negative and > 1 are refused."""
    for bad in (0.0, -0.1, 1.5, np.nan):
        with pytest.raises(ScenarioError, match="loss event rate"):
            T.tfrc_rate(1500, 0.03, bad)


def test_symbolic_proofs():
    """SymPy proves: X decreasing in p and in R; the square-root law bounds X above; the envelope below."""
    assert T.prove_decreasing_in_p()
    assert T.prove_decreasing_in_R()
    assert T.prove_upper_envelope()
    assert T.prove_lower_envelope()


def test_limits():
    """As p -> 0, X sqrt(p) -> s sqrt(3/(2b))/R; at p -> 1, X -> s/(R sqrt(2b/3) + 99 t_RTO sqrt(3b/8))."""
    assert sp.simplify(T.limit_p_to_0() - T.s * sp.sqrt(3 / (2 * T.b)) / T.R) == 0
    want = T.s / (T.R * sp.sqrt(2 * T.b / 3) + 99 * T.t_RTO * sp.sqrt(3 * T.b / 8))
    assert sp.simplify(T.limit_p_to_1() - want) == 0


@settings(max_examples=200, deadline=None)
@given(s=sizes, R=rtts, p1=losses, p2=losses)
def test_monotone_in_p(s, R, p1, p2):
    """A higher loss event rate never gives a higher rate."""
    lo, hi = min(p1, p2), max(p1, p2)
    assert T.tfrc_rate(s, R, hi) <= T.tfrc_rate(s, R, lo) * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(s=sizes, R1=rtts, R2=rtts, p=losses)
def test_monotone_in_R(s, R1, R2, p):
    """A longer round-trip time never gives a higher rate (t_RTO = 4R)."""
    lo, hi = min(R1, R2), max(R1, R2)
    assert T.tfrc_rate(s, hi, p) <= T.tfrc_rate(s, lo, p) * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(s=sizes, R=rtts, p=losses)
def test_envelopes_bracket_equation(s, R, p):
    """lower envelope <= X <= square-root law on (0, 1]."""
    x = float(T.tfrc_rate(s, R, p))
    assert float(T.lower_envelope_rate(s, R, p)) <= x * (1 + 1e-12)
    assert x <= float(T.sqrt_law_rate(s, R, p)) * (1 + 1e-12)


@settings(max_examples=300, deadline=None)
@given(s=sizes, R=rtts, p=losses, g=targets, xr=targets)
def test_gtfrc_floor_and_ceiling(s, R, p, g, xr):
    """gTFRC never sends below min(g, 2 X_recv) nor below s/64, and never above max(X_calc, g) or 2 X_recv
    (unless the s/64 floor lifts it)."""
    x = float(T.gtfrc_rate(s, R, p, g, xr))
    xc = float(T.tfrc_rate(s, R, p))
    floor = s / 64.0
    assert x >= min(g, 2 * xr) * (1 - 1e-12)
    assert x >= floor * (1 - 1e-12)
    assert x <= max(max(xc, g), floor) * (1 + 1e-12)
    assert x <= max(2 * xr, floor) * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(s=sizes, R=rtts, p=losses, g=targets)
def test_gtfrc_without_receive_cap_is_max(s, R, p, g):
    """With no receive cap, gTFRC's rate is max(X_calc, g, s/64) and the ratio to TFRC is >= 1."""
    x = float(T.gtfrc_rate(s, R, p, g))
    xc = float(T.tfrc_rate(s, R, p))
    assert x == pytest.approx(max(xc, g, s / 64.0), rel=1e-12)
    assert float(T.friendliness_ratio(s, R, p, g)) >= 1 - 1e-12
    assert bool(T.exceeds_fair_rate(s, R, p, g)) == (g > xc)


@settings(max_examples=200, deadline=None)
@given(s=sizes, R=rtts, p=st.floats(1e-7, 0.999))
def test_inverse_loss_of_forward(s, R, p):
    """max_loss_for_target(X_calc(p)) = p: the inverse in p undoes the equation."""
    g = float(T.tfrc_rate(s, R, p))
    got = T.max_loss_for_target(s, R, g)
    assert got == pytest.approx(p, rel=1e-8)


@settings(max_examples=200, deadline=None)
@given(s=sizes, R=rtts, p=losses)
def test_inverse_rtt_of_forward(s, R, p):
    """max_rtt_for_target(X_calc(R)) = R: the closed-form RTT inverse undoes the equation."""
    g = float(T.tfrc_rate(s, R, p))
    assert float(T.max_rtt_for_target(s, p, g)) == pytest.approx(R, rel=1e-10)


def test_inverse_loss_vectorised_and_saturating():
    """Targets below X(p=1) need no guarantee at any loss rate: p_max = 1; arrays keep their shape."""
    x1 = float(T.tfrc_rate(1500, 0.03, 1.0))
    out = T.max_loss_for_target(1500, 0.03, np.array([x1 / 2, x1 * 10, 1e6]))
    assert out.shape == (3,)
    assert out[0] == 1.0
    assert 0 < out[2] < out[1] < 1
    tab = T.loss_table(1500, [0.01, 0.03, 0.1], [5e4, 1e5])
    assert tab.shape == (3, 2)
    # longer RTT -> lower X -> a target stays friendly only at lower loss; higher target -> lower p_max
    assert np.all(np.diff(tab, axis=0) <= 0) and np.all(np.diff(tab, axis=1) <= 0)
    rt = T.rtt_table(1500, [1e-3, 1e-2], [5e4, 1e5])
    assert rt.shape == (2, 2) and np.all(np.diff(rt, axis=0) < 0) and np.all(np.diff(rt, axis=1) < 0)


def test_qstp_target_needs_guarantee_at_testbed_loss():
    """At RTT 30 ms and 1000-byte packets, a 400 kbit/s target is TCP-friendly only below a loss event
    rate of about ten percent; the inverse agrees with the forward equation at that boundary."""
    g = 400e3 / 8
    pmax = T.max_loss_for_target(1000, 0.03, g)
    assert 0.05 < pmax < 0.2
    assert float(T.tfrc_rate(1000, 0.03, pmax)) == pytest.approx(g, rel=1e-9)
