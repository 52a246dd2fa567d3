"""Table III of Ferrari, Pau & Raffaelli (2001) by simulation: the mean EF delay against the aggregation
degree A at a constant 300 kbit/s aggregate (compositions and statistics in
:mod:`qosbound.reproduce.ferrari2001_aggregation`)."""

from __future__ import annotations

import pytest

from qosbound.reproduce import claims as C
from qosbound.reproduce.ferrari2001_aggregation import aggregation_claim, increase, table_iii_means


@pytest.fixture(scope="module")
def rows():
    return table_iii_means()


def test_mean_delay_grows_with_A_up_to_two_thirds(rows):
    """A = 0 (one 300 kbit/s stream) < 1/3 (200 + 100) < 2/3 (3 x 100), each step significant at family-wise
    99 % (one-sided lower confidence limit of the difference above 0)."""
    by = {r["A"]: r for r in rows}
    assert [r["A"] for r in rows] == ["0", "1/3", "2/3", "5/6"]
    for lo, hi in (("0", "1/3"), ("1/3", "2/3")):
        ok, d, low = increase(by[lo], by[hi], checks=4)
        assert ok, f"A = {lo} -> {hi}: difference {d * 1e3:.4f} ms, lower limit {low * 1e3:.4f} ms"
    # every aggregate is slower than the single stream, six 50 kbit/s streams included
    ok, d, low = increase(by["0"], by["5/6"], checks=4)
    assert ok, (d, low)


def test_claim_row_is_met_and_states_the_finding(rows):
    claim = aggregation_claim(rows)
    assert claim.met and claim.source == "section V, Table III"
    by = {r["A"]: r for r in rows}
    higher, _, _ = increase(by["2/3"], by["5/6"], checks=4)
    # the verdict follows the numbers: reproduced if A = 5/6 is above 2/3 too, else a documented finding
    assert claim.verdict == (C.REPRODUCED if higher else C.FINDING)
    if not higher:
        assert "5/6" in claim.evidence
