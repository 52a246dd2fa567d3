"""Tests of `qosbound reproduce tsq` (Claypool, Kinicki & Kumar): the shape of the audio experiment and the cap table."""

import json

import numpy as np
import pytest
from scipy import stats

from qosbound.cli import main


@pytest.mark.slow
def test_reproduce_quick_shape(capsys, tmp_path):
    """Quick run: delay rises and drop falls with the hint, quality has an interior optimum above PI alone."""
    assert main(["reproduce", "tsq", "--quick", "--json", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = [r for r in out["audio"]["rows"] if r["hint"] != "PI alone"]
    pi_alone = next(r for r in out["audio"]["rows"] if r["hint"] == "PI alone")
    hints = [r["hint"] for r in rows]
    assert stats.spearmanr(hints, [r["delay_s"] for r in rows]).statistic > 0.9
    assert stats.spearmanr(hints, [r["drop"] for r in rows]).statistic < -0.8
    best = out["audio"]["best_hint"]
    assert 1 < best < 16
    assert max(r["quality"] for r in rows) > pi_alone["quality"]
    cap = out["cap_region"][0]["cap_min_drop"]
    assert cap[-1] == pytest.approx(1.0) and np.all(np.diff(cap) > 0)
    assert len(out["figures"]) == 4 and all((tmp_path / f.split("/")[-1]).exists() for f in out["figures"])
