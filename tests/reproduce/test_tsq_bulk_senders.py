"""The audio optimum's sensitivity run of `qosbound reproduce tsq` (the hypothesis bulk-senders-shift-optimum): the
rule on constructed sweeps, on either side of it, and the experiment's code path on the smallest run."""

from __future__ import annotations

import pytest

import qosbound.cli  # noqa: F401  (the command layer first: importing qosbound.report before qosbound.pages fails)
from qosbound.reproduce import claims as C
from qosbound.reproduce.tsq_claims import bulk_sender_claim
from qosbound.reproduce.tsq_experiments import hint_sweep


def _sweep(per_seed):
    """A constructed audio sweep whose optimum, replication by replication, is at the hints ``per_seed``."""
    n = len(per_seed)
    rows = []
    for h in range(1, 17):
        q = [1.0 if best == h else 0.5 for best in per_seed]
        rows.append({"hint": h, "replications": n, "quality_reps": q, "quality_reps_mean": sum(q) / n,
                     "quality_reps_se": 0.01})
    return {"rows": rows + [{"hint": "PI alone", "quality_reps": [0.4] * n}], "delack": 0.0}


@pytest.mark.parametrize("per_seed, verdict", [
    ((5, 6, 7), C.REPRODUCED),          # hint 6 at the median
    ((6, 6, 9), C.REPRODUCED),          # quartiles 6..7.5
    ((3, 4, 4), C.NOT_MET),             # the optimum stays below 6 with these senders too
    ((8, 9, 12), C.NOT_MET),
])
def test_the_bulk_sender_rule_can_fail(per_seed, verdict):
    row = bulk_sender_claim(_sweep(per_seed), 6)
    assert row.verdict == verdict
    assert row.claim == "bulk-sender sensitivity: with every segment acknowledged the audio optimum is at hint 6"
    assert "delayed-ACK timer 0 s" in row.qosbound


def test_the_row_judges_its_claim():
    ev = {j.spec.id: j.verdict for j in C.evaluate("tsq", [bulk_sender_claim(_sweep((5, 6, 7)), 6)]).claims}
    assert ev["bulk-senders-shift-optimum"] == C.CLAIM_REPRODUCED


def test_the_sweep_acknowledges_every_segment():
    """The smallest run that exercises the code path: one hint and PI alone, one replication of 3 s, the bulk
    receivers' delayed-ACK timer recorded with the sweep."""
    sw = hint_sweep("audio", 3.0, 1.0, 1, hints=(16,), delack=0.0)
    assert sw["delack"] == 0.0 and [r["hint"] for r in sw["rows"]] == [16, "PI alone"]
    assert "delack" not in hint_sweep("audio", 3.0, 1.0, 1, hints=(16,))
