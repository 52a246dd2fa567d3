"""The commands on a network: plan (every method, per flow, with the per-hop decomposition), verify with JUnit
(one testcase per flow SLO and method), admit (the answer and the port that binds)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import yaml

from tests.helpers import ROOT, example

WAN = example("network_wan")


def run(*args):
    return subprocess.run([sys.executable, "-m", "qosbound", *args], capture_output=True, text=True, cwd=str(ROOT),
                          timeout=900)


def short_wan(tmp_path, **sim) -> str:
    raw = yaml.safe_load(WAN.read_text())
    raw["methods"] = {"simulated": {"duration": "3 s", "replications": 4, **sim}}
    f = tmp_path / "wan.yaml"
    f.write_text(yaml.safe_dump(raw, sort_keys=False))
    return str(f)


def test_plan_gives_each_bound_with_its_hops_and_the_simulated_percentiles(tmp_path):
    p = run("plan", short_wan(tmp_path), "--json", "--quiet")
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    got = {(m["metric"], m["method"]): m for m in doc["metrics"]}
    best = got[("voip-ab.delay.max", "closed-form")]
    assert best["kind"] == "upper bound"
    prov = best["provenance"]
    assert prov["analysis"] in ("TFA", "SFA", "FIFO-LP") and best["value"] == min(prov["tfa"], prov["sfa"], prov["lp"])
    assert [h["port"] for h in prov["hops"]] == ["branch-a->core-1", "core-1->core-2", "core-2->branch-b"]
    assert prov["binding_port"] == "core-2->branch-b"  # the slow egress: its ring of 16 x 1500 B at 10 Mbit/s
    assert "FIFO" in prov["assumptions"] and "feed-forward" in prov["assumptions"]
    for stat in ("mean", "p99", "p99.9", "jitter"):
        r = got[(f"voip-ab.delay.{stat}", "simulated")]
        assert r["kind"] == "confidence interval" and r["interval"]["low"] <= r["value"] <= r["interval"]["high"]
    assert got[("voip-ab.delay.max", "simulated")]["value"] <= best["value"]
    for port in prov["hops"]:
        assert (f"voip-ab.hop.{port['port']}.delay.max", "closed-form") in got
    agree = [v for v in doc["verdicts"] if v.get("status") in ("agree", "disagree")]
    assert agree and all(v["status"] == "agree" for v in agree)


def test_verify_writes_one_testcase_per_flow_slo_and_method(tmp_path):
    junit = tmp_path / "j.xml"
    p = run("verify", short_wan(tmp_path), "--junit", str(junit), "--quiet")
    assert p.returncode == 0, p.stderr[-2000:]
    cases = ET.parse(junit).getroot().findall(".//testsuite[@name='wan.slo']/testcase")
    names = sorted(c.get("name") for c in cases)
    # the closed-form maximum proves its SLO: one testcase, the proof's, which lists the simulated estimate; the
    # p99.9 is judged by the simulation and by the closed forms' approximation
    assert names == sorted(["voip-ab.delay.max <= 80 ms [closed-form]", "voip-ab.delay.p99.9 <= 40 ms [closed-form]",
                            "voip-ab.delay.p99.9 <= 40 ms [simulated]", "voip-ab.loss <= 1e-4 [simulated]"])
    assert not any(c.find("failure") is not None for c in cases)
    proof = next(c for c in cases if c.get("name").startswith("voip-ab.delay.max"))
    assert "proved by closed-form" in ET.tostring(proof, encoding="unicode")


def test_verify_fails_when_an_slo_is_violated_and_names_it(tmp_path):
    raw = yaml.safe_load(WAN.read_text())
    raw["slos"] = [{"metric": "voip-ab.delay.max", "max": "50 ms", "method": "closed-form"}]
    raw["methods"] = {"simulated": {"enabled": False}}
    f = tmp_path / "tight.yaml"
    f.write_text(yaml.safe_dump(raw))
    p = run("verify", str(f))
    assert p.returncode == 1 and "voip-ab.delay.max" in p.stdout


def test_admit_names_the_binding_port(tmp_path):
    """How many calls from branch-a to branch-b: searched on the simulation (the p99.9 and loss SLOs need it),
    the binding SLO and the port where it binds named."""
    p = run("admit", short_wan(tmp_path), "--vary", "flows.voip-ab.traffic.calls", "--json", "--quiet")
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert doc["method"] == "simulated" and doc["value"] >= 30
    assert doc["binding_slo"].startswith("voip-ab.")
    assert any(n.startswith("binding port: ") and "->" in n for n in doc["notes"]), doc["notes"]


def test_the_inputs_as_understood_show_every_port_and_flow():
    """Every port's link, propagation and classes with the flows they carry, every flow's route; a saturated flow
    downstream of its first port is counted at most at its first link's rate, and said so."""
    from qosbound.scenario import load
    from qosbound.systems.network import understood_inputs

    items = {i.name: i for i in understood_inputs(load(WAN)).items}
    assert items["ports.core-1->core-2.link.delay"].value == 0.01
    assert items["flows.voip-ab.path"].value == "branch-a -> core-1 -> core-2 -> branch-b"
    egress = items["ports.core-2->branch-b.classes.class-default"]
    assert egress.value.startswith("DRR 7.6 Mbit/s") and "at most 10 Mbit/s" in egress.value
    assert egress.note == "bulk-ab at its first link's rate"
    assert items["ports.core-1->core-2.classes.voice"].note == "2 flows"


def test_a_sweep_over_a_network_gives_every_flow_at_every_point(tmp_path):
    """sweep varies a flow's parameter by name; the table has a column per flow metric (the closed forms here)."""
    import csv

    out = tmp_path / "sw"
    p = run("sweep", str(WAN), "--vary", "flows.voip-ab.traffic.calls=10,40", "--methods", "closed-form", "--out",
            str(out), "--no-cache", "--no-plots", "--quiet")
    assert p.returncode in (0, 1), p.stderr[-2000:]
    rows = list(csv.DictReader(open(out / "sweep.csv")))  # one row per point, metric and method
    got = {(r["flows.voip-ab.traffic.calls"], r["metric"]): float(r["value"]) for r in rows if r["value"]}
    assert {m for _, m in got} >= {"voip-ab.delay.max", "voip-ab.delay.max_tfa", "core-web.delay.max",
                                   "voip-ab.hop.core-2->branch-b.delay.max"}
    assert got[("40", "voip-ab.delay.max_tfa")] > got[("10", "voip-ab.delay.max_tfa")]  # more calls, a larger bound
