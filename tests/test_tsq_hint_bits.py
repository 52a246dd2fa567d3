"""Regression tests: the TSQ models use the scenario's number of hints 2^n (tsq.hint_bits), not 16.

With ``hint_bits: 3`` the models used to insert a hint-d packet as if there were 16 hints (a tail-insertion
delay of 0.053 s against the closed form's 0.107 s) and no verdict reported it.
"""

from pathlib import Path

import numpy as np
import pytest

from qosbound.cli import main
from qosbound.models import tsq as M
from qosbound.progress import QUIET
from qosbound.scenario import build, load_raw
from qosbound.systems import tsq as S
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "tsq_audio.yaml"

SMALL = dict(N=20, lam=0.55, p_lo=0.01, p_hi=0.3, l=4.0, slot=1e-3)


@pytest.mark.parametrize("bits", [1, 3, 5])
def test_hint_dtmc_uses_two_to_the_bits_hints(bits):
    """Storm's per-hint DTMC inserts a hint-d packet at ceil(d k / 2^n), as a direct SciPy solve does."""
    ab = M.Abstraction(**SMALL, bits=bits)
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
