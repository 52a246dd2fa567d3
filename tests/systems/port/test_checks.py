"""The port's own checks (qosbound.systems.port.checks): drop precedences in RFC 2597 order per class and method,
and Storm against the direct SciPy solution of each weighted class's dropper chain."""

from __future__ import annotations

from qosbound.progress import QUIET
from qosbound.results import Interval, Result
from qosbound.scenario import load
from qosbound.systems import get_system
from qosbound.systems.port.checks import agreements, ordered_precedences
from qosbound.systems.port.elements import port_of
from tests.helpers import example


def test_only_af_precedences_of_one_class_in_order_are_judged():
    port = port_of(load(example("port_edge1g")))
    assert ordered_precedences(port.cls("critical")) == ["AF31", "AF32", "AF33"]
    assert ordered_precedences(port.cls("voice")) is None  # one DSCP
    assert ordered_precedences(port.cls("bulk")) is None  # tail drop


def test_the_branch_port_keeps_its_precedences_in_order_and_storm_equals_scipy():
    scn = load(example("port_branch10m"))
    results = get_system("port").evaluate(scn, ["closed-form", "model-checked"], QUIET)
    v = agreements(port_of(scn), results)
    order = [x for x in v if "RFC 2597" in x.name]
    assert {x.method for x in order} == {"closed-form", "model-checked"} and all(x.status == "holds" for x in order)
    storm = [x for x in v if "Storm" in x.name]
    assert len(storm) == 1 and storm[0].status == "agree" and storm[0].value < 1e-8


def test_an_inverted_order_is_an_slo_violation():
    """drop(AF21) above drop(AF22) for one method: a verdict of kind 'slo', violated (exit 1)."""
    port = port_of(load(example("port_branch10m")))
    iv = Interval.exact(0.0)
    rs = [Result("business.drop.AF21", "closed-form", 0.02, "1", Interval.exact(0.02)),
          Result("business.drop.AF22", "closed-form", 0.01, "1", Interval.exact(0.01)),
          Result("business.drop.AF23", "closed-form", 0.0, "1", iv)]
    (v,) = agreements(port, rs)
    assert v.kind == "slo" and v.status == "violated" and v.failed
