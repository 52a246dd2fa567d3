"""Progress of long work (qosbound.progress): a bar on a terminal; in a pipe one plain line every interval on
stderr (which method, which point, the ETA) and nothing more; nothing with --quiet; stdout untouched."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from qosbound.progress import QUIET, Progress, interval, progress

ROOT = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_a_plain_line_every_interval_and_none_before():
    clock, out = Clock(), io.StringIO()
    p = Progress(lines=out, every=10.0, clock=clock)
    adv = p.task("simulating 8 x 2,000,000 EF packets", 8)
    p.status("admit traffic.EF.calls = 6400 (simulated, evaluation 5); feasible at >= 3200, infeasible at <= 12800")
    clock.t += 9.0
    adv(2)
    assert out.getvalue() == ""  # nothing before the first interval: a short run prints nothing
    clock.t += 1.0
    p.tick()
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("qosbound: [0:00:10] admit traffic.EF.calls = 6400")
    assert "feasible at >= 3200, infeasible at <= 12800" in lines[0]
    # 2 of 8 done in 10 s: 30 s left
    assert "simulating 8 x 2,000,000 EF packets: 2/8, ETA 0:00:30" in lines[0]
    clock.t += 5.0
    p.tick()
    assert len(out.getvalue().splitlines()) == 1  # not again before another interval
    clock.t += 5.0
    adv(1)
    assert len(out.getvalue().splitlines()) == 2


def test_the_status_eta_counts_down_and_finished_tasks_leave_the_line():
    clock, out = Clock(), io.StringIO()
    p = Progress(lines=out, every=1.0, clock=clock)
    adv = p.task("work", 2)
    adv(2)
    p.status("admit x = 3", eta=60.0)
    clock.t += 20.0
    p.tick()
    line = out.getvalue().splitlines()[-1]
    assert "admit x = 3, ETA 0:00:40" in line and "work" not in line


def test_partial_values_are_kept_but_not_by_the_library_default():
    p = Progress()
    p.partial({"feasible": 3})
    assert p.partial_value == {"feasible": 3}
    QUIET.partial({"feasible": 3})
    assert QUIET.partial_value is None


def test_finished_items_merge_into_the_partial_value():
    p = Progress()
    p.partial_items({"a": 1})
    p.partial_items({"b": 2})
    assert p.partial_value == {"a": 1, "b": 2}
    QUIET.partial_items({"a": 1})
    assert QUIET.partial_value is None


def test_quiet_and_non_terminal_streams():
    out = io.StringIO()
    with progress(False, stream=out) as p:  # --quiet
        assert p._lines is None and p._bar is None
    with progress(None, stream=out) as p:  # a pipe
        assert p._lines is out and p._bar is None


def test_the_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("QOSBOUND_PROGRESS_INTERVAL", "0.5")
    assert interval() == 0.5
    for bad in ("abc", "0", "-1", "inf", "nan"):
        monkeypatch.setenv("QOSBOUND_PROGRESS_INTERVAL", bad)
        assert interval() == 10.0
    monkeypatch.delenv("QOSBOUND_PROGRESS_INTERVAL")
    assert interval() == 10.0


def _run(*args, interval_s="0.5"):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               QOSBOUND_PROGRESS_INTERVAL=interval_s)
    env.pop("CI", None)
    env.pop("QOSBOUND_CACHE_DIR", None)  # the methods must run to be reported, not be read back
    return subprocess.run([sys.executable, "-m", "qosbound", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT)


LINE = re.compile(r"^qosbound: \[\d+:\d\d:\d\d\] ")


def test_in_a_pipe_admit_prints_plain_progress_lines_on_stderr_and_keeps_stdout_clean():
    """The admission search in a pipe (as in CI): plain lines naming the value tried, the method, the bracket
    and an ETA, every interval (0.5 s here through QOSBOUND_PROGRESS_INTERVAL); --json on stdout parses."""
    r = _run("admit", "examples/voice1g.yaml", "--vary", "traffic.EF.calls", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["value"] > doc["bound_value"]
    lines = [x for x in r.stderr.splitlines() if LINE.match(x)]
    others = [x for x in r.stderr.splitlines() if not LINE.match(x)]
    assert len(lines) >= 3, r.stderr
    assert all(x.startswith("note: ") for x in others), others  # only the search's own note besides
    tried = [x for x in lines if "admit traffic.EF.calls = " in x and "(simulated, evaluation " in x]
    assert tried and any("feasible at >= " in x and "infeasible at <= " in x for x in tried)
    assert any(", ETA " in x for x in tried)
    assert "\r" not in r.stderr and "\x1b" not in r.stderr  # plain lines, no bar redrawn


def test_quiet_prints_no_progress_and_a_short_run_prints_none():
    """--quiet: no line from a run that lasts many intervals (every method on ferrari2001, seconds, against an
    interval of 0.05 s); without it, none from a run shorter than the interval."""
    r = _run("plan", "examples/ferrari2001.yaml", "--quiet", "--json", interval_s="0.05")
    assert r.returncode in (0, 1) and json.loads(r.stdout)["metrics"], r.stderr  # ferrari2001 fails an SLO: exit 1
    assert not [x for x in r.stderr.splitlines() if LINE.match(x)], r.stderr
    r = _run("plan", "examples/ferrari2001.yaml", "--methods", "closed-form", interval_s="60")
    assert r.returncode in (0, 1) and r.stdout and r.stderr == "", r.stderr


def test_plan_reports_which_method_it_runs():
    r = _run("plan", "examples/ferrari2001.yaml", "--json", interval_s="0.2")
    assert r.returncode in (0, 1), r.stderr
    lines = [x for x in r.stderr.splitlines() if LINE.match(x)]
    assert any("ferrari2001: simulated (method 3 of 3)" in x for x in lines), r.stderr
    assert any("ferrari2001: model-checked (method 2 of 3)" in x for x in lines), r.stderr


def test_on_a_terminal_a_bar_shows_the_status_and_drops_finished_tasks():
    """A pseudo-terminal gets the rich bar (no plain lines): the status line above the tasks, a finished task
    hidden (an admission search runs dozens of simulations)."""
    import pty

    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "w") as tty, progress(None, stream=tty) as p:
            assert p._bar is not None and p._lines is None
            first = p.task("simulating 16 x 125,000 EF packets", 16)
            p.status("admit traffic.EF.calls = 6644 (simulated, evaluation 2); feasible at >= 3322", eta=30.0)
            assert p._bar.status.startswith("admit traffic.EF.calls = 6644") and "ETA 0:00:30" in p._bar.status
            first(16)
            second = p.task("simulating 32 x 125,000 EF packets", 32)
            second(1)
            visible = [t.description for t in p._bar.tasks if t.visible]
            assert visible == ["simulating 32 x 125,000 EF packets"]
    finally:
        os.close(master)
