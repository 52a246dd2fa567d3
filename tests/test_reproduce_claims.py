"""`qosbound reproduce`: one claim table and one exit-code rule for every paper (qosbound.reproduce.claims).

Every target prints claim | paper | qosbound | verdict, gives the same rows with --json, and exits 1 when a
claim it checks is not met. The cheap targets run for real here; for the simulation-heavy ones the
simulation is replaced by fabricated rows so the judging and the exit code are tested in seconds (the real
quick runs are in tests/test_packaging.py, from an installed wheel, and in the targets' own tests).
"""

from __future__ import annotations

import json

import pytest

from qosbound.cli import PAPERS, main
from qosbound.reproduce import claims as C
from qosbound.reproduce import ferrari2001, koehler1999, qstp2008, takeo2003, tsq


# --- the shared module -------------------------------------------------------------------------------------

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
    for word in ("claim (where)", "paper", "qosbound", "verdict", "NOT MET", "finding (differs from the paper)",
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


# --- the cheap targets, for real ---------------------------------------------------------------------------

def _json(capsys, *argv):
    code = main(["reproduce", *argv, "--json", "--quiet"])
    return code, json.loads(capsys.readouterr().out)


def test_ferrari2001_claims(capsys):
    code, doc = _json(capsys, "ferrari2001", "--quick")
    assert code == 0 and doc["exit_code"] == 0
    t3 = [c for c in doc["claims"] if c["source"] == "section V, Table III"]  # by simulation: may be a finding
    wm = [c for c in doc["claims"] if c["claim"].startswith("W_m(K) explained by")]  # paths of several hops
    rest = [c for c in doc["claims"] if c not in t3 and c not in wm]
    assert len(t3) == 1 and t3[0]["verdict"] != C.NOT_MET
    assert len(wm) >= 8 and all(c["verdict"] == C.FINDING for c in wm)
    assert len([c for c in rest if "Table IV" in c["source"]]) == 12
    assert any("Fig. 3" in c["source"] for c in rest)
    assert all(c["verdict"] == C.REPRODUCED for c in rest)
    w1 = next(c for c in doc["claims"] if c["claim"] == "W for K = 1")
    assert w1["paper_value"] == 12649.41 and abs(w1["value"] - 12649.41) <= 0.01 and w1["unit"] == "us"


def test_ferrari2001_broken_claim_exits_1(monkeypatch, capsys):
    """A recomputed value off by more than the table's precision is NOT MET: exit 1, in text and JSON alike."""
    real = ferrari2001.table_iv_rows

    def off():
        rows = real()
        rows[0]["W_t"] += 0.5
        return rows

    monkeypatch.setattr(ferrari2001, "table_iv_rows", off)
    code, doc = _json(capsys, "ferrari2001", "--quick")
    assert code == 1 and doc["exit_code"] == 1
    assert [c["claim"] for c in doc["claims"] if c["verdict"] == C.NOT_MET] == ["W_t for K = 1"]
    assert main(["reproduce", "ferrari2001", "--quick", "--quiet"]) == 1
    assert "NOT MET" in capsys.readouterr().out


def test_takeo2003_claims_and_a_broken_one(monkeypatch, capsys):
    monkeypatch.setattr(takeo2003, "approximations", lambda quick=False: _fake_approximations())
    code, doc = _json(capsys, "takeo2003", "--quick")
    table_v = [c for c in doc["claims"] if c["source"] == "Table V"]
    assert code == 0 and len(table_v) == 18 and all(c["verdict"] == C.REPRODUCED for c in table_v)
    assert all(c["verdict"] != C.NOT_MET for c in doc["claims"])  # the network rows of section IV too
    ref = takeo2003.reference()
    ref["table_V"]["cases"]["case2"]["printed"]["AF3"] = 700       # a printed value qosbound does not give
    monkeypatch.setattr(takeo2003, "reference", lambda: ref)
    code, doc = _json(capsys, "takeo2003", "--quick")
    assert code == 1
    assert [c["claim"] for c in doc["claims"] if c["verdict"] == C.NOT_MET] == ["AF3 allocation, case2"]


def _fake_approximations():
    return {"service_rate_bit_s": 1.0e6, "offered_bit_s": 1.0e6, "instantaneous": [0.1, 0.2],
            "fixed_average": [0.1, 0.2], "simulated": [0.1, 0.2], "simulated_ci": [[0.0, 0.2], [0.1, 0.3]],
            "queue": {"instantaneous": 1.0, "fixed_average": 1.0, "simulated": 1.0}}


@pytest.mark.slow
def test_takeo2003_and_koehler1999_quick_runs_meet_every_claim(capsys):
    """The two AF targets, quick, for real: exit 0, every claim reproduced (koehler1999's yellow share: a finding)."""
    for paper, n in (("takeo2003", 25), ("koehler1999", 16)):
        code, doc = _json(capsys, paper, "--quick")
        assert code == 0, [c for c in doc["claims"] if c["verdict"] == C.NOT_MET]
        # koehler1999's first row is the trTCM's yellow share, a documented finding (tests/test_koehler_yellow.py);
        # its last 11 rows are the TCP claims of sections 4.1-4.2 (tests/test_koehler_tcp.py)
        # takeo2003's HTML transfer time and throughput rows (Figs. 3-4) are documented findings
        # (tests/test_reproduce_takeo_net.py)
        rest = doc["claims"][1:5] if paper == "koehler1999" else [c for c in doc["claims"] if c["source"] not in
                                                                   ("Fig. 3", "Fig. 4")]
        assert len(doc["claims"]) == n and all(c["verdict"] == C.REPRODUCED for c in rest)


# --- the simulation-heavy targets, on fabricated rows ----------------------------------------------------

def _koehler_loads(af13):
    return [{"load_percent": p, "bandwidth_mbit_s": b, "closed_form": [0.0, 0.0, d], "simulated": [0.0, 0.0, d],
             "simulated_interval": [C.interval(0, 0, "95% CI")] * 2 + [C.interval(d - 0.001, d + 0.001, "95% CI")]}
            for p, b, d in zip((50, 100, 140), (100, 50, 36), af13)]


def test_koehler1999_judges_section_4_2(monkeypatch, capsys):
    monkeypatch.setattr(koehler1999, "tcp_section", lambda quick, out: (None, [], []))  # tests/test_koehler_tcp.py
    monkeypatch.setattr(koehler1999, "marker_rows", lambda quick=False: [])
    monkeypatch.setattr(koehler1999, "load_rows", lambda quick=False: _koehler_loads([0.0, 0.05, 0.4]))
    code, doc = _json(capsys, "koehler1999", "--quick")
    assert code == 0 and [c["verdict"] for c in doc["claims"]] == [C.REPRODUCED] * 4
    # AF13's drop falling at the highest load (beyond the intervals) breaks "AF13 pays for rising load"
    monkeypatch.setattr(koehler1999, "load_rows", lambda quick=False: _koehler_loads([0.0, 0.05, 0.01]))
    code, doc = _json(capsys, "koehler1999", "--quick")
    assert code == 1
    assert sum(c["verdict"] == C.NOT_MET for c in doc["claims"]) == 2      # closed form and simulated
    # a lower precedence dropped more than a higher one breaks the ordering claim
    rows = _koehler_loads([0.0, 0.05, 0.4])
    rows[2]["closed_form"] = [0.5, 0.0, 0.4]
    monkeypatch.setattr(koehler1999, "load_rows", lambda quick=False: rows)
    code, doc = _json(capsys, "koehler1999", "--quick")
    assert code == 1 and doc["claims"][0]["verdict"] == C.NOT_MET
    assert "AF11 0.5 > AF12 0" in doc["claims"][0]["evidence"]


# qstp2008's claims and exit code: tests/test_qstp_reproduce.py


def _tsq_sweep(best_quality_hint: int, pi_delay=0.1):
    rows = []
    for h in range(1, 17):
        q = 0.9 - 0.02 * abs(h - best_quality_hint)
        rows.append({"hint": h, "delay_s": 0.01 * h, "drop": 0.3 / h, "rate_bps": 1e5, "quality": q,
                     "replications": 4, "delay_se": 0.001, "rate_se": 100.0, "quality_reps_mean": q,
                     "quality_reps_se": 0.002})
    rows.append({"hint": "PI alone", "delay_s": pi_delay, "drop": 0.02, "rate_bps": 1e5, "quality": 0.7,
                 "replications": 4, "delay_se": 0.001, "rate_se": 100.0, "quality_reps_mean": 0.7,
                 "quality_reps_se": 0.002})
    return {"rows": rows, "best_hint": best_quality_hint, "delays": {}, "packets": 1}


def test_tsq_claims_and_exit_code(monkeypatch, capsys):
    monkeypatch.setattr(tsq, "mdp_scan", lambda *a, **k: [])
    monkeypatch.setattr(tsq, "experiments", lambda quick, **k: {"audio": tsq.audio_sweep(), "seconds": 0.0,
                                                                "settings": tsq.settings(quick)})
    monkeypatch.setattr(tsq, "audio_sweep", lambda *a, **k: _tsq_sweep(6, pi_delay=0.16))
    code, doc = _json(capsys, "tsq", "--quick")
    assert code == 0 and all(c["verdict"] == C.REPRODUCED for c in doc["claims"])
    # the optimum resolved at hint 11, and PI alone's delay far from hint 16's: two claims not met
    monkeypatch.setattr(tsq, "audio_sweep", lambda *a, **k: _tsq_sweep(11, pi_delay=0.05))
    code, doc = _json(capsys, "tsq", "--quick")
    assert code == 1
    assert sorted(c["claim"] for c in doc["claims"] if c["verdict"] == C.NOT_MET) == [
        "audio flow: best overall quality at hint 6", "without TSQ the audio delay is about that of hint 16"]
