"""koehler1999: the yellow share of Table 4's trTCM at an edge node's access rate, measured (issue 11, item 5)."""

from __future__ import annotations

from qosbound.reproduce import claims as C
from qosbound.reproduce import koehler1999 as K


def test_trtcm_marks_about_ten_percent_yellow_at_the_access_rate():
    """The simulated marker on 10 Mbit/s Poisson input marks 8-12 % of the packets yellow ((PIR - CIR)/rate =
    10 %), not 30 %: the reproduce output carries it as a documented finding with its cause."""
    rows = K.marker_rows(quick=True)
    row = next(r for r in rows if r["rate_bit_s"] == 10e6)
    assert 0.08 <= row["poisson_simulated"][1] <= 0.12
    claim = K.yellow_claim(rows)
    assert claim.verdict == C.FINDING and "PIR" in claim.evidence and "30 %" in claim.paper
    assert abs(claim.value - row["poisson_simulated"][1]) < 1e-12


def test_yellow_claim_turns_not_met_when_the_share_changes():
    rows = [{"rate_bit_s": 10e6, "cbr": [0.2, 0.1, 0.7], "poisson_simulated": [0.2, 0.3, 0.5]}]
    assert K.yellow_claim(rows).verdict == C.NOT_MET
