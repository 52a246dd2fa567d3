"""Tests for validation/compare.py: a trace's metrics with batch-means intervals, per-colour drops, KS and CCDF."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.validation.compare import ccdf, ks_test, trace_results
from qosbound.validation.trace import make_table


def test_trace_results_exponential():
    """On i.i.d. exponential delays the batch-means 95 % intervals of the mean, p99 and a CCDF point
    contain the true values (a failure has probability about 0.15 over the three: seeds are fixed)."""
    rng = np.random.default_rng(7)
    n = 40_000
    mean = 0.01
    arr = np.arange(n) * 1e-3
    d = rng.exponential(mean, n)
    t = make_table(flow="EF", cls="EF", size=100, arrival=arr, departure=arr + d, dropped=np.zeros(n, bool))
    res = {r.metric: r for r in trace_results(t, ["EF.delay.mean", "EF.delay.p99", "EF.delay.ccdf@20ms"])}
    assert res["EF.delay.mean"].interval.contains(mean)
    assert res["EF.delay.p99"].interval.contains(-mean * np.log(0.01))
    assert res["EF.delay.ccdf@20ms"].interval.contains(np.exp(-2.0))
    assert res["EF.delay.mean"].provenance["replications"] == 20


def test_drop_metrics_by_colour():
    """AF1.drop.AF13 counts only red AF1 packets; AF1.drop counts all of them."""
    n = 4000
    colour = np.arange(n) % 3
    dropped = colour == 2
    t = make_table(flow="a", cls="AF1", size=100, arrival=np.arange(n) * 1e-3,
                   departure=np.where(dropped, np.nan, np.arange(n) * 1e-3 + 1e-3), dropped=dropped, colour=colour)
    res = {r.metric: r for r in trace_results(t, ["AF1.drop.AF13", "AF1.drop.AF11", "AF1.drop", "AF1.throughput"])}
    assert res["AF1.drop.AF13"].value == 1.0
    assert res["AF1.drop.AF11"].value == 0.0
    assert res["AF1.drop"].value == pytest.approx(1 / 3, abs=1e-3)
    assert res["AF1.throughput"].value == pytest.approx(2 / 3 * 100 * 8 / 1e-3, rel=0.01)


def test_ks_and_ccdf():
    """KS rejects two clearly different samples and not two draws of the same law; ccdf is 1 - ECDF."""
    rng = np.random.default_rng(3)
    a, b, c = rng.exponential(1, 3000), rng.exponential(1, 3000), rng.exponential(1.5, 3000)
    assert ks_test(a, b).pvalue > 1e-3
    assert ks_test(a, c).pvalue < 1e-6
    assert ccdf(np.array([1.0, 2.0, 3.0]), np.array([0.5, 2.0, 3.0])).tolist() == pytest.approx([1.0, 1 / 3, 0.0])
