"""`qosbound reproduce`: one claims report and one exit-code rule for every paper (qosbound.reproduce.claims).

Every target judges its result rows against the paper's claims file, prints one row per claim (behaviour,
arithmetic, own hypotheses apart), gives the same claims with --json, and exits 1 when a claim is NOT MET. Each
paper's claims, judged by its target, are tested beside its other tests: tests/reproduce/test_<paper>_claims.py
(ferrari2001, takeo2003, koehler1999), test_tsq_claims.py, test_qstp2008.py.
"""

from __future__ import annotations

import json

from qosbound.cli import PAPERS
from qosbound.reproduce import claims as C
from qosbound.reproduce import ferrari2001, koehler1999, qstp2008, takeo2003, tsq


def test_verdicts_and_exit_code():
    """reproduced and documented findings exit 0; one NOT MET exits 1; a finding qosbound no longer shows fails."""
    ok = C.judge("x", "Table 1", "1", "1", True, "equal")
    found = C.judge("y", "Fig. 2", "falls", "holds", True, "rule", finding="because of z")
    gone = C.judge("y", "Fig. 2", "falls", "falls", False, "rule", finding="because of z")
    bad = C.compare("w", "Table 3", 10.0, 10.5, 0.1, "s")
    assert (ok.verdict, found.verdict, gone.verdict, bad.verdict) == (C.REPRODUCED, C.FINDING, C.NOT_MET, C.NOT_MET)
    assert found.evidence == "because of z" and "no longer shows" in gone.evidence
    assert C.exit_code([ok, found]) == 0
    assert C.exit_code([ok, found, bad]) == 1 and C.exit_code([gone]) == 1
    assert C.compare("w", "Table 3", 10.0, 10.05, 0.1, "s").verdict == C.REPRODUCED
    assert C.compare("w", "Table 3", 10.0, float("nan"), 0.1, "s").verdict == C.NOT_MET


def test_table_and_json_carry_the_same_rows(capsys):
    rows = [C.compare("W for K = 1", "Table IV", 1.0e-3, 1.2e-3, 1e-5, "s"),
            C.judge("TFRC does not hold g", "Fig. 5", "falls below g", "holds g", True, "rule r",
                    finding="the core polices each aggregate", interval=C.interval(0.0, 2.0, "one-sided 95% CI"))]
    C.print_table("Claims", rows)
    out = capsys.readouterr().out
    for word in ("claim (where)", "paper", "qosbound", "verdict", "NOT MET", C.FINDING,
                 "rule: rule r", "finding: the core polices each aggregate", "-> exit 1", "1 ms", "1.2 ms"):
        assert word in out, word
    doc = C.document("p", rows, extra=1)
    assert json.loads(json.dumps(doc))["claims"][0]["verdict"] == C.NOT_MET
    assert doc["exit_code"] == 1 and doc["extra"] == 1 and set(doc["verdicts"]) == set(C.VERDICTS)
    assert doc["claims"][1]["interval"] == {"low": 0.0, "high": 2.0, "kind": "one-sided 95% CI"}


def test_every_target_uses_the_shared_table():
    """The five targets of the CLI, each building its rows with the shared module."""
    assert set(PAPERS) == {"ferrari2001", "takeo2003", "koehler1999", "qstp2008", "tsq"}
    for mod in (ferrari2001, takeo2003, koehler1999, qstp2008, tsq):
        assert mod.C is C and callable(mod.claims)
