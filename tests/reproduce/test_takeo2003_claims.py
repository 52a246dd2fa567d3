"""`qosbound reproduce takeo2003`'s claims: Table V and the quick network run's verdicts, the approximations
replaced by fabricated rows so the judging and the exit code are tested in seconds.
"""

from __future__ import annotations

from qosbound.reproduce import claims as C
from qosbound.reproduce import takeo2003
from tests.helpers import claims_by_id, reproduce_json


def test_takeo2003_claims_and_a_broken_one(monkeypatch, capsys):
    """Table V reproduced (18 rows), and the quick network run's verdicts: case 3's HTML drops and the voice
    claims shown by their one-sided tests; the transfer time and throughput orderings not shown (their cause,
    the missing handshake, untested: NOT MET); conclusion (i) NOT MET on case 1's HTML; Fig. 8 left to the full
    mode; a changed printed allocation makes Table V NOT MET."""
    monkeypatch.setattr(takeo2003, "approximations", lambda quick=False: _fake_approximations())
    code, doc = reproduce_json(capsys, "takeo2003", "--quick")
    by = claims_by_id(doc)
    assert code == 1 and doc["unlisted_rows"] == []
    assert by["table5-allocations"]["verdict"] == C.CLAIM_REPRODUCED and len(by["table5-allocations"]["rows"]) == 18
    for cid in ("html-drops-case3", "fig5-voice-cases-2-4", "fig5-voice-delayed-cases-2-4"):
        assert by[cid]["verdict"] == C.CLAIM_REPRODUCED and by[cid]["p_adjusted"] <= 0.05, cid
    for cid in ("fig3-transfer-case3-largest", "fig4-throughput-case3-smallest"):
        assert by[cid]["verdict"] == C.CLAIM_NOT_MET and "untested" in by[cid]["reason"], cid
        assert by[cid]["power"] is not None
    for cid in ("fig8-sync-error-falls", "fig8-sync-fine-at-200ms", "fig8-case3-smallest-50-150"):
        assert by[cid]["verdict"] == C.NOT_ATTEMPTED and "mode" in by[cid]["reason"], cid   # m >= 1: full mode
    rec = by["conclusion-recommend-1-5-6"]     # voice 1 smooth in cases 1, 5, 6, but case 1's HTML not faster than 3's
    assert rec["verdict"] == C.CLAIM_NOT_MET and "case1 html.time5k < case3" in rec["test"]
    ref = takeo2003.reference()
    ref["table_V"]["cases"]["case2"]["printed"]["AF3"] = 700       # a printed value qosbound does not give
    monkeypatch.setattr(takeo2003, "reference", lambda: ref)
    code, doc = reproduce_json(capsys, "takeo2003", "--quick")
    t5 = claims_by_id(doc)["table5-allocations"]
    assert code == 1 and t5["verdict"] == C.CLAIM_NOT_MET
    assert [r["claim"] for r in t5["rows"] if not r["meets_rule"]] == ["AF3 allocation, case2"]


def _fake_approximations():
    return {"service_rate_bit_s": 1.0e6, "offered_bit_s": 1.0e6, "instantaneous": [0.1, 0.2],
            "fixed_average": [0.1, 0.2], "simulated": [0.1, 0.2], "simulated_ci": [[0.0, 0.2], [0.1, 0.3]],
            "queue": {"instantaneous": 1.0, "fixed_average": 1.0, "simulated": 1.0}}
