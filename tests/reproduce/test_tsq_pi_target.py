"""Figure 12's sensitivity run of `qosbound reproduce tsq` (the hypothesis pi-target-explains-fig12): the rule on
constructed sweeps, on either side of it, and the experiment's settings."""

from __future__ import annotations

import pytest

# the command layer first: importing qosbound.report before qosbound.pages fails today (report -> pages ->
# pages.reading -> report, a cycle outside this module's subject)
import qosbound.cli  # noqa: F401
from qosbound.reproduce import claims as C
from qosbound.reproduce import claimsfile as CF
from qosbound.reproduce.tsq_claims import hint_ratio, pi_target_claim
from qosbound.reproduce.tsq_experiments import PI_TARGET_VIDEO, hint_sweep


def _sweep(ratios, rate16=400e3, q_ref=None):
    """A constructed sweep: the flow's throughput at hint 1 per replication is ``ratios`` x its hint-16 mean."""
    reps = [r * rate16 for r in ratios]
    sw = {"rows": [{"hint": 1, "rate_bps_reps": reps}, {"hint": 16, "rate_bps": rate16,
                                                         "rate_bps_reps": [rate16] * len(ratios)}]}
    if q_ref is not None:
        sw["q_ref"] = q_ref
    return sw


AUDIO = (0.80, 0.81, 0.79, 0.80)


@pytest.mark.parametrize("video, verdict, why", [
    ((0.90, 0.91, 0.89, 0.90), C.REPRODUCED, None),                 # video resolved above audio
    ((0.80, 0.82, 0.78, 0.81), C.NOT_MET, "not resolved above"),    # about the same: not shown
    ((0.60, 0.61, 0.59, 0.60), C.NOT_MET, "still resolved below"),  # the finding stands: the target does not explain it
])
def test_the_pi_target_rule_can_fail(video, verdict, why):
    row = pi_target_claim(_sweep(video, q_ref=PI_TARGET_VIDEO), _sweep(AUDIO))
    assert row.verdict == verdict
    assert row.claim.startswith("PI target sensitivity: with a 53-packet target on the video link")
    if why:
        assert why in row.evidence


def test_hint_ratio_is_per_replication_over_the_hint16_mean():
    assert hint_ratio(_sweep((0.5, 1.0), rate16=200e3)).tolist() == [0.5, 1.0]


def test_the_row_is_named_by_its_claim_and_the_target_is_the_audio_links_delay():
    """The row judges pi-target-explains-fig12 (the claims file's pattern); 53 packets of 1000 B at 4 Mbit/s is the
    queueing delay 200 packets give at 15 Mbit/s (107 ms)."""
    spec = CF.load("tsq").by_id()["pi-target-explains-fig12"]
    row = pi_target_claim(_sweep((0.9,) * 4, q_ref=PI_TARGET_VIDEO), _sweep(AUDIO))
    ev = {j.spec.id: j for j in C.evaluate("tsq", [row]).claims}
    assert ev["pi-target-explains-fig12"].verdict == C.CLAIM_REPRODUCED and spec.not_attempted in (None, "")
    assert abs(PI_TARGET_VIDEO * 8000 / 4e6 - 200 * 8000 / 15e6) < 0.001


def test_the_sweep_runs_with_the_given_target():
    """The smallest run that exercises the code path: hints 1 and 16 and PI alone, one replication of 4 s."""
    sw = hint_sweep("video", 4.0, 1.0, 1, hints=(1, 16), q_ref=PI_TARGET_VIDEO)
    assert sw["q_ref"] == PI_TARGET_VIDEO and [r["hint"] for r in sw["rows"]] == [1, 16, "PI alone"]
    assert "q_ref" not in hint_sweep("video", 4.0, 1.0, 1, hints=(16,))
