"""qosbound/systems/pq_txq/ns3.py: with QOSBOUND_CACHE_DIR set, ns-3's run of a configuration is kept and read back
(the same trace, marked); ns-3's version is part of the key."""

from __future__ import annotations

import os

import pytest

from qosbound.commands.validate import NS3_EF_PACKETS
from qosbound.scenario import load
from qosbound.systems.pq_txq import ns3
from qosbound.systems.solve_cache import ENV
from qosbound.validation import ns3_runner
from tests.helpers import example

pytestmark = pytest.mark.skipif(not ns3_runner.available(), reason="ns-3 is not installed")


def test_an_ns3_run_is_kept_and_read_back_for_the_same_configuration_and_version(monkeypatch):
    """On the test run's own folder (tests/conftest.py) and ``validate --ns3``'s run of the example, which the
    docs page and the paper's build also ask for: whichever asks first runs ns-3; here at most once."""
    assert os.environ.get(ENV)
    runs = []
    real = ns3_runner.run_pq

    def counting(cfg, **kw):
        runs.append(cfg)
        return real(cfg, **kw)

    monkeypatch.setattr(ns3_runner, "run_pq", counting)
    scn = load(example("ns3_matched"))
    first, info1 = ns3.ns3_trace(scn, NS3_EF_PACKETS)
    second, info2 = ns3.ns3_trace(scn, NS3_EF_PACKETS)
    assert len(runs) <= 1 and info2["cache"].startswith("read back")
    assert ("cache" in info1) == (not runs)  # read back exactly when ns-3 did not run here
    assert first.equals(second) and len(first) > NS3_EF_PACKETS
    assert ns3._ns3_version() not in ("", "not installed")  # the installed wheel's version, in every key
