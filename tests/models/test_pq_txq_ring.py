"""The ring-count chain (models/pq_txq_ring.py): the model-checked answer for packet-unit tx-rings beyond the exact
chain's budget. Exact at Q_t = 1; an approximation above, whose error is checked against the exact chain on small
rings and against the packet simulator on real-sized ports, at the figures its docstring states."""

from __future__ import annotations

import json

import numpy as np
import pytest

from qosbound.cli import main
from qosbound.models import pq_txq_ring as ring
from qosbound.progress import QUIET
from qosbound.results import Kind
from qosbound.scenario import build, load
from qosbound.systems import pq_txq
from tests.helpers import example

IMIX = [(40, 7 / 12), (576, 4 / 12), (1500, 1 / 12)]
FERRARI_BE = [(512, 0.5), (1024, 0.3), (1536, 0.2)]


def raw(QT, ef_rate, ef_size, be, PQ, link="2 Mbps", **model):
    """A saturated-BE port whose tx-ring takes every packet in one unit."""
    return {"name": f"ring{QT}", "system": "pq_txq", "link": {"rate": link},
            "txq": {"units": QT, "unit_size": f"{max([ef_size] + [s for s, _ in be])} B"}, "pq": {"capacity": PQ},
            "traffic": {"EF": {"rate": ef_rate, "size": f"{ef_size} B", "arrivals": "poisson"},
                        "BE": {"saturated": True, "sizes": [{"size": f"{s} B", "p": p} for s, p in be]}},
            "metrics": {"ccdf_at": ["5 ms", "10 ms"], "quantiles": [0.5, 0.99, 0.999]},
            "methods": {"model-checked": {"max_states": 1e6, **model},
                        "simulated": {"packets": 250_000, "replications": 4, "seed": 11}}}


def exact(scn):
    from qosbound.models.pq_txq import solve

    return solve(pq_txq.params(scn), scn.methods.model_checked, list(scn.metrics.ccdf_at), list(scn.metrics.quantiles),
                 QUIET)


def test_at_a_one_packet_ring_the_chain_is_the_exact_one():
    """Q_t = 1: the ring is its head, nothing is approximated; Ferrari's test bed sizes, EF 15 %."""
    scn = build(raw(1, "300 kbit/s", 128, FERRARI_BE, 10))
    p = pq_txq.params(scn)
    r = ring.solve(p, scn.metrics.ccdf_at, scn.metrics.quantiles)
    e = exact(scn)
    assert r.mean == pytest.approx(e.mean, rel=1e-9)
    assert r.loss == pytest.approx(e.loss, rel=1e-6) and e.loss > 0
    for q in scn.metrics.quantiles:
        lo, hi = r.quantile_brackets[q]
        assert lo - 1e-12 <= e.quantiles[q] <= hi + 1e-12  # the exact value lies in the lattice bracket
        assert r.quantiles[q] == pytest.approx(e.quantiles[q], rel=1e-5)
    for t in scn.metrics.ccdf_at:
        assert r.ccdf[t] == pytest.approx(e.ccdf[t], rel=1e-4, abs=1e-12)


# (configuration, Q_t, stated relative error on mean, p99, p99.9): the error the module docstring states.
# Y: EF the size of the smallest BE packet (512 B, 20 % EF, PQ 8); X: Ferrari's sizes, EF 128 B at 15 %, PQ 10;
# W: one BE size of 1536 B against EF 128 B at 15 % (EF most of the departures: the worst case measured).
SMALL = [("Y", QT, 0.02) for QT in range(3, 8)] + [("X", 3, 0.06), ("W", 5, 0.15)]


def _small(cfg, QT):
    if cfg == "Y":
        return build(raw(QT, "400 kbit/s", 512, [(512, 0.5), (1536, 0.5)], 8))
    if cfg == "W":
        return build(raw(QT, "300 kbit/s", 128, [(1536, 1.0)], 10))
    return build(raw(QT, "300 kbit/s", 128, FERRARI_BE, 10))


@pytest.mark.parametrize("cfg,QT", [("X", 3), ("Y", 5), ("W", 4)])
def test_with_one_ring_position_per_stage_the_chain_is_the_exact_one(cfg, QT):
    """Stages of one position each keep the whole EF/BE pattern: the staged chain is then exact, to numerical
    precision, while it has fewer states than the PRISM chain (no residual granules, no fill phase)."""
    scn = _small(cfg, QT)
    p = pq_txq.params(scn)
    r = ring.solve(p, [], [0.99, 0.999], stages=QT)
    e = exact(scn)
    assert r.stages == QT and r.states == ring.stage_states(QT, p.pq_cap, QT) < e.states
    assert r.mean == pytest.approx(e.mean, rel=1e-8)
    assert r.loss == pytest.approx(e.loss, rel=1e-6) and e.loss > 0
    for q in (0.99, 0.999):
        lo, hi = r.quantile_brackets[q]
        assert lo - 1e-12 <= e.quantiles[q] <= hi + 1e-12
        assert r.quantiles[q] == pytest.approx(e.quantiles[q], rel=1e-5)


@pytest.mark.parametrize("cfg,QT", [("X", 5), ("W", 4), ("Y", 6)])
def test_the_staged_chain_is_stochastic_and_keeps_littles_law_at_every_stage_count(cfg, QT):
    """build_chain's rows are probability laws, the departure weights sum to 1, and the mean EF count in the ring
    is Q_t times the EF share of departures: Little's law for the ring (Q_t packets, one leaves per departure),
    which the staged chain keeps for ANY number of stages because its moves between stages are blind to the kind
    (the head and each stage's front are EF with probability e_i/c_i), so an EF packet stays Q_t departures on
    average like any other."""
    p = pq_txq.params(_small(cfg, QT))
    law = ring.ring_law(p)
    for S in range(1, QT + 1):
        sizes = ring.stage_sizes(QT, S)
        chain = ring.build_chain(law, sizes)
        assert chain.P.shape == (ring.stage_states(QT, p.pq_cap, S),) * 2
        assert np.abs(np.asarray(chain.P.sum(axis=1)).ravel() - 1.0).max() < 1e-12
        W = ring.departure_weights(law, chain, sizes[0])
        assert W.sum() == pytest.approx(1.0, abs=1e-12) and W.min() >= 0.0
        mean_ef_in_ring = float(np.dot(W.sum(axis=(0, 1)), np.arange(QT + 1)))
        assert mean_ef_in_ring == pytest.approx(QT * W[0].sum(), rel=1e-9)


@pytest.mark.parametrize("cfg,QT,S", [("X", 5, 2), ("W", 4, 1), ("Y", 6, 3)])
def test_the_closed_form_mean_is_the_integral_of_the_fft_ccdf(cfg, QT, S):
    """Two routes to one law: the mean head_parts sums in closed form lies between the lower and the upper sum of
    the CCDF ring_ccdf computes by FFT (exact at the lattice points, non-increasing between them), and
    P(D > 0) = 1 (an accepted packet waits at least its own transmission)."""
    sol = ring.solve(pq_txq.params(_small(cfg, QT)), [], [], stages=S)
    c = sol.ccdf_grid
    assert c[0] == pytest.approx(1.0, abs=1e-9) and c[-1] <= 1e-9
    assert c[1:].sum() * sol.slot * (1 - 1e-9) <= sol.mean <= c[:-1].sum() * sol.slot * (1 + 1e-9)


def test_solve_is_the_composition_of_its_named_steps():
    """solve adds nothing to its steps: ring_law, build_chain, departure_weights, delay_lattice, head_parts and
    ring_ccdf, composed by hand, give its mean, loss, EF share and CCDF to the last bit."""
    p = pq_txq.params(_small("X", 5))
    sol = ring.solve(p, [], [], stages=2)
    law = ring.ring_law(p)
    sizes = ring.stage_sizes(law.QT, 2)
    chain = ring.build_chain(law, sizes)
    W = ring.departure_weights(law, chain, sizes[0])
    Y, L, M = ring.delay_lattice(law)
    H, acc, mean_num = ring.head_parts(law, W, M, Y * M)
    arrivals = law.a * float(np.sum(W.sum(axis=(1, 2)) * law.serv))
    assert (sol.states, sol.transitions) == (chain.nn.size, chain.P.nnz)
    assert sol.mean == mean_num / acc * law.slot and sol.loss == max(0.0, 1.0 - acc / arrivals)
    assert sol.ef_share == float(W[0].sum()) and sol.slot == law.slot / M
    assert np.array_equal(sol.ccdf_grid, ring.ring_ccdf(law, H, acc, M, L * M))


@pytest.mark.parametrize("cfg,QT", [("W", 5), ("X", 3), ("Y", 7)])
def test_more_stages_bring_the_chain_closer_to_the_exact_one(cfg, QT):
    scn = _small(cfg, QT)
    p = pq_txq.params(scn)
    e = exact(scn)
    errs = []
    for S in (1, 2, 3):
        r = ring.solve(p, [], [0.99], stages=S)
        errs.append(max(abs(r.mean / e.mean - 1), abs(r.quantiles[0.99] / e.quantiles[0.99] - 1)))
    assert errs[0] > errs[1] > errs[2] - 1e-9, errs


def test_the_number_of_stages_is_the_most_that_fits_the_budget():
    assert ring.stage_sizes(7, 3) == [3, 2, 2]
    assert ring.choose_stages(64, 64, 1e4) == 1  # wan100: two stages are 65 * 33^2 = 70 785 states
    assert ring.choose_stages(16, 32, 1e4) == 3  # 33 * 7 * 6 * 6 = 8 316; four stages 33 * 5^4 = 20 625
    assert ring.choose_stages(5, 10, 1e4) == 5  # one position per stage: 11 * 2^5 = 352 states, exact
    assert ring.stage_states(16, 32, 3) == 8316 and ring.stage_states(16, 32, 4) == 20625


@pytest.mark.parametrize("cfg,QT,err", SMALL)
def test_small_rings_agree_with_the_exact_chain_within_the_stated_error(cfg, QT, err):
    scn = _small(cfg, QT)
    p = pq_txq.params(scn)
    r = ring.solve(p, [], [0.99, 0.999])
    e = exact(scn)
    assert r.states == (p.pq_cap + 1) * (QT + 1) < e.states
    rel = {"mean": r.mean / e.mean - 1, **{q: r.quantiles[q] / e.quantiles[q] - 1 for q in (0.99, 0.999)}}
    assert all(abs(v) <= err for v in rel.values()), rel
    # the method is labelled an approximation because it is one: it does not reproduce the exact chain
    assert max(abs(v) for v in rel.values()) > 1e-4, rel


def _port(name, rate, QT, PQ, ef_rate, ef_size=200, be=IMIX):
    d = raw(QT, ef_rate, ef_size, be, PQ, link=rate)
    d["name"] = name
    d["metrics"] = {"ccdf_at": ["1 ms"], "quantiles": [0.99, 0.999]}
    return build(d)


def _example(name):
    scn = load(example(name))
    rawd = dict(scn.raw)
    rawd["methods"] = {**rawd["methods"], "simulated": {"packets": 250_000, "replications": 4, "seed": 11}}
    return build(rawd, scn.path)


# (scenario, stated relative error of mean, p99 and p99.9 beyond the simulator's interval)
PORTS = [("wan100", lambda: _example("wan100"), 0.01),
         ("agg1g", lambda: _example("agg1g"), 0.01),
         ("1G ring 128, 1000 B EF at 25 %", lambda: _port("p1g", "1 Gbps", 128, 128, "250 Mbit/s", 1000,
                                                          [(64, 0.6), (1500, 0.4)]), 0.01),
         ("10M ring 16, EF 30 %", lambda: _port("p10", "10 Mbps", 16, 32, "3 Mbit/s"), 0.015),
         ("100M ring 32, EF 40 %", lambda: _port("p100", "100 Mbps", 32, 64, "40 Mbit/s"), 0.025)]


@pytest.mark.parametrize("name,make,err", PORTS, ids=[p[0] for p in PORTS])
def test_real_ports_agree_with_the_simulator_within_the_stated_error(name, make, err):
    """Through the system: model-checked answers by the ring chain (the exact one is far above its budget),
    labelled an approximation, and lies within the stated error of the simulator's 95 % interval. Where the
    ring bound's smallest process fits its budget (BOUND_STATES: every port here, agg1g's 256-ring and the
    128-ring included, as the PQ drains fast enough to be solved on a few levels) the metrics' own names carry
    the upper bound and the approximation is named EF.approx.*: no simulated interval lies above the bound."""
    from qosbound.agreement import agreements
    from qosbound.models.pq_txq_ring_bound import BOUND_STATES
    from qosbound.models.pq_txq_ring_bound_budget import smallest_states
    from qosbound.systems.pq_txq.ring_names import approx_name

    scn = make()
    assert pq_txq.model_route(scn)[0] == "ring"
    results = pq_txq.evaluate(scn, ["model-checked", "simulated"], QUIET)
    res = {(r.metric, r.method): r for r in results}
    with_bound = ("EF.approx.loss", "model-checked") in res
    assert with_bound == (smallest_states(pq_txq.params(scn)) <= BOUND_STATES)
    for m in ("EF.delay.mean", "EF.delay.p99", "EF.delay.p99.9", "EF.loss"):
        mc, sim = res[(approx_name(m) if with_bound else m, "model-checked")], res[(m, "simulated")]
        assert mc.interval.kind is Kind.APPROXIMATION and "order of the EF packets" in mc.interval.neglects
        S = mc.provenance["stages"]
        assert 1 <= S < scn.txq.units and mc.provenance["states"] == ring.stage_states(scn.txq.units,
                                                                                       scn.pq.capacity, S)
        if with_bound:
            b = res[(m, "model-checked")]
            assert b.interval.kind is Kind.UPPER_BOUND and b.value >= sim.interval.low and b.value >= mc.value
            print(f"{name} {m}: bound {b.value:.6g}, bound/simulated {b.value / sim.value if sim.value else 0:.4f}")
        if m == "EF.loss":
            assert 0.0 <= mc.value <= sim.interval.high
            continue
        lo, hi = sim.interval.low * (1 - err), sim.interval.high * (1 + err)
        print(f"{name} {m}: ring {mc.value:.6g} s, simulated {sim.value:.6g} s "
              f"[{sim.interval.low:.6g}, {sim.interval.high:.6g}], rel {mc.value / sim.value - 1:+.4f}")
        assert lo <= mc.value <= hi, (m, mc.value, sim.value, sim.interval)
    assert not [v for v in agreements(results) if v.status == "disagree"]


def test_plan_answers_wan100_by_the_ring_chain_and_never_disagrees(capsys):
    """plan with the scenario's methods minus the simulator: model-checked is no longer skipped on a 64-packet
    ring; its provenance names the method and its states; approximations never make the run disagree."""
    code = main(["plan", str(example("wan100")), "--methods", "closed-form,model-checked", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == doc["exit_code"] == 0 and doc["skipped"] == {}
    mc = [m for m in doc["metrics"] if m["method"] == "model-checked"]
    assert {m["metric"] for m in mc} >= {"EF.delay.mean", "EF.delay.p99", "EF.delay.p99.9", "EF.loss"}
    prov = mc[0]["provenance"]
    assert "ring-count chain" in prov["model"] and prov["states"] == 65 * 65
    assert "states" in prov["exact_chain"] and "budget" in prov["exact_chain"]


def test_where_the_ring_method_does_not_apply_the_exact_chain_is_still_skipped_with_both_reasons():
    """Ferrari's 512-byte units (BE packets of 2 and 3 units): above the budget nothing answers."""
    from qosbound.errors import ResourceError

    scn = load(example("ferrari2001"))
    d = dict(scn.raw)
    d["methods"] = {**d["methods"], "model-checked": {"max_states": 1000}}
    with pytest.raises(ResourceError, match="ring method does not answer either: a packet of 1536 B") as e:
        pq_txq.model_route(build(d, scn.path))
    assert e.value.field == "methods.model-checked.max_states"


def test_cbr_ef_and_a_ring_chain_above_the_budget_are_refused():
    from qosbound.errors import ResourceError

    d = raw(64, "10 Mbit/s", 200, IMIX, 64, link="100 Mbps")
    d["traffic"]["EF"]["arrivals"] = "cbr"
    with pytest.raises(ResourceError, match="Poisson EF"):
        pq_txq.model_route(build(d))
    d = raw(64, "10 Mbit/s", 200, IMIX, 64, link="100 Mbps", max_states=1000)
    with pytest.raises(ResourceError, match="4.22e\\+03 states is above the budget too"):
        pq_txq.model_route(build(d))


def test_asking_for_the_model_where_nothing_answers_still_exits_4(tmp_path, capsys):
    import yaml

    path = tmp_path / "port.yaml"
    path.write_text(yaml.safe_dump(raw(64, "10 Mbit/s", 200, IMIX, 64, link="100 Mbps", max_states=1000)))
    assert main(["plan", str(path), "--methods", "model-checked", "--quiet"]) == 4
    assert "above the budget too" in capsys.readouterr().err


def test_admission_does_not_decide_on_the_approximation_unless_asked(tmp_path, capsys, monkeypatch):
    """admit's default method is the model; answered by the ring chain WITHOUT its upper bound (here the bound's
    budget is lowered below its 4 225-state MDP) -- an approximation that underestimates -- the search runs on
    the simulator and says so; --method model-checked uses the ring chain."""
    import yaml

    from qosbound.models import pq_txq_ring_bound

    monkeypatch.setattr(pq_txq_ring_bound, "BOUND_STATES", 1000)
    d = raw(64, "10 Mbit/s", 200, IMIX, 64, link="100 Mbps")
    d["methods"]["simulated"] = {"packets": 20_000, "replications": 2, "seed": 5}
    d["slos"] = [{"metric": "EF.delay.p99", "max": "3 ms"}]
    path = tmp_path / "port.yaml"
    path.write_text(yaml.safe_dump(d))
    assert main(["admit", str(path), "--vary", "traffic.EF.rate", "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == "simulated" and doc["value"] > 10e6
    assert "ring-count chain without its upper bound" in doc["notes"][0]
    assert main(["admit", str(path), "--vary", "traffic.EF.rate", "--method", "model-checked", "--json",
                 "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == "model-checked" and doc["value"] > 10e6 and doc["notes"] == []


def test_a_lattice_too_fine_for_the_ring_method_is_a_skip_with_its_size():
    """Sizes whose gcd is 1 byte on an 8000-packet ring: the delay lattice (12 million points) is refused before
    any work, as a resource (the method is skipped), not as bad input."""
    from qosbound.errors import ResourceError

    d = raw(8000, "10 Mbit/s", 200, [(41, 0.5), (1501, 0.5)], 16, link="1 Gbps")
    with pytest.raises(ResourceError, match=r"delay lattice of 1\.2e\+07 points"):
        pq_txq.model_route(build(d))


def test_beyond_the_prism_budget_a_small_pq_gets_the_exact_staged_chain():
    """Ferrari's sizes with one packet per unit at Q_t = 9: the PRISM chain's bound (above 1e6) is over budget,
    the staged chain with one position per stage has 11 * 2^9 = 5632 states and answers with proved intervals."""
    from qosbound.agreement import agreements

    scn = build(raw(9, "300 kbit/s", 128, FERRARI_BE, 10))
    assert pq_txq.model_route(scn)[0] == "ring"
    res = [r for r in pq_txq.evaluate(scn, ["model-checked", "closed-form"], QUIET)]
    mc = {r.metric: r for r in res if r.method == "model-checked"}
    # every metric with an interval proved on the exact ring chain (models/ratio_mdp.py, ratio_interval): narrow
    # for the mean and loss (floating point), a lattice step for quantiles
    assert all(r.interval.kind is Kind.NUMERICAL for r in mc.values())
    for m in ("EF.delay.mean", "EF.loss"):
        iv = mc[m].interval
        assert iv.low <= mc[m].value <= iv.high and iv.high - iv.low <= 1e-9 * iv.high
    assert mc["EF.delay.p99"].interval.low <= mc["EF.delay.p99"].value <= mc["EF.delay.p99"].interval.high
    assert {r.provenance["stages"] for r in mc.values()} == {9} and mc["EF.loss"].provenance["states"] == 5632
    assert all(v.status != "disagree" for v in agreements(res))
