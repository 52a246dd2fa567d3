"""The estimate-before-build contract (models/budget.py) for every model: the estimate is an upper bound of the
states and transitions built on small instances (asserted before anything else, as stormpy's tests do), and a
model above its budget -- states, or the memory left -- is refused before its builder is ever called.

Refusals are checked by replacing the builder with one that fails when called, never by the wall clock.
"""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml

from qosbound.analytic.wred import Profile
from qosbound.cli import main
from qosbound.errors import ResourceError
from qosbound.models import af as AF
from qosbound.models import budget
from qosbound.models import pq_txq_ring as ring
from qosbound.models import pq_txq_ring_bound as rb
from qosbound.models import pq_txq_ring_bound_budget as rbb
from qosbound.models import pq_txq_ring_bound_search as rbs
from qosbound.models import pq_txq_ring_rewards as rr
from qosbound.models import ring_abstraction as ra
from qosbound.models import tsq as M
from qosbound.progress import QUIET
from qosbound.scenario import build, load_raw
from qosbound.systems import pq_txq
from tests.helpers import example, one_line
from tests.models.test_pq_txq_ring import FERRARI_BE, IMIX, raw


def _must_not_build(*args, **kwargs):  # pragma: no cover - called only if a refusal comes too late
    raise AssertionError("the model was built although its estimate is above the budget")


class _NoSparse:
    """Stands in for scipy.sparse in a model module: building any matrix fails the test."""

    def __getattr__(self, name):
        return _must_not_build


# ---- TSQ: the per-hint DTMC and the hint MDP ----------------------------------------------------------------

SMALL = M.Abstraction(N=20, lam=0.55, p_lo=0.01, p_hi=0.3, l=4.0, slot=1e-3, bits=2)


@pytest.mark.parametrize("N,bits", [(5, 1), (20, 2), (60, 3)])
def test_tsq_estimates_bound_the_built_dtmc_and_mdp(N, bits):
    ab = dataclasses.replace(SMALL, N=N, bits=bits)
    r = M.hint_values(ab, 1)
    est = M.estimate(ab, mdp=False)
    assert (r.states, r.transitions) == (N + 1, 3 * (N + 1) - 2)
    assert r.states <= est.states and r.transitions <= est.transitions
    g = M.no_gain(ab)
    est = M.estimate(ab, mdp=True)
    assert g["states"] <= est.states and g["transitions"] <= est.transitions
    assert est.transitions <= 3 * (N + 1) * 2 ** bits


def test_tsq_direct_chain_is_sparse_and_solves_like_the_dense_one():
    """The direct chain is sparse (3 (N + 1) entries at most), so a large q_max costs memory linear in it."""
    P = M.transition_matrix(SMALL)
    assert P.nnz <= 3 * (SMALL.N + 1)
    np.testing.assert_allclose(np.asarray(P.sum(axis=1)).ravel(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(M.stationary_scipy(P), M.stationary_scipy(P.toarray()), rtol=1e-9, atol=1e-15)


def _tsq(tmp_path, q_max, **model):
    r = load_raw(example("tsq_audio"))
    r["aqm"]["q_max"] = q_max
    r["methods"]["model-checked"].update(model)
    p = tmp_path / "tsq.yaml"
    p.write_text(yaml.safe_dump(r))
    return p


def test_tsq_q_max_of_1e7_is_refused_by_its_estimate_before_building(tmp_path, monkeypatch, capsys):
    """q_max: 1e7 ran until killed ("without an answer", exit 70): now exit 4 naming aqm.q_max and the estimate."""
    from qosbound.cli import main
    from tests.helpers import one_line

    monkeypatch.setattr(M, "hint_values", _must_not_build)
    monkeypatch.setattr(M, "no_gain", _must_not_build)
    monkeypatch.setattr(M, "transition_matrix", _must_not_build)
    code = main(["plan", str(_tsq(tmp_path, "1e7")), "--methods", "model-checked", "--quiet"])
    line = one_line(capsys.readouterr().err)
    assert code == 4
    assert "field 'aqm.q_max'" in line and "1e+07 states" in line and "budget of 1e+06 states" in line


def test_tsq_honours_max_states_and_the_command_line_budget(tmp_path, monkeypatch):
    from qosbound.scenario import load
    from qosbound.systems.tsq.model_checked import check_model_size

    check_model_size(load(_tsq(tmp_path, 800)))  # the example fits the default budget
    with pytest.raises(ResourceError, match="budget of 500 states"):
        check_model_size(load(_tsq(tmp_path, 800, max_states=500)))


def test_tsq_is_refused_when_the_memory_left_is_too_small(tmp_path, monkeypatch):
    from qosbound.scenario import load
    from qosbound.systems.tsq.model_checked import check_model_size

    monkeypatch.setattr(budget, "available_memory", lambda: 1e5)
    with pytest.raises(ResourceError, match=r"more than the 100 kB of memory left \(--max-memory") as e:
        check_model_size(load(_tsq(tmp_path, 800)))
    assert e.value.field == "aqm.q_max"


# ---- AF: the WRED / RIO / n-RED chains and the EWMA chain -------------------------------------------------------

LAM = np.array([3.0, 2.0, 4.0])
PROFILE = Profile(min_th=(6, 4, 2), max_th=(12, 10, 8), P_d=(3, 3, 3))


@pytest.mark.parametrize("mode", ["wred", "rio", "nred", "ewma"])
@pytest.mark.parametrize("K", [3, 14])
def test_af_estimate_bounds_the_built_chain(mode, K):
    prof = dataclasses.replace(PROFILE, mode="wred" if mode == "ewma" else mode)
    if mode == "ewma":
        v = AF.check_wred_ewma(LAM, 8.0, K, prof)
    else:
        v = AF.check_wred(LAM, 8.0, K, prof)
    est = AF.estimate(K, prof.mode, ewma=mode == "ewma")
    assert v.states <= est.states and v.transitions <= est.transitions, (v.states, v.transitions, est)


def _af(tmp_path, buffer, **model):
    r = load_raw(example("qstp2008"))
    cls = next(iter(r["classes"]))
    r["classes"][cls]["buffer"] = buffer
    r["methods"]["model-checked"] = {**(r["methods"].get("model-checked") or {}), **model}
    p = tmp_path / "af.yaml"
    p.write_text(yaml.safe_dump(r))
    return p, cls


def test_af_is_refused_before_building(tmp_path, monkeypatch):
    from qosbound.scenario import load
    from qosbound.systems import af

    monkeypatch.setattr(AF, "check_wred", _must_not_build)
    monkeypatch.setattr(AF, "check_wred_ewma", _must_not_build)
    path, cls = _af(tmp_path, 1_000_000)
    scn = load(path)
    with pytest.raises(ResourceError, match="above the budget of 2e\\+06 states") as e:
        af.evaluate(scn, ["model-checked"], QUIET)
    assert e.value.field == f"classes.{cls}.buffer"


def test_af_honours_max_states_from_the_file_and_the_command_line(tmp_path, capsys):
    """--max-states was an unknown field for AF scenarios; now it budgets the AF chains as it does the port's."""
    import json

    from qosbound.cli import main

    path, cls = _af(tmp_path, 40)
    code = main(["plan", str(path), "--max-states", "10", "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == doc["exit_code"] != 4
    assert f"classes.{cls}.buffer" in doc["skipped"]["model-checked"]
    assert "budget of 10 states" in doc["skipped"]["model-checked"]


# ---- the ring-count chain and the ring bound's processes -----------------------------------------------------------

RING_CASES = {"ferrari": ("300 kbit/s", 128, FERRARI_BE, 10, "2 Mbps"),
              "imix": ("4 Mbit/s", 200, IMIX, 12, "10 Mbps")}
SHAPES = [(c, QT, S) for c in RING_CASES for QT, S in ((3, 1), (5, 2), (5, 5), (8, 3))]


def _ring_params(cfg, QT):
    rate, size, be, PQ, link = RING_CASES[cfg]
    return pq_txq.params(build(raw(QT, rate, size, be, PQ, link=link)))


@pytest.mark.parametrize("cfg,QT,S", SHAPES, ids=[f"{c}-Q{q}-S{s}" for c, q, s in SHAPES])
def test_ring_chain_estimate_bounds_what_is_built(cfg, QT, S):
    p = _ring_params(cfg, QT)
    sol = ring.solve(p, [], [0.99], stages=S, max_chain=1e6)
    est = ring.estimate(p, S)
    assert sol.stages == S and sol.states == est.states
    assert sol.transitions <= est.transitions


def _candidate(QT: int, family: str) -> rbb.Candidate:
    """One abstraction of each family as :func:`~qosbound.models.pq_txq_ring_bound_budget.abstractions` names it,
    with the counts it declares before building."""
    if family == "exact":
        return rbb.Candidate("exact", lambda: ra.exact(QT), 2 ** QT, ra.exact_entries(QT))
    if family == "stages(1)":
        return rbb.Candidate(family, lambda: ra.stages(QT, 1), ra.stages_labels(QT, 1), ra.stages_entries(QT, 1))
    if family.startswith("blocks"):
        c = int(family[7:-1])
        return rbb.Candidate(family, lambda: ra.blocks(QT, c), ra.blocks_labels(QT, c), ra.blocks_entries(QT, c))
    K = int(family[10:-1])
    return rbb.Candidate(family, lambda: ra.front_run(QT, K), ra.front_run_labels(QT, K), ra.front_run_entries(QT, K))


BOUND_SHAPES = [(c, QT, f) for c in RING_CASES for QT, f in ((3, "exact"), (5, "stages(1)"), (5, "front_run(0)"),
                                                             (8, "front_run(2)"), (8, "blocks(2)"), (8, "blocks(3)"))]


def _built_edges(mdp) -> tuple[int, int]:
    """The edges of a process as built: (state -> draw (a, n'), post-decision node (label, a, n') -> a label)."""
    draws = sum(sel.size * int(np.count_nonzero(mdp.T[k])) for k, sel in enumerate(mdp._by_kind))
    return draws, sum(idx.size for _, idx in mdp.post) * mdp.nn


@pytest.mark.parametrize("cfg,QT,family", BOUND_SHAPES, ids=[f"{c}-Q{q}-{f}" for c, q, f in BOUND_SHAPES])
def test_ring_bound_estimate_bounds_the_process_built(cfg, QT, family):
    """The estimate of one abstraction's process, from the parameters and the counts the abstraction declares
    before building, has the states built and at least the transitions built: the draws and the choices, which
    make the linear programme's matrix and each policy's chain."""
    p = _ring_params(cfg, QT)
    cand = _candidate(QT, family)
    est = rbb.estimate_process(p, cand.name, cand.labels, cand.entries)
    ab = cand.build()
    assert ab.size == cand.labels and ab.entries <= cand.entries
    mdp = rbs.BoundProcess(rr.DepartureRewards(p), ab, rbb.solved_levels(p)).mdp
    assert mdp.size == est.states
    draws, choices = _built_edges(mdp)
    assert draws + choices <= est.transitions
    A = mdp._lp_matrix()[0]
    assert A.nnz <= 2 * est.transitions + est.states
    pol = [np.zeros((mdp.N, mdp.nn), dtype=np.int64) for _ in mdp.post]
    assert mdp._matrix(pol).nnz <= draws


@pytest.mark.parametrize("cfg", list(RING_CASES))
@pytest.mark.parametrize("QT", [5, 8, 16])
def test_ring_bound_estimate_from_the_parameters_bounds_every_process_solve_bound_builds(cfg, QT, monkeypatch):
    """estimate_bound (the parameters alone) against the processes solve_bound actually builds: the largest
    has the estimate's states, and none has more transitions."""
    p = _ring_params(cfg, QT)
    est = rbb.estimate_bound(p)
    built = []
    real = rbs.ChoiceMDP

    def recording(*args, **kwargs):
        mdp = real(*args, **kwargs)
        built.append((mdp.size, sum(_built_edges(mdp))))
        return mdp

    monkeypatch.setattr(rbs, "ChoiceMDP", recording)
    b = rb.solve_bound(p, [], [0.99])
    assert built and max(n for n, _ in built) == est.states == b.states
    assert max(t for _, t in built) <= est.transitions


def test_ring_chain_and_bound_are_refused_before_building_when_memory_is_short(monkeypatch):
    p = _ring_params("imix", 8)
    monkeypatch.setattr(budget, "available_memory", lambda: 1e4)
    monkeypatch.setattr(ring, "sp", _NoSparse())
    for module, builder in ((rb, "DepartureRewards"), (rb, "BoundProcess"), (rbs, "ChoiceMDP")):
        monkeypatch.setattr(module, builder, _must_not_build)
    for builder in ("exact", "stages", "front_run", "blocks"):
        monkeypatch.setattr(ra, builder, _must_not_build)
    with pytest.raises(ResourceError, match="the ring-count chain .* memory left") as e:
        ring.solve(p, [], [0.99], stages=2, max_chain=1e6)
    assert e.value.field == "Q_t"
    with pytest.raises(ResourceError, match="the ring bound's process .* memory left") as e:
        rb.solve_bound(p, [], [0.99], max_states=1e6)
    assert e.value.field == "Q_t"
    with pytest.raises(ResourceError, match="the ring bound's process exact .* memory left"):
        rb.exact_intervals(_ring_params("imix", 5), [], [0.99])


def test_a_ring_bound_process_above_the_budget_is_refused_before_building(monkeypatch):
    """A process above max_states is refused before anything is built; the one-stage abstraction, the least
    there is, is left to the callers' budget (bound_available)."""
    p = _ring_params("imix", 8)
    big = _candidate(8, "front_run(4)")
    assert big.labels * rbb.solved_levels(p) > rbb.smallest_states(p)
    for module, builder in ((rb, "DepartureRewards"), (rb, "BoundProcess"), (rbs, "ChoiceMDP")):
        monkeypatch.setattr(module, builder, _must_not_build)
    with pytest.raises(ResourceError, match="the ring bound's process front_run\\(4\\) .* above the budget of 10 "
                                            "states") as e:
        rb.solve_bound(p, [], [0.99], max_states=10, only=[big])
    assert e.value.field == "Q_t"
    monkeypatch.undo()
    b = rb.solve_bound(p, [], [0.99], max_states=10, only=[_candidate(8, "stages(1)")])
    assert b.states == rbb.smallest_states(p) > 10


def test_ring_chain_with_more_stages_than_the_budget_is_refused_before_building(monkeypatch):
    p = _ring_params("imix", 8)
    monkeypatch.setattr(ring, "sp", _NoSparse())
    with pytest.raises(ResourceError, match="above the budget of 100 states"):
        ring.solve(p, [], [0.99], stages=4, max_chain=100)


def test_a_million_unit_ring_is_refused_by_its_estimate_not_by_running_out_of_memory(tmp_path, monkeypatch, capsys):
    """The exact chain's state count itself grew as kinds^Q_t in Python integers until memory ran out; now the
    count stops past any budget and the ring method's estimates refuse too: exit 4, one line."""
    from qosbound.cli import main
    from tests.helpers import one_line

    monkeypatch.setattr(ring, "sp", _NoSparse())
    for module, builder in ((rb, "DepartureRewards"), (rb, "BoundProcess"), (rbs, "ChoiceMDP")):
        monkeypatch.setattr(module, builder, _must_not_build)
    for name, unit in (("wan100", None), ("ferrari2001", None), ("wan100", "1536 B")):
        r = load_raw(example(name))
        r["txq"]["units"] = 1_000_000
        if unit:  # every packet one unit, one packet size: the ring method applies, its chain is too large
            r["txq"]["unit_size"] = unit
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(r))
        code = main(["plan", str(path), "--methods", "model-checked", "--quiet"])
        line = one_line(capsys.readouterr().err)
        assert code == 4 and "states" in line, line


# The model's state budget: known before building, a skipped method when the scenario merely enables it, a refusal (exit
# 4) when it is asked for, and every other method still answering (issue: production ports).


def _scenario(tmp_path, **changes):
    raw = load_raw(example("ferrari2001"))
    raw["methods"]["simulated"] = {"packets": 20000, "replications": 4, "seed": 3}
    raw["methods"]["model-checked"].update(changes)
    p = tmp_path / "port.yaml"
    p.write_text(yaml.safe_dump(raw))
    return str(p)


def test_a_chain_above_the_budget_is_skipped_with_its_estimate_and_the_other_methods_answer(tmp_path, capsys):
    """ferrari2001's chain is bounded by 7634 states (6580 built): with a budget of 1000 the scenario's own
    methods run without it, the note names the estimate and the field, and the exit code is the verdicts'."""
    code = main(["plan", _scenario(tmp_path, max_states=1000), "--json", "--quiet"])
    doc = json.loads(capsys.readouterr().out)
    assert code == doc["exit_code"] == 0
    assert {m["method"] for m in doc["metrics"]} == {"closed-form", "simulated"}
    why = doc["skipped"]["model-checked"]
    assert "7.63e+03 states" in why and "budget of 1e+03" in why and "max_states" in why


def test_asking_for_the_model_by_name_refuses_with_exit_4_and_one_line(tmp_path, capsys):
    code = main(["plan", _scenario(tmp_path, max_states=1000), "--methods", "model-checked", "--quiet"])
    err = one_line(capsys.readouterr().err)
    assert code == 4
    assert "field 'methods.model-checked.max_states'" in err and "7.63e+03 states" in err


def test_the_command_line_budget_overrides_the_scenario(tmp_path, capsys):
    path = _scenario(tmp_path, max_states=1000)
    assert main(["plan", path, "--methods", "closed-form,model-checked", "--max-states", "1e4", "--json",
                 "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {m["method"] for m in doc["metrics"]} == {"closed-form", "model-checked"} and doc["skipped"] == {}
    assert main(["plan", path, "--max-states", "100", "--json", "--quiet"]) == 0
    assert "model-checked" in json.loads(capsys.readouterr().out)["skipped"]


@pytest.mark.parametrize("value", ["zero", "0", "inf", "-5"])
def test_a_bad_budget_is_a_one_line_error(tmp_path, capsys, value):
    assert main(["plan", _scenario(tmp_path), "--max-states", value, "--quiet"]) == 2
    assert "--max-states" in one_line(capsys.readouterr().err)


def test_verify_reports_the_skipped_method_in_junit(tmp_path, capsys):
    junit = tmp_path / "report.xml"
    code = main(["verify", _scenario(tmp_path, max_states=1000), "--junit", str(junit), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "model-checked skipped" in out
    suites = {s.get("name"): s for s in ET.parse(junit).getroot()}
    methods = suites["port.methods"] if "port.methods" in suites else suites[next(n for n in suites
                                                                                   if n.endswith(".methods"))]
    case = methods.find("testcase")
    assert case.get("name") == "model-checked" and "7.63e+03 states" in case.find("skipped").get("message")


@pytest.mark.parametrize("name", ["wan100", "agg1g"])
def test_the_production_ports_skip_the_exact_chain_and_say_why(name):
    """A 64- or 256-packet ring is refused in microseconds, with a bound far beyond any machine."""
    from qosbound.errors import ResourceError
    from qosbound.scenario import load
    from qosbound.systems.pq_txq import check_model_size

    with pytest.raises(ResourceError, match=r"up to \d\.\d+e\+\d+ states") as e:
        check_model_size(load(example(name)))
    assert e.value.field == "methods.model-checked.max_states"


def test_admission_falls_back_to_the_simulator_when_the_default_model_is_over_budget(tmp_path, capsys):
    """admit's default method is the model; above its budget the search runs on the simulator and says so,
    while a model asked for with --method is refused."""
    path = _scenario(tmp_path, max_states=1000)
    assert main(["admit", path, "--vary", "traffic.EF.rate", "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == "simulated" and doc["value"] > 0
    assert len(doc["notes"]) == 1 and "model-checked skipped" in doc["notes"][0]
    assert main(["admit", path, "--vary", "traffic.EF.rate", "--method", "model-checked", "--quiet"]) == 4
    assert "max_states" in one_line(capsys.readouterr().err)
