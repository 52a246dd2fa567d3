"""``qosbound import``: one port scenario per output interface, the origin beside it; bad input is one line and
exit 2; the files it writes are YAML whose port fields and ``origin:`` section read back."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

from qosbound.configs.imported import ORIGIN_FIELDS
from tests.configs_helpers import CONFIG_EXAMPLES, MALFORMED
from tests.helpers import ROOT, one_line


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "qosbound", "import", *args], capture_output=True, text=True,
                          cwd=str(cwd), timeout=300)


def test_import_writes_one_scenario_per_output_interface(tmp_path):
    out = tmp_path / "ports"
    proc = run(str(CONFIG_EXAMPLES / "pe-iosxr.cfg"), str(CONFIG_EXAMPLES / "wan-edge-iosxe.cfg"), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == ["pe1-lon_HundredGigE0-0-0-0_out.yaml", "pe1-lon_TenGigE0-0-0-4_out.yaml",
                     "wan-edge-01_GigabitEthernet0-0-2_out.yaml"]
    doc = yaml.safe_load((out / names[2]).read_text())
    assert doc["system"] == "port" and doc["link"] == {"rate": "1 Gbit/s"}
    assert set(doc) == {"name", "system", "description", "link", "txq", "classes", *ORIGIN_FIELDS} - {"shaper"}
    assert doc["provenance"]["classes.VOICE.priority"].endswith("wan-edge-iosxe.cfg:21")
    assert doc["source"].startswith(str(CONFIG_EXAMPLES / "wan-edge-iosxe.cfg") + " (cisco-ios-xe): wan-edge-01 ")
    assert {"item": "set cos 0", "where": f"{CONFIG_EXAMPLES / 'wan-edge-iosxe.cfg'}:47",
            "effect": "ignored: marking only (output policy)"} in doc["not_modelled"]
    assert "Cisco IOS XE command reference, priority" in doc["assumed"]["classes.VOICE.police.cbs"]
    assert "3 port scenarios written" in proc.stdout


def test_import_json_summary_and_traffic(tmp_path):
    proc = run(str(CONFIG_EXAMPLES / "home-prio-tbf.sh"), "--traffic",
               str(CONFIG_EXAMPLES / "traffic" / "home-prio-tbf.yaml"), "--out", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    [p] = doc["ports"]
    assert p["classes"] == ["band0", "band1", "class-default"] and p["refusals"] == [] and doc["exit_code"] == 0


def test_a_refused_port_is_one_line_and_exit_2_and_the_others_are_written(tmp_path):
    proc = run(str(MALFORMED / "over-100.cfg"), str(CONFIG_EXAMPLES / "branch-iosxe.cfg"), "--out", str(tmp_path))
    assert proc.returncode == 2
    line = one_line(proc.stderr)
    assert "over-100.cfg:11" in line and "110%" in line
    assert [p.name for p in tmp_path.iterdir()] == ["br-lyon-01_GigabitEthernet0-0-0.100_out.yaml"]


def test_unread_formats_and_missing_files_are_one_line_and_exit_2(tmp_path):
    for f, words in ((MALFORMED / "nxos.cfg", "Cisco NX-OS"), (tmp_path / "none.cfg", "file not found"),
                     (MALFORMED / "binary.cfg.gz", "binary data")):
        proc = run(str(f), "--out", str(tmp_path / "o"))
        assert proc.returncode == 2 and words in one_line(proc.stderr)


def test_out_must_be_a_writable_folder(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    proc = run(str(CONFIG_EXAMPLES / "branch-iosxe.cfg"), "--out", str(f))
    assert proc.returncode == 2 and "--out" in one_line(proc.stderr)


def test_a_folder_of_configurations_is_imported_whole(tmp_path):
    proc = run(str(CONFIG_EXAMPLES), "--out", str(tmp_path), "--traffic",
               str(CONFIG_EXAMPLES / "traffic" / "home-prio-tbf.yaml"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    written = list(tmp_path.glob("*.yaml"))
    # branch 1, wan edge 1, XR 2, Junos 2 + 2 (both forms), tc 2 + 2, OpenConfig 1
    assert len(written) == 13
