"""Points run on Dask leave standard error to qosbound: a local cluster's scheduler does not fight another
cluster for Dask's default dashboard port (8787), whose warning would break a stopped run's one-line message."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_local_cluster_beside_another_holding_the_default_port_writes_nothing_to_stderr(tmp_path):
    pytest.importorskip("distributed")
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        holder.bind(("", 8787))  # as another cluster's dashboard would; already held by one is as good
        holder.listen()
    except OSError as e:
        if e.errno != errno.EADDRINUSE:
            raise
    try:
        proc = subprocess.run([sys.executable, "-m", "qosbound", "sweep", str(ROOT / "examples" / "ferrari2001.yaml"),
                               "--vary", "traffic.EF.rate=100kbit/s,200kbit/s", "--methods", "closed-form",
                               "--workers", "2", "--no-cache", "--no-plots", "--quiet", "--out", str(tmp_path / "o")],
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")))
    finally:
        holder.close()
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stderr == ""
