"""``qosbound tfrc``: blank per-row targets, negative-looking values, loss rates above 1, overflowing outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from qosbound.cli import main
from qosbound.commands.tfrc import compute
from tests.helpers import one_line as _one_line


def _run(capsys, *argv):
    code = main(["tfrc", *argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err




def test_a_blank_target_cell_means_no_target_for_that_row(capsys, tmp_path):
    """The row without a target gets TFRC outputs and blank gTFRC columns; the other row is unchanged."""
    f = tmp_path / "in.csv"
    f.write_text("s,rtt,loss,target\n1500,0.03,0.01,400000\n1500 B,30 ms,1 %,\n1500,0.1,0.05,2000000\n")
    code, out, err = _run(capsys, "--csv", str(f), "--json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert rows[1]["target"] is None and rows[1]["X_gtfrc"] is None and rows[1]["needs_guarantee"] is None
    assert rows[1]["X_calc"] == pytest.approx(rows[0]["X_calc"], rel=1e-12)
    full = compute(np.array([1500.0, 1500.0]), np.array([0.03, 0.1]), np.array([0.01, 0.05]),
                   np.array([4e5, 2e6]))
    for i, k in ((0, 0), (2, 1)):
        assert rows[i]["X_gtfrc"] == pytest.approx(float(full["X_gtfrc"][k]), rel=1e-12)
        assert rows[i]["needs_guarantee"] == bool(full["needs_guarantee"][k])
        assert rows[i]["p_max"] == pytest.approx(float(full["p_max"][k]), rel=1e-9)
    code, out, _ = _run(capsys, "--csv", str(f))
    assert code == 0 and out.splitlines()[2].endswith(",,,,,,")


def test_x_recv_without_a_target_in_a_row_is_refused(capsys, tmp_path):
    f = tmp_path / "in.csv"
    f.write_text("s,rtt,loss,target,x_recv\n1500,0.03,0.01,,300000\n")
    code, _, err = _run(capsys, "--csv", str(f))
    assert code == 2 and "row 2.x_recv" in _one_line(err)


@pytest.mark.parametrize("argv,needle", [
    (["--rtt", "-5ms", "--loss", "1%"], "--rtt: must be positive, got '-5ms'"),
    (["--rtt", "30ms", "--loss", "150%"], "--loss: the loss event rate is a probability in (0, 1], got '150%'"),
    (["--rtt", "30ms", "--loss", "0"], "p = 0 is slow start"),
    (["--rtt", "30ms", "--loss", "1%", "--target", "inf"], "--target: 'inf' is not a finite number"),
    (["--rtt", "30ms", "--loss", "1%", "--s", "nan"], "--s: 'nan' is not a finite number"),
    (["--json", "--s", "60000", "--rtt", "1e-300", "--loss", "1e-300"], "X_calc = inf"),
])
def test_bad_values_get_their_own_message(capsys, argv, needle):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    line = _one_line(err)
    assert needle in line, line
    if "150%" in argv:
        assert "slow start" not in line


def test_bare_numbers_on_the_command_line_are_si(capsys):
    code, out, err = _run(capsys, "--s", "1500", "--rtt", "0.03", "--loss", "0.01", "--json")
    code2, out2, _ = _run(capsys, "--s", "1500 B", "--rtt", "30 ms", "--loss", "1 %", "--json")
    assert code == code2 == 0, err
    assert json.loads(out)["X_calc"]["value"] == pytest.approx(json.loads(out2)["X_calc"]["value"], rel=1e-12)
