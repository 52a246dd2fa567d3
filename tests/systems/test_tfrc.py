"""Tests of qosbound.systems.tfrc: the scenario schema, closed-form and simulated results, SLOs, admit."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from qosbound.admit import admit
from qosbound.analytic import tfrc as T
from qosbound.cli import main
from qosbound.errors import ScenarioError
from qosbound.progress import QUIET
from qosbound.scenario import build, load, load_raw
from qosbound.systems import tfrc as S
from qosbound.verdicts import judge_slos

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "qstp_gtfrc.yaml"


@pytest.fixture
def raw():
    return load_raw(EXAMPLE)


def test_example_loads_with_units(raw):
    """The example scenario validates; quantities are SI (bit/s, s, bytes)."""
    scn = build(raw, str(EXAMPLE))
    f = scn.flows["flow1"]
    assert f.target == 400e3 and f.rtt == pytest.approx(0.03) and f.size == 1500 and f.loss == pytest.approx(0.16)
    assert scn.network.capacity == 1000e3


def test_closed_form_values(raw):
    """Closed-form rates equal 8 x the library's bytes/s; gTFRC's rate is max(X_calc, g); TFRC's is X_calc."""
    scn = build(raw)
    res = {r.metric: r for r in S.evaluate(scn, ["closed-form"], QUIET)}
    xc = 8 * float(T.tfrc_rate(1500, 0.03, 0.16))
    assert res["flow1.rate.tfrc"].value == pytest.approx(xc, rel=1e-12)
    assert res["flow1.rate"].value == pytest.approx(max(xc, 400e3), rel=1e-12)
    assert res["flow2.rate"].value == pytest.approx(xc, rel=1e-12)
    assert res["flow1.loss.max_friendly"].value < 0.16  # the target needs the guarantee at p = 16 %
    assert res["flow1.friendliness"].value == pytest.approx(400e3 / xc, rel=1e-12)


def test_slo_target_keyword(raw):
    """'min: target' reads the flow's own target; gTFRC meets it and TFRC, at p above p_max, misses it."""
    raw = copy.deepcopy(raw)
    raw["slos"] = [{"metric": "flow1.rate", "min": "target"}, {"metric": "flow2.rate", "min": "target"}]
    scn = build(raw)
    res = S.evaluate(scn, ["closed-form"], QUIET)
    v = {x.metric: x for x in judge_slos(S, scn, res)}
    assert v["flow1.rate"].status == "holds" and v["flow1.rate"].limit == 400e3
    assert v["flow2.rate"].status == "violated"


@pytest.mark.parametrize("patch,field", [
    ({"flows": {"flow1": {"protocol": "gtfrc", "rtt": "30 ms", "loss": 0.01}}}, "flows"),  # gTFRC without target
    ({"flows": {"flow1": {"rtt": "30 ms", "loss": 0, "target": "400 kbit/s"}}}, "flows.flow1.loss"),
    ({"flows": {"flow1": {"rtt": "30 ms", "loss": 0.01, "target": "700 kbit/s"}}}, "flows.flow1.target"),
    ({"flows": {"a.b": {"rtt": "30 ms", "loss": 0.01, "target": "100 kbit/s"}}}, "flows.a.b"),
    ({"network": {"rio": [20, 10, 0.1, 20, 40, 0.02]}}, "network.rio"),
    ({"slos": [{"metric": "flow9.rate", "min": "target"}]}, "slos[0].metric"),
    ({"slos": [{"metric": "flow1.delay", "max": "1 s"}]}, "slos[0].metric"),
])
def test_bad_scenarios_name_the_field(raw, patch, field):
    """Bad input raises ScenarioError naming the field (the reservations may not exceed the bottleneck)."""
    raw = copy.deepcopy(raw)
    for k, v in patch.items():
        if k == "network":
            raw["network"].update(v)
        else:
            raw[k] = v
    if "slos" not in patch:
        raw["slos"] = []
    with pytest.raises(ScenarioError) as e:
        build(raw, "x.yaml")
    assert field in str(e.value)


def test_admit_target_against_reservations(raw):
    """With only 'flow1.rate >= target', the largest admissible gTFRC target is the capacity left by the
    aggregate's reservation (1000 - 400 kbit/s)."""
    raw = copy.deepcopy(raw)
    raw["slos"] = [{"metric": "flow1.rate", "min": "target"}]
    scn = build(raw, str(EXAMPLE))
    res = admit(scn, "flows.flow1.target", method="closed-form")
    assert res.value == pytest.approx(600e3, rel=1e-3)


def test_admit_tfrc_rtt_is_the_inverse(raw):
    """For a TFRC flow the largest RTT keeping 'rate >= target' is max_rtt_for_target."""
    raw = copy.deepcopy(raw)
    raw["network"] = None
    raw["methods"] = {"closed-form": {}}
    raw["flows"] = {"f": {"protocol": "tfrc", "size": "1000 B", "rtt": "30 ms", "loss": 0.05, "target": "400 kbit/s"}}
    raw["slos"] = [{"metric": "f.rate", "min": "target"}]
    raw.pop("network")
    scn = build(raw)
    res = admit(scn, "flows.f.rtt", method="closed-form")
    assert res.value == pytest.approx(float(T.max_rtt_for_target(1000, 0.05, 50e3)), rel=1e-3)


def test_cli_verify_json_closed_form(capsys):
    """`qosbound verify EXAMPLE --methods closed-form --json` exits 0 with every SLO holding."""
    code = main(["verify", str(EXAMPLE), "--methods", "closed-form", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["ok"] is True


@pytest.mark.slow
def test_simulated_plan_agrees(raw):
    """Simulated gTFRC holds its target (its agreement checks hold); the plain TFRC flow gets its equation check
    too (which may fail on short runs: TFRC recovers slowly from a loss in slow start)."""
    raw = copy.deepcopy(raw)
    raw["methods"]["simulated"] = {"replications": 3, "duration": "25 s", "warmup": "6 s", "seed": 3}
    scn = build(raw)
    res = S.evaluate(scn, ["simulated"], QUIET)
    names = {r.metric for r in res}
    assert {"flow1.rate", "flow1.loss", "flow1.rtt", "flow2.rate"} <= names
    for r in res:
        assert r.provenance["replications"] == 3 and "std_error" in r.provenance
        assert r.interval.label() == "95% CI" and r.interval.dof == 2 and r.interval.se == r.provenance["std_error"]
    verdicts = S.agreements(scn, res)
    # the equation at the simulated p and R is an approximation of the sender's rate: a gap is reported, with
    # its size, never as a contradiction
    for flow in ("flow1", "flow2"):
        (v,) = [v for v in verdicts if v.metric == f"{flow}.rate" and "equation" in v.name]
        assert v.status in ("agree", "approximate") and "bit/s" in v.detail
    # closed form vs simulated goes through the one agreement rule: the closed-form rate is an approximation
    from qosbound.agreement import agreements

    both = S.evaluate(scn, ["closed-form"], QUIET) + res
    gen = [v for v in agreements(both) if v.metric == "flow1.rate"]
    assert gen and all(v.status in ("agree", "approximate") for v in gen)
    assert all("neglects" in v.detail for v in gen if v.status == "approximate")
