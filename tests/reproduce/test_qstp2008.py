"""`qosbound reproduce qstp2008`: the command for Jourjon, Lochin & Sénac (2008), Figs. 4-7, on fabricated results
(the simulations are replaced so the JSON, the text and the exit code are tested in seconds; the rows' rules in
tests/reproduce/test_qstp2008_claims.py, the experiments in test_qstp2008_experiments.py, the simulator's own
claims in tests/validation/test_qstp_sim.py), and the real quick run (slow)."""

from __future__ import annotations

import json

import pytest

from qosbound.cli import main
from qosbound.reproduce import claims as C
from qosbound.reproduce import qstp2008 as Q
from tests.reproduce import qstp2008_fabricated as FAB

R = C.REPRODUCED


@pytest.mark.parametrize("kw, code, not_met", [
    # TFRC holding g is a finding: its tested cause, TFRC following its equation (above g), is reproduced
    ({}, 0, []),
    (dict(gtfrc=0.9), 1, ["fig4c-qstp-reaches", "fig5c-qstp-holds"]),
    # TFRC holds g but no longer follows its equation: the difference has no tested cause, NOT MET
    (dict(tfrc=1.3), 1, ["fig4b-tfrc-misses", "fig5b-tfrc-like-tcp", "tfrc-follows-equation"]),
])
def test_qstp2008_json_and_exit_code(monkeypatch, capsys, kw, code, not_met):
    """The command judges the results against the claims file, prints JSON (no NaN: the series' gaps become
    null) and exits 1 on NOT MET."""
    monkeypatch.setattr(Q, "results", lambda quick=True, seed=2008, progress=None: FAB.results(**kw))
    got = main(["reproduce", "qstp2008", "--quick", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert got == code == doc["exit_code"]
    assert sorted(c["id"] for c in doc["claims"] if c["verdict"] == C.CLAIM_NOT_MET) == not_met
    by = {c["id"]: c for c in doc["claims"]}
    if not not_met:
        assert by["fig4b-tfrc-misses"]["verdict"] == by["fig5b-tfrc-like-tcp"]["verdict"] == C.CLAIM_FINDING
    # the fabricated results have no clamp run: that claim is not attempted, with the reason, never absent
    assert by["gtfrc-clamp-binds"]["verdict"] == C.NOT_ATTEMPTED and doc["unlisted_rows"] == []
    # nor the recovery experiment, nor the RTO rule's sensitivity run: their claims likewise
    assert all(by[c]["verdict"] == C.NOT_ATTEMPTED for c in ("fig4b-slow-recovery", "fig4b-episode-spares-tfrc",
                                                              "fig4b-recovery-in-episode", "rto-floor-insensitive"))
    # 11 rows, and the aggregate's two (Figs. 4 and 5) and the two min/max rows of Fig. 5
    assert len(doc["claims"]) == 18 and len(doc["result_rows"]) == 15
    assert doc["results"]["fig7"][0]["sent_series"] == [1.0, None]
    assert main(["reproduce", "qstp2008", "--quick", "--quiet"]) == code
    assert f"-> exit {code}" in capsys.readouterr().out


@pytest.mark.slow
def test_reproduce_quick_json(capsys, tmp_path):
    """The real quick run (moved from tests/test_tfrc_reproduce.py): every (protocol, n) row of Fig. 5 with mean,
    std and the equation's prediction; gTFRC holds both targets as the paper says; Fig. 4(b)'s recovery; TFRC's rate tracks the TFRC
    equation at its own simulated p and R; Figs. 4-7 are written as PNG and SVG."""
    code = main(["reproduce", "qstp2008", "--quick", "--json", "--quiet", "--out", str(tmp_path)])
    doc = json.loads(capsys.readouterr().out)
    by = {c["id"]: c["verdict"] for c in doc["claims"]}
    # the evidence of the quick run: TCP misses, gTFRC holds; plain TFRC holds g too, a finding whose cause
    # (TFRC follows its equation, which exceeds g here) is reproduced
    assert by["fig4b-tfrc-misses"] == by["fig5b-tfrc-like-tcp"] == C.CLAIM_FINDING
    # Fig. 4(b)'s recovery: the aggregate-class episode spares TFRC; after the IN-marked one its recovery time
    # (35.5 s over 4 runs, one censored at 60 s, p = 0.085) is not shown above 20 s at the family level (Holm over
    # 5 tests: 0.26), so the claim is NOT MET in quick mode and the command exits 1
    assert by["fig4b-episode-spares-tfrc"] == C.CLAIM_REPRODUCED
    assert by["fig4b-recovery-in-episode"] == by["fig4b-slow-recovery"] == C.CLAIM_NOT_MET
    # the rules of 118e57b, fixed before this run: the aggregate above its target in every experiment of Figs. 4-5
    # (weakest p 0.006) and TFRC's min/max range below TCP's (p 0.008) reproduced; QSTP's range is not the
    # smallest (13.7 kbit/s against TFRC's 11.4, p 0.67): NOT MET
    assert by["tcp-aggregate-above-target"] == by["fig5b-tfrc-amplitude-smaller"] == C.CLAIM_REPRODUCED
    assert code == 1 and sorted(c["id"] for c in doc["claims"] if c["verdict"] == C.CLAIM_NOT_MET) == [
        "fig4b-recovery-in-episode", "fig4b-slow-recovery", "fig5c-minmax-smallest"]
    assert by["tfrc-follows-equation"] == by["fig4c-qstp-reaches"] == by["fig5c-qstp-holds"] == C.CLAIM_REPRODUCED
    # the RTO rule: Linux's by default, ns-2's whole-RTO floor as the sensitivity run; Fig. 4's outcome unmoved
    assert by["rto-floor-insensitive"] == C.CLAIM_REPRODUCED
    assert {r["rto_floor"] for r in doc["results"]["fig4"]} == {"rttvar"}
    assert {r["rto_floor"] for r in doc["results"]["rto_ns2"]} == {"rto"} and len(doc["results"]["rto_ns2"]) == 3
    # the sensitivity run at g = 800 kbit/s: the TFRC equation gives less than g, TFRC misses it, gTFRC holds it
    assert by["gtfrc-clamp-binds"] == C.CLAIM_REPRODUCED
    clamp = {r["protocol"]: r for r in doc["results"]["clamp"]}
    assert clamp["tfrc"]["predicted_mean"] < clamp["tfrc"]["target"]
    rows = doc["results"]["fig5"]
    assert len(rows) == 3 * len(doc["settings"]["n_values"]) and len(doc["results"]["fig4"]) == 3
    for r in rows + doc["results"]["fig4"]:
        assert r["throughput_std"] >= 0 and r["replications"] >= 3
        assert 0 < r["throughput_mean"] + r["aggregate_mean"] <= 1.01e6
    # gTFRC's own rows of Figs. 4(c) and 5(c) (the min/max row of Fig. 5(c) has the same source)
    by_source = {c["source"]: c for c in doc["result_rows"] if c["claim"].startswith("gTFRC (QSTP)")}
    assert by_source["section 5.2, Fig. 4(c)"]["verdict"] == R and by_source["section 5.3, Fig. 5(c)"]["verdict"] == R
    tf = [r for r in rows if r["protocol"] == "tfrc" and r["predicted_mean"]]
    ratio = sum(r["throughput_mean"] for r in tf) / sum(r["predicted_mean"] for r in tf)
    assert 0.85 < ratio < 1.15
    assert len(doc["figures"]) == 10
    assert all(r["size"] == 1500 for r in rows)  # "the packet size is fixed to 1500 bytes" (section 5.1)


def test_the_command_module_keeps_its_public_names():
    """The split into experiments, claims and figures keeps ``qosbound.reproduce.qstp2008``'s public names (the
    CLI, tests and benchmarks import them from here) bound to the same objects."""
    from qosbound.reproduce import qstp2008_claims, qstp2008_experiments

    for name in Q.__all__:
        assert hasattr(Q, name), name
    assert Q.results is qstp2008_experiments.results and Q.claims is qstp2008_claims.claims
    assert Q.MARGIN == 0.05 and Q.PACKET_SIZE == 1500.0


def test_the_rto_sensitivity_is_printed_beside_the_default(monkeypatch, capsys):
    """The text output names the default RTO rule (Linux's, the paper's end hosts) in its heading and prints Fig. 4
    under both rules, with the aggregate's timeouts per drop where the drops are known."""
    res = dict(FAB.results(), rto_ns2=FAB.rto_ns2(tcp=0.78))
    monkeypatch.setattr(Q, "results", lambda quick=True, seed=2008, progress=None: res)
    assert main(["reproduce", "qstp2008", "--quick", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "RTO Linux's srtt + max(200 ms, 4 rttvar) (the end hosts run GNU/Linux, section 5.1)" in out
    table = out[out.index("Sensitivity: the TCP RTO rule"):].splitlines()[2:8]
    assert [line.split("|")[1].strip() for line in table] == ["rttvar", "rto"] * 3
    assert table[1].split()[-1] == "0.50" and table[0].split()[-1] == "-"
