"""Tests of qosbound.reproduce.qstp2008: `qosbound reproduce qstp2008 --quick` runs and checks Jourjon et al.'s claim."""

from __future__ import annotations

import json

import pytest

from qosbound.cli import main


@pytest.mark.slow
def test_reproduce_quick_json(capsys, tmp_path):
    """The quick run reports every (g, protocol, n) row with mean, std and the equation's prediction;
    gTFRC holds both targets as the paper says; figures are written."""
    code = main(["reproduce", "qstp2008", "--quick", "--json", "--quiet", "--out", str(tmp_path)])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    rows = doc["rows"]
    assert len(rows) == 2 * 2 * len(doc["settings"]["n_values"])
    for r in rows:
        assert r["throughput_std"] >= 0 and r["replications"] >= 3
        assert 0 < r["throughput_mean"] + r["aggregate_mean"] <= 1.01e6
    claims = {(c["target"], c["protocol"]): c for c in doc["target_checks"]}
    assert claims[(400e3, "gtfrc")]["agrees_with_paper"] and claims[(500e3, "gtfrc")]["agrees_with_paper"]
    # TFRC's rate tracks the equation at its own simulated p and R (the mean of the rows within 15 %)
    tf = [r for r in rows if r["protocol"] == "tfrc" and r["predicted_mean"]]
    ratio = sum(r["throughput_mean"] for r in tf) / sum(r["predicted_mean"] for r in tf)
    assert 0.85 < ratio < 1.15
    assert len(doc["figures"]) == 4
