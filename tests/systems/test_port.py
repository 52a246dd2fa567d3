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
from qosbound.systems import get_system
from qosbound.systems.port.convert import convert
from qosbound.trace_verdicts import compare
from qosbound.validation import ns3_runner
from qosbound.validation.compare import arrays, delays, ks_test, trace_results
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


# ns-3 for ports (qosbound.systems.port.ns3_trace): the ports ns-3 can express run on its PrioQueueDisc and agree with
# the port's simulator; the others are refused naming what ns-3 lacks (slow: ns-3 starts in ~10 s).


needs_ns3 = pytest.mark.skipif(not ns3_runner.available(), reason="the ns3 wheel is not installed")


def test_ns3_refuses_what_it_cannot_express():
    """The edge port: several weighted classes (ns-3 has no DRR or WFQ queue disc), two priority levels."""
    with pytest.raises(ScenarioError, match="no DRR or WFQ queue disc") as e:
        get_system("port").ns3_trace(load(example("port_edge1g")), 1000)
    assert e.value.field == "classes"
    raw = convert(example("ns3_matched"))[0][0]
    raw["classes"][0]["police"] = {"cir": "500 kbit/s", "cbs": "2 kB"}
    with pytest.raises(ScenarioError, match="no policer"):
        get_system("port").ns3_trace(build(raw), 1000)


@pytest.mark.slow
@needs_ns3
def test_ns3_runs_a_priority_class_over_one_class_and_agrees():
    """ns3_matched as a port (EF at priority 1 over saturated class-default, a 6-packet ring): ns-3's EF delays
    and the port simulator's follow one law (KS at 1 %), and ns-3's mean and p99 agree with the port's own
    simulated estimates (family-wise rule)."""
    scn = build(convert(example("ns3_matched"))[0][0])
    port = get_system("port")
    tn, info = port.ns3_trace(scn, 8000)
    assert info["classes"] == {"EF": "EF", "BE": "class-default"}
    tq = port.simulate_trace(scn, 200_000, 11)
    an, aq = arrays(tn, 0.01), arrays(tq, 0.01)
    assert ks_test(delays(an, "EF"), delays(aq, "EF"), thin=10).pvalue > 0.01
    metrics = ["EF.delay.mean", "EF.delay.p99"]
    verdicts = compare(trace_results(aq, metrics, "simulated"), trace_results(an, metrics, "ns-3"))
    assert len(verdicts) == 2 and all(v.status == "agree" for v in verdicts), [v.detail for v in verdicts]
