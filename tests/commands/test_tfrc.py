"""Tests of qosbound.commands.tfrc: ``qosbound tfrc`` prints the equation's rate, gTFRC's, JSON and CSV tables."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from qosbound.analytic import tfrc as T
from qosbound.cli import main


def run(capsys, *argv):
    code = main(["tfrc", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_point_text(capsys):
    """The README command prints X_calc with units: 1500 B, 30 ms, 1 % gives about 4.49 Mbit/s."""
    code, out, _ = run(capsys, "--s", "1500B", "--rtt", "30ms", "--loss", "1%")
    assert code == 0
    assert "X_calc" in out and "Mbit/s" in out and "4.493" in out


def test_point_json_matches_library(capsys):
    """--json gives the same X_calc (bit/s) as 8 * tfrc_rate, and gTFRC's answer for a target."""
    code, out, _ = run(capsys, "--s", "1000 B", "--rtt", "30 ms", "--loss", "20%", "--target", "400 kbit/s",
                       "--json")
    assert code == 0
    doc = json.loads(out)
    xc = 8 * float(T.tfrc_rate(1000, 0.03, 0.2))
    assert doc["X_calc"]["value"] == pytest.approx(xc, rel=1e-12)
    assert doc["X_calc"]["unit"] == "bit/s"
    assert doc["needs_guarantee"]["value"] is (400e3 > xc)
    assert doc["X_gtfrc"]["value"] == pytest.approx(max(xc, 400e3), rel=1e-12)
    assert doc["p_max"]["value"] < 0.2


def test_needs_guarantee_text(capsys):
    """A target above X_calc is reported as needing the guarantee, and gTFRC sends at the target."""
    code, out, _ = run(capsys, "--rtt", "100ms", "--loss", "5%", "--target", "2 Mbit/s")
    assert code == 0
    assert "needs the guarantee: yes" in out
    assert "X_gTFRC         = 2 Mbit/s" in out


@pytest.mark.parametrize("argv,field", [
    (["--rtt", "30ms", "--loss", "0"], "--loss"),
    (["--rtt", "30ms", "--loss", "150%"], "--loss"),
    (["--rtt", "-1 ms", "--loss", "1%"], "--rtt"),
    (["--rtt", "30 kg", "--loss", "1%"], "--rtt"),
    (["--loss", "1%"], "--rtt"),
    (["--rtt", "30ms", "--loss", "1%", "--target", "5 ms"], "--target"),
    (["--rtt", "30ms", "--loss", "1%", "--s", "0 B"], "--s"),
])
def test_bad_input_one_line_exit_2(capsys, argv, field):
    """Bad input exits 2 with one line naming the flag."""
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and field in err


def test_csv_table(capsys, tmp_path):
    """CSV input gives one output row per input row, with units in the header; --json gives the same rows."""
    f = tmp_path / "in.csv"
    f.write_text("s,rtt,loss,target\n1500 B,30 ms,1 %,400 kbit/s\n1000,0.1,0.05,500000\n")
    code, out, _ = run(capsys, "--csv", str(f))
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 3 and lines[0].startswith("s [B],rtt [s],loss [1],X_calc [bit/s]")
    code, out, _ = run(capsys, "--csv", str(f), "--json")
    rows = json.loads(out)["rows"]
    assert rows[1]["X_calc"] == pytest.approx(8 * float(T.tfrc_rate(1000, 0.1, 0.05)), rel=1e-12)
    assert rows[1]["needs_guarantee"] is True and rows[0]["needs_guarantee"] is False


def test_csv_errors(capsys, tmp_path):
    """A CSV with a missing column or a bad cell exits 2 naming the file and the row."""
    f = tmp_path / "bad.csv"
    f.write_text("s,rtt\n1500,0.03\n")
    code, _, err = run(capsys, "--csv", str(f))
    assert code == 2 and "bad.csv" in err and "loss" in err
    f.write_text("s,rtt,loss\n1500,0.03,2\n")
    code, _, err = run(capsys, "--csv", str(f))
    assert code == 2 and "row 2.loss" in err


@settings(max_examples=25, deadline=None)
@given(loss=st.floats(1e-6, 1.0), rtt_ms=st.floats(0.1, 2000))
def test_json_always_finite(loss, rtt_ms):
    """For any valid input the JSON output is finite (json.dumps refuses NaN/inf)."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["tfrc", "--rtt", f"{rtt_ms} ms", "--loss", repr(loss), "--target", "1 Mbit/s", "--json"])
    assert code == 0
    doc = json.loads(buf.getvalue())
    assert doc["X_calc"]["value"] > 0
