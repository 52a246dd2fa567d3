"""Tests of qosbound.analytic.priority: Cobham's M/G/1 non-preemptive priority waits (Bertsekas & Gallager 3.5.3)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from qosbound.analytic import priority as pr
from qosbound.errors import ScenarioError


def test_one_class_is_pollaczek_khinchine_symbolically():
    """With N = 1 Cobham's formula is the Pollaczek-Khinchine mean wait, as expressions."""
    (lam,), (m1,), (m2,) = pr.class_symbols(1)
    w1 = pr.cobham_exprs(1)[0]
    pk = pr.pk_expr.subs({pr.lam_s: lam, pr.m1_s: m1, pr.m2_s: m2})
    assert sp.simplify(w1 - pk) == 0


@settings(max_examples=100, deadline=None)
@given(st.floats(0.01, 0.98), st.floats(1e-6, 1.0), st.floats(1.0, 5.0))
def test_one_class_is_pollaczek_khinchine_numerically(rho, m1, scv):
    """Numerically too: cobham_wait with one class equals pk_wait for any stable load and variability."""
    lam, m2 = rho / m1, m1 * m1 * scv
    assert pr.cobham_wait([lam], [m1], [m2])[0] == pytest.approx(pr.pk_wait(lam, m1, m2), rel=1e-12)


def test_mm1_two_classes_textbook_value():
    """Two exponential classes, each rho = 0.25, mean service 1: R = 0.5, W_1 = 0.5/0.75, W_2 = 0.5/(0.75*0.5)."""
    w = pr.cobham_wait([0.25, 0.25], [1.0, 1.0], [2.0, 2.0])
    assert w == pytest.approx([2 / 3, 4 / 3], rel=1e-12)


def test_conservation_law():
    """Kleinrock's conservation law: sum_k rho_k W_k equals rho R/(1-rho), the same for every priority order."""
    lam, m1, m2 = [0.1, 0.2, 0.15], [1.0, 0.5, 2.0], [1.5, 0.5, 6.0]
    rho = np.multiply(lam, m1)
    R = np.dot(lam, m2) / 2
    total = rho.sum() * R / (1 - rho.sum())
    for order in ([0, 1, 2], [2, 1, 0], [1, 2, 0]):
        w = pr.cobham_wait([lam[i] for i in order], [m1[i] for i in order], [m2[i] for i in order])
        assert np.dot(rho[order], w) == pytest.approx(total, rel=1e-12)


def test_saturated_lowest_class_is_the_limit():
    """The saturated form equals Cobham's wait of class 1 as the lowest class's load approaches 1 - sigma_1."""
    lam1, m1, m2, s1, s2 = 292.97, 512e-6, (512e-6) ** 2, 2048e-6, 2 * (2048e-6) ** 2
    sat = pr.cobham_wait_saturated([lam1], [m1], [m2], s1, s2)[0]
    lam2 = (1 - lam1 * m1) * (1 - 1e-9) / s1
    assert pr.cobham_wait([lam1, lam2], [m1, s1], [m2, s2])[0] == pytest.approx(sat, rel=1e-7)
    # The paper's set-up with one-unit best effort: R = 0.15*256 us + 0.85*1024 us, W_1 = R/0.85.
    fixed = pr.cobham_wait_saturated([lam1], [m1], [m2], s1, s1 ** 2)[0]
    assert fixed == pytest.approx((0.15 * 256e-6 + 0.85 * 1024e-6) / 0.85, rel=1e-4)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 0.3), st.floats(1e-3, 1.0), st.floats(1.0, 4.0)), min_size=2, max_size=5))
def test_lower_classes_wait_longer(classes):
    """A lower-priority class never waits less than a higher one (the denominators only shrink)."""
    rho = [c[0] for c in classes]
    assume(sum(rho) < 0.98)
    m1 = [c[1] for c in classes]
    lam = [r / m for r, m in zip(rho, m1)]
    m2 = [m * m * c[2] for m, c in zip(m1, classes)]
    w = pr.cobham_wait(lam, m1, m2)
    assert np.all(np.diff(w) >= -1e-15 * w.max())
    assert np.all(w > 0)


@settings(max_examples=100, deadline=None)
@given(st.floats(0.01, 0.45), st.floats(0.01, 0.45), st.floats(1.01, 2.0))
def test_waits_increase_with_load(r1, r2, factor):
    """Raising either class's arrival rate never shortens any class's mean wait."""
    m1, m2 = [1.0, 2.0], [1.0, 8.0]
    base = pr.cobham_wait([r1, r2 / 2], m1, m2)
    assume((r1 * factor + r2) < 0.99 and (r1 + r2 * factor) < 0.99)
    assert np.all(pr.cobham_wait([r1 * factor, r2 / 2], m1, m2) >= base)
    assert np.all(pr.cobham_wait([r1, r2 * factor / 2], m1, m2) >= base)


@settings(max_examples=50, deadline=None)
@given(st.floats(1e-4, 1.0), st.floats(1.0, 3.0))
def test_wait_vanishes_at_zero_load_and_grows_without_bound_near_one(m1, scv):
    """The mean wait tends to 0 as the load vanishes and exceeds any level as the load approaches 1."""
    m2 = m1 * m1 * scv
    assert pr.pk_wait(1e-12 / m1, m1, m2) < 1e-9 * m1
    assert pr.pk_wait((1 - 1e-6) / m1, m1, m2) > 1e5 * m1


def test_vectorised_over_arrays():
    """Per-class arguments may be arrays; the result has a leading class axis and the broadcast shape."""
    lam1 = np.linspace(0.01, 0.4, 7)
    w = pr.cobham_wait([lam1, 0.2], [1.0, 1.0], [2.0, 2.0])
    assert w.shape == (2, 7)
    assert w[1, 3] == pytest.approx(pr.cobham_wait([lam1[3], 0.2], [1.0, 1.0], [2.0, 2.0])[1])


def test_unstable_or_invalid_inputs_are_errors():
    """Total load >= 1, non-positive moments and a second moment below the squared mean raise ScenarioError."""
    with pytest.raises(ScenarioError, match="unstable"):
        pr.cobham_wait([0.6, 0.5], [1.0, 1.0], [2.0, 2.0])
    with pytest.raises(ScenarioError):
        pr.cobham_wait([0.1], [0.0], [1.0])
    with pytest.raises(ScenarioError, match="variance"):
        pr.cobham_wait([0.1], [1.0], [0.5])
    with pytest.raises(ScenarioError, match="unstable"):
        pr.cobham_wait_saturated([1.0], [1.0], [1.0], 1.0, 1.0)
    with pytest.raises(ScenarioError):
        pr.pk_wait(2.0, 0.5, 0.25)
