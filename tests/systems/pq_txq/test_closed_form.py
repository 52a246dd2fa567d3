"""The closed forms of the pq_txq system (qosbound/systems/pq_txq/closed_form.py): their values and kinds.

EF aggregates of the PQ + TxQ system (Ferrari, Pau & Raffaelli 2001, section V): the aggregation degree as a
result, and the maximum-delay bound of N CBR streams.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from qosbound.analytic import ef_bound
from qosbound.analytic.priority import pk_wait
from qosbound.results import Kind
from qosbound.scenario import build, load_raw
from qosbound.systems import pq_txq
from qosbound.systems.pq_txq import params as scenario_params
from qosbound.systems.pq_txq.closed_form import closed_form_results
from qosbound.validation import pq_txq_sim as sim
from tests.helpers import example
from tests.pq_txq_helpers import aggregate_scenario, ef_streams, loaded_params, mean_delay


def test_aggregation_degree_result_and_calls():
    scn = aggregate_scenario({"calls": 125, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr"}},
                   rate="100 Mbps", units=64, pq=64)
    res = {r.metric: r for r in closed_form_results(pq_txq.params(scn))}
    a = res["EF.aggregation_degree"]
    assert a.interval.kind == Kind.EXACT and a.provenance["A"] == "124/125" and a.value == 124 / 125
    assert pq_txq.metric_kind("EF.aggregation_degree") == "probability"


def test_max_bound_for_n_cbr_streams_uses_n_packets_of_burst():
    """N CBR streams conform to a bucket of N packets: the bound with sigma = N L_EF (below the PQ capacity's)
    is an upper bound that also bounds each stream's mean; a user bucket below N packets is only an
    approximation; a Poisson stream in the mix falls back on the PQ capacity."""
    p = pq_txq.params(aggregate_scenario(ef_streams(100, 100, 100)))
    res = {r.metric: r for r in closed_form_results(p)}
    mx = res["EF.delay.max"]
    phi = ef_bound.fill_fraction(np.concatenate([p.be_sizes, [128.0]]), 512.0)
    want = ef_bound.ef_delay_bound(5, 512.0, 2e6, 1500.0, 128.0, 3 * 128.0, 10, phi=phi)
    assert mx.value == pytest.approx(want) and mx.interval.kind == Kind.UPPER_BOUND
    assert "EF.s*.delay.mean" in mx.bounds and "3 CBR EF streams" in mx.provenance["assumption"]
    assert res["EF.delay.worst_case_mean"].interval.kind == Kind.UPPER_BOUND
    assert res["EF.delay.cobham_mean"].interval.kind == Kind.APPROXIMATION
    ef = ef_streams(100, 100, 100)
    ef["burst"] = "256 B"
    res = {r.metric: r for r in closed_form_results(pq_txq.params(aggregate_scenario(ef)))}
    assert res["EF.delay.max"].interval.kind == Kind.APPROXIMATION
    ef = ef_streams(100, 100, 100)
    ef["streams"][0]["arrivals"] = "poisson"
    res = {r.metric: r for r in closed_form_results(pq_txq.params(aggregate_scenario(ef)))}
    assert res["EF.delay.max"].interval.kind == Kind.UPPER_BOUND and res["EF.delay.max"].provenance["sigma"] == 1280


def test_max_bound_holds_when_every_phase_coincides():
    """Four CBR streams with the same given phase send four packets at once every period: the worst burst
    the bucket of four packets allows, every period. The simulated maximum stays below the bound and comes
    close to it (within one largest BE packet and the TxQ's fill)."""
    scn = aggregate_scenario(ef_streams(100, 100, 100, 100, phases=["0.3 ms"] * 4), be=[{"size": "1536 B", "p": 1.0}])
    p = pq_txq.params(scn)
    bound = {r.metric: r for r in closed_form_results(p)}["EF.delay.max"].value
    rep = sim.run_replications(p, 20000, 4, 3)
    mx = float(rep.stats[:, sim.S_MAX].max())
    assert mx <= bound + 1e-12
    assert mx >= bound - 2 * p.T_u  # the burst of four is seen, not one packet at a time
    # one stream alone never waits behind another EF packet of its period: its maximum is at least one EF
    # transmission time shorter
    p1 = pq_txq.params(aggregate_scenario(ef_streams(100, phases=["0.3 ms"]), be=[{"size": "1536 B", "p": 1.0}]))
    assert float(sim.run_replications(p1, 5000, 2, 3).stats[:, sim.S_MAX].max()) <= mx - 128 * 8 / 2e6 + 1e-12


# Best effort with a load in the PQ + TxQ system: Cobham's mean, its limits and its kind, and the kinds of the other
# closed forms.


def test_cobham_mean_limits():
    """cobham_mean tends to the M/D/1 mean of EF alone as the BE load vanishes and to the saturated form as the
    total load goes to 1."""
    p = loaded_params()
    s = p.ef_size * 8.0 / p.C
    sat = {r.metric: r for r in closed_form_results(p)}["EF.delay.cobham_mean"].value
    low = {r.metric: r for r in closed_form_results(dataclasses.replace(p, be_rate=1e-3))}["EF.delay.cobham_mean"]
    high = {r.metric: r for r in closed_form_results(dataclasses.replace(p, be_rate=(1 - 1e-7) * 0.85 * p.C))}
    assert low.value == pytest.approx(pk_wait(p.lam, s, s * s) + s, rel=1e-6)
    assert high["EF.delay.cobham_mean"].value == pytest.approx(sat, rel=1e-4)
    assert low.kind is Kind.APPROXIMATION and low.estimates == "EF.delay.mean"


def test_closed_form_kinds_with_a_load():
    """With a BE load: eq. (7) an upper bound on the mean, the max bound an upper bound on the maximum, the
    quantiles and the mean (Poisson EF with the PQ capacity binding), Cobham's mean an approximation."""
    p = scenario_params(build(load_raw(example("wan100_be60.yaml"))))
    res = {r.metric: r for r in closed_form_results(p)}
    assert res["EF.delay.worst_case_mean"].kind is Kind.UPPER_BOUND
    assert "whatever BE does" in res["EF.delay.worst_case_mean"].provenance["note"]
    assert res["EF.delay.max"].kind is Kind.UPPER_BOUND
    assert res["EF.delay.cobham_mean"].kind is Kind.APPROXIMATION
    assert res["EF.delay.cobham_mean"].provenance["rho_BE"] == pytest.approx(0.6)


def test_cobham_mean_close_to_simulation_on_the_example():
    """On wan100_be60 (one packet per ring slot) the approximation is within 2 % of the simulated mean."""
    p = scenario_params(build(load_raw(example("wan100_be60.yaml"))))
    cm = {r.metric: r for r in closed_form_results(p)}["EF.delay.cobham_mean"].value
    m, se, _ = mean_delay(p, packets=100_000, replications=4)
    assert abs(m - cm) <= 0.02 * m + 4 * se
