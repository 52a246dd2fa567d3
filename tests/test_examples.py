"""Every example scenario runs through the installed command line, and its machine output is checked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from qosbound.scenario import load
from qosbound.systems import get_system

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
PORTS = sorted((ROOT / "examples").glob("*/*.yaml"))  # folders of one router's ports


def run(*args):
    return subprocess.run([sys.executable, "-m", "qosbound", *args], capture_output=True, text=True,
                          cwd=str(ROOT), timeout=900)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_plan_json_is_clean_and_every_check_holds(path):
    """plan --json on each example is valid JSON on stdout (engine chatter goes to stderr), exits 0,
    and every SLO and cross-method check holds, by every non-simulated method the example enables (by every
    method it enables, the model then skipped, where its model is above the state budget)."""
    scn = load(path)
    methods = [m for m in get_system(scn.system).default_methods(scn)
               if m not in ("simulated", "ns-3") or (m == "simulated" and scn.system == "network")]
    # a network's quantile and loss SLOs need its chained simulation (seconds on a shipped network)
    if not methods:
        pytest.skip("the example enables only simulation")
    proc = run("plan", str(path), "--json", "--quiet", "--methods", ",".join(methods))
    if proc.returncode in (2, 4) and "model-checked" in methods:
        # a real port whose model is above the state budget (exit 4), one the model does not cover (a BE
        # load, exit 2), or an EF aggregate with CBR streams (one credit counter per stream, exit 4): the
        # scenario's own methods answer, the model skipped with its reason
        assert ("max_states" in proc.stderr or "traffic.BE.rate" in proc.stderr
                or "credit counter per stream" in proc.stderr), proc.stderr
        methods = get_system(scn.system).default_methods(scn)
        proc = run("plan", str(path), "--json", "--quiet")
        assert "model-checked" in json.loads(proc.stdout)["skipped"]
    doc = json.loads(proc.stdout)
    failing = [v for v in doc["verdicts"] if v["status"] in ("violated", "disagree", "missing")]
    assert proc.returncode == 0 and not failing, (failing, proc.stderr[-2000:])
    assert doc["metrics"] and all(m["method"] in methods for m in doc["metrics"])


@pytest.mark.parametrize("path", PORTS, ids=[f"{p.parent.name}/{p.stem}" for p in PORTS])
def test_every_port_of_the_shipped_folders_loads_and_its_closed_forms_answer(path):
    """Each port of a shipped folder is a valid scenario on its own; its closed forms answer every metric they
    give with a finite number and a unit (the folder's batch commands are run by the docs' tests)."""
    scn = load(path)
    assert scn.slos, "a port in a shipped folder declares SLOs"
    proc = run("plan", str(path), "--json", "--quiet", "--methods", "closed-form")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["metrics"] and all(m["method"] == "closed-form" for m in doc["metrics"])


def test_readme_first_command_runs():
    """The README's first command (plan on the example, all methods) exits 0 and prints a table."""
    first = (ROOT / "README.md").read_text().split("```bash", 2)[1].split("```")[0]
    assert "qosbound plan examples/ferrari2001.yaml" in first
    proc = run("plan", "examples/ferrari2001.yaml", "--quiet")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    for word in ("EF.delay.p99", "closed-form", "model-checked", "simulated", "holds"):
        assert word in proc.stdout
    assert "disagree" not in proc.stdout and "violated" not in proc.stdout


def test_shipped_examples_by_name_from_any_directory(tmp_path, monkeypatch, capsys):
    """`qosbound plan NAME` finds the shipped example from any directory; a file of that name wins; an unknown
    name stays a missing file (exit 2, one line)."""
    from qosbound.cli import main
    from qosbound.shipped import example_names, example_path, resolve_scenario

    assert example_names() == [p.stem for p in EXAMPLES]
    monkeypatch.chdir(tmp_path)
    for arg in ("ferrari2001", "ferrari2001.yaml", "examples/ferrari2001.yaml"):
        assert resolve_scenario(arg) == str(example_path("ferrari2001"))
    assert main(["plan", "ferrari2001", "--methods", "closed-form", "--json", "--quiet"]) in (0, 1)  # SLOs missing
    doc = json.loads(capsys.readouterr().out)
    assert doc["scenario"] == "ferrari2001" and doc["metrics"]
    (tmp_path / "ferrari2001").write_text("not a scenario\n")
    assert resolve_scenario("ferrari2001") == "ferrari2001"
    assert resolve_scenario("other/ferrari2001") == "other/ferrari2001"
    assert main(["plan", "no-such-example", "--quiet"]) == 2
    assert "no-such-example: file not found" in capsys.readouterr().err
