"""Takeo & Tasaka (2003), section IV at the network level (qosbound/reproduce/takeo2003_net.py): the six cases of
Table V through the 2 Mbit/s CBWFQ router, read as the paper's claims. Short single runs (cheap)."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.reproduce import claims as C
from qosbound.reproduce import takeo2003_net as N

SHORT = N.Setup(duration=20.0, warmup=3.0, replications=1, ms=(0,))


@pytest.fixture(scope="module")
def runs():
    return {c: N.run_case(c, 0, SHORT, 11) for c in ("case1", "case2", "case3", "case5")}


def test_the_network_follows_table_V():
    """Case 4: HTML in class 2 drop 1, voices in class 2 drops 2 and 3, videos in class 3 drops 2 and 3, the load
    in class 4 drop 1; class weights in Table I's proportions 200 : 400 : 600 : 800."""
    net = N.network("case4", 0, SHORT, np.random.default_rng(1))
    assert net.data_class == (1,) and net.colour == (0,)
    by = {u.name: (u.cls, u.colour) for u in net.udp}
    assert by["voice1"] == (1, 1) and by["voice2"] == (1, 2) and by["video1.0"] == (2, 1) and by["video2.2"] == (2, 2)
    assert by["load"] == (3, 0) and [c.weight for c in net.fwd_classes] == [1, 2, 3, 4]
    assert sum(u.rate for u in net.udp if u.name.startswith("video1")) == pytest.approx(3 * 8 * (1084 + 42) * 20)


def test_case_3_drops_html_and_keeps_video(runs):
    """Case 3 (HTML in class 3 at drop precedence 3, beside the videos): WRED drops HTML early, a large share of
    its packets, and video 1 delivers more frames than in case 5 (HTML at drop 1, videos at 2 and 3)."""
    assert runs["case3"]["html.loss"] > 0.1 > runs["case1"]["html.loss"]
    assert runs["case3"]["video1.frame_rate"] > runs["case5"]["video1.frame_rate"] + 3.0


def test_html_in_class_2_hurts_voice(runs):
    """Case 2 (HTML in voice's class 2): TCP fills class 2's queue, voice 1 waits several times longer and
    varies more than in case 1, where HTML has class 1 to itself."""
    assert runs["case2"]["voice1.delay"] > 4 * runs["case1"]["voice1.delay"]
    assert runs["case2"]["voice1.jitter"] > 1.5 * runs["case1"]["voice1.jitter"]


def test_claim_rows_judge_the_order_of_the_cases():
    """A claim row is reproduced when the named case is first or tied with another within the intervals, NOT MET
    when another lies beyond it by more (made-up means)."""
    res = {(c, 0): {"html.loss": (0.3 if c == "case3" else 0.1, 0.01)} for c in N.CASES}
    ok = N._order_claim(res, 0, "html.loss", "x", "y", "case3", "")
    res[("case2", 0)]["html.loss"] = (0.315, 0.01)  # above, but within the two half-widths
    tied = N._order_claim(res, 0, "html.loss", "x", "y", "case3", "")
    res[("case1", 0)]["html.loss"] = (0.5, 0.01)
    bad = N._order_claim(res, 0, "html.loss", "x", "y", "case3", "")
    assert ok.verdict == tied.verdict == C.REPRODUCED and bad.verdict == C.NOT_MET


def test_the_html_finding_holds_while_case_1_is_as_slow_as_case_3():
    """The documented finding (case 3's transfers not slower than case 1's) turns NOT MET when case 3 becomes
    clearly the slowest, as the paper has it."""
    res = {(c, 0): {"html.time5k": (0.9 if c == "case1" else 0.6, 0.05)} for c in N.CASES}
    res[("case3", 0)]["html.time5k"] = (0.85, 0.05)
    kept = N._finding_vs_case1(res, 0, "html.time5k", "x", "y", "s")
    res[("case3", 0)]["html.time5k"] = (1.5, 0.05)
    gone = N._finding_vs_case1(res, 0, "html.time5k", "x", "y", "s")
    assert kept.verdict == C.FINDING and gone.verdict == C.NOT_MET
