"""Tests for analytic/pq_txq.py: eq. (1) of Ferrari, Pau & Raffaelli (2001), the aggregation degree of EF streams,
in exact arithmetic."""

from __future__ import annotations

import pytest

from qosbound.analytic.pq_txq import aggregation_degree_exact


@pytest.mark.parametrize("rates, A", [([300], "0"), ([200, 100], "1/3"), ([100] * 3, "2/3"), ([50] * 6, "5/6"),
                                      ([50, 250], "1/6"), ([80] * 125, "124/125"), ([0.1, 0.2], "1/3")])
def test_aggregation_degree_is_exact(rates, A):
    value, text = aggregation_degree_exact([r * 1e3 for r in rates])
    assert text == A
