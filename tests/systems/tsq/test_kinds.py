"""Every TSQ result has an honest kind; simulated intervals carry se and dof at the scenario's confidence; the
generic agreement rule covers the bound checks the TSQ system used to write itself."""


import pytest
from scipy import stats

from qosbound.agreement import agreements
from qosbound.progress import QUIET
from qosbound.results import Kind
from qosbound.scenario import build, load_raw
from qosbound.systems import tsq as S
from tests.helpers import example

EXAMPLE = example("tsq_audio")


def _small(confidence=0.9, reps=3):
    """A 2 Mbit/s bottleneck with 6 bulk transfers and the audio flow; short runs (seconds of CPU)."""
    raw = load_raw(EXAMPLE)
    raw["link"]["rate"] = "2 Mbps"
    raw["aqm"].update({"q_ref": 20, "q_max": 100})
    raw["flows"]["bulk"]["count"] = 6
    raw["metrics"]["hints"] = [2, 16]
    raw["methods"]["model-checked"]["mdp"] = False
    raw["methods"]["simulated"] = {"duration": "6 s", "warmup": "2 s", "replications": reps, "seed": 5,
                                   "confidence": confidence}
    return build(raw, "x.yaml")


@pytest.fixture(scope="module")
def results():
    scn = _small()
    return scn, S.evaluate(scn, ["closed-form", "model-checked", "simulated"], QUIET)


def test_every_result_has_a_kind(results):
    """No TSQ result lacks an interval; approximations say what they neglect."""
    _, res = results
    assert all(r.interval is not None for r in res), [r.metric for r in res if r.interval is None]
    for r in res:
        if r.kind is Kind.APPROXIMATION:
            assert r.interval.neglects
    by = {(r.metric, r.method): r for r in res}
    assert by[("audio@h2.delay.mean", "closed-form")].kind is Kind.APPROXIMATION
    assert by[("audio@h2.delay.mean", "model-checked")].kind is Kind.APPROXIMATION
    assert by[("audio@h2.delay.bound", "closed-form")].kind is Kind.UPPER_BOUND
    assert by[("tsq.cap_min_drop", "closed-form")].kind is Kind.EXACT
    assert by[("audio@h2.delay.max", "simulated")].kind is Kind.LOWER_BOUND


def test_simulated_intervals_at_the_scenario_confidence(results):
    """Simulated intervals are Student-t at methods.simulated.confidence (0.9 here) with se and dof = reps - 1."""
    scn, res = results
    sims = [r for r in res if r.method == "simulated" and r.kind is Kind.CI]
    assert sims
    t = stats.t.ppf(0.95, 2)
    for r in sims:
        iv = r.interval
        assert iv.level == 0.9 and iv.dof == 2 and iv.se is not None
        assert iv.half_width == pytest.approx(t * iv.se, rel=1e-9, abs=1e-15)


def test_generic_rule_checks_the_delay_bound(results):
    """The aging bound bounds every delay metric of its flow: the generic rule checks it against the model's and
    the simulation's mean and p99, and it holds."""
    scn, res = results
    v = [x for x in agreements(res) if x.method.startswith("closed-form vs") and "delay.bound" in x.name]
    metrics = {(x.metric, x.method) for x in v}
    for m in ("audio@h2.delay.mean", "audio@h2.delay.p99"):
        assert (m, "closed-form vs simulated") in metrics and (m, "closed-form vs model-checked") in metrics
    assert all(x.status == "agree" for x in v)
    own = S.agreements(scn, res)
    assert any(x.name.startswith("aging bound >= simulated maximum") and x.status == "agree" for x in own)
    # the TSQ system's own bound check is only the one the generic rule cannot make (bound vs observed maximum)
    assert {x.metric.rsplit(".", 1)[-1] for x in own if "bound" in x.name} == {"max"}


def test_flow_that_delivered_nothing_has_no_delay():
    """A flow whose every packet was dropped has no delay estimate (not 0 s) and quality 0."""
    import math

    import numpy as np

    from qosbound.validation.tsq_sim import SimOutput

    scn = _small()
    n = 50
    out = SimOutput(flow=np.zeros(n, dtype=np.int64), hint=np.full(n, 16, dtype=np.int16),
                    size=np.full(n, 1000, dtype=np.int32), arrival=np.linspace(2.5, 5.5, n),
                    departure=np.full(n, np.nan), dropped=np.ones(n, dtype=bool), t_d=np.zeros(n),
                    q_ins=np.zeros(n), p_adj=np.ones(n), p_trace=np.zeros(3), q_trace=np.zeros(3),
                    names=("audio",), capacity=2e6, duration=6.0)
    st = S.sim_group_stats(scn, out, np.asarray(["audio"]), "audio", 2.0)
    assert math.isnan(st["delay"]) and math.isnan(st["p99"]) and math.isnan(st["delay_max"])
    assert st["drop"] == 1.0 and st["quality"] == 0.0
    vals, ci = S.summarise([st, st], 0.95)
    assert "delay" not in vals and "p99" not in vals and "delay_max" not in vals and vals["drop"] == 1.0
