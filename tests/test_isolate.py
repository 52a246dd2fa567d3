"""Engine work in a child process: answers, errors, crashes, memory limits, interrupts (qosbound.isolate)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qosbound.errors import (EXIT_INTERRUPT, EXIT_TERMINATED, InternalError, Interrupted, ModelError,
                             ResourceError, ScenarioError)
from qosbound.isolate import _ChildProgress, _fork_safe, run_isolated
from qosbound.progress import Progress, report_partial_items
from qosbound.results import Interval, Result

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def forks(request):
    """True when this process can fork the engine's child. Once numba's OpenMP threads run here (a parallel
    simulation earlier in the same test worker), :func:`run_isolated` computes in-process instead; the claims
    about the child are then checked by running the test in a fresh interpreter, and the fixture gives False."""
    if _fork_safe():
        return True
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                           request.node.nodeid], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return False


def _result(x):
    return [Result("EF.delay.mean", "closed-form", x, "s", Interval.exact(x), {"pid": os.getpid()})]


def test_the_answer_comes_back_from_a_child_process(forks):
    if not forks:
        return
    out = run_isolated(_result, 0.25, what="test")
    assert out[0].value == 0.25 and out[0].interval.low == 0.25
    assert out[0].provenance["pid"] != os.getpid()


def _raise(exc):
    raise exc


def test_typed_errors_cross_the_process_boundary_with_their_fields(forks):
    if not forks:
        return
    with pytest.raises(ScenarioError) as e:
        run_isolated(_raise, ScenarioError("too big", file="s.yaml", field="pq.capacity"), what="test")
    assert (e.value.file, e.value.field, e.value.problem) == ("s.yaml", "pq.capacity", "too big")
    with pytest.raises(ResourceError) as e:
        run_isolated(_raise, ResourceError("budget", field="methods.simulated.packets"), what="test")
    assert e.value.exit_code == 4 and e.value.field == "methods.simulated.packets"


def test_an_unexpected_exception_is_an_internal_error_with_the_traceback(forks):
    if not forks:
        return
    with pytest.raises(InternalError) as e:
        run_isolated(_raise, KeyError("oops"), what="evaluating x")
    assert e.value.exit_code == 70
    assert "evaluating x failed unexpectedly: KeyError" in str(e.value)
    assert "Traceback" in e.value.details and "_raise" in e.value.details


def test_memory_error_and_bad_alloc_are_resource_errors(forks):
    if not forks:
        return
    with pytest.raises(ResourceError):
        run_isolated(_raise, MemoryError(), what="test")
    with pytest.raises(ResourceError):
        run_isolated(_raise, ModelError("steady state: std::bad_alloc"), what="test")


def _allocate(n):
    return len(bytearray(n))


def test_an_address_space_limit_turns_a_runaway_allocation_into_a_resource_error(forks):
    if not forks:
        return
    limit = 1 << 30
    with pytest.raises(ResourceError, match="out of memory under the limit"):
        run_isolated(_allocate, 4 * limit, what="test", memory_limit=limit)
    assert run_isolated(_allocate, 1 << 20, what="test", memory_limit=limit) == 1 << 20


def _die(sig):
    os.kill(os.getpid(), sig)
    time.sleep(10)


def test_a_child_killed_by_a_signal_is_one_error_naming_it(forks):
    if not forks:
        return
    with pytest.raises(InternalError, match="crashed with SIGFPE"):
        run_isolated(_die, signal.SIGFPE, what="test")
    with pytest.raises(ModelError, match="SIGSEGV"):
        run_isolated(_die, signal.SIGSEGV, what="test", on_crash=ModelError)


def _with_progress(n, progress):
    adv = progress.task("work", n)
    for _ in range(n):
        adv()
    return n


class _Recorder:
    def __init__(self):
        self.tasks, self.done = [], 0

    def task(self, description, total=None):
        self.tasks.append((description, total))

        def adv(n=1):
            self.done += n

        return adv


def test_progress_is_relayed_to_the_parent(forks):
    if not forks:
        return
    rec = _Recorder()
    assert run_isolated(_with_progress, 1000, what="test", progress=rec) == 1000
    assert rec.tasks == [("work", 1000)] and rec.done == 1000


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


def _env():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("CI", None)
    return env


@pytest.mark.parametrize("sig,code,word", [(signal.SIGINT, EXIT_INTERRUPT, "interrupted"),
                                           (signal.SIGTERM, EXIT_TERMINATED, "terminated")])
def test_a_signal_stops_a_large_storm_build_promptly(tmp_path, sig, code, word):
    """Storm builds a 64-million-state model (minutes, GBs) without returning to Python: a signal must still
    stop it within seconds, with one line and the documented exit code, and leave no process behind."""
    (tmp_path / "huge.prism").write_text(_HUGE)
    (tmp_path / "huge.props").write_text('P=? [ F "full" ]\n')
    proc = subprocess.Popen([sys.executable, "-m", "qosbound", "model", "check", str(tmp_path / "huge.prism"),
                             "--const", "N=400", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env(), cwd=tmp_path, text=True)
    time.sleep(6)  # imports, preflight, then Storm is building
    assert proc.poll() is None, proc.communicate()
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - the bug this test guards against
        proc.kill()
        raise
    waited = time.monotonic() - t0
    assert proc.returncode == code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"qosbound: {word}"), err
    assert waited < 15
    # the child was killed too: no process is still running the build
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    assert str(tmp_path / "huge.prism") not in ps


def test_a_storm_crash_on_a_constant_is_one_line(tmp_path):
    """``const double p = 0/0`` kills Storm's parser with SIGFPE: one line, exit 2."""
    (tmp_path / "m.prism").write_text("dtmc\nconst double p = 0/0;\nmodule m\n  s : [0..1] init 0;\n"
                                      "  [] true -> p : (s'=1) + (1-p) : (s'=0);\nendmodule\n")
    (tmp_path / "m.props").write_text("P=? [ F s=1 ]\n")
    proc = subprocess.run([sys.executable, "-m", "qosbound", "model", "check", str(tmp_path / "m.prism")],
                          capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "SIGFPE" in lines[0] and "m.prism" in lines[0]


def test_a_memory_limited_model_check_is_a_resource_error(tmp_path):
    (tmp_path / "huge.prism").write_text(_HUGE)
    (tmp_path / "huge.props").write_text('P=? [ F "full" ]\n')
    proc = subprocess.run([sys.executable, "-m", "qosbound", "--max-memory", "700 MB", "model", "check",
                           str(tmp_path / "huge.prism"), "--const", "N=300"],
                          capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=300)
    assert proc.returncode == 4, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "out of memory" in lines[0] and "--max-memory" in lines[0]


def _partial_then_signal(sig, target, progress):
    """In the child: report what is done, then stop the test's process ``target`` with ``sig`` (as CI cancelling
    the job would)."""
    progress.partial({"done": ["closed-form"]})
    os.kill(target, sig)
    time.sleep(60)


class _Keeper:
    def __init__(self):
        self.partial_value = None

    def task(self, description, total=None):
        return lambda n=1: None

    def partial(self, value):
        self.partial_value = value


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, EXIT_INTERRUPT), (signal.SIGTERM, EXIT_TERMINATED)])
def test_a_signal_stops_the_child_and_the_error_carries_what_it_had_done(sig, code):
    """The child's last partial value, sent before the signal, comes back on the Interrupted error (and to the
    progress object), with the signal's exit code and name."""
    keep = _Keeper()
    with pytest.raises(Interrupted) as e:
        run_isolated(_partial_then_signal, sig, os.getpid(), what="work", progress=keep)
    assert e.value.exit_code == code and e.value.partial == {"done": ["closed-form"]}
    assert str(e.value) == f"{'interrupted' if code == 130 else 'terminated'} ({signal.Signals(sig).name}): work stopped"
    assert keep.partial_value == {"done": ["closed-form"]}


def _points_then_signal(sig, target, progress):
    """In the child: a batch's points reported one at a time as they finish (as the sweep executor does: the
    relay's ``partial_items``, or the caller's own progress where the work runs in this process), then the
    signal."""
    done = {}
    for i in range(50):
        done[f"p{i}"] = {"point": i, "payload": "x" * 1000}
        report_partial_items(progress, {f"p{i}": done[f"p{i}"]}, done)
    os.kill(target, sig)
    time.sleep(60)


def test_a_batch_s_points_reported_one_at_a_time_arrive_merged_in_the_parent():
    """Every finished point reaches the Interrupted error and the parent's progress, merged into one mapping
    equal to the child's; a progress without ``partial_items`` gets the whole mapping through ``partial``."""
    expected = {f"p{i}": {"point": i, "payload": "x" * 1000} for i in range(50)}
    keep = _Keeper()  # no partial_items: the relay falls back to partial(the merged mapping)
    with pytest.raises(Interrupted) as e:
        run_isolated(_points_then_signal, signal.SIGTERM, os.getpid(), what="batch", progress=keep)
    assert e.value.partial == expected and keep.partial_value == expected
    full = Progress()
    with pytest.raises(Interrupted) as e:
        run_isolated(_points_then_signal, signal.SIGTERM, os.getpid(), what="batch", progress=full)
    assert e.value.partial == expected and full.partial_value == expected


def test_the_child_sends_each_finished_point_once():
    """The relay sends the new points only: the record of a batch of n points travels once, not n^2/2 times
    (resending it after every point made 1,000 ports cost 140 s against 15 s: benchmarks/bench_configs.py)."""
    msgs = []
    cp = _ChildProgress(msgs.append)
    for i in range(3):
        cp.partial_items({f"p{i}": i})
    assert [m for m in msgs if m[0].startswith("partial")] == [("partial_items", {"p0": 0}),
                                                             ("partial_items", {"p1": 1}),
                                                             ("partial_items", {"p2": 2})]


def test_a_second_signal_while_reaping_is_counted_and_the_child_is_reaped(forks):
    """The reaping hook sends a second SIGTERM while the parent waits for the killed child: no exception escapes
    the reaping, the child is reaped (no zombie), the error is the first signal's."""
    from qosbound import interrupts
    if not forks:
        return

    reaped = []

    def second(stage, pid=None, **info):
        if stage == "reap":
            reaped.append(pid)
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):
                pass

    interrupts.HOOKS.append(second)
    try:
        with interrupts.handling():
            with pytest.raises(Interrupted) as e:
                run_isolated(_partial_then_signal, signal.SIGTERM, os.getpid(), what="work", progress=_Keeper())
            assert interrupts.count() == 2
    finally:
        interrupts.HOOKS.remove(second)
    assert e.value.exit_code == EXIT_TERMINATED and len(reaped) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(reaped[0], os.WNOHANG)  # already reaped


def test_after_openmp_threads_started_here_the_work_still_runs():
    """numba's GNU OpenMP layer aborts a forked child once the parent has used it (a test session that ran a
    parallel simulation in-process): the work then runs in-process instead of dying."""
    import numpy as np
    from numba import njit, prange

    @njit(parallel=True)
    def total(a):
        s = 0.0
        for i in prange(a.size):
            s += a[i]
        return s

    a = np.ones(1000)
    assert total(a) == 1000.0  # starts the threading layer in this process
    assert run_isolated(total, a, what="test") == 1000.0
