"""The suite is deterministic by default: Hypothesis derandomises unless the developer opts in to exploring."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]


def test_profile_in_force():
    """Derandomised unless HYPOTHESIS_PROFILE=dev asks for fresh random examples."""
    explore = os.environ.get("HYPOTHESIS_PROFILE") == "dev"
    assert settings.default.derandomize is (not explore)
    assert settings.default.deadline is None


def _run_profile_test(**env_changes):
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    env.update(env_changes)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           f"{Path(__file__).name}::test_profile_in_force"],
                          cwd=str(ROOT / "tests"), env=env, capture_output=True, text=True, timeout=300)


def test_deterministic_without_ci_variable():
    """A run outside CI (no CI variable, as `.ci/run` or a bare pytest on a laptop) still derandomises;
    HYPOTHESIS_PROFILE=dev switches exploring on."""
    for changes in ({}, {"HYPOTHESIS_PROFILE": "dev"}):
        proc = _run_profile_test(**changes)
        assert proc.returncode == 0, (changes, proc.stdout[-2000:], proc.stderr[-2000:])
        assert "1 passed" in proc.stdout
