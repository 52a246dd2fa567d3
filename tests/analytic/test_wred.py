"""Tests for qosbound.analytic.wred and the numba kernels of qosbound.validation.droppers."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
import sympy as sp
import yaml
from hypothesis import given, settings, strategies as st

from qosbound.analytic import wred
from qosbound.errors import ScenarioError
from qosbound.validation import droppers


def _table_i():
    return yaml.safe_load(resources.files("qosbound").joinpath("data/takeo2003.yaml").read_text())["table_I"]


def test_table_i_profile_matches_data_file():
    """TAKEO_TABLE_I carries Takeo & Tasaka's Table I thresholds, P_d = 3 and alpha = 2^-9."""
    t = _table_i()
    p = wred.TAKEO_TABLE_I
    for c, key in enumerate(("drop1", "drop2", "drop3")):
        assert p.min_th[c] == t["thresholds_packets"][key]["min_th"]
        assert p.max_th[c] == t["thresholds_packets"][key]["max_th"]
        assert p.P_d[c] == t["P_d"]
    assert p.alpha == pytest.approx(t["alpha"])


def test_drop_curve_points():
    """P(avr) is 0 below min_th, (avr-min_th)/(P_d (max_th-min_th)) between, 1 from max_th on (Takeo & Tasaka 2003)."""
    got = wred.drop_prob([0, 23.9, 24, 36, 47.9, 48, 60], 24, 48, 3)
    want = [0, 0, 0, 12 / 72, 23.9 / 72, 1, 1]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_gentle_is_continuous_at_max_th_and_reaches_one_at_twice():
    """Gentle RED rises from 1/P_d at max_th to 1 at 2 max_th."""
    v = wred.drop_prob([48 - 1e-9, 48, 72, 96, 100], 24, 48, 4, gentle=True)
    np.testing.assert_allclose(v, [0.25, 0.25, 0.625, 1, 1], atol=1e-9)


def test_symbolic_form_is_the_paper_equation():
    """Between the thresholds the SymPy curve simplifies to the linear ramp of Takeo & Tasaka (2003)."""
    mid = wred.P_WRED.args[2][0]
    assert sp.simplify(mid - (wred.avr - wred.min_th) / (wred.P_d * (wred.max_th - wred.min_th))) == 0


@settings(max_examples=60, deadline=None)
@given(a=st.floats(0, 80), b=st.floats(0, 80), lo=st.floats(0, 30), width=st.floats(1, 30), pd=st.floats(1, 20),
       gentle=st.booleans())
def test_drop_probability_monotone_in_average(a, b, lo, width, pd, gentle):
    """The drop probability never decreases as the average grows, and stays in [0, 1]."""
    x, y = sorted((a, b))
    px, py = wred.drop_prob([x, y], lo, lo + width, pd, gentle)
    assert 0 <= px <= py + 1e-12 <= 1 + 1e-12


@settings(max_examples=60, deadline=None)
@given(avg=st.floats(0, 70))
def test_drop_probability_monotone_in_precedence_table_i(avg):
    """With Table I's nested thresholds, drop(AFx3) >= drop(AFx2) >= drop(AFx1) at every average."""
    p = [float(wred.TAKEO_TABLE_I.prob(c, avg)) for c in range(3)]
    assert p[2] >= p[1] >= p[0]


@settings(max_examples=80, deadline=None)
@given(avg=st.floats(0, 100), lo=st.floats(0, 40), width=st.floats(0.5, 40), pd=st.floats(1, 50),
       gentle=st.booleans())
def test_numba_kernel_equals_sympy_curve(avg, lo, width, pd, gentle):
    """The simulator's red_drop_prob equals the lambdified SymPy curve (max_p = 1/P_d)."""
    ref = float(wred.drop_prob(avg, lo, lo + width, pd, gentle))
    got = droppers.red_drop_prob(avg, lo, lo + width, 1.0 / pd, gentle)
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-12)


def test_ewma_kernel_equals_sympy():
    """ewma_update is avr <- (1 - alpha) avr + alpha q."""
    e = wred.EWMA.subs({wred.alpha: sp.Rational(1, 512), wred.avr: 10, wred.q: 30})
    assert droppers.ewma_update(10.0, 30.0, 1 / 512) == pytest.approx(float(e), rel=1e-15)


@pytest.mark.parametrize("mode,expect", [("wred", [2, 2, 2]), ("rio", [0, 2, 2]), ("nred", [0, 1, 2])])
def test_average_index_per_mode(mode, expect):
    """WRED reads the all-packet average; RIO green reads the IN average; n-RED colour c reads colours 0..c."""
    assert [droppers.avg_index(droppers.MODES[mode], c) for c in range(3)] == expect
    M = wred.avg_counts(mode)
    for c in range(3):
        assert list(M[c]) == [1.0 if k <= expect[c] else 0.0 for k in range(3)]


def test_update_averages_are_cumulative():
    """update_averages feeds average k with the count of colours 0..k."""
    a = np.zeros(3)
    droppers.update_averages(a, np.array([1.0, 2.0, 3.0]), 1.0)
    np.testing.assert_array_equal(a, [1, 3, 6])


@pytest.mark.parametrize("kw,msg", [
    (dict(min_th=(30, 16, 8), max_th=(20, 40, 32), P_d=(3, 3, 3)), "min_th < max_th"),
    (dict(min_th=(24, 16, 8), max_th=(48, 40, 32), P_d=(0.5, 3, 3)), "P_d"),
    (dict(min_th=(24, 16, 8), max_th=(48, 40, 32), P_d=(3, 3, 3), alpha=0.0), "EWMA"),
])
def test_profile_rejects_bad_parameters(kw, msg):
    """Thresholds out of order, P_d < 1 and alpha outside (0, 1] are input errors."""
    with pytest.raises(ScenarioError, match=msg):
        wred.Profile(**kw)
