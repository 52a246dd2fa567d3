"""Tests for qosbound.analytic.cbwfq: Table V of Takeo & Tasaka (2003) and the sharing rules."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
import yaml
from hypothesis import given, settings, strategies as st

from qosbound.analytic import cbwfq
from qosbound.errors import ScenarioError


def _ref():
    return yaml.safe_load(resources.files("qosbound").joinpath("data/takeo2003.yaml").read_text())


@pytest.mark.parametrize("case", ["case1", "case2", "case3", "case4", "case5", "case6"])
def test_table_v_allocations(case):
    """The allocation C w_i / sum(backlogged w) reproduces Table V's printed rates to their rounding."""
    ref = _ref()
    bw = ref["table_I"]["bandwidth_kbit_s"]
    names = list(bw)
    spec = ref["table_V"]["cases"][case]
    got = cbwfq.allocate(float(ref["table_I"]["link_rate_bit_s"]), [bw[n] * 1e3 for n in names],
                         [1.0 if n in spec["backlogged"] else 0.0 for n in names]) / 1e3
    for n, v in spec["printed"].items():
        assert abs(got[names.index(n)] - v) <= ref["table_V"]["printed_rounding_kbit_s"]


def test_class_one_idle_gives_666_7_and_888_9():
    """With class 1 idle, classes 3 and 4 get 666.7 and 888.9 kbit/s (Takeo & Tasaka 2003, Table V)."""
    r = cbwfq.allocate(2e6, [200e3, 400e3, 600e3, 800e3], [0, 1, 1, 1])
    assert r[2] == pytest.approx(2e6 * 600 / 1800) and r[3] == pytest.approx(2e6 * 800 / 1800)
    assert r[0] == 0


@settings(max_examples=60, deadline=None)
@given(w=st.lists(st.floats(0.01, 1e6), min_size=1, max_size=6),
       b=st.lists(st.booleans(), min_size=6, max_size=6), C=st.floats(1e3, 1e10))
def test_shares_sum_to_capacity_over_backlogged_classes(w, b, C):
    """The backlogged classes' shares sum to C; idle classes get nothing."""
    b = [float(x) for x in b[:len(w)]]
    if sum(b) == 0:
        b[0] = 1.0
    r = cbwfq.allocate(C, w, b)
    assert r.sum() == pytest.approx(C, rel=1e-9)
    assert all(r[i] == 0 for i in range(len(w)) if b[i] == 0)


def test_zero_weights_are_an_error():
    """Weights of the backlogged classes that sum to zero are rejected."""
    with pytest.raises(ScenarioError, match="sum to zero"):
        cbwfq.allocate(1e6, [0.0, 0.0], [1, 1])


@settings(max_examples=40, deadline=None)
@given(w=st.lists(st.floats(0.1, 10), min_size=2, max_size=5), d=st.lists(st.floats(0, 3e6), min_size=5, max_size=5))
def test_maxmin_never_exceeds_demand_or_capacity(w, d):
    """Max-min allocations stay within each demand and within C, and use C when demand exceeds it."""
    d = d[:len(w)]
    x = cbwfq.maxmin(2e6, w, d)
    assert np.all(x <= np.asarray(d) + 1e-6)
    assert x.sum() <= 2e6 * (1 + 1e-9)
    if sum(d) >= 2e6:
        assert x.sum() == pytest.approx(2e6, rel=1e-6)


def test_service_rate_at_least_guaranteed_share():
    """A class's modelled service rate is at least its guaranteed CBWFQ share."""
    w = [200e3, 400e3, 600e3, 800e3]
    d = [150e3, 128e3, 1039e3, 600e3]
    mu = cbwfq.service_rates(2e6, w, d)
    share = cbwfq.allocate(2e6, w)
    assert np.all(mu >= share - 1e-6)
