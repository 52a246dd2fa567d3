"""``plan NETWORK.yaml --workers N`` / ``--scheduler ADDRESS``: the network's simulated replications on Dask, the
document equal to the serial run's; the refusals (another system, no Dask, an unreachable scheduler) one line
each with exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from qosbound.cli import main
from tests.helpers import ROOT, example, one_line

distributed = pytest.importorskip("distributed")

WAN = str(example("network_wan"))


def _cli(*argv):
    """``qosbound ARGV`` in a process of its own, as it is run (``plan`` forks its evaluation, and a forked child
    must not inherit a Dask client of this test process)."""
    return subprocess.run([sys.executable, "-m", "qosbound", *argv], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ), timeout=900)


def _plan(*argv):
    proc = _cli("plan", WAN, "--methods", "simulated", "--json", "--quiet", *argv)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout else None, proc.stderr


@pytest.fixture(scope="module")
def serial():
    """The serial run's document (computed once: the same command without Dask)."""
    code, doc, err = _plan()
    assert code in (0, 1), err
    return code, doc


def test_two_local_workers_give_the_serial_document(serial):
    """--workers 2 (a LocalCluster of two processes started by plan) reproduces every figure of the serial run:
    each replication has its own seed sequence and is reduced to the same per-replication values."""
    code, doc, err = _plan("--workers", "2")
    assert err == ""
    assert (code, doc) == serial
    assert any(m["metric"] == "voip-ab.delay.p99.9" for m in doc["metrics"])


def test_an_existing_cluster_runs_the_replications_and_gives_the_serial_document(serial):
    """--scheduler ADDRESS: the replications are tasks of that cluster (its scheduler saw them) and the document
    is the serial run's."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        code, doc, err = _plan("--scheduler", c.scheduler_address)
        seen = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert err == ""
    assert (code, doc) == serial
    assert any(p.startswith("qosbound-point-replication") for p in seen), seen


def test_plan_in_a_process_that_loaded_dask_refuses_rather_than_hangs(capsys):
    """In process, after Dask's distributed was loaded here (this module imported it), plan's forked evaluation
    would inherit its thread pools without their threads: refused with one line, exit 2."""
    code = main(["plan", WAN, "--methods", "simulated", "--workers", "2", "--quiet"])
    assert code == 2
    assert one_line(capsys.readouterr().err) == (
        "qosbound: --workers: Dask's distributed was loaded in this process before plan's evaluation was forked from "
        "it (a forked Dask client hangs): run qosbound plan in a process of its own")


def test_another_system_refuses_workers(capsys):
    code = main(["plan", str(example("wan100")), "--workers", "2", "--quiet"])
    line = one_line(capsys.readouterr().err)
    assert code == 2
    assert line.startswith("qosbound: --workers: a pq_txq scenario has no replications to distribute")


def test_another_system_refuses_a_scheduler(capsys):
    code = main(["plan", str(example("wan100")), "--scheduler", "tcp://127.0.0.1:9", "--quiet"])
    assert code == 2
    assert "--scheduler: a pq_txq scenario has no replications to distribute" in one_line(capsys.readouterr().err)


def test_one_worker_is_the_serial_run_for_any_system(capsys):
    """--workers 1 (the default) asks for nothing: a port scenario still plans."""
    assert main(["plan", str(example("wan100")), "--workers", "1", "--methods", "closed-form", "--quiet",
                 "--json"]) in (0, 1, 3)


def test_an_unreachable_scheduler_is_one_line_and_exit_2():
    code, doc, err = _plan("--scheduler", "tcp://127.0.0.1:9")
    assert code == 2 and doc is None
    assert one_line(err).startswith("qosbound: --scheduler: cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'")


def _without_dask(*argv):
    """``qosbound ARGV`` in a child where importing Dask's distributed fails, as when it is not installed."""
    code = ("import sys; sys.modules['distributed'] = None\n"
            "from qosbound.cli import main\n"
            f"sys.exit(main({list(argv)!r}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ),
                          timeout=600)


def test_without_dask_workers_run_serially_with_a_note(serial):
    proc = _without_dask("plan", WAN, "--methods", "simulated", "--json", "--quiet", "--workers", "2")
    assert proc.stderr.strip() == ("qosbound: note: Dask's distributed is not installed; running the replications "
                                   "one after another")
    assert (proc.returncode, json.loads(proc.stdout)) == serial


def test_without_dask_a_scheduler_is_refused():
    proc = _without_dask("plan", WAN, "--methods", "simulated", "--quiet", "--scheduler", "tcp://127.0.0.1:8786")
    assert proc.returncode == 2
    assert one_line(proc.stderr) == ("qosbound: --scheduler: needs Dask's distributed scheduler: pip install "
                                     "'qosbound[dask]'")
