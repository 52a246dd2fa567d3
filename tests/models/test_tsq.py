"""Tests of the TSQ PRISM models (models/tsq_hint.prism, models/tsq.prism) through qosbound.models.tsq."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qosbound.cli import main
from qosbound.errors import ModelError
from qosbound.models import engine, tsq as M
from qosbound.progress import QUIET
from qosbound.scenario import build, load_raw
from qosbound.systems import tsq as S
from qosbound.systems.tsq import GAIN_TOLERANCE  # the MDP long-run-average solver's relative error
from tests.helpers import example


#: The small instance every test here solves (N packets of queue, its rates and drop probabilities).
SMALL_PARAMS = dict(N=20, lam=0.55, p_lo=0.01, p_hi=0.3, l=4.0, slot=1e-3)
SMALL = M.Abstraction(**SMALL_PARAMS)


def _expected_counts(N):
    """States N + 1; three successors per state except k = 0 and k = N, where two coincide."""
    return N + 1, 3 * (N + 1) - 2


@pytest.mark.parametrize("hint", [1, 6, 16])
def test_hint_dtmc_counts_then_values_match_scipy(hint):
    """Storm's DTMC has the expected size; its long-run rewards equal a direct SciPy solution of the same chain."""
    r = M.hint_values(SMALL, hint)
    assert (r.states, r.transitions) == _expected_counts(SMALL.N)
    pi = M.stationary_scipy(M.transition_matrix(SMALL))
    k = np.arange(SMALL.N + 1, dtype=float)
    qp, pp = M._qp(SMALL, k, hint)
    assert r.values["mean_tail"] == pytest.approx(pi @ k, rel=1e-8)
    assert r.values["mean_qdelay"] == pytest.approx(pi @ qp, rel=1e-8)
    assert r.values["mean_drop"] == pytest.approx(pi @ pp, rel=1e-8)
    assert r.values["accepted"] == pytest.approx(1 - pi @ pp, rel=1e-8)


def test_storm_steady_state_equals_scipy():
    """The steady-state vector from Storm equals SciPy's for the same chain."""
    vals, pi, built = engine.steady_state(M.HINT_MODEL, {**SMALL.constants(), "d": 4}, ["k"])
    ref = M.stationary_scipy(M.transition_matrix(SMALL))
    assert np.allclose(pi[np.argsort(vals["k"])], ref, rtol=1e-8, atol=1e-12)


def test_hint_distribution_sums_to_one_and_mean_matches():
    """The accepted-delay distribution is a distribution whose mean is acc_delay / accepted."""
    d, p, _ = M.hint_distribution(SMALL, 5)
    assert p.sum() == pytest.approx(1.0)
    r = M.hint_values(SMALL, 5)
    assert d @ p == pytest.approx(r.values["acc_delay"] / r.values["accepted"], rel=1e-8)


def test_lower_hint_less_delay_more_drop():
    """Per-hint delay increases and drop decreases with the hint (Claypool, Kinicki & Kumar Figures 8-10)."""
    v = [M.hint_values(SMALL, h).values for h in (1, 4, 8, 16)]
    delays = [x["mean_qdelay"] for x in v]
    drops = [x["mean_drop"] for x in v]
    assert delays == sorted(delays) and drops == sorted(drops, reverse=True)


@pytest.mark.parametrize("bits", [1, 3, 4])
def test_mdp_counts(bits):
    """The MDP chooses the hint bit by bit: (N + 2)(2^(n+1) - 1) states (the chain's N + 1 queue lengths, plus the
    first slot at k0); one successor per bit choice (two choices below the last bit), then the slot's three
    successors (two at the ends)."""
    ab = M.Abstraction(SMALL.N, SMALL.lam, SMALL.p_lo, SMALL.p_hi, SMALL.l, SMALL.slot, bits)
    b = engine.build(M.MDP_MODEL, ab.mdp_constants(), ['R{"sqrt_law"}max=? [ LRA ]'])
    assert b.states == ab.mdp_states() == (SMALL.N + 2) * (2 ** (bits + 1) - 1)
    choice_states = (SMALL.N + 2) * (2 ** bits - 1)
    assert b.transitions == 2 * choice_states + 2 ** bits * (3 * (SMALL.N + 1) - 2 + 3)


@pytest.mark.parametrize("bits", [2, 4])
def test_mdp_best_policy_matches_direct_solve(bits):
    """Storm's best long-run square-root-law throughput equals the direct solve (greedy hint per state, which is
    optimal because the tagged flow does not change the queue), within the MDP solver's tolerance."""
    ab = M.Abstraction(SMALL.N, SMALL.lam, SMALL.p_lo, SMALL.p_hi, SMALL.l, SMALL.slot, bits)
    r = engine.check(M.MDP_MODEL, M.mdp_properties(), ab.mdp_constants())
    direct = M.best_policy_direct(ab)
    assert r.values["max_sqrt_law"] == pytest.approx(direct, rel=GAIN_TOLERANCE)
    # the renewal-reward form PRISM can check gives the same optimum (its value iteration is tighter here)
    assert r.values["cycle_sqrt_law"] / r.values["cycle_steps"] == pytest.approx(direct, rel=1e-8)


@pytest.mark.parametrize("bits", [1, 2, 3])
def test_flat_rendering_equals_bitwise_mdp(bits):
    """The one-action-per-hint MDP that no_gain checks has the same optimum and capped reachability as
    models/tsq.prism, which chooses the hint bit by bit."""
    ab = M.Abstraction(SMALL.N, SMALL.lam, SMALL.p_lo, SMALL.p_hi, SMALL.l, SMALL.slot, bits)
    g = M.no_gain(ab, goodput=True)
    assert g["states"] == SMALL.N + 1 and g["transitions"] == 2 ** bits * (3 * (SMALL.N + 1) - 2)
    r = engine.check(M.MDP_MODEL, M.mdp_properties(), ab.mdp_constants())
    assert g["max"] == pytest.approx(r.values["max_sqrt_law"], rel=GAIN_TOLERANCE)
    assert g["max_goodput"] == pytest.approx(r.values["max_goodput"], rel=GAIN_TOLERANCE)
    assert g["capped_reachable"] == (r.values["p_capped"] > 0.5)
    assert g["solver_rel_error"] <= GAIN_TOLERANCE


def test_no_gain_outside_cap_region():
    """Where no hint can be capped, the best hint policy earns exactly the FIFO square-root-law throughput."""
    ab = M.Abstraction(N=20, lam=0.55, p_lo=0.01, p_hi=0.03, l=40.0, slot=1e-3)
    g = M.no_gain(ab, goodput=True)
    assert not g["capped_reachable"]
    assert abs(g["gain"]) <= GAIN_TOLERANCE
    assert g["max_goodput"] <= g["goodput_fifo"] + 1e-9


def test_gain_inside_cap_region():
    """Where the cap binds (small l, high p), cutting in line gains square-root-law throughput, not goodput."""
    g = M.no_gain(SMALL, goodput=True)
    assert g["capped_reachable"]
    assert g["gain"] > 1e-3
    assert g["max_goodput"] <= g["goodput_fifo"] + 1e-9


@settings(max_examples=8, deadline=None)
@given(p_hi=st.floats(0.02, 0.9), l=st.floats(0.5, 50.0))
def test_gain_iff_cap_reachable(p_hi, l):
    """Over configurations, the MDP finds a gain only when some reachable state has a capped hint."""
    ab = M.Abstraction(N=12, lam=0.55, p_lo=0.01, p_hi=p_hi, l=l, slot=1e-3)
    g = M.no_gain(ab)
    if not g["capped_reachable"]:
        assert abs(g["gain"]) <= GAIN_TOLERANCE
    else:
        assert g["gain"] > -GAIN_TOLERANCE


def test_abstraction_centres_on_operating_point():
    """The abstraction's drift is zero at q_ref and pb(q_ref) = p*."""
    ab = M.abstraction(15e6, 1000, 800, 200, 0.02, 0.04, bits=3)
    pb = ab.p_lo + (ab.p_hi - ab.p_lo) * 200 / ab.N
    assert pb == pytest.approx(0.02)
    assert 2 * ab.lam * (1 - pb) == pytest.approx(1.0)
    assert ab.l == pytest.approx(75.0)
    assert ab.H == 8 and ab.constants()["nbits"] == 3
    with pytest.raises(ModelError):
        M.abstraction(15e6, 1000, 800, 200, 0.0, 0.04, bits=4)
    with pytest.raises(ModelError):
        M.abstraction(15e6, 1000, 800, 200, 0.6, 0.04, bits=4)


# Regression tests: the TSQ models use the scenario's number of hints 2^n (tsq.hint_bits), not 16.
#
# With ``hint_bits: 3`` the models used to insert a hint-d packet as if there were 16 hints (a tail-insertion delay of
# 0.053 s against the closed form's 0.107 s) and no verdict reported it.


EXAMPLE = example("tsq_audio")


@pytest.mark.parametrize("bits", [1, 3, 5])
def test_hint_dtmc_uses_two_to_the_bits_hints(bits):
    """Storm's per-hint DTMC inserts a hint-d packet at ceil(d k / 2^n), as a direct SciPy solve does."""
    ab = M.Abstraction(**SMALL_PARAMS, bits=bits)
    pi = M.stationary_scipy(M.transition_matrix(ab))
    k = np.arange(ab.N + 1, dtype=float)
    for d in sorted({1, max(1, 2 ** bits // 2), 2 ** bits}):
        r = M.hint_values(ab, d)
        assert (r.states, r.transitions) == (ab.N + 1, 3 * (ab.N + 1) - 2)
        qp = np.ceil(d * k / 2 ** bits)
        assert r.values["mean_qdelay"] == pytest.approx(pi @ qp, rel=1e-8)
        # exact consequence of the ceiling: d/2^n <= E[q']/E[k] < d/2^n + 1/E[k]
        ratio = r.values["mean_qdelay"] / r.values["mean_tail"]
        assert d / 2 ** bits - 1e-9 <= ratio < d / 2 ** bits + 1 / r.values["mean_tail"]


def _scenario(bits, hints, **methods):
    raw = load_raw(EXAMPLE)
    raw["tsq"]["hint_bits"] = bits
    H = 2 ** bits
    raw["flows"]["audio"]["hint"] = min(raw["flows"]["audio"]["hint"], H)
    raw["flows"]["bulk"]["hint"] = H
    raw["metrics"]["hints"] = hints
    raw["methods"]["model-checked"]["mdp"] = False
    raw["methods"].update(methods)
    return raw


@pytest.mark.parametrize("bits,hints", [(3, [1, 3, 8]), (5, [1, 16, 32])])
def test_model_and_closed_form_agree_per_hint(bits, hints):
    """Per hint, the model's mean delay is the closed form's d q_ref/2^n within 2 slots (the ceiling adds less
    than one slot; the abstraction is centred on q_ref), and every insertion-point verdict agrees."""
    from qosbound.agreement import agreements

    scn = build(_scenario(bits, hints), "x.yaml")
    res = S.evaluate(scn, ["closed-form", "model-checked"], QUIET)
    by = {(r.metric, r.method): r for r in res}
    slot = by[(f"audio@h{hints[0]}.delay.mean", "model-checked")].provenance["slot_s"]
    for h in hints:
        cf = by[(f"audio@h{h}.delay.mean", "closed-form")].value
        mc = by[(f"audio@h{h}.delay.mean", "model-checked")].value
        assert abs(mc - cf) <= 2 * slot, (h, mc, cf)
        assert by[(f"audio@h{h}.delay.mean", "model-checked")].provenance["hints"] == 2 ** bits
    own = S.agreements(scn, res)
    ins = [v for v in own if v.name.startswith("insertion point")]
    assert len(ins) == len(hints) + len(scn.flows)
    assert all(v.status == "agree" for v in ins), [v.detail for v in ins if v.status != "agree"]
    # the generic rule compares the closed form with the model on every per-hint metric
    generic = {(v.metric, v.method) for v in agreements(res)}
    for h in hints:
        assert (f"audio@h{h}.delay.mean", "model-checked vs closed-form") in generic or \
               (f"audio@h{h}.delay.mean", "closed-form vs model-checked") in generic


def test_a_model_with_the_wrong_number_of_hints_is_reported(monkeypatch, tmp_path, capsys):
    """A model built for 16 hints on a 3-bit scenario (the old behaviour) makes the insertion-point verdicts
    disagree, and `plan` exits 3 (methods disagree)."""
    import yaml

    real = M.abstraction

    def sixteen_hints(*a, **kw):
        kw["bits"] = 4
        return real(*a, **kw)

    monkeypatch.setattr(M, "abstraction", sixteen_hints)
    p = tmp_path / "b3.yaml"
    p.write_text(yaml.safe_dump(_scenario(3, [3, 8])))
    code = main(["plan", str(p), "--methods", "closed-form,model-checked", "--quiet", "--json"])
    out = capsys.readouterr().out
    assert code == 3
    import json

    bad = [v for v in json.loads(out)["verdicts"] if v["status"] == "disagree"]
    assert any(v["name"] == "insertion point q'/q = d/2^n (audio@h3)" for v in bad)
    assert any("16 hints" in v["detail"] for v in bad)


def test_plan_with_three_hint_bits_exits_0(tmp_path, capsys):
    """`plan` of a 3-bit scenario by closed form and model: the insertion-point verdicts agree, exit 0."""
    import json

    import yaml

    p = tmp_path / "b3.yaml"
    p.write_text(yaml.safe_dump(_scenario(3, [2, 8])))
    code = main(["plan", str(p), "--methods", "closed-form,model-checked", "--quiet", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, [v for v in out["verdicts"] if v["status"] == "disagree"]
    ins = [v for v in out["verdicts"] if v["name"].startswith("insertion point")]
    assert ins and all(v["status"] == "agree" for v in ins)


# The TSQ models and the TSQ example's rendering on real PRISM (default engine), against Storm.
#
# Skipped where no ``prism`` executable is on PATH. PRISM runs with :data:`qosbound.models.tsq.PRISM_OPTIONS` (Gauss-
# Seidel; the models' headers say why). The LRA properties of models/tsq.props are Storm-only; PRISM checks the same
# optimum as the renewal-reward ratio ``cycle_sqrt_law / cycle_steps``.


#: The tests that run PRISM: marked ``prism`` and skipped where no ``prism`` executable is on PATH.
needs_prism = pytest.mark.skipif(shutil.which("prism") is None, reason="needs a `prism` executable on PATH")

#: PRISM's stopping criterion is a relative change of 1e-12 between iterates, not an error bound; on these
#: slowly mixing chains its values are within about 1e-10 of Storm's DTMC values and of direct solves
#: (measured), so 1e-9 relative is the claim. Storm's MDP values come from value iteration without an error
#: bound (measured 1e-8 relative off the direct solve on reachability rewards, 3e-7 on LRA): PRISM is compared
#: with them at GAIN_TOLERANCE, and with the direct solve at REL.
REL = 1e-9


def prism(model, props: list[tuple[str, str]], consts: dict | None = None, options=M.PRISM_OPTIONS, tmp=None):
    """Run PRISM (default engine) on ``model`` and return ``({name: value}, states, stdout)``."""
    tmp = Path(tmp)
    pf = tmp / "p.props"
    pf.write_text("".join(f'"{n}": {f}\n' for n, f in props))
    res = tmp / "res.txt"
    cmd = ["prism", str(model), str(pf), "-exportresults", f"{res}:csv", *options]
    if consts:
        cmd += ["-const", ",".join(f"{k}={v!r}" for k, v in consts.items())]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900).stdout
    errors = [ln for ln in out.splitlines() if ln.startswith("Error")]
    blocks = res.read_text().strip().split("\n\n") if res.exists() and not errors else []
    values = {n: float(b.strip().splitlines()[-1].split(",")[-1]) for (n, _), b in zip(props, blocks)}
    states = next((int(ln.split()[1]) for ln in out.splitlines() if ln.startswith("States:")), None)
    return values, states, out if not errors else "\n".join(errors)


def _props(path, skip=()):
    return [(n, f) for n, f in engine.parse_props_text(Path(path).read_text()) if n not in skip]


def _assert_close(prism_values, storm_values):
    for name, v in prism_values.items():
        assert v == pytest.approx(storm_values[name], rel=REL, abs=1e-12), name


@pytest.mark.prism
@needs_prism
def test_jacobi_does_not_converge_on_the_hint_chain(tmp_path):
    """Why PRISM_OPTIONS: PRISM's default Jacobi iteration never converges on the (period-2 without self-loops)
    hint chain, even at 13 states."""
    ab = M.Abstraction(**{**SMALL_PARAMS, "N": 12}, bits=4)
    values, _, out = prism(M.HINT_MODEL, _props(M.HINT_PROPS)[:1], {**ab.constants(), "d": 5}, options=(),
                           tmp=tmp_path)
    assert not values and "did not converge" in out


@pytest.mark.prism
@needs_prism
@pytest.mark.parametrize("bits,d", [(1, 1), (3, 3), (4, 16)])
def test_hint_dtmc_on_prism_equals_storm(tmp_path, bits, d):
    """models/tsq_hint.prism: PRISM and Storm build the same chain and agree on every property."""
    ab = M.Abstraction(**SMALL_PARAMS, bits=bits)
    consts = {**ab.constants(), "d": d}
    values, states, out = prism(M.HINT_MODEL, _props(M.HINT_PROPS), consts, tmp=tmp_path)
    storm = engine.check(M.HINT_MODEL, M.HINT_PROPS, consts)
    assert states == storm.states, out
    assert set(values) == set(storm.values), out
    _assert_close(values, storm.values)


@pytest.mark.prism
@needs_prism
@pytest.mark.parametrize("bits", [1, 3])
def test_mdp_on_prism_equals_storm(tmp_path, bits):
    """models/tsq.prism: PRISM rejects the Storm-only LRA properties (models/tsq.storm.props); it checks every
    property of models/tsq.props, the renewal-reward form of
    the best hint policy, which equals Storm's LRA value (within its solver error) and the direct solve."""
    ab = M.Abstraction(**SMALL_PARAMS, bits=bits)
    consts = ab.mdp_constants()
    storm = engine.check(M.MDP_MODEL, M.mdp_properties(), consts)
    _, _, out = prism(M.MDP_MODEL, _props(M.MDP_STORM_PROPS)[:1], consts, tmp=tmp_path)
    assert "LRA" in out  # PRISM has no long-run averages for MDPs: tsq.storm.props is Storm-only
    assert [n for n, _ in _props(M.MDP_STORM_PROPS)] == list(M.MDP_STORM_ONLY)
    values, states, out = prism(M.MDP_MODEL, _props(M.MDP_PROPS), consts, tmp=tmp_path)
    assert states == storm.states == ab.mdp_states(), out
    assert set(values) == {"p_capped", "cycle_sqrt_law", "cycle_steps"}, out
    assert values["p_capped"] == storm.values["p_capped"]
    for name in ("cycle_sqrt_law", "cycle_steps"):
        assert values[name] == pytest.approx(storm.values[name], rel=GAIN_TOLERANCE), name
    best = values["cycle_sqrt_law"] / values["cycle_steps"]
    assert best == pytest.approx(M.best_policy_direct(ab), rel=REL)
    assert best == pytest.approx(storm.values["max_sqrt_law"], rel=GAIN_TOLERANCE)


@pytest.mark.prism
@needs_prism
def test_example_rendering_on_prism(tmp_path):
    """`qosbound model render examples/tsq_audio.yaml` writes files PRISM parses and checks; the hint DTMC agrees
    with Storm on every property. On the MDP (24 862 states) PRISM checks p_capped here; its cycle properties
    need minutes of value iteration at N = 800 and are checked on small instances above."""
    out_dir = tmp_path / "render"
    assert main(["model", "render", str(EXAMPLE), "--out", str(out_dir)]) == 0
    hint_model, hint_props = out_dir / "tsq-audio_tsq_hint.prism", out_dir / "tsq-audio_tsq_hint.props"
    values, states, out = prism(hint_model, _props(hint_props), tmp=tmp_path)
    storm = engine.check(hint_model, hint_props)
    assert states == storm.states == 801, out
    assert set(values) == set(storm.values), out
    _assert_close(values, storm.values)

    mdp_model, mdp_props = out_dir / "tsq-audio_tsq.prism", out_dir / "tsq-audio_tsq.props"
    assert (out_dir / "tsq-audio_tsq.storm.props").read_text() == M.MDP_STORM_PROPS.read_text()
    props = [p for p in _props(mdp_props) if p[0] == "p_capped"]
    values, states, out = prism(mdp_model, props, tmp=tmp_path)
    storm = engine.check(mdp_model, props)
    assert states == engine.build(mdp_model).states == (800 + 2) * 31, out
    assert values == storm.values == {"p_capped": 1.0}, out
