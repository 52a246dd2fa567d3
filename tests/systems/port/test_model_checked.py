"""Model checking per class (qosbound.systems.port.model_checked): pq_txq's chains for the priority levels, af's
dropper chains for the weighted classes -- each kind claimed only where the chain is the port."""

from __future__ import annotations

import pytest

from qosbound.errors import MethodNotApplicable
from qosbound.progress import QUIET
from qosbound.results import Kind
from qosbound.scenario import build
from qosbound.systems import get_system
from qosbound.systems.port.elements import port_of
from qosbound.systems.port.model_checked import exact_shape

PORT = {"name": "mc", "system": "port", "link": {"rate": "10 Mbit/s"}, "txq": {"units": 8},
        "classes": [{"name": "voice", "dscp": ["EF"], "priority": 1, "queue_limit": 16,
                     "traffic": {"rate": "1 Mbit/s", "size": "200 B"}},
                    {"name": "data", "dscp": ["AF31", "AF32"], "bandwidth": "40 %", "queue_limit": 20,
                     "dropper": {"mode": "wred", "exponent": 9, "thresholds": {
                         "AF31": {"min_th": 10, "max_th": 20, "P_d": 10}, "AF32": {"min_th": 5, "max_th": 20,
                                                                                 "P_d": 10}}},
                     "traffic": {"rate": "3 Mbit/s", "size": "600 B", "mix": [0.7, 0.3]}},
                    {"name": "class-default", "bandwidth": "40 %",
                     "traffic": {"saturated": True, "sizes": [{"size": 40, "p": 0.5}, {"size": 1500, "p": 0.5}]}}],
        "methods": {"model-checked": {"precision": 1e-8}}}


def _mc(raw):
    scn = build(raw)
    return {r.metric: r for r in get_system("port").evaluate(scn, ["model-checked"], QUIET)}


def test_a_port_that_is_not_pq_txq_s_system_gets_approximations_only():
    """Voice over two weighted classes: pq_txq's ring chain answers with the other classes' packets as an i.i.d.
    saturated stream, so every number is an approximation naming that; no model-checked result claims a bound,
    and the ring MDP's unproved bound is not reported."""
    port = port_of(build(PORT))
    assert not exact_shape(port)
    r = _mc(PORT)
    assert {"voice.delay.mean", "voice.delay.p99", "voice.loss", "voice.loss.queue"} <= set(r)
    assert all(x.kind is Kind.APPROXIMATION for x in r.values())
    assert "i.i.d." in r["voice.delay.p99"].interval.neglects
    assert not any(".approx." in m for m in r)


def test_a_weighted_class_is_af_s_chain_on_its_residual_rate():
    """data's drops per precedence come from Storm (models/wred.prism) at its max-min DRR rate of the link less
    voice's 1 Mbit/s, and the direct SciPy solution of the same chain is kept beside them for the check."""
    r = _mc(PORT)
    d = r["data.drop.AF32"]
    assert d.provenance["model"] == "models/wred.prism"
    assert d.provenance["share_bit_s"] == pytest.approx(4.5e6)  # (10 - 1) Mbit/s shared 40:40
    sol = d.provenance["direct_solution"]
    assert d.value == pytest.approx(sol["drop"][1], abs=1e-6)
    assert r["data.drop.AF32"].value >= r["data.drop.AF31"].value


def test_calls_are_answered_as_one_poisson_stream_and_say_so():
    """An aggregate of CBR calls needs a credit counter per call; the chain is asked again with their total
    rate as one Poisson stream, and the results name the calls' phases as neglected."""
    raw = dict(PORT)
    raw["classes"] = [dict(PORT["classes"][0], traffic={"calls": 12, "call": {"rate": "80 kbit/s", "size": "200 B",
                                                                             "arrivals": "cbr"}}),
                      PORT["classes"][2]]
    r = _mc(raw)
    assert "12 streams' phases" in r["voice.delay.mean"].interval.neglects


def test_classes_no_chain_covers_are_left_out_with_the_reason():
    """On-off voice: no pq_txq chain expresses it (omitted, with why); with nothing else to check the method is
    skipped as not applicable."""
    raw = {"name": "mc", "system": "port", "link": {"rate": "10 Mbit/s"}, "txq": {"units": 8},
           "classes": [dict(PORT["classes"][0], traffic={"rate": "1 Mbit/s", "size": "200 B", "arrivals": "on-off",
                                                         "on": "5 ms", "off": "5 ms"}), PORT["classes"][2]]}
    with pytest.raises(MethodNotApplicable, match="voice"):
        _mc(raw)
    raw["classes"].append(PORT["classes"][1])
    raw["classes"][1] = dict(raw["classes"][1], bandwidth="40 %")
    r = _mc(raw)
    omitted = next(iter(r.values())).provenance["omitted"]
    assert "voice.*" in omitted and "pq_txq's chains" in omitted["voice.*"]
