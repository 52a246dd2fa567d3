"""Tests of the W_m analysis of ``qosbound reproduce ferrari2001``: Table IV's measured mean against paths of
several hops (qosbound.reproduce.ferrari2001_path on qosbound.validation.path_sim)."""

from __future__ import annotations

import pytest

from qosbound.reproduce import claims as C
from qosbound.reproduce import ferrari2001_path as P


@pytest.fixture(scope="module")
def quick():
    return P.predictions(quick=True)


def test_every_hypothesis_is_simulated_for_each_K_with_an_interval(quick):
    keys = [r["key"] for r in quick["rows"]]
    assert keys[0] == "port" and {"a-after", "a-after-mtu", "a-after-1", "a-before", "b-access", "c-units", "c-packets", "d-burst",
                                  "e-atm"} <= set(keys)
    for r in quick["rows"]:
        for K in (1, 2, 3):
            v = r["K"][K]
            assert v["low"] <= v["mean"] <= v["high"] and v["high"] - v["low"] < 2e-3, (r["key"], K)


def test_port_alone_is_the_exact_chain(quick):
    """The path with no hop estimates the exact CBR means of the port's chain (7338.67, 7680.00, 7680.00 us)."""
    port = next(r for r in quick["rows"] if r["key"] == "port")
    for K, exact in ((1, 7338.67e-6), (2, 7680.00e-6), (3, 7680.00e-6)):
        v = port["K"][K]
        assert v["low"] - 2e-5 <= exact <= v["high"] + 2e-5, (K, v)


def test_two_same_rate_hops_after_give_the_growth_but_overshoot_at_K1(quick):
    """(a): two 2 Mbit/s FIFO hops after the port add about 2 K unit times (4.1, 8.2, 12.3 ms): most of W_m's
    growth with K, but above W_m at K = 1 by more than the tolerance, so it is a finding, not a fit."""
    a = next(r for r in quick["rows"] if r["key"] == "a-after")
    port = next(r for r in quick["rows"] if r["key"] == "port")
    for K in (1, 2, 3):
        added = a["K"][K]["mean"] - port["K"][K]["mean"]
        assert added == pytest.approx(2 * K * 2.048e-3, abs=3e-4)
    f = a["fit"]
    assert 0.85 <= f["growth"] / f["growth_measured"] <= 1.05
    assert not f["fits"] and f["worst_K"] == 1 and f["worst"] < -P.FIT_TOLERANCE and f["offset"] == 0.0


def test_two_hops_after_with_the_mtu_reading_meet_K2_and_K3_but_not_K1(quick):
    """With K = 3 read as the largest BE packet the sources can send (IP 1478 B), the two same-rate hops after the
    port land within 0.3 ms of W_m at K = 2 and 3 with no offset, and 1.0-1.6 ms above it at K = 1."""
    m = next(r for r in quick["rows"] if r["key"] == "a-after-mtu")
    r = m["fit"]["residual"]
    assert abs(r[2]) < 3e-4 and abs(r[3]) < 3e-4
    assert -1.6e-3 < r[1] < -1.0e-3 and not m["fit"]["fits"]


def test_no_hypothesis_fits_and_each_is_a_documented_finding(quick):
    rows = P.path_claims(quick)
    assert len(rows) == len(quick["rows"])
    assert {c.verdict for c in rows} == {C.FINDING}
    assert all(c.evidence and "growth" in c.evidence for c in rows)


def _row(means, half=1e-5, expected=False):
    return {"key": "x", "label": "x", "text": "synthetic", "expected_fit": expected,
            "K": {K: {"mean": m, "low": m - half, "high": m + half} for K, m in zip((1, 2, 3), means)}}


def test_fit_rule():
    """A path at W_m minus 1.5 ms fits (c = 1.5 ms); at W_m minus 3 ms it does not (c is at most 2 ms); above
    W_m it needs a negative c and does not fit; a fit where none was expected is NOT MET, and the reverse too."""
    W = {1: 10.16e-3, 2: 15.95e-3, 3: 19.27e-3}
    near = _row([W[K] - 1.5e-3 for K in (1, 2, 3)])
    near["fit"] = P.fit(near, W)
    assert near["fit"]["fits"] and near["fit"]["offset"] == pytest.approx(1.5e-3)
    far = _row([W[K] - 3.2e-3 for K in (1, 2, 3)])
    assert not P.fit(far, W)["fits"] and P.fit(far, W)["offset"] == pytest.approx(P.MAX_OFFSET)
    above = _row([W[K] + 1.2e-3 for K in (1, 2, 3)])
    assert not P.fit(above, W)["fits"] and P.fit(above, W)["offset"] == 0.0
    assert P.fit(_row([W[K] + 0.9e-3 for K in (1, 2, 3)]), W)["fits"]
    pred = {"W_m": W, "rows": [near, {**far, "fit": P.fit(far, W), "expected_fit": True}]}
    got = [c.verdict for c in P.path_claims(pred)]
    assert got == [C.NOT_MET, C.NOT_MET]
    pred["rows"][0]["expected_fit"] = True
    pred["rows"][1]["expected_fit"] = False
    assert [c.verdict for c in P.path_claims(pred)] == [C.REPRODUCED, C.FINDING]


def test_figure_and_json(quick, tmp_path):
    files = P.plot(quick, tmp_path)
    assert [f[-3:] for f in files] == ["png", "svg"]
    svg = (tmp_path / "ferrari2001_wm.svg").read_text()
    assert "K, transmission units per BE packet" in svg and "EF one-way delay, mean (ms)" in svg
    doc = P.document(quick)
    assert doc["unit"] == "s" and set(doc["W_m"]) == {"1", "2", "3"} and len(doc["rows"]) == len(quick["rows"])
