"""SIGINT and SIGTERM end every command cleanly: exit 130 / 143, one line, no traceback, and the report written
and marked incomplete -- whether the signal reaches the process or its whole group (what CI cancellation
does), once or twice, at any stage.

Each test runs the real command through tests/signal_driver.py, whose hooks announce a stage on a pipe (and,
for a blocking stage, wait there for the test's byte): the test sends its signal only once the command has
reached that stage, so nothing depends on timing. The process runs in a session of its own, so a signal to
its group reaches it and the children it forks (the engine's child, Dask's workers), not the test runner.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DRIVER = Path(__file__).resolve().parent / "signal_driver.py"
VOICE = ROOT / "examples" / "voice1g.yaml"
CODE = {signal.SIGINT: 130, signal.SIGTERM: 143}
WORD = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


class Run:
    """One command under the driver: its exit code, standard output and error, and the stages it announced."""

    def __init__(self, pid, code, out, err, events, seconds):
        self.pid, self.code, self.out, self.err, self.events, self.seconds = pid, code, out, err, events, seconds


def drive(args, stages: str, actions, cwd, timeout: float = 300.0, env: dict | None = None) -> Run:
    """Run ``qosbound ARGS`` under the driver with ``stages`` watched; ``actions`` is a list of
    ``(stage, signal, target, block)``: when ``stage`` is announced, send ``signal`` to the process
    (``target`` 'process') or its group ('group'), then, for a blocking stage, let it go on."""
    ev_r, ev_w = os.pipe()
    ack_r, ack_w = os.pipe()
    environ = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   QB_EVENTS_FD=str(ev_w), QB_ACK_FD=str(ack_r), QB_STAGES=stages, **(env or {}))
    environ.pop("CI", None)
    # the stages watched must run: no solution or simulation read back from the test run's QOSBOUND_CACHE_DIR
    environ.pop("QOSBOUND_CACHE_DIR", None)
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(DRIVER), *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=environ, cwd=cwd, pass_fds=(ev_w, ack_r),
                            start_new_session=True, text=True)
    os.close(ev_w)
    os.close(ack_r)
    events, buf = [], b""
    try:
        for stage, sig, target, block in actions:
            while b"\n" not in buf:
                left = t0 + timeout - time.monotonic()
                ready, _, _ = select.select([ev_r], [], [], max(0.0, left))
                assert ready, f"stage {stage!r} never announced; so far {events}"
                chunk = os.read(ev_r, 4096)
                assert chunk, f"the command ended before stage {stage!r}: {proc.communicate()}"
                buf += chunk
            line, buf = buf.split(b"\n", 1)
            name, pid = line.decode().split()
            events.append((name, int(pid)))
            assert name == stage, events
            if target == "process":
                os.kill(proc.pid, sig)
            else:
                os.killpg(proc.pid, sig)
            if block:
                os.write(ack_w, b"x")
        out, err = proc.communicate(timeout=max(1.0, t0 + timeout - time.monotonic()))
    finally:
        if proc.poll() is None:  # pragma: no cover - only when the test fails
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        os.close(ev_r)
        os.close(ack_w)
    return Run(proc.pid, proc.returncode, out, err, events, time.monotonic() - t0)


def one_line(run: Run, sig: int) -> str:
    """The run's standard error is one line, the interruption's, and carries no traceback."""
    assert "Traceback" not in run.err and "Error" not in run.err.replace("error", ""), run.err
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"qosbound: {WORD[sig]}"), run.err
    return lines[0]


def incomplete_suites(path: Path, sig: int) -> list[ET.Element]:
    """The report's test suites marked incomplete, each with its error testcase naming the signal."""
    root = ET.parse(path).getroot()
    marked = []
    for suite in root.iter("testsuite"):
        props = {p.get("name"): p.get("value") for p in suite.iter("property") if p.get("name") in
                 ("incomplete", "signal")}
        if props.get("incomplete") != "true":
            continue
        assert props["signal"] == signal.Signals(sig).name
        errors = [c for c in suite.iter("testcase") if c.find("error") is not None]
        assert [c.get("name") for c in errors] == [f"interrupted by {signal.Signals(sig).name}"]
        assert int(suite.get("errors")) == 1 and int(suite.get("tests")) == len(list(suite.iter("testcase")))
        marked.append(suite)
    return marked


# ---- verify, in the simulation (numba's parallel threads in the engine's child) ------------------------------

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
@pytest.mark.parametrize("target", ["process", "group"])
def test_verify_stopped_in_the_simulation_writes_an_incomplete_junit(tmp_path, sig, target):
    """The 1 Gbit/s port's simulation runs in the engine's child on numba's threads: a signal to the process or
    to its group ends the run with the signal's code and a JUnit report that says it is incomplete, and which
    methods had finished (the closed forms) and which had not (the simulator)."""
    junit = tmp_path / "out.xml"
    run = drive(["verify", VOICE, "--junit", junit, "--quiet"], "simulate:pass",
                [("simulate", sig, target, False)], tmp_path)
    assert run.code == CODE[sig], run.err
    one_line(run, sig)
    (suite,) = incomplete_suites(junit, sig)
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert "closed-form" in props["methods_done"] and props["methods_not_done"] == "simulated"
    assert run.events[0][1] != run.pid  # the simulation ran in the engine's child


def test_a_second_signal_while_the_child_is_reaped_is_counted_not_raised(tmp_path):
    """CI sends SIGTERM to the process, then to the group: the second arrives while the parent is killing and
    reaping the engine's child. It used to escape as a traceback from the reaping code (exit 1, no report);
    now it is counted, and the run ends as the first signal says."""
    junit = tmp_path / "out.xml"
    run = drive(["verify", VOICE, "--junit", junit, "--quiet"], "simulate:pass,reap:block",
                [("simulate", signal.SIGTERM, "process", False), ("reap", signal.SIGTERM, "group", True)],
                tmp_path)
    assert [e[0] for e in run.events] == ["simulate", "reap"]
    assert run.events[0][1] != run.pid and run.events[1][1] == run.pid  # the child simulates, the parent reaps
    assert run.code == 143, run.err
    one_line(run, signal.SIGTERM)
    assert len(incomplete_suites(junit, signal.SIGTERM)) == 1


def test_ctrl_c_twice_exits_130_whatever_the_second_signal(tmp_path):
    """The first signal decides the exit code: SIGINT, then SIGTERM while reaping, is 130."""
    run = drive(["verify", VOICE, "--json", "--quiet"], "simulate:pass,reap:block",
                [("simulate", signal.SIGINT, "process", False), ("reap", signal.SIGTERM, "process", True)], tmp_path)
    assert run.code == 130, run.err
    one_line(run, signal.SIGINT)
    doc = json.loads(run.out)
    assert doc["complete"] is False and doc["interrupted"]["signal"] == "SIGINT"
    assert doc["interrupted"]["methods_not_done"] == ["simulated"] and doc["exit_code"] == 130


def test_a_signal_while_the_scenario_is_read_still_writes_the_report(tmp_path):
    """Stopped before anything was evaluated: the report names the scenario, says incomplete, and that no
    method finished."""
    junit = tmp_path / "out.xml"
    run = drive(["verify", VOICE, "--junit", junit, "--quiet"], "load:block",
                [("load", signal.SIGTERM, "process", True)], tmp_path)
    assert run.code == 143, run.err
    one_line(run, signal.SIGTERM)
    (suite,) = incomplete_suites(junit, signal.SIGTERM)
    assert suite.get("name") == "voice1g.slo"
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["methods_done"] == ""


# ---- Storm, plotting -------------------------------------------------------------------------------------------

_HUGE = """dtmc
const int N;
module m
  a : [0..N] init 0;
  b : [0..N] init 0;
  c : [0..N] init 0;
  [] true -> 0.5 : (a'=min(a+1,N)) + 0.5 : (b'=min(b+1,N));
  [] true -> 0.5 : (c'=min(c+1,N)) + 0.5 : (a'=max(a-1,0));
endmodule
label "full" = a=N;
"""


@pytest.mark.parametrize("target", ["process", "group"])
def test_a_signal_inside_a_storm_build_ends_the_run_at_once(tmp_path, target):
    """Storm builds a 64-million-state model in C++ (minutes) in the child; the signal is sent once the build
    has begun: the run ends within seconds, with one line and exit 143."""
    (tmp_path / "huge.prism").write_text(_HUGE)
    (tmp_path / "huge.props").write_text('P=? [ F "full" ]\n')
    run = drive(["model", "check", tmp_path / "huge.prism", "--const", "N=400", "--quiet"], "build:pass",
                [("build", signal.SIGTERM, target, False)], tmp_path)
    assert run.code == 143, run.err
    one_line(run, signal.SIGTERM)
    assert run.seconds < 120


def test_a_signal_while_plotting_ends_the_run_cleanly(tmp_path):
    """Plots are drawn in the parent (matplotlib): stopped there, the sweep exits 130 without a traceback."""
    run = drive(["sweep", ROOT / "examples" / "ferrari2001.yaml", "--vary", "traffic.EF.rate=100kbit/s..200kbit/s:2",
                 "--methods", "closed-form", "--no-cache", "--out", tmp_path / "out", "--quiet"], "plot:block",
                [("plot", signal.SIGINT, "process", True)], tmp_path)
    assert run.code == 130, run.err
    one_line(run, signal.SIGINT)


# ---- batches and sweeps ------------------------------------------------------------------------------------------

def _ports(tmp_path) -> Path:
    folder = tmp_path / "ports"
    shutil.copytree(ROOT / "examples" / "edge-router", folder)
    return folder


def test_a_batch_stopped_after_its_first_scenario_reports_it_and_marks_the_rest(tmp_path):
    """verify over a folder, stopped while its second scenario is evaluated (in the executor's child): the
    first scenario's suites are in the report as usual, the other two are marked incomplete, and the JSON
    document says which did not finish."""
    folder = _ports(tmp_path)
    junit = tmp_path / "out.xml"
    run = drive(["verify", folder, "--junit", junit, "--json", "--quiet"], "evaluate:block:2",
                [("evaluate", signal.SIGTERM, "process", True)], tmp_path)
    assert run.code == 143, run.err
    one_line(run, signal.SIGTERM)
    doc = json.loads(run.out)
    assert doc["complete"] is False and doc["exit_code"] == 143
    names = [s["scenario"] for s in doc["scenarios"]]
    finished = [s for s in doc["scenarios"] if s.get("complete", True)]
    assert len(names) == 3 and len(finished) == 1 and doc["counts"]["not_finished"] == 2
    assert doc["interrupted"]["scenarios_not_finished"] == names[1:]
    marked = incomplete_suites(junit, signal.SIGTERM)
    assert sorted(s.get("name") for s in marked) == sorted(f"{n}.slo" for n in names[1:])
    normal = [s for s in ET.parse(junit).getroot().iter("testsuite") if s not in marked
              and s.get("name") == f"{names[0]}.slo"]
    assert normal and int(normal[0].get("tests")) >= 1


@pytest.mark.slow
def test_a_batch_on_dask_stopped_by_a_group_signal_ends_cleanly(tmp_path):
    """The same batch on two Dask workers: SIGTERM to the whole group (the workers have it too) once the first
    scenario is back. No traceback from the cluster's shutdown; the report is written and marked."""
    pytest.importorskip("distributed")
    folder = _ports(tmp_path)
    junit = tmp_path / "out.xml"
    run = drive(["verify", folder, "--workers", "2", "--junit", junit, "--quiet"], "record:block:1",
                [("record", signal.SIGTERM, "group", True)], tmp_path, timeout=600)
    assert run.code == 143, run.err
    one_line(run, signal.SIGTERM)
    root = ET.parse(junit).getroot()
    assert len(incomplete_suites(junit, signal.SIGTERM)) >= 1
    assert len([s for s in root.iter("testsuite") if s.get("name").endswith(".slo")]) == 3


def test_a_stopped_sweep_keeps_its_finished_points_and_resumes(tmp_path):
    """A sweep stopped at its second point (in the child): exit 143, it says how far it got, and the same
    command then takes the finished point from the cache."""
    args = ["sweep", ROOT / "examples" / "ferrari2001.yaml", "--vary", "traffic.EF.rate=100kbit/s..300kbit/s:3",
            "--methods", "closed-form", "--cache", tmp_path / "cache", "--out", tmp_path / "out", "--no-plots",
            "--quiet"]
    run = drive(args, "evaluate:block:2", [("evaluate", signal.SIGTERM, "group", True)], tmp_path)
    assert run.code == 143, run.err
    one_line(run, signal.SIGTERM)
    assert "sweep stopped after 1 of 3 points" in run.out and "resume" in run.out
    again = drive(args, "", [], tmp_path)
    assert again.code in (0, 1, 3), again.err  # the sweep's verdict (ferrari2001's SLOs), not an interruption
    assert "1 from cache, 2 computed" in again.out


# ---- admit -------------------------------------------------------------------------------------------------------

def test_a_stopped_admission_search_prints_its_bracket(tmp_path):
    """admit on the 1 Gbit/s voice port, stopped when it comes to judge a value after three evaluations (the
    bound-decided answer is the first value it looks at, and needs none): it prints the bracket it had
    ("feasible at >= N, infeasible at <= M"), in text and in JSON (marked incomplete)."""
    args = ["admit", VOICE, "--vary", "traffic.EF.calls", "--quiet"]
    run = drive(args, "admit:block:5", [("admit", signal.SIGTERM, "group", True)], tmp_path)
    assert run.code == 143, run.err
    one_line(run, signal.SIGTERM)
    line = run.out.strip().splitlines()[-1]
    assert "admission search over traffic.EF.calls stopped by SIGTERM after 3 evaluations" in line, run.out
    assert "feasible at >= " in line and "infeasible at <= " in line, line
    run = drive(args + ["--json"], "admit:block:5", [("admit", signal.SIGINT, "process", True)], tmp_path)
    assert run.code == 130, run.err
    doc = json.loads(run.out)
    assert doc["complete"] is False and doc["interrupted"]["signal"] == "SIGINT"
    lo, hi = doc["bracket"]["feasible"], doc["bracket"]["infeasible"]
    assert lo is not None and hi is not None and doc["bound_value"] <= lo < hi
    assert f"feasible at >= {int(lo)}, infeasible at <= {int(hi)}" in line  # the text run found the same bracket


def test_a_signal_while_the_command_line_is_read_still_writes_the_junit(tmp_path, monkeypatch):
    """Stopped before verify even read its arguments (the parser's modules loading, seconds under load): the
    JUnit report asked for is written, marked incomplete, named after the scenario."""
    import qosbound.cli as cli

    def build_parser():
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass
        raise AssertionError("the signal did not stop the run")

    monkeypatch.setattr(cli, "build_parser", build_parser)
    junit = tmp_path / "out.xml"
    assert cli.main(["verify", str(VOICE), "--quiet", "--junit", str(junit)]) == 143
    (suite,) = incomplete_suites(junit, signal.SIGTERM)
    assert suite.get("name") == "voice1g.slo"
