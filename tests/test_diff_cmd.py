"""``qosbound diff``: two versions of a folder of configurations (folders or git revisions) -> per port and class
the configuration changes with their lines, the answers before and after, the SLOs that change state, Markdown;
exit 1 when an SLO that held fails."""

from __future__ import annotations

import json
import subprocess
import sys

from qosbound.configs import load_configs
from qosbound.diff_cmd import config_changes
from tests.configs_helpers import CONFIG_EXAMPLES
from tests.helpers import ROOT, one_line

WAN = CONFIG_EXAMPLES / "wan-edge-iosxe.cfg"
#: 1500 calls of 100 kbit/s: 150 Mbit/s, within priority percent 20 (200 Mbit/s) but above percent 10.
TRAFFIC = "classes:\n  VOICE: {calls: 1500, call: {rate: 100 kbit/s, size: 200 B, arrivals: cbr}}\n"
SLOS = "slos:\n  - {metric: VOICE.delay.max, max: 10 ms}\n  - {metric: VOICE.loss, max: 1e-3}\n"


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "qosbound", "diff", *map(str, args)], capture_output=True,
                          text=True, cwd=str(cwd), timeout=900)


def _two_folders(tmp_path, percent_after: int = 10):
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    (old / "wan.cfg").write_text(WAN.read_text())
    (new / "wan.cfg").write_text(WAN.read_text().replace("priority percent 20", f"priority percent {percent_after}"))
    (tmp_path / "traffic.yaml").write_text(TRAFFIC)
    (tmp_path / "slos.yaml").write_text(SLOS)
    return old, new


def test_config_changes_name_each_field_with_its_line(tmp_path):
    old, new = _two_folders(tmp_path)
    [a], [b] = load_configs([old], tmp_path / "traffic.yaml"), load_configs([new], tmp_path / "traffic.yaml")
    got = {c[0]: c for c in config_changes(a, b)}
    assert set(got) == {"classes.VOICE.police.cir", "classes.VOICE.police.cbs"}
    assert got["classes.VOICE.police.cir"][1:3] == ("200 Mbit/s", "100 Mbit/s")
    assert got["classes.VOICE.police.cir"][3].startswith(f"{new / 'wan.cfg'}:21")
    assert config_changes(a, a) == []


def test_priority_percent_20_to_10_breaks_the_voice_loss_slo_and_exits_1(tmp_path):
    """The issue's 'done': 150 Mbit/s of voice calls fits a 20 % priority (200 Mbit/s policer) and not a 10 % one:
    the simulated voice loss (the policer drops a third) breaks VOICE.loss <= 1e-3; the delay bound is unchanged,
    so VOICE.delay.max keeps its state; the Markdown names the changed line."""
    old, new = _two_folders(tmp_path)
    md = tmp_path / "diff.md"
    proc = run(old, new, "--traffic", tmp_path / "traffic.yaml", "--slos", tmp_path / "slos.yaml",
               "--methods", "closed-form,simulated", "--out", md)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    text = md.read_text()
    assert text == proc.stdout
    assert "**1 SLO broken**" in text and "- :x: `wan-edge-01 GigabitEthernet0/0/2`: VOICE.loss <= 1e-3" in text
    assert f"| `classes.VOICE.police.cir` | 200 Mbit/s | 100 Mbit/s | {new / 'wan.cfg'}:21" in text
    assert "| VOICE.loss <= 1e-3 | holds | violated :x: |" in text
    assert "VOICE.delay.max <= 10 ms |" not in text


def test_an_unchanged_folder_diffs_to_nothing_and_exits_0(tmp_path):
    old, _ = _two_folders(tmp_path)
    proc = run(old, old, "--slos", tmp_path / "slos.yaml", "--traffic", tmp_path / "traffic.yaml", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [p["changes"] for p in doc["ports"]] == [[]] and doc["exit_code"] == 0


def test_two_git_revisions_of_a_folder(tmp_path):
    """--git OLD NEW DIR reads both revisions of DIR from the repository of the current directory; the lines are
    named REV:path:line."""
    repo = tmp_path / "repo"
    (repo / "configs").mkdir(parents=True)

    def git(*args):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "ci@example.org")
    git("config", "user.name", "ci")
    (repo / "configs" / "wan.cfg").write_text(WAN.read_text())
    git("add", ".")
    git("commit", "-qm", "one")
    (repo / "configs" / "wan.cfg").write_text(WAN.read_text().replace("bandwidth percent 25", "bandwidth percent 15"))
    git("commit", "-qam", "two")
    proc = run("--git", "HEAD~1", "HEAD", "configs", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "## qosbound diff: HEAD~1:configs -> HEAD:configs" in proc.stdout
    assert "| `classes.class-default.bandwidth` | 25 % | 15 % | HEAD:wan.cfg:44 |" in proc.stdout
    bad = run("--git", "HEAD~1", "nosuchrev", "configs", cwd=repo)
    assert bad.returncode == 2 and "nosuchrev" in one_line(bad.stderr)


def test_the_diff_is_also_a_page(tmp_path):
    """--html writes the diff as one self-contained page: the port, the changed field and its line."""
    old, new = _two_folders(tmp_path)
    page = tmp_path / "diff.html"
    proc = run(old, new, "--traffic", tmp_path / "traffic.yaml", "--slos", tmp_path / "slos.yaml", "--html", page)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "wan-edge-01 GigabitEthernet0/0/2" in html
    assert "classes.VOICE.police.cir" in html and f"{new / 'wan.cfg'}:21" in html
