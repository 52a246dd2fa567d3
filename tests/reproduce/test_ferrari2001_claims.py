"""`qosbound reproduce ferrari2001`'s claims, judged by the quick run: the verdicts the evidence gives, and a broken
recomputed value NOT MET (exit 1).
"""

from __future__ import annotations

from qosbound.reproduce import claims as C
from qosbound.reproduce import ferrari2001
from tests.helpers import claims_by_id, reproduce_json


def test_ferrari2001_claims(capsys):
    """The quick run's evidence: Table IV, the burst limit and Fig. 3 reproduced; Table III's growth with A
    contradicted (the mean falls from A = 2/3 to 5/6, p near 1) and its level not met; Fig. 7-1's spread
    contradicted the same way, Fig. 7-2's CCDFs told apart, the BE payload moving the mean more than A; Fig. 5's
    tail above 36 units (shifted by the other hops' constant) far above 1e-3; the standard deviation against the
    payload left to the full mode; no modelled path explains W_m (the project's hypothesis not met)."""
    code, doc = reproduce_json(capsys, "ferrari2001", "--quick")
    by = claims_by_id(doc)
    assert code == 1 and doc["exit_code"] == 1 and doc["unlisted_rows"] == []
    for cid in ("table4-wpq", "table4-wt", "table4-w", "table4-overestimate", "fig3-non-monotone",
                "fig3-steps-at-unit-multiples", "fig3-rise-within-unit", "eq7-above-mean", "ef-queue-limits-burst",
                "table4-txq-dominates", "fig7-ccdf-varies", "be-profile-dominates"):
        assert by[cid]["verdict"] == C.CLAIM_REPRODUCED, cid
    for cid in ("fig7-spread-grows", "fig5-36-units"):   # contradicted: the opposite one-sided test rejects
        assert by[cid]["verdict"] == C.CLAIM_NOT_MET and by[cid]["p_value"] > 0.95, cid
        assert "contradicted" in by[cid]["reason"], cid
    assert by["fig5-36-units"]["rows"][0]["value"] > 5e-3     # about 1.1 % of the delays above the shifted threshold
    assert by["std-grows-with-size"]["verdict"] == C.NOT_ATTEMPTED   # judged in full mode (43 payloads)
    assert "no result" in by["std-grows-with-size"]["reason"]
    judged = [c for c in doc["claims"] if c["verdict"] != C.NOT_ATTEMPTED]
    assert len(judged) == 17 and doc["counts"]["arithmetic"][C.NOT_ATTEMPTED] == 0
    assert by["table3-delay-grows-with-A"]["verdict"] == C.CLAIM_NOT_MET
    assert by["table3-delay-grows-with-A"]["p_value"] > 0.95 and "contradicted" in by["table3-delay-grows-with-A"]["reason"]
    assert by["wm-explained"]["verdict"] == C.CLAIM_NOT_MET and len(by["wm-explained"]["rows"]) >= 8
    # Table III's level: the port alone gives about 5 ms where the paper measures 16.75 ms end to end
    assert by["table3-level"]["verdict"] == C.CLAIM_NOT_MET and by["table3-level"]["rows"][0]["value"] < 0.008
    assert len([r for r in by["table4-w"]["rows"]]) == 3 and by["table4-overestimate"]["kind"] == "arithmetic"
    w1 = next(r for r in doc["result_rows"] if r["claim"] == "W for K = 1")
    assert w1["paper_value"] == 12649.41 and abs(w1["value"] - 12649.41) <= 0.01 and w1["unit"] == "us"


def test_ferrari2001_broken_claim_exits_1(monkeypatch, capsys):
    """A recomputed value off by more than the table's precision makes its claim NOT MET, in text and JSON."""
    real = ferrari2001.table_iv_rows

    def off():
        rows = real()
        rows[0]["W_t"] += 0.5
        return rows

    monkeypatch.setattr(ferrari2001, "table_iv_rows", off)
    code, doc = reproduce_json(capsys, "ferrari2001", "--quick")
    by = claims_by_id(doc)
    assert code == 1 and by["table4-wt"]["verdict"] == C.CLAIM_NOT_MET
    assert [r["claim"] for r in by["table4-wt"]["rows"] if not r["meets_rule"]] == ["W_t for K = 1"]
    assert by["table4-w"]["verdict"] == by["table4-wpq"]["verdict"] == C.CLAIM_REPRODUCED
