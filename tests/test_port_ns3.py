"""ns-3 for ports (qosbound.systems.port.ns3_trace): the ports ns-3 can express run on its PrioQueueDisc and
agree with the port's simulator; the others are refused naming what ns-3 lacks (slow: ns-3 starts in ~10 s)."""

from __future__ import annotations

import pytest

from qosbound.errors import ScenarioError
from qosbound.scenario import build, load
from qosbound.systems import get_system
from qosbound.systems.port.convert import convert
from qosbound.trace_verdicts import compare
from qosbound.validation import ns3_runner
from qosbound.validation.compare import arrays, delays, ks_test, trace_results
from tests.helpers import example

needs_ns3 = pytest.mark.skipif(not ns3_runner.available(), reason="the ns3 wheel is not installed")


def test_ns3_refuses_what_it_cannot_express():
    """The edge port: several weighted classes (ns-3 has no DRR or WFQ queue disc), two priority levels."""
    with pytest.raises(ScenarioError, match="no DRR or WFQ queue disc") as e:
        get_system("port").ns3_trace(load(example("port_edge1g")), 1000)
    assert e.value.field == "classes"
    raw = convert(example("ns3_matched"))[0][0]
    raw["classes"][0]["police"] = {"cir": "500 kbit/s", "cbs": "2 kB"}
    with pytest.raises(ScenarioError, match="no policer"):
        get_system("port").ns3_trace(build(raw), 1000)


@pytest.mark.slow
@needs_ns3
def test_ns3_runs_a_priority_class_over_one_class_and_agrees():
    """ns3_matched as a port (EF at priority 1 over saturated class-default, a 6-packet ring): ns-3's EF delays
    and the port simulator's follow one law (KS at 1 %), and ns-3's mean and p99 agree with the port's own
    simulated estimates (family-wise rule)."""
    scn = build(convert(example("ns3_matched"))[0][0])
    port = get_system("port")
    tn, info = port.ns3_trace(scn, 8000)
    assert info["classes"] == {"EF": "EF", "BE": "class-default"}
    tq = port.simulate_trace(scn, 200_000, 11)
    an, aq = arrays(tn, 0.01), arrays(tq, 0.01)
    assert ks_test(delays(an, "EF"), delays(aq, "EF"), thin=10).pvalue > 0.01
    metrics = ["EF.delay.mean", "EF.delay.p99"]
    verdicts = compare(trace_results(aq, metrics, "simulated"), trace_results(an, metrics, "ns-3"))
    assert len(verdicts) == 2 and all(v.status == "agree" for v in verdicts), [v.detail for v in verdicts]
