"""The simulator and the model checker implement the same semantics: simulated intervals contain the
model-checked values (Ferrari et al.'s PQ + TxQ), over random configurations."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy import stats

from qosbound.progress import QUIET
from qosbound.scenario import build
from qosbound.systems import pq_txq
from qosbound.systems.pq_txq import ModelOptions, SimOptions, params
from qosbound.systems.pq_txq.model_checked import model_results
from qosbound.systems.pq_txq.simulated import simulated_results
from tests.pq_txq_helpers import aggregate_raw, ef_streams


def scenario(QT, PQ, k, rate, arrivals, mix):
    sizes = [{"size": f"{512 * k} B", "p": 1.0}] if not mix else \
        [{"size": "512 B", "p": 0.5}, {"size": f"{512 * k} B", "p": 0.5}]
    return build({"name": "t", "system": "pq_txq", "link": {"rate": "2 Mbps"},
                  "txq": {"units": QT, "unit_size": "512 B"}, "pq": {"capacity": PQ},
                  "traffic": {"EF": {"rate": rate, "size": "128 B", "arrivals": arrivals},
                              "BE": {"saturated": True, "sizes": sizes}}})


def agree(p, sim_opts, metrics=("EF.delay.mean", "EF.delay.ccdf@10ms", "EF.loss")):
    model = {r.metric: r for r in model_results(p, ModelOptions(), [10e-3], [0.99], QUIET)}
    sim = {r.metric: r for r in simulated_results(p, sim_opts, [10e-3], [0.99], QUIET)}
    for m in metrics:
        s, v = sim[m], model[m].value
        se = float(s.provenance["std_error"])
        t = stats.t.ppf(1 - 0.001 / 2, int(s.provenance["replications"]) - 1)
        # 99.9 % per metric; a fraction seen (almost) never has a Clopper-Pearson interval instead
        assert abs(s.value - v) <= t * se + 1e-12 or s.interval.low <= v <= s.interval.high, (m, s.value, v, se)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(QT=st.integers(1, 5), PQ=st.integers(2, 10), k=st.integers(1, 3), rho=st.floats(0.05, 0.6),
       arrivals=st.sampled_from(["poisson", "bernoulli"]), mix=st.booleans(), seed=st.integers(1, 10_000))
def test_simulated_interval_contains_the_model_checked_value(QT, PQ, k, rho, arrivals, mix, seed):
    p = params(scenario(QT, PQ, k, f"{rho * 2e6:.3f} bit/s", arrivals, mix))
    agree(p, SimOptions(packets=100_000, replications=10, seed=seed))


@pytest.mark.slow
def test_cbr_agrees_once_phases_are_averaged():
    """CBR keeps one phase per replication, so agreement needs many replications (phase averaging)."""
    p = params(scenario(5, 10, 3, "300 kbit/s", "cbr", True))
    agree(p, SimOptions(packets=20_000, replications=64, seed=5), metrics=("EF.delay.mean",))


# EF aggregates of the PQ + TxQ system (Ferrari, Pau & Raffaelli 2001, section V): the exact chain of merged Poisson
# streams against the simulator running them apart.


def test_model_of_merged_poisson_streams_agrees_with_the_simulated_aggregate():
    """The exact chain for the merged Poisson stream against the simulator running the three streams apart."""
    from qosbound.agreement import agreements
    from qosbound.progress import QUIET

    r = aggregate_raw(ef_streams(50, 100, 150, arrivals="poisson"),
                      be=[{"size": "512 B", "p": 0.5}, {"size": "1536 B", "p": 0.5}])
    r["methods"] = {"model-checked": {"precision": 1e-10},
                    "simulated": {"packets": 200000, "replications": 8, "seed": 21}}
    scn = build(copy.deepcopy(r), None)
    res = pq_txq.evaluate(scn, ["model-checked", "simulated"], QUIET)
    by = {(x.metric, x.method): x for x in res}
    m, s = by[("EF.delay.mean", "model-checked")], by[("EF.delay.mean", "simulated")]
    assert s.interval.low <= m.value <= s.interval.high
    bad = [v for v in agreements(res) if v.status not in ("agree", "skipped")]
    assert not bad, bad
