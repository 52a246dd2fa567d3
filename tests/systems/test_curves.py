"""The delay CCDF curves the methods attach to their results (:mod:`qosbound.systems.curves`): the same
distribution their metrics are read from, so a curve agrees with the method's own ``ccdf@`` and quantile
metrics."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from qosbound.progress import QUIET
from qosbound.results import Kind
from qosbound.scenario import build
from qosbound.systems import get_system
from qosbound.systems.curves import histogram_ccdf, lattice_ccdf, thin
from tests.helpers import example


def evaluate(name: str, methods: list[str], **sim):
    raw = yaml.safe_load(example(name).read_text())
    if sim:
        raw["methods"]["simulated"].update(sim)
    scn = build(raw, str(example(name)))
    return get_system(scn.system).evaluate(scn, methods, QUIET)


def curve_of(results, method):
    (c,) = [r.curve for r in results if r.curve is not None and r.method == method]
    return c


def between_neighbours(c, t: float) -> tuple[float, float]:
    """The curve's values at the grid points either side of ``t`` (a CCDF never increases between them)."""
    i = int(np.searchsorted(c.x, t, side="right")) - 1
    return c.value[min(i + 1, len(c.x) - 1)], c.value[i]


def test_histogram_ccdf_counts_the_delays_at_or_above_each_edge():
    counts = np.array([[2, 1, 1, 0], [1, 2, 0, 1]])  # two replications of 4 delays, bins of 1 ms
    c = histogram_ccdf("EF.delay.ccdf", counts, 1e-3, 0.95)
    assert c.kind is Kind.CI and c.x == pytest.approx((1e-3, 2e-3, 3e-3, 4e-3))
    assert c.value == pytest.approx(((2 / 4 + 3 / 4) / 2, (1 / 4 + 1 / 4) / 2, (0 + 1 / 4) / 2, 0.0))
    assert all(lo <= v <= hi for lo, v, hi in zip(c.low, c.value, c.high))
    assert histogram_ccdf("EF.delay.ccdf", counts[:1], 1e-3, 0.95) is None  # one replication: no interval


def test_a_lattice_curve_stops_after_its_tail_and_keeps_its_ends():
    grid = np.array([1.0, 0.5, 1e-3, 1e-13, 0.0, 0.0])
    c = lattice_ccdf("EF.delay.ccdf", "model-checked", grid, 2e-3, Kind.EXACT)
    assert c.x == pytest.approx((0.0, 2e-3, 4e-3, 6e-3)) and c.value[-1] == pytest.approx(1e-13)
    assert list(thin(1000, 10))[0] == 0 and list(thin(1000, 10))[-1] == 999 and len(thin(1000, 10)) == 10


def test_the_exact_model_curve_brackets_its_own_ccdf_metrics():
    """Ferrari 2001 on the exact chain: the curve starts at 1, never increases, and each ``ccdf@t`` metric lies
    between the curve's values either side of ``t``."""
    results = evaluate("ferrari2001", ["model-checked"])
    c = curve_of(results, "model-checked")
    assert c.kind is Kind.NUMERICAL and c.value[0] == pytest.approx(1.0, abs=1e-9)
    assert all(b <= a + 1e-12 for a, b in zip(c.value, c.value[1:]))
    points = [r for r in results if "ccdf@" in r.metric]
    assert points
    for r in points:
        t = float(r.metric.split("@")[1].removesuffix("ms")) * 1e-3
        lo, hi = between_neighbours(c, t)
        assert lo - 1e-9 <= r.value <= hi + 1e-9, r.metric


def test_the_simulated_curve_agrees_with_the_simulated_ccdf_metrics():
    """wan100 simulated (fewer packets): at each ``ccdf@t`` point the curve's neighbouring values bracket the
    metric, up to the pointwise intervals (the curve counts delays at or above a bin edge, the metric above t)."""
    results = evaluate("wan100", ["simulated"], packets=50_000, replications=4)
    c = curve_of(results, "simulated")
    assert c.kind is Kind.CI and c.level == 0.95
    for r in [r for r in results if "ccdf@" in r.metric]:
        t = float(r.metric.split("@")[1].removesuffix("ms")) * 1e-3
        i = int(np.searchsorted(c.x, t, side="right")) - 1
        assert c.low[min(i + 1, len(c.x) - 1)] - 1e-12 <= r.value <= c.high[i] + 1e-12, r.metric


def test_the_ring_curve_is_the_approximation_beside_the_bound():
    """wan100's model-checked answer: the ring chain's lattice CCDF is an approximation, attached to
    EF.approx.delay.mean (the bound has no curve, only its points), and brackets EF.approx.delay.ccdf@t."""
    results = evaluate("wan100", ["model-checked"])
    (r,) = [r for r in results if r.curve is not None]
    assert r.metric == "EF.approx.delay.mean" and r.curve.kind is Kind.APPROXIMATION and r.curve.neglects
    for p in [p for p in results if p.metric.startswith("EF.approx.delay.ccdf@")]:
        t = float(p.metric.split("@")[1].removesuffix("ms")) * 1e-3
        lo, hi = between_neighbours(r.curve, t)
        assert lo - 1e-12 <= p.value <= hi + 1e-12
