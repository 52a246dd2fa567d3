"""`qosbound reproduce takeo2003`'s claims: Table V and the quick network run's verdicts, the approximations
replaced by fabricated rows so the judging and the exit code are tested in seconds.
"""

from __future__ import annotations

import math

import pytest

from qosbound.reproduce import claims as C
from qosbound.reproduce import takeo2003
from qosbound.reproduce import takeo2003_net as N
from qosbound.validation.stats import two_sided_t
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
    # the rules of 118e57b, fixed before this run: section III.D's shares recomputed (0.577; 3.1); in the quick
    # run's three replications neither case 3's variance (case 1's larger: F = 0.83 on (2, 2) dof, power 17 %) nor
    # case 1's second place on video 1's output-interval CV (case 5's lower) is shown: NOT MET
    assert by["class3-share-of-video"]["verdict"] == by["class2-above-voice"]["verdict"] == C.CLAIM_REPRODUCED
    assert by["fig3-variance-case3-largest"]["verdict"] == by["fig6-case1-second"]["verdict"] == C.CLAIM_NOT_MET
    assert by["fig3-variance-case3-largest"]["power"] < 0.5
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


# --- section III.D's shares, Fig. 3's variance and Fig. 6's second place, on fabricated case statistics ---------


def test_section_3d_shares_are_recomputed_from_tables_1_4_and_5():
    """Class 3's 600 kbit/s over the videos' 520.7 + 519.6 kbit/s is 0.577, within 0.05 of 'almost 60 %'; class 2's
    400 kbit/s over the voices' 2 x 64 kbit/s is 3.1, more than twice; other numbers move the rows."""
    share, voice = takeo2003.share_claims(takeo2003.allocations())
    assert share.value == pytest.approx(600 / 1040.3) and share.verdict == C.REPRODUCED
    assert voice.value == pytest.approx(400 / 128) and voice.verdict == C.REPRODUCED
    ref = takeo2003.reference()
    ref["table_IV"]["bit_rate_kbit_s"].update(video1=400.0, video2=400.0, voice1=100.0, voice2=100.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(takeo2003, "reference", lambda: ref)
        share, voice = takeo2003.share_claims(takeo2003.allocations())
    assert share.verdict == C.NOT_MET and voice.verdict == C.NOT_MET       # 0.75 and 2.0


def _cases(values, sds, n=10):
    """{(case, 0): {metric: (mean, 95 % t half-width, n)}} for every metric from per-case means and SDs."""
    t = two_sided_t(0.95, n - 1)
    return {(c, 0): {k: (values[i], t * sds[i] / math.sqrt(n), n) for k in ("html.time5k", "video1.cv")}
            for i, c in enumerate(N.CASES)}


def test_case3_variance_largest_by_f_tests():
    """Case 3's standard deviation three times the others': the F tests reject; the same as the others': not shown;
    another case's larger: contradicted."""
    row = N.variance_claim(_cases([1.0] * 6, [0.1, 0.1, 0.3, 0.1, 0.1, 0.1]), 0, "html.time5k", "v", "Fig. 3",
                           "case3", "s", cid="fig3-variance-case3-largest")
    assert row.verdict == C.REPRODUCED and row.p_value < 0.01 and row.power is not None
    row = N.variance_claim(_cases([1.0] * 6, [0.1] * 6), 0, "html.time5k", "v", "Fig. 3", "case3", "s",
                           cid="fig3-variance-case3-largest")
    assert row.verdict == C.NOT_MET and row.p_value == pytest.approx(0.5)
    row = N.variance_claim(_cases([1.0] * 6, [0.3, 0.1, 0.1, 0.1, 0.1, 0.1]), 0, "html.time5k", "v", "Fig. 3",
                           "case3", "s", cid="fig3-variance-case3-largest")
    assert row.verdict == C.NOT_MET and row.p_value > 0.95


def test_case1_second_smallest_leaves_case3_out():
    """Case 1 below cases 2, 4, 5, 6 is reproduced although case 3 is lower still; case 1 above case 5 is not."""
    kw = dict(largest=False, cid="fig6-case1-second", exclude=("case3",))
    row = N.order_claim(_cases([0.2, 0.5, 0.1, 0.5, 0.5, 0.5], [0.05] * 6), 0, "video1.cv", "s", "Fig. 6", "case1",
                        "", **kw)
    assert row.verdict == C.REPRODUCED and "case3" not in row.test
    row = N.order_claim(_cases([0.2, 0.5, 0.1, 0.5, 0.15, 0.5], [0.05] * 6), 0, "video1.cv", "s", "Fig. 6",
                        "case1", "", **kw)
    assert row.verdict == C.NOT_MET and "case5" in row.test
