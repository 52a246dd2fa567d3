"""Network-calculus curves (qosbound.analytic.curves): each bound is the supremum the theorem says, checked
against a brute-force evaluation of the same supremum on a fine grid."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from qosbound.analytic import curves
from qosbound.analytic.curves import ArrivalCurve, RateLatency, TokenBucket
from qosbound.errors import ScenarioError

buckets = st.lists(st.tuples(st.floats(40, 1e5), st.floats(1e3, 5e8)), min_size=1, max_size=4)


def _alpha(bs) -> ArrivalCurve:
    return ArrivalCurve(tuple(TokenBucket(b, r) for b, r in bs))


def test_one_bucket_through_a_rate_latency_server_is_cruz_s_bound():
    """h = T + 8 b / R and v = b + r T / 8 for one bucket (Le Boudec & Thiran 2001, Theorems 1.4.1-1.4.2)."""
    a = ArrivalCurve.bucket(3000.0, 2e6)
    s = RateLatency(1e7, 1e-3)
    assert s.delay_bound(a) == pytest.approx(1e-3 + 8 * 3000 / 1e7, rel=1e-15)
    assert s.backlog_bound(a) == pytest.approx(3000 + 2e6 * 1e-3 / 8, rel=1e-15)
    assert curves.delay_expr == curves.T + 8 * curves.b / curves.R


@given(buckets, st.floats(1e6, 1e9), st.floats(0, 1e-2))
def test_delay_and_backlog_bounds_are_the_deviations_on_a_grid(bs, R, T):
    """For a concave minimum of buckets the horizontal deviation (delay) and the vertical one (backlog), taken at
    the breakpoints, are at least their values on a fine grid and within a grid step of them."""
    a = _alpha(bs)
    s = RateLatency(R, T)
    if a.rate > R:
        assert math.isinf(s.delay_bound(a))
        return
    top = max(8.0 * max(b for b, _ in bs) / (R - min(a.rate, R * (1 - 1e-9))), 1e-6) * 4 + T
    t = np.linspace(0.0, top, 20001)
    alpha = np.array([a.at(x) for x in t])
    h = T + 8.0 * alpha / R - t  # beta^-1(alpha(t)) - t
    v = alpha - R * np.maximum(t - T, 0.0) / 8.0
    dt = t[1] - t[0]
    assert s.delay_bound(a) >= h.max() - 1e-12 * top
    assert s.delay_bound(a) <= h.max() + dt * (1 + a.rate / R)
    scale = alpha.max() + R * top / 8.0  # the magnitudes the differences are taken of
    assert s.backlog_bound(a) >= v.max() - 1e-9 * scale


@given(buckets, buckets)
def test_the_sum_of_two_curves_is_their_pointwise_sum(b1, b2):
    a1, a2 = _alpha(b1), _alpha(b2)
    s = a1 + a2
    for t in (0.0, 1e-4, 1e-3, 0.1, 3.0):
        assert s.at(t) == pytest.approx(a1.at(t) + a2.at(t), rel=1e-12)


def test_residual_concatenation_and_output():
    """Residual under a priority competitor (R - r_H, (R T + 8 b_H)/(R - r_H)); tandem (min R, T1 + T2); output
    bucket (b + r T / 8, r)."""
    s = RateLatency(1e8, 2e-4)
    res = s.residual(TokenBucket(10_000.0, 3e7))
    assert res.rate == pytest.approx(7e7) and res.latency == pytest.approx((1e8 * 2e-4 + 8e4) / 7e7)
    assert sp.simplify(curves.residual_latency_expr - (curves.R * curves.T + 8 * curves.b_H)
                       / (curves.R - curves.r_H)) == 0
    both = s.then(RateLatency(5e7, 1e-3))
    assert both.rate == 5e7 and both.latency == pytest.approx(1.2e-3, rel=1e-15)
    (out,) = s.output(ArrivalCurve.bucket(1500.0, 1e6)).buckets
    assert out.rate == 1e6 and out.burst == pytest.approx(1500.0 + 1e6 * 2e-4 / 8, rel=1e-15)
    with pytest.raises(ScenarioError):
        s.residual(TokenBucket(0.0, 2e8))
