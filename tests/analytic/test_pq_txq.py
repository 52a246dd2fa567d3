"""Tests for analytic/pq_txq.py: eq. (1) of Ferrari, Pau & Raffaelli (2001), the aggregation degree of EF streams,
in exact arithmetic."""

from __future__ import annotations

import pytest
import sympy as sp

from qosbound.analytic import pq_txq
from qosbound.analytic.pq_txq import aggregation_degree_exact


@pytest.mark.parametrize("rates, A", [([300], "0"), ([200, 100], "1/3"), ([100] * 3, "2/3"), ([50] * 6, "5/6"),
                                      ([50, 250], "1/6"), ([80] * 125, "124/125"), ([0.1, 0.2], "1/3")])
def test_aggregation_degree_is_exact(rates, A):
    value, text = aggregation_degree_exact([r * 1e3 for r in rates])
    assert text == A


def test_the_txq_fixed_points_are_solved_as_sympy_solves_them():
    """The linear solution used at import is ``sympy.solve``'s expression itself, tree for tree (so the lambdified
    closed forms evaluate in the same order, digit for digit), for both fixed points."""
    T, U = pq_txq._T, sp.Symbol("U", nonnegative=True)
    assert pq_txq.txq_wait_expr == sp.solve(pq_txq.txq_fixed_point, T)[0]
    f = pq_txq._lam * T * pq_txq._kef / pq_txq._Q
    eq = sp.Eq(T, U * (f * pq_txq._S / pq_txq._kef + (1 - f) * pq_txq._b) + pq_txq._S)
    assert pq_txq.txq_wait_units_expr == sp.solve(eq, T)[0]
    with pytest.raises(ValueError, match="not linear"):
        pq_txq._solve_linear(sp.Eq(T, T ** 2 + 1), T)
