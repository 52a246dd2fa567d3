"""The model's state budget: known before building, a skipped method when the scenario merely enables it, a
refusal (exit 4) when it is asked for, and every other method still answering (issue: production ports)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
import yaml

from qosbound.cli import main
from qosbound.scenario import load_raw
from tests.helpers import example, one_line


def _scenario(tmp_path, **changes):
    raw = load_raw(example("ferrari2001"))
    raw["methods"]["simulated"] = {"packets": 20000, "replications": 4, "seed": 3}
    raw["methods"]["model-checked"].update(changes)
    p = tmp_path / "port.yaml"
    p.write_text(yaml.safe_dump(raw))
    return str(p)


def test_a_chain_above_the_budget_is_skipped_with_its_estimate_and_the_other_methods_answer(tmp_path, capsys):
    """ferrari2001's chain is bounded by 7634 states (6580 built): with a budget of 1000 the scenario's own
    methods run without it, the note names the estimate and the field, and the exit code is the verdicts'."""
    code = main(["plan", _scenario(tmp_path, max_states=1000), "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == doc["exit_code"] == 0
    assert {m["method"] for m in doc["metrics"]} == {"closed-form", "simulated"}
    why = doc["skipped"]["model-checked"]
    assert "7.63e+03 states" in why and "budget of 1e+03" in why and "max_states" in why


def test_asking_for_the_model_by_name_refuses_with_exit_4_and_one_line(tmp_path, capsys):
    code = main(["plan", _scenario(tmp_path, max_states=1000), "--methods", "model-checked", "--quiet"])
    err = one_line(capsys.readouterr().err)
    assert code == 4
    assert "field 'methods.model-checked.max_states'" in err and "7.63e+03 states" in err


def test_the_command_line_budget_overrides_the_scenario(tmp_path, capsys):
    path = _scenario(tmp_path, max_states=1000)
    assert main(["plan", path, "--methods", "closed-form,model-checked", "--max-states", "1e4", "--json",
                 "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {m["method"] for m in doc["metrics"]} == {"closed-form", "model-checked"} and doc["skipped"] == {}
    assert main(["plan", path, "--max-states", "100", "--json", "--quiet"]) == 0
    assert "model-checked" in json.loads(capsys.readouterr().out)["skipped"]


@pytest.mark.parametrize("value", ["zero", "0", "inf", "-5"])
def test_a_bad_budget_is_a_one_line_error(tmp_path, capsys, value):
    assert main(["plan", _scenario(tmp_path), "--max-states", value, "--quiet"]) == 2
    assert "--max-states" in one_line(capsys.readouterr().err)


def test_verify_reports_the_skipped_method_in_junit(tmp_path, capsys):
    junit = tmp_path / "report.xml"
    code = main(["verify", _scenario(tmp_path, max_states=1000), "--junit", str(junit), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "model-checked skipped" in out
    suites = {s.get("name"): s for s in ET.parse(junit).getroot()}
    methods = suites["port.methods"] if "port.methods" in suites else suites[next(n for n in suites
                                                                                   if n.endswith(".methods"))]
    case = methods.find("testcase")
    assert case.get("name") == "model-checked" and "7.63e+03 states" in case.find("skipped").get("message")


@pytest.mark.parametrize("name", ["wan100", "agg1g"])
def test_the_production_ports_skip_the_exact_chain_and_say_why(name):
    """A 64- or 256-packet ring is refused in microseconds, with a bound far beyond any machine."""
    from qosbound.errors import ResourceError
    from qosbound.scenario import load
    from qosbound.systems.pq_txq import check_model_size

    with pytest.raises(ResourceError, match=r"up to \d\.\d+e\+\d+ states") as e:
        check_model_size(load(example(name)))
    assert e.value.field == "methods.model-checked.max_states"


def test_admission_falls_back_to_the_simulator_when_the_default_model_is_over_budget(tmp_path, capsys):
    """admit's default method is the model; above its budget the search runs on the simulator and says so,
    while a model asked for with --method is refused."""
    path = _scenario(tmp_path, max_states=1000)
    assert main(["admit", path, "--vary", "traffic.EF.rate", "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == "simulated" and doc["value"] > 0
    assert len(doc["notes"]) == 1 and "model-checked skipped" in doc["notes"][0]
    assert main(["admit", path, "--vary", "traffic.EF.rate", "--method", "model-checked", "--quiet"]) == 4
    assert "max_states" in one_line(capsys.readouterr().err)
