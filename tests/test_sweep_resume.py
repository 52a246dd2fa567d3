"""An interrupted sweep resumes with no point lost or computed twice: a real `qosbound sweep` process is
stopped (SIGINT, as Ctrl-C; SIGKILL, as a killed job) once some points are cached, then run again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FERRARI = str(ROOT / "examples" / "ferrari2001.yaml")
N = 300
ARGS = ["sweep", FERRARI, "--vary", f"traffic.EF.rate=100kbit/s..1900kbit/s:{N}", "--methods", "closed-form",
        "--quiet", "--no-plots"]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _stored(cache: Path) -> list[str]:
    log = cache / "stored.log"
    return log.read_text().split() if log.exists() else []


def _sweep(out: Path, cache: Path | None):
    return subprocess.run([sys.executable, "-m", "qosbound", *ARGS, "--out", str(out),
                           *(["--cache", str(cache)] if cache else ["--no-cache"])],
                          capture_output=True, text=True, env=_env(), timeout=600)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("whole")
    proc = _sweep(out, None)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, (out / "sweep.csv").read_text()


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGKILL, -signal.SIGKILL)])
def test_killed_sweep_resumes_without_losing_or_repeating_a_point(tmp_path, uninterrupted, sig, code):
    cache, out = tmp_path / "cache", tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "qosbound", *ARGS, "--out", str(out), "--cache", str(cache)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    deadline = time.monotonic() + 300
    while len(_stored(cache)) < 20:
        assert proc.poll() is None and time.monotonic() < deadline, "the sweep ended before it could be stopped"
        time.sleep(0.01)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    if sig == signal.SIGINT:
        assert err.strip().splitlines()[-1].startswith("qosbound: interrupted")
    time.sleep(1.0)  # no orphaned worker goes on storing points after the sweep is gone
    done = _stored(cache)
    time.sleep(1.0)
    assert _stored(cache) == done
    assert 20 <= len(done) < N and len(set(done)) == len(done)
    files = [f for f in cache.glob("??/*.json") if not f.name.startswith(".tmp-")]  # a write cut short stays a tmp
    assert {f.stem for f in files} == set(done) and all(json.loads(f.read_text())["key"] == f.stem for f in files)
    assert not (out / "sweep.csv").exists()

    again = _sweep(out, cache)
    assert again.returncode == uninterrupted[0], again.stderr
    assert _summary(again).startswith(f"ferrari2001: {N} points, {len(done)} from cache, {N - len(done)} computed")
    stored = _stored(cache)
    assert len(stored) == N and len(set(stored)) == N  # every point computed and stored exactly once overall
    assert (out / "sweep.csv").read_text() == uninterrupted[1]
    rerun = _sweep(out, cache)
    assert _summary(rerun).startswith(f"ferrari2001: {N} points, {N} from cache, 0 computed")
    assert _stored(cache) == stored


def _summary(proc) -> str:
    """The sweep's summary line (after the inputs as understood and the grid, which the sweep prints first)."""
    return next((x for x in proc.stdout.splitlines() if x.startswith("ferrari2001: ")), proc.stdout)
