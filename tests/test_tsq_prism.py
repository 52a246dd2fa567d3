"""The TSQ models and the TSQ example's rendering on real PRISM (default engine), against Storm.

Skipped where no ``prism`` executable is on PATH. PRISM runs with :data:`qosbound.models.tsq.PRISM_OPTIONS`
(Gauss-Seidel; the models' headers say why). The LRA properties of models/tsq.props are Storm-only; PRISM checks
the same optimum as the renewal-reward ratio ``cycle_sqrt_law / cycle_steps``.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from qosbound.cli import main
from qosbound.models import engine
from qosbound.models import tsq as M
from qosbound.systems.tsq import GAIN_TOLERANCE

pytestmark = [pytest.mark.prism,
              pytest.mark.skipif(shutil.which("prism") is None, reason="needs a `prism` executable on PATH")]

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "tsq_audio.yaml"
SMALL = dict(N=20, lam=0.55, p_lo=0.01, p_hi=0.3, l=4.0, slot=1e-3)
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


def test_jacobi_does_not_converge_on_the_hint_chain(tmp_path):
    """Why PRISM_OPTIONS: PRISM's default Jacobi iteration never converges on the (period-2 without self-loops)
    hint chain, even at 13 states."""
    ab = M.Abstraction(**{**SMALL, "N": 12}, bits=4)
    values, _, out = prism(M.HINT_MODEL, _props(M.HINT_PROPS)[:1], {**ab.constants(), "d": 5}, options=(),
                           tmp=tmp_path)
    assert not values and "did not converge" in out


@pytest.mark.parametrize("bits,d", [(1, 1), (3, 3), (4, 16)])
def test_hint_dtmc_on_prism_equals_storm(tmp_path, bits, d):
    """models/tsq_hint.prism: PRISM and Storm build the same chain and agree on every property."""
    ab = M.Abstraction(**SMALL, bits=bits)
    consts = {**ab.constants(), "d": d}
    values, states, out = prism(M.HINT_MODEL, _props(M.HINT_PROPS), consts, tmp=tmp_path)
    storm = engine.check(M.HINT_MODEL, M.HINT_PROPS, consts)
    assert states == storm.states, out
    assert set(values) == set(storm.values), out
    _assert_close(values, storm.values)


@pytest.mark.parametrize("bits", [1, 3])
def test_mdp_on_prism_equals_storm(tmp_path, bits):
    """models/tsq.prism: PRISM rejects the Storm-only LRA properties (models/tsq.storm.props); it checks every
    property of models/tsq.props, the renewal-reward form of
    the best hint policy, which equals Storm's LRA value (within its solver error) and the direct solve."""
    ab = M.Abstraction(**SMALL, bits=bits)
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
