"""``admit`` over many scenarios: each port's answer is the single-file search's, a file that cannot be searched
is a row with its one-line error, and the batch exits with the most serious code (70 > 2 > 4 > 1 > 0)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from qosbound.cli import main
from tests.helpers import EXAMPLES, ROOT

ROUTER = EXAMPLES / "edge-router"  # wan0 and wan1: pq_txq ports judged by closed forms alone; video: tfrc


def _ports(tmp_path, *names: str, extra: tuple[tuple[str, str], ...] = ()):
    d = tmp_path / "ports"
    d.mkdir()
    for n in names:
        shutil.copy(ROUTER / f"{n}.yaml", d / f"{n}.yaml")
    for name, text in extra:
        (d / name).write_text(text)
    return d


def _run(capsys, *argv):
    code = main([*argv, "--json", "--quiet"])
    return code, json.loads(capsys.readouterr().out)


def test_each_port_gets_the_single_file_answer(tmp_path, capsys):
    """Two ports searched as a batch: each row's value, method, binding SLO and evaluations are those of
    ``admit FILE`` on that file alone; the table is in file order and the batch exits 0."""
    d = _ports(tmp_path, "wan0", "wan1")
    code, doc = _run(capsys, "admit", str(d), "--vary", "traffic.EF.rate")
    assert code == 0 and doc["exit_code"] == 0
    assert [s["scenario"] for s in doc["scenarios"]] == ["wan0", "wan1"]
    assert doc["counts"] == {"scenarios": 2, "answered": 2, "none_feasible": 0, "not_evaluated": 0}
    for row in doc["scenarios"]:
        one_code, one = _run(capsys, "admit", row["file"], "--vary", "traffic.EF.rate")
        assert one_code == 0
        for key in ("value", "unit", "method", "binding_slo", "evaluations", "parameter", "direction"):
            assert row[key] == one[key], key
    # wan1 carries three times wan0's voice on the same link but its bound is the same eq. (7): nearly the same
    # answer, below the 2 Mbit/s line
    values = [s["value"] for s in doc["scenarios"]]
    assert all(0 < v < 2e6 for v in values)


def test_a_bad_port_is_a_row_and_the_others_still_answer(tmp_path, capsys):
    """A file without the varied parameter (the video port is a TFRC flow) and a broken file: rows with their
    one-line errors naming the file and field; the pq_txq port still answers; exit 2."""
    d = _ports(tmp_path, "wan0", "video", extra=(("broken.yaml", "name: broken\nsystem: pq_txq\nlink: {rate: 2 MB}\n"),))
    code, doc = _run(capsys, "admit", str(d), "--vary", "traffic.EF.rate")
    assert code == 2 and doc["exit_code"] == 2
    rows = {s["scenario"]: s for s in doc["scenarios"]}
    assert rows["wan0"]["exit_code"] == 0 and rows["wan0"]["value"] > 0
    assert rows["video"]["exit_code"] == 2 and "traffic.EF.rate" in rows["video"]["error"]
    assert "video.yaml" in rows["video"]["error"]
    assert rows["broken"]["exit_code"] == 2 and "broken.yaml" in rows["broken"]["error"]
    assert "\n" not in rows["broken"]["error"]


def test_a_port_with_no_feasible_value_exits_1(tmp_path, capsys):
    """A delay limit no EF rate can meet (below one BE packet's transmission): that port says so, exit 1."""
    text = (ROUTER / "wan1.yaml").read_text().replace("max: 25 ms}", "max: 1 ms}")
    d = _ports(tmp_path, "wan0", extra=(("tight.yaml", text.replace("name: wan1", "name: tight")),))
    code, doc = _run(capsys, "admit", str(d), "--vary", "traffic.EF.rate")
    assert code == 1
    rows = {s["scenario"]: s for s in doc["scenarios"]}
    assert rows["tight"]["value"] is None and rows["tight"]["exit_code"] == 1
    assert rows["wan0"]["exit_code"] == 0


def test_the_table_names_value_unit_method_and_binding_slo(tmp_path, capsys):
    d = _ports(tmp_path, "wan0", "wan1")
    code = main(["admit", str(d), "--vary", "traffic.EF.rate", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "kbit/s" in out and "closed-form" in out and "EF.delay.worst_case_mean <= 25 ms" in out
    assert "2 scenarios in" in out and "2 answered, 0 with no feasible value, 0 not evaluated; exit 0" in out


@pytest.mark.parametrize("name", ["edge-router", "examples/edge-router", "edge-router/"])
def test_a_shipped_folder_is_named_from_any_directory(tmp_path, name):
    """Outside a checkout (cwd elsewhere), a shipped folder of ports resolves by its name as a shipped example
    does; a name that is neither a file, a folder nor a shipped one is a one-line error."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "qosbound", "plan", name, "--methods", "closed-form", "--quiet",
                        "--json"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    doc = json.loads(r.stdout)
    assert {s["scenario"] for s in doc["scenarios"]} == {"wan0", "wan1", "video"}
    r = subprocess.run([sys.executable, "-m", "qosbound", "plan", "no-such-router/", "--quiet"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_two_dask_workers_give_the_serial_answers(tmp_path, capsys):
    """The executor does not change an answer: the same ports searched on two local Dask workers give the
    serial run's values, methods and binding SLOs."""
    pytest.importorskip("distributed")
    d = _ports(tmp_path, "wan0", "wan1")
    code1, serial = _run(capsys, "admit", str(d), "--vary", "traffic.EF.rate")
    code2, dask = _run(capsys, "admit", str(d), "--vary", "traffic.EF.rate", "--workers", "2")
    assert code1 == code2 == 0
    assert dask["executor"] == "2 Dask workers" and serial["executor"] == "one child process"
    key = ("scenario", "value", "method", "binding_slo", "evaluations")
    assert [tuple(s[k] for k in key) for s in dask["scenarios"]] == [tuple(s[k] for k in key)
                                                                       for s in serial["scenarios"]]
