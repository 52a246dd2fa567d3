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


@pytest.mark.parametrize("args,needle", [
    (["--min", "abc"], "--min: cannot read 'abc' as a rate"),
    (["--min", "2e6 bit/s", "--max", "1e6 bit/s"], "--min: the search range is empty"),
    (["--min", "2 Mbit/s", "--max", "1 Mbit/s"], "--min: the search range is empty"),
    (["--max", "nan"], "--max: 'nan' is not a finite number"),
    (["--max", "inf"], "--max: 'inf' is not a finite number"),
    (["--direction", "smallest", "--min", "-1 bit/s"], "--min: must be positive"),
    (["--max", "10 ms"], "--max: '10 ms' has the wrong units: a time, not a rate"),
    (["--max", "1000000"], "--max: '1000000' has no unit: write a rate with its unit, e.g. '1000000 bit/s'"),
    (["--max", "10 Mbit"], "--max: '10 Mbit' has the wrong units: a size (an amount of data), not a rate"),
])
def test_bad_search_ranges_are_input_errors(capsys, args, needle):
    """Each of these returned an answer (or a traceback) before: 1e-19 bit/s for --min -1; a bare --max 1000000
    was 1 Mbit/s without a word."""
    code = main(["admit", str(ROOT / "examples" / "ferrari2001.yaml"), "--vary", "traffic.EF.rate", "--quiet",
                 *args])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err


def test_units_in_the_range_are_read_in_si(tmp_path, capsys):
    """``--min '100 kbit/s'`` was 'could not convert string to float'; with units it equals the SI numbers."""
    import yaml

    raw = load_raw(ROOT / "examples" / "ferrari2001.yaml")
    raw["slos"] = [{"metric": "EF.delay.worst_case_mean", "max": "25 ms"}]
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(raw))
    code, doc = _admit(capsys, str(p), "--vary", "traffic.EF.rate", "--method", "closed-form",
                       "--min", "100 kbit/s", "--max", "1900 kbit/s")
    code2, doc2 = _admit(capsys, str(p), "--vary", "traffic.EF.rate", "--method", "closed-form",
                         "--min", "1e5 bit/s", "--max", "1.9e6bit/s")
    assert code == code2 == 0
    assert doc["value"] == pytest.approx(doc2["value"], rel=1e-9) and 3e5 < doc["value"] < 1.9e6


def test_an_invalid_trial_value_is_named_not_counted_as_an_slo_failure(capsys):
    """Raising min_th up to max_th makes the RIO scenario invalid: the answer says so, and names no SLO."""
    code, doc = _admit(capsys, str(ROOT / "examples" / "qstp2008.yaml"), "--vary",
                       "classes.AF1.dropper.thresholds.AF11.min_th", "--method", "closed-form")
    assert code == 0 and doc["value"] == 39
    assert doc["binding_slo"] == ""
    assert "beyond it the scenario is invalid" in doc["message"]
    assert "thresholds out of order: min_th = 40 must be below max_th = 40" in doc["message"]


def test_at_the_end_of_the_range_no_slo_is_called_binding(tmp_path, capsys):
    """`admit --max` inside the feasible region named a 'binding SLO' while saying every SLO holds up to the
    limit: now no SLO binds there, and the message names the tightest SLO with its slack instead."""
    import yaml

    raw = load_raw(ROOT / "examples" / "ferrari2001.yaml")
    raw["slos"] = [{"metric": "EF.delay.worst_case_mean", "max": "25 ms"}]
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(raw))
    code, doc = _admit(capsys, str(p), "--vary", "traffic.EF.rate", "--method", "closed-form", "--max", "320 kbit/s")
    assert code == 0 and doc["value"] == 320e3 and doc["binding_slo"] == ""
    assert doc["message"].startswith("every SLO holds up to the given limit; the tightest there: "
                                     "EF.delay.worst_case_mean <= 25 ms (")
    assert doc["search"] == {"parameter": "traffic.EF.rate", "kind": "rate", "unit": "bit/s", "current": 300e3,
                             "min": None, "max": 320e3}
    assert doc["inputs"]["traffic.EF.rate"]["value"] == 300e3
    code = main(["admit", str(p), "--vary", "traffic.EF.rate", "--method", "closed-form", "--max", "320 kbit/s",
                 "--quiet"])
    out = capsys.readouterr().out
    assert out.startswith("inputs as understood\n")
    assert ("search: traffic.EF.rate (rate, now 300 kbit/s), the largest value with every SLO holding up to "
            "320 kbit/s (--max), by closed-form") in out
    assert "= 320 kbit/s (method closed-form, no SLO binds, " in out and "binding SLO" not in out


def test_a_count_range_stays_bare_and_a_rate_range_needs_units(tmp_path, capsys):
    """Calls are counted (`--max 4000`); a rate range without a unit is refused naming --max."""
    path = str(ROOT / "examples" / "wan-ports" / "branch-10m.yaml")
    from qosbound.admit import search_range
    from qosbound.scenario import load

    scn = load(path)
    assert search_range(scn, "traffic.EF.calls", None, "4000") == (None, 4000.0)
    code = main(["admit", path, "--vary", "traffic.EF.call.rate", "--max", "100000", "--quiet"])
    assert code == 2 and "--max: '100000' has no unit" in capsys.readouterr().err
