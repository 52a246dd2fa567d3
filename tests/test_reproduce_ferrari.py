"""Tests of ``qosbound reproduce ferrari2001`` (qosbound.reproduce.ferrari2001): Table IV from the command line.

The command runs with ``--quick`` here (Table IV is the same; Fig. 3 gets three payloads, see
tests/test_reproduce_ferrari_fig3.py)."""

from __future__ import annotations

import json

import pytest

from qosbound.cli import main
from qosbound.reproduce import ferrari2001


def test_text_output_reproduces_table_iv(capsys):
    """The command prints every K with the recomputed W to 0.01 us beside the paper's values (it exits 1: Table
    III's growth with A and the W_m hypothesis are NOT MET, tests/test_reproduce_claims.py)."""
    assert main(["reproduce", "ferrari2001", "--quick"]) == 1
    out = capsys.readouterr().out
    for w, wm in (("12649.41", "10162.51"), ("17106.82", "15949.06"), ("21564.24", "19272.81")):
        assert w in out and wm in out
    assert "Table IV reproduced" in out


def test_json_output(capsys):
    """--json gives one row per K whose values match the data file's Table IV within its tolerance."""
    assert main(["reproduce", "ferrari2001", "--quick", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    ref = ferrari2001.reference()
    assert doc["match"] is True and doc["unit"] == "us"
    assert [r["K"] for r in doc["rows"]] == [1, 2, 3]
    for row, printed in zip(doc["rows"], ref["table_iv"]):
        for key in ("W_pq", "W_t", "W"):
            assert abs(row[key] - printed[key]) <= ref["tolerance_us"]
            assert row[f"{key}_diff"] == pytest.approx(row[key] - printed[key])
        assert row["W_m"] == printed["W_m"]


def test_out_writes_the_table(tmp_path, capsys):
    """--out writes the rows as JSON and CSV files."""
    assert main(["reproduce", "ferrari2001", "--quick", "--out", str(tmp_path), "--quiet"]) == 1
    capsys.readouterr()
    rows = json.loads((tmp_path / "ferrari2001_table_iv.json").read_text())
    assert len(rows) == 3
    assert (tmp_path / "ferrari2001_table_iv.csv").read_text().startswith("K,")


def test_mismatch_exits_1(monkeypatch, capsys):
    """When a recomputed value leaves the tolerance (here: a corrupted reference) the command exits 1."""
    ref = ferrari2001.reference()
    ref["table_iv"][1]["W"] += 1.0
    monkeypatch.setattr(ferrari2001, "reference", lambda: ref)
    assert main(["reproduce", "ferrari2001", "--quick"]) == 1
    assert "NOT reproduced" in capsys.readouterr().out


def test_cbr_bound_column_against_measurement():
    """The CBR maximum bound lies above the measured mean only for K = 1: the test bed adds delay outside the model.

    (The measurements are end-to-end one-way means over three routers; the model is one output port.)
    """
    rows = ferrari2001.table_iv_rows()
    assert [r["D_max_cbr"] > r["W_m"] for r in rows] == [True, False, False]
    assert all(r["W"] > r["W_m"] for r in rows)
