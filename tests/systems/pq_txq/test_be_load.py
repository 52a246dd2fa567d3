"""Best effort with a load in the PQ + TxQ system (issue 10 item 4): schema, simulator, closed forms, CLI.

Semantics (qosbound.systems.pq_txq): Poisson BE packets of the size mix wait in an unbounded FIFO BE queue; the
scheduler refills the TxQ from the PQ, else from the BE queue; with both empty the line idles.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qosbound.systems.pq_txq.closed_form import closed_form_results
from qosbound.analytic.priority import cobham_wait, pk_wait
from qosbound.cli import main
from qosbound.errors import ScenarioError
from qosbound.systems.pq_txq.params import Params
from qosbound.results import Kind
from qosbound.scenario import build, load_raw
from qosbound.systems.pq_txq import params as scenario_params
from qosbound.validation import pq_txq_sim as sim
from qosbound.validation.pq_txq_reference import reference_departures
from qosbound.validation.stats import t_interval

from tests.helpers import example, one_line


def params(C=2e6, Q_t=5, unit=512.0, pq_cap=10, ef_size=128.0, ef_rate=300e3, arrivals="poisson",
           be=(512.0, 1024.0, 1536.0), probs=(0.5, 0.3, 0.2), be_rate=None) -> Params:
    return Params(C=C, Q_t=Q_t, unit=unit, pq_cap=pq_cap, ef_size=ef_size, ef_rate=ef_rate,
                  lam=ef_rate / (8.0 * ef_size), arrivals=arrivals, be_sizes=np.array(be, dtype=float),
                  be_probs=np.array(probs, dtype=float), burst=pq_cap * ef_size, be_rate=be_rate)


def mean_delay(p, packets=40_000, replications=6, seed=7):
    """Simulated mean EF delay (s) and its standard error across replications."""
    rep = sim.run_replications(p, packets, replications, seed)
    per = rep.stats[:, sim.S_SUM] / rep.stats[:, sim.S_DELAYS]
    e = t_interval(per, 0.95)
    return e.mean, e.std_error, rep


def columns(table):
    cls = np.array(table["cls"].to_pylist())
    dep = table["departure"].to_numpy(zero_copy_only=False).astype(float)
    return (cls == "EF", table["size"].to_numpy(), table["arrival"].to_numpy(), dep,
            table["dropped"].to_numpy(zero_copy_only=False))


def be60_raw():
    raw = load_raw(example("wan100_be60.yaml"))
    raw["methods"]["simulated"] = {"packets": 20000, "replications": 4, "seed": 3}
    return raw


def write(tmp_path, raw, name="s.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(raw))
    return str(p)


# ------------------------------------------------------------------------------------------ schema

def test_example_loads_with_its_load():
    """wan100_be60: 60 Mbit/s of IMIX best effort, total utilisation 70 %; the default stays saturated."""
    p = scenario_params(build(load_raw(example("wan100_be60.yaml"))))
    assert p.be_rate == pytest.approx(60e6) and not p.be_saturated
    assert p.rho + p.rho_be == pytest.approx(0.7)
    assert p.be_lam == pytest.approx(60e6 / (8 * float(p.be_probs @ p.be_sizes)))
    sat = load_raw(example("wan100.yaml"))
    sat["traffic"]["BE"].pop("saturated")  # neither saturated nor a rate: saturated, as before
    q = scenario_params(build(sat))
    assert q.be_saturated and q.be_rate is None and q.be_lam == 0.0


@pytest.mark.parametrize("be,field,message", [
    ({"saturated": True, "rate": "60 Mbps"}, "traffic.BE", "not both"),
    ({"saturated": False}, "traffic.BE", "needs a BE load"),
    ({"rate": "0 Mbps"}, "traffic.BE.rate", "must be positive"),
    ({"rate": "60 MB"}, "traffic.BE.rate", "wrong units"),
    ({"rate": "90 Mbps"}, "traffic.BE.rate", "total utilisation"),
    ({"rate": "95 Mbps"}, "traffic.BE.rate", "1.05 >= 1"),
])
def test_bad_be_load_is_one_line_exit_2(tmp_path, capsys, be, field, message):
    """A BE load with saturated: true, saturated: false without a load, a non-positive or mis-dimensioned
    rate, and a total utilisation >= 1 are refused on the BE field with one line and exit 2."""
    raw = be60_raw()
    sizes = raw["traffic"]["BE"]["sizes"]
    raw["traffic"]["BE"] = {**be, "sizes": sizes}
    code = main(["plan", write(tmp_path, raw), "--methods", "closed-form", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    line = one_line(err)
    assert f"field '{field}'" in line and message in line


# ------------------------------------------------------------------------------------------ simulator

@pytest.mark.parametrize("be_rate", [0.2e6, 1.2e6])
def test_matches_plain_python_event_loop_with_a_load(be_rate):
    """Given the EF arrivals and the BE packets (each arriving at its TxQ entry, which leaves the dynamics
    unchanged: it found no room before), the plain-Python event loop gives the same departures, idle periods
    included."""
    p = params(Q_t=4, pq_cap=3, ef_rate=500e3, be=(1500.0, 300.0), probs=(0.6, 0.4), be_rate=be_rate)
    table = sim.simulate_trace(p, 6000, 5)
    is_ef, size, arr, dep, drop = columns(table)
    be = ~is_ef
    ef_dep, ef_drop, be_dep = reference_departures(p, arr[is_ef], size[be], be_arrivals=arr[be])
    assert np.array_equal(ef_drop, drop[is_ef])
    np.testing.assert_allclose(ef_dep[~ef_drop], dep[is_ef & ~drop], rtol=0, atol=1e-9)
    np.testing.assert_allclose(be_dep, dep[be], rtol=0, atol=1e-9)
    # the line did idle: some packet started later than the previous departure
    order = np.argsort(dep[~np.isnan(dep)])
    d = dep[~np.isnan(dep)][order]
    tx = (np.where(is_ef, p.ef_size, size)[~np.isnan(dep)][order]) * 8.0 / p.C
    assert np.sum(d[1:] - tx[1:] > d[:-1] + 1e-9) > 10


def test_reference_saturated_path_unchanged():
    """Without BE arrival times the reference is the saturated loop: the line never idles."""
    p = params(Q_t=2, be=(512.0,), probs=(1.0,))
    ef_dep, ef_drop, be_dep = reference_departures(p, [0.0001], [512.0] * 5)
    S_be, S_ef = 512 * 8 / p.C, 128 * 8 / p.C
    # two BE packets fill Q_t = 2 at t = 0; the EF arrival joins after the first departure
    assert ef_dep[0] == pytest.approx(2 * S_be + S_ef)
    assert be_dep[0] == pytest.approx(S_be) and be_dep[2] == pytest.approx(2 * S_be + S_ef + S_be)


def test_delay_is_function_of_state_found_with_a_load():
    """Every EF delay is the TxQ work found plus (EF ahead + 1) transmissions, also when it found the line idle
    (work 0) -- the identity behind the maximum-delay bound holds whatever BE does."""
    p = params(ef_rate=600e3, be_rate=0.8e6, pq_cap=4)
    table, state = sim.simulate_trace(p, 30_000, 11, with_state=True)
    is_ef, size, arr, dep, drop = columns(table)
    ok = is_ef & ~drop
    predicted = state["work"] + (state["ahead"] + 1) * p.ef_size * 8.0 / p.C
    np.testing.assert_allclose((dep - arr)[ok], predicted[ok], rtol=1e-9, atol=1e-12)
    assert np.sum(state["work"][ok] == 0) > 100  # many arrivals found the line idle
    assert np.all((dep - arr)[ok] <= sim.max_delay_bound(p) * (1 + 1e-12))


def test_line_utilisation_is_the_offered_load():
    """The fraction of time the line is busy is rho_EF + rho_BE (BE arrivals at rate be_rate / (8 E[L]))."""
    p = params(be_rate=0.9e6)
    table = sim.simulate_trace(p, 200_000, 2)
    is_ef, size, arr, dep, drop = columns(table)
    ok = ~np.isnan(dep)
    busy = float(np.sum(np.where(is_ef, p.ef_size, size)[ok])) * 8.0 / p.C
    span = float(np.nanmax(dep))
    assert busy / span == pytest.approx(p.rho + 0.9e6 / p.C, rel=0.02)


def test_saturated_runs_unchanged_by_a_zero_load_field():
    """be_rate None is the saturated kernel path: the same seed gives identical statistics whether the field is
    left at its default or set explicitly."""
    a = sim.run_replications(params(), 20_000, 2, 9)
    b = sim.run_replications(params(be_rate=None), 20_000, 2, 9)
    assert np.array_equal(a.stats, b.stats) and np.array_equal(a.counts, b.counts)


def test_vanishing_be_load_is_md1_for_ef_alone():
    """As the BE load goes to 0 the EF mean delay tends to the M/D/1 mean W_PK + S_EF (EF alone; the TxQ adds
    nothing to a FIFO of EF packets)."""
    p = params(be_rate=20.0, pq_cap=200)
    s = p.ef_size * 8.0 / p.C
    target = pk_wait(p.lam, s, s * s) + s
    m, se, _ = mean_delay(p)
    assert abs(m - target) <= 4 * se + 0.002 * target


def test_one_unit_txq_is_mg1_nonpreemptive_priority():
    """With Q_t = 1 the system is the M/G/1 queue with two non-preemptive priority classes: the simulated EF
    mean matches Cobham's W_1 + S_EF, and so does the closed-form cobham_mean."""
    p = params(Q_t=1, pq_cap=10_000, be_rate=1.2e6)
    s_ef = p.ef_size * 8.0 / p.C
    s_be = p.be_sizes * 8.0 / p.C
    W1 = cobham_wait([p.lam, p.be_lam], [s_ef, float(p.be_probs @ s_be)], [s_ef ** 2, float(p.be_probs @ s_be ** 2)])[0]
    m, se, _ = mean_delay(p, packets=60_000, replications=8)
    assert abs(m - (W1 + s_ef)) <= 4 * se
    cm = {r.metric: r for r in closed_form_results(p)}["EF.delay.cobham_mean"]
    assert cm.value == pytest.approx(W1 + s_ef, rel=1e-12)


def test_high_be_load_approaches_saturated():
    """As the total load goes to 1 the EF mean tends to the saturated one: the gap shrinks and is within 2 %
    at 99.9 % of the spare capacity."""
    sat, se_sat, _ = mean_delay(params())
    gaps = []
    for frac in (0.9, 0.999):
        p = params(be_rate=frac * (1 - 0.15) * 2e6)
        m, se, _ = mean_delay(p)
        gaps.append((sat - m, np.hypot(se, se_sat)))
    assert gaps[1][0] < gaps[0][0] - 3 * (gaps[0][1] + gaps[1][1])
    assert abs(gaps[1][0]) <= 0.02 * sat + 4 * gaps[1][1]


# ------------------------------------------------------------------------------------------ property

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    q_t=st.integers(1, 8),
    cap=st.integers(2, 40),
    rho=st.floats(0.05, 0.6),
    ef_size=st.sampled_from([64.0, 128.0, 200.0, 512.0]),
    be=st.lists(st.tuples(st.sampled_from([40.0, 256.0, 576.0, 1024.0, 1500.0]), st.floats(0.1, 1.0)),
                min_size=1, max_size=3),
    frac=st.floats(0.02, 0.98),
    arrivals=st.sampled_from(["poisson", "cbr"]),
)
def test_saturated_be_is_the_worst_case_of_the_mean(q_t, cap, rho, ef_size, be, frac, arrivals):
    """Same EF, same sizes: the simulated mean EF delay with saturated best effort is at least the one at any BE
    load (a one-sided test at 4 standard errors of the difference); with the load, eq. (7) still bounds the
    mean and no delay exceeds the maximum-delay bound."""
    sizes = np.array([s for s, _ in be])
    probs = np.array([w for _, w in be]) / sum(w for _, w in be)
    C = 2e6
    base = dict(C=C, Q_t=q_t, pq_cap=cap, ef_size=ef_size, ef_rate=rho * C, arrivals=arrivals,
                be=tuple(sizes), probs=tuple(probs))
    sat, se_sat, _ = mean_delay(params(**base), packets=15_000, replications=4, seed=1)
    p = params(**base, be_rate=frac * (1 - rho) * C)
    m, se, rep = mean_delay(p, packets=15_000, replications=4, seed=2)
    assert sat >= m - 4 * np.hypot(se, se_sat)
    res = {r.metric: r.value for r in closed_form_results(p)}
    assert res["EF.delay.worst_case_mean"] >= m - 4 * se
    assert float(rep.stats[:, sim.S_MAX].max()) <= res["EF.delay.max"] * (1 + 1e-9)


# ------------------------------------------------------------------------------------------ closed forms

def test_cobham_mean_limits():
    """cobham_mean tends to the M/D/1 mean of EF alone as the BE load vanishes and to the saturated form as the
    total load goes to 1."""
    p = params()
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


def test_stability_checked_below_the_system_layer():
    """The simulator refuses a total utilisation >= 1 on its own parameter."""
    with pytest.raises(ScenarioError) as e:
        sim.setup(params(be_rate=1.8e6))
    assert e.value.field == "be_rate" and ">= 1" in e.value.problem


# ------------------------------------------------------------------------------------------ command line

def test_plan_skips_the_model_with_its_reason(tmp_path, capsys):
    """plan on a loaded scenario enabling model-checked answers by the closed forms and the simulator, and says
    why the model was skipped (JSON 'skipped')."""
    code = main(["plan", write(tmp_path, be60_raw()), "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert "saturated best effort only" in doc["skipped"]["model-checked"]
    assert {m["method"] for m in doc["metrics"]} == {"closed-form", "simulated"}
    assert code == doc["exit_code"] == 0


@pytest.mark.parametrize("argv", [["plan", "--methods", "model-checked"], ["model", "render", "--out", "OUT"]])
def test_model_asked_for_by_name_is_refused(tmp_path, capsys, argv):
    """Asking for the model of a loaded scenario (plan --methods model-checked, model render) is bad input:
    one line naming traffic.BE.rate, exit 2, and no number."""
    path = write(tmp_path, be60_raw())
    args = [a if a != "OUT" else str(tmp_path / "out") for a in argv]
    args.insert(2 if argv[0] == "model" else 1, path)
    code = main(args)
    out = capsys.readouterr()
    assert code == 2
    line = one_line(out.err)
    assert "field 'traffic.BE.rate'" in line and "saturated best effort only" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
