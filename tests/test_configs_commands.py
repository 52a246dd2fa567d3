"""plan / verify / admit / sweep on router configurations: each port of each file is a scenario, the SLO file
gives each port the SLOs on its classes, every answer carries its class's configuration lines, and
``verify --configs DIR --junit`` writes one testcase per SLO per port."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from qosbound.configs import load_configs
from qosbound.configs.slos import check_all_used, load_slos, slos_for
from qosbound.errors import ConfigError
from tests.configs_helpers import CONFIG_EXAMPLES
from tests.helpers import ROOT, one_line

WAN = CONFIG_EXAMPLES / "wan-edge-iosxe.cfg"


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "qosbound", *map(str, args)], capture_output=True, text=True,
                          cwd=str(cwd), timeout=600)


def _traffic(tmp_path):
    f = tmp_path / "traffic.yaml"
    f.write_text("classes:\n  VIDEO: {rate: 100 Mbit/s, size: 1200 B, arrivals: poisson}\n"
                 "  VOICE: {calls: 100, call: {rate: 100 kbit/s, size: 200 B, arrivals: cbr}}\n")
    return f


def _slos(tmp_path, text: str):
    f = tmp_path / "slos.yaml"
    f.write_text(text)
    return f


def test_plan_on_an_ios_xe_file_prints_every_class_with_its_configuration_lines():
    """The issue's first 'done': plan on a 1 Gbit/s IOS XE port (default traffic); each class's answers carry the
    lines of its class-map and its policy-map class (VOICE: policy class line 20 first, then class-map line 5,
    match line 6, priority line 21, ...)."""
    proc = run("plan", WAN, "--methods", "closed-form", "--json")
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["file"] == f"{WAN}#GigabitEthernet0/0/2"
    voice = [m for m in doc["metrics"] if m["metric"] == "VOICE.delay.max"]
    assert voice and voice[0]["provenance"]["config"].startswith(f"{WAN}:20, 5, 6, 21")
    classes = {m["metric"].split(".")[0] for m in doc["metrics"]}
    assert classes >= {"VOICE", "VIDEO", "CRITICAL"}
    assert all("config" in m["provenance"] for m in doc["metrics"] if m["metric"].split(".")[0] in classes)


def test_verify_on_a_file_judges_the_slo_file_and_names_the_lines(tmp_path):
    slos = _slos(tmp_path, "slos:\n  - {metric: VOICE.delay.max, max: 1 ms}\n  - {metric: VIDEO.delay.max, max: 1 s}\n")
    proc = run("verify", WAN, "--slos", slos, "--traffic", _traffic(tmp_path), "--methods", "closed-form", "--json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    v = {x["metric"]: x for x in doc["slo_verdicts"]}
    assert v["VOICE.delay.max"]["status"] == "violated" and v["VIDEO.delay.max"]["status"] == "holds"
    assert f"configuration {WAN}:20" in v["VOICE.delay.max"]["detail"]


def test_verify_configs_folder_writes_one_testcase_per_slo_per_port(tmp_path):
    """Two IOS XE files, one port each: one testcase per SLO per port (and the port's RFC 2597 check of a WRED
    class's drop order, an SLO of its own), agreement checks in suites of their own, testcase times adding up to the
    suite's."""
    folder = tmp_path / "cfg"
    folder.mkdir()
    for name in ("wan-edge-iosxe.cfg", "branch-iosxe.cfg"):
        (folder / name).write_text((CONFIG_EXAMPLES / name).read_text())
    slos = _slos(tmp_path, "slos:\n  - {metric: VOICE.delay.max, max: 100 ms}\n"
                           "ports:\n  wan-edge-01:GigabitEthernet0/0/2:\n    - {metric: VIDEO.delay.max, max: 1 s}\n")
    junit = tmp_path / "out.xml"
    proc = run("verify", "--configs", folder, "--slos", slos, "--traffic", _traffic(tmp_path), "--junit", junit,
               "--methods", "closed-form", "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    root = ET.parse(junit).getroot()
    slo_suites = [s for s in root if s.get("name").endswith(".slo")]
    assert len(slo_suites) == 2
    cases = {(s.get("name"), c.get("name")) for s in slo_suites for c in s.iter("testcase")
             if not c.get("name").endswith("(RFC 2597)")}  # the port's own check of its drop precedences' order
    assert cases == {("br-lyon-01_GigabitEthernet0-0-0.100_out.slo", "VOICE.delay.max <= 100 ms"),
                     ("wan-edge-01_GigabitEthernet0-0-2_out.slo", "VOICE.delay.max <= 100 ms"),
                     ("wan-edge-01_GigabitEthernet0-0-2_out.slo", "VIDEO.delay.max <= 1 s")}
    for s in slo_suites:
        times = [float(c.get("time")) for c in s.iter("testcase")]
        assert sum(times) == pytest.approx(float(s.get("time")), abs=2e-3 * len(times))
    assert "2 scenarios" in proc.stdout and "2 pass" in proc.stdout


def test_an_slo_on_a_class_no_port_has_is_an_error_naming_its_line(tmp_path):
    slos = _slos(tmp_path, "slos:\n  - {metric: VOICE.delay.max, max: 10 ms}\n  - {metric: VOCIE.delay.max, max: 10 ms}\n")
    proc = run("verify", WAN, "--slos", slos, "--methods", "closed-form")
    assert proc.returncode == 2
    assert one_line(proc.stderr).startswith(f"qosbound: {slos}:3: ") and "VOCIE.delay.max" in proc.stderr


def test_slos_for_each_port_and_a_port_slo_on_a_missing_class(tmp_path):
    ports = load_configs([WAN, CONFIG_EXAMPLES / "pe-iosxr.cfg"])
    spec = load_slos(_slos(tmp_path, "slos:\n  - {metric: VOICE.delay.max, max: 10 ms}\n"))
    used: set[int] = set()
    got = {p.interface: slos_for(p, spec, used) for p in ports}
    assert got["GigabitEthernet0/0/2"] == [{"metric": "VOICE.delay.max", "max": "10 ms"}]
    assert used == {0}
    check_all_used(spec, used, ports)
    bad = load_slos(_slos(tmp_path, "ports:\n  GigabitEthernet0/0/2:\n    - {metric: EF.delay.max, max: 1 ms}\n"))
    with pytest.raises(ConfigError, match="has no class for 'EF.delay.max'") as e:
        slos_for(ports[-1] if ports[-1].interface == "GigabitEthernet0/0/2" else ports[0], bad)
    assert e.value.line == 3


def test_a_refused_port_in_a_folder_is_its_own_failing_row_and_the_others_run(tmp_path):
    """A policy that reserves 120 % is refused (exit 2, its line named) while the other file's port is checked."""
    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "wan.cfg").write_text(WAN.read_text())
    (folder / "over.cfg").write_text(WAN.read_text().replace("bandwidth percent 25", "bandwidth percent 45")
                                     .replace("hostname wan-edge-01", "hostname over-01"))
    slos = _slos(tmp_path, "slos:\n  - {metric: VOICE.delay.max, max: 100 ms}\n")
    proc = run("verify", "--configs", folder, "--slos", slos, "--methods", "closed-form", "--json")
    assert proc.returncode == 2
    doc = json.loads(proc.stdout)
    rows = {d["scenario"]: d for d in doc["scenarios"]}
    assert rows["wan-edge-01_GigabitEthernet0-0-2_out"]["exit_code"] == 0
    err = [d for d in doc["scenarios"] if "error" in d]
    assert len(err) == 1 and err[0]["error"].startswith(f"{folder / 'over.cfg'}:44: 'bandwidth percent 45'")
    assert "(120%)" in err[0]["error"] and err[0]["scenario"] == "over.cfg#GigabitEthernet0/0/2"


def test_traffic_and_slos_without_a_configuration_are_refused(tmp_path):
    slos = _slos(tmp_path, "slos: []\n")
    proc = run("plan", "examples/port_edge1g.yaml", "--slos", slos)
    assert proc.returncode == 2 and "apply to router configurations" in one_line(proc.stderr)


def test_admit_varies_a_class_of_an_imported_port(tmp_path):
    """admit on a configuration's port, by class name: VOICE's bound is 8 (128 x 1500 B + N x 200 B) / 1 Gbit/s
    (the ring of tx-ring-limit 128 and N calls' packets), so 1.6 ms admits N = 40 calls."""
    traffic = tmp_path / "t.yaml"
    traffic.write_text("classes:\n  VOICE: {calls: 10, call: {rate: 100 kbit/s, size: 200 B, arrivals: cbr}}\n")
    slos = _slos(tmp_path, "slos:\n  - {metric: VOICE.delay.max, max: 1.6 ms}\n")
    proc = run("admit", WAN, "--traffic", traffic, "--slos", slos, "--vary", "classes.VOICE.traffic.calls",
               "--method", "closed-form", "--max", "4000", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["binding_slo"] == "VOICE.delay.max <= 1.6 ms" and doc["value"] == 40


def test_sweep_takes_a_configuration_with_one_port_and_refuses_several(tmp_path):
    proc = run("sweep", CONFIG_EXAMPLES / "pe-iosxr.cfg", "--vary", "link.rate=1Gbit/s,10Gbit/s", "--no-cache",
               "--out", tmp_path / "s")
    assert proc.returncode == 2 and "2 ports" in one_line(proc.stderr)
