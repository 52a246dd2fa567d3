"""The rules of Ferrari, Pau & Raffaelli (2001)'s claims judged since 2026-11-26 (qosbound/data/claims/ferrari2001.yaml:
the burst limit, W_t > W_pq, Fig. 5's tail, Fig. 7's spread and CCDF, the BE profile against A, the standard
deviation against the payload): each row, built by the code from a result on the wrong side, is NOT MET under the
claims file's rule -- and met on the right side, so the rule is not one that always fails."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from qosbound.reproduce import claims as C
from qosbound.reproduce import ferrari2001 as F
from qosbound.reproduce import ferrari2001_aggregation as A

# The aggregation's per-replication statistics go through the first replication count of Table III's runs.
REPS = 384


def _verdict(cid: str, *rows: C.Claim) -> str:
    """The claims file's verdict on ``cid`` judged on ``rows`` alone."""
    return next(j.verdict for j in C.evaluate("ferrari2001", list(rows)).claims if j.spec.id == cid)


def _agg(means, stds, ccdf0=None, ccdf56=None, fig5=0.0, fig5_se=0.0, se=2e-6, std_se=2e-6):
    """Table III rows as :func:`A.table_iii_means` gives them, from chosen numbers (s)."""
    rows = []
    flat = [0.5] * len(A.CCDF_GRID)
    for i, (label, m, s) in enumerate(zip(("0", "1/3", "2/3", "5/6"), means, stds)):
        cc = ccdf0 if label == "0" else ccdf56 if label == "5/6" else None
        row = {"A": label, "replications": REPS, "packets": 4000, "mean": m, "se": se, "std": s, "std_se": std_se,
               "ccdf_at": list(A.CCDF_GRID), "ccdf": list(cc or flat), "ccdf_se": [0.002] * len(A.CCDF_GRID),
               "ref_mean": m, "ref_se": se}
        if label == "0":
            row["fig5"] = {"c": A.TABLE_III_A0 - m, "threshold": 36 * 0.636e-3 - (A.TABLE_III_A0 - m),
                           "fraction": fig5, "se": fig5_se, "replications": REPS, "max_delay": 0.013,
                           "bin_width": 1e-6, "port_above_36_units": 0}
        rows.append(row)
    return rows


def test_burst_limit_is_recomputed_from_the_set_up():
    """10 x 128 B x 8 / 2 Mbit/s = 5.12 ms reproduced; an 11-packet PQ (5.632 ms) is NOT MET."""
    ref = F.reference()
    row = F.burst_claim(ref)
    assert row.value == pytest.approx(0.00512, abs=1e-12)
    assert _verdict("ef-queue-limits-burst", row) == C.CLAIM_REPRODUCED
    wrong = copy.deepcopy(ref)
    wrong["setup"]["pq_capacity"] = 11
    assert _verdict("ef-queue-limits-burst", F.burst_claim(wrong)) == C.CLAIM_NOT_MET


def test_transmission_queue_dominates_only_while_w_t_exceeds_w_pq():
    rows = F.table_iv_rows()
    got = [c for c in F.claims(rows, F.reference(), _agg([5e-3] * 4, [2e-3] * 4)) if "dominates W" in c.claim]
    assert len(got) == 3 and _verdict("table4-txq-dominates", *got) == C.CLAIM_REPRODUCED
    swapped = [dict(r, W_t=r["W_pq"], W_pq=r["W_t"]) if r["K"] == 2 else r for r in rows]
    bad = [c for c in F.claims(swapped, F.reference(), _agg([5e-3] * 4, [2e-3] * 4)) if "dominates W" in c.claim]
    assert _verdict("table4-txq-dominates", *bad) == C.CLAIM_NOT_MET


def test_spread_must_grow_at_every_step_of_A():
    """Standard deviations rising by 0.2 ms a step are reproduced (the power at 0.1 ms is stated); a fall at the
    last step is NOT MET, as is a rise smaller than the noise."""
    up = A.spread_claim(_agg([5e-3] * 4, [2.0e-3, 2.2e-3, 2.4e-3, 2.6e-3]))
    assert _verdict("fig7-spread-grows", up) == C.CLAIM_REPRODUCED and up.power > 0.99
    assert _verdict("fig7-spread-grows", A.spread_claim(_agg([5e-3] * 4, [2.0e-3, 2.2e-3, 2.4e-3, 2.3e-3]))) \
        == C.CLAIM_NOT_MET
    noisy = A.spread_claim(_agg([5e-3] * 4, [2.0e-3, 2.001e-3, 2.002e-3, 2.003e-3], std_se=1e-3))
    assert _verdict("fig7-spread-grows", noisy) == C.CLAIM_NOT_MET and noisy.power < 0.2


def test_ccdf_must_differ_by_more_than_a_hundredth_and_the_noise():
    grid = len(A.CCDF_GRID)
    same = A.ccdf_claim(_agg([5e-3] * 4, [2e-3] * 4, [0.5] * grid, [0.505] * grid))  # within 0.01
    assert _verdict("fig7-ccdf-varies", same) == C.CLAIM_NOT_MET
    apart = A.ccdf_claim(_agg([5e-3] * 4, [2e-3] * 4, [0.5] * grid, [0.5] * (grid - 1) + [0.55]))
    assert _verdict("fig7-ccdf-varies", apart) == C.CLAIM_REPRODUCED and "1 of 20 points" in apart.qosbound


def test_fig5_tail_must_be_shown_below_a_thousandth():
    """No delay above the threshold in any replication: reproduced; 1.1 % (qosbound's quick run) or 0.1 % +- 0.05 %
    (not shown) are NOT MET."""
    assert _verdict("fig5-36-units", A.fig5_claim(_agg([5e-3] * 4, [2e-3] * 4, fig5=0.0))) == C.CLAIM_REPRODUCED
    assert _verdict("fig5-36-units", A.fig5_claim(_agg([5e-3] * 4, [2e-3] * 4, fig5=2e-4, fig5_se=2e-5))) \
        == C.CLAIM_REPRODUCED
    assert _verdict("fig5-36-units", A.fig5_claim(_agg([5e-3] * 4, [2e-3] * 4, fig5=0.011, fig5_se=1e-4))) \
        == C.CLAIM_NOT_MET
    assert _verdict("fig5-36-units", A.fig5_claim(_agg([5e-3] * 4, [2e-3] * 4, fig5=9e-4, fig5_se=5e-4))) \
        == C.CLAIM_NOT_MET


def _fig(model: list[tuple[int, float]]) -> dict:
    pts = [{"payload": p, "ip_size": p + 28, "units": math.ceil((p + 28) / 512),
            "model-checked": {"value": v, "low": v, "high": v, "kind": ""}} for p, v in model]
    return {"points": pts, "quick": False}


def test_be_profile_must_move_the_mean_more_than_A():
    fig = _fig([(100, 3e-3), (484, 7e-3), (516, 4e-3)])     # 4 ms over the payloads
    assert _verdict("be-profile-dominates", F.profile_claim(fig, _agg([4.8e-3, 5.0e-3, 5.1e-3, 5.0e-3], [2e-3] * 4))) \
        == C.CLAIM_REPRODUCED
    assert _verdict("be-profile-dominates", F.profile_claim(fig, _agg([4e-3, 6e-3, 8e-3, 9e-3], [2e-3] * 4))) \
        == C.CLAIM_NOT_MET


def test_std_must_rise_with_the_payload_by_rank():
    """43 payloads: a standard deviation rising with the payload is reproduced; one falling, or rising on one
    half and falling on the other (no monotone trend), is NOT MET; the power at rho = 0.5 is stated."""
    pays = F.fig3_payloads()
    rising = F.std_claim({p: 1e-3 + 1e-6 * p for p in pays})
    assert _verdict("std-grows-with-size", rising) == C.CLAIM_REPRODUCED and 0.8 < rising.power < 1
    assert _verdict("std-grows-with-size", F.std_claim({p: 3e-3 - 1e-6 * p for p in pays})) == C.CLAIM_NOT_MET
    tent = {p: 1e-3 + 1e-6 * min(p, 1544 - p) for p in pays}
    assert _verdict("std-grows-with-size", F.std_claim(tent)) == C.CLAIM_NOT_MET
    assert _verdict("std-grows-with-size", F.std_claim({100: 1e-3, 484: 2e-3, 516: 3e-3})) == C.CLAIM_NOT_MET  # n = 3


def test_model_std_is_the_chain_s_own_spread():
    """The standard deviation from the chain's atoms equals the one integrated from its CCDF,
    E[D^2] = int 2 t P(D > t) dt (Fig. 3's smallest payload, 100 B)."""
    from qosbound.models.pq_txq import delay_distribution, render
    from qosbound.scenario import build, set_path
    from qosbound.systems.pq_txq import params

    scn = F._fig3_scenario(True)
    s = build(set_path(copy.deepcopy(scn.raw), "traffic.BE.size", "128 B"))
    dd, _ = delay_distribution(render(params(s), s.methods.model_checked, s.name))
    t = np.linspace(0.0, dd.support_max(), 40001)
    ccdf = np.array([dd.ccdf(x) for x in t])
    m1 = np.trapezoid(ccdf, t)
    m2 = np.trapezoid(2 * t * ccdf, t)
    assert m1 == pytest.approx(dd.mean(), rel=1e-4)
    assert F.model_std(dd) == pytest.approx(math.sqrt(m2 - m1 * m1), rel=1e-3)


def test_the_effects_of_the_file_are_the_code_s():
    """The power stated in a row is computed at the effect the claims file names."""
    from qosbound.reproduce import claimsfile

    by = claimsfile.load("ferrari2001").by_id()
    assert by["std-grows-with-size"].rule.effect == F.SPEARMAN_EFFECT
    assert by["fig7-spread-grows"].rule.effect == A.SPREAD_EFFECT
    assert by["fig5-36-units"].rule.effect == A.FIG5_EFFECT and by["fig5-36-units"].rule.threshold == A.FIG5_LIMIT
    assert by["table3-delay-grows-with-A"].rule.effect == A.STEP_EFFECT
