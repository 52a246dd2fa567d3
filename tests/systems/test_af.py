"""Tests for the af system through the CLI: examples, plan / verify / admit / reproduce, and bad input."""

from __future__ import annotations

import json

import pytest
import yaml

from qosbound.cli import main
from tests.helpers import ROOT

EXAMPLES = ["takeo2003", "koehler1999", "qstp2008"]


def _raw(name: str) -> dict:
    return yaml.safe_load((ROOT / "examples" / f"{name}.yaml").read_text())


def _write(tmp_path, raw: dict) -> str:
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(raw))
    return str(p)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_verifies_by_closed_form(name, capsys):
    """Each AF example loads and its SLOs hold by the closed form (exit 0, JSON says ok)."""
    code = main(["verify", str(ROOT / "examples" / f"{name}.yaml"), "--methods", "closed-form", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["ok"]
    assert any(v["name"].startswith("AF1: drop(AF13) >= drop(AF12) >= drop(AF11)") for v in doc["verdicts"])


def test_plan_qstp_model_checked_agrees_with_scipy(capsys):
    """plan by model checking on the QSTP example: Storm equals the direct solution of the same chain."""
    code = main(["plan", str(ROOT / "examples" / "qstp2008.yaml"), "--methods", "model-checked", "--json",
                 "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    v = [x for x in doc["verdicts"] if "direct SciPy" in x["name"]]
    assert v and all(x["status"] == "agree" for x in v)
    metrics = {m["metric"] for m in doc["metrics"]}
    assert {"AF1.drop.AF11", "AF1.drop.AF13", "AF1.delay.mean", "AF1.queue.mean"} <= metrics


def test_takeo_table_v_metrics(capsys):
    """The Takeo example reports AF3 = 666.7 and AF4 = 888.9 kbit/s when class 1 is idle (Table V)."""
    main(["plan", str(ROOT / "examples" / "takeo2003.yaml"), "--methods", "closed-form", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    val = {m["metric"]: m["value"] for m in doc["metrics"]}
    assert val["AF3.rate.case2"] == pytest.approx(2e6 * 6 / 18)
    assert val["AF4.rate.case6"] == pytest.approx(2e6 * 8 / 18)
    assert val["AF1.rate.case3"] == 0


def test_ordering_sweep_reports_first_breaking_load(tmp_path, capsys):
    """Crossed thresholds (green dropped earlier than red): verify fails and names the first breaking load."""
    raw = _raw("qstp2008")
    raw["classes"]["AF1"]["dropper"]["mode"] = "wred"
    raw["classes"]["AF1"]["dropper"]["thresholds"] = {
        "AF11": {"min_th": 5, "max_th": 20, "P_d": 2}, "AF12": {"min_th": 10, "max_th": 30, "P_d": 10},
        "AF13": {"min_th": 10, "max_th": 40, "P_d": 10}}
    raw["traffic"]["AF1"] = {"rate": "900 kbit/s", "size": "1500 B", "mix": [0.4, 0.3, 0.3]}
    code = main(["verify", _write(tmp_path, raw), "--methods", "closed-form", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    v = next(x for x in doc["verdicts"] if x["name"].startswith("AF1: drop(AF13)"))
    assert code == 1 and v["status"] == "violated"
    assert "first breaks at x" in v["detail"]


def test_admit_varies_offered_rate(capsys):
    """admit --vary traffic.AF1.rate finds a finite largest rate under the per-precedence drop SLOs."""
    code = main(["admit", str(ROOT / "examples" / "qstp2008.yaml"), "--vary", "traffic.AF1.rate",
                 "--method", "closed-form", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert 8e5 < doc["value"] < 4e6
    assert doc["binding_slo"].startswith("AF1.")


def test_reproduce_takeo2003(capsys):
    """reproduce takeo2003 prints Table I's curves and Table V, matching the printed allocations (the claims of
    section IV that the quick network run does not show make it exit 1: tests/reproduce/test_takeo2003_claims.py)."""

    class A:
        json = True
        out = None
        quick = True
        quiet = True

    from qosbound.reproduce import takeo2003

    assert takeo2003.run(A()) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and len(doc["table_V"]) == 6
    assert next(c for c in doc["claims"] if c["id"] == "table5-allocations")["verdict"] == "reproduced"
    assert doc["wred_curves"]["drop3"][doc["avg_packets"].index(20)] == pytest.approx(12 / 72)


BAD = [
    (lambda r: r["classes"]["AF1"]["dropper"]["thresholds"]["AF11"].update(min_th=50, max_th=40),
     "classes.AF1.dropper.thresholds.AF11", "thresholds out of order"),
    (lambda r: r["classes"]["AF1"]["dropper"]["thresholds"]["AF13"].update(P_d=0.5),
     "classes.AF1.dropper.thresholds.AF13", "P_d = 0.5 < 1"),
    (lambda r: r["classes"]["AF1"].update(bandwidth="0 bit/s"),
     "classes", "sum to zero"),
    (lambda r: r["classes"]["AF1"].update(buffer=30),
     "classes.AF1.buffer", "smaller than max_th"),
    (lambda r: r["traffic"]["AF1"].update(mix=[0.5, 0.2, 0.1], marker=None),
     "traffic.AF1", "sum"),
    (lambda r: r["classes"]["AF1"]["dropper"].update(alpha=1.5),
     "classes.AF1.dropper", "not in (0, 1]"),
]


@pytest.mark.parametrize("edit,field,problem", BAD, ids=["order", "pd", "weights", "buffer", "mix", "alpha"])
def test_bad_input_is_one_line_exit_2(edit, field, problem, tmp_path, capsys):
    """Bad AF input exits 2 with one line naming the file, the field and the problem."""
    raw = _raw("qstp2008")
    edit(raw)
    if raw["traffic"]["AF1"].get("marker", 0) is None:
        del raw["traffic"]["AF1"]["marker"]
    path = _write(tmp_path, raw)
    code = main(["plan", path, "--methods", "closed-form", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert path in err and f"field '{field}" in err and problem in err


def test_simulation_agrees_with_storm_where_the_model_is_exact(tmp_path, capsys):
    """One WRED class with alpha = 1, Poisson arrivals and exponential sizes: the simulated intervals
    contain Storm's values (family-wise 99 %), so plan reports agreement."""
    raw = _raw("qstp2008")
    raw["classes"]["AF1"]["dropper"] = {"mode": "wred", "alpha": 1.0, "thresholds": {
        "AF11": {"min_th": 20, "max_th": 40, "P_d": 3}, "AF12": {"min_th": 12, "max_th": 32, "P_d": 3},
        "AF13": {"min_th": 6, "max_th": 24, "P_d": 3}}}
    raw["traffic"]["AF1"] = {"rate": "1100 kbit/s", "size": "1500 B", "mix": [0.3, 0.3, 0.4]}
    raw["methods"]["simulated"] = {"packets": 100000, "replications": 6, "seed": 5}
    raw["slos"] = []
    code = main(["plan", _write(tmp_path, raw), "--methods", "model-checked,simulated", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    sims = [v for v in doc["verdicts"] if v["method"] == "simulated vs model-checked"]
    assert len(sims) >= 6
    assert code == 0 and all(v["status"] == "agree" for v in sims), [v["detail"] for v in sims]
