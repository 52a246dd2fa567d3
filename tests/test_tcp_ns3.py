"""ns-3 as the reference for qosbound's TCP (validation/ns3_tcp.py): the same dumbbell in both, replications compared.

Matched semantics (as tests/test_ns3.py does for the PQ port): the dumbbell's RED is configured the way
ns-3's RedQueueDisc runs behind a one-packet device queue (``spacing="count"``, ``uncounted=2``) and its
sender halves the pipe at every reduction (``ssthresh_rule="ns3"``), so what remains are the documented
differences (handshake, access-link serialization, SACK block choice, cwnd counted in bytes). The
statistics are compared on replication means with the tolerances of ``ns3_tcp.TOLERANCE`` (stated and
justified there); Welch's p-value is reported beside each.
"""

from __future__ import annotations

import pytest

from qosbound.errors import ScenarioError
from qosbound.validation import ns3_runner, ns3_tcp
from qosbound.validation.dumbbell import Dumbbell, Marker, Queue

needs_ns3 = pytest.mark.skipif(not ns3_runner.available(), reason="the ns3 wheel is not installed")

NET = Dumbbell(n=4, access=(0.005, 0.01, 0.02, 0.04), rwnd=64, duration=20, warmup=5,
               fwd=Queue.red(5, 15, 0.1, spacing="count", uncounted=2), ssthresh_rule="ns3")


def test_config_refuses_what_ns3_does_not_run():
    """Multi-colour droppers, markers, random loss and finite files have no ns-3 counterpart here."""
    with pytest.raises(ScenarioError):
        ns3_tcp.config_from(Dumbbell(fwd=Queue(mode="rio", min_th=(20, 5, 5), max_th=(40, 15, 15))), [1])
    with pytest.raises(ScenarioError):
        ns3_tcp.config_from(Dumbbell(marker=(Marker("two-colour", 1e6, 1e4),)), [1])
    with pytest.raises(ScenarioError):
        ns3_tcp.config_from(Dumbbell(loss=0.01), [1])
    cfg = ns3_tcp.config_from(NET, [7, 8])
    assert cfg["n"] == 4 and len(cfg["starts"]) == 2 and cfg["min_th"] == 5 and cfg["max_p"] == 0.1


def test_stalled_flow_counter():
    assert ns3_tcp.stalled([4e6, 3e6, 2e6, 4e4], [10, 11, 12, 1.0]) == 1
    assert ns3_tcp.stalled([4e6, 3e6, 2e6, 1e6], [10, 11, 12, 9]) == 0


@pytest.mark.slow
@needs_ns3
def test_tcp_dumbbell_agrees_with_ns3():
    """Three 20-s replications of a 4-flow dumbbell (RTTs 20-90 ms, 10 Mbit/s, RED 5/15/0.1): total goodput and
    throughput within 5 %, the bottleneck's loss rate and the mean cwnd within 25 % of ns-3's (replication
    means); qosbound's simulator never leaves a flow stalled."""
    agreements, q, n = ns3_tcp.compare(NET, replications=3, seed=11, timeout=900)
    by = {a.metric: a for a in agreements}
    for k in ("goodput", "throughput", "loss_rate", "cwnd_mean"):
        assert by[k].agree, by[k].line()
    assert by["loss_rate"].ns3 > 0.001  # RED is active
    assert all(ns3_tcp.stalled(r.flows.goodput, r.flows.cwnd_mean) == 0 for r in q)
    assert all(r.packets > 0 for r in n)


def test_welch_p_value_is_never_nan():
    """Without spread there is no test, but the table still gets a number: equal means 1, different means 0."""
    import math

    from qosbound.validation.ns3_tcp import _welch

    assert _welch([1.0, 1.0], [1.0, 1.0]) == 1.0
    assert _welch([1.0, 1.0], [2.0, 2.0]) == 0.0
    assert _welch([1.0], [3.0]) == 0.0
    p = _welch([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])
    assert 0 < p < 1 and not math.isnan(p)
