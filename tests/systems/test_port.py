"""Every command on ports: parameters addressed by class name (qosbound.scenario.get_path/set_path), admit, sweep,
tune, verify with JUnit, validate against a simulated trace."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from qosbound.errors import ScenarioError
from qosbound.scenario import build, get_path, in_form, load, set_path, value_text
from tests.helpers import ROOT, example

BRANCH = example("port_branch10m")


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "qosbound", *args], capture_output=True, text=True, cwd=str(cwd),
                          timeout=900)


def branch(tmp_path, slos, methods=None) -> str:
    """The branch port with other SLOs (by the closed forms unless ``methods`` says otherwise)."""
    raw = yaml.safe_load(BRANCH.read_text())
    raw["slos"] = slos
    raw["methods"] = methods or {"model-checked": {"enabled": False}, "simulated": {"enabled": False}}
    f = tmp_path / "branch.yaml"
    f.write_text(yaml.safe_dump(raw, sort_keys=False))
    return str(f)


def test_a_class_is_addressed_by_its_name_or_its_index():
    raw = load(BRANCH).raw
    assert get_path(raw, "classes.voice.police.cir") == "2 Mbit/s"
    assert get_path(raw, "classes.0.traffic.calls") == 20
    assert get_path(raw, "classes.class-default.traffic.sizes.2.size") == "1500 B"
    new = set_path(raw, "classes.business.bandwidth", "remaining 30 %")
    assert get_path(new, "classes.business.bandwidth") == "remaining 30 %"
    assert get_path(raw, "classes.business.bandwidth") == "remaining 40 %"  # a copy
    with pytest.raises(ScenarioError, match="no parameter 'classes.nosuch.queue_limit'"):
        get_path(raw, "classes.nosuch.queue_limit")


def test_a_percentage_is_varied_as_a_percentage():
    """admit, sweep and tune read 'remaining 40 %' as 0.4 and write 0.3 back as 'remaining 30.0 %'."""
    assert value_text("remaining 40 %") == "40 %"
    assert in_form("remaining 40 %", 0.3) == "remaining 30.0 %"
    assert in_form("20 %", 0.25) == "25.0 %"
    assert in_form("2 Mbit/s", 3e6) == 3e6


def test_admit_the_calls_a_voice_bound_allows(tmp_path):
    """voice.delay.max <= 22 ms on the 10 Mbit/s branch: the ring's 16 x 1500 B (19.2 ms) and 0.16 ms per
    call of the calls' envelope leave room for 17 calls."""
    f = branch(tmp_path, [{"metric": "voice.delay.max", "max": "22 ms"}])
    proc = run("admit", f, "--vary", "classes.voice.traffic.calls", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["value"] == 17 and doc["method"] == "closed-form"


def test_admit_the_smallest_remaining_share_of_a_class(tmp_path):
    """The smallest 'remaining' share that keeps business's mean delay at 12 ms by the AF queue: a fraction in
    (0, 1), written back as a percentage."""
    f = branch(tmp_path, [{"metric": "business.delay.mean", "max": "12 ms"}])
    proc = run("admit", f, "--vary", "classes.business.bandwidth", "--direction", "smallest", "--max", "60 %",
               "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    x = json.loads(proc.stdout)["value"]
    assert 0.05 < x < 0.4
    raw = set_path(load(f).raw, "classes.business.bandwidth", in_form("remaining 40 %", x))
    assert build(raw).classes[1].bandwidth.startswith("remaining ")


def test_sweep_a_class_share(tmp_path):
    f = branch(tmp_path, [{"metric": "business.delay.mean", "max": "12 ms"}])
    proc = run("sweep", f, "--vary", "classes.business.bandwidth=20 %..50 %:3", "--no-cache", "--no-plots",
               "--out", str(tmp_path / "sw"), "--quiet")
    assert proc.returncode in (0, 1), proc.stderr
    table = (tmp_path / "sw" / "sweep.csv").read_text()
    assert "classes.business.bandwidth" in table and "business.delay.mean" in table
    assert len(table.strip().splitlines()) > 3


def test_tune_shares_and_wred_thresholds_of_several_classes(tmp_path):
    """The best split of the remaining bandwidth between business and class-default together with business's
    AF23 threshold, minimising business's mean delay while AF21 keeps its drop SLO: business gets the most
    the range allows."""
    f = branch(tmp_path, [{"metric": "business.drop.AF21", "max": 1e-3}])
    proc = run("tune", f, "--vary", "classes.business.bandwidth=20 %..60 %:3",
               "--vary", "classes.class-default.bandwidth=30 %..40 %:2",
               "--vary", "classes.business.dropper.thresholds.AF23.min_th=8,16",
               "--minimise", "business.delay.mean", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["found"]
    best = {p["parameter"]: p["value"] for p in doc["optimum"]["parameters"]}
    # the largest share of business against the smallest of class-default
    assert best["classes.business.bandwidth"] == pytest.approx(0.6)
    assert best["classes.class-default.bandwidth"] == pytest.approx(0.3)


def test_verify_judges_slos_per_class_and_writes_junit(tmp_path):
    f = branch(tmp_path, [{"metric": "voice.delay.max", "max": "30 ms"},
                          {"metric": "business.drop.AF21", "max": 1e-3}])
    junit = tmp_path / "out.xml"
    proc = run("verify", f, "--junit", str(junit), "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = junit.read_text()
    assert "voice.delay.max" in text and "business.drop.AF21" in text


def test_validate_a_port_against_its_simulated_trace(tmp_path):
    """The trace is reduced to each class's metrics (drops per DSCP by flow) and agrees with the closed forms
    and the bounds."""
    f = branch(tmp_path, [{"metric": "voice.delay.max", "max": "30 ms"}],
               methods={"model-checked": {"enabled": False}, "simulated": {"packets": 60000, "replications": 2}})
    proc = run("validate", f, "--simulate", "--out", str(tmp_path / "v"), "--json", "--quiet")
    assert proc.returncode in (0, 3), proc.stderr
    doc = json.loads(proc.stdout)
    rows = {r["metric"]: r for r in doc["rows"]}
    assert rows["voice.delay.max"]["verdict"] == "within bound"
    assert "business.drop.AF21" in rows and rows["business.drop.AF21"]["observed"] is not None
