"""The TSQ error contract: every refusal is a typed error naming the field, printed as one line with exit 2;
a simulation too large to record is refused before it runs, with its estimate."""


import pytest
import yaml

from qosbound.cli import main
from qosbound.errors import ScenarioError
from qosbound.progress import QUIET
from qosbound.scenario import build, load_raw
from qosbound.systems import tsq as S
from qosbound.validation.pi_aqm import PIParams
from qosbound.validation.tsq_sim import Flow, SimConfig, check_budget, estimate, simulate
from tests.helpers import example

EXAMPLE = example("tsq_audio")


def _raw(link="15 Mbps", q_ref=200, count=99, rtt="300 ms", **sim):
    raw = load_raw(EXAMPLE)
    raw["link"]["rate"] = link
    raw["aqm"]["q_ref"] = q_ref
    raw["flows"]["bulk"]["count"] = count
    raw["flows"]["bulk"]["rtt"] = rtt
    raw["methods"]["simulated"].update(sim)
    return raw


def _plan(tmp_path, raw, methods):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(raw))
    return main(["plan", str(p), "--methods", methods, "--quiet"])


def test_no_operating_point_is_a_scenario_error(tmp_path, capsys):
    """2000 TFRC flows with a 1 ms RTT send more than a 10 Mbit/s link even at drop probability 1: one line
    naming 'flows', exit 2 (it was a root-finding traceback, exit 1)."""
    raw = _raw("10 Mbps", 1, 2000, "1 ms")
    with pytest.raises(ScenarioError) as e:
        S.operating_point(build(raw, "x.yaml"))
    assert e.value.field == "flows" and "overloaded" in e.value.problem
    assert _plan(tmp_path, raw, "closed-form") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "field 'flows'" in err and "overloaded" in err


def test_drop_too_high_for_the_models_is_a_scenario_error(tmp_path, capsys):
    """An operating point with p* = 0.65 (1000 flows, 1 ms RTT, 100 Mbit/s) cannot be centred in the slotted
    models: model checking refuses it naming 'flows', one line, exit 2; the closed form still answers."""
    raw = _raw("100 Mbps", 5, 1000, "1 ms")
    scn = build(raw, "x.yaml")
    assert S.operating_point(scn)["p"] >= S.MODEL_MAX_DROP
    assert _plan(tmp_path, raw, "model-checked") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "field 'flows'" in err and "p* = 0.652" in err
    assert _plan(tmp_path, raw, "closed-form") in (0, 1)


def test_huge_simulation_is_refused_with_its_estimate(tmp_path, capsys):
    """A 1e9 s simulation is refused before anything is allocated: one line with the estimate and the longest
    run that fits, naming methods.simulated.duration, exit 2."""
    assert _plan(tmp_path, _raw(duration="1e9 s"), "simulated") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "methods.simulated.duration" in err and "GiB" in err and "simulate at most" in err


def test_simulator_estimate_and_budget():
    """The estimate grows with the duration; simulate() itself refuses a run above the budget (typed error)."""
    flows = (Flow("a", "cbr", 1e6, 500, 16, 0.1),)
    small = SimConfig(2e6, flows, 10.0, PIParams(q_ref=50, q_max=200))
    huge = SimConfig(2e6, flows, 1e12, PIParams(q_ref=50, q_max=200))
    assert estimate(small)[1] < estimate(huge)[1]
    check_budget(small)
    with pytest.raises(ScenarioError) as e:
        simulate(huge)
    assert e.value.field == "duration"
    with pytest.raises(ScenarioError):
        simulate(SimConfig(2e6, flows, float("inf"), PIParams(q_ref=50, q_max=200)))


def test_overloaded_hint_drop_equals_an_independent_solve_of_the_chain():
    """Under a UDP overload, hint 1's mean adjusted drop p' is the stationary mean of p' over the hint chain:
    three independent solutions agree (the engine's direct solve, a dense least-squares solve and a Cesaro
    average of the powers of P), at 0.99337 -- not 1. (Storm's iterative long-run route returned
    1.0000000000000009 on this period-2 chain; p' < 1 at short queues, which keep a little mass.) A hint whose
    packets are not all dropped keeps its delay results."""
    import numpy as np

    from qosbound.models import engine, stationary
    from qosbound.models import tsq as T

    raw = _raw()
    raw["flows"]["udp"] = {"kind": "cbr", "rate": "14.9 Mbps"}
    raw["metrics"]["hints"] = [1, 16]
    raw["methods"]["model-checked"]["mdp"] = False
    scn = build(raw, "x.yaml")
    res = {r.metric: r for r in S.evaluate(scn, ["model-checked"], QUIET)}
    ab = S.abstraction(scn)
    vals, pi, built = engine.steady_state(T.HINT_MODEL, {**ab.constants(), "d": 1}, ["k"])
    _, pp = T._qp(ab, vals["k"].astype(float), 1)
    P = stationary._matrix(built.model).toarray()
    n = P.shape[0]
    x = np.linalg.lstsq(np.vstack([P.T - np.eye(n), np.ones((1, n))]), np.r_[np.zeros(n), 1.0], rcond=None)[0]
    assert res["audio@h1.drop"].value == pytest.approx(float(x @ pp), rel=1e-9)
    assert res["audio@h1.drop"].value < 0.999
    assert "audio@h1.delay.mean" in res and res["audio@h16.delay.mean"].value > 0


@pytest.mark.parametrize("path,value", [
    ("tsq.hint_bits", 9), ("aqm.b", 2e-5), ("aqm.q_ref", 900), ("aqm.sampling", -1.0),
    ("flows.audio.rtt", "0 ms"), ("flows.bulk.one_way", "-5 ms"), ("flows.audio.file_size", "0 B"),
])
def test_bad_values_name_their_field(path, value):
    """Each bad value is a ScenarioError naming its exact field (flows by name)."""
    raw = load_raw(EXAMPLE)
    cur = raw
    for k in path.split(".")[:-1]:
        cur = cur[k]
    cur[path.split(".")[-1]] = value
    with pytest.raises(ScenarioError) as e:
        build(raw, "x.yaml")
    assert e.value.field == path
