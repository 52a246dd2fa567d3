"""Takeo & Tasaka (2003), the handshake sensitivity (qosbound/reproduce/takeo2003_net.py ``handshake_claims``): the
rows of Fig. 2's two claims and of the hypothesis that the missing handshake is what the m = 0 findings miss, each
fed a result on its side and on the wrong side and judged by the claims file's rules. A short run shows what the
network does with the handshake."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.reproduce import claims as C
from qosbound.reproduce import takeo2003_net as N

HS_CLAIMS = ("fig2-retrieval-case3-largest", "fig2-retrieval-grows-fastest", "handshake-explains-case3")


def _hs(time0, time4, transfer0, thr0, hw=0.02, n=10):
    """Fabricated handshake results: per case the retrieval time at m = 0 and 4, the transfer time and the
    throughput at m = 0 (dicts case -> mean; other cases 1.0 s, 1.2 s, 0.8 s, 300 kbit/s)."""
    res = {}
    for c in N.CASES:
        res[(c, 0)] = {"html.time5k": (time0.get(c, 1.0), hw, n), "html.transfer5k": (transfer0.get(c, 0.8), hw, n),
                       "html.throughput": (thr0.get(c, 300e3), 300e3 * hw, n)}
        res[(c, 4)] = {"html.time5k": (time4.get(c, 1.2), hw, n), "html.transfer5k": (0.9, hw, n),
                       "html.throughput": (250e3, 250e3 * hw, n)}
    return res


def _verdicts(res):
    ev = C.evaluate("takeo2003", N.handshake_claims(res, (0, 4), 10))
    return {j.spec.id: j for j in ev.claims}


def test_each_rule_is_reproduced_on_its_side():
    """Case 3 slowest at both delays, its retrieval time growing most, its transfer time the largest and its
    throughput the smallest: all three claims reproduced (one-sided Welch tests, Holm-adjusted)."""
    by = _verdicts(_hs({"case3": 1.6}, {"case3": 2.4}, {"case3": 1.3}, {"case3": 150e3}))
    for cid in HS_CLAIMS:
        assert by[cid].verdict == C.CLAIM_REPRODUCED and by[cid].p_adjusted <= 0.05, cid
    assert len(by["fig2-retrieval-case3-largest"].rows) == 2 and len(by["handshake-explains-case3"].rows) == 2


def test_fig2_largest_not_met_when_another_case_is_slower_at_one_delay():
    """Case 1 slower than case 3 at m = 4 (case 3 the slowest at m = 0): Fig. 2's "largest at every delay" is NOT
    MET."""
    by = _verdicts(_hs({"case3": 1.6}, {"case3": 2.4, "case1": 2.6}, {"case3": 1.3}, {"case3": 150e3}))
    assert by["fig2-retrieval-case3-largest"].verdict == C.CLAIM_NOT_MET


def test_fig2_grows_fastest_not_met_when_case_3_grows_less():
    """Case 3 slowest at both delays but growing by 0.1 s where the others grow by 0.2 s: NOT MET."""
    by = _verdicts(_hs({"case3": 1.6}, {"case3": 1.7}, {"case3": 1.3}, {"case3": 150e3}))
    assert by["fig2-retrieval-case3-largest"].verdict == C.CLAIM_REPRODUCED
    assert by["fig2-retrieval-grows-fastest"].verdict == C.CLAIM_NOT_MET


def test_the_hypothesis_not_met_when_either_quantity_misses():
    """With the handshake, case 3's transfer time no larger than the others' (the handshake lengthens the
    retrieval, not Fig. 3's transfer time), or its throughput not the smallest: the hypothesis is NOT MET, and
    the m = 0 findings it was to explain say their cause is not supported."""
    by = _verdicts(_hs({"case3": 1.6}, {"case3": 2.4}, {"case3": 0.8}, {"case3": 150e3}))
    assert by["handshake-explains-case3"].verdict == C.CLAIM_NOT_MET
    by = _verdicts(_hs({"case3": 1.6}, {"case3": 2.4}, {"case3": 1.3}, {"case3": 320e3}))
    assert by["handshake-explains-case3"].verdict == C.CLAIM_NOT_MET
    rows = N.handshake_claims(_hs({"case3": 1.6}, {"case3": 2.4}, {"case3": 0.8}, {"case3": 150e3}), (0, 4), 10)
    flat = {k: (0.1, 0.01, 10) for k in ("html.loss", "voice1.jitter", "voice1.delay", "video1.jitter",
                                         "video1.frame_rate", "video1.cv")}
    rows += N.net_claims({k: d | flat for k, d in _hs({}, {}, {}, {}).items()}, 0, 10)  # case 3 not the slowest
    by = {j.spec.id: j for j in C.evaluate("takeo2003", rows).claims}
    assert by["fig3-transfer-case3-largest"].verdict == C.CLAIM_NOT_MET
    assert "not supported by its test" in by["fig3-transfer-case3-largest"].reason


def test_the_quick_setup_leaves_the_sensitivity_out():
    """The quick mode runs no handshake (it doubles the runs); the full mode runs it at m = 0 and 4."""
    assert N.Setup.quick().handshake_ms == () and N.Setup().handshake_ms == (0, 4)


def test_a_short_run_with_the_handshake():
    """One 12-s replication of case 3 and case 6 with the handshake, the same seed as without: the same files are
    fetched; the SYN-ACKs of case 3 (class 3, drop precedence 3) are dropped and cost SYN retransmissions, so its
    retrieval time exceeds its transfer time by more than case 6's, whose SYN-ACKs (class 4, drop precedence 1)
    all pass."""
    setup = N.Setup(duration=12.0, warmup=2.0, replications=1, ms=(0,))
    with_hs = {c: N.run_case(c, 0, setup, 5, handshake=True) for c in ("case3", "case6")}
    net = N.network("case3", 0, setup, np.random.default_rng(5), handshake=True)
    assert net.handshake and net.request == N.REQUEST and net.syn_rto == N.SYN_RTO
    assert net.files == N.network("case3", 0, setup, np.random.default_rng(5)).files
    for c, r in with_hs.items():
        assert r["html.time5k"] > r["html.transfer5k"] > 0, c
    assert with_hs["case3"]["html.handshake_retx"] > with_hs["case6"]["html.handshake_retx"]
    gap = {c: r["html.time5k"] - r["html.transfer5k"] for c, r in with_hs.items()}
    assert gap["case3"] > gap["case6"]
    assert with_hs["case6"]["html.handshake_retx"] == pytest.approx(0.0)
