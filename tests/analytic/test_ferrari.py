"""Tests of qosbound.analytic.ferrari: eqs. (1), (5)-(7) of Ferrari, Pau & Raffaelli 2001 and Table IV."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
import sympy as sp
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from qosbound.analytic import ferrari as f
from qosbound.errors import ScenarioError


@pytest.fixture(scope="module")
def ref():
    return yaml.safe_load(resources.files("qosbound").joinpath("data/ferrari2001.yaml").read_text())


def test_setup_numbers_follow_from_the_testbed(ref):
    """The paper's rho = 0.15, 292.97 packets/s, 512 us per EF packet and T_u = 2048 us follow from its set-up."""
    s = ref["setup"]
    assert s["ef_rate"] / s["link_rate"] == pytest.approx(s["rho"], rel=1e-12)
    assert s["ef_rate"] / (8 * s["ef_size"]) == pytest.approx(s["ef_packet_rate"], abs=0.005)
    assert 8 * s["ef_size"] / s["link_rate"] == pytest.approx(s["ef_service_time"], rel=1e-12)
    assert 8 * s["unit_size"] / s["link_rate"] == pytest.approx(s["T_u"], rel=1e-12)


def test_table_iv_regression(ref):
    """W_pq, W_t and W recomputed from eqs. (5)-(7) match Table IV to 0.01 us (the paper truncates to 0.01 us)."""
    s, tol = ref["setup"], ref["tolerance_us"]
    rows = ref["table_iv"]
    K = np.array([r["K"] for r in rows])
    assert np.all(np.abs(f.w_pq(K, s["rho"], s["T_u"]) * 1e6 - [r["W_pq"] for r in rows]) <= tol)
    assert np.all(np.abs(f.w_t(K, s["Q_t"], s["T_u"]) * 1e6 - [r["W_t"] for r in rows]) <= tol)
    assert np.all(np.abs(f.w(K, s["rho"], s["Q_t"], s["T_u"]) * 1e6 - [r["W"] for r in rows]) <= tol)


def test_table_iv_overestimates_measurement(ref):
    """Section VI: the analysis 'leads as expected to an overestimation': W > W_m in every row of Table IV."""
    s = ref["setup"]
    for r in ref["table_iv"]:
        assert f.w(r["K"], s["rho"], s["Q_t"], s["T_u"]) * 1e6 > r["W_m"]


def test_eq7_is_the_sum_of_eq5_and_eq6():
    """Eq. (2) with eqs. (5) and (6) simplifies to the printed eq. (7)."""
    printed = (f.k / (1 - f.rho) + f.Q_t + f.k - 1) * f.T_u
    assert sp.simplify(f.W_expr - printed) == 0


def test_broadcasting():
    """The lambdified eq. (7) broadcasts a column of k against a row of rho."""
    out = f.w(np.array([[1], [2], [3]]), np.linspace(0, 0.9, 5), 5, 2048e-6)
    assert out.shape == (3, 5)
    assert out[2, 4] == pytest.approx(f.w(3, 0.9, 5, 2048e-6))


@pytest.mark.parametrize("kw, field", [
    (dict(k=1, rho=1.0, Q_t=5, T_u=1e-3), "rho"),
    (dict(k=1, rho=-0.1, Q_t=5, T_u=1e-3), "rho"),
    (dict(k=0, rho=0.1, Q_t=5, T_u=1e-3), "k"),
    (dict(k=1.5, rho=0.1, Q_t=5, T_u=1e-3), "k"),
    (dict(k=1, rho=0.1, Q_t=0, T_u=1e-3), "Q_t"),
    (dict(k=1, rho=0.1, Q_t=5, T_u=0.0), "T_u"),
    (dict(k=1, rho=np.nan, Q_t=5, T_u=1e-3), "rho"),
])
def test_bad_arguments_are_errors(kw, field):
    """Unstable or meaningless arguments raise ScenarioError naming the argument, never NaN or inf."""
    with pytest.raises(ScenarioError) as e:
        f.w(**kw)
    assert e.value.field == field


rhos = st.floats(0.0, 0.99)
ks = st.integers(1, 10)
qts = st.integers(1, 64)
tus = st.floats(1e-7, 1.0)


@settings(max_examples=200, deadline=None)
@given(ks, rhos, rhos, qts, tus)
def test_w_increases_with_rho(k, r1, r2, q, tu):
    """The worst-case mean delay W never decreases as the EF load rho grows."""
    lo, hi = sorted((r1, r2))
    assert f.w(k, lo, q, tu) <= f.w(k, hi, q, tu)


@settings(max_examples=200, deadline=None)
@given(ks, rhos, qts, tus)
def test_w_increases_with_k_and_q_t(k, r, q, tu):
    """W grows strictly with the units k of a best-effort packet and with the TxQ threshold Q_t."""
    base = f.w(k, r, q, tu)
    assert f.w(k + 1, r, q, tu) > base
    assert f.w(k, r, q + 1, tu) > base


@settings(max_examples=100, deadline=None)
@given(ks, tus)
def test_w_pq_limit_at_zero_load(k, tu):
    """As rho -> 0, W_pq tends to the maximum residual k*T_u (eq. 5); symbolically the limit is exact."""
    assert sp.limit(f.W_pq_expr, f.rho, 0) == f.k * f.T_u
    assert f.w_pq(k, 1e-12, tu) == pytest.approx(k * tu, rel=1e-9)
    assert f.w_pq(k, 0.0, tu) == pytest.approx(k * tu, rel=1e-15)


@settings(max_examples=100, deadline=None)
@given(st.floats(1e-3, 1e9), st.floats(0.0, 1.0, exclude_max=True))
def test_aggregation_degree(total, share):
    """Eq. (1): A = 0 for a single stream carrying the whole aggregate, and A in [0, 1) otherwise."""
    l_max = total * max(share, 1e-6)
    a = f.aggregation_degree(l_max, total)
    assert 0.0 <= a < 1.0
    assert f.aggregation_degree(total, total) == 0.0


def test_aggregation_degree_table_iii_values():
    """Table III's degrees: a 50, 100 or 200 kbit/s reference stream in a 300 kbit/s aggregate (A = 5/6, 2/3, 1/3).

    The paper prints A = 1/6 for the 50 kbit/s column; eq. (1) gives 1 - 50/300 = 5/6, and the text says A grows as
    the reference load falls, which only 5/6 satisfies; the table's 1/6 is read as a misprint.
    """
    got = f.aggregation_degree(np.array([50e3, 100e3, 200e3, 300e3]), 300e3)
    assert got == pytest.approx([5 / 6, 2 / 3, 1 / 3, 0.0])
    with pytest.raises(ScenarioError):
        f.aggregation_degree(400e3, 300e3)
