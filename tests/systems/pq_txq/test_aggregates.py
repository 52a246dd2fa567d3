"""EF aggregates of the PQ + TxQ system (Ferrari, Pau & Raffaelli 2001, section V): the scenario forms
(``streams``, ``calls``/``call``), the simulator's superposition and per-stream statistics, eq. (1) in exact
arithmetic, which closed forms still hold, and the model's refusal."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from qosbound.analytic import ef_bound
from qosbound.analytic.pq_txq import aggregation_degree_exact
from qosbound.systems.pq_txq.closed_form import closed_form_results
from qosbound.errors import ResourceError, ScenarioError
from qosbound.results import Kind
from qosbound.scenario import build
from qosbound.systems import pq_txq
from qosbound.validation import pq_txq_sim as sim
from qosbound.validation.pq_txq_kernels import SS_ARRIVALS, SS_DELAYS, SS_LOST, SS_SUM
from qosbound.validation.pq_txq_reference import reference_departures
from qosbound.validation.stats import t_interval

BE_IMIX = [{"size": "40 B", "p": 7 / 12}, {"size": "576 B", "p": 4 / 12}, {"size": "1500 B", "p": 1 / 12}]


def raw(ef, *, pq=10, be=None, rate="2 Mbps", units=5):
    return {"name": "agg", "system": "pq_txq", "link": {"rate": rate}, "txq": {"units": units, "unit_size": "512 B"},
            "pq": {"capacity": pq},
            "traffic": {"EF": ef, "BE": {"saturated": True, "sizes": be or BE_IMIX}},
            "methods": {"simulated": {"packets": 20000, "replications": 4, "seed": 1}}}


def streams(*rates, arrivals="cbr", size="128 B", phases=None):
    out = [{"rate": f"{r} kbit/s", "size": size, "arrivals": arrivals} for r in rates]
    for s, ph in zip(out, phases or []):
        s["phase"] = ph
    return {"streams": out}


def scenario(ef, **kw):
    return build(raw(ef, **kw), None)


# ------------------------------------------------------------------------------------------------ scenario forms

def test_single_stream_form_unchanged():
    """The one-stream form gives the Params it always gave: no streams, its own arrivals and burst."""
    for arrivals, burst in (("poisson", 10 * 128.0), ("cbr", 128.0), ("bernoulli", 10 * 128.0)):
        p = pq_txq.params(scenario({"rate": "300 kbit/s", "size": "128 B", "arrivals": arrivals}))
        assert p.ef_streams == () and p.arrivals == arrivals and p.burst == burst
        assert p.ef_rate == 300e3 and p.lam == pytest.approx(300e3 / 1024)
        assert "EF.aggregation_degree" not in pq_txq.metric_names(
            scenario({"rate": "300 kbit/s", "size": "128 B", "arrivals": arrivals}))


def test_calls_form_is_n_identical_cbr_streams():
    scn = scenario({"calls": 7, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr"}})
    p = pq_txq.params(scn)
    assert scn.traffic.EF.rate == pytest.approx(560e3) and scn.traffic.EF.size == 200.0
    assert p.ef_streams == ((80e3, "cbr", -1.0),) * 7 and p.arrivals == "aggregate"
    assert p.burst == 7 * 200.0 and p.cbr_streams == 7  # N CBR streams: a bucket of N packets
    # identical calls are exchangeable: no per-stream metrics, the aggregation degree is reported
    names = pq_txq.metric_names(scn)
    assert "EF.aggregation_degree" in names and not any(n.startswith("EF.s") for n in names)


def test_poisson_streams_merge_and_mixed_streams_use_the_pq_capacity():
    p = pq_txq.params(scenario(streams(100, 200, arrivals="poisson")))
    assert p.arrivals == "poisson" and p.ef_rate == 300e3 and p.burst == 10 * 128.0 and p.cbr_streams == 0
    ef = streams(100, 200)
    ef["streams"][1]["arrivals"] = "poisson"
    p = pq_txq.params(scenario(ef))
    assert p.arrivals == "aggregate" and p.burst == 10 * 128.0 and p.cbr_streams == 0


@pytest.mark.parametrize("ef, field, words", [
    ({"calls": 0, "call": {"rate": "80 kbit/s", "size": "200 B"}}, "traffic.EF.calls", "positive integer"),
    ({"calls": 2.5, "call": {"rate": "80 kbit/s", "size": "200 B"}}, "traffic.EF.calls", "positive integer"),
    ({"calls": 3}, "traffic.EF", "go together"),
    ({"calls": 30, "call": {"rate": "80 kbit/s", "size": "200 B"}}, "traffic.EF.calls", ">= 1"),
    ({"calls": 3, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "poisson"}}, "traffic.EF",
     "CBR stream with a random phase"),
    ({"rate": "300 kbit/s", "size": "128 B", "streams": [{"rate": "1 kbit/s", "size": "128 B"}]}, "traffic.EF",
     "exactly one of"),
    ({"streams": []}, "traffic.EF", "empty"),
    ({"streams": [{"rate": "1 kbit/s", "size": "128 B"}, {"rate": "1 kbit/s", "size": "200 B"}]}, "traffic.EF",
     "different packet sizes"),
    ({"streams": [{"rate": "1 Mbit/s", "size": "128 B"}, {"rate": "1.5 Mbit/s", "size": "128 B"}]},
     "traffic.EF.streams", "unstable"),
    ({"streams": [{"rate": "1 kbit/s", "size": "128 B", "arrivals": "poisson", "phase": "1 ms"}]},
     "traffic.EF.streams", "phase is given only to a CBR"),
    ({"streams": [{"rate": "1 kbit/s", "size": "128 B", "phase": "soon"}]}, "traffic.EF.streams", ""),
    ({"streams": [{"rate": "-1 kbit/s", "size": "128 B"}]}, "traffic.EF.streams", ""),
    ({"streams": [{"rate": "1 kbit/s", "size": "128 B"}], "arrivals": "cbr"}, "traffic.EF", "belongs to each"),
])
def test_bad_aggregates_are_one_line_scenario_errors(ef, field, words):
    with pytest.raises(ScenarioError) as e:
        scenario(ef)
    msg = str(e.value)
    assert "\n" not in msg and words in msg
    assert (e.value.field or "").startswith(field), e.value.field


# ------------------------------------------------------------------------------------------------ eq. (1)

@pytest.mark.parametrize("rates, A", [([300], "0"), ([200, 100], "1/3"), ([100] * 3, "2/3"), ([50] * 6, "5/6"),
                                      ([50, 250], "1/6"), ([80] * 125, "124/125"), ([0.1, 0.2], "1/3")])
def test_aggregation_degree_is_exact(rates, A):
    value, text = aggregation_degree_exact([r * 1e3 for r in rates])
    assert text == A


def test_aggregation_degree_result_and_calls():
    scn = scenario({"calls": 125, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr"}},
                   rate="100 Mbps", units=64, pq=64)
    res = {r.metric: r for r in closed_form_results(pq_txq.params(scn))}
    a = res["EF.aggregation_degree"]
    assert a.interval.kind == Kind.EXACT and a.provenance["A"] == "124/125" and a.value == 124 / 125
    assert pq_txq.metric_kind("EF.aggregation_degree") == "probability"


# ------------------------------------------------------------------------------------------------ closed forms

def test_max_bound_for_n_cbr_streams_uses_n_packets_of_burst():
    """N CBR streams conform to a bucket of N packets: the bound with sigma = N L_EF (below the PQ capacity's)
    is an upper bound that also bounds each stream's mean; a user bucket below N packets is only an
    approximation; a Poisson stream in the mix falls back on the PQ capacity."""
    p = pq_txq.params(scenario(streams(100, 100, 100)))
    res = {r.metric: r for r in closed_form_results(p)}
    mx = res["EF.delay.max"]
    phi = ef_bound.fill_fraction(np.concatenate([p.be_sizes, [128.0]]), 512.0)
    want = ef_bound.ef_delay_bound(5, 512.0, 2e6, 1500.0, 128.0, 3 * 128.0, 10, phi=phi)
    assert mx.value == pytest.approx(want) and mx.interval.kind == Kind.UPPER_BOUND
    assert "EF.s*.delay.mean" in mx.bounds and "3 CBR EF streams" in mx.provenance["assumption"]
    assert res["EF.delay.worst_case_mean"].interval.kind == Kind.UPPER_BOUND
    assert res["EF.delay.cobham_mean"].interval.kind == Kind.APPROXIMATION
    ef = streams(100, 100, 100)
    ef["burst"] = "256 B"
    res = {r.metric: r for r in closed_form_results(pq_txq.params(scenario(ef)))}
    assert res["EF.delay.max"].interval.kind == Kind.APPROXIMATION
    ef = streams(100, 100, 100)
    ef["streams"][0]["arrivals"] = "poisson"
    res = {r.metric: r for r in closed_form_results(pq_txq.params(scenario(ef)))}
    assert res["EF.delay.max"].interval.kind == Kind.UPPER_BOUND and res["EF.delay.max"].provenance["sigma"] == 1280


def test_max_bound_holds_when_every_phase_coincides():
    """Four CBR streams with the same given phase send four packets at once every period: the worst burst
    the bucket of four packets allows, every period. The simulated maximum stays below the bound and comes
    close to it (within one largest BE packet and the TxQ's fill)."""
    scn = scenario(streams(100, 100, 100, 100, phases=["0.3 ms"] * 4), be=[{"size": "1536 B", "p": 1.0}])
    p = pq_txq.params(scn)
    bound = {r.metric: r for r in closed_form_results(p)}["EF.delay.max"].value
    rep = sim.run_replications(p, 20000, 4, 3)
    mx = float(rep.stats[:, sim.S_MAX].max())
    assert mx <= bound + 1e-12
    assert mx >= bound - 2 * p.T_u  # the burst of four is seen, not one packet at a time
    # one stream alone never waits behind another EF packet of its period: its maximum is at least one EF
    # transmission time shorter
    p1 = pq_txq.params(scenario(streams(100, phases=["0.3 ms"]), be=[{"size": "1536 B", "p": 1.0}]))
    assert float(sim.run_replications(p1, 5000, 2, 3).stats[:, sim.S_MAX].max()) <= mx - 128 * 8 / 2e6 + 1e-12


# ------------------------------------------------------------------------------------------------ simulator

def test_superposition_trace_matches_the_reference_loop_and_the_periods():
    """The kernel's aggregate: each stream's packets are exactly one period apart (from its given phase), and
    the departures are those of the plain-Python loop of the same semantics fed the same arrivals."""
    phases = ["0.1 ms", "2 ms", "5.5 ms"]
    p = pq_txq.params(scenario(streams(100, 50, 150, phases=phases), pq=3))
    table = sim.simulate_trace(p, 6000, 9)
    flow = np.array(table["flow"].to_pylist())
    cls = np.array(table["cls"].to_pylist())
    arr = table["arrival"].to_numpy()
    dep = table["departure"].to_numpy(zero_copy_only=False).astype(float)
    drop = table["dropped"].to_numpy(zero_copy_only=False)
    size = table["size"].to_numpy()
    for i, (rate, ph) in enumerate(zip((100e3, 50e3, 150e3), (0.1e-3, 2e-3, 5.5e-3))):
        a = arr[flow == f"EF.s{i + 1}"]
        assert a.size > 20
        np.testing.assert_allclose(a, ph + np.arange(a.size) * 1024 / rate, rtol=0, atol=1e-9)
    is_ef = cls == "EF"
    be_order = np.lexsort((np.arange(arr.size), arr))
    ef_dep, ef_drop, be_dep = reference_departures(p, arr[is_ef], size[be_order][~is_ef[be_order]])
    assert np.array_equal(ef_drop, drop[is_ef])
    np.testing.assert_allclose(ef_dep[~ef_drop], dep[is_ef & ~drop], rtol=0, atol=1e-9)


def test_per_stream_counts_add_up_and_follow_the_rates():
    p = pq_txq.params(scenario(streams(50, 100, 150)))
    rep = sim.run_replications(p, 30000, 4, 2)
    ss = rep.sstats
    for col, s in ((SS_ARRIVALS, sim.S_ARRIVALS), (SS_LOST, sim.S_LOST), (SS_DELAYS, sim.S_DELAYS)):
        np.testing.assert_array_equal(ss[:, :, col].sum(axis=1), rep.stats[:, s])
    np.testing.assert_allclose(ss[:, :, SS_SUM].sum(axis=1), rep.stats[:, sim.S_SUM], rtol=1e-9)
    share = ss[:, :, SS_ARRIVALS].sum(axis=0) / ss[:, :, SS_ARRIVALS].sum()
    np.testing.assert_allclose(share, [1 / 6, 2 / 6, 3 / 6], atol=2e-3)  # CBR: exact up to one packet each


def test_one_stream_through_the_aggregate_kernel_is_the_single_cbr_stream():
    """Kind 'aggregate' with one random-phase CBR stream draws the same numbers as kind 'cbr': same output."""
    p = pq_txq.params(scenario({"rate": "300 kbit/s", "size": "128 B", "arrivals": "cbr"}))
    pa = dataclasses.replace(p, arrivals="aggregate", ef_streams=((300e3, "cbr", -1.0),))
    a, b = sim.run_replications(p, 5000, 2, 4), sim.run_replications(pa, 5000, 2, 4)
    np.testing.assert_array_equal(a.stats, b.stats)
    np.testing.assert_array_equal(a.counts, b.counts)


def test_poisson_streams_simulated_apart_agree_with_one_merged_stream():
    """Three Poisson streams, each with its own clock in the kernel, against one Poisson stream of the total rate
    (a different random path): the means agree within their confidence intervals."""
    p3 = pq_txq.params(scenario(streams(50, 100, 150, arrivals="poisson")))
    p1 = dataclasses.replace(p3, ef_streams=())
    assert sim.setup(p3).arrivals == 3 and sim.setup(p1).arrivals == 0
    m3 = [r.stats[:, sim.S_SUM] / r.stats[:, sim.S_DELAYS] for r in [sim.run_replications(p3, 40000, 16, 5)]][0]
    m1 = [r.stats[:, sim.S_SUM] / r.stats[:, sim.S_DELAYS] for r in [sim.run_replications(p1, 40000, 16, 6)]][0]
    e3, e1 = t_interval(m3, 0.99), t_interval(m1, 0.99)
    se = np.hypot(e3.std_error, e1.std_error)
    assert abs(e3.mean - e1.mean) < 4 * se, (e3.mean, e1.mean, se)


def test_per_stream_results_are_reported_and_bounded():
    from qosbound.progress import QUIET

    scn = scenario(streams(50, 100, 150))
    res = pq_txq.evaluate(scn, ["closed-form", "simulated"], QUIET)
    names = {r.metric for r in res}
    for i in (1, 2, 3):
        assert {f"EF.s{i}.delay.mean", f"EF.s{i}.loss"} <= names
        assert pq_txq.metric_kind(f"EF.s{i}.delay.mean") == "time"
    assert set(pq_txq.metric_names(scn)) >= {n for n in names if n != "EF.delay.cobham_mean"}
    bound = next(r for r in res if r.metric == "EF.delay.max" and r.method == "closed-form").value
    for r in res:
        if r.metric.startswith("EF.s") and r.metric.endswith("mean"):
            assert 0 < r.value < bound and r.interval.kind == Kind.CI
    with pytest.raises(ScenarioError):
        pq_txq.metric_kind("EF.sx.delay.mean")


# ------------------------------------------------------------------------------------------------ model

def test_model_refuses_cbr_aggregates_and_models_merged_poisson():
    scn = scenario(streams(100, 200))
    with pytest.raises(ResourceError) as e:
        pq_txq.check_model_size(scn)
    assert "credit counter per stream" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ResourceError):
        pq_txq.check_model_size(scenario(streams(100, phases=["1 ms"])))
    # several Poisson streams are one Poisson stream: the model's state bound is that of the single form
    from qosbound.models.pq_txq_size import predicted_states

    agg = pq_txq.params(scenario(streams(100, 200, arrivals="poisson")))
    one = pq_txq.params(scenario({"rate": "300 kbit/s", "size": "128 B", "arrivals": "poisson"}))
    opts = scn.methods.model_checked
    pq_txq.check_model_size(scenario(streams(100, 200, arrivals="poisson")))
    assert predicted_states(agg, opts) == predicted_states(one, opts)


def test_model_of_merged_poisson_streams_agrees_with_the_simulated_aggregate():
    """The exact chain for the merged Poisson stream against the simulator running the three streams apart."""
    from qosbound.agreement import agreements
    from qosbound.progress import QUIET

    r = raw(streams(50, 100, 150, arrivals="poisson"), be=[{"size": "512 B", "p": 0.5}, {"size": "1536 B", "p": 0.5}])
    r["methods"] = {"model-checked": {"precision": 1e-10},
                    "simulated": {"packets": 200000, "replications": 8, "seed": 21}}
    scn = build(copy.deepcopy(r), None)
    res = pq_txq.evaluate(scn, ["model-checked", "simulated"], QUIET)
    by = {(x.metric, x.method): x for x in res}
    m, s = by[("EF.delay.mean", "model-checked")], by[("EF.delay.mean", "simulated")]
    assert s.interval.low <= m.value <= s.interval.high
    bad = [v for v in agreements(res) if v.status not in ("agree", "skipped")]
    assert not bad, bad
