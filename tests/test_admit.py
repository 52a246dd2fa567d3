"""Admission search: the boundary of the feasible region, and the SLO that sets it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qosbound.cli import main
from qosbound.scenario import build, load_raw, set_path
from qosbound.systems import get_system
from qosbound.progress import QUIET
from qosbound.verdicts import judge_slos

ROOT = Path(__file__).resolve().parents[1]


def _admit(capsys, *args):
    code = main(["admit", *args, "--json", "--quiet"])
    return code, json.loads(capsys.readouterr().out)


def test_flat_zero_margin_does_not_stop_the_search(capsys):
    """gTFRC's rate equals its target exactly over a range of loss rates (margin 0): the search must go on to
    where the friendliness SLO fails, and name that SLO."""
    path = str(ROOT / "examples" / "qstp_gtfrc.yaml")
    code, doc = _admit(capsys, path, "--vary", "flows.flow1.loss")
    assert code == 0
    x = doc["value"]
    assert doc["binding_slo"] == "flow1.friendliness <= 1.25"
    raw = load_raw(path)
    system = get_system("tfrc")

    def ok(v):
        scn = build(set_path(raw, "flows.flow1.loss", v))
        return all(not r.failed for r in judge_slos(system, scn, system.evaluate(scn, ["closed-form"], QUIET)))

    assert ok(x) and not ok(x * 1.002)


def test_slos_the_method_cannot_judge_fall_back_to_the_closed_form(capsys):
    """The EF example's worst-case-mean SLO has only a closed form; admitting with the model still works."""
    code, doc = _admit(capsys, str(ROOT / "examples" / "ferrari2001.yaml"), "--vary", "traffic.EF.rate")
    assert code == 0 and doc["method"] == "model-checked"
    assert 300e3 < doc["value"] < 2e6 and doc["binding_slo"] == "EF.loss <= 1e-4"


def test_no_feasible_value_exits_1(tmp_path, capsys):
    raw = load_raw(ROOT / "examples" / "ferrari2001.yaml")
    raw["slos"] = [{"metric": "EF.delay.mean", "max": "1 us"}]
    p = tmp_path / "s.yaml"
    import yaml

    p.write_text(yaml.safe_dump(raw))
    code, doc = _admit(capsys, str(p), "--vary", "traffic.EF.rate", "--method", "model-checked")
    assert code == 1 and doc["value"] is None


@pytest.mark.parametrize("param,message", [("traffic.EF.nosuch", "has no parameter"), ("name", "cannot vary")])
def test_bad_parameter_is_an_input_error(capsys, param, message):
    code = main(["admit", str(ROOT / "examples" / "ferrari2001.yaml"), "--vary", param, "--quiet"])
    assert code == 2 and message in capsys.readouterr().err
